"""The ``add`` and ``import`` use-cases as a library (:mod:`podarchive.tasks.subscribe`): plain
arguments in, a report out, real schedule files in tmp_path, loopback fetches only; no click."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest
from loopback import LoopbackSite

from podarchive.core.errors import ConfigError, FetchError, NotAFeed, OpmlError, ScheduleError
from podarchive.core.settings import settings_from_env
from podarchive.read.schedule_files import load_schedules
from podarchive.tasks.subscribe import (
    AddReport,
    BadSetting,
    ImportEntry,
    add_feed,
    import_feeds,
)

FEED = "https://example.org/feed.xml"


def _page(site: LoopbackSite, feed: str) -> str:
    site.serve(
        "/show",
        f'<html><head><link rel="alternate" type="application/rss+xml" href="{feed}">'
        "</head><body><h1>The show</h1></body></html>",
        content_type="text/html",
    )
    return site.url("/show")


def _opml(path: Path, *outlines: str) -> Path:
    body = "\n".join(outlines)
    path.write_text(
        f'<?xml version="1.0" encoding="UTF-8"?>\n<opml version="2.0">\n'
        f"<head><title>t</title></head>\n<body>\n{body}\n</body>\n</opml>\n"
    )
    return path


# add_feed ------------------------------------------------------------------------------------


def test_add_without_check_writes_a_new_schedule_file(tmp_path: Path) -> None:
    report = add_feed(tmp_path, f"  {FEED} ", every="30m", name="Show", pages=False, check=False)
    assert report == AddReport("added", FEED, str(tmp_path / "show.toml"))  # named for its name
    (feed,) = load_schedules(tmp_path)
    assert (feed.url, feed.name, feed.every, feed.cron, feed.pages) == (
        FEED,
        "Show",
        timedelta(minutes=30),
        None,
        False,
    )
    assert feed.source == report.path


def test_add_defaults_to_hourly_and_cron_replaces_it(tmp_path: Path) -> None:
    add_feed(tmp_path / "a", FEED, check=False)
    add_feed(tmp_path / "b", FEED, cron="0 * * * *", check=False)
    assert [(f.every, f.cron) for f in load_schedules(tmp_path / "a")] == [
        (timedelta(hours=1), None)
    ]
    assert [(f.every, f.cron) for f in load_schedules(tmp_path / "b")] == [(None, "0 * * * *")]


@pytest.mark.parametrize(
    ("kwargs", "setting"),
    [
        ({"every": "soon"}, "every"),
        ({"every": "5s"}, "every"),  # under the floor without allow_fast
        ({"cron": "61 * * * *"}, "cron"),
        ({"page_every": "5m"}, "page_every"),
        ({"user_agent": "bad\nagent"}, "user_agent"),
    ],
)
def test_add_bad_settings_are_named_and_write_nothing(
    tmp_path: Path, kwargs: dict[str, str], setting: str
) -> None:
    with pytest.raises(BadSetting) as caught:
        add_feed(tmp_path, FEED, check=False, **kwargs)  # type: ignore[arg-type]
    assert caught.value.setting == setting
    assert str(caught.value) == f"{setting}: {caught.value.problem}"
    assert isinstance(caught.value, ConfigError)
    assert list(tmp_path.iterdir()) == []


def test_add_refuses_a_url_that_is_no_feed_url(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="http"):
        add_feed(tmp_path, "ftp://example.org/feed", check=False)
    with pytest.raises(ConfigError, match="not both"):
        add_feed(tmp_path, FEED, every="1h", cron="0 * * * *", check=False)
    assert list(tmp_path.iterdir()) == []


def test_add_checks_the_feed_and_names_it(tmp_path: Path, pytorch_feed: str) -> None:
    found: list[tuple[str, str]] = []
    settings = settings_from_env().replace(allow_private_hosts=True)
    report = add_feed(
        tmp_path, pytorch_feed, settings=settings, on_found=lambda *a: found.append(a)
    )
    assert (report.action, report.url, report.found_on) == ("added", pytorch_feed, None)
    assert found == []  # the URL was the feed itself
    assert [(f.url, f.name) for f in load_schedules(tmp_path)] == [
        (pytorch_feed, "PyTorch Developer Podcast")
    ]


def test_add_finds_the_feed_on_a_page_and_says_so_at_once(
    tmp_path: Path, site: LoopbackSite, pytorch_feed: str
) -> None:
    page = _page(site, pytorch_feed)
    found: list[tuple[str, str]] = []
    report = add_feed(tmp_path, page, allow_private_hosts=True, on_found=lambda *a: found.append(a))
    assert found == [(pytorch_feed, page)]
    assert (report.action, report.url, report.found_on) == ("added", pytorch_feed, page)
    (feed,) = load_schedules(tmp_path)
    assert (feed.url, feed.name, feed.allow_private_hosts) == (
        pytorch_feed,
        "PyTorch Developer Podcast",
        True,
    )


def test_add_a_failed_check_raises_and_writes_nothing(tmp_path: Path, site: LoopbackSite) -> None:
    site.serve("/page", "<html><body><p>No feed here</p></body></html>", content_type="text/html")
    with pytest.raises(NotAFeed):
        add_feed(tmp_path, site.url("/page"), allow_private_hosts=True)
    with pytest.raises(FetchError, match="404"):
        add_feed(tmp_path, site.url("/gone"), allow_private_hosts=True)
    assert list(tmp_path.iterdir()) == []


def test_add_a_scheduled_feed_changes_only_the_fields_given(tmp_path: Path) -> None:
    first = add_feed(tmp_path, FEED, every="30m", name="Show", check=False)
    again = add_feed(tmp_path, FEED, every="2h", name="Other", check=False, given={"every"})
    assert again == AddReport("updated", FEED, first.path, changed=('every = "2h"',))
    (feed,) = load_schedules(tmp_path)
    assert (feed.every, feed.name) == (timedelta(hours=2), "Show")


def test_add_a_scheduled_feed_given_cron_drops_every(tmp_path: Path) -> None:
    add_feed(tmp_path, FEED, every="30m", check=False)
    report = add_feed(tmp_path, FEED, cron="0 * * * *", check=False, given={"cron"})
    assert report.action == "updated"
    assert [(f.every, f.cron) for f in load_schedules(tmp_path)] == [(None, "0 * * * *")]


def test_add_a_scheduled_feed_is_never_fetched(tmp_path: Path, site: LoopbackSite) -> None:
    url = site.url("/feed.xml")
    first = add_feed(tmp_path, url, name="Show", check=False)
    before = tmp_path.joinpath(Path(first.path).name).read_bytes()
    assert add_feed(tmp_path, url, allow_private_hosts=True) == AddReport(
        "scheduled", url, first.path
    )
    same = add_feed(tmp_path, url, name="Show", given={"name"}, allow_private_hosts=True)
    assert same == AddReport("unchanged", url, first.path)
    assert site.hits("/feed.xml") == 0
    assert tmp_path.joinpath(Path(first.path).name).read_bytes() == before


# import_feeds --------------------------------------------------------------------------------


def test_import_without_check_sorts_and_writes_the_new_feeds(tmp_path: Path) -> None:
    schedules = tmp_path / "schedules"
    add_feed(schedules, FEED, check=False)
    source = _opml(
        tmp_path / "subs.opml",
        f'<outline type="rss" text="Old" xmlUrl="{FEED}"/>',
        '<outline type="rss" text="New" xmlUrl="https://example.com/new.xml"/>',
        '<outline type="rss" text="Again" xmlUrl="https://example.com/new.xml"/>',
        '<outline type="rss" text="FTP" xmlUrl="ftp://example.com/x"/>',
    )
    seen: list[ImportEntry] = []
    report = import_feeds(schedules, source, every="2h", pages=False, check=False, each=seen.append)
    assert list(report.entries) == seen
    assert [e.verdict for e in report.entries] == ["scheduled", "new", "duplicate", "skipped"]
    assert [report.count(v) for v in ("new", "scheduled", "duplicate", "failed", "skipped")] == [
        1,
        1,
        1,
        0,
        1,
    ]
    assert report.path == schedules / "import-subs.toml"
    feeds = load_schedules(schedules)
    assert [(f.url, f.name, f.every, f.pages) for f in feeds if f.source == str(report.path)] == [
        ("https://example.com/new.xml", "New", timedelta(hours=2), False)
    ]


def test_import_checks_new_feeds_and_reports_each_fate(
    tmp_path: Path, site: LoopbackSite, pytorch_feed: str
) -> None:
    page = _page(site, pytorch_feed)
    site.serve("/other.xml", "<rss version='2.0'><channel><title>Other</title></channel></rss>")
    source = _opml(
        tmp_path / "checked.opml",
        f'<outline type="rss" text="PyTorch" xmlUrl="{pytorch_feed}"/>',
        f'<outline type="rss" text="The show page" xmlUrl="{page}"/>',
        f'<outline type="rss" text="Gone" xmlUrl="{site.url("/gone")}"/>',
        f'<outline type="rss" xmlUrl="{site.url("/other.xml")}"/>',
    )
    schedules = tmp_path / "schedules"
    report = import_feeds(schedules, source, allow_private_hosts=True)
    assert [e.verdict for e in report.entries] == ["new", "duplicate", "failed", "new"]
    show, gone, other = report.entries[1:]
    assert (show.found_on, show.outcome.feed.url) == (page, pytorch_feed)
    assert gone.failed == "HTTP 404 not found"
    assert other.outcome.feed.title == "Other"  # named after the feed
    assert [(f.url, f.name) for f in load_schedules(schedules)] == [
        (pytorch_feed, "PyTorch"),
        (site.url("/other.xml"), "Other"),
    ]


def test_import_writes_nothing_when_no_feed_is_new(tmp_path: Path, site: LoopbackSite) -> None:
    source = _opml(tmp_path / "gone.opml", f'<outline text="Gone" xmlUrl="{site.url("/gone")}"/>')
    report = import_feeds(tmp_path / "s", source, allow_private_hosts=True)
    assert (report.path, report.count("failed")) == (None, 1)
    assert not (tmp_path / "s").exists()


def test_import_errors_name_the_file_or_the_setting(tmp_path: Path) -> None:
    with pytest.raises(OpmlError, match=r"missing\.opml: cannot read: No such file"):
        import_feeds(tmp_path, tmp_path / "missing.opml", check=False)
    empty = tmp_path / "empty.opml"
    empty.write_bytes(b"")
    with pytest.raises(OpmlError) as caught:
        import_feeds(tmp_path, empty, check=False)
    assert str(caught.value) == f"{empty}: empty file"
    good = _opml(tmp_path / "good.opml", f'<outline xmlUrl="{FEED}"/>')
    with pytest.raises(BadSetting) as bad:
        import_feeds(tmp_path, good, every="never", check=False)
    assert bad.value.setting == "every"
    odd = _opml(
        tmp_path / "odd.opml",
        '<outline xmlns:podarchive="https://github.com/podarchive/podarchive/ns/opml/1.0" '
        f'podarchive:every="never" xmlUrl="{FEED}"/>',
    )
    with pytest.raises(ScheduleError):
        import_feeds(tmp_path, odd, check=False)
    assert not list(tmp_path.glob("*.toml"))
