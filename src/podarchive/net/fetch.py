"""httpx's user (with its sibling net.download): one client per run, GETs, redirects, caps.

:class:`Fetcher` turns every outside failure into a :mod:`podarchive.core.errors` FetchError
with a short reason (``timeout after 30 s``, ``body over 50 MiB``, ``HTTP 404``), any URL
in it shortened, and logs every HTTP request it makes (one :class:`FetchRecord` per hop,
failures included; a get refused before any request, e.g. a blocked address, is one row too).

Redirects are followed by hand so that each hop can be checked (scheme, private
addresses for untrusted URLs, loops) and recorded. Bodies are streamed raw and
decompressed here with a cap on the *decompressed* size, so a gzip bomb costs at most
the cap.

The deadline (``settings.deadline``) is the budget of one ``get()``: connects, TLS
handshakes, status lines, headers and bodies of every hop and retry, and the back-off
sleeps between retries (a retry whose back-off would end past the deadline is not made).
Only the wait for the host's turn (per-host limit and gap, our own queue) is not counted.
It is enforced at every socket operation by :mod:`podarchive.net.netguard` (httpx's read
timeout is per chunk, so a server dripping a byte at a time would otherwise never end).

The address guard: untrusted URLs (``trusted=False``, private hosts not allowed) go
through their own connection pool, whose backend resolves each host once, refuses it if
*any* of its addresses is private, and connects to exactly the address it checked, at
every hop; a connection opened for a trusted request is never reused for them.

The per-host gap is measured from the moment a request's first bytes are written, so
slow connection setup cannot bunch the requests to one host. A close-delimited HTML page
that does not end like one is fetched once more before it is believed (see ``get``).
"""

from __future__ import annotations

import functools
import ipaddress
import random
import re
import ssl
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import closing, contextmanager
from dataclasses import dataclass
from datetime import datetime
from urllib.parse import urljoin, urlsplit

import certifi
import httpx

from podarchive.core.clock import utcnow
from podarchive.core.errors import (
    Abandoned,
    BlockedURL,
    BodyTooLarge,
    FetchError,
    FetchTimeout,
    HTTPStatusError,
    RedirectError,
    shorten,
)
from podarchive.core.settings import Settings
from podarchive.core.types import Exchange, FetchKind, FetchRecord, FetchResult, Redirect
from podarchive.net import netguard
from podarchive.net.hosts import HostLimiter, HostTurns
from podarchive.net.netguard import (
    AddressCheck,
    Resolver,
    is_private,
    private_address,
    system_resolver,
)
from podarchive.net.wire import _Decoder, _format_size, _gunzip_sniffed, exchange_of, now_stamp
from podarchive.rules.policy import is_transient_status, parse_retry_after, retry_delays

REDIRECT_STATUSES = frozenset({301, 302, 303, 307, 308})
FEED_ACCEPT = (
    "application/rss+xml, application/atom+xml, application/xml;q=0.9, text/xml;q=0.9, */*;q=0.5"
)
PAGE_ACCEPT = "text/html, application/xhtml+xml;q=0.9, */*;q=0.5"
TRANSCRIPT_ACCEPT = (
    "text/vtt, application/x-subrip, application/srt, application/json, text/html;q=0.8, "
    "text/plain;q=0.8, */*;q=0.5"
)
CHAPTERS_ACCEPT = "application/json+chapters, application/json, */*;q=0.5"
ACCEPT: dict[str, str] = {
    "feed": FEED_ACCEPT,
    "page": PAGE_ACCEPT,
    "transcript": TRANSCRIPT_ACCEPT,
    "chapters": CHAPTERS_ACCEPT,
}
RECORD_URL_LIMIT = 2048  # URLs longer than this are shortened in the fetch log
TRUNCATED = "truncated: connection closed before the end of the page (no Content-Length)"
__all__ = ["Fetcher", "FetchRecord", "HostLimiter", "HostTurns", "Resolver", "private_address"]


@functools.cache
def _tls_context() -> ssl.SSLContext:
    """One verified TLS context per process: building one costs ~18 ms, per client."""
    return ssl.create_default_context(cafile=certifi.where())


