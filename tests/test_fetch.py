"""The fetch adapter against a real HTTP server on 127.0.0.1."""

from __future__ import annotations

import gzip
import time
import zlib
from http.server import BaseHTTPRequestHandler

import pytest
from loopback import LoopbackSite

from podarchive import USER_AGENT
from podarchive.core.clock import now_iso, parse_iso
from podarchive.core.errors import (
    BlockedURL,
    BodyTooLarge,
    FetchError,
    FetchTimeout,
    HTTPStatusError,
    RedirectError,
)
from podarchive.core.settings import Settings
from podarchive.core.types import FetchRecord
from podarchive.net.fetch import Fetcher, private_address

FAST = Settings(connect_timeout=2, read_timeout=1, deadline=3, retries=0, host_gap=0)


def redirect(site: LoopbackSite, path: str, to: str, status: int = 301) -> None:
    def handler(h: BaseHTTPRequestHandler) -> None:
        h.send_response(status)
        h.send_header("Location", to)
        h.send_header("Content-Length", "0")
        h.end_headers()

    site.handle(path, handler)


def test_get_sends_user_agent_and_returns_body(site: LoopbackSite) -> None:
    site.serve("/feed", b"<rss/>", etag='"v1"', last_modified="Mon, 06 Jun 2022 13:00:00 GMT")
    log: list[FetchRecord] = []
    with Fetcher(FAST) as fetcher:
        result = fetcher.get(site.url("/feed"), log=log)
    assert result.status == 200
    assert result.body == b"<rss/>"
    assert result.etag == '"v1"'
    assert result.last_modified == "Mon, 06 Jun 2022 13:00:00 GMT"
    assert site.requests[0].headers["user-agent"] == USER_AGENT
    assert "podarchive/" in USER_AGENT
    assert "+http" in USER_AGENT
    assert [(r.status, r.bytes, r.error) for r in log] == [(200, 6, None)]


def test_conditional_get_gives_304(site: LoopbackSite) -> None:
    site.serve("/feed", b"<rss/>", etag='"v1"')
    with Fetcher(FAST) as fetcher:
        result = fetcher.get(site.url("/feed"), etag='"v1"')
    assert result.not_modified
    assert result.body == b""
    assert site.requests[0].headers["if-none-match"] == '"v1"'


def test_each_request_is_stamped_with_the_second_it_started(site: LoopbackSite) -> None:
    """(#30) The stamps are formatted once a second, and still read the second of each
    request, as core.clock writes them; a refused get's row too."""
    site.serve("/feed", b"<rss/>", etag='"v1"')
    log: list[FetchRecord] = []
    with Fetcher(FAST) as fetcher:
        before = now_iso()
        for _ in range(3):
            fetcher.get(site.url("/feed"), etag='"v1"', log=log)
        with pytest.raises(BlockedURL):
            fetcher.get("ftp://ex.example/feed", log=log)
        after = now_iso()
    assert [r.status for r in log] == [304, 304, 304, None]
    assert all(before <= r.started_at <= after for r in log)
    assert all(parse_iso(r.started_at) is not None for r in log)


def test_last_modified_is_sent_back(site: LoopbackSite) -> None:
    stamp = "Mon, 06 Jun 2022 13:00:00 GMT"
    site.serve("/feed", b"<rss/>", last_modified=stamp)
    with Fetcher(FAST) as fetcher:
        assert fetcher.get(site.url("/feed"), last_modified=stamp).status == 304


def test_gzip_is_decoded(site: LoopbackSite) -> None:
    body = b"<rss>" + b"x" * 100_000 + b"</rss>"
    site.serve("/feed", body, gzip=True)
    with Fetcher(FAST) as fetcher:
        assert fetcher.get(site.url("/feed")).body == body
    assert "gzip" in site.requests[0].headers["accept-encoding"]


def test_gzip_bytes_without_content_encoding_are_decoded(site: LoopbackSite) -> None:
    site.serve("/feed", gzip.compress(b"<rss/>"))
    with Fetcher(FAST) as fetcher:
        assert fetcher.get(site.url("/feed")).body == b"<rss/>"


