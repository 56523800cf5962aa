"""Guards at the socket, under httpx: the total deadline, the address check, the send time.

httpx runs a request synchronously in the calling thread, so :class:`~podarchive.net.fetch.Fetcher`
keeps the :class:`Budget` of the current ``get()`` in a thread-local (:func:`budget`), and
the httpcore network backend here (:class:`GuardedBackend`) reads it at every socket
operation:

* a connect, TLS handshake, read or write waits at most until the deadline (its timeout is
  ``min(httpx's timeout, time left)``) and fails with the deadline's one-line message once
  the deadline has passed, so a server dripping its status line or headers is cut off too;
* the first write of a request reports the moment the request is really sent
  (``Budget.on_sent``): the per-host gap is measured from it;
* a backend built with an address check resolves a name once, refuses it if any of its
  addresses is blocked, and dials exactly the checked address: a name that resolves to
  another address a moment later (DNS rebinding) cannot slip through. TLS SNI, certificate
  checks and the Host header still use the name (httpcore takes them from the URL).
"""

from __future__ import annotations

import ipaddress
import socket
import ssl
import threading
import time
import weakref
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager, suppress
from typing import Any

import httpcore
import httpx

from podarchive.core.errors import Abandoned, BlockedURL, FetchError, FetchTimeout, shorten

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
Resolver = Callable[[str], list[str]]
AddressCheck = Callable[[IPAddress], bool]


def is_private(address: IPAddress) -> bool:
    """The default address check: loopback, private, link-local, reserved or multicast."""
    return not address.is_global or address.is_multicast


def system_resolver(host: str) -> list[str]:
    """The addresses ``host`` resolves to; FetchError with a one-line reason if none."""
    try:
        infos = socket.getaddrinfo(host, None, proto=socket.IPPROTO_TCP)
    except socket.gaierror as e:
        raise FetchError(f"cannot resolve {shorten(host)}: {e.strerror or 'no address'}") from e
    except UnicodeError as e:
        raise FetchError(f"cannot resolve {shorten(host)}: not a valid host name") from e
    return [str(info[4][0]) for info in infos]


def _addresses(host: str, resolve: Resolver) -> list[str]:
    try:
        return [str(ipaddress.ip_address(host.strip("[]")))]
    except ValueError:
        return resolve(host)


def _first_blocked(host: str, addresses: list[str], blocked: AddressCheck) -> str | None:
    for address in addresses:
        try:
            parsed = ipaddress.ip_address(address.split("%")[0])
        except ValueError as e:
            raise FetchError(f"cannot resolve {shorten(host)}: not an address: {address}") from e
        if blocked(parsed):
            return address
    return None


def private_address(
    host: str, resolve: Resolver = system_resolver, blocked: AddressCheck = is_private
) -> str | None:
    """The first address of ``host`` (a name or an address literal) that ``blocked`` refuses."""
    return _first_blocked(host, _addresses(host, resolve), blocked)


