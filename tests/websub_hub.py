"""A stub WebSub hub on 127.0.0.1 for tests and benchmarks: it accepts (un)subscriptions,
verifies them against the subscriber's callback, and publishes signed notifications."""

from __future__ import annotations

import hashlib
import hmac
import threading
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class HubSub:
    callback: str
    topic: str
    secret: str
    mode: str
    verified: int | None = None  # the callback's status for the verification


@dataclass
class StubHub:
    lease: int = 10
    refuse: bool = False  # answer subscriptions with 500
    asked: list[HubSub] = field(default_factory=list)
    _server: ThreadingHTTPServer | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def __enter__(self) -> StubHub:
        hub = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:
                size = int(self.headers.get("Content-Length", "0"))
                form = dict(urllib.parse.parse_qsl(self.rfile.read(size).decode()))
                status = 500 if hub.refuse else 202
                self.send_response(status)
                self.send_header("Content-Length", "0")
                self.end_headers()
                if status == 202:
                    sub = HubSub(
                        form["hub.callback"],
                        form["hub.topic"],
                        form.get("hub.secret", ""),
                        form["hub.mode"],
                    )
                    with hub._lock:
                        hub.asked.append(sub)
                    threading.Thread(target=hub.verify, args=(sub,), daemon=True).start()

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        assert self._server is not None
        self._server.shutdown()
        self._server.server_close()

    @property
    def url(self) -> str:
        assert self._server is not None
        return f"http://127.0.0.1:{self._server.server_address[1]}/hub"

    def verify(self, sub: HubSub, topic: str | None = None, mode: str | None = None) -> int:
        query = {
            "hub.mode": mode or sub.mode,
            "hub.topic": topic or sub.topic,
            "hub.challenge": "chal-" + hashlib.sha1(sub.callback.encode()).hexdigest()[:8],
            "hub.lease_seconds": str(self.lease),
        }
        status, body = get(sub.callback + "?" + urllib.parse.urlencode(query))
        ok = status == 200 and body.decode() == query["hub.challenge"]
        sub.verified = status if ok or status != 200 else -1
        return status

    def subscriptions(self, mode: str = "subscribe") -> list[HubSub]:
        with self._lock:
            return [s for s in self.asked if s.mode == mode]

    def publish(self, sub: HubSub, body: bytes, *, signature: str | None = "good") -> int:
        headers = {"Content-Type": "application/rss+xml"}
        if signature == "good":
            digest = hmac.new(sub.secret.encode(), body, hashlib.sha256).hexdigest()
            headers["X-Hub-Signature"] = f"sha256={digest}"
        elif signature is not None:
            headers["X-Hub-Signature"] = signature
        request = urllib.request.Request(sub.callback, data=body, headers=headers, method="POST")
        return _open(request)[0]


def get(url: str) -> tuple[int, bytes]:
    return _open(urllib.request.Request(url))


def _open(request: urllib.request.Request) -> tuple[int, bytes]:
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()


def rss(items: int, hub: str, self_url: str) -> bytes:
    """A feed of ``items`` episodes that names ``hub`` and its ``self_url`` (a push topic)."""
    entries = "".join(
        f"<item><guid>ep-{i}</guid><title>Episode {i}</title></item>" for i in range(items)
    )
    return (
        '<?xml version="1.0"?><rss version="2.0" xmlns:atom="http://www.w3.org/2005/Atom">'
        f'<channel><title>Pushed</title><atom:link rel="hub" href="{hub}"/>'
        f'<atom:link rel="self" href="{self_url}"/>{entries}</channel></rss>'
    ).encode()
