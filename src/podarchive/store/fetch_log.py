"""The fetch log: one ``fetches`` row per request, written with the outcome it belongs to."""

from __future__ import annotations

from collections.abc import Iterable

from podarchive.core.types import FetchRecord

from .base import Connection


class FetchLogMixin(Connection):
    """Writes the fetch log, alone or inside the caller's transaction (:meth:`_log`)."""

    def log_fetches(self, records: Iterable[FetchRecord], feed_id: int | None = None) -> None:
        with self.transaction():
            self._log(records, feed_id=feed_id)

    def _log(
        self, records: Iterable[FetchRecord], *, feed_id: int | None, episode_id: int | None = None
    ) -> None:
        self.db.conn.executemany(
            "INSERT INTO fetches (feed_id, episode_id, kind, url, started_at, ms, status, bytes, "
            "error, warning) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [
                (feed_id, episode_id, r.kind, r.url, r.started_at, r.ms, r.status, r.bytes)
                + (r.error, r.warning)
                for r in records
            ],
        )
