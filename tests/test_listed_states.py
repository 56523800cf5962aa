"""A run's listed feeds have their states read in one statement (#30), each used once and
only where ``ensure_feed`` would have read the same: a URL listed twice is read again after
its first poll is stored, a renamed feed is renamed, a new one added."""

from __future__ import annotations

from pathlib import Path

from loopback import LoopbackSite

from podarchive.core.settings import Settings
from podarchive.read.schedule_files import FeedSchedule
from podarchive.store import Archive
from podarchive.update.run import update_feeds

ONE_AT_A_TIME = Settings(retries=0, host_gap=0, allow_private_hosts=True, concurrency=1)


def rss(title: str) -> bytes:
    return f'<?xml version="1.0"?><rss version="2.0"><channel><title>{title}</title>'.encode() + (
        b"<item><guid>ep-1</guid><title>One</title></item></channel></rss>"
    )


def test_a_url_listed_twice_is_polled_the_second_time_with_the_first_polls_state(
    tmp_path: Path, site: LoopbackSite
) -> None:
    site.serve("/feed", rss("Show"), etag='"v1"')
    feed = FeedSchedule(url=site.url("/feed"), allow_private_hosts=True)
    with Archive(tmp_path / "a.db") as archive:
        update_feeds(archive, [feed], settings=ONE_AT_A_TIME)
        site.serve("/feed", rss("Show, renewed"), etag='"v2"')
        report = update_feeds(archive, [feed, feed], settings=ONE_AT_A_TIME)
    assert [r.error for r in report.feeds] == [None, None]
    sent = [r.headers.get("if-none-match") for r in site.requests]
    assert sent == [None, '"v1"', '"v2"']  # the second read the ETag the first stored
    assert [r.not_modified for r in report.feeds] == [False, True]


def test_a_listed_feed_renamed_or_new_is_written_as_before(
    tmp_path: Path, site: LoopbackSite
) -> None:
    site.serve("/a", rss("A"), etag='"a"')
    site.serve("/b", rss("B"), etag='"b"')
    a, b = site.url("/a"), site.url("/b")
    with Archive(tmp_path / "a.db") as archive:
        update_feeds(archive, [FeedSchedule(url=a, name="Old")], settings=ONE_AT_A_TIME)
        feeds = [FeedSchedule(url=a, name="New"), FeedSchedule(url=b, name="Bee")]
        report = update_feeds(archive, feeds, settings=ONE_AT_A_TIME)
        names = archive.db.execute("SELECT url, name FROM feeds ORDER BY id").fetchall()
    assert [r.error for r in report.feeds] == [None, None]
    assert [tuple(row) for row in names] == [(a, "New"), (b, "Bee")]


def test_named_states_reads_the_listed_feeds_only(tmp_path: Path, site: LoopbackSite) -> None:
    site.serve("/a", rss("A"))
    site.serve("/b", rss("B"))
    a, b = site.url("/a"), site.url("/b")
    with Archive(tmp_path / "a.db") as archive:
        feeds = [FeedSchedule(url=a, name="Ay"), FeedSchedule(url=b)]
        update_feeds(archive, feeds, settings=ONE_AT_A_TIME)
        got = archive.named_states([b, site.url("/never-archived")])
        assert {url: name for url, (_, name) in got.items()} == {b: None}
        assert got[b][0] == archive.feed_state(b)
