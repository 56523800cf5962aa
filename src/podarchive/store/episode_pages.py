"""Episode pages: which are due (new, failed, or up for a re-check), and each fetch's outcome.

A page read with notes is archived: its raw body is kept (``documents``, ``page_bodies``)
and it is re-checked from ``page_recheck_at`` on (issue #12). A re-check that fails, or
finds no notes, keeps the archived notes and counts ``page_failures``; one whose body is
the one already kept, or reads into the current notes and links (only a CSRF token, a
timestamp or an ad changed: issue #23), writes only the page's bookkeeping.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

from podarchive.core.types import (
    FetchRecord,
    KeptBody,
    Link,
    PageHow,
    PageNotes,
    PageTask,
    PageTranscriptSegment,
)

from .base import Connection
from .page_transcripts import PAGE_FORMAT
from .schema import PAGE_RECHECK, PAGES_DUE

_TASK_COLUMNS = (
    "id, feed_id, page_url, page_etag, page_last_modified, page_status, page_attempts, "
    "page_fetched_at, published, first_seen_at, page_failures, page_document_id, notes_html"
)
_DUE_COLUMNS = _TASK_COLUMNS.index(", published")  # what the pages-due index holds


class _Unchanged(Exception):
    """A replayed page history equal to the stored one: its transaction is rolled back."""


class PagesMixin(Connection):
    """The page side of episodes: ``page_*`` columns, page links, page revisions and bodies."""

    if TYPE_CHECKING:  # what it uses of the other mixins (Archive combines them)
        # DocumentsMixin
        def _keep_document(self, kind: str, body: KeptBody, now: str) -> int: ...
        def document(self, document_id: int) -> KeptBody: ...
        # EpisodesMixin
        def _add_revision(
            self, episode_id: int, source: str, changed: Sequence[str], now: str
        ) -> None: ...
        def _drop_links(self, episode_id: int, source: str) -> None: ...
        def _replace_links(self, episode_id: int, source: str, links: Sequence[Link]) -> None: ...
        # FetchLogMixin
        def _log(
            self,
            records: Iterable[FetchRecord],
            *,
            feed_id: int | None,
            episode_id: int | None = None,
        ) -> None: ...
        # PageTranscriptsMixin
        def _store_page_transcript(
            self,
            episode_id: int,
            segments: Sequence[PageTranscriptSegment],
            document_id: int | None,
            now: str,
        ) -> None: ...

    def pages_to_fetch(self, feed_id: int) -> list[PageTask]:
        """Episode pages never fetched, or that failed or had no notes last time.

        Read from the partial index alone (schema 7): the episode's age, which the first
        re-check needs, is :meth:`page_age`'s, once a page is read.
        """
        rows = self.db.execute(
            f"SELECT {_TASK_COLUMNS[:_DUE_COLUMNS]} FROM episodes WHERE feed_id = ? "
            f"AND {PAGES_DUE} ORDER BY id",
            [feed_id],
        ).fetchall()
        return [PageTask(*row) for row in rows]

    def with_feed_notes(self, tasks: Sequence[PageTask]) -> list[PageTask]:
        """``tasks`` with each episode's feed notes, 500 episodes a query
        (:meth:`pages_to_fetch` reads its index alone, which does not hold them)."""
        ids = [t.episode_id for t in tasks]
        notes: dict[int, str | None] = {}
        for start in range(0, len(ids), 500):
            chunk = ids[start : start + 500]
            marks = ", ".join("?" * len(chunk))
            query = f"SELECT id, notes_html FROM episodes WHERE id IN ({marks})"
            notes.update(self.db.execute(query, chunk).fetchall())
        return [dataclasses.replace(t, feed_notes=notes.get(t.episode_id)) for t in tasks]

    def page_age(self, episode_id: int) -> tuple[str | None, str | None]:
        """The episode's (published, first_seen_at): what its page's re-checks follow."""
        row = self.db.execute(
            "SELECT published, first_seen_at FROM episodes WHERE id = ?", [episode_id]
        ).fetchone()
        return (row[0], row[1]) if row else (None, None)

    def pages_to_recheck(
        self, feed_id: int, now: str, *, everything: bool = False, failing: bool = False
    ) -> list[PageTask]:
        """Archived pages whose re-check is due at ``now`` (with ``everything``, all of them;
        with ``failing``, also those whose last re-check failed, whatever their back-off)."""
        rows = self.db.execute(
            f"SELECT {_TASK_COLUMNS} FROM episodes WHERE feed_id = ? AND {PAGE_RECHECK} "
            "AND (page_recheck_at <= ? OR ? OR (? AND page_failures > 0)) "
            "AND page_url IS NOT NULL AND page_status = 'ok' ORDER BY page_recheck_at, id",
            [feed_id, now, everything, failing],
        ).fetchall()
        return [PageTask(*row) for row in rows]

    def fetch_settings(self, feed_id: int) -> str | None:
        """The schedule settings the feed's pages and files were last fetched with (JSON)."""
        row = self.db.execute("SELECT fetch_settings FROM feeds WHERE id = ?", [feed_id]).fetchone()
        return row[0] if row else None

    def set_fetch_settings(self, feed_id: int, settings: str) -> None:
        with self.transaction():
            self.db.execute("UPDATE feeds SET fetch_settings = ? WHERE id = ?", [settings, feed_id])

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
        body: KeptBody | None = None,
        recheck_at: str | None = None,
        how: PageHow | None = None,
    ) -> None:
        """Store a page outcome: ``ok``, ``not_modified``, ``empty`` or ``failed``.

        ``body`` is the raw page, kept when it differs from the one kept last, unless its
        notes and links are the current ones (read from a body kept before); ``recheck_at``
        when the page is next due for a re-check (None: not re-checked, e.g. backfill);
        ``how`` the notes were found and the transcript the page shows (issue #24).
        """
        with self.transaction():
            if status == "ok" and self._same_notes(task, extractor, notes_html, links):
                body = None  # the body kept before reads into the same notes (reparse)
            document_id = self._keep_page_body(task, body, now)
            recheck = task.status == "ok"  # the page was archived: this is a re-check
            if status == "not_modified":
                self.db.execute(
                    "UPDATE episodes SET page_status = 'ok', page_error = NULL, page_failures = 0, "
                    "page_fetched_at = ?, page_recheck_at = coalesce(?, page_recheck_at) "
                    "WHERE id = ? AND page_notes_text IS NOT NULL",
                    [now, recheck_at, task.episode_id],
                )
            elif status == "ok":
                self._store_notes(task, now, extractor, notes_html, notes_text, links)
                self.db.execute(
                    "UPDATE episodes SET page_status = 'ok', page_error = NULL, page_failures = 0, "
                    "page_fetched_at = ?, page_attempts = page_attempts + 1, page_etag = ?, "
                    "page_last_modified = ?, page_recheck_at = ?, "
                    "page_document_id = coalesce(?, page_document_id) WHERE id = ?",
                    [now, etag, last_modified, recheck_at, document_id, task.episode_id],
                )
                if how is not None:
                    self._store_how(task.episode_id, how, document_id, now)
            elif recheck:
                self.db.execute(
                    "UPDATE episodes SET page_error = ?, page_fetched_at = ?, "
                    "page_attempts = page_attempts + 1, page_failures = page_failures + 1, "
                    "page_recheck_at = coalesce(?, page_recheck_at), "
                    "page_document_id = coalesce(?, page_document_id) WHERE id = ?",
                    [error, now, recheck_at, document_id, task.episode_id],
                )
            else:
                self.db.execute(
                    "UPDATE episodes SET page_status = ?, page_error = ?, page_fetched_at = ?, "
                    "page_attempts = page_attempts + 1, "
                    "page_document_id = coalesce(?, page_document_id) WHERE id = ?",
                    [status, error, now, document_id, task.episode_id],
                )
            self._log(records, feed_id=task.feed_id, episode_id=task.episode_id)

    def _store_how(self, episode_id: int, how: PageHow, document_id: int | None, now: str) -> None:
        """Record how the page's notes were found, and the transcript the page shows."""
        self.db.execute(
            "UPDATE episodes SET page_method = ?, page_evidence = ?, page_confidence = ? "
            "WHERE id = ?",
            [how.method or None, how.evidence or None, how.confidence, episode_id],
        )
        if how.transcript:
            self._store_page_transcript(episode_id, how.transcript, document_id, now)

    def _same_notes(
        self, task: PageTask, extractor: str | None, notes_html: str | None, links: Sequence[Link]
    ) -> bool:
        """Whether these are the page's current notes and links, and a body of it is kept."""
        if task.document_id is None:
            return False
        current = self.db.execute(
            "SELECT page_notes_html, page_extractor FROM episodes WHERE id = ?", [task.episode_id]
        ).fetchone()
        if current != (notes_html, extractor):
            return False
        stored = self.db.execute(
            "SELECT position, url, text FROM links WHERE episode_id = ? AND source = 'page' "
            "AND revision_id IS NULL ORDER BY position",
            [task.episode_id],
        ).fetchall()
        return stored == [(link.position, link.url, link.text) for link in links]

    def _keep_page_body(self, task: PageTask, body: KeptBody | None, now: str) -> int | None:
        """Keep ``body`` and note when the page served it, unless it is the one kept last."""
        if body is None:
            return None
        document_id = self._keep_document("page", body, now)
        last = self.db.execute(
            "SELECT document_id FROM page_bodies WHERE episode_id = ? "
            "ORDER BY seen_at DESC, id DESC LIMIT 1",
            [task.episode_id],
        ).fetchone()
        if last is None or last[0] != document_id:
            self.db.execute(
                "INSERT INTO page_bodies (episode_id, document_id, seen_at) VALUES (?, ?, ?)",
                [task.episode_id, document_id, now],
            )
        return document_id

    def _store_notes(
        self,
        task: PageTask,
        now: str,
        extractor: str | None,
        notes_html: str | None,
        notes_text: str | None,
        links: Sequence[Link],
    ) -> None:
        """Set the page notes and links, keeping changed ones as a revision; unchanged notes
        are not rewritten (an UPDATE of ``page_notes_text`` re-indexes the episode's text).
        """
        before = self.db.execute(
            "SELECT page_notes_html, page_extractor FROM episodes WHERE id = ?", [task.episode_id]
        ).fetchone()
        if before is not None and before[0] == notes_html and before[1] == extractor:
            return
        renew = before is None or before[0] != notes_html
        if before is not None and before[0] is not None and renew:
            self._add_revision(task.episode_id, "page", ["page_notes"], now)
        self.db.execute(
            "UPDATE episodes SET page_extractor = ?, page_notes_html = ?, page_notes_text = ?, "
            "page_version_seen_at = CASE WHEN ? THEN ? ELSE page_version_seen_at END WHERE id = ?",
            [extractor, notes_html, notes_text, renew, now, task.episode_id],
        )
        self._replace_links(task.episode_id, "page", links)

    def page_observations(self, episode_id: int) -> list[tuple[str, KeptBody]]:
        """Every distinct body the episode's page served, in order: (seen_at, body)."""
        rows = self.db.execute(
            "SELECT seen_at, document_id FROM page_bodies WHERE episode_id = ? "
            "ORDER BY seen_at, id",
            [episode_id],
        ).fetchall()
        return [(seen_at, self.document(document_id)) for seen_at, document_id in rows]

    def episodes_with_page_bodies(self, feed_id: int) -> list[tuple[int, str | None]]:
        """The feed's episodes whose page bodies are kept (fetched by schema 8 or later),
        each with its notes in the feed (HTML): (episode id, feed notes)."""
        rows = self.db.execute(
            "SELECT DISTINCT b.episode_id, e.notes_html FROM page_bodies b JOIN episodes e "
            "ON e.id = b.episode_id WHERE e.feed_id = ? ORDER BY b.episode_id",
            [feed_id],
        )
        return [(int(r[0]), r[1]) for r in rows]

    def rebuild_page_history(
        self, episode_id: int, versions: Sequence[tuple[str, PageNotes]]
    ) -> bool:
        """Replace the episode's page notes, page links and page revisions with ``versions``
        ((seen since, notes), oldest first: what re-reading its kept bodies gave), in one
        transaction. No version leaves the page without notes. True when anything changed.
        """
        try:
            with self.transaction():
                before = self._page_history(episode_id)
                old = [r for (r,) in self.db.execute(
                    "SELECT id FROM episode_revisions WHERE episode_id = ? AND source = 'page'",
                    [episode_id],
                )]  # fmt: skip
                marks = ", ".join("?" * len(old))
                if old:
                    self.db.execute(f"DELETE FROM links WHERE revision_id IN ({marks})", old)
                    self.db.execute(f"DELETE FROM episode_revisions WHERE id IN ({marks})", old)
                self.db.execute(
                    "UPDATE episodes SET page_notes_html = NULL, page_notes_text = NULL, "
                    "page_extractor = NULL, page_version_seen_at = NULL, page_method = NULL, "
                    "page_evidence = NULL, page_confidence = NULL WHERE id = ?",
                    [episode_id],
                )
                self._drop_links(episode_id, "page")
                task = PageTask(episode_id, 0, "", None, None)
                for seen_at, notes in versions:
                    self._store_notes(
                        task, seen_at, notes.extractor, notes.html, notes.text, notes.links
                    )
                if versions:  # the current notes say how they were found
                    seen_at, notes = versions[-1]
                    self._store_how(episode_id, PageHow.of(notes), None, seen_at)
                self.db.execute(
                    "UPDATE episodes SET page_status = CASE WHEN page_notes_text IS NULL "
                    "THEN 'empty' ELSE 'ok' END WHERE id = ? AND page_status IS NOT NULL",
                    [episode_id],
                )
                if self._page_history(episode_id) == before:
                    raise _Unchanged  # roll back: not one row rewritten
        except _Unchanged:
            return False
        return True

    def _page_history(self, episode_id: int) -> tuple[Any, ...]:
        return (
            self.db.execute(
                "SELECT page_notes_html, page_extractor, page_version_seen_at, page_status, "
                "page_method, page_evidence, page_confidence FROM episodes WHERE id = ?",
                [episode_id],
            ).fetchone(),
            self.db.execute(
                "SELECT seen_from, seen_until, page_notes_html FROM episode_revisions "
                "WHERE episode_id = ? AND source = 'page' ORDER BY seen_until",
                [episode_id],
            ).fetchall(),
            self.db.execute(
                "SELECT l.position, l.url, l.text, r.seen_until FROM links l "
                "LEFT JOIN episode_revisions r ON r.id = l.revision_id "
                "WHERE l.episode_id = ? AND l.source = 'page' ORDER BY r.seen_until, l.position",
                [episode_id],
            ).fetchall(),
            self.db.execute(
                "SELECT s.revision_id, s.position, s.start, s.speaker, s.text "
                "FROM transcript_segments s JOIN transcripts t ON t.id = s.transcript_id "
                "WHERE t.episode_id = ? AND t.format = ? ORDER BY s.id",
                [episode_id, PAGE_FORMAT],
            ).fetchall(),
        )

    def page_bodies_cover_history(self, episode_id: int) -> bool:
        """Whether the kept bodies go back to the episode's first page notes (a page archived
        before schema 8 has notes and revisions older than any kept body: replaying only the
        kept bodies would lose them).
        """
        first_body, first_revision, current = self.db.execute(
            "SELECT (SELECT min(seen_at) FROM page_bodies WHERE episode_id = :id), "
            "(SELECT min(seen_from) FROM episode_revisions WHERE episode_id = :id "
            "AND source = 'page'), page_version_seen_at FROM episodes WHERE id = :id",
            {"id": episode_id},
        ).fetchone()
        stamps = [s for s in (first_revision, current) if s is not None]
        return first_body is not None and all(first_body <= s for s in stamps)
