"""A real HTTP server on 127.0.0.1 for tests: routes, conditional GET, gzip, a request log.

Routes map a path to a :class:`Reply` (static, with automatic ETag/Last-Modified handling
and optional gzip) or to a callable that writes whatever it likes to the socket, for
broken and hostile servers.
"""

from __future__ import annotations

import gzip
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

FIXTURES = Path(__file__).parent / "fixtures"


@dataclass
class Reply:
    body: bytes = b""
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    etag: str | None = None
    last_modified: str | None = None
    gzip: bool = False
    content_type: str = "application/xml; charset=utf-8"


@dataclass(frozen=True)
class Request:
    method: str
    path: str
    headers: dict[str, str]
    port: int = 0  # the client's port: one per TCP connection


Handler = Callable[[BaseHTTPRequestHandler], None]


class _QuietServer(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # broken connections are what many tests are about


class LoopbackSite:
    """Start with ``with LoopbackSite() as site:``; ``site.url("/feed")`` is its address.
    ``host`` is the loopback address it listens on (127.0.0.2 plays a public host)."""

    def __init__(self, host: str = "127.0.0.1") -> None:
        self.host = host
        self.routes: dict[str, Reply | Handler] = {}
        self.requests: list[Request] = []
        self._lock = threading.Lock()
        site = self

        class _Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True  # else ~40 ms per keep-alive response

            def do_GET(self) -> None:
                site._handle(self)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self._server = _QuietServer((host, 0), _Handler)
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )

    @property
    def port(self) -> int:
        return int(self._server.server_address[1])

    def url(self, path: str) -> str:
        return f"http://{self.host}:{self.port}{path}"

    def serve(self, path: str, body: bytes | str = b"", **kwargs: Any) -> Reply:
        reply = Reply(body=body.encode() if isinstance(body, str) else body, **kwargs)
        self.routes[path] = reply
        return reply

    def handle(self, path: str, handler: Handler) -> None:
        self.routes[path] = handler

    def hits(self, path: str) -> int:
        with self._lock:
            return sum(1 for r in self.requests if r.path == path)

    def __enter__(self) -> LoopbackSite:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    def _handle(self, handler: BaseHTTPRequestHandler) -> None:
        headers = {k.lower(): v for k, v in handler.headers.items()}
        with self._lock:
            port = int(handler.client_address[1])
            self.requests.append(Request(handler.command, handler.path, headers, port))
        route = self.routes.get(handler.path.split("?")[0])
        if route is None:
            _send(handler, 404, b"not found", {"Content-Type": "text/plain"})
        elif isinstance(route, Reply):
            _send_reply(handler, route, headers)
        else:
            route(handler)


def _send_reply(handler: BaseHTTPRequestHandler, reply: Reply, request: dict[str, str]) -> None:
    headers = {"Content-Type": reply.content_type, **reply.headers}
    if reply.etag:
        headers["ETag"] = reply.etag
    if reply.last_modified:
        headers["Last-Modified"] = reply.last_modified
    if reply.status == 200 and _not_modified(reply, request):
        _send(handler, 304, b"", {k: v for k, v in headers.items() if k != "Content-Type"})
        return
    body = reply.body
    if reply.gzip and "gzip" in request.get("accept-encoding", ""):
        body = gzip.compress(body, mtime=0)
        headers["Content-Encoding"] = "gzip"
    _send(handler, reply.status, body, headers)


def _not_modified(reply: Reply, request: dict[str, str]) -> bool:
    if reply.etag and request.get("if-none-match") == reply.etag:
        return True
    return bool(
        reply.last_modified
        and "if-none-match" not in request
        and request.get("if-modified-since") == reply.last_modified
    )


def _send(
    handler: BaseHTTPRequestHandler, status: int, body: bytes, headers: dict[str, str]
) -> None:
    handler.send_response(status)
    for name, value in headers.items():
        handler.send_header(name, value)
    if status != 304:
        handler.send_header("Content-Length", str(len(body)))
    handler.end_headers()
    if status != 304:
        handler.wfile.write(body)


PYTORCH_SITE = "https://pytorch-dev-podcast.simplecast.com"


PYTORCH_MEDIA = "https://media.simplecast.com/"
MEDIA_TYPES = {".vtt": "text/vtt", ".srt": "application/octet-stream", ".json": "application/json"}


