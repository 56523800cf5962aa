"""Chapters: one row per chapter, from ``podcast:chapters`` files and Podlove Simple Chapters.

A chapters file whose chapters change, or an episode whose feed item changes its
``psc:chapters``, keeps the earlier chapters: they move to a ``chapter_revisions`` row
(``revision_id``); a body that reads into the current chapters is no revision (#23).
``source`` says where a chapter came from: ``json`` (a file, with its ``chapter_file_id``)
or ``psc`` (the feed item, kept in ``episodes.simple_chapters``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from podarchive.core.types import Chapter, FileTask, ParsedChapters

from .base import Connection, json_objects

INSERT_CHAPTER = (
    "INSERT INTO chapters (episode_id, chapter_file_id, source, position, start, end, title, "
    "url, image, toc) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
)


class ChaptersMixin(Connection):
    """The chapters of each episode, written inside the caller's transaction."""

    def _same_chapters(self, task: FileTask, parsed: ParsedChapters | None) -> bool:
        """Whether ``parsed`` is the file's current format, version and chapters, in order."""
        stored = self.db.execute(
            "SELECT format, version FROM chapter_files WHERE id = ?", [task.file_id]
        ).fetchone()
        if parsed is None or stored != (parsed.format, parsed.version):
            return False
        return self._current_chapters("chapter_file_id = ?", [task.file_id]) == list(
            parsed.chapters
        )

    def _current_chapters(self, which: str, args: list[Any]) -> list[Chapter]:
        return [
            Chapter(start, end, title, url, image, bool(toc))
            for start, end, title, url, image, toc in self.db.execute(
                f"SELECT start, end, title, url, image, toc FROM chapters WHERE {which} "
                "AND revision_id IS NULL ORDER BY position",
                args,
            )
        ]

    def _replace_chapters(
        self, task: FileTask, document_id: int, parsed: ParsedChapters | None, now: str
    ) -> None:
        """Make a file's ``parsed`` chapters current; the current ones become a revision."""
        if task.document_id is not None:
            self._revise_chapters(
                "chapter_file_id = ?",
                [task.file_id],
                "SELECT id, episode_id, document_id, format, items, version_seen_at, ? "
                "FROM chapter_files WHERE id = ?",
                [now, task.file_id],
            )
        chapters = parsed.chapters if parsed is not None else ()
        self._add_chapters(task.episode_id, task.file_id, "json", chapters)
        self.db.execute(
            "UPDATE chapter_files SET format = ?, version = ?, items = ?, warnings = ? "
            "WHERE id = ?",
            [
                parsed.format if parsed is not None else None,
                parsed.version if parsed is not None else None,
                len(chapters),
                "\n".join(parsed.warnings) if parsed is not None and parsed.warnings else None,
                task.file_id,
            ],
        )

    def _sync_simple_chapters(self, episode_id: int, value: Any, now: str, *, new: bool) -> None:
        """Make the episode's ``psc`` chapters match its feed row's ``simple_chapters``."""
        wanted = _simple_chapters(value)
        if new and not wanted:
            return
        current = self._current_chapters("episode_id = ? AND source = 'psc'", [episode_id])
        if current == wanted:
            return
        if current:
            self._revise_chapters(
                "episode_id = ? AND source = 'psc'",
                [episode_id],
                "SELECT NULL, id, NULL, 'psc', ?, version_seen_at, ? FROM episodes WHERE id = ?",
                [len(current), now, episode_id],
            )
        self._add_chapters(episode_id, None, "psc", wanted)

    def _revise_chapters(
        self, which: str, which_args: list[Any], revision: str, revision_args: list[Any]
    ) -> None:
        cursor = self.db.execute(
            "INSERT INTO chapter_revisions (chapter_file_id, episode_id, document_id, format, "
            f"items, seen_from, seen_until) {revision}",
            revision_args,
        )
        self.db.execute(
            f"UPDATE chapters SET revision_id = ? WHERE {which} AND revision_id IS NULL",
            [cursor.lastrowid, *which_args],
        )

    def _add_chapters(
        self, episode_id: int, file_id: int | None, source: str, chapters: Sequence[Chapter]
    ) -> None:
        self.db.conn.executemany(
            INSERT_CHAPTER,
            [
                (episode_id, file_id, source, position, c.start, c.end, c.title, c.url,
                 c.image, int(c.toc))
                for position, c in enumerate(chapters)
            ],
        )  # fmt: skip


def _simple_chapters(value: Any) -> list[Chapter]:
    """The chapters an ``episodes.simple_chapters`` JSON list holds (bad entries skipped)."""
    return [
        Chapter(
            float(start),
            item.get("end"),
            item.get("title"),
            item.get("url"),
            item.get("image"),
            bool(item.get("toc", True)),
        )
        for item in json_objects(value)
        if isinstance(start := item.get("start"), int | float)
    ]
