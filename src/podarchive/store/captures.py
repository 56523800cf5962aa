"""Provenance kept at capture (#27): every HTTP exchange behind a stored body, as sent and received.

``captures`` holds one row per exchange (a redirect hop, a 304, the answer whose body was
stored): the request line and headers as sent, the status line and headers as received,
the remote address, when, and the software that fetched it. Header lists are kept once each
in ``header_sets`` (under the SHA-256 of their canonical JSON), with the values that change on
every response (:data:`VOLATILE`: ``Date``, ``Age``, request and trace ids, cookies…) left
out as nulls and kept in the capture's own ``response_values`` (a JSON list, in order). So a
feed polled every hour adds one small row and, most hours, no header set at all, never a copy
of its body: the body stays where it is stored today, and the capture points at it. A
capture's headers read back are the list as received, order, case and duplicates kept.

How a capture's body relates to the stored bytes: ``body_sha256`` is the SHA-256 (hex) of
the body *as stored*, i.e. after any ``Content-Encoding`` was undone (the encoding it came
with is ``content_encoding``, and in the response headers); :meth:`capture_body` returns
exactly those bytes (a snapshot stored as a delta is rebuilt first), so
``sha256(capture_body(ref)) == body_sha256`` always. Where the body is:

- ``("snapshot", id)``: a feed (or backfill archive document) body in ``snapshots``, whose
  ``hash`` is that same SHA-256;
- ``("document", id)``: a page, transcript or chapters body in ``documents`` (``hash``, the
  same SHA-256);
- ``("media", sha256)``: a media payload, the file ``<media folder>/ab/cd/<sha256><ext>``
  (:class:`~podarchive.store.media_files.MediaFolder.path_of`, with ``Capture.media_ext``),
  streamed by whoever exports it; never read into memory here.

Bodies stored before #27 have no capture: :meth:`uncaptured_bodies` lists them with what is
known of how they were fetched (URL, when, content type, validators, a media fetch's headers).
"""

from __future__ import annotations

import functools
import hashlib
import json
from collections.abc import Collection, Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

from podarchive import __version__
from podarchive.core.errors import StorageError
from podarchive.core.types import (
    BodyRef,
    Capture,
    CaptureKind,
    Exchange,
    KeptBody,
    UncapturedBody,
)

from .base import Connection

if TYPE_CHECKING:
    from .sqlite_db import ArchiveDb

SOFTWARE = f"podarchive/{__version__}"
CAPTURE_KINDS: tuple[CaptureKind, ...] = (
    "feed", "page", "transcript", "chapters", "media", "backfill"
)  # fmt: skip
#: where each kind's body is stored: the table and the column that names it by SHA-256
_BODY_HOME = {
    "feed": ("snapshot", "SELECT id FROM snapshots WHERE hash = ?"),
    "backfill": ("snapshot", "SELECT id FROM snapshots WHERE hash = ?"),
    "page": ("document", "SELECT id FROM documents WHERE hash = ?"),
    "transcript": ("document", "SELECT id FROM documents WHERE hash = ?"),
    "chapters": ("document", "SELECT id FROM documents WHERE hash = ?"),
    "media": ("media", "SELECT sha256 FROM media_payloads WHERE sha256 = ?"),
}
_HEADER_CACHE = 4096  # header sets kept decoded while captures are read
_CANONICAL_CACHE = 512  # header lists kept encoded while captures are written (#30)
#: Response headers whose values differ from one response to the next though nothing else
#: does: kept per capture (``response_values``), out of the shared header set.
VOLATILE = frozenset(
    {
        "date", "age", "expires", "set-cookie", "cf-ray", "x-request-id", "x-amz-cf-id",
        "x-amz-request-id", "x-amz-id-2", "x-amzn-requestid", "x-amzn-trace-id", "x-served-by",
        "x-timer", "x-cache-hits", "x-varnish", "x-runtime", "server-timing", "x-trace-id",
        "traceparent", "x-cloud-trace-context", "fly-request-id", "x-vercel-id", "x-request-start",
    }
)  # fmt: skip
_SELECT = (
    "SELECT c.id, c.kind, c.feed_id, c.episode_id, c.method, c.url, c.http_version, c.status, "
    "c.reason, c.request_headers_id, c.response_headers_id, c.remote_ip, c.started_at, "
    "c.body_sha256, c.body_size, c.snapshot_id, c.document_id, c.payload_sha256, c.software, "
    "p.ext, c.response_values "
    "FROM captures c LEFT JOIN media_payloads p ON p.sha256 = c.payload_sha256"
)
Headers = tuple[tuple[str, str], ...]
#: a header set as stored: a volatile header's value is None (its value is the capture's)
Template = tuple[tuple[str, str | None], ...]


