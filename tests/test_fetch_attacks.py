"""Attacks on the fetch adapter (issue #17), each reproduced on loopback.

Servers here are raw sockets on 127.0.0.0/8 so that they can drip, close half-way or
answer on 127.0.0.2. No test dials anything outside 127.0.0.0/8: for the address guard,
127.0.0.2 plays a "public" address and everything else a private one.
"""

from __future__ import annotations

import contextlib
import ipaddress
import select
import socket
import struct
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from podarchive.core.errors import (
    Abandoned,
    BlockedURL,
    FetchError,
    FetchTimeout,
    HTTPStatusError,
    RedirectError,
)
from podarchive.core.settings import Settings
from podarchive.core.types import FetchRecord
from podarchive.net import fetch
from podarchive.net.fetch import Fetcher

SO_TIMESTAMPNS = getattr(socket, "SO_TIMESTAMPNS", 35)  # Linux: kernel receive times
QUICK = Settings(
    connect_timeout=2, read_timeout=1, deadline=1, retries=2, retry_base=0.01, host_gap=0
)
PUBLIC = "127.0.0.2"


def only_public(address: ipaddress.IPv4Address | ipaddress.IPv6Address) -> bool:
    """The test's address classification: everything but 127.0.0.2 is "private"."""
    return str(address) != PUBLIC


