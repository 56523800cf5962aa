"""Hostile and broken servers, one scenario each, through the whole pipeline.

Each scenario feed is first archived while healthy, then turns hostile. On the second
run: the feed's state and message are specific, a healthy feed in the same run archives
normally, nothing archived earlier is lost, and the run ends within a time bound.
"""

from __future__ import annotations

import gzip
import sqlite3
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler
from pathlib import Path

import pytest
from loopback import LoopbackSite, serve_pytorch

from podarchive.core.settings import Settings
from podarchive.read.schedule_files import FeedSchedule
from podarchive.store import Archive
from podarchive.update.run import update_feeds

SETTINGS = Settings(
    connect_timeout=1,
    read_timeout=0.5,
    deadline=1.5,
    retries=1,
    retry_base=0.01,
    host_gap=0,
    max_feed_bytes=1024 * 1024,
    allow_private_hosts=True,
)
HEALTHY = (
    b'<?xml version="1.0" encoding="utf-8"?><rss version="2.0"><channel><title>Show</title>'
    + b"".join(
        f"<item><guid>ep-{i}</guid><title>Episode {i}</title>"
        f"<description>Notes {i}</description></item>".encode()
        for i in range(3)
    )
    + b"</channel></rss>"
)
Scenario = Callable[[LoopbackSite], None]


def handler(fn: Callable[[BaseHTTPRequestHandler], None]) -> Scenario:
    return lambda site: site.handle("/show.xml", fn)


def headers_then(
    body: bytes, length: int, pause: float = 0.0
) -> Callable[[BaseHTTPRequestHandler], None]:
    def send(h: BaseHTTPRequestHandler) -> None:
        h.send_response(200)
        h.send_header("Content-Type", "application/rss+xml")
        h.send_header("Content-Length", str(length))
        h.end_headers()
        try:
            h.wfile.write(body)
            h.wfile.flush()
            time.sleep(pause)
        except OSError:
            pass

    return send


def drip(h: BaseHTTPRequestHandler) -> None:
    h.send_response(200)
    h.send_header("Content-Length", "100000")
    h.end_headers()
    for _ in range(100):
        try:
            h.wfile.write(b" ")
            h.wfile.flush()
        except OSError:
            return
        time.sleep(0.05)


def header_drip(h: BaseHTTPRequestHandler) -> None:
    """The status line and headers one byte at a time: each read is quick, the whole never."""
    for (
        byte
    ) in b"HTTP/1.1 200 OK\r\nContent-Type: application/rss+xml\r\nContent-Length: 9\r\n\r\n":
        try:
            h.wfile.write(bytes([byte]))
            h.wfile.flush()
        except OSError:
            return
        time.sleep(0.1)
    h.close_connection = True


def reset(h: BaseHTTPRequestHandler) -> None:
    headers_then(HEALTHY[:40], 10_000)(h)
    h.close_connection = True
    h.connection.close()


def serve(body: bytes, **kwargs: object) -> Scenario:
    return lambda site: site.serve("/show.xml", body, **kwargs)  # type: ignore[arg-type]


def redirect_to(location: str, status: int) -> Callable[[BaseHTTPRequestHandler], None]:
    def send(h: BaseHTTPRequestHandler) -> None:
        h.send_response(status)
        h.send_header("Location", location)
        h.send_header("Content-Length", "0")
        h.end_headers()

    return send


def redirect_loop(site: LoopbackSite) -> None:
    site.handle("/show.xml", redirect_to("/loop.xml", 302))
    site.handle("/loop.xml", redirect_to("/show.xml", 302))


def redirect_chain(site: LoopbackSite) -> None:
    site.handle("/show.xml", redirect_to("/hop1.xml", 301))
    site.handle("/hop1.xml", redirect_to("/hop2.xml", 308))
    site.serve("/hop2.xml", HEALTHY.replace(b"<title>Show</title>", b"<title>Show moved</title>"))


SCENARIOS: dict[str, tuple[Scenario, str | None]] = {
    "slow drip": (handler(drip), "timeout: no complete response after 1.5 s"),
    "header drip": (handler(header_drip), "timeout: no complete response after 1.5 s"),
    "stall": (
        handler(headers_then(HEALTHY[:50], len(HEALTHY), pause=2)),
        "timeout: no data for 0.5 s",
    ),
    "reset mid-body": (handler(reset), "connection broken"),
    "truncated gzip": (
        serve(gzip.compress(HEALTHY * 50)[:-30], headers={"Content-Encoding": "gzip"}),
        "truncated gzip body",
    ),
    "gzip bomb": (
        serve(gzip.compress(b" " * (64 * 1024 * 1024)), headers={"Content-Encoding": "gzip"}),
        "body over 1 MiB (decompressed)",
    ),
    "huge body": (serve(b"<rss>" + b" " * (2 * 1024 * 1024)), "body over 1 MiB"),
    "brotli without asking": (
        serve(b"\x0b\x02\x80hello\x03", headers={"Content-Encoding": "br"}),
        "unsupported content-encoding 'br'",
    ),
    "redirect loop": (redirect_loop, "redirect loop at"),
    "301 chain": (redirect_chain, None),
    "429 with Retry-After": (
        serve(b"slow down", status=429, headers={"Retry-After": "3600"}),
        "HTTP 429 too many requests",
    ),
    "503": (serve(b"down", status=503), "HTTP 503 unavailable"),
    "410 gone": (serve(b"gone", status=410), "HTTP 410 gone"),
    "404": (serve(b"", status=404), "HTTP 404 not found"),
    "403 for our user agent": (serve(b"", status=403), "HTTP 403 forbidden"),
    "HTML instead of feed": (
        serve(
            b"<!DOCTYPE html><html><body><h1>Site down</h1></body></html>", content_type="text/html"
        ),
        "not a feed: got an HTML page",
    ),
    "empty body": (serve(b""), "empty body"),
    "not XML at all": (
        serve(b"\x00\x01binary junk" * 100, content_type="application/octet-stream"),
        "malformed XML",
    ),
}


