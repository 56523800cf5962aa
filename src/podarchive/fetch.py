"""The only httpx user: one client per run, conditional GET, redirects, caps, host limits.

:class:`Fetcher` turns every outside failure into a :mod:`podarchive.errors` FetchError
with a short reason (``timeout after 30 s``, ``body over 50 MiB``, ``HTTP 404``), and
logs every HTTP request it makes (one :class:`FetchRecord` per hop, failures included).

Redirects are followed by hand so that each hop can be checked (scheme, private
addresses for untrusted URLs, loops) and recorded. Bodies are streamed raw and
decompressed here with a cap on the *decompressed* size, so a gzip bomb costs at most
the cap. A total deadline bounds a server that drips one byte at a time (httpx's read
timeout is per chunk).
"""

from __future__ import annotations

import functools
import ipaddress
import re
import socket
import ssl
import threading
import time
import zlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from urllib.parse import urljoin, urlsplit

import certifi
import httpx

from podarchive.errors import (
    Abandoned,
    BlockedURL,
    BodyTooLarge,
    FetchError,
    FetchTimeout,
    HostBackoff,
    HTTPStatusError,
    RedirectError,
)
from podarchive.policy import is_transient_status, parse_retry_after, retry_delays
from podarchive.settings import Settings
from podarchive.types import FetchResult, Redirect

REDIRECT_STATUSES = frozenset({301, 302, 303, 307, 308})
FEED_ACCEPT = (
    "application/rss+xml, application/atom+xml, application/xml;q=0.9, text/xml;q=0.9, */*;q=0.5"
)
PAGE_ACCEPT = "text/html, application/xhtml+xml;q=0.9, */*;q=0.5"
Resolver = Callable[[str], list[str]]


@dataclass(frozen=True, slots=True)
class FetchRecord:
    """One HTTP request as the fetch log keeps it."""

    url: str
    kind: str
    started_at: str
    ms: int
    status: int | None
    bytes: int
    error: str | None = None


def _format_size(limit: int) -> str:
    mib = limit / (1024 * 1024)
    return f"{mib:g} MiB" if mib >= 1 else f"{limit} bytes"


def _system_resolver(host: str) -> list[str]:
    try:
        infos = socket.getaddrinfo(host, None, proto=socket.IPPROTO_TCP)
    except (socket.gaierror, UnicodeError) as e:
        raise FetchError(f"cannot resolve {host}: {e}") from e
    return [str(info[4][0]) for info in infos]


def private_address(host: str, resolve: Resolver = _system_resolver) -> str | None:
    """The first loopback/private/link-local/multicast/reserved address ``host`` resolves to."""
    try:
        addresses = [ipaddress.ip_address(host.strip("[]"))]
    except ValueError:
        addresses = [ipaddress.ip_address(a.split("%")[0]) for a in resolve(host)]
    for address in addresses:
        if not address.is_global or address.is_multicast:
            return str(address)
    return None


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
            raise FetchError(f"unsupported content-encoding {encoding!r}")
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
            raise FetchError(f"corrupt {self._encoding} body: {e}") from e
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


class HostLimiter:
    """Per host: at most ``per_host`` requests in flight, ``gap`` seconds between their starts,
    and none at all before a time the host asked for (Retry-After)."""

    def __init__(
        self, per_host: int, gap: float = 0.0, blocked: dict[str, datetime] | None = None
    ) -> None:
        self._per_host = max(1, per_host)
        self._gap = max(0.0, gap)
        self._lock = threading.Lock()
        self._semaphores: dict[str, threading.Semaphore] = {}
        self._next_start: dict[str, float] = {}
        self.blocked: dict[str, datetime] = dict(blocked or {})

    def block(self, host: str, until: datetime) -> None:
        with self._lock:
            self.blocked[host] = max(until, self.blocked.get(host, until))

    def check(self, host: str) -> None:
        with self._lock:
            until = self.blocked.get(host)
        if until is not None and until > datetime.now(UTC):
            stamp = until.strftime("%Y-%m-%dT%H:%M:%SZ")
            raise HostBackoff(f"waiting: {host} asked us not to return before {stamp}")

    @contextmanager
    def slot(self, host: str) -> Iterator[None]:
        with self._lock:
            semaphore = self._semaphores.setdefault(host, threading.Semaphore(self._per_host))
        with semaphore:
            with self._lock:
                now = time.monotonic()
                start = max(now, self._next_start.get(host, now))
                self._next_start[host] = start + self._gap
            if start > now:
                time.sleep(start - now)
            yield


