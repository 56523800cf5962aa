"""The read-only queries of feeds: their stored state and the list of them (writer and
reader alike: :class:`~podarchive.store.Archive` and :class:`~podarchive.store.ArchiveReader`)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from podarchive.core.types import MOVED_BY_CONTENT, FeedState

from .base import Connection

FEED_STATE_COLUMNS = (
    "id", "url", "etag", "last_modified", "content_hash", "error_count", "fetch_url",
    "gone_at", "not_before", "last_fetched_at", "ttl", "update_period", "update_frequency",
)  # fmt: skip
#: FeedState.fetch_trusted, from the feed's moves (no schema change, #23): the configured URL
#: is trusted, and so is where its hosts' permanent redirects moved it; a move by feed content
#: is not, nor any move after it, until the feed moves back to its configured URL.
FETCH_TRUSTED = (
    "fetch_url IS NULL OR fetch_url = url OR NOT EXISTS (SELECT 1 FROM feed_moves m "
    "WHERE m.feed_id = feeds.id AND m.reason = ? AND m.id > coalesce((SELECT max(b.id) "
    "FROM feed_moves b WHERE b.feed_id = feeds.id AND b.new_url = feeds.url), 0))"
)


#: a feed's stored state (:func:`state_of`), its name last: one statement per feed (#30)
STATE_SELECT = (
    f"SELECT {', '.join(FEED_STATE_COLUMNS)}, {FETCH_TRUSTED}, "
    "EXISTS (SELECT 1 FROM feed_redirects r WHERE r.feed_id = feeds.id), fetch_settings, name "
    "FROM feeds"
)


def state_of(row: Sequence[Any]) -> FeedState:
    """A :data:`STATE_SELECT` row as the feed's state."""
    columns = dict(zip(FEED_STATE_COLUMNS, row[: len(FEED_STATE_COLUMNS)], strict=True))
    trusted, redirects, settings = row[len(FEED_STATE_COLUMNS) : len(FEED_STATE_COLUMNS) + 3]
    return FeedState(
        **columns, fetch_trusted=bool(trusted), redirects=bool(redirects), fetch_settings=settings
    )


class FeedReadsMixin(Connection):
    """A feed's stored state, the feeds of the archive and when they are due."""

    def feed_state(self, url: str) -> FeedState | None:
        row = self.db.execute(f"{STATE_SELECT} WHERE url = ?", [MOVED_BY_CONTENT, url]).fetchone()
        return None if row is None else state_of(row)

    def feed_states(self) -> dict[str, FeedState]:
        """Every feed's state by its configured URL, in one statement (a run's due-ness)."""
        rows = self.db.execute(STATE_SELECT, [MOVED_BY_CONTENT])
        return {str(row[1]): state_of(row) for row in rows}

    def due_stamps(self, url: str | None = None) -> Iterator[tuple[str, str | None, bool]]:
        """(url, next_due_at, gone) of every feed, or of the feed configured as ``url``: what
        a cluster worker publishes to the broker's due index (#16)."""
        sql = "SELECT url, next_due_at, gone_at IS NOT NULL FROM feeds"
        rows = self.db.execute(sql + " WHERE url = ?", [url]) if url else self.db.execute(sql)
        for feed_url, next_due_at, gone in rows:
            yield str(feed_url), next_due_at, bool(gone)

    def feeds(self) -> list[tuple[int, str, str | None]]:
        """(id, url, name) of every feed in the archive."""
        return [tuple(r) for r in self.db.execute("SELECT id, url, name FROM feeds ORDER BY id")]
