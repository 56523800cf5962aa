"""Transcript and chapters files an episode lists: their fetch state, due times and outcomes.

One row per file in ``transcripts`` / ``chapter_files`` (the feed's order in ``position``),
kept in step with the episode's ``transcripts`` / ``chapters`` columns whenever the feed
writes the episode: a new URL is a pending file, a URL the feed stops listing is marked
``unlisted_at`` and no longer fetched (its rows stay). :meth:`record_file` stores one fetch;
the rows a body parses into are :mod:`.transcripts`' and :mod:`.chapters`' business.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

from podarchive.core.types import (
    FetchRecord,
    FileKind,
    FileTask,
    KeptBody,
    ParsedChapters,
    ParsedTranscript,
    Row,
)

from .base import Connection, json_objects
from .schema import FILES_DUE

#: file kind → (table, the episode column that lists the files, the feed attributes kept)
FILE_TABLES: dict[str, tuple[str, str, tuple[str, ...]]] = {
    "transcript": ("transcripts", "transcripts", ("type", "language", "rel")),
    "chapters": ("chapter_files", "chapters", ("type",)),
}


class EpisodeFilesMixin(Connection):
    """The files side of episodes, written inside the caller's transaction."""

    if TYPE_CHECKING:  # what it uses of the other mixins (Archive combines them)
        # ChaptersMixin
        def _replace_chapters(
            self, task: FileTask, document_id: int, parsed: ParsedChapters | None, now: str
        ) -> None: ...
        def _same_chapters(self, task: FileTask, parsed: ParsedChapters | None) -> bool: ...
        def _sync_simple_chapters(
            self, episode_id: int, value: Any, now: str, *, new: bool
        ) -> None: ...
        # DocumentsMixin
        def _keep_document(self, kind: str, body: KeptBody, now: str) -> int: ...
        # FetchLogMixin
        def _log(
            self,
            records: Iterable[FetchRecord],
            *,
            feed_id: int | None,
            episode_id: int | None = None,
        ) -> None: ...
        # TranscriptsMixin
        def _replace_segments(
            self, task: FileTask, document_id: int, parsed: ParsedTranscript | None, now: str
        ) -> None: ...
        def _same_segments(self, task: FileTask, parsed: ParsedTranscript | None) -> bool: ...

    def _sync_files(self, episode_id: int, row: Row, now: str, *, new: bool) -> None:
        """Make the episode's file rows match the files its feed row lists."""
        for table, column, attributes in FILE_TABLES.values():
            listed = _listed(row.get(column))
            if new and not listed:
                continue
            known = (
                {}
                if new
                else dict(  # a new episode has no files yet
                    self.db.execute(
                        f"SELECT url, id FROM {table} WHERE episode_id = ?", [episode_id]
                    ).fetchall()
                )
            )
            for position, item in enumerate(listed):
                values = [position, *(item.get(a) for a in attributes)]
                if item["url"] in known:
                    self.db.execute(
                        f"UPDATE {table} SET position = ?, "
                        f"{', '.join(f'{a} = ?' for a in attributes)}, unlisted_at = NULL "
                        "WHERE id = ?",
                        [*values, known.pop(item["url"])],
                    )
                else:
                    self.db.execute(
                        f"INSERT INTO {table} (episode_id, url, position, {', '.join(attributes)}, "
                        "status, first_seen_at, next_check_at) VALUES (?, ?, ?, "
                        f"{', '.join('?' * len(attributes))}, 'pending', ?, ?)",
                        [episode_id, item["url"], *values, now, now],
                    )
            for file_id in known.values():
                self.db.execute(
                    f"UPDATE {table} SET unlisted_at = coalesce(unlisted_at, ?) WHERE id = ? "
                    "AND format IS NOT 'page'",  # the page's own transcript: the feed lists none
                    [now, file_id],
                )
        self._sync_simple_chapters(episode_id, row.get("simple_chapters"), now, new=new)

    def files_to_fetch(
        self,
        feed_id: int,
        now: str,
        kinds: Iterable[FileKind],
        *,
        everything: bool = False,
        failing: bool = False,
    ) -> list[FileTask]:
        """The feed's listed files due at ``now`` (with ``everything``, all of them; with
        ``failing``, also those whose last fetch failed, whatever their back-off)."""
        tasks: list[FileTask] = []
        for kind in kinds:
            table = FILE_TABLES[kind][0]
            rows = self.db.execute(
                "SELECT f.id, f.episode_id, e.feed_id, f.url, f.type, f.etag, f.last_modified, "
                "f.status, f.attempts, f.failures, f.fetched_at, e.published, e.first_seen_at, "
                f"f.document_id FROM {table} f JOIN episodes e ON e.id = f.episode_id "
                f"WHERE e.feed_id = ? AND {_qualified(FILES_DUE)} "
                "AND (f.next_check_at <= ? OR ? OR (? AND f.failures > 0)) "
                "ORDER BY f.episode_id, f.position",
                [feed_id, now, everything, failing],
            ).fetchall()
            tasks.extend(FileTask(kind, *row) for row in rows)
        return tasks

    def record_file(
        self,
        task: FileTask,
        *,
        status: str,
        now: str,
        records: Iterable[FetchRecord],
        next_check_at: str,
        error: str | None = None,
        body: KeptBody | None = None,
        parsed: Any = None,
        etag: str | None = None,
        last_modified: str | None = None,
    ) -> None:
        """Store one fetch of a file: ``ok`` or ``empty`` (a body, read), ``not_modified``
        (a 304) or ``failed`` (the last good rows, if any, stay current).
        """
        table = FILE_TABLES[task.kind][0]
        with self.transaction():
            if status in ("ok", "empty") and body is not None:
                self._keep_read_file(task, table, status, body, parsed, now)
                self.db.execute(
                    f"UPDATE {table} SET error = NULL, failures = 0, etag = ?, "
                    "last_modified = ? WHERE id = ?",
                    [etag, last_modified, task.file_id],
                )
            elif status == "not_modified":
                self.db.execute(
                    f"UPDATE {table} SET error = NULL, failures = 0 WHERE id = ?", [task.file_id]
                )
            else:
                self.db.execute(
                    f"UPDATE {table} SET error = ?, failures = failures + 1, status = "
                    "CASE WHEN status IN ('ok', 'empty') THEN status ELSE 'failed' END "
                    "WHERE id = ?",
                    [error, task.file_id],
                )
            self.db.execute(
                f"UPDATE {table} SET fetched_at = ?, attempts = attempts + 1, "
                "next_check_at = ? WHERE id = ?",
                [now, next_check_at, task.file_id],
            )
            self._log(records, feed_id=task.feed_id, episode_id=task.episode_id)

    def _keep_read_file(
        self, task: FileTask, table: str, status: str, body: KeptBody, parsed: Any, now: str
    ) -> None:
        """Keep ``body`` and make the rows it was read into current, the earlier ones a
        revision; unless they are the current rows already (only a VTT ``NOTE``, a cue id or
        the JSON's spacing changed): then the body is not kept either, as the body kept
        last reads into the same rows (issue #23).
        """
        if task.document_id is not None and self._same_file_rows(task, parsed):
            return
        document_id = self._keep_document(task.kind, body, now)
        if document_id == task.document_id:
            return
        self._replace_file_rows(task, document_id, parsed, now)
        self.db.execute(
            f"UPDATE {table} SET status = ?, document_id = ?, version_seen_at = ? WHERE id = ?",
            [status, document_id, now, task.file_id],
        )

    def _same_file_rows(self, task: FileTask, parsed: Any) -> bool:
        if task.kind == "transcript":
            return self._same_segments(task, parsed)
        return self._same_chapters(task, parsed)

    def _replace_file_rows(self, task: FileTask, document_id: int, parsed: Any, now: str) -> None:
        if task.kind == "transcript":
            self._replace_segments(task, document_id, parsed, now)
        else:
            self._replace_chapters(task, document_id, parsed, now)


def _listed(value: Any) -> Sequence[dict[str, Any]]:
    """The files a ``transcripts``/``chapters`` column lists: objects with a URL, once each."""
    seen: set[str] = set()
    out = []
    for item in json_objects(value):
        url = item.get("url")
        if isinstance(url, str) and url and url not in seen:
            seen.add(url)
            out.append(item)
    return out


def _qualified(condition: str) -> str:
    """:data:`FILES_DUE` with its columns on the file table's alias ``f``."""
    return condition.replace("unlisted_at", "f.unlisted_at").replace(
        "next_check_at", "f.next_check_at"
    )