def split_volatile(headers: Iterable[tuple[str, str]]) -> tuple[Template, list[str]]:
    """A response's headers as a shareable template (each :data:`VOLATILE` value None) and
    those values in order; :func:`join_volatile` puts them back."""
    template: list[tuple[str, str | None]] = []
    values: list[str] = []
    for name, value in headers:
        if name.lower() in VOLATILE:
            template.append((name, None))
            values.append(value)
        else:
            template.append((name, value))
    return tuple(template), values


def join_volatile(template: Template, values: Sequence[str]) -> Headers:
    """The headers :func:`split_volatile` split (a missing value reads as "")."""
    left = iter(values)
    return tuple((n, v if v is not None else next(left, "")) for n, v in template)


def canonical_headers(headers: Iterable[tuple[str, str | None]]) -> tuple[str, bytes]:
    """A header list's canonical JSON (its order, case and duplicates kept) and its SHA-256
    (the 32 bytes, as ``header_sets.sha256`` keeps it: half the hex's size, index too).

    A tuple's is remembered (:func:`_canonical_of`): the same request headers and response
    template come back at every poll of a feed (#30)."""
    if isinstance(headers, tuple):
        try:
            return _canonical_of(headers)
        except TypeError:  # pairs that are not tuples (unhashable): encoded each time
            pass
    return _canonical(headers)


def _canonical(headers: Iterable[tuple[str, str | None]]) -> tuple[str, bytes]:
    text = json.dumps([[n, v] for n, v in headers], ensure_ascii=False, separators=(",", ":"))
    return text, hashlib.sha256(text.encode("utf-8", "surrogatepass")).digest()


#: a pure function of its (hashable) argument: nothing to invalidate; bounded
_canonical_of = functools.lru_cache(maxsize=_CANONICAL_CACHE)(_canonical)


def _filters(
    feed_ids: Collection[int] | None, since: str | None, kinds: Collection[str] | None
) -> tuple[str, list[Any]]:
    clauses: list[str] = []
    params: list[Any] = []
    if feed_ids is not None:
        clauses.append(f"c.feed_id IN ({', '.join('?' * len(feed_ids))})")
        params.extend(feed_ids)
    if since is not None:
        clauses.append("c.started_at >= ?")
        params.append(since)
    if kinds is not None:
        clauses.append(f"c.kind IN ({', '.join('?' * len(kinds))})")
        params.extend(kinds)
    return (" WHERE " + " AND ".join(clauses)) if clauses else "", params


def _ref(snapshot_id: int | None, document_id: int | None, payload: str | None) -> BodyRef | None:
    if snapshot_id is not None:
        return ("snapshot", int(snapshot_id))
    if document_id is not None:
        return ("document", int(document_id))
    return ("media", str(payload)) if payload is not None else None


def _content_type(headers: Headers) -> str | None:
    for name, value in headers:
        if name.lower() == "content-type":
            return value
    return None


def _insert_capture_sql(kind: str) -> str:
    """A capture's INSERT that finds its header sets (by SHA-256) and its body's home."""
    home, body_sql = _BODY_HOME[kind]
    refs = {"snapshot": "NULL", "document": "NULL", "media": "NULL"}
    refs[home] = f"({body_sql})"
    headers = "(SELECT id FROM header_sets WHERE sha256 = ?)"
    return (
        "INSERT INTO captures (kind, feed_id, episode_id, method, url, http_version, status, "
        "reason, request_headers_id, response_headers_id, content_encoding, remote_ip, "
        "started_at, body_sha256, body_size, software, response_values, snapshot_id, "
        "document_id, payload_sha256) "
        f"VALUES (?, ?, ?, ?, ?, ?, ?, ?, {headers}, {headers}, ?, ?, ?, ?, ?, ?, ?, "
        f"{refs['snapshot']}, {refs['document']}, {refs['media']})"
    )


