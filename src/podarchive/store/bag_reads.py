"""The archive as ``export-bag`` takes it (#27): a consistent copy made with SQLite's backup
API while a run may be writing, and what the copy holds (feeds, counts, media payloads).

:func:`copy_archive` copies under one read transaction, so the copy is the archive at one
moment however long the copy takes (WAL: the writer is never blocked, and the backup never
restarts). The copy is then brought to the current schema, like any archive a podarchive
command opens to write, and set to rollback-journal mode, so it is one file with no
``-wal`` beside it. Everything a bag lists is read from the copy, never from the live file:
the bag's ledger and its payloads agree.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterable
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path

from podarchive.core.errors import StorageError, safe_label

from .archive_path import BUSY_TIMEOUT, check_file, storage_error
from .base import Connection

STEP_PAGES = 1024  # pages copied per backup step (4 MiB of 4 KiB pages) between progress calls


@dataclass(frozen=True, slots=True)
class BagPayload:
    """A media payload the copy's ledger lists as some episode's version."""

    sha256: str
    size: int
    ext: str
    content_type: str | None


@dataclass(frozen=True, slots=True)
class BagFeed:
    """A feed of the copy: its configured URL and its name (the schedule's, else the feed's
    title; None when it has neither)."""

    url: str
    name: str | None


@dataclass(frozen=True, slots=True)
class ArchiveCopy:
    """What the copy at ``path`` holds."""

    path: Path
    schema_version: int
    episodes: int
    feeds: tuple[BagFeed, ...]
    payloads: tuple[BagPayload, ...]


def copy_archive(
    source: Path, target: Path, *, on_step: Callable[[int, int], None] | None = None
) -> ArchiveCopy:
    """Copy the archive at ``source`` to the new file ``target`` with SQLite's backup API,
    as one snapshot, and say what the copy holds. ``on_step(remaining, total)`` (pages) is
    called between steps (a KeyboardInterrupt raised there stops the copy). Nothing is
    written to ``source``. A missing source, or one that is not an archive, is a one-line
    :class:`StorageError`."""
    if check_file(source).kind == "new":
        raise StorageError(f"no archive at {source}")
    if target.exists():
        raise StorageError(f"{target} exists already")
    _backup(source, target, on_step)
    return _settle(target)


def _backup(source: Path, target: Path, on_step: Callable[[int, int], None] | None) -> None:
    def progress(status: int, remaining: int, total: int) -> None:
        if on_step is not None:
            on_step(remaining, total)

    # a read-write connection that writes nothing (as 'check' opens it): a read-only one
    # would leave -wal and -shm files behind it
    uri = f"{source.resolve().as_uri()}?mode=rw"
    try:
        with (
            closing(sqlite3.connect(uri, uri=True, timeout=BUSY_TIMEOUT)) as src,
            closing(sqlite3.connect(target)) as dst,
        ):
            src.isolation_level = None
            src.execute("PRAGMA query_only = 1")
            src.execute("BEGIN")  # one read transaction over every step: one snapshot
            src.execute("SELECT count(*) FROM sqlite_master").fetchone()
            try:
                src.backup(dst, pages=STEP_PAGES, progress=progress)
            finally:
                src.execute("COMMIT")
    except sqlite3.Error as e:
        raise storage_error(source, e, "cannot copy") from e


def _settle(target: Path) -> ArchiveCopy:
    """The copy brought to the current schema, read, and left in rollback-journal mode."""
    with Connection(target, create=False) as copy:
        db = copy.db
        try:
            result = ArchiveCopy(
                path=target,
                schema_version=copy.schema_version,
                episodes=int(db.execute("SELECT count(*) FROM episodes").fetchone()[0]),
                feeds=tuple(
                    BagFeed(url, name)
                    for url, name in db.execute(
                        "SELECT url, coalesce(nullif(name, ''), nullif(title, '')) FROM feeds "
                        "ORDER BY lower(coalesce(name, title, url)), id"
                    )
                ),
                payloads=tuple(
                    BagPayload(sha256, int(size), ext or "", content_type)
                    for sha256, size, ext, content_type in db.execute(
                        "SELECT sha256, size, ext, content_type FROM media_payloads "
                        "WHERE sha256 IN (SELECT sha256 FROM episode_media) ORDER BY sha256"
                    )
                ),
            )
            # a daemon's WebSub subscriptions hold the secrets hubs sign with: its own state,
            # never deposited (the archive that restores the bag subscribes again)
            db.execute("PRAGMA secure_delete = ON")  # their bytes overwritten, not just freed
            with copy.transaction():
                db.execute("DELETE FROM push_subscriptions")
                db.execute("DELETE FROM podping_cursor")  # a daemon's place on Hive (#29)
            db.execute("PRAGMA journal_mode = DELETE")  # one file: no -wal, no -shm
        except sqlite3.Error as e:
            raise storage_error(target, e, "cannot read the copy") from e
    return result


def payload_labels(copy: Path, sha256s: Iterable[str]) -> dict[str, str]:
    """For each payload of ``sha256s``, the episodes it is a version of, as one line
    (``Show: Episode 3``, ``and 2 more``), read from the copy."""
    wanted = list(dict.fromkeys(sha256s))
    if not wanted:
        return {}
    labels: dict[str, list[str]] = {}
    try:
        with closing(sqlite3.connect(f"{copy.resolve().as_uri()}?mode=ro", uri=True)) as db:
            for sha256 in wanted:
                rows = db.execute(
                    "SELECT coalesce(f.name, f.title, f.url), coalesce(e.title, e.key) "
                    "FROM episode_media m JOIN episodes e ON e.id = m.episode_id "
                    "JOIN feeds f ON f.id = e.feed_id WHERE m.sha256 = ? "
                    "ORDER BY m.episode_id, m.version",
                    [sha256],
                ).fetchall()
                labels[sha256] = [f"{feed}: {title}" for feed, title in rows]
    except sqlite3.Error as e:
        raise storage_error(copy, e, "cannot read the copy") from e
    return {sha: _episodes_line(names) for sha, names in labels.items() if names}


def _episodes_line(names: list[str]) -> str:
    first = safe_label(names[0])
    return first if len(names) == 1 else f"{first} (and {len(names) - 1} more)"
