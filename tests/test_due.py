"""When feeds are polled: schedules, back-off, server hints, moves and endings (fake clock)."""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler
from pathlib import Path

import pytest
from loopback import LoopbackSite

from podarchive.core.settings import Settings
from podarchive.read.schedule_files import FeedSchedule
from podarchive.store import Archive
from podarchive.update.run import RunReport, update_due, update_feeds

SETTINGS = Settings(retries=0, host_gap=0, allow_private_hosts=True)
T0 = datetime(2026, 12, 2, 12, 0, tzinfo=UTC)
FEED = (
    '<?xml version="1.0"?><rss version="2.0"><channel><title>{title}</title>{extra}'
    "<item><guid>{guid}</guid><title>One</title></item></channel></rss>"
)


def feed(title: str = "Show", extra: str = "", guid: str = "ep-1") -> bytes:
    return FEED.format(title=title, extra=extra, guid=guid).encode()


class Clock:
    def __init__(self, start: datetime = T0) -> None:
        self.now = start

    def __call__(self) -> datetime:
        return self.now

    def advance(self, **delta: float) -> None:
        self.now += timedelta(**delta)


def due_run(db: Path, clock: Clock, *feeds: FeedSchedule) -> RunReport:
    with Archive(db) as archive:
        return update_due(archive, feeds, settings=SETTINGS, clock=clock)


def now_run(db: Path, clock: Clock, *feeds: FeedSchedule) -> RunReport:
    with Archive(db) as archive:
        return update_feeds(archive, feeds, settings=SETTINGS, clock=clock)


def one(db: Path, sql: str) -> tuple[object, ...]:
    conn = sqlite3.connect(db)
    try:
        return conn.execute(sql).fetchone()
    finally:
        conn.close()


def polled(report: RunReport) -> list[str]:
    return [f.label for f in report.feeds]


def test_feeds_are_polled_on_their_own_intervals(tmp_path: Path, site: LoopbackSite) -> None:
    site.serve("/hourly.xml", feed("Hourly"))
    site.serve("/daily.xml", feed("Daily"))
    hourly = FeedSchedule(url=site.url("/hourly.xml"), name="hourly", every=timedelta(hours=1))
    daily = FeedSchedule(url=site.url("/daily.xml"), name="daily", every=timedelta(days=1))
    db, clock = tmp_path / "a.db", Clock()
    counts = {"hourly": 0, "daily": 0}
    for _ in range(48 * 6):  # two days, every ten minutes, as cron would
        for label in polled(due_run(db, clock, hourly, daily)):
            counts[label] += 1
        clock.advance(minutes=10)
    assert 40 <= counts["hourly"] <= 48  # every 1 h plus a few minutes of per-feed jitter
    assert counts["daily"] == 2


def test_cron_schedule(tmp_path: Path, site: LoopbackSite) -> None:
    site.serve("/f.xml", feed())
    monday_nine = FeedSchedule(url=site.url("/f.xml"), every=None, cron="0 9 * * 1")
    db, clock = tmp_path / "a.db", Clock()  # Wednesday noon
    assert len(due_run(db, clock, monday_nine).feeds) == 1  # never polled: due at once
    clock.now = datetime(2026, 12, 7, 8, 59, tzinfo=UTC)  # Monday 08:59
    assert due_run(db, clock, monday_nine).feeds == []
    clock.now = datetime(2026, 12, 7, 9, 10, tzinfo=UTC)
    assert len(due_run(db, clock, monday_nine).feeds) == 1


def test_failing_feed_backs_off_and_recovers_by_itself(tmp_path: Path, site: LoopbackSite) -> None:
    site.serve("/f.xml", b"", status=500)
    schedule = FeedSchedule(url=site.url("/f.xml"), every=timedelta(hours=1))
    db, clock = tmp_path / "a.db", Clock()
    poll_times = []
    for _ in range(24 * 6):
        if due_run(db, clock, schedule).feeds:
            poll_times.append(clock.now)
        clock.advance(minutes=10)
    gaps = [(b - a) / timedelta(hours=1) for a, b in zip(poll_times, poll_times[1:], strict=False)]
    assert [round(g) for g in gaps[:4]] == [1, 2, 4, 8]  # doubling back-off between runs
    assert one(db, "SELECT error_count FROM feeds")[0] == len(poll_times)
    site.serve("/f.xml", feed())
    clock.advance(days=1)
    assert due_run(db, clock, schedule).feeds[0].ok
    assert one(db, "SELECT error_count, last_error FROM feeds") == (0, None)
    clock.advance(hours=1, minutes=10)
    assert len(due_run(db, clock, schedule).feeds) == 1  # back to the normal interval


