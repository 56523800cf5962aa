"""The change feed (``podarchive changes``, and ``serve``'s change feeds): what the archive saw
change, for one podcast or all, as Atom or JSON Feed, from a date or after a cursor.

:func:`read_changes` reads the archive's change rows and makes them changes
(:mod:`podarchive.rules.changes`); :func:`change_document` writes them
(:mod:`podarchive.formats.feeds`); :func:`write_changes` is the command's whole work.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from podarchive.core.clock import now_iso
from podarchive.core.errors import ConfigError, StorageError
from podarchive.formats.feeds import ChangeFeed, change_atom, change_json
from podarchive.rules.changes import (
    Change,
    ChangeKey,
    Cursor,
    OrderedT,
    parse_cursor,
    parse_since,
    select,
    to_changes,
)
from podarchive.store import ArchiveReader
from podarchive.store.change_reads import Bound

Format = Literal["atom", "json"]
FEED_ID = "tag:podarchive,2026:changes"
NAMED_ROWS = 2000  # the most changes read whole by their row ids (more: by their times)


@dataclass(frozen=True, slots=True)
class ChangeQuery:
    """Which changes a reader wants: of one podcast (its id) or all, from ``since`` (a
    timestamp) or after ``after``, at most ``limit``, none stamped at ``now`` or later."""

    feed_id: int | None = None
    since: str | None = None
    after: Cursor | None = None
    limit: int | None = None
    now: str = ""


def query_from(
    since: str | None, after: str | None, limit: int | None, feed_id: int | None = None
) -> ChangeQuery:
    """A query from what a reader typed: ``since`` a date, a timestamp or a cursor token;
    ``after`` a cursor token. ConfigError for anything else."""
    cursor = parse_cursor(after) if after else None
    start: str | None = None
    if since:
        parsed = parse_since(since)
        if isinstance(parsed, Cursor):
            if cursor is not None:
                raise ConfigError("--since and --after both name a cursor: give one")
            cursor = parsed
        else:
            start = parsed
    if limit is not None and limit < 1:
        raise ConfigError(f"--limit {limit}: give 1 or more")
    return ChangeQuery(feed_id, start, cursor, limit, now_iso())


def find_podcast(archive: ArchiveReader, name: str) -> int:
    """The id of the podcast ``name`` names (URL, name, title or id); StorageError if none."""
    found = archive.podcast_feed_id(name)
    if found is None:
        raise StorageError(f"no podcast {name!r} in {archive.path} (give its URL, name or id)")
    return found


def read_changes(archive: ArchiveReader, query: ChangeQuery) -> list[Change]:
    """The changes ``query`` asks for, oldest first. Only the rows a page can show are read
    whole: with a limit, the store first finds the time of the last change the page can hold
    (:meth:`~podarchive.store.change_reads.ChangeReadsMixin.change_bound`, by the time
    indexes), the changes between it and where the reader stands are ordered by their keys
    alone (a second may hold thousands), and only those the page shows are read whole."""
    now = query.now or now_iso()
    after = query.after.at if query.after else None
    start = max(filter(None, (query.since, after)), default=None)
    bounds: list[Bound] = [("<", now)]  # the current second is held back
    if start is not None:
        bounds.append((">=", start))

    def pick(items: Iterable[OrderedT]) -> list[OrderedT]:
        return select(items, now=now, after=query.after, since=query.since, limit=query.limit)

    if query.limit is None and query.after is None:  # every change from a date: all read
        return pick(to_changes(archive.change_rows(query.feed_id, tuple(bounds))))
    if query.limit is not None:
        walking = start is not None  # a reader going forward gets the first ones
        counted = list(bounds)
        if walking and after is not None and start == after:  # the cursor's second: some behind
            counted[-1] = (">", start)
        found = archive.change_bound(query.feed_id, tuple(counted), query.limit, not walking)
        if found is not None:
            bounds.append(("<=", found) if walking else (">=", found))
    keys = pick(map(ChangeKey.of, archive.change_keys(query.feed_id, tuple(bounds))))
    if len(keys) > NAMED_ROWS:  # most of what is within the bounds: read it all
        return pick(to_changes(archive.change_rows(query.feed_id, tuple(bounds))))
    only: dict[str, list[int]] = {}
    for key in keys:
        only.setdefault(key.name, []).append(key.rowid)
    rows = archive.change_rows(query.feed_id, tuple(bounds), only) if only else []
    return pick(to_changes(rows))


def feed_title(archive: ArchiveReader, feed_id: int | None) -> str:
    """The change feed's title: the podcast's, or the archive's."""
    if feed_id is not None:
        for id_, url, name in archive.feeds():
            if id_ == feed_id:
                return f"Changes of {name or url} (podarchive)"
    return f"Changes in the archive {archive.path.stem} (podarchive)"


def change_document(
    changes: list[Change],
    fmt: Format,
    *,
    title: str,
    feed_id: int | None = None,
    links: dict[str, str] | None = None,
    link_for: Callable[[Change], str | None] | None = None,
) -> bytes:
    """The changes as an Atom or JSON Feed document."""
    feed = ChangeFeed(
        id=FEED_ID if feed_id is None else f"{FEED_ID}/podcast/{feed_id}",
        title=title,
        changes=changes,
        links=links or {},
        entry_links={c.id: href for c in changes if link_for and (href := link_for(c))},
    )
    return change_json(feed) if fmt == "json" else change_atom(feed)


def served_link(base_url: str, database: str) -> Callable[[Change], str | None]:
    """Each change's page on a ``podarchive serve`` at ``base_url``: a revision's own page,
    else its episode's, else its podcast's."""
    base = base_url.rstrip("/")

    def link(change: Change) -> str | None:
        if change.page is not None:
            return f"{base}/{database}/-/changes/{change.page[0]}/{change.page[1]}"
        if change.episode_id is not None:
            return f"{base}/{database}/episodes/{change.episode_id}"
        return f"{base}/{database}/feeds/{change.feed_id}"

    return link


@dataclass(frozen=True, slots=True)
class ChangesWritten:
    """What ``podarchive changes`` wrote: how many changes, and the cursor to pass next
    (the last change's, else the one it was given; None when it had none)."""

    count: int
    cursor: str | None


def write_changes(
    db_path: Path,
    out: Path | None,
    query_text: tuple[str | None, str | None, int | None],
    *,
    podcast: str | None = None,
    fmt: Format = "atom",
    base_url: str | None = None,
    write: Callable[[bytes], object] | None = None,
) -> ChangesWritten:
    """``podarchive changes``: the changes of the archive at ``db_path`` written to ``out``
    (atomically) or given to ``write``. ``query_text``: (since, after, limit) as typed."""
    since, after, limit = query_text
    with ArchiveReader.open_to_read(db_path) as archive:
        feed_id = find_podcast(archive, podcast) if podcast else None
        query = query_from(since, after, limit, feed_id)
        changes = read_changes(archive, query)
        title = feed_title(archive, feed_id)
    link_for = served_link(base_url, db_path.stem) if base_url else None
    data = change_document(changes, fmt, title=title, feed_id=feed_id, link_for=link_for)
    if write is not None:
        write(data)
    elif out is not None:
        write_atomically(out, data)
    last = changes[-1].cursor if changes else (query.after.token if query.after else None)
    return ChangesWritten(len(changes), last)


def write_atomically(path: Path, data: bytes) -> None:
    """``data`` into ``path`` through a temporary file beside it: a reader of ``path`` sees
    the old file or the new one, never half of one."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, temporary = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as file:
            file.write(data)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