def rows(db: Path, sql: str) -> list[tuple[object, ...]]:
    conn = sqlite3.connect(db)
    try:
        return conn.execute(sql).fetchall()
    finally:
        conn.close()


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_hostile_server(name: str, tmp_path: Path, site: LoopbackSite) -> None:
    scenario, message = SCENARIOS[name]
    db = tmp_path / "archive.db"
    # "localhost" and 127.0.0.1 count as two hosts, so a host-wide Retry-After on the
    # hostile one leaves the healthy feed alone.
    hostile_url = f"http://localhost:{site.port}/show.xml"
    site.serve("/show.xml", HEALTHY)
    with Archive(db) as archive:
        assert not update_feeds(
            archive, [FeedSchedule(url=hostile_url, name="Hostile")], settings=SETTINGS
        ).failed

    scenario(site)
    healthy_url = serve_pytorch(site)
    start = time.monotonic()
    with Archive(db) as archive:
        report = update_feeds(
            archive,
            [
                FeedSchedule(url=hostile_url, name="Hostile"),
                FeedSchedule(url=healthy_url, name="PyTorch"),
            ],
            settings=SETTINGS,
        )
    elapsed = time.monotonic() - start
    assert elapsed < 8, f"run took {elapsed:.1f} s"
    by_name = {f.label: f for f in report.feeds}
    assert by_name["PyTorch"].ok
    assert by_name["PyTorch"].stats.new == 9
    assert by_name["PyTorch"].pages_ok == 9
    hostile = by_name["Hostile"]
    (state,) = rows(db, "SELECT last_error, error_count, gone_at FROM feeds WHERE name = 'Hostile'")
    if message is None:
        assert hostile.ok, hostile.error
        assert state[0] is None
    else:
        assert hostile.error is not None
        assert hostile.error.startswith(message), hostile.error
        assert "\n" not in hostile.error
        assert state[0] == hostile.error
        assert state[1] == 1
    # nothing archived earlier is lost
    assert rows(
        db,
        "SELECT count(*) FROM episodes e JOIN feeds f ON f.id = e.feed_id WHERE f.name = 'Hostile'",
    ) == [(3,)]
    # every request is in the fetch log, failures with their reason
    if message is not None:
        logged = rows(
            db, "SELECT error FROM fetches WHERE url LIKE 'http://localhost%' AND error IS NOT NULL"
        )
        assert logged, "the failure is in the fetch log"
    if name == "410 gone":
        assert state[2] is not None
    if name == "429 with Retry-After":
        (host,) = rows(db, "SELECT host, not_before FROM hosts")
        assert host[0] == "localhost"
    if name == "301 chain":
        assert rows(db, "SELECT title FROM feeds WHERE name = 'Hostile'") == [("Show moved",)]
        assert rows(db, "SELECT status, target FROM feed_redirects") == [
            (301, site.url("/hop2.xml").replace("127.0.0.1", "localhost"))
        ]


def test_transient_errors_are_retried_within_the_run(tmp_path: Path, site: LoopbackSite) -> None:
    answers = iter([503, 500, 200])

    def flaky(h: BaseHTTPRequestHandler) -> None:
        status = next(answers)
        body = HEALTHY if status == 200 else b"oops"
        h.send_response(status)
        h.send_header("Content-Length", str(len(body)))
        h.end_headers()
        h.wfile.write(body)

    site.handle("/show.xml", flaky)
    with Archive(tmp_path / "a.db") as archive:
        report = update_feeds(
            archive, [FeedSchedule(url=site.url("/show.xml"))], settings=SETTINGS.replace(retries=2)
        )
        assert report.feeds[0].ok
        statuses = [r[0] for r in archive.db.execute("SELECT status FROM fetches ORDER BY id")]
    assert statuses == [503, 500, 200]


def test_retry_after_means_no_request_to_that_host_until_then(
    tmp_path: Path, site: LoopbackSite
) -> None:
    site.serve("/a.xml", b"", status=503, headers={"Retry-After": "120"})
    site.serve("/b.xml", HEALTHY)
    db = tmp_path / "a.db"
    feeds = [
        FeedSchedule(url=site.url("/a.xml"), name="A"),
        FeedSchedule(url=site.url("/b.xml"), name="B"),
    ]
    with Archive(db) as archive:
        update_feeds(archive, feeds[:1], settings=SETTINGS)
        report = update_feeds(archive, feeds, settings=SETTINGS)  # a later run, same host
    assert site.hits("/a.xml") == 1  # a 503 with Retry-After is not retried
    assert site.hits("/b.xml") == 0
    errors = {f.label: f.error for f in report.feeds}
    assert errors["B"] is not None
    assert errors["B"].startswith("waiting: 127.0.0.1 asked us not to return before ")


def test_a_pages_host_with_retry_after_does_not_fail_the_feed(
    tmp_path: Path, site: LoopbackSite, pytorch_feed: str
) -> None:
    site.serve(
        "/pytorch/episodes/strides",
        b"",
        status=429,
        headers={"Retry-After": "60"},
        content_type="text/plain",
    )
    with Archive(tmp_path / "a.db") as archive:
        report = update_feeds(
            archive,
            [FeedSchedule(url=pytorch_feed)],
            settings=SETTINGS.replace(concurrency=1, per_host=1),
        )
    (feed,) = report.feeds
    assert feed.ok
    assert feed.pages_failed >= 1
    assert feed.pages_ok + feed.pages_failed == 9
