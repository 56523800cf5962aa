"""Podping (#29): the watcher's cursor (``podping_cursor``, migration v21:
:mod:`.migrations_podping`) and the URLs each archived feed is known by.

The cursor is the last Hive block the daemon's podping watcher processed, the time that
block was made, and when it was written. The daemon writes it; ``status`` reads it.
"""

from __future__ import annotations

from dataclasses import dataclass

from .base import Connection


@dataclass(frozen=True, slots=True)
class PodpingCursor:
    block: int
    block_time: str | None
    updated_at: str


class PodpingMixin(Connection):
    """Read and write the podping cursor."""

    def podping_cursor(self) -> PodpingCursor | None:
        """The last block processed; None before the first (or in an archive before v21)."""
        if not self.db.table("podping_cursor").exists():
            return None
        row = self.db.execute(
            "SELECT block, block_time, updated_at FROM podping_cursor WHERE id = 1"
        ).fetchone()
        return None if row is None else PodpingCursor(*row)

    def save_podping_cursor(self, block: int, block_time: str | None, now: str) -> None:
        with self.transaction():
            self.db.execute(
                "INSERT OR REPLACE INTO podping_cursor (id, block, block_time, updated_at) "
                "VALUES (1, ?, ?, ?)",
                [block, block_time, now],
            )

    def feed_names(self) -> list[tuple[str, str]]:
        """(a URL a feed is known by, the feed's URL) for every feed: its URL, where it is
        fetched from now, and each move's old and new URL."""
        rows = self.db.execute(
            "SELECT url, url FROM feeds "
            "UNION SELECT fetch_url, url FROM feeds WHERE fetch_url IS NOT NULL "
            "UNION SELECT m.new_url, f.url FROM feed_moves m JOIN feeds f ON f.id = m.feed_id "
            "UNION SELECT m.old_url, f.url FROM feed_moves m JOIN feeds f ON f.id = m.feed_id "
            "WHERE m.old_url IS NOT NULL"
        )
        return [(str(a), str(b)) for a, b in rows]