def test_deflate_is_decoded(site: LoopbackSite) -> None:
    site.serve("/feed", zlib.compress(b"<rss/>"), headers={"Content-Encoding": "deflate"})
    with Fetcher(FAST) as fetcher:
        assert fetcher.get(site.url("/feed")).body == b"<rss/>"


def test_redirects_are_followed_and_recorded(site: LoopbackSite) -> None:
    site.serve("/new", b"<rss/>")
    redirect(site, "/old", "/middle", 301)
    redirect(site, "/middle", site.url("/new"), 302)
    log: list[FetchRecord] = []
    with Fetcher(FAST) as fetcher:
        result = fetcher.get(site.url("/old"), log=log)
    assert result.final_url == site.url("/new")
    assert [(r.status, r.location) for r in result.redirects] == [
        (301, site.url("/middle")),
        (302, site.url("/new")),
    ]
    assert [r.status for r in log] == [301, 302, 200]


def test_redirect_loop_is_an_error(site: LoopbackSite) -> None:
    redirect(site, "/a", "/b")
    redirect(site, "/b", "/a")
    with Fetcher(FAST) as fetcher, pytest.raises(RedirectError, match="redirect loop"):
        fetcher.get(site.url("/a"))


def test_too_many_redirects(site: LoopbackSite) -> None:
    for i in range(12):
        redirect(site, f"/r{i}", f"/r{i + 1}", 302)
    with Fetcher(FAST) as fetcher, pytest.raises(RedirectError, match="more than 10 redirects"):
        fetcher.get(site.url("/r0"))


def test_redirect_to_another_scheme_is_refused(site: LoopbackSite) -> None:
    redirect(site, "/a", "file:///etc/passwd")
    with Fetcher(FAST) as fetcher, pytest.raises(RedirectError, match="non-http"):
        fetcher.get(site.url("/a"))


@pytest.mark.parametrize(("status", "text"), [(404, "HTTP 404 not found"), (410, "HTTP 410 gone")])
def test_error_status(site: LoopbackSite, status: int, text: str) -> None:
    site.serve("/feed", b"nope", status=status)
    log: list[FetchRecord] = []
    with Fetcher(FAST) as fetcher, pytest.raises(HTTPStatusError) as info:
        fetcher.get(site.url("/feed"), log=log)
    assert info.value.status == status
    assert str(info.value) == text
    assert log[0].status == status


def test_retry_after_is_kept(site: LoopbackSite) -> None:
    site.serve("/feed", b"", status=429, headers={"Retry-After": "120"})
    with Fetcher(FAST) as fetcher, pytest.raises(HTTPStatusError) as info:
        fetcher.get(site.url("/feed"))
    assert info.value.retry_after == "120"


def test_body_cap(site: LoopbackSite) -> None:
    site.serve("/big", b"x" * 5000)
    with Fetcher(FAST) as fetcher, pytest.raises(BodyTooLarge, match="body over 1000 bytes"):
        fetcher.get(site.url("/big"), max_bytes=1000)


def test_body_cap_without_content_length(site: LoopbackSite) -> None:
    def chunked(h: BaseHTTPRequestHandler) -> None:
        h.send_response(200)
        h.send_header("Transfer-Encoding", "chunked")
        h.end_headers()
        for _ in range(10):
            h.wfile.write(b"400\r\n" + b"x" * 1024 + b"\r\n")
        h.wfile.write(b"0\r\n\r\n")

    site.handle("/big", chunked)
    with Fetcher(FAST) as fetcher, pytest.raises(BodyTooLarge):
        fetcher.get(site.url("/big"), max_bytes=4096)