@pytest.mark.parametrize(
    ("headers", "extra", "quiet_hours"),
    [
        ({"Cache-Control": "max-age=10800"}, "", 3),
        ({}, "<ttl>240</ttl>", 4),
        ({"Cache-Control": "max-age=999999"}, "", 24),  # capped: a day at most
    ],
)
def test_server_hints_set_a_lower_bound(
    tmp_path: Path, site: LoopbackSite, headers: dict[str, str], extra: str, quiet_hours: int
) -> None:
    site.serve("/f.xml", feed(extra=extra), headers=headers)
    schedule = FeedSchedule(url=site.url("/f.xml"), every=timedelta(hours=1))
    db, clock = tmp_path / "a.db", Clock()
    due_run(db, clock, schedule)
    clock.advance(hours=quiet_hours - 0.1)
    assert due_run(db, clock, schedule).feeds == []
    clock.advance(hours=0.2)
    assert len(due_run(db, clock, schedule).feeds) == 1


def test_gone_feed_is_no_longer_polled_and_keeps_its_episodes(
    tmp_path: Path, site: LoopbackSite
) -> None:
    site.serve("/f.xml", feed())
    schedule = FeedSchedule(url=site.url("/f.xml"))
    db, clock = tmp_path / "a.db", Clock()
    due_run(db, clock, schedule)
    site.serve("/f.xml", b"", status=410)
    clock.advance(hours=2)
    assert due_run(db, clock, schedule).feeds[0].error == "HTTP 410 gone"
    for _ in range(5):
        clock.advance(days=3)
        assert due_run(db, clock, schedule).feeds == []
    assert site.hits("/f.xml") == 2
    assert one(db, "SELECT count(*) FROM episodes")[0] == 1
    assert one(db, "SELECT gone_at, next_due_at FROM feeds") == ("2026-12-02T14:00:00Z", None)


def test_404_backs_off_but_keeps_polling(tmp_path: Path, site: LoopbackSite) -> None:
    schedule = FeedSchedule(url=site.url("/missing.xml"))
    db, clock = tmp_path / "a.db", Clock()
    polls = 0
    for _ in range(10):
        polls += len(due_run(db, clock, schedule).feeds)
        clock.advance(days=1, minutes=10)  # the cap, plus room for the per-feed jitter
    assert polls == 10  # back-off is capped at a day: never given up


def redirect(site: LoopbackSite, path: str, to: str, status: int = 301) -> None:
    def send(h: BaseHTTPRequestHandler) -> None:
        h.send_response(status)
        h.send_header("Location", to)
        h.send_header("Content-Length", "0")
        h.end_headers()

    site.handle(path, send)


def test_permanent_redirect_is_adopted_after_several_polls_over_days(
    tmp_path: Path, site: LoopbackSite
) -> None:
    site.serve("/new.xml", feed())
    redirect(site, "/old.xml", "/new.xml", 301)
    schedule = FeedSchedule(url=site.url("/old.xml"))
    db, clock = tmp_path / "a.db", Clock()
    for _ in range(2):
        assert now_run(db, clock, schedule).feeds[0].moved_to is None
        clock.advance(days=1.5)
    report = now_run(db, clock, schedule)  # third sighting, three days after the first
    assert report.feeds[0].moved_to == site.url("/new.xml")
    assert one(db, "SELECT url, fetch_url FROM feeds") == (
        site.url("/old.xml"),
        site.url("/new.xml"),
    )
    assert one(db, "SELECT old_url, new_url, reason FROM feed_moves") == (
        site.url("/old.xml"),
        site.url("/new.xml"),
        "permanent redirect",
    )
    hits = site.hits("/old.xml")
    now_run(db, clock, schedule)
    assert site.hits("/old.xml") == hits  # the old URL is no longer asked


