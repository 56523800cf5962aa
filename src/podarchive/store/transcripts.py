"""Transcript segments: one row per time-coded passage, the old ones kept with their revision.

A transcript whose segments change keeps its earlier ones: they move to a
``transcript_revisions`` row (``revision_id``), like page notes to ``episode_revisions``.
The full-text index over ``text`` and ``speaker`` ignores that move (schema 8's trigger).
A body that reads into the current segments (only a ``NOTE`` or a cue id changed) is no
revision (issue #23, :meth:`TranscriptsMixin._same_segments`).
"""

from __future__ import annotations

from podarchive.core.types import FileTask, ParsedTranscript

from .base import Connection

INSERT_SEGMENT = (
    "INSERT INTO transcript_segments (transcript_id, episode_id, position, start, end, "
    "speaker, text) VALUES (?, ?, ?, ?, ?, ?, ?)"
)


class TranscriptsMixin(Connection):
    """The segments of each transcript, written inside the caller's transaction."""

    def _same_segments(self, task: FileTask, parsed: ParsedTranscript | None) -> bool:
        """Whether ``parsed`` is the transcript's current format and segments, in order."""
        (stored_format,) = self.db.execute(
            "SELECT format FROM transcripts WHERE id = ?", [task.file_id]
        ).fetchone()
        if parsed is None or parsed.format != stored_format:
            return False
        current = self.db.execute(
            "SELECT start, end, speaker, text FROM transcript_segments WHERE transcript_id = ? "
            "AND revision_id IS NULL ORDER BY position",
            [task.file_id],
        ).fetchall()
        return current == [(s.start, s.end, s.speaker, s.text) for s in parsed.segments]

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
