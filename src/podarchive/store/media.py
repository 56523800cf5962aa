"""The media ledger: stored payloads, fetches of enclosures, versions, fixity, download state.

Rows of the tables of migration 14 (``media_payloads``, ``media_fetches``, ``episode_media``,
``fixity_events``, ``media_state``); the bytes are in the media folder
(:mod:`.media_files`), named by the same SHA-256. Every write is one transaction.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from podarchive.core.types import FetchRecord, Row

from .base import Connection
from .schema import MEDIA_DUE_STATE

if TYPE_CHECKING:
    from .sqlite_db import ArchiveDb


@dataclass(frozen=True, slots=True)
class MediaState:
    """Where the download of one episode's enclosure stands (``media_state``): the partial
    file to resume and the validator it was started with, the validators of the stored copy
    for conditional re-checks, when it is next due, re-checks made, failures in a row."""

    partial_key: str | None = None
    validator: str | None = None  # ETag or Last-Modified the partial file was started with
    partial_bytes: int = 0
    etag: str | None = None  # of the stored copy, for If-None-Match
    last_modified: str | None = None  # of the stored copy, for If-Modified-Since
    next_check_at: str | None = None  # None: not due again (unless asked)
    checks: int = 0
    error_count: int = 0
    last_error: str | None = None


@dataclass(frozen=True, slots=True)
class MediaTask:
    """An episode's enclosure (or, with ``media_alternates``, one of its alternate enclosure
    sources) whose media is due: never stored, or its re-check is due."""

    episode_id: int
    url: str
    content_type: str | None
    length: int | None  # the feed's ``enclosure length``
    published: str | None
    stored: bool  # a version is stored already (then this is a re-check)
    state: MediaState
    source: str = "enclosure"  # or "alternate": a podcast:alternateEnclosure source


_STATE_FIELDS = tuple(MediaState.__dataclass_fields__)


def read_state(db: ArchiveDb, table: str, owner: str, owner_id: int, url: str) -> MediaState | None:
    """The download state in ``table`` (``media_state``, ``image_state``) of the ``url`` of
    the row ``owner = owner_id``; None before its first attempt."""
    row = db.execute(
        f"SELECT {', '.join(_STATE_FIELDS)} FROM {table} WHERE {owner} = ? AND url = ?",
        [owner_id, url],
    ).fetchone()
    return None if row is None else MediaState(*row)


def write_state(
    db: ArchiveDb,
    table: str,
    owner: str,
    owner_id: int,
    url: str,
    state: MediaState,
    now: str,
) -> None:
    """Write the whole download state (call it in a transaction)."""
    db.execute(
        f"INSERT INTO {table} ({owner}, url, {', '.join(_STATE_FIELDS)}, updated_at) "
        f"VALUES (?, ?, {', '.join('?' * len(_STATE_FIELDS))}, ?) "
        f"ON CONFLICT ({owner}, url) DO UPDATE SET "
        f"{', '.join(f'{f} = excluded.{f}' for f in _STATE_FIELDS)}, "
        "updated_at = excluded.updated_at",
        [owner_id, url, *(getattr(state, f) for f in _STATE_FIELDS), now],
    )


#: A fetch row's columns after its owner and URL (``media_fetches``, ``image_fetches``).
_FETCH_FIELDS = (
    "final_url", "status", "etag", "last_modified", "headers", "fetched_at", "bytes",
    "sha256", "outcome", "error",
)  # fmt: skip


def insert_fetch(
    db: ArchiveDb,
    table: str,
    owner: str,
    owner_id: int,
    url: str,
    values: Sequence[object],
) -> int:
    """One fetch row in ``table`` for the ``url`` of the row ``owner = owner_id``:
    ``values`` in the order of :data:`_FETCH_FIELDS` (``headers`` a mapping or None, kept as
    JSON); its id (call it in a transaction)."""
    row = dict(zip(_FETCH_FIELDS, values, strict=True))
    headers = row["headers"]
    if headers is not None:
        row["headers"] = json.dumps(dict(headers), sort_keys=True)  # type: ignore[call-overload]
    cursor = db.execute(
        f"INSERT INTO {table} ({owner}, url, {', '.join(_FETCH_FIELDS)}) "
        f"VALUES (?, ?, {', '.join('?' * len(_FETCH_FIELDS))})",
        [owner_id, url, *row.values()],
    )
    return int(cursor.lastrowid or 0)


#: The files an episode's media may be: its enclosure, and (asked for, the second ``?``) the
#: sources of its ``podcast:alternateEnclosure`` tags (the view's type and length; a source's
#: own contentType first), each a target of its own (state and versions by URL).
_CANDIDATES = (
    "WITH c (episode_id, url, content_type, length, published, seen, source) AS ("
    "SELECT e.id, e.enclosure_url, e.enclosure_type, e.enclosure_length, e.published, "
    "e.first_seen_at, 'enclosure' FROM episodes e WHERE e.feed_id = ? "
    "AND e.enclosure_url IS NOT NULL AND e.enclosure_url != '' "
    "UNION ALL SELECT e.id, s.uri, coalesce(s.content_type, a.type), a.length, e.published, "
    "e.first_seen_at, 'alternate' FROM alternate_enclosure_sources s "
    "JOIN alternate_enclosures a ON a.id = s.alternate_enclosure_id "
    "JOIN episodes e ON e.id = s.episode_id WHERE ? AND e.feed_id = ? "
    "AND s.uri IS NOT NULL AND s.uri != '' AND s.uri IS NOT e.enclosure_url) "
)
_STORED = (
    "EXISTS (SELECT 1 FROM episode_media m WHERE m.episode_id = c.episode_id AND m.url = c.url)"
)
_DUE = (
    f"{_CANDIDATES}SELECT c.episode_id, c.url, c.content_type, c.length, c.published, "
    f"{_STORED}, c.source, {', '.join(f's.{f}' for f in _STATE_FIELDS)} "
    "FROM c LEFT JOIN media_state s ON s.episode_id = c.episode_id AND s.url = c.url WHERE "
    f"(s.{MEDIA_DUE_STATE} AND s.next_check_at <= ?) OR (s.episode_id IS NULL AND NOT "
    f"{_STORED}) OR (? AND {_STORED}) "
    "ORDER BY coalesce(c.published, c.seen) DESC, c.episode_id DESC, c.source = 'alternate'"
)


class MediaReadsMixin(Connection):
    """The media ledger's read-only queries (also :class:`~.reader.ArchiveReader`'s)."""

    def last_audit(self) -> Row | None:
        """The latest fixity audit (its events share one ``checked_at``): ``checked_at``,
        ``checked`` (payloads), ``bytes``, ``damaged`` (mismatch or missing); None before
        the first."""
        row = self.db.execute(
            "SELECT x.checked_at, count(*), coalesce(sum(p.size), 0), "
            "sum(x.outcome != 'ok') FROM fixity_events x "
            "LEFT JOIN media_payloads p ON p.sha256 = x.sha256 "
            "WHERE x.checked_at = (SELECT max(checked_at) FROM fixity_events)"
        ).fetchone()
        if row is None or row[0] is None:
            return None
        return {"checked_at": row[0], "checked": row[1], "bytes": row[2], "damaged": row[3]}


class MediaMixin(MediaReadsMixin):
    """The media ledger of :class:`~podarchive.store.Archive`."""

    if TYPE_CHECKING:  # what it uses of the other mixins (Archive combines them)
        # FetchLogMixin
        def _log(
            self,
            records: Iterable[FetchRecord],
            *,
            feed_id: int | None,
            episode_id: int | None = None,
        ) -> None: ...

    def record_payload(
        self, sha256: str, size: int, content_type: str | None, ext: str, now: str
    ) -> bool:
        """Note a payload stored in the media folder; True if the ledger did not know it (a
        known one only gets ``last_seen_at``)."""
        with self.transaction():
            cursor = self.db.execute(
                "INSERT INTO media_payloads (sha256, size, content_type, ext, first_seen_at, "
                "last_seen_at) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (sha256) DO NOTHING",
                [sha256, size, content_type, ext, now, now],
            )
            if cursor.rowcount:
                return True
            self.db.execute(
                "UPDATE media_payloads SET last_seen_at = ? WHERE sha256 = ?", [now, sha256]
            )
        return False

    def record_media_fetch(
        self,
        episode_id: int,
        url: str,
        *,
        outcome: str,
        now: str,
        final_url: str | None = None,
        status: int | None = None,
        etag: str | None = None,
        last_modified: str | None = None,
        headers: Mapping[str, str] | None = None,
        moved: int = 0,
        sha256: str | None = None,
        error: str | None = None,
        records: Iterable[FetchRecord] = (),
        feed_id: int | None = None,
    ) -> int:
        """One fetch of an episode's enclosure (``outcome``: stored, unchanged, partial,
        failed…; ``moved``: the bytes it transferred); returns its ``media_fetches`` id. A
        ``sha256`` must be a recorded payload (:meth:`record_payload` first). ``records``
        (its requests, every redirect hop) go to the fetch log in the same transaction."""
        with self.transaction():
            self._log(records, feed_id=feed_id, episode_id=episode_id)
            return insert_fetch(
                self.db,
                "media_fetches",
                "episode_id",
                episode_id,
                url,
                [
                    final_url,
                    status,
                    etag,
                    last_modified,
                    headers,
                    now,
                    moved,
                    sha256,
                    outcome,
                    error,
                ],
            )

    def add_media_version(self, episode_id: int, url: str, sha256: str, now: str) -> int:
        """The version number of payload ``sha256`` as the media of the episode's ``url``:
        bytes seen before keep their number (only ``last_seen_at`` moves); new bytes get the
        next one. Nothing is overwritten."""
        with self.transaction():
            found = self.db.execute(
                "SELECT version FROM episode_media WHERE episode_id = ? AND url = ? AND sha256 = ?",
                [episode_id, url, sha256],
            ).fetchone()
            if found:
                self.db.execute(
                    "UPDATE episode_media SET last_seen_at = ? WHERE episode_id = ? AND url = ? "
                    "AND sha256 = ?",
                    [now, episode_id, url, sha256],
                )
                return int(found[0])
            (latest,) = self.db.execute(
                "SELECT coalesce(max(version), 0) FROM episode_media WHERE episode_id = ? "
                "AND url = ?",
                [episode_id, url],
            ).fetchone()
            self.db.execute(
                "INSERT INTO episode_media (episode_id, url, sha256, version, first_seen_at, "
                "last_seen_at) VALUES (?, ?, ?, ?, ?, ?)",
                [episode_id, url, sha256, latest + 1, now, now],
            )
        return int(latest) + 1

    def media_versions(self, episode_id: int, url: str) -> list[Row]:
        """The stored versions of the episode's ``url``, oldest first: ``version``,
        ``sha256``, ``size``, ``ext``, ``content_type``, ``first_seen_at``, ``last_seen_at``."""
        return self._rows(
            "SELECT m.version, m.sha256, p.size, p.ext, p.content_type, m.first_seen_at, "
            "m.last_seen_at FROM episode_media m JOIN media_payloads p ON p.sha256 = m.sha256 "
            "WHERE m.episode_id = ? AND m.url = ? ORDER BY m.version",
            episode_id,
            url,
        )

    def drop_media_version(self, episode_id: int, url: str, sha256: str) -> int:
        """Forget payload ``sha256`` as a version of the episode's ``url`` (the version cap);
        returns how many versions of any episode or image still use the payload (0: its file
        may be removed from the folder). The payload's row, fetches and fixity events stay."""
        with self.transaction():
            self.db.execute(
                "DELETE FROM episode_media WHERE episode_id = ? AND url = ? AND sha256 = ?",
                [episode_id, url, sha256],
            )
            (left,) = self.db.execute(
                "SELECT (SELECT count(*) FROM episode_media WHERE sha256 = ?) + "
                "(SELECT count(*) FROM image_files WHERE sha256 = ?)",  # #28: images too
                [sha256, sha256],
            ).fetchone()
        return int(left)

    def media_links(self, sha256: str) -> list[Row]:
        """The episodes payload ``sha256`` is a version of: ``episode_id``, ``title``,
        ``feed_id``, ``feed`` (its name, title or URL), ``url``, ``version`` (for an audit's
        report)."""
        return self._rows(
            "SELECT m.episode_id, e.title, e.feed_id, coalesce(f.name, f.title, f.url) AS feed, "
            "m.url, m.version FROM episode_media m JOIN episodes e ON e.id = m.episode_id "
            "JOIN feeds f ON f.id = e.feed_id WHERE m.sha256 = ? ORDER BY m.episode_id",
            sha256,
        )

    def media_state(self, episode_id: int, url: str) -> MediaState | None:
        """The download state of the episode's ``url``; None before its first attempt."""
        return read_state(self.db, "media_state", "episode_id", episode_id, url)

    def set_media_state(self, episode_id: int, url: str, state: MediaState, now: str) -> None:
        """Write the whole download state of the episode's ``url``."""
        with self.transaction():
            write_state(self.db, "media_state", "episode_id", episode_id, url, state, now)

    def record_fixity(
        self, sha256: str, expected: str, found: str | None, outcome: str, now: str
    ) -> None:
        """One audit of payload ``sha256`` (``outcome``: ok, mismatch, missing), also kept
        on its ``media_payloads`` row (``last_audit_at``, ``last_audit``)."""
        with self.transaction():
            self.db.execute(
                "INSERT INTO fixity_events (sha256, checked_at, expected, found, outcome) "
                "VALUES (?, ?, ?, ?, ?)",
                [sha256, now, expected, found, outcome],
            )
            self.db.execute(
                "UPDATE media_payloads SET last_audit_at = ?, last_audit = ? WHERE sha256 = ?",
                [now, outcome, sha256],
            )

    def audit_queue(self, limit_bytes: int | None = None) -> list[Row]:
        """The payloads to audit, never audited then oldest audit first (``sha256``,
        ``size``, ``ext``, ``last_audit_at``, ``last_audit``): all of them without a limit,
        else as many as fit in ``limit_bytes`` (always at least one, so a small budget still
        moves on)."""
        cursor = self.db.execute(
            "SELECT sha256, size, ext, last_audit_at, last_audit FROM media_payloads "
            "WHERE sha256 IN (SELECT sha256 FROM episode_media) "
            "OR sha256 IN (SELECT sha256 FROM image_files) "
            "ORDER BY last_audit_at, sha256"  # NULL (never audited) sorts first
        )
        names = [d[0] for d in cursor.description]
        queue: list[Row] = []
        total = 0
        for values in cursor:
            row = dict(zip(names, values, strict=True))
            if limit_bytes is not None and queue and total + row["size"] > limit_bytes:
                break
            queue.append(row)
            total += row["size"]
        return queue

    def media_due(
        self, feed_id: int, now: str, *, recheck: bool = False, alternates: bool = False
    ) -> list[MediaTask]:
        """The feed's episodes whose enclosure's media is due, newest first: never stored and
        not yet tried, or whose ``next_check_at`` has come (a retry or a re-check); with
        ``recheck`` (``run --recheck-media``) every stored one too. With ``alternates``
        (``media_alternates``) the sources of their alternate enclosures too, each URL once
        per episode, after its enclosure."""
        tasks = []
        seen: set[tuple[int, str]] = set()
        params = [feed_id, alternates, feed_id, now, recheck]
        for row in self.db.execute(_DUE, params).fetchall():
            episode_id, url, kind, length, published, stored, source, *state = row
            if (episode_id, url) in seen:
                continue
            seen.add((episode_id, url))
            has_state = state[_STATE_FIELDS.index("checks")] is not None
            tasks.append(
                MediaTask(
                    episode_id, url, kind, length, published, bool(stored),
                    MediaState(*state) if has_state else MediaState(), source,
                )
            )  # fmt: skip
        return tasks