class CapturesMixin(Connection):
    """Records each stored body's exchanges and reads them back for an export."""

    if TYPE_CHECKING:  # what it uses of the other mixins (Archive combines them)
        # SnapshotsMixin
        def snapshot_body(self, snapshot_id: int) -> bytes: ...
        # DocumentsMixin
        def document(self, document_id: int) -> KeptBody: ...

    @property
    def has_captures(self) -> bool:
        if getattr(self, "_captures_known", False):  # versions only grow: asked once (#30)
            return True
        self._captures_known = self.schema_version >= 15
        return self._captures_known

    # writes -------------------------------------------------------------------------------

    def record_captures(
        self,
        exchanges: Sequence[Exchange],
        *,
        kind: CaptureKind,
        feed_id: int | None,
        episode_id: int | None = None,
        body_sha256: str | None = None,
        body_size: int | None = None,
    ) -> list[int]:
        """Record one fetch's exchanges (every hop, in order); returns the new captures' ids.

        The body (``body_sha256``, the SHA-256 of the bytes as stored, and its size) belongs
        to the last exchange when that is a 2xx; it is linked to where a body with that
        digest is kept for ``kind`` (an unchanged or deduplicated body: the existing
        snapshot, document or payload). Call it in the transaction that stored the body.
        Two statements for a one-exchange fetch (#30): the header sets (kept if new), then
        the capture, which finds its header sets and its body's home itself.
        """
        if not exchanges or not self.has_captures:
            return []
        with self.transaction():
            return self._insert_captures(
                exchanges, kind, feed_id, episode_id, body_sha256, body_size
            )

    def _insert_captures(
        self,
        exchanges: Sequence[Exchange],
        kind: CaptureKind,
        feed_id: int | None,
        episode_id: int | None,
        body_sha256: str | None,
        body_size: int | None,
    ) -> list[int]:
        """:meth:`record_captures` inside the caller's transaction (no savepoint)."""
        if not exchanges or not self.has_captures:
            return []
        last = len(exchanges) - 1
        rows: list[list[Any]] = []
        sets: dict[bytes, str] = {}
        for i, exchange in enumerate(exchanges):
            with_body = i == last and 200 <= exchange.status < 300 and body_sha256 is not None
            template, values = split_volatile(exchange.response_headers)
            request_text, request_digest = canonical_headers(exchange.request_headers)
            response_text, response_digest = canonical_headers(template)
            sets.setdefault(request_digest, request_text)
            sets.setdefault(response_digest, response_text)
            rows.append(
                [
                    kind, feed_id, episode_id, exchange.method, exchange.url,
                    exchange.http_version, exchange.status, exchange.reason, request_digest,
                    response_digest, exchange.content_encoding, exchange.remote_ip,
                    exchange.started_at, body_sha256 if with_body else None,
                    body_size if with_body else None, SOFTWARE,
                    json.dumps(values, ensure_ascii=False) if values else None,
                    body_sha256 if with_body else None,
                ]
            )  # fmt: skip
        self.db.execute(
            "INSERT INTO header_sets (sha256, headers) VALUES "
            + ", ".join(["(?, ?)"] * len(sets))
            + " ON CONFLICT(sha256) DO NOTHING",
            [value for pair in sets.items() for value in pair],
        )
        sql = _insert_capture_sql(kind)
        return [int(self.db.execute(sql, row).lastrowid or 0) for row in rows]

    # reads --------------------------------------------------------------------------------

    def captures(
        self,
        feed_ids: Collection[int] | None = None,
        since: str | None = None,
        kinds: Collection[str] | None = None,
    ) -> Iterator[Capture]:
        """The captures of ``feed_ids`` (None: every feed) started at or after ``since``, of
        ``kinds`` (None: all), ordered by ``started_at`` then id. Rows are read in chunks; a
        header set is decoded once however many captures share it."""
        if not self.has_captures:
            return
        where, params = _filters(feed_ids, since, kinds)
        cursor = self.db.execute(f"{_SELECT}{where} ORDER BY c.started_at, c.id", params)
        decoded: dict[int, Template] = {}
        while rows := cursor.fetchmany(256):
            for row in rows:
                yield self._capture(row, decoded)

    def _capture(self, row: Sequence[Any], decoded: dict[int, Template]) -> Capture:
        (cid, kind, feed_id, episode_id, method, url, version, status, reason, request_id,
         response_id, remote_ip, started_at, sha, size, snapshot_id, document_id, payload,
         software, ext, values) = row  # fmt: skip
        response = join_volatile(self._headers(response_id, decoded), json.loads(values or "[]"))
        exchange = Exchange(
            method, url, join_volatile(self._headers(request_id, decoded), ()), version,
            status, reason or "", response, remote_ip, started_at,
        )  # fmt: skip
        return Capture(
            cid, kind, feed_id, episode_id, exchange, sha, size,
            _ref(snapshot_id, document_id, payload), software,
            content_type=_content_type(response), media_ext=ext if payload else None,
        )  # fmt: skip

    def _headers(self, set_id: int | None, decoded: dict[int, Template]) -> Template:
        if set_id is None:
            return ()
        headers = decoded.get(set_id)
        if headers is None:
            if len(decoded) >= _HEADER_CACHE:
                decoded.clear()
            (text,) = self.db.execute(
                "SELECT headers FROM header_sets WHERE id = ?", [set_id]
            ).fetchone()
            headers = decoded[set_id] = tuple(
                (str(n), None if v is None else str(v)) for n, v in json.loads(text)
            )
        return headers

    def capture_body(self, body_ref: BodyRef) -> bytes:
        """The exact stored bytes of a snapshot or document body (a delta rebuilt whole):
        their SHA-256 is the capture's ``body_sha256``. A media body is a file in the media
        folder (``MediaFolder.path_of(sha256, ext)``): stream it from there."""
        where, key = body_ref
        if where == "snapshot":
            return self.snapshot_body(int(key))
        if where == "document":
            return self.document(int(key)).body
        raise StorageError(f"a {where} body is not kept in the archive file: {key}")

    def uncaptured_bodies(
        self, feed_ids: Collection[int] | None = None, since: str | None = None
    ) -> Iterator[UncapturedBody]:
        """Bodies stored before #27 (no capture points at them), oldest first: each with its
        URL, kind, when it was first fetched, its content type and the headers known for it
        (validators kept beside it; a media fetch's ``headers``). ``sha256`` is the SHA-256
        of exactly what :meth:`capture_body` returns for ``body_ref`` (media: the file)."""
        bodies = _uncaptured(self.db, self.has_captures)
        wanted = None if feed_ids is None else set(feed_ids)
        for body in bodies:
            if wanted is not None and body.feed_id not in wanted:
                continue
            if since is not None and body.fetched_at < since:
                continue
            yield body


