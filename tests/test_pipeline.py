"""End to end: the PyTorch fixture feed and its pages on a loopback server → the archive."""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from loopback import LoopbackSite, serve_pytorch

from podarchive.core.settings import Settings
from podarchive.read.schedule_files import FeedSchedule
from podarchive.store import Archive
from podarchive.update.run import RunReport, update_feeds

SETTINGS = Settings(
    connect_timeout=10,
    read_timeout=10,
    deadline=60,
    allow_private_hosts=True,
    host_gap=0,
    retry_base=0.01,
)
LAST_SEEN = ("last_fetched_at", "last_success_at", "last_status", "next_due_at")  # last fetch


def run(
    db: Path, *feeds: FeedSchedule, settings: Settings = SETTINGS, clock: Any = None
) -> RunReport:
    with Archive(db) as archive:
        if clock is None:
            return update_feeds(archive, feeds, settings=settings)
        return update_feeds(archive, feeds, settings=settings, clock=clock)


def rows(db: Path, sql: str, *params: Any) -> list[tuple[Any, ...]]:
    conn = sqlite3.connect(db)
    try:
        return conn.execute(sql, params).fetchall()
    finally:
        conn.close()


def dump_without_last_seen(db: Path) -> dict[str, list[tuple[Any, ...]]]:
    with Archive(db) as archive:
        dump = archive.dump()
        columns = [c.name for c in archive.db.table("feeds").columns]
    keep = [i for i, name in enumerate(columns) if name not in LAST_SEEN]
    dump["feeds"] = [tuple(row[i] for i in keep) for row in dump["feeds"]]
    return dump


def pytorch_links(site: LoopbackSite, urls: list[str]) -> list[str]:
    base = "https://pytorch-dev-podcast.simplecast.com/episodes/"
    return [u.replace(base, site.url("/pytorch/episodes/")) for u in urls]


def test_first_run_archives_every_episode_with_notes_and_links(
    tmp_path: Path, site: LoopbackSite, pytorch_feed: str, pytorch_expected: dict[str, Any]
) -> None:
    db = tmp_path / "archive.db"
    report = run(db, FeedSchedule(url=pytorch_feed, name="PyTorch Developer Podcast"))
    assert not report.failed
    (feed,) = report.feeds
    assert (feed.stats.new, feed.pages_ok, feed.pages_failed) == (9, 9, 0)

    expected = pytorch_expected["episodes"]
    got = rows(
        db,
        "SELECT guid, title, published, duration, season, number, enclosure_url, enclosure_length,"
        " notes_text IS NOT NULL, page_status, page_extractor, page_notes_text IS NOT NULL, id"
        " FROM episodes ORDER BY id",
    )
    assert len(got) == len(expected) == 9
    for row, want in zip(got, expected, strict=True):
        assert row[:6] == (
            want["guid"],
            want["title"],
            want["published"],
            want["duration_seconds"],
            want["season"],
            want["number"],
        )
        assert row[6] == want["enclosure"]["url"]
        assert row[7] == want["enclosure"]["length"]
        assert row[8:12] == (1, "ok", "simplecast", 1)
        feed_links = [
            r[0]
            for r in rows(
                db,
                "SELECT url FROM links WHERE episode_id = ? AND source = 'feed' ORDER BY position",
                row[12],
            )
        ]  # noqa: E501
        page_links = [
            r[0]
            for r in rows(
                db,
                "SELECT url FROM links WHERE episode_id = ? AND source = 'page' ORDER BY position",
                row[12],
            )
        ]  # noqa: E501
        assert feed_links == pytorch_links(site, want["feed_links"])
        assert page_links == want["page_links"]  # pages are served as captured

    (channel,) = rows(db, "SELECT name, title, link, author, language, podcast_guid FROM feeds")
    assert channel == (
        "PyTorch Developer Podcast",
        "PyTorch Developer Podcast",
        "https://pytorch-dev-podcast.simplecast.com",
        "Edward Yang, Team PyTorch",
        "en",
        pytorch_expected["feed"]["podcast_guid"],
    )
    # notes from both sources differ where the page says more than the feed
    (weak,) = rows(
        db, "SELECT notes_text, page_notes_text FROM episodes WHERE title = 'Weak references'"
    )
    assert "Other episodes to listen to first" not in weak[0]
    assert "Other episodes to listen to first" in weak[1]
    # links carry normalized URLs and domains
    assert rows(
        db, "SELECT normalized_url, domain FROM links WHERE url LIKE '%utm_source%' LIMIT 1"
    ) == [("http://blog.ezyang.com/2019/05/pytorch-internals/", "blog.ezyang.com")]
    domains = {r[0] for r in rows(db, "SELECT DISTINCT domain FROM links")}
    assert {"github.com", "blog.ezyang.com", "en.wikipedia.org"} <= domains
    # full-text search over titles and notes
    hits = rows(db, "SELECT title FROM episodes_fts WHERE episodes_fts MATCH 'dispatcher'")
    assert ("Dispatcher questions with Sherlock",) in hits
    # one fetch-log row per request: the feed, nine pages, and the two episodes' files
    assert rows(db, "SELECT kind, status, count(*) FROM fetches GROUP BY 1, 2 ORDER BY 1") == [
        ("chapters", 200, 2),
        ("feed", 200, 1),
        ("page", 200, 9),
        ("transcript", 200, 4),
    ]


