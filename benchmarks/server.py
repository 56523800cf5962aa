"""A loopback HTTP server for benchmarks: threaded, keep-alive, TCP_NODELAY, ETag/304.

It serves bodies from memory on 127.0.0.1 only, counts requests, and stops by itself after
``lifetime`` seconds whatever happens. :class:`ServerProcess` runs it in a child process so
the benchmark's CPU figures (``time.process_time``) hold the client side only; bodies are
set and counters read over a pipe.
"""

from __future__ import annotations

import contextlib
import hashlib
import multiprocessing
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from multiprocessing.connection import Connection
from typing import Any


class BenchServer:
    def __init__(self, lifetime: float = 900.0) -> None:
        self.routes: dict[str, tuple[bytes, str, str]] = {}  # path → body, type, etag
        self.requests = 0
        self.not_modified = 0
        self._lock = threading.Lock()
        site = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True  # else ~40 ms per keep-alive response

            def do_GET(self) -> None:
                site._handle(self)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        class Server(ThreadingHTTPServer):
            daemon_threads = True
            request_queue_size = 256

            def handle_error(self, request: Any, client_address: Any) -> None:
                pass

        self._server = Server(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._timer = threading.Timer(lifetime, self.stop)
        self._timer.daemon = True

    @property
    def port(self) -> int:
        return int(self._server.server_address[1])

    def set(self, path: str, body: bytes, content_type: str = "application/rss+xml") -> None:
        etag = '"' + hashlib.sha1(body).hexdigest()[:16] + '"'
        self.routes[path] = (body, content_type, etag)

    def start(self) -> BenchServer:
        self._thread.start()
        self._timer.start()
        return self

    def stop(self) -> None:
        self._timer.cancel()
        self._server.shutdown()
        self._server.server_close()

    def _handle(self, h: BaseHTTPRequestHandler) -> None:
        with self._lock:
            self.requests += 1
        route = self.routes.get(h.path)
        if route is None:
            h.send_response(404)
            h.send_header("Content-Length", "0")
            h.end_headers()
            return
        body, kind, etag = route
        if h.headers.get("If-None-Match") == etag:
            with self._lock:
                self.not_modified += 1
            h.send_response(304)
            h.send_header("ETag", etag)
            h.end_headers()
            return
        h.send_response(200)
        h.send_header("Content-Type", kind)
        h.send_header("Content-Length", str(len(body)))
        h.send_header("ETag", etag)
        h.end_headers()
        h.wfile.write(body)


def _serve(conn: Connection, lifetime: float) -> None:
    server = BenchServer(lifetime).start()
    conn.send(server.port)
    done = threading.Event()
    threading.Timer(lifetime, done.set).start()
    while not done.is_set():
        if not conn.poll(0.5):
            continue
        try:
            command, *args = conn.recv()
        except EOFError:
            break
        if command == "set":
            for path, body, kind in args[0]:
                server.set(path, body, kind)
            conn.send(None)
        elif command == "counts":
            conn.send((server.requests, server.not_modified))
        elif command == "stop":
            break
    server.stop()


class ServerProcess:
    """``with ServerProcess() as srv: srv.set({...}); srv.url("/f")``; stops on exit."""

    def __init__(self, lifetime: float = 900.0) -> None:
        context = multiprocessing.get_context("fork")
        self._conn, child = context.Pipe()
        self._proc = context.Process(target=_serve, args=(child, lifetime), daemon=True)

    def __enter__(self) -> ServerProcess:
        self._proc.start()
        self.port = int(self._conn.recv())
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.port}{path}"

    def set(self, routes: dict[str, bytes], content_type: str = "application/rss+xml") -> None:
        items = list(routes.items())
        for start in range(0, len(items), 500):  # keep each message small
            chunk = [(p, b, content_type) for p, b in items[start : start + 500]]
            self._conn.send(("set", chunk))
            self._conn.recv()

    def counts(self) -> tuple[int, int]:
        """(requests, of which 304) so far."""
        self._conn.send(("counts",))
        requests, not_modified = self._conn.recv()
        return int(requests), int(not_modified)

    def stop(self) -> None:
        if self._proc.is_alive():
            with contextlib.suppress(OSError):
                self._conn.send(("stop",))
            self._proc.join(5)
            if self._proc.is_alive():
                self._proc.terminate()
                self._proc.join(5)
