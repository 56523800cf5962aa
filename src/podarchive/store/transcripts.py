"""Transcript segments: one row per time-coded passage, the old ones kept with their revision.

A transcript whose body changes keeps its earlier segments: they move to a
``transcript_revisions`` row (``revision_id``), like page notes to ``episode_revisions``.
The full-text index over ``text`` and ``speaker`` ignores that move (schema 8's trigger).
"""

from __future__ import annotations

from podarchive.types import FileTask, ParsedTranscript

from .base import Connection

INSERT_SEGMENT = (
    "INSERT INTO transcript_segments (transcript_id, episode_id, position, start, end, "
    "speaker, text) VALUES (?, ?, ?, ?, ?, ?, ?)"
)


class TranscriptsMixin(Connection):
    """The segments of each transcript, written inside the caller's transaction."""

    def _replace_segments(
        self, task: FileTask, document_id: int, parsed: ParsedTranscript | None, now: str
    ) -> None:
        """Make ``parsed``'s segments current; the current ones, if any, become a revision."""
        if task.document_id is not None:
            cursor = self.db.execute(
                "INSERT INTO transcript_revisions (transcript_id, episode_id, document_id, "
                "format, items, seen_from, seen_until) SELECT id, episode_id, document_id, "
                "format, items, version_seen_at, ? FROM transcripts WHERE id = ?",
                [now, task.file_id],
            )
            self.db.execute(
                "UPDATE transcript_segments SET revision_id = ? WHERE transcript_id = ? "
                "AND revision_id IS NULL",
                [cursor.lastrowid, task.file_id],
            )
        segments = parsed.segments if parsed is not None else ()
        self.db.conn.executemany(
            INSERT_SEGMENT,
            [
                (task.file_id, task.episode_id, position, s.start, s.end, s.speaker, s.text)
                for position, s in enumerate(segments)
            ],
        )
        self.db.execute(
            "UPDATE transcripts SET format = ?, items = ?, warnings = ? WHERE id = ?",
            [
                parsed.format if parsed is not None else None,
                len(segments),
                "\n".join(parsed.warnings) if parsed is not None and parsed.warnings else None,
                task.file_id,
            ],
        )