def test_second_run_writes_nothing_but_the_fetch_log(
    tmp_path: Path, site: LoopbackSite, pytorch_feed: str
) -> None:
    db = tmp_path / "archive.db"
    feed = FeedSchedule(url=pytorch_feed)
    run(db, feed)
    before = dump_without_last_seen(db)
    requests_before = len(site.requests)
    report = run(db, feed)
    assert report.feeds[0].not_modified
    assert dump_without_last_seen(db) == before
    # only the feed was asked again, conditionally, and it answered 304
    assert len(site.requests) == requests_before + 1
    assert site.requests[-1].headers["if-none-match"] == '"feed-v1"'
    assert rows(db, "SELECT status FROM fetches ORDER BY id DESC LIMIT 1") == [(304,)]


def test_identical_body_without_validators_is_not_parsed_again(
    tmp_path: Path, site: LoopbackSite, pytorch_feed: str
) -> None:
    db = tmp_path / "archive.db"
    reply = site.routes["/pytorch/feed.xml"]
    reply.etag = None  # type: ignore[union-attr]
    feed = FeedSchedule(url=pytorch_feed)
    run(db, feed)
    before = dump_without_last_seen(db)
    report = run(db, feed)
    assert report.feeds[0].not_modified  # same body hash: no parse, no episode writes
    assert dump_without_last_seen(db) == before


def test_changed_feed_adds_the_new_episode_and_fetches_only_its_page(
    tmp_path: Path, site: LoopbackSite, pytorch_feed: str
) -> None:
    db = tmp_path / "archive.db"
    feed = FeedSchedule(url=pytorch_feed)
    run(db, feed)
    reply = site.routes["/pytorch/feed.xml"]
    new_item = (
        '<item><guid isPermaLink="false">new-episode-guid</guid><title>Autograd</title>'
        f"<link>{site.url('/pytorch/episodes/autograd')}</link>"
        "<pubDate>Mon, 13 Jun 2022 13:00:00 +0000</pubDate>"
        '<description><![CDATA[<p>About <a href="https://pytorch.org/docs">autograd</a>.</p>]]>'
        "</description></item>"
    )
    reply.body = reply.body.replace(b"<item>", new_item.encode() + b"<item>", 1)  # type: ignore[union-attr]
    reply.etag = '"feed-v2"'  # type: ignore[union-attr]
    site.serve(
        "/pytorch/episodes/autograd",
        "<html><body><main><h1>Autograd</h1><p>How reverse-mode automatic differentiation is "
        "implemented in PyTorch, with a <a href='/blog'>blog post</a>.</p></main></body></html>",
        content_type="text/html",
    )
    pages_before = sum(1 for r in site.requests if "/episodes/" in r.path)
    report = run(db, feed)
    (result,) = report.feeds
    assert (result.stats.new, result.stats.changed, result.stats.unchanged) == (1, 0, 9)
    assert [r.path for r in site.requests if "/episodes/" in r.path][pages_before:] == [
        "/pytorch/episodes/autograd"
    ]
    assert rows(
        db, "SELECT page_status, page_extractor FROM episodes WHERE guid = 'new-episode-guid'"
    ) == [("ok", "generic")]
    assert rows(db, "SELECT url FROM links WHERE source = 'page' AND url LIKE '%/blog'") == [
        (site.url("/blog"),)
    ]