class RawServer:
    """A TCP server whose ``handler(conn, server)`` writes whatever it likes; an event log."""

    def __init__(
        self,
        handler: Callable[[socket.socket, RawServer], None],
        host: str = "127.0.0.1",
        port: int = 0,
    ) -> None:
        self.handler = handler
        self.sock = socket.create_server((host, port))
        self.sock.settimeout(0.05)
        with contextlib.suppress(OSError):  # inherited by accepted sockets
            self.sock.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPNS, 1)
        self.events: list[tuple[float, str]] = []
        self.arrivals: list[float] = []  # when each request's first bytes reached the kernel
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._conns: list[socket.socket] = []
        self._threads: list[threading.Thread] = []
        self._acceptor = threading.Thread(target=self._accept_loop, daemon=True)

    @property
    def port(self) -> int:
        return int(self.sock.getsockname()[1])

    def url(self, path: str = "/", host: str = "127.0.0.1") -> str:
        return f"http://{host}:{self.port}{path}"

    def note(self, event: str) -> None:
        with self._lock:
            self.events.append((time.monotonic(), event))

    def log(self, prefix: str = "") -> list[str]:
        with self._lock:
            return [e for _, e in self.events if e.startswith(prefix)]

    def arrived(self, at: float) -> None:
        with self._lock:
            self.arrivals.append(at)

    def __enter__(self) -> RawServer:
        self._acceptor.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._acceptor.join(timeout=5)
        with self._lock:
            conns, threads = list(self._conns), list(self._threads)
        for conn in conns:
            with contextlib.suppress(OSError):
                conn.shutdown(socket.SHUT_RDWR)
        for thread in threads:
            thread.join(timeout=5)
        for conn in conns:
            conn.close()
        self.sock.close()

    def _accept_loop(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            conn.settimeout(10)
            thread = threading.Thread(target=self._serve, args=(conn,), daemon=True)
            with self._lock:
                self._conns.append(conn)
                self._threads.append(thread)
            thread.start()

    def _serve(self, conn: socket.socket) -> None:
        try:
            self.handler(conn, self)
        except OSError as e:
            self.note(f"error {type(e).__name__}")
        finally:
            conn.close()


def receive(conn: socket.socket) -> tuple[bytes, float]:
    """Bytes and the time the kernel received them (the server's clock, not its thread's)."""
    chunk, ancillary, _, _ = conn.recvmsg(65536, socket.CMSG_SPACE(16))
    for level, kind, value in ancillary:
        if (level, kind) == (socket.SOL_SOCKET, SO_TIMESTAMPNS) and len(value) >= 16:
            seconds, nanoseconds = struct.unpack("qq", value[:16])
            return chunk, seconds + nanoseconds / 1e9
    return chunk, time.time()


def read_request(conn: socket.socket, server: RawServer) -> str | None:
    """Read one request head; logs ``request <line>`` when its first line has arrived."""
    data = b""
    noted = False
    while b"\r\n\r\n" not in data:
        chunk, arrived = receive(conn)
        if not chunk:
            return None
        if not data:
            server.arrived(arrived)
        data += chunk
        if not noted and b"\r\n" in data:
            line = data.split(b"\r\n", 1)[0].decode("latin-1")
            server.note(f"request {line}")
            noted = True
    return data.split(b"\r\n", 1)[0].decode("latin-1")


def response(body: bytes, status: str = "200 OK", **headers: str) -> bytes:
    head = f"HTTP/1.1 {status}\r\n" + "".join(f"{k}: {v}\r\n" for k, v in headers.items())
    return head.encode() + b"\r\n" + body


def closed_by_peer(conn: socket.socket, wait: float) -> bool:
    """Whether the client closed its end within ``wait`` seconds."""
    readable, _, _ = select.select([conn], [], [], wait)
    if not readable:
        return False
    try:
        return conn.recv(1024) == b""
    except OSError:
        return True


def drip(data: bytes, every: float) -> Callable[[socket.socket, RawServer], None]:
    """Read a request, then send ``data`` one byte every ``every`` seconds."""

    def handler(conn: socket.socket, server: RawServer) -> None:
        if read_request(conn, server) is None:
            return
        for i in range(len(data)):
            conn.sendall(data[i : i + 1])
            if closed_by_peer(conn, every):
                server.note(f"closed by client after {i + 1} bytes")
                return
        server.note("drip done")

    return handler


# 1. the deadline covers everything ------------------------------------------------------


def test_status_line_drip_hits_the_deadline() -> None:
    head = response(b"ok", **{"Content-Length": "2", "Content-Type": "text/xml"})
    start = time.monotonic()
    with RawServer(drip(head, 0.2)) as server, Fetcher(QUICK) as fetcher:
        with pytest.raises(FetchTimeout) as info:
            fetcher.get(server.url("/feed"))
        elapsed = time.monotonic() - start
        assert str(info.value) == "timeout: no complete response after 1 s"
        assert not info.value.transient
        deadline = time.monotonic() + 10
        while not server.log("closed by client") and time.monotonic() < deadline:
            time.sleep(0.05)
        assert len(server.log("request")) == 1  # not retried
        (closed,) = server.log("closed by client")
        assert int(closed.split()[-2]) < len(head) - 2  # before the headers were complete
    assert elapsed < 30


def test_tls_handshake_drip_hits_the_deadline() -> None:
    # A TLS record header that promises more handshake bytes than ever arrive in time.
    def handler(conn: socket.socket, server: RawServer) -> None:
        conn.recv(65536)  # the ClientHello
        server.note("request (tls)")
        for byte in b"\x16\x03\x03\x00\x50" + b"\x00" * 80:
            conn.sendall(bytes([byte]))
            if closed_by_peer(conn, 0.2):
                server.note("closed by client")
                return

    settings = QUICK.replace(connect_timeout=5)
    with RawServer(handler) as server, Fetcher(settings) as fetcher:
        with pytest.raises(FetchTimeout) as info:
            fetcher.get(f"https://127.0.0.1:{server.port}/feed")
        assert str(info.value) == "timeout: no complete response after 1 s"
        assert len(server.log("request")) == 1


def test_retries_and_back_off_stay_within_the_deadline(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(fetch, "retry_delays", lambda n, base, rng=None: [0.2, 0.2, 5.0, 5.0][:n])

    def unavailable(conn: socket.socket, server: RawServer) -> None:
        while read_request(conn, server) is not None:
            conn.sendall(response(b"", "503 Service Unavailable", **{"Content-Length": "0"}))

    settings = QUICK.replace(retries=4, deadline=1.5)
    with RawServer(unavailable) as server, Fetcher(settings) as fetcher:
        with pytest.raises(HTTPStatusError, match="HTTP 503"):
            fetcher.get(server.url("/feed"))
        # 0.2 + 0.2 s of back-off fit in 1.5 s; a 5 s back-off does not, so no 4th request
        assert 1 <= len(server.log("request")) <= 3


def test_the_deadline_spans_redirect_hops() -> None:
    def slow_redirect(conn: socket.socket, server: RawServer) -> None:
        line = read_request(conn, server)
        if line is None or closed_by_peer(conn, 0.4):
            return
        hop = int(line.split()[1].strip("/") or 0)
        conn.sendall(response(b"", "302 Found", Location=f"/{hop + 1}", **{"Content-Length": "0"}))

    with RawServer(slow_redirect) as server, Fetcher(QUICK) as fetcher:
        with pytest.raises(FetchTimeout, match="no complete response after 1 s"):
            fetcher.get(server.url("/0"))
        assert 1 <= len(server.log("request")) <= 3  # 0.4 s a hop: never all ten


# 2. DNS rebinding ------------------------------------------------------------------------


@pytest.fixture
def two_hosts() -> Iterator[tuple[RawServer, RawServer]]:
    """A "public" server on 127.0.0.2 and a "secret" one on 127.0.0.1, same port."""

    def public(conn: socket.socket, server: RawServer) -> None:
        line = read_request(conn, server)
        if line is None:
            return
        if line.split()[1].startswith("/hop-"):
            location = line.split()[1][len("/hop-") :].replace("~", "/")
            status, body = "302 Found", b""
            headers = {"Location": f"http:{location}", "Content-Length": "0"}
        else:
            status, body = "200 OK", b"<html><body>public</body></html>"
            headers = {"Content-Length": str(len(body)), "Content-Type": "text/html"}
        conn.sendall(response(body, status, Connection="close", **headers))

    def secret(conn: socket.socket, server: RawServer) -> None:
        while read_request(conn, server) is not None:
            body = b"<html><body>secret</body></html>"
            conn.sendall(response(body, **{"Content-Length": str(len(body))}))

    for _ in range(20):  # the port may be taken on 127.0.0.1
        with RawServer(public, host=PUBLIC) as outside:
            try:
                inside = RawServer(secret, port=outside.port)
            except OSError:
                continue
            with inside:
                yield outside, inside
            return
    pytest.fail("no port free on both 127.0.0.1 and 127.0.0.2")


def flipping_resolver() -> Callable[[str], list[str]]:
    lock = threading.Lock()
    calls = {"rebind.test": 0}
    fixed = {"inside.test": ["127.0.0.1"], "both.test": [PUBLIC, "127.0.0.1"]}

    def resolve(host: str) -> list[str]:
        if host in fixed:
            return fixed[host]
        with lock:
            calls[host] = calls.get(host, 0) + 1
            return [PUBLIC if calls[host] % 2 else "127.0.0.1"]

    return resolve


def test_dns_rebinding_never_reaches_the_checked_name_s_second_address(
    two_hosts: tuple[RawServer, RawServer],
) -> None:
    outside, inside = two_hosts
    outcomes: list[str] = []
    with Fetcher(QUICK, resolver=flipping_resolver(), address_blocked=only_public) as fetcher:
        for _ in range(50):
            try:
                result = fetcher.get(
                    outside.url("/page", "rebind.test"), kind="page", trusted=False
                )
                outcomes.append(result.body.decode())
            except BlockedURL as e:
                outcomes.append(str(e))
    assert inside.log() == []
    assert set(outcomes) == {
        "<html><body>public</body></html>",
        "blocked: private address 127.0.0.1",
    }


def test_any_private_address_of_a_name_blocks_it(two_hosts: tuple[RawServer, RawServer]) -> None:
    outside, inside = two_hosts
    with Fetcher(QUICK, resolver=flipping_resolver(), address_blocked=only_public) as fetcher:
        for _ in range(5):
            with pytest.raises(BlockedURL, match="blocked: private address 127.0.0.1"):
                fetcher.get(outside.url("/page", "both.test"), kind="page", trusted=False)
    assert outside.log() == inside.log() == []


@pytest.mark.parametrize("target", ["inside.test", "127.0.0.1", "rebind.test"])
def test_every_redirect_hop_is_guarded(two_hosts: tuple[RawServer, RawServer], target: str) -> None:
    outside, inside = two_hosts
    hop = f"/hop-~~{target}:{inside.port}~secret"
    with Fetcher(QUICK, resolver=flipping_resolver(), address_blocked=only_public) as fetcher:
        for _ in range(4):
            with pytest.raises(BlockedURL) as info:
                fetcher.get(outside.url(hop, "rebind.test"), kind="page", trusted=False)
            assert str(info.value) == "blocked: private address 127.0.0.1"
    assert inside.log() == []
    assert outside.log("request")  # the first hop was asked at least once


def test_untrusted_requests_never_reuse_a_trusted_connection(
    two_hosts: tuple[RawServer, RawServer],
) -> None:
    _, inside = two_hosts
    url = inside.url("/page", "localhost")
    resolve = lambda host: ["127.0.0.1"]  # noqa: E731
    with Fetcher(QUICK, resolver=resolve, address_blocked=only_public) as fetcher:
        assert b"secret" in fetcher.get(url, kind="page").body  # trusted: kept alive
        with pytest.raises(BlockedURL, match="private address 127.0.0.1"):
            fetcher.get(url, kind="page", trusted=False)
    assert len(inside.log("request")) == 1


# 3. a URL over httpx's length limit -------------------------------------------------------


def test_an_overlong_url_fails_with_one_short_line() -> None:
    url = "http://127.0.0.1:9/" + "a" * 100_000
    log: list[FetchRecord] = []
    with Fetcher(QUICK) as fetcher, pytest.raises(BlockedURL) as info:
        fetcher.get(url, kind="page", log=log)
    message = str(info.value)
    assert message.startswith(f"bad URL: URL too long ({len(url)} characters): http://127.0.0.1:9/")
    assert message.endswith("…")
    assert len(message) < 300
    assert not info.value.transient
    assert [(r.status, r.error) for r in log] == [(None, message)]
    assert len(log[0].url) <= 2048


def test_overlong_redirect_targets_and_loops_are_shortened() -> None:
    long_path = "/" + "b" * 5000

    def handler(conn: socket.socket, server: RawServer) -> None:
        while (line := read_request(conn, server)) is not None:
            path = line.split()[1]
            to = {"/huge": "/" + "c" * 70_000, "/loop": long_path}.get(path, "/loop")
            conn.sendall(response(b"", "302 Found", Location=to, **{"Content-Length": "0"}))

    with RawServer(handler) as server, Fetcher(QUICK) as fetcher:
        with pytest.raises(RedirectError) as huge:
            fetcher.get(server.url("/huge"))
        assert str(huge.value) == "bad redirect: unusable Location (URL too long)"
        assert not huge.value.transient
        with pytest.raises(FetchError, match="^redirect loop at") as info:
            fetcher.get(server.url("/loop"))
        assert len(str(info.value)) < 300


# 4. the per-host gap, by the server's clock ------------------------------------------------


def test_the_per_host_gap_holds_from_the_actual_send(monkeypatch: pytest.MonkeyPatch) -> None:
    """Slow name resolution (part of connection setup) must not bunch the sends.

    Measured by the kernel's receive times on the server, so that neither the client's
    nor the server's thread scheduling blurs the gaps; only a lower bound is asserted.
    """
    real_getaddrinfo = socket.getaddrinfo
    lookups = iter(range(1000))

    def slow_dns(host: Any, *args: Any, **kwargs: Any) -> Any:
        if host == "slow.test":
            if next(lookups) % 3 == 0:
                time.sleep(0.4)
            host = "127.0.0.1"
        return real_getaddrinfo(host, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", slow_dns)

    def answer(conn: socket.socket, server: RawServer) -> None:
        if read_request(conn, server) is not None:
            conn.sendall(response(b"<rss/>", Connection="close", **{"Content-Length": "6"}))

    gap = 0.25
    settings = Settings(retries=0, per_host=2, host_gap=gap, concurrency=6)
    with RawServer(answer) as server, Fetcher(settings) as fetcher, ThreadPoolExecutor(6) as pool:
        url = server.url("/feed", "slow.test")
        list(pool.map(lambda _: fetcher.get(url), range(9)))
        stamps = sorted(server.arrivals)
    assert len(stamps) == 9
    gaps = [b - a for a, b in zip(stamps, stamps[1:], strict=False)]
    assert min(gaps) >= gap - 0.05, [round(g, 3) for g in gaps]


# 5. truncated pages -------------------------------------------------------------------------

PAGE = b"<!DOCTYPE html><html><body>" + b"<p>note</p>" * 200 + b"</body></html>\n"


def close_delimited(*bodies: bytes) -> Callable[[socket.socket, RawServer], None]:
    """Answer the n-th request with bodies[n] (the last one repeats), then close."""
    count = iter(range(1000))

    def handler(conn: socket.socket, server: RawServer) -> None:
        if read_request(conn, server) is None:
            return
        body = bodies[min(next(count), len(bodies) - 1)]
        head = response(b"", **{"Content-Type": "text/html; charset=utf-8", "Connection": "close"})
        conn.sendall(head + body)

    return handler


def test_a_page_cut_half_way_is_fetched_again_then_fails_transiently() -> None:
    half = PAGE[: len(PAGE) // 2]
    log: list[FetchRecord] = []
    with RawServer(close_delimited(half, half[:-100])) as server, Fetcher(QUICK) as fetcher:
        with pytest.raises(FetchError) as info:
            fetcher.get(server.url("/episode"), kind="page", log=log)
        assert len(server.log("request")) == 2
    assert str(info.value) == (
        "truncated: connection closed before the end of the page (no Content-Length)"
    )
    assert info.value.transient


def test_a_cut_page_whose_second_fetch_is_complete_is_kept() -> None:
    half = PAGE[: len(PAGE) // 2]
    with RawServer(close_delimited(half, PAGE)) as server, Fetcher(QUICK) as fetcher:
        assert fetcher.get(server.url("/episode"), kind="page").body == PAGE
        assert len(server.log("request")) == 2


def test_a_stable_page_without_closing_tags_is_kept_after_one_more_fetch() -> None:
    tagless = b"<html><p>notes without an end" + b" and more" * 50
    with RawServer(close_delimited(tagless)) as server, Fetcher(QUICK) as fetcher:
        assert fetcher.get(server.url("/episode"), kind="page").body == tagless
        assert len(server.log("request")) == 2


@pytest.mark.parametrize(
    "ending", [b"", b"\n\n  ", b"<!-- served in 3 ms -->\n", b"<!-- a --><!-- b -->\r\n"]
)
def test_a_complete_close_delimited_page_is_fetched_once(ending: bytes) -> None:
    page = PAGE.replace(b"</html>", b"</HTML>") + ending
    with RawServer(close_delimited(page)) as server, Fetcher(QUICK) as fetcher:
        assert fetcher.get(server.url("/episode"), kind="page").body == page
        assert len(server.log("request")) == 1


# 6. one clean line for resolver failures ------------------------------------------------------


def test_a_resolver_failure_is_one_clean_line(monkeypatch: pytest.MonkeyPatch) -> None:
    def no_dns(*args: Any, **kwargs: Any) -> Any:
        raise socket.gaierror(socket.EAI_AGAIN, "Temporary failure in name resolution")

    monkeypatch.setattr(socket, "getaddrinfo", no_dns)
    with Fetcher(QUICK) as fetcher, pytest.raises(FetchError) as info:
        fetcher.get("http://example.invalid/page", kind="page", trusted=False)
    assert str(info.value) == "cannot resolve example.invalid: Temporary failure in name resolution"


# --- abort: a stop ends reads in flight at once ------------------------------------------


def test_abort_ends_a_blocked_read_at_once() -> None:
    """A stop (SIGTERM, Ctrl-C) must not wait for a stalled server's timeout.

    The server sends headers and then nothing: the read would wait 60 s (read timeout) with
    a deadline of 120 s, and the thread would hold up the process's exit that long. After
    ``abort()`` the reading thread must end with Abandoned while the server still stalls.
    """
    stalled, release = threading.Event(), threading.Event()

    def stall(conn: socket.socket, server: RawServer) -> None:
        read_request(conn, server)
        conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\nabc")
        stalled.set()
        release.wait(30)

    slow = Settings(connect_timeout=5, read_timeout=60, deadline=120, retries=0, host_gap=0)
    outcome: list[BaseException] = []
    with RawServer(stall) as server, Fetcher(slow) as fetcher:

        def get() -> None:
            try:
                fetcher.get(server.url("/feed"))
            except BaseException as e:  # what the worker thread ends with
                outcome.append(e)

        thread = threading.Thread(target=get)
        thread.start()
        try:
            assert stalled.wait(10)
            time.sleep(1.0)  # the reader is blocked in recv by now (a close() would not wake it)
            fetcher.abort()
            thread.join(timeout=15)  # well under the 60 s the read would otherwise wait
            assert not thread.is_alive()
            assert not release.is_set()  # it ended while the server still stalled
        finally:
            release.set()
            thread.join(timeout=70)
    (error,) = outcome
    assert isinstance(error, Abandoned)
