"""WARC/1.1 records written to a stream (#27): the only warcio user.

:class:`WarcWriter` writes one record per call from plain values (URLs, ISO 8601 dates,
header lists, a body as bytes or a readable binary file), one gzip member per record. Bodies
are streamed: a file is read in chunks, never whole. Payload digests are the caller's
SHA-256, written ``sha256:<hex>`` (what ``warcio check`` and pywb accept, and what the
archive stores); block digests are computed by warcio, as SHA-256 too.

:func:`replay_headers` is the one rule for a response whose stored body is the decoded one:
the record's HTTP head loses ``Content-Encoding`` and ``Transfer-Encoding`` (kept as
``X-Archive-Orig-…``) and says the body's true ``Content-Length``.
"""

from __future__ import annotations

import io
import uuid
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from http import HTTPStatus
from importlib.metadata import version
from typing import BinaryIO, Literal
from urllib.parse import urlsplit

from warcio.statusandheaders import StatusAndHeaders
from warcio.utils import Digester
from warcio.warcwriter import WARCWriter

from podarchive.core.errors import ExportError

#: the library that writes the records, as the warcinfo record names it
WRITER = f"warcio {version('warcio')}"
Headers = Sequence[tuple[str, str]]
#: The two revisit forms written: the same payload as an earlier record, or a 304.
RevisitKind = Literal["identical", "not-modified"]
PROFILES = {
    "identical": "http://netpreserve.org/warc/1.1/revisit/identical-payload-digest",
    "not-modified": "http://netpreserve.org/warc/1.1/revisit/server-not-modified",
}
#: Response headers that describe the bytes on the wire, not the stored (decoded) body.
WIRE_HEADERS = ("content-encoding", "transfer-encoding", "content-length", "content-range")
ORIG_PREFIX = "X-Archive-Orig-"
RECORD_CONTENT_TYPES = {
    "request": "application/http; msgtype=request",
    "response": "application/http; msgtype=response",
    "revisit": "application/http; msgtype=response",
}


def sha256_digest(hex_digest: str) -> str:
    """A WARC digest field for a SHA-256 given in hex: ``sha256:<hex>``."""
    return f"sha256:{hex_digest.lower()}"


def new_record_id() -> str:
    """A fresh ``WARC-Record-ID`` (``<urn:uuid:…>``)."""
    return f"<urn:uuid:{uuid.uuid4()}>"


def replay_headers(headers: Headers, body_length: int) -> list[tuple[str, str]]:
    """``headers`` as received, made true of the stored (decoded) body of ``body_length``
    bytes: ``Content-Encoding``, ``Transfer-Encoding``, ``Content-Length`` and ``Content-Range`` (a
    resumed download's 206 is stored whole) become
    ``X-Archive-Orig-<Name>`` (their order kept), and one ``Content-Length`` is added."""
    out: list[tuple[str, str]] = []
    for name, value in headers:
        if name.lower() in WIRE_HEADERS:
            out.append((ORIG_PREFIX + name, value))
        else:
            out.append((name, value))
    out.append(("Content-Length", str(body_length)))
    return out


@dataclass(frozen=True, slots=True)
class HttpHead:
    """An HTTP response's status line and headers, as a record writes them."""

    status: int
    reason: str
    http_version: str  # "HTTP/1.1", "HTTP/2"
    headers: Headers

    def status_line(self) -> str:
        reason = self.reason or _phrase(self.status)
        return f"{self.status} {reason}".rstrip()


def _phrase(status: int) -> str:
    try:
        return HTTPStatus(status).phrase
    except ValueError:
        return ""


class _Writer(WARCWriter):  # type: ignore[misc]
    """warcio's writer, its block digests SHA-256 rather than SHA-1."""

    @staticmethod
    def _create_digester() -> Digester:
        return Digester("sha256")