@functools.cache
def _tls_context() -> ssl.SSLContext:
    """One verified TLS context per process: building one costs ~18 ms, per client."""
    return ssl.create_default_context(cafile=certifi.where())


def _now_iso() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


class Fetcher:
    """One httpx client for a whole run. Thread-safe; use as a context manager."""

    def __init__(
        self,
        settings: Settings | None = None,
        *,
        transport: httpx.BaseTransport | None = None,
        resolver: Resolver = _system_resolver,
        blocked_hosts: dict[str, datetime] | None = None,
    ) -> None:
        self.settings = settings or Settings()
        s = self.settings
        self._client = httpx.Client(
            timeout=httpx.Timeout(
                connect=s.connect_timeout, read=s.read_timeout, write=s.read_timeout, pool=None
            ),
            limits=httpx.Limits(
                max_connections=max(s.concurrency, s.per_host),
                max_keepalive_connections=max(s.concurrency, s.per_host),
            ),
            follow_redirects=False,
            headers={"User-Agent": s.user_agent, "Accept-Encoding": "gzip, deflate"},
            transport=transport,
            trust_env=False,
            verify=_tls_context(),
        )
        self._hosts = HostLimiter(s.per_host, s.host_gap, blocked_hosts)
        self._resolve = resolver
        self._abort = threading.Event()

    def abort(self) -> None:
        """Give up every request in flight and refuse new ones (they raise Abandoned)."""
        self._abort.set()
        self._client.close()

    def __enter__(self) -> Fetcher:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._client.close()

    @property
    def blocked_hosts(self) -> dict[str, datetime]:
        """Hosts that asked (Retry-After) not to be asked again before a time."""
        return dict(self._hosts.blocked)

    def get(
        self,
        url: str,
        *,
        kind: str = "feed",
        etag: str | None = None,
        last_modified: str | None = None,
        max_bytes: int | None = None,
        trusted: bool = True,
        user_agent: str | None = None,
        allow_private_hosts: bool = False,
        log: list[FetchRecord] | None = None,
    ) -> FetchResult:
        """GET ``url`` following redirects; 2xx and 304 return, anything else raises FetchError.

        ``trusted=False`` (URLs taken from feed content) refuses non-http(s) schemes and
        hosts on private addresses at every hop, unless the settings allow private hosts.
        """
        limit = max_bytes or (
            self.settings.max_feed_bytes if kind == "feed" else self.settings.max_page_bytes
        )
        headers = {"Accept": FEED_ACCEPT if kind == "feed" else PAGE_ACCEPT}
        if etag:
            headers["If-None-Match"] = etag
        if last_modified:
            headers["If-Modified-Since"] = last_modified
        if user_agent:
            headers["User-Agent"] = user_agent
        log = log if log is not None else []
        redirects: list[Redirect] = []
        seen = {url}
        current = url
        trusted = trusted or allow_private_hosts or self.settings.allow_private_hosts
        while True:
            self._check_url(current, trusted)
            status, response_headers, body, ms = self._exchange_retrying(
                current, kind, headers, limit, log
            )
            if status in REDIRECT_STATUSES and "location" in response_headers:
                target = self._redirect_target(current, response_headers["location"])
                redirects.append(Redirect(status, current, target))
                if target in seen:
                    raise RedirectError(f"redirect loop at {target}", url=url)
                if len(redirects) > self.settings.max_redirects:
                    raise RedirectError(
                        f"more than {self.settings.max_redirects} redirects", url=url
                    )
                seen.add(target)
                current = target
                continue
            if status == 304 or 200 <= status < 300:
                return FetchResult(
                    url=url,
                    final_url=current,
                    status=status,
                    headers=response_headers,
                    body=body,
                    elapsed_ms=ms,
                    redirects=tuple(redirects),
                )
            raise HTTPStatusError(
                status,
                _status_reason(status),
                url=current,
                retry_after=response_headers.get("retry-after"),
            )

    def _exchange_retrying(
        self, url: str, kind: str, headers: dict[str, str], limit: int, log: list[FetchRecord]
    ) -> tuple[int, dict[str, str], bytes, int]:
        """One hop, retried with back-off on transient failures; honours Retry-After."""
        host = urlsplit(url).hostname or ""
        delays = retry_delays(self.settings.retries, base=self.settings.retry_base)
        for attempt in range(len(delays) + 1):
            last = attempt == len(delays)
            self._hosts.check(host)
            try:
                status, response_headers, body, ms = self._exchange(url, kind, headers, limit, log)
            except FetchError as e:
                if last or not e.transient:
                    raise
                time.sleep(delays[attempt])
                continue
            retry_after = parse_retry_after(response_headers.get("retry-after"), datetime.now(UTC))
            if status in (429, 503) and retry_after is not None:
                self._hosts.block(host, retry_after)
                return status, response_headers, body, ms
            if is_transient_status(status) and status >= 400 and not last:
                time.sleep(delays[attempt])
                continue
            return status, response_headers, body, ms
        raise AssertionError("unreachable")  # pragma: no cover

    def _check_url(self, url: str, trusted: bool) -> None:
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise BlockedURL(f"blocked: not an http(s) URL: {url[:200]}", url=url)
        if trusted:
            return
        address = private_address(parts.hostname, self._resolve)
        if address:
            raise BlockedURL(f"blocked: private address {address}", url=url)

    @staticmethod
    def _redirect_target(current: str, location: str) -> str:
        target = urljoin(current, location.strip())
        if urlsplit(target).scheme not in ("http", "https"):
            raise RedirectError(f"redirect to a non-http(s) URL: {target[:200]}", url=current)
        return target

    def _exchange(
        self,
        url: str,
        kind: str,
        headers: dict[str, str],
        limit: int,
        log: list[FetchRecord],
    ) -> tuple[int, dict[str, str], bytes, int]:
        """One request, logged. Returns status, lower-cased headers, decoded body, ms."""
        if self._abort.is_set():
            raise Abandoned(url=url)
        started_at, start = _now_iso(), time.monotonic()
        status: int | None = None
        size = 0
        try:
            host = urlsplit(url).hostname or ""
            with self._hosts.slot(host), self._client.stream("GET", url, headers=headers) as r:
                status = r.status_code
                response_headers = {k.lower(): v for k, v in r.headers.items()}
                body = b""
                if status == 200 or (200 < status < 300 and status != 204):
                    body = self._read_body(r, response_headers, limit, start)
                elif _bodiless(status, response_headers):
                    r.read()  # reaches the end of the message: the connection is reused
                size = len(body)
        except FetchError as e:
            log.append(_record(url, kind, started_at, start, status, size, str(e)))
            raise
        except httpx.HTTPError as e:
            if self._abort.is_set():
                raise Abandoned(url=url) from e
            error = self._translate(e, url)
            log.append(_record(url, kind, started_at, start, status, size, str(error)))
            raise error from e
        except Exception as e:  # e.g. "the client has been closed" after abort()
            if self._abort.is_set():
                raise Abandoned(url=url) from e
            raise
        ms = int((time.monotonic() - start) * 1000)
        error_text = None if status < 400 else _status_reason(status)
        log.append(FetchRecord(url, kind, started_at, ms, status, size, error_text))
        return status, response_headers, body, ms

    def _read_body(
        self, response: httpx.Response, headers: dict[str, str], limit: int, start: float
    ) -> bytes:
        declared = headers.get("content-length", "")
        encoding = headers.get("content-encoding", "")
        if declared.isdigit() and not encoding and int(declared) > limit:
            raise BodyTooLarge(f"body over {_format_size(limit)}")
        decoder = _Decoder(encoding, limit)
        chunks: list[bytes] = []
        raw_size = size = 0
        for chunk in response.iter_raw():
            if self._abort.is_set():
                raise Abandoned()
            if time.monotonic() - start > self.settings.deadline:
                raise FetchTimeout(  # not transient: a drip would only drip again
                    f"timeout: no complete response after {self.settings.deadline:g} s"
                )
            raw_size += len(chunk)
            if raw_size > limit:
                raise BodyTooLarge(f"body over {_format_size(limit)}")
            out = decoder.feed(chunk, size)
            size += len(out)
            if size > limit:
                raise BodyTooLarge(f"body over {_format_size(limit)} (decompressed)")
            chunks.append(out)
        chunks.append(decoder.flush())
        body = b"".join(chunks)
        if not encoding and body[:2] == b"\x1f\x8b":
            body = _gunzip_sniffed(body, limit)
        return body

    def _translate(self, e: httpx.HTTPError, url: str) -> FetchError:
        s = self.settings
        if isinstance(e, httpx.ConnectTimeout):
            return FetchTimeout(
                f"timeout: no connection after {s.connect_timeout:g} s", url=url, transient=True
            )
        if isinstance(e, httpx.TimeoutException):
            return FetchTimeout(
                f"timeout: no data for {s.read_timeout:g} s", url=url, transient=True
            )
        if isinstance(e, httpx.ConnectError):
            return FetchError(f"cannot connect: {_first_line(e)}", url=url, transient=True)
        if isinstance(e, httpx.RemoteProtocolError | httpx.ReadError | httpx.WriteError):
            return FetchError(f"connection broken: {_first_line(e)}", url=url, transient=True)
        if isinstance(e, httpx.DecodingError):
            return FetchError(f"bad body encoding: {_first_line(e)}", url=url)
        if isinstance(e, httpx.UnsupportedProtocol | httpx.InvalidURL):
            return BlockedURL(f"bad URL: {_first_line(e)}", url=url)
        return FetchError(f"{type(e).__name__}: {_first_line(e)}", url=url)