def test_gzip_bomb_is_capped_on_decompressed_size(site: LoopbackSite) -> None:
    bomb = gzip.compress(b"\0" * (50 * 1024 * 1024))  # ~50 KB on the wire
    assert len(bomb) < 100_000
    site.serve("/bomb", bomb, headers={"Content-Encoding": "gzip"})
    with Fetcher(FAST) as fetcher, pytest.raises(BodyTooLarge, match="decompressed"):
        fetcher.get(site.url("/bomb"), max_bytes=1024 * 1024)


def test_truncated_gzip(site: LoopbackSite) -> None:
    site.serve("/feed", gzip.compress(b"<rss>" * 1000)[:-20], headers={"Content-Encoding": "gzip"})
    with Fetcher(FAST) as fetcher, pytest.raises(FetchError, match="truncated gzip"):
        fetcher.get(site.url("/feed"))


def test_stalled_server_times_out(site: LoopbackSite) -> None:
    def stall(h: BaseHTTPRequestHandler) -> None:
        h.send_response(200)
        h.send_header("Content-Length", "100")
        h.end_headers()
        h.wfile.write(b"<rss>")
        h.wfile.flush()
        time.sleep(2)

    site.handle("/stall", stall)
    start = time.monotonic()
    with Fetcher(FAST) as fetcher, pytest.raises(FetchTimeout, match="timeout: no data for 1 s"):
        fetcher.get(site.url("/stall"))
    assert time.monotonic() - start < 30  # a wide bound: the message says which timeout fired


def test_drip_feed_hits_the_total_deadline(site: LoopbackSite) -> None:
    def drip(h: BaseHTTPRequestHandler) -> None:
        h.send_response(200)
        h.send_header("Content-Length", "1000")
        h.end_headers()
        for _ in range(1000):
            try:
                h.wfile.write(b"x")
                h.wfile.flush()
            except OSError:
                return
            time.sleep(0.1)

    site.handle("/drip", drip)
    settings = Settings(connect_timeout=2, read_timeout=1, deadline=1, retries=0, host_gap=0)
    start = time.monotonic()
    with Fetcher(settings) as fetcher, pytest.raises(FetchTimeout, match="after 1 s"):
        fetcher.get(site.url("/drip"))
    assert time.monotonic() - start < 30  # 1,000 bytes at 0.1 s would take 100 s


def test_reset_mid_body(site: LoopbackSite) -> None:
    def reset(h: BaseHTTPRequestHandler) -> None:
        h.send_response(200)
        h.send_header("Content-Length", "10000")
        h.end_headers()
        h.wfile.write(b"<rss>")
        h.wfile.flush()
        h.close_connection = True
        h.connection.close()

    site.handle("/reset", reset)
    with Fetcher(FAST) as fetcher, pytest.raises(FetchError, match="connection broken"):
        fetcher.get(site.url("/reset"))


def test_dead_host_fails_with_one_line() -> None:
    with Fetcher(FAST) as fetcher, pytest.raises(FetchError) as info:
        fetcher.get("http://127.0.0.1:9/feed")  # discard port: nothing listens
    assert str(info.value).startswith("cannot connect")
    assert "\n" not in str(info.value)


def test_untrusted_urls_may_not_reach_private_addresses(site: LoopbackSite) -> None:
    site.serve("/page", b"<html/>")
    with Fetcher(FAST) as fetcher:
        with pytest.raises(BlockedURL, match="blocked: private address 127.0.0.1"):
            fetcher.get(site.url("/page"), kind="page", trusted=False)
        assert fetcher.get(site.url("/page"), kind="page", trusted=True).status == 200
        allowed = fetcher.get(site.url("/page"), trusted=False, allow_private_hosts=True)
        assert allowed.status == 200
    assert site.hits("/page") == 2


