"""Episode pages: which are due, and each fetch's outcome (notes, links, status)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from podarchive.types import FetchRecord, Link, PageTask

from .episodes import EpisodesMixin
from .fetch_log import FetchLogMixin
from .schema import PAGES_DUE


class PagesMixin(EpisodesMixin, FetchLogMixin):
    """The page side of episodes: ``page_*`` columns, page links and page revisions."""

    def pages_to_fetch(self, feed_id: int) -> list[PageTask]:
        """Episode pages never fetched, or that failed or had no notes last time."""
        rows = self.db.execute(
            "SELECT id, feed_id, page_url, page_etag, page_last_modified, page_status, "
            f"page_attempts, page_fetched_at FROM episodes WHERE feed_id = ? AND {PAGES_DUE} "
            "ORDER BY id",
            [feed_id],
        ).fetchall()
        return [PageTask(*row) for row in rows]

    def record_page(
        self,
        task: PageTask,
        *,
        status: str,
        now: str,
        records: Iterable[FetchRecord],
        error: str | None = None,
        extractor: str | None = None,
        notes_html: str | None = None,
        notes_text: str | None = None,
        links: Sequence[Link] = (),
        etag: str | None = None,
        last_modified: str | None = None,
    ) -> None:
        """Store a page outcome: ``ok``, ``not_modified``, ``empty`` or ``failed``."""
        with self.transaction():
            if status == "not_modified":
                self.db.execute(
                    "UPDATE episodes SET page_status = 'ok', page_error = NULL, "
                    "page_fetched_at = ? WHERE id = ? AND page_notes_text IS NOT NULL",
                    [now, task.episode_id],
                )
            elif status == "ok":
                before = self.db.execute(
                    "SELECT page_notes_html FROM episodes WHERE id = ?", [task.episode_id]
                ).fetchone()
                renew = before is None or before[0] != notes_html
                if before is not None and before[0] is not None and renew:
                    self._add_revision(task.episode_id, "page", ["page_notes"], now)
                # one UPDATE: each one setting page_notes_text re-indexes the episode's text
                self.db.execute(
                    "UPDATE episodes SET page_status = 'ok', page_error = NULL, "
                    "page_extractor = ?, page_notes_html = ?, page_notes_text = ?, "
                    "page_fetched_at = ?, page_attempts = page_attempts + 1, "
                    "page_etag = ?, page_last_modified = ?, page_version_seen_at = "
                    "CASE WHEN ? THEN ? ELSE page_version_seen_at END WHERE id = ?",
                    [extractor, notes_html, notes_text, now, etag, last_modified, renew, now,
                     task.episode_id],
                )  # fmt: skip
                self._replace_links(task.episode_id, "page", links)
            else:
                self.db.execute(
                    "UPDATE episodes SET page_status = ?, page_error = ?, page_fetched_at = ?, "
                    "page_attempts = page_attempts + 1 WHERE id = ?",
                    [status, error, now, task.episode_id],
                )
            self._log(records, feed_id=task.feed_id, episode_id=task.episode_id)