def _bodiless(status: int, headers: dict[str, str]) -> bool:
    """A response that ends with its headers (a 304, a 204, or an empty body).

    Closing a response whose end was never read closes its connection too; these are read
    to their end (at once: there is nothing to wait for) so that the next poll of the host
    reuses the connection instead of paying a new TCP and TLS handshake.
    """
    return status in (204, 304) or headers.get("content-length", "").strip() == "0"


def _record(
    url: str, kind: str, started_at: str, start: float, status: int | None, size: int, error: str
) -> FetchRecord:
    return FetchRecord(
        url, kind, started_at, int((time.monotonic() - start) * 1000), status, size, error
    )


def _first_line(e: BaseException) -> str:
    text = re.sub(r"\[Errno -?\d+\]\s*", "", str(e)).strip() or type(e).__name__
    return text.splitlines()[0][:300]


_REASONS = {
    401: "HTTP 401 unauthorized",
    403: "HTTP 403 forbidden (the host may block unknown user agents)",
    404: "HTTP 404 not found",
    410: "HTTP 410 gone",
    429: "HTTP 429 too many requests",
    500: "HTTP 500 server error",
    502: "HTTP 502 bad gateway",
    503: "HTTP 503 unavailable",
}


def _status_reason(status: int) -> str:
    return _REASONS.get(status, f"HTTP {status}")