def test_untrusted_redirect_hop_into_private_space_is_checked(site: LoopbackSite) -> None:
    # Only loopback is ever dialled: here 127.0.0.1 plays a public address and every
    # other one a private address. "localhost" resolves to the "public" 127.0.0.1; its
    # redirect to the "private" 127.0.0.3 must be refused before that hop is requested.
    redirect(site, "/hop", f"http://127.0.0.3:{site.port}/secret", 302)
    site.serve("/secret", b"internal")
    pretend_public = lambda host: ["127.0.0.1"]  # noqa: E731
    only_one_public = lambda address: str(address) != "127.0.0.1"  # noqa: E731
    with Fetcher(FAST, resolver=pretend_public, address_blocked=only_one_public) as fetcher:
        with pytest.raises(BlockedURL, match="private address 127.0.0.3"):
            fetcher.get(f"http://localhost:{site.port}/hop", kind="page", trusted=False)
        with pytest.raises(BlockedURL, match="not an http"):
            fetcher.get("gopher://podcast.example/x", trusted=False)
    assert site.hits("/hop") == 1
    assert site.hits("/secret") == 0


def test_private_address_detection() -> None:
    assert private_address("10.0.0.5") == "10.0.0.5"
    assert private_address("169.254.169.254") == "169.254.169.254"
    assert private_address("::1") == "::1"
    assert private_address("224.0.0.1") == "224.0.0.1"
    assert private_address("93.184.215.14") is None
    assert private_address("x.example", lambda h: ["192.168.1.2"]) == "192.168.1.2"
    assert private_address("x.example", lambda h: ["127.0.0.2"], lambda a: False) is None


def test_per_host_concurrency_and_gap(site: LoopbackSite) -> None:
    """At most ``per_host`` requests at once, their starts ``host_gap`` apart.

    Measured so that load cannot fail it: each request reaches the server after it was sent,
    and the k-th is sent at least k gaps after the test began, so the k-th arrival the
    server sees is at least k gaps after that (a delay only adds). Each request is held
    until two are in flight, so the limit is reached however the threads are scheduled.
    """
    import threading
    from concurrent.futures import ThreadPoolExecutor

    lock = threading.Lock()
    state = {"now": 0, "most": 0}
    starts: list[float] = []
    two_in_flight = threading.Event()

    def slow(h: BaseHTTPRequestHandler) -> None:
        with lock:
            state["now"] += 1
            state["most"] = max(state["most"], state["now"])
            starts.append(time.monotonic())
            if state["now"] >= 2:
                two_in_flight.set()
        two_in_flight.wait(10)  # the first waits for the second: the limit is reached
        time.sleep(0.2)
        with lock:
            state["now"] -= 1
        h.send_response(200)
        h.send_header("Content-Length", "2")
        h.end_headers()
        h.wfile.write(b"ok")

    site.handle("/slow", slow)
    settings = Settings(retries=0, per_host=2, host_gap=0.1, concurrency=8)
    began = time.monotonic()
    with Fetcher(settings) as fetcher, ThreadPoolExecutor(8) as pool:
        list(pool.map(lambda _: fetcher.get(site.url("/slow"), kind="page"), range(6)))
    assert state["most"] == 2
    late = [
        (k, round(t - began, 3)) for k, t in enumerate(sorted(starts)) if t - began < 0.1 * k - 1e-3
    ]
    assert late == [], "requests started less than 0.1 s apart"


def test_user_agent_can_be_set_per_request(site: LoopbackSite) -> None:
    site.serve("/feed", b"<rss/>")
    with Fetcher(FAST) as fetcher:
        fetcher.get(site.url("/feed"), user_agent="MyPodcastBot/1.0")
    assert site.requests[0].headers["user-agent"] == "MyPodcastBot/1.0"


def test_304s_keep_the_connection_alive(site: LoopbackSite) -> None:
    """A bodiless answer is read to its end, so the next request reuses the connection."""
    for k in range(3):
        site.serve(f"/f{k}", b"<rss/>", etag=f'"v{k}"')
    with Fetcher(Settings(host_gap=0, per_host=1)) as fetcher:
        for round_ in range(2):
            for k in range(3):
                result = fetcher.get(site.url(f"/f{k}"), etag=f'"v{k}"' if round_ else None)
                assert result.not_modified == bool(round_)
    assert len({r.port for r in site.requests}) == 1
