"""``/-/media/ab/cd/<sha256><ext>``: a stored payload, with byte ranges (#26).

A player seeks in an hour of audio by asking for a byte range; a whole-file answer makes it
download everything first (and Safari refuses to play at all). So one ``Range: bytes=…``
(a start, a start and an end, or a suffix) is answered with 206 and ``Content-Range``; a
range past the end with 416; several ranges, or anything else, with the whole file. The
file's name is its SHA-256, so that is its strong ETag (``If-None-Match`` → 304) and it may
be cached for ever. The file is streamed in chunks, never read whole.
"""

from __future__ import annotations

import mimetypes
import re
from pathlib import Path
from typing import Any

CHUNK = 1 << 16
_RANGE = re.compile(r"bytes=(\d*)-(\d*)")
UNSATISFIABLE = (-1, -1)


def byte_range(header: str | None, size: int) -> tuple[int, int] | None:
    """The first and last byte a ``Range`` header asks for within ``size`` bytes; None for
    the whole file (no header, several ranges, a unit other than bytes, nonsense);
    :data:`UNSATISFIABLE` for a range that starts past the end (or an empty file)."""
    match = _RANGE.fullmatch((header or "").strip())
    if match is None or not any(match.groups()):
        return None
    first, last = match.groups()
    if not first:  # a suffix: the last N bytes
        length = int(last)
        if length == 0 or size == 0:
            return UNSATISFIABLE
        return max(size - length, 0), size - 1
    start = int(first)
    end = min(int(last), size - 1) if last else size - 1
    if start >= size:
        return UNSATISFIABLE
    if end < start:
        return None  # invalid: RFC 9110 says to ignore it
    return start, end


async def send_payload(path: Path, sha256: str, request: Any, send: Any) -> None:
    """Answer ``request`` with the payload at ``path`` (whole, a range, 304, 404, 416)."""
    import aiofiles  # type: ignore[import-untyped]
    import aiofiles.os  # type: ignore[import-untyped]
    from datasette.utils.asgi import asgi_start

    try:
        size = (await aiofiles.os.stat(str(path))).st_size
    except OSError:
        await _send_empty(send, 404, {})
        return
    etag = f'"{sha256}"'
    headers = {
        "accept-ranges": "bytes",
        "etag": etag,
        "cache-control": "public, max-age=31536000, immutable",
    }
    if etag in request.headers.get("if-none-match", ""):
        await _send_empty(send, 304, headers)
        return
    wanted = byte_range(request.headers.get("range"), size)
    if wanted == UNSATISFIABLE:
        await _send_empty(send, 416, {**headers, "content-range": f"bytes */{size}"})
        return
    start, end = wanted or (0, size - 1)
    status = 206 if wanted else 200
    if wanted:
        headers["content-range"] = f"bytes {start}-{end}/{size}"
    headers["content-length"] = str(end - start + 1)
    content_type = mimetypes.guess_type(path.name)[0] or "application/octet-stream"
    await asgi_start(send, status, headers, content_type)
    left, ended = end - start + 1, False
    async with aiofiles.open(str(path), mode="rb") as f:
        await f.seek(start)
        while left > 0:
            chunk = await f.read(min(CHUNK, left))
            if not chunk:
                break  # the file shrank while being sent: end the body short
            left -= len(chunk)
            ended = left == 0
            await send({"type": "http.response.body", "body": chunk, "more_body": not ended})
    if not ended:
        await send({"type": "http.response.body", "body": b"", "more_body": False})


async def _send_empty(send: Any, status: int, headers: dict[str, str]) -> None:
    from datasette.utils.asgi import asgi_start

    await asgi_start(send, status, {**headers, "content-length": "0"}, "text/plain")
    await send({"type": "http.response.body", "body": b"", "more_body": False})