def test_failed_and_empty_pages_are_recorded_and_retried(
    tmp_path: Path, site: LoopbackSite, pytorch_feed: str
) -> None:
    db = tmp_path / "archive.db"
    site.serve("/pytorch/episodes/strides", b"oops", status=500, content_type="text/plain")
    site.serve(
        "/pytorch/episodes/new-ci",
        "<html><body><nav><a href='/'>Home</a></nav></body></html>",
        content_type="text/html",
    )
    feed = FeedSchedule(url=pytorch_feed)
    report = run(db, feed)
    assert report.feeds[0].ok  # a page never fails the feed
    assert (
        report.feeds[0].pages_ok,
        report.feeds[0].pages_empty,
        report.feeds[0].pages_failed,
    ) == (7, 1, 1)
    assert rows(
        db,
        "SELECT title, page_status, page_error FROM episodes"
        " WHERE page_status != 'ok' ORDER BY title",
    ) == [
        ("New CI", "empty", "no show notes found"),
        ("Strides", "failed", "HTTP 500 server error"),
    ]
    serve_pytorch(site)  # the pages come back
    assert run(db, feed).feeds[0].pages_ok == 0  # failed pages back off between runs: not yet
    later = datetime.now(UTC) + timedelta(hours=1, minutes=1)
    report = run(db, feed, clock=lambda: later)
    assert report.feeds[0].pages_ok == 2
    assert rows(db, "SELECT count(*) FROM episodes WHERE page_status = 'ok'") == [(9,)]


def test_one_bad_feed_does_not_harm_the_others(
    tmp_path: Path, site: LoopbackSite, pytorch_feed: str
) -> None:
    db = tmp_path / "archive.db"
    site.serve(
        "/broken.xml",
        b"<html><body>This website is unavailable</body></html>",
        content_type="text/html",
    )
    report = run(
        db,
        FeedSchedule(url=site.url("/broken.xml"), name="Broken"),
        FeedSchedule(url=site.url("/missing.xml"), name="Missing"),
        FeedSchedule(url=pytorch_feed, name="PyTorch"),
    )
    failures = {f.label: f.error for f in report.failed}
    assert failures == {"Broken": "not a feed: got an HTML page", "Missing": "HTTP 404 not found"}
    assert rows(db, "SELECT count(*) FROM episodes") == [(9,)]
    assert rows(
        db, "SELECT name, error_count, last_error FROM feeds WHERE error_count > 0 ORDER BY name"
    ) == [
        ("Broken", 1, "not a feed: got an HTML page"),
        ("Missing", 1, "HTTP 404 not found"),
    ]


def test_a_feed_failing_later_keeps_what_was_archived(
    tmp_path: Path, site: LoopbackSite, pytorch_feed: str
) -> None:
    db = tmp_path / "archive.db"
    feed = FeedSchedule(url=pytorch_feed)
    run(db, feed)
    before = dump_without_last_seen(db)["episodes"]
    site.serve("/pytorch/feed.xml", b"<rss><channel><item>", etag='"broken"')
    report = run(db, feed)
    assert report.feeds[0].ok or report.feeds[0].error
    assert dump_without_last_seen(db)["episodes"][: len(before)] == before