class Budget:
    """The time one ``Fetcher.get()`` may take, and whom to tell when a request is sent."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.ends_at = time.monotonic() + seconds
        self.on_sent: Callable[[], None] | None = None

    def left(self) -> float:
        return self.ends_at - time.monotonic()

    def pause(self, seconds: float) -> None:
        """Give back time spent waiting in our own queue (the host's turn), not on the server."""
        self.ends_at += seconds

    def expired(self) -> FetchTimeout:
        # not transient: a server that dripped past the deadline would only drip again
        return FetchTimeout(f"timeout: no complete response after {self.seconds:g} s")

    def check(self) -> None:
        if self.left() <= 0:
            raise self.expired()

    def sent(self) -> None:
        callback, self.on_sent = self.on_sent, None
        if callback is not None:
            callback()


_local = threading.local()


class budget:  # noqa: N801 (used as a function: ``with budget(seconds):``)
    """Run the block under a deadline ``seconds`` away, for this thread's socket operations.

    A class, not a generator context manager: every request enters one (#30)."""

    __slots__ = ("_current", "_previous")

    def __init__(self, seconds: float) -> None:
        self._current = Budget(seconds)
        self._previous: Budget | None = None

    def __enter__(self) -> Budget:
        self._previous = getattr(_local, "budget", None)
        _local.budget = self._current
        return self._current

    def __exit__(self, *exc: object) -> None:
        _local.budget = self._previous


def current_budget() -> Budget | None:
    found: Budget | None = getattr(_local, "budget", None)
    return found


def _clamp(timeout: float | None) -> tuple[float | None, Budget | None]:
    """``timeout`` cut to the time left; with the budget when the deadline is the nearer limit."""
    current = current_budget()
    if current is None:
        return timeout, None
    left = current.left()
    if left <= 0:
        raise current.expired()
    if timeout is None or left < timeout:
        return left, current
    return timeout, None


def _deadline_raises(limiter: Budget | None, e: httpcore.TimeoutException) -> None:
    """A timeout that was the deadline's (``limiter`` set) raised as the deadline's error;
    otherwise the caller re-raises ``e``."""
    if limiter is not None:
        raise limiter.expired() from e


@contextmanager
def _deadline_wins(limiter: Budget | None) -> Iterator[None]:
    """A timeout that was the deadline's becomes the deadline's error."""
    try:
        yield
    except httpcore.TimeoutException as e:
        _deadline_raises(limiter, e)
        raise


class _LiveStreams:
    """The streams a backend has open, so that :meth:`abort` can wake every blocked read.

    Closing a client does not touch a connection another thread is reading from: that read
    would wait out its timeout (up to the deadline) and hold up the process's exit. Shutting
    the socket down ends the read at once (the reader sees the end of the stream).
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._live: weakref.WeakSet[_DeadlineStream] = weakref.WeakSet()
        self.aborted = False

    def add(self, stream: _DeadlineStream) -> _DeadlineStream:
        with self._lock:
            if not self.aborted:
                self._live.add(stream)
                return stream
        stream.close()
        raise Abandoned()

    def abort(self) -> None:
        with self._lock:
            self.aborted = True
            live = list(self._live)
        for stream in live:
            sock = stream.get_extra_info("socket")
            if isinstance(sock, socket.socket):
                with suppress(OSError):  # the plain socket's shutdown, even under TLS
                    socket.socket.shutdown(sock, socket.SHUT_RDWR)


class _DeadlineStream(httpcore.NetworkStream):
    """A socket stream whose every wait ends at the current budget's deadline."""

    def __init__(self, inner: httpcore.NetworkStream, live: _LiveStreams) -> None:
        self._inner = inner
        self._live = live

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        limit, limiter = _clamp(timeout)
        try:  # _deadline_wins without a context manager's cost: every request reads (#30)
            return self._inner.read(max_bytes, limit)
        except httpcore.TimeoutException as e:
            _deadline_raises(limiter, e)
            raise

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        if not buffer:  # h11's end of a bodiless request: nothing to send or wait for (#30)
            return
        limit, limiter = _clamp(timeout)
        try:  # as in read
            self._inner.write(buffer, limit)
        except httpcore.TimeoutException as e:
            _deadline_raises(limiter, e)
            raise
        current = current_budget()
        if current is not None:
            current.sent()

    def start_tls(
        self,
        ssl_context: ssl.SSLContext,
        server_hostname: str | None = None,
        timeout: float | None = None,
    ) -> httpcore.NetworkStream:
        limit, limiter = _clamp(timeout)
        with _deadline_wins(limiter):
            tls = self._inner.start_tls(ssl_context, server_hostname, limit)
        return self._live.add(_DeadlineStream(tls, self._live))

    def close(self) -> None:
        self._inner.close()

    def get_extra_info(self, info: str) -> Any:
        return self._inner.get_extra_info(info)


class GuardedBackend(httpcore.NetworkBackend):
    """httpcore's sync backend under the deadline; given ``blocked``, it dials only addresses
    it has checked."""

    def __init__(
        self, resolve: Resolver = system_resolver, blocked: AddressCheck | None = None
    ) -> None:
        self._sync = httpcore.SyncBackend()
        self._resolve = resolve
        self._blocked = blocked
        self._live = _LiveStreams()

    def abort(self) -> None:
        """End every read and write in flight at once; refuse new connections (Abandoned)."""
        self._live.abort()

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore.NetworkStream:
        targets = [host] if self._blocked is None else self._checked(host)
        error: httpcore.ConnectError | None = None
        for target in targets:
            limit, limiter = _clamp(timeout)
            try:
                with _deadline_wins(limiter):
                    stream = self._sync.connect_tcp(
                        target, port, limit, local_address, socket_options
                    )
            except httpcore.ConnectError as e:
                error = e
                continue
            return self._live.add(_DeadlineStream(stream, self._live))
        assert error is not None
        raise error

    def _checked(self, host: str) -> list[str]:
        """Every address of ``host``, resolved once; BlockedURL if any of them is blocked."""
        assert self._blocked is not None
        addresses = _addresses(host, self._resolve)
        refused = _first_blocked(host, addresses, self._blocked)
        if refused is not None:
            raise BlockedURL(f"blocked: private address {refused}")
        if not addresses:
            raise FetchError(f"cannot resolve {shorten(host)}: no address")
        return addresses


def guarded_transport(
    backend: GuardedBackend, limits: httpx.Limits, ssl_context: ssl.SSLContext
) -> httpx.HTTPTransport:
    """An httpx transport whose connection pool uses ``backend``.

    httpx 0.28's HTTPTransport takes no network backend, so its pool is replaced by an
    equal one that has it (the attacks in tests/test_fetch_attacks.py fail if it is lost).
    """
    transport = httpx.HTTPTransport(verify=ssl_context, limits=limits, trust_env=False)
    transport._pool = httpcore.ConnectionPool(
        ssl_context=ssl_context,
        max_connections=limits.max_connections,
        max_keepalive_connections=limits.max_keepalive_connections,
        keepalive_expiry=limits.keepalive_expiry,
        network_backend=backend,
    )
    return transport
