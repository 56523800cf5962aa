"""A transcript shown on the episode page (issue #24): a transcript, never the notes.

It is a ``transcripts`` row like a ``podcast:transcript`` file's, with ``format`` "page"
(:data:`PAGE_FORMAT`), the page's URL and the page body it was read from; its segments are
``transcript_segments`` rows (time-coded where the page gives times, in the transcripts'
full-text index). It is never fetched on its own (no ``next_check_at``) and the feed's file
list leaves it alone. When the page shows another transcript, the earlier segments become a
revision, as a file's do; a page read without one keeps the last it showed.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from podarchive.core.types import (
    FileTask,
    PageTranscriptSegment,
    ParsedTranscript,
    TranscriptSegment,
)

from .base import Connection

PAGE_FORMAT = "page"  # transcripts.format of a transcript read from the episode page


class PageTranscriptsMixin(Connection):
    """The page's own transcript, written inside the caller's transaction."""

    if TYPE_CHECKING:  # what it uses of the other mixins (Archive combines them)
        # TranscriptsMixin
        def _replace_segments(
            self, task: FileTask, document_id: int, parsed: ParsedTranscript | None, now: str
        ) -> None: ...
        def _same_segments(self, task: FileTask, parsed: ParsedTranscript | None) -> bool: ...

    def _store_page_transcript(
        self,
        episode_id: int,
        segments: Sequence[PageTranscriptSegment],
        document_id: int | None,
        now: str,
    ) -> None:
        """Make ``segments`` the page transcript of the episode (a no-op when they are)."""
        row = self.db.execute(
            "SELECT e.feed_id, e.page_url, t.id, t.document_id, t.format, e.page_document_id "
            "FROM episodes e "
            "LEFT JOIN transcripts t ON t.episode_id = e.id AND t.url = e.page_url "
            "WHERE e.id = ?",
            [episode_id],
        ).fetchone()
        if row is None or row[1] is None or (row[2] is not None and row[4] != PAGE_FORMAT):
            return  # no page URL, or the feed lists the page itself as a transcript file
        feed_id, url, file_id, kept_id, _, page_document_id = row
        document_id = document_id or page_document_id
        if file_id is None:
            cursor = self.db.execute(
                "INSERT INTO transcripts (episode_id, url, type, status, format, fetched_at, "
                "first_seen_at) VALUES (?, ?, 'text/html', 'ok', ?, ?, ?)",
                [episode_id, url, PAGE_FORMAT, now, now],
            )
            file_id = cursor.lastrowid
        task = FileTask("transcript", file_id, episode_id, feed_id, url, "text/html")
        rows = tuple(TranscriptSegment(s.start, None, s.speaker, s.text) for s in segments)
        parsed = ParsedTranscript(PAGE_FORMAT, rows)
        if kept_id is not None and self._same_segments(task, parsed):
            return
        task = FileTask(
            "transcript", file_id, episode_id, feed_id, url, "text/html", document_id=kept_id
        )
        self._replace_segments(task, document_id or 0, parsed, now)
        self.db.execute(
            "UPDATE transcripts SET document_id = coalesce(?, document_id), version_seen_at = ?, "
            "fetched_at = ? WHERE id = ?",
            [document_id, now, now, file_id],
        )
