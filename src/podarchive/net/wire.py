"""An HTTP hop as it went over the wire: its exchange as sent and received, its body decoded.

:func:`exchange_of` records one request and its response's head exactly (#27: the
request headers as sent, the client's defaults included; the status line; the response
headers in the server's order, case and duplicates, before any decoding) with the address
the connection went to. :class:`_Decoder` undoes a ``Content-Encoding`` with a cap on the
*decompressed* size, so a gzip bomb costs at most the cap. Used by :mod:`.fetch` and
:mod:`.download`.
"""

from __future__ import annotations

import re
import time
import zlib
from datetime import UTC, datetime

import httpx

from podarchive.core.clock import iso
from podarchive.core.errors import BodyTooLarge, FetchError, shorten
from podarchive.core.types import Exchange

_stamp: tuple[int, str] = (-1, "")  # the last second formatted, and its text


def now_stamp() -> str:
    """Now as :func:`podarchive.core.clock.now_iso` writes it (to the second), formatted once
    per second: a request's start stamp is taken twice per poll (#30; strftime is ~4 µs)."""
    global _stamp
    second = int(time.time())
    cached = _stamp  # one read: another thread may replace it meanwhile
    if cached[0] == second:
        return cached[1]
    text = iso(datetime.fromtimestamp(second, UTC))
    _stamp = (second, text)
    return text


def _format_size(limit: int) -> str:
    mib = limit / (1024 * 1024)
    return f"{mib:g} MiB" if mib >= 1 else f"{limit} bytes"


class _Decoder:
    """Content-Encoding decoder with a cap on the decompressed size."""

    def __init__(self, encoding: str, limit: int) -> None:
        encoding = encoding.strip().lower()
        if encoding in ("", "identity"):
            self._z = None
        elif encoding in ("gzip", "x-gzip", "deflate"):
            # 47 = auto-detect gzip or zlib header; plain deflate streams are retried raw.
            self._z = zlib.decompressobj(47)
        else:
            raise FetchError(f"unsupported content-encoding {shorten(encoding, 60)!r}")
        self._encoding = encoding
        self._limit = limit
        self._raw_deflate_tried = False

    def feed(self, chunk: bytes, size_so_far: int) -> bytes:
        if self._z is None:
            return chunk
        room = self._limit - size_so_far + 1
        try:
            out = self._z.decompress(chunk, room)
        except zlib.error as e:
            if self._encoding == "deflate" and not self._raw_deflate_tried:
                self._raw_deflate_tried = True
                self._z = zlib.decompressobj(-zlib.MAX_WBITS)
                return self.feed(chunk, size_so_far)
            reason = re.sub(r"^Error -?\d+ while \w+ data: ", "", str(e))
            raise FetchError(f"corrupt {self._encoding} body: {reason}") from e
        if self._z.unconsumed_tail:  # more output than the room left: over the cap
            raise BodyTooLarge(f"body over {_format_size(self._limit)} (decompressed)")
        return out

    def flush(self) -> bytes:
        if self._z is None:
            return b""
        if not self._z.eof and self._encoding != "deflate":
            raise FetchError(f"truncated {self._encoding} body")
        return self._z.flush()


def _gunzip_sniffed(body: bytes, limit: int) -> bytes:
    """Bodies that are gzip bytes without a Content-Encoding header (seen in the wild)."""
    decoder = _Decoder("gzip", limit)
    out = decoder.feed(body, 0)
    return out + decoder.flush()


def _text(value: bytes) -> str:
    return value.decode("latin-1")


def remote_ip(response: httpx.Response) -> str | None:
    """The address the response came from (None when the transport does not say)."""
    stream = response.extensions.get("network_stream")
    try:
        address = stream.get_extra_info("server_addr") if stream is not None else None
    except Exception:  # a transport's stream without the information
        return None
    if isinstance(address, tuple) and address:
        return str(address[0])
    return str(address) if isinstance(address, str) else None


def exchange_of(request: httpx.Request, response: httpx.Response, started_at: str) -> Exchange:
    """One hop as sent and received (#27): the request's headers as sent (the client's
    defaults included) and the response's status line and raw headers, before decoding."""
    return Exchange(
        method=request.method,
        url=str(request.url),
        request_headers=tuple((_text(n), _text(v)) for n, v in request.headers.raw),
        http_version=response.http_version,
        status=response.status_code,
        reason=response.reason_phrase,
        response_headers=tuple((_text(n), _text(v)) for n, v in response.headers.raw),
        remote_ip=remote_ip(response),
        started_at=started_at,
    )