@pytest.mark.parametrize("pages", [True, False])
def test_pages_can_be_switched_off(
    tmp_path: Path, site: LoopbackSite, pytorch_feed: str, pages: bool
) -> None:
    db = tmp_path / "archive.db"
    run(db, FeedSchedule(url=pytorch_feed, pages=pages))
    fetched = sum(1 for r in site.requests if "/episodes/" in r.path)
    assert fetched == (9 if pages else 0)


def test_page_urls_from_feeds_may_not_reach_private_hosts_by_default(
    tmp_path: Path, site: LoopbackSite, pytorch_feed: str
) -> None:
    db = tmp_path / "archive.db"
    report = run(
        db, FeedSchedule(url=pytorch_feed), settings=SETTINGS.replace(allow_private_hosts=False)
    )
    assert report.feeds[0].pages_failed == 9
    assert rows(db, "SELECT DISTINCT page_error FROM episodes") == [
        ("blocked: private address 127.0.0.1",)
    ]
    assert not any("/episodes/" in r.path for r in site.requests)
    # the schedule key lifts the guard for that feed (once the failed pages' back-off is over)
    later = datetime.now(UTC) + timedelta(hours=1, minutes=1)
    report = run(
        db,
        FeedSchedule(url=pytorch_feed, allow_private_hosts=True),
        settings=SETTINGS.replace(allow_private_hosts=False),
        clock=lambda: later,
    )
    assert report.feeds[0].pages_ok == 9


def test_timestamps_are_utc_iso(tmp_path: Path, pytorch_feed: str) -> None:
    db = tmp_path / "archive.db"
    run(db, FeedSchedule(url=pytorch_feed))
    (stamp,) = rows(db, "SELECT first_seen_at FROM episodes LIMIT 1")[0]
    assert datetime.strptime(stamp, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC) <= datetime.now(UTC)


def test_stop_abandons_what_is_in_flight_and_keeps_what_is_done(
    tmp_path: Path, site: LoopbackSite, pytorch_feed: str
) -> None:
    import threading
    import time
    from http.server import BaseHTTPRequestHandler

    released = threading.Event()

    def stall(h: BaseHTTPRequestHandler) -> None:
        h.send_response(200)
        h.send_header("Content-Length", "1000")
        h.end_headers()
        released.wait(60)  # stalls until the run has returned

    site.handle("/stall.xml", stall)
    stop = threading.Event()
    db = tmp_path / "archive.db"
    result: list[RunReport] = []

    def work() -> None:
        with Archive(db) as archive:
            result.append(
                update_feeds(
                    archive,
                    [FeedSchedule(url=site.url("/stall.xml")), FeedSchedule(url=pytorch_feed)],
                    settings=SETTINGS.replace(read_timeout=60, deadline=120),
                    stop=stop,
                )
            )

    def pytorch_done() -> bool:  # its 9 episodes stored, no page pending
        if not db.exists():
            return False
        conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=10)
        try:
            (stored, pending), *_ = conn.execute(
                "SELECT count(*), count(*) FILTER (WHERE page_status = 'pending') FROM episodes"
            )
        except sqlite3.OperationalError:  # the schema is not there yet
            return False
        finally:
            conn.close()
        return bool(stored == 9 and pending == 0)

    thread = threading.Thread(target=work)
    thread.start()
    try:
        deadline = time.monotonic() + 60
        while not pytorch_done():  # the PyTorch feed and its pages are done; the stall is not
            assert time.monotonic() < deadline, "the PyTorch feed was not stored"
            time.sleep(0.05)
        stop.set()
        thread.join(timeout=30)
        assert not thread.is_alive()  # it returned while the stalled feed still stalled
    finally:
        stop.set()
        released.set()
    (report,) = result
    assert report.stopped
    assert rows(db, "SELECT count(*) FROM episodes") == [(9,)]
    assert rows(db, "SELECT error_count, last_error FROM feeds WHERE url LIKE '%stall%'") == [
        (0, None)
    ]
    assert rows(db, "PRAGMA integrity_check") == [("ok",)]