# one hop's answer: status, lower-cased headers, decoded body, ms, the exchange as on the wire
Answer = tuple[int, dict[str, str], bytes, int, Exchange]


class Fetcher:
    """Two httpx clients (trusted, untrusted URLs) for a whole run. Thread-safe; use as a
    context manager. ``resolver`` and ``address_blocked`` are the untrusted side's name
    resolution and address check (injectable for tests); ``hosts`` replaces the per-process
    :class:`HostLimiter` (the cluster's is held in its broker)."""

    def __init__(
        self,
        settings: Settings | None = None,
        *,
        transport: httpx.BaseTransport | None = None,
        resolver: Resolver = system_resolver,
        address_blocked: AddressCheck = is_private,
        blocked_hosts: dict[str, datetime] | None = None,
        hosts: HostTurns | None = None,
    ) -> None:
        self.settings = settings or Settings()
        s = self.settings
        limits = httpx.Limits(
            max_connections=max(s.concurrency, s.per_host),
            max_keepalive_connections=max(s.concurrency, s.per_host),
        )
        self._backends: list[netguard.GuardedBackend] = []
        if transport is None:
            backends = {
                True: netguard.GuardedBackend(),
                False: netguard.GuardedBackend(resolver, address_blocked),
            }
            self._backends = list(backends.values())
            self._clients = {
                trusted: self._client(netguard.guarded_transport(b, limits, _tls_context()))
                for trusted, b in backends.items()
            }
        else:  # a caller's transport: addresses are checked before the request only
            self._clients = dict.fromkeys((True, False), self._client(transport))
        self._dial_time_guard = transport is None
        self._hosts: HostTurns = hosts or HostLimiter(s.per_host, s.host_gap, blocked_hosts)
        self._resolve = resolver
        self._address_blocked = address_blocked
        self._abort = threading.Event()
        #: the retries' jitter: one generator, not one seeded from the system per request
        #: (20-200 µs of an unchanged poll's 1 ms, #30); ``uniform`` is safe across threads
        self._rng = random.Random()

    def _client(self, transport: httpx.BaseTransport) -> httpx.Client:
        s = self.settings
        client = httpx.Client(
            timeout=httpx.Timeout(
                connect=s.connect_timeout, read=s.read_timeout, write=s.read_timeout, pool=None
            ),
            follow_redirects=False,
            headers={"User-Agent": s.user_agent, "Accept-Encoding": "gzip, deflate"},
            transport=transport,
            trust_env=False,
        )
        client._cookies = _Cookies()  # httpx 0.28's jar (tests/test_fetch_cookies.py)
        return client

    def abort(self) -> None:
        """Give up every request in flight and refuse new ones (they raise Abandoned).

        The sockets in use are shut down, so a thread blocked reading a slow server returns at
        once instead of when its timeout runs out (which held up the process's exit).
        """
        self._abort.set()
        for backend in self._backends:
            backend.abort()
        self.close()

    def __enter__(self) -> Fetcher:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        for client in set(self._clients.values()):
            client.close()

    @property
    def blocked_hosts(self) -> dict[str, datetime]:
        """Hosts that asked (Retry-After) not to be asked again before a time."""
        return dict(self._hosts.blocked)

    def get(
        self,
        url: str,
        *,
        kind: FetchKind = "feed",
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
        The whole call, redirects and retries included, ends within ``settings.deadline``.
        A page that may have been cut short is fetched once more (:meth:`_confirm_page`).

        Every request is appended to ``log``; a get refused before any request was sent (a
        blocked address or scheme, a host name that does not resolve, a host's Retry-After)
        appends one row with no status, so each get leaves at least one row.
        """
        limit = max_bytes or self._limit(kind)
        headers = {"Accept": ACCEPT[kind]}
        if etag:
            headers["If-None-Match"] = etag
        if last_modified:
            headers["If-Modified-Since"] = last_modified
        if user_agent:
            headers["User-Agent"] = user_agent
        trusted = trusted or allow_private_hosts or self.settings.allow_private_hosts
        records = log if log is not None else []
        hop, logged = _Hop(kind, headers, limit, trusted, records), len(records)
        started_at, start = now_stamp(), time.monotonic()
        try:
            with netguard.budget(self.settings.deadline):
                return self._follow(url, hop)
        except Abandoned:
            raise
        except FetchError as e:
            if len(records) == logged:  # refused before a request was sent: a row all the same
                target = e.url or url
                records.append(_record(target, kind, started_at, start, None, 0, str(e)))
            raise

    def _limit(self, kind: FetchKind) -> int:
        """The size cap of a kind of body (after decompression)."""
        if kind == "feed":
            return self.settings.max_feed_bytes
        return self.settings.max_page_bytes if kind == "page" else self.settings.max_file_bytes

    def _follow(self, url: str, hop: _Hop) -> FetchResult:
        """Follow redirects from ``url``; each hop checked, retried, recorded."""
        redirects: list[Redirect] = []
        exchanges: list[Exchange] = []
        seen = {url}
        current = url
        while True:
            host = self._check_url(current, hop.trusted)
            status, response_headers, body, ms, exchange = self._exchange_retrying(
                current, host, hop
            )
            if status in REDIRECT_STATUSES and "location" in response_headers:
                exchanges.append(exchange)
                target = self._redirect_target(current, response_headers["location"])
                redirects.append(Redirect(status, current, target))
                if target in seen:
                    raise RedirectError(f"redirect loop at {shorten(target)}", url=url)
                if len(redirects) > self.settings.max_redirects:
                    raise RedirectError(
                        f"more than {self.settings.max_redirects} redirects", url=url
                    )
                seen.add(target)
                current = target
                continue
            if status == 200 and hop.kind != "feed" and _maybe_cut(response_headers, body):
                status, response_headers, body, ms, exchange = self._confirm_page(
                    current, host, hop, body
                )
            exchanges.append(exchange)
            if status == 304 or 200 <= status < 300:
                return FetchResult(
                    url=url,
                    final_url=current,
                    status=status,
                    headers=response_headers,
                    body=body,
                    elapsed_ms=ms,
                    redirects=tuple(redirects),
                    exchanges=tuple(exchanges),
                )
            raise HTTPStatusError(
                status,
                _status_reason(status),
                url=current,
                retry_after=response_headers.get("retry-after"),
            )

    def _confirm_page(self, url: str, host: str, hop: _Hop, first: bytes) -> Answer:
        """Fetch a possibly cut page once more: a complete answer or the same bytes win.

        A close-delimited body looks complete to HTTP however early the connection closed,
        so otherwise half a page would be stored as the whole. Fails transiently (the page
        is tried again on a later run) when the second answer is different and no better.
        """
        second = self._exchange_retrying(url, host, hop)
        status, headers, body, _, _ = second
        if status != 200 or body == first or not _maybe_cut(headers, body):
            return second
        raise FetchError(TRUNCATED, url=url, transient=True)

    def _exchange_retrying(self, url: str, host: str, hop: _Hop) -> Answer:
        """One hop to ``host``, retried with back-off on transient failures; honours
        Retry-After."""
        delays = retry_delays(self.settings.retries, base=self.settings.retry_base, rng=self._rng)
        for attempt in range(len(delays) + 1):
            last = attempt == len(delays)
            self._hosts.check(host)
            try:
                answer = self._exchange(url, host, hop)
            except FetchError as e:
                if last or not e.transient or not _back_off(delays[attempt]):
                    raise
                continue
            status, response_headers = answer[0], answer[1]
            header = response_headers.get("retry-after")  # utcnow() only when there is one
            retry_after = parse_retry_after(header, utcnow()) if header is not None else None
            if status in (429, 503) and retry_after is not None:
                self._hosts.block(host, retry_after)
                return answer
            transient = is_transient_status(status) and status >= 400
            if transient and not last and _back_off(delays[attempt]):
                continue
            return answer
        raise AssertionError("unreachable")  # pragma: no cover

    def _check_url(self, url: str, trusted: bool) -> str:
        """Scheme, and for untrusted URLs the address guard where the dial cannot do it;
        returns the URL's host name.

        A host name is resolved and checked where it is dialled (one resolution, so that
        the address checked is the address used); address literals are checked here.
        """
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise BlockedURL(f"blocked: not an http(s) URL: {shorten(url)}", url=url)
        host = parts.hostname
        if trusted or (self._dial_time_guard and not _is_address(host)):
            return host
        address = private_address(host, self._resolve, self._address_blocked)
        if address:
            raise BlockedURL(f"blocked: private address {address}", url=url)
        return host

    @staticmethod
    def _redirect_target(current: str, location: str) -> str:
        target = urljoin(current, location.strip())
        if urlsplit(target).scheme not in ("http", "https"):
            raise RedirectError(f"redirect to a non-http(s) URL: {shorten(target)}", url=current)
        return target

    def _exchange(self, url: str, host: str, hop: _Hop) -> Answer:
        """One request to ``host``, logged. Returns status, lower-cased headers, decoded body,
        ms and the exchange as sent and received."""
        if self._abort.is_set():
            raise Abandoned(url=url)
        started_at, start = now_stamp(), time.monotonic()
        status: int | None = None
        size = 0
        client = self._clients[hop.trusted]
        try:
            request = client.build_request("GET", url, headers=hop.headers)
            with self._turn(host) as sent, closing(client.send(request, stream=True)) as r:
                sent()  # for transports that do not report the first write themselves
                status = r.status_code
                exchange = exchange_of(request, r, started_at)
                response_headers = {k.lower(): v for k, v in r.headers.items()}
                body = self._read_body(r, response_headers, hop.limit)
                size = len(body)
        except httpx.InvalidURL as e:
            error: FetchError = _bad_url(e, url)
            hop.log.append(_record(url, hop.kind, started_at, start, status, size, str(error)))
            raise error from e
        except FetchError as e:
            e.url = e.url or url
            hop.log.append(_record(url, hop.kind, started_at, start, status, size, str(e)))
            raise
        except httpx.HTTPError as e:
            if self._abort.is_set():
                raise Abandoned(url=url) from e
            error = self._translate(e, url)
            hop.log.append(_record(url, hop.kind, started_at, start, status, size, str(error)))
            raise error from e
        except Exception as e:  # e.g. "the client has been closed" after abort()
            if self._abort.is_set():
                raise Abandoned(url=url) from e
            text = f"{type(e).__name__}: {_first_line(e)}"
            hop.log.append(_record(url, hop.kind, started_at, start, status, size, text))
            raise
        error_text = None if status < 400 else _status_reason(status)
        hop.log.append(_record(url, hop.kind, started_at, start, status, size, error_text))
        ms = int((time.monotonic() - start) * 1000)
        return status, response_headers, body, ms, exchange

    @contextmanager
    def _turn(self, host: str) -> Iterator[Callable[[], None]]:
        """The host's turn (limit and gap); the wait for it is not charged to the deadline."""
        budget = netguard.current_budget()
        waiting_since = time.monotonic()
        with self._hosts.slot(host) as sent:
            if budget is None:
                yield sent
                return
            budget.pause(time.monotonic() - waiting_since)
            budget.on_sent = sent  # called by the first write on the socket
            try:
                yield sent
            finally:
                budget.on_sent = None

    def _read_body(self, response: httpx.Response, headers: dict[str, str], limit: int) -> bytes:
        """A 2xx answer's body (not a 204's), read within ``limit``; else none."""
        if not 200 <= response.status_code < 300 or response.status_code == 204:
            if _bodiless(response.status_code, headers):
                response.read()  # reaches the end of the message: the connection is reused
            return b""
        declared = headers.get("content-length", "")
        encoding = headers.get("content-encoding", "")
        if declared.isdigit() and not encoding and int(declared) > limit:
            raise BodyTooLarge(f"body over {_format_size(limit)}")
        decoder = _Decoder(encoding, limit)
        budget = netguard.current_budget()
        chunks: list[bytes] = []
        raw_size = size = 0
        for chunk in response.iter_raw():
            if self._abort.is_set():
                raise Abandoned()
            if budget is not None:
                budget.check()
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
        if isinstance(e, httpx.RemoteProtocolError) and "location header" in str(e):
            reason = _first_line(e).split(": ", 1)[-1].rstrip(".")
            return RedirectError(f"bad redirect: unusable Location ({reason})", url=url)
        if isinstance(e, httpx.RemoteProtocolError | httpx.ReadError | httpx.WriteError):
            return FetchError(f"connection broken: {_first_line(e)}", url=url, transient=True)
        if isinstance(e, httpx.DecodingError):
            return FetchError(f"bad body encoding: {_first_line(e)}", url=url)
        if isinstance(e, httpx.UnsupportedProtocol):
            return BlockedURL(f"bad URL: {_first_line(e)}", url=url)
        return FetchError(f"{type(e).__name__}: {_first_line(e)}", url=url)


class _Cookies(httpx.Cookies):
    """httpx's cookie jar, which reads a response only when it sets a cookie (#30).

    httpx hands every response to the jar, which wraps request and response for
    ``http.cookiejar`` (the URL parsed again) before finding no ``Set-Cookie``: a tenth of a
    304's CPU in the client. Cookies set are kept and sent back as before.
    """

    def extract_cookies(self, response: httpx.Response) -> None:
        headers = response.headers
        if "set-cookie" in headers or "set-cookie2" in headers:
            super().extract_cookies(response)


@dataclass(frozen=True, slots=True)
class _Hop:
    """What every request of one ``get()`` shares."""

    kind: str
    headers: dict[str, str]
    limit: int
    trusted: bool
    log: list[FetchRecord]


def _back_off(delay: float) -> bool:
    """Sleep ``delay`` before a retry, unless the retry would start past the deadline."""
    budget = netguard.current_budget()
    if budget is not None and budget.left() <= delay:
        return False
    time.sleep(delay)
    return True


def _is_address(host: str) -> bool:
    try:
        ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        return False
    return True


def _bad_url(e: httpx.InvalidURL, url: str) -> BlockedURL:
    reason = _first_line(e).rstrip(".")
    if "too long" in reason:
        reason += f" ({len(url)} characters)"
    return BlockedURL(f"bad URL: {reason}: {shorten(url)}", url=url)


def _maybe_cut(headers: dict[str, str], body: bytes) -> bool:
    """A close-delimited HTML body (no Content-Length, not chunked) that does not end like one."""
    if "content-length" in headers or "chunked" in headers.get("transfer-encoding", "").lower():
        return False
    content_type = headers.get("content-type", "").lower()
    looks_html = body[:1024].lstrip().lower().startswith((b"<!doctype html", b"<html"))
    if "html" not in content_type and (content_type or not looks_html):
        return False
    return not _ends_like_html(body)


def _ends_like_html(body: bytes) -> bool:
    """``</html>`` or ``</body>`` near the end, trailing whitespace and comments aside."""
    tail = body[-8192:].rstrip()
    while tail.endswith(b"-->") and (opening := tail.rfind(b"<!--")) >= 0:
        tail = tail[:opening].rstrip()
    end = tail[-512:].lower()
    return b"</html" in end or b"</body" in end


def _bodiless(status: int, headers: dict[str, str]) -> bool:
    """A response that ends with its headers (a 304, a 204, or an empty body).

    Closing a response whose end was never read closes its connection too; these are read
    to their end (at once: there is nothing to wait for) so that the next poll of the host
    reuses the connection instead of paying a new TCP and TLS handshake.
    """
    return status in (204, 304) or headers.get("content-length", "").strip() == "0"


def _record(
    url: str,
    kind: str,
    started_at: str,
    start: float,
    status: int | None,
    size: int,
    error: str | None,
) -> FetchRecord:
    ms = int((time.monotonic() - start) * 1000)
    return FetchRecord(shorten(url, RECORD_URL_LIMIT), kind, started_at, ms, status, size, error)


def _first_line(e: BaseException) -> str:
    """The first line of an outside error's text, without errno or C source references."""
    text = re.sub(r"\[Errno -?\d+\]\s*|\s*\(_ssl\.c:\d+\)", "", str(e)).strip()
    return shorten((text or type(e).__name__).splitlines()[0], 300)


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