# bodies stored before #27 ------------------------------------------------------------------


def _columns(db: ArchiveDb, table: str) -> set[str]:
    return {str(row[1]) for row in db.execute(f"PRAGMA table_info([{table}])").fetchall()}


def _uncaptured(db: ArchiveDb, has_captures: bool) -> list[UncapturedBody]:
    """Every body no capture points at, oldest first (only light columns: no body read)."""
    bodies = [*_old_snapshots(db, has_captures), *_old_documents(db, has_captures)]
    bodies.extend(_old_media(db, has_captures))
    bodies.sort(key=lambda b: (b.fetched_at, b.kind, str(b.body_ref[1])))
    return bodies


def _validators(content_type: str | None, etag: Any, last_modified: Any) -> Headers:
    known = (("content-type", content_type), ("etag", etag), ("last-modified", last_modified))
    return tuple((name, str(value)) for name, value in known if value)


def _old_snapshots(db: ArchiveDb, has_captures: bool) -> Iterator[UncapturedBody]:
    if "hash" not in _columns(db, "snapshots"):
        return
    bodies = _columns(db, "feed_bodies")
    kind = "b.kind" if "kind" in bodies else "'feed'"
    kinds = dict(
        db.execute(
            f"SELECT b.snapshot_id, {kind} FROM feed_bodies b JOIN (SELECT min(id) AS id FROM "
            "feed_bodies GROUP BY snapshot_id) f ON f.id = b.id"
        ).fetchall()
    )
    feeds = {
        (int(i), str(h)): (e, m)
        for i, h, e, m in db.execute(
            "SELECT id, content_hash, etag, last_modified FROM feeds WHERE content_hash NOT NULL"
        )
    }
    walked = {}
    if "etag" in _columns(db, "backfill_pages"):
        rows = db.execute("SELECT feed_id, url, etag, last_modified FROM backfill_pages")
        walked = {(int(f), str(u)): (e, m) for f, u, e, m in rows}
    unseen = " WHERE NOT EXISTS (SELECT 1 FROM captures c WHERE c.snapshot_id = s.id)"
    rows = db.execute(
        "SELECT s.id, s.feed_id, s.hash, s.size, s.url, s.content_type, s.first_fetched_at "
        f"FROM snapshots s{unseen if has_captures else ''}"
    )
    for sid, feed_id, digest, size, url, content_type, at in rows:
        backfill = kinds.get(sid) == "archive"
        known = walked.get((feed_id, url)) if backfill else feeds.get((feed_id, digest))
        yield UncapturedBody(
            "backfill" if backfill else "feed", feed_id, None, url or "", at, content_type,
            _validators(content_type, *(known or (None, None))), digest, int(size or 0),
            ("snapshot", int(sid)),
        )  # fmt: skip