def test_temporary_redirects_keep_the_url(tmp_path: Path, site: LoopbackSite) -> None:
    site.serve("/new.xml", feed())
    redirect(site, "/old.xml", "/new.xml", 302)
    schedule = FeedSchedule(url=site.url("/old.xml"))
    db, clock = tmp_path / "a.db", Clock()
    for _ in range(5):
        now_run(db, clock, schedule)
        clock.advance(days=2)
    assert one(db, "SELECT fetch_url FROM feeds") == (None,)
    assert one(db, "SELECT count(*) FROM feed_redirects") == (0,)


def test_a_redirect_then_failing_old_url_moves_at_once(tmp_path: Path, site: LoopbackSite) -> None:
    site.serve("/new.xml", feed())
    redirect(site, "/old.xml", "/new.xml", 308)
    schedule = FeedSchedule(url=site.url("/old.xml"))
    db, clock = tmp_path / "a.db", Clock()
    now_run(db, clock, schedule)
    site.serve("/old.xml", b"", status=404)
    clock.advance(hours=1)
    report = now_run(db, clock, schedule)
    assert report.feeds[0].error == "HTTP 404 not found"
    assert report.feeds[0].moved_to == site.url("/new.xml")
    assert now_run(db, clock, schedule).feeds[0].ok


@pytest.mark.parametrize(("same", "new_title"), [(True, "Show"), (False, "Another show")])
def test_new_feed_url_is_followed_only_to_the_same_podcast(
    tmp_path: Path, site: LoopbackSite, same: bool, new_title: str
) -> None:
    new_url = site.url("/new.xml")
    site.serve(
        "/old.xml",
        feed(
            extra=f"<itunes:new-feed-url xmlns:itunes='http://www.itunes.com/dtds/podcast-1.0.dtd'>{new_url}</itunes:new-feed-url>"
        ),
    )
    site.serve("/new.xml", feed(title=new_title))
    db, clock = tmp_path / "a.db", Clock()
    (result,) = now_run(db, clock, FeedSchedule(url=site.url("/old.xml"))).feeds
    assert result.ok
    if same:
        assert result.moved_to == new_url
        assert one(db, "SELECT fetch_url FROM feeds") == (new_url,)
        assert one(db, "SELECT reason FROM feed_moves") == ("itunes:new-feed-url",)
    else:
        assert result.moved_to is None
        assert any("serves another podcast" in w for w in result.warnings)
        assert one(db, "SELECT fetch_url FROM feeds") == (None,)


def test_never_two_gets_of_one_feed_in_a_run(tmp_path: Path, site: LoopbackSite) -> None:
    site.serve("/new.xml", feed())
    redirect(site, "/old.xml", "/new.xml", 301)
    db, clock = tmp_path / "a.db", Clock()
    old = FeedSchedule(url=site.url("/old.xml"), name="old")
    now_run(db, clock, old)
    site.serve("/old.xml", b"", status=404)
    now_run(db, clock, old)  # moves to /new.xml
    hits = site.hits("/new.xml")
    report = now_run(db, clock, old, FeedSchedule(url=site.url("/new.xml"), name="new"))
    assert site.hits("/new.xml") == hits + 1
    assert any("not fetched twice" in w for f in report.feeds for w in f.warnings)


def test_cli_run_polls_only_due_feeds_unless_all(
    tmp_path: Path, site: LoopbackSite, monkeypatch: pytest.MonkeyPatch
) -> None:
    from click.testing import CliRunner

    from podarchive.cli import cli

    site.serve("/f.xml", feed())
    monkeypatch.chdir(tmp_path)
    (tmp_path / "schedules").mkdir()
    (tmp_path / "schedules" / "f.toml").write_text(
        f'[[feed]]\nurl = "{site.url("/f.xml")}"\nevery = "1h"\n'
    )
    runner = CliRunner()
    for args, hits in ((["run"], 1), (["run"], 1), (["run", "--all"], 2)):
        assert runner.invoke(cli, args).exit_code == 0
        assert site.hits("/f.xml") == hits
