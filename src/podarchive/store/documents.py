"""Raw bodies of what episodes point to (pages, transcripts, chapters files), kept once each.

``documents`` holds each distinct body, compressed, under its SHA-256; ``page_bodies`` says
when an episode's page served one (transcript and chapters files point at theirs, and their
revisions at the earlier ones). The feed's own bodies live in ``snapshots`` (delta-coded).
"""

from __future__ import annotations

import zlib

from podarchive.core.types import KeptBody

from .base import Connection


class DocumentsMixin(Connection):
    """Keeps raw bodies and gives back their exact bytes (``reparse``)."""

    def _keep_document(self, kind: str, body: KeptBody, now: str) -> int:
        """The id of ``body``'s document, stored now unless an identical body already is."""
        found = self.db.execute("SELECT id FROM documents WHERE hash = ?", [body.hash]).fetchone()
        if found is not None:
            return int(found[0])
        cursor = self.db.execute(
            "INSERT INTO documents (hash, kind, url, content_type, size, body, first_fetched_at) "
            "VALUES (?, ?, ?, ?, ?, ?, ?)",
            [body.hash, kind, body.url, body.content_type, len(body.body),
             zlib.compress(body.body, 6), now],
        )  # fmt: skip
        assert cursor.lastrowid is not None
        return cursor.lastrowid

    def document(self, document_id: int) -> KeptBody:
        """The exact bytes of a kept body, with the URL and type it was first fetched with."""
        digest, url, content_type, body = self.db.execute(
            "SELECT hash, url, content_type, body FROM documents WHERE id = ?", [document_id]
        ).fetchone()
        return KeptBody(zlib.decompress(body), digest, url, content_type)