#: where an episode points at a document, with the validators it was last served with
_DOCUMENT_OWNERS = (
    ("episodes", "SELECT page_document_id, id, feed_id, page_etag, page_last_modified "
     "FROM episodes WHERE page_document_id IS NOT NULL", "page_document_id"),
    ("transcripts", "SELECT t.document_id, t.episode_id, e.feed_id, t.etag, t.last_modified "
     "FROM transcripts t JOIN episodes e ON e.id = t.episode_id "
     "WHERE t.document_id IS NOT NULL", "etag"),
    ("chapter_files", "SELECT t.document_id, t.episode_id, e.feed_id, t.etag, t.last_modified "
     "FROM chapter_files t JOIN episodes e ON e.id = t.episode_id "
     "WHERE t.document_id IS NOT NULL", "etag"),
    *(
        (table, f"SELECT b.document_id, b.episode_id, e.feed_id, NULL, NULL FROM {table} b "
         "JOIN episodes e ON e.id = b.episode_id WHERE b.document_id IS NOT NULL", "document_id")
        for table in ("page_bodies", "transcript_revisions", "chapter_revisions")
    ),
)  # fmt: skip


def _document_owners(db: ArchiveDb) -> dict[int, tuple[Any, ...]]:
    owners: dict[int, tuple[Any, ...]] = {}
    for table, sql, column in _DOCUMENT_OWNERS:
        if column not in _columns(db, table):
            continue
        for document_id, *owner in db.execute(sql):
            owners.setdefault(int(document_id), tuple(owner))
    return owners


def _old_documents(db: ArchiveDb, has_captures: bool) -> Iterator[UncapturedBody]:
    if "hash" not in _columns(db, "documents"):
        return
    owners = _document_owners(db)
    unseen = " WHERE NOT EXISTS (SELECT 1 FROM captures c WHERE c.document_id = d.id)"
    rows = db.execute(
        "SELECT d.id, d.kind, d.hash, d.size, d.url, d.content_type, d.first_fetched_at "
        f"FROM documents d{unseen if has_captures else ''}"
    )
    for did, kind, digest, size, url, content_type, at in rows:
        episode_id, feed_id, etag, modified = owners.get(int(did), (None, None, None, None))
        yield UncapturedBody(
            kind, feed_id, episode_id, url or "", at, content_type,
            _validators(content_type, etag, modified), digest, int(size or 0),
            ("document", int(did)),
        )  # fmt: skip


def _old_media(db: ArchiveDb, has_captures: bool) -> Iterator[UncapturedBody]:
    if "sha256" not in _columns(db, "media_payloads"):
        return
    fetches: dict[str, tuple[Any, ...]] = {}
    for sha, *fetch in db.execute(
        "SELECT f.sha256, f.episode_id, e.feed_id, coalesce(f.final_url, f.url), f.headers "
        "FROM media_fetches f JOIN episodes e ON e.id = f.episode_id "
        "WHERE f.sha256 IS NOT NULL ORDER BY f.fetched_at, f.id"
    ):
        fetches.setdefault(str(sha), tuple(fetch))
    unseen = " WHERE NOT EXISTS (SELECT 1 FROM captures c WHERE c.payload_sha256 = p.sha256)"
    rows = db.execute(
        "SELECT p.sha256, p.size, p.content_type, p.ext, p.first_seen_at "
        f"FROM media_payloads p{unseen if has_captures else ''}"
    )
    for sha, size, content_type, ext, at in rows:
        episode_id, feed_id, url, headers = fetches.get(str(sha), (None, None, "", None))
        known = _media_headers(headers) or _validators(content_type, None, None)
        yield UncapturedBody(
            "media", feed_id, episode_id, url or "", at, content_type, known, sha,
            int(size or 0), ("media", str(sha)), media_ext=ext or "",
        )  # fmt: skip


def _media_headers(text: str | None) -> Headers:
    try:
        values = json.loads(text) if text else {}
    except ValueError:
        return ()
    if not isinstance(values, dict):
        return ()
    return tuple((str(n), str(v)) for n, v in values.items())
