"""The read-only queries of an export (#27, ``podarchive export-warc``) beyond the capture
API: which feeds a podcast name means, the feeds' and episodes' titles, and the episode rows
as the metadata records carry them. Plain functions over an open archive's connection."""

from __future__ import annotations

from collections.abc import Collection, Iterator
from typing import Any

from .base import Connection

_CHUNK = 500  # ids per IN (...) query, below SQLite's variable limit


def feed_ids_named(archive: Connection, names: Collection[str]) -> dict[str, list[int]]:
    """Each of ``names`` → the ids of the feeds it names: a feed's schedule name, its title
    or its URL (exactly); a name matching none maps to an empty list."""
    found: dict[str, list[int]] = {name: [] for name in names}
    for name in names:
        rows = archive.db.execute(
            "SELECT id FROM feeds WHERE name = ? OR title = ? OR url = ? ORDER BY id",
            [name, name, name],
        ).fetchall()
        found[name] = [int(r[0]) for r in rows]
    return found


def feed_titles(archive: Connection, feed_ids: Collection[int] | None = None) -> dict[int, str]:
    """Feed id → its title (else its schedule name, else its URL), for ``feed_ids`` (all)."""
    rows = archive.db.execute("SELECT id, coalesce(title, name, url) FROM feeds ORDER BY id")
    wanted = None if feed_ids is None else set(feed_ids)
    return {int(i): str(t) for i, t in rows if wanted is None or i in wanted}


def episode_titles(archive: Connection, episode_ids: Collection[int]) -> dict[int, str]:
    """Episode id → its title (else its key)."""
    titles: dict[int, str] = {}
    ids = sorted(episode_ids)
    for start in range(0, len(ids), _CHUNK):
        chunk = ids[start : start + _CHUNK]
        marks = ",".join("?" * len(chunk))
        sql = f"SELECT id, coalesce(title, key) FROM episodes WHERE id IN ({marks})"
        rows = archive.db.execute(sql, chunk)
        titles.update((int(i), str(t)) for i, t in rows)
    return titles


def episode_rows(
    archive: Connection, feed_ids: Collection[int] | None = None
) -> Iterator[dict[str, Any]]:
    """The episode rows (every column, as stored) of ``feed_ids`` (None: every feed), by id,
    each with its feed's URL as ``feed_url``; read in chunks, never all at once."""
    where = ""
    params: list[Any] = []
    if feed_ids is not None:
        where = f" WHERE e.feed_id IN ({','.join('?' * len(feed_ids))})"
        params = list(feed_ids)
    cursor = archive.db.execute(
        f"SELECT e.*, f.url AS feed_url FROM episodes e JOIN feeds f ON f.id = e.feed_id"
        f"{where} ORDER BY e.id",
        params,
    )
    names = [d[0] for d in cursor.description]
    while rows := cursor.fetchmany(256):
        for row in rows:
            yield dict(zip(names, row, strict=True))