def serve_pytorch(site: LoopbackSite, *, prefix: str = "/pytorch") -> str:
    """Serve the PyTorch fixture feed, its episode pages and its transcript and chapters
    files (``fixtures/pytorch/media``); returns the feed URL.

    Episode links and file URLs in the feed point at the loopback copies.
    """
    base = site.url(prefix)
    feed = (FIXTURES / "pytorch" / "feed.xml").read_bytes()
    feed = feed.replace(f"{PYTORCH_SITE}/episodes/".encode(), f"{base}/episodes/".encode())
    feed = feed.replace(PYTORCH_MEDIA.encode(), f"{base}/media/".encode())
    media = FIXTURES / "pytorch" / "media"
    for path in sorted(p for p in media.rglob("*") if p.is_file()):
        name = path.relative_to(media).as_posix()
        site.serve(
            f"{prefix}/media/{name}",
            path.read_bytes(),
            etag=f'"{path.stem}-{path.parent.name[:8]}-v1"',
            content_type=MEDIA_TYPES[path.suffix],
        )
    site.serve(f"{prefix}/feed.xml", feed, etag='"feed-v1"', content_type="text/xml; charset=utf-8")
    for page in sorted((FIXTURES / "pytorch" / "pages").glob("*.html")):
        site.serve(
            f"{prefix}/episodes/{page.stem}",
            page.read_bytes(),
            etag=f'"{page.stem}-v1"',
            gzip=True,
            content_type="text/html; charset=utf-8",
        )
    return site.url(f"{prefix}/feed.xml")


@dataclass
class Sent:
    """One request a :class:`MediaFile` answered: its Range and If-Range, what it sent."""

    range: str | None
    if_range: str | None
    status: int = 0
    bytes: int = 0


class MediaFile:
    """A ``LoopbackSite.handle`` handler serving a media file with ``Range`` + ``If-Range``.

    ``ranges=False`` plays a server that ignores Range; ``length=False`` one that sends no
    Content-Length (the body ends when the connection closes). ``sent`` logs every request.
    Hooks for interrupted transfers, all on the server's side: ``after_first_chunk`` is called
    once the first chunk is written; at ``hold_at`` bytes into a response the server sets
    ``held`` and waits (at most 30 s) for ``release``; ``gap`` seconds pass between chunks.
    """

    def __init__(
        self,
        body: bytes,
        *,
        etag: str | None = '"m1"',
        last_modified: str | None = None,
        ranges: bool = True,
        length: bool = True,
        chunk: int = 1 << 16,
        content_type: str = "audio/mpeg",
    ) -> None:
        self.body, self.etag, self.last_modified = body, etag, last_modified
        self.ranges, self.length, self.chunk = ranges, length, chunk
        self.content_type = content_type
        self.sent: list[Sent] = []
        self.after_first_chunk: Callable[[], None] | None = None
        self.hold_at: int | None = None
        self.held = threading.Event()
        self.release = threading.Event()
        self.gap = 0.0

    def __call__(self, h: BaseHTTPRequestHandler) -> None:
        request = {k.lower(): v for k, v in h.headers.items()}
        log = Sent(request.get("range"), request.get("if-range"))
        self.sent.append(log)
        headers = {"Content-Type": self.content_type}
        if self.etag:
            headers["ETag"] = self.etag
        if self.last_modified:
            headers["Last-Modified"] = self.last_modified
        if self.etag and request.get("if-none-match") == self.etag:
            log.status = 304
            _send(h, 304, b"", headers)
            return
        start = self._range_start(request)
        size = len(self.body)
        if start is not None and start >= size:
            log.status = 416
            _send(h, 416, b"", {"Content-Range": f"bytes */{size}"})
            return
        log.status = 200 if start is None else 206
        if start is not None:
            headers["Content-Range"] = f"bytes {start}-{size - 1}/{size}"
        self._stream(h, log, start or 0, headers)

    def _range_start(self, request: dict[str, str]) -> int | None:
        value = request.get("range", "")
        if not self.ranges or not value.startswith("bytes=") or not value.endswith("-"):
            return None
        if_range = request.get("if-range")
        if if_range is not None and if_range not in (self.etag, self.last_modified):
            return None
        return int(value[len("bytes=") : -1])

    def _stream(
        self, h: BaseHTTPRequestHandler, log: Sent, start: int, headers: dict[str, str]
    ) -> None:
        h.send_response(log.status)
        for name, value in headers.items():
            h.send_header(name, value)
        if self.length:
            h.send_header("Content-Length", str(len(self.body) - start))
        else:
            h.send_header("Connection", "close")
            h.close_connection = True
        h.end_headers()
        position = start
        try:
            while position < len(self.body):
                if self.hold_at is not None and position - start >= self.hold_at:
                    self.held.set()
                    self.release.wait(30)
                    self.hold_at = None
                piece = self.body[position : position + self.chunk]
                h.wfile.write(piece)
                h.wfile.flush()
                position += len(piece)
                log.bytes += len(piece)
                if self.after_first_chunk is not None:
                    callback, self.after_first_chunk = self.after_first_chunk, None
                    callback()
                if self.gap:
                    time.sleep(self.gap)
        except OSError:  # the client went away
            h.close_connection = True