class WarcWriter:
    """Records to ``out`` (a binary stream), one gzip member each when ``gzip``."""

    def __init__(self, out: BinaryIO, *, gzip: bool = True) -> None:
        self._writer = _Writer(out, gzip=gzip, warc_version="WARC/1.1")
        self.records = 0

    def warcinfo(self, filename: str, date: str, fields: Iterable[tuple[str, str]]) -> str:
        """The file's ``warcinfo`` record: ``fields`` as ``application/warc-fields``."""
        body = "".join(f"{name}: {value}\r\n" for name, value in fields if value)
        return self._write(
            "warcinfo", "", date, {"WARC-Filename": filename}, io.BytesIO(body.encode()),
            content_type="application/warc-fields",
        )  # fmt: skip

    def response(
        self,
        url: str,
        date: str,
        head: HttpHead,
        body: BinaryIO,
        payload_sha256: str,
        *,
        ip: str | None = None,
        record_id: str | None = None,
    ) -> str:
        """A ``response`` record: ``head`` then ``body`` (read from its position to its end;
        ``head`` must say its length), with ``WARC-Payload-Digest`` from ``payload_sha256``."""
        fields = {"WARC-Payload-Digest": sha256_digest(payload_sha256)}
        if ip:
            fields["WARC-IP-Address"] = ip
        if record_id:
            fields["WARC-Record-ID"] = record_id
        return self._write("response", url, date, fields, body, http=_response_head(head))

    def request(
        self,
        url: str,
        date: str,
        method: str,
        http_version: str,
        headers: Headers,
        *,
        concurrent_to: str | None,
    ) -> str:
        """A ``request`` record (no body), ``WARC-Concurrent-To`` its response."""
        parts = urlsplit(url)
        target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        http = StatusAndHeaders(f"{method} {target} {http_version}", list(headers), protocol="")
        fields = {"WARC-Concurrent-To": concurrent_to} if concurrent_to else {}
        return self._write("request", url, date, fields, io.BytesIO(), http=http)

    def revisit(
        self,
        url: str,
        date: str,
        kind: RevisitKind,
        head: HttpHead,
        *,
        payload_sha256: str | None,
        refers_to: tuple[str, str, str] | None,
    ) -> str:
        """A ``revisit`` record (its HTTP head only) of the ``kind`` profile; ``refers_to``
        is the earlier record (record id, target URI, date) whose payload it repeats."""
        fields = {"WARC-Profile": PROFILES[kind]}
        if payload_sha256:
            fields["WARC-Payload-Digest"] = sha256_digest(payload_sha256)
        if refers_to is not None:
            fields["WARC-Refers-To"] = refers_to[0]
            fields["WARC-Refers-To-Target-URI"] = refers_to[1]
            fields["WARC-Refers-To-Date"] = refers_to[2]
        return self._write("revisit", url, date, fields, io.BytesIO(), http=_response_head(head))

    def resource(
        self,
        url: str,
        date: str,
        content_type: str,
        body: BinaryIO,
        *,
        payload_sha256: str | None = None,
        concurrent_to: str | None = None,
    ) -> str:
        """A ``resource`` record: a body kept without its HTTP exchange. Its block is its
        payload, so ``payload_sha256`` (when given) is both digests: no pass to hash it."""
        fields = {"WARC-Concurrent-To": concurrent_to} if concurrent_to else {}
        if payload_sha256:
            fields["WARC-Payload-Digest"] = sha256_digest(payload_sha256)
            fields["WARC-Block-Digest"] = sha256_digest(payload_sha256)
        return self._write("resource", url, date, fields, body, content_type=content_type)

    def metadata(
        self,
        url: str,
        date: str,
        content_type: str,
        body: bytes,
        *,
        refers_to: str | None = None,
        concurrent_to: str | None = None,
    ) -> str:
        """A ``metadata`` record about ``url`` (e.g. the parsed episode row as JSON)."""
        fields = {}
        if refers_to:
            fields["WARC-Refers-To"] = refers_to
        if concurrent_to:
            fields["WARC-Concurrent-To"] = concurrent_to
        return self._write(
            "metadata", url, date, fields, io.BytesIO(body), content_type=content_type
        )

    def _write(
        self,
        kind: str,
        url: str,
        date: str,
        fields: dict[str, str],
        body: BinaryIO,
        *,
        http: StatusAndHeaders | None = None,
        content_type: str | None = None,
    ) -> str:
        record_id = fields.pop("WARC-Record-ID", None) or new_record_id()
        warc_fields = {"WARC-Record-ID": record_id, "WARC-Date": date, **fields}
        length = _remaining(body)
        try:
            record = self._writer.create_warc_record(
                url, kind, payload=body, length=length, http_headers=http,
                warc_content_type=content_type or RECORD_CONTENT_TYPES.get(kind, ""),
                warc_headers_dict=warc_fields,
            )  # fmt: skip
            self._writer.write_record(record)
        except OSError as e:
            raise ExportError(f"cannot write the WARC: {e.strerror or e}") from e
        self.records += 1
        return record_id


def _response_head(head: HttpHead) -> StatusAndHeaders:
    return StatusAndHeaders(head.status_line(), list(head.headers), protocol=head.http_version)


def _remaining(body: BinaryIO) -> int:
    """The bytes from ``body``'s position to its end (it must be seekable)."""
    here = body.tell()
    end = body.seek(0, io.SEEK_END)
    body.seek(here)
    return end - here


__all__ = [
    "PROFILES",
    "WRITER",
    "HttpHead",
    "WarcWriter",
    "new_record_id",
    "replay_headers",
    "sha256_digest",
]
