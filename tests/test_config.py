from __future__ import annotations

import dataclasses
from datetime import timedelta
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from podarchive.core.errors import ScheduleError
from podarchive.read.schedule_files import (
    MAX_INTERVAL,
    FeedSchedule,
    add_schedule,
    format_interval,
    load_schedules,
    parse_interval,
    render_schedule,
)

REPO = Path(__file__).resolve().parents[1]


def write(directory: Path, name: str, text: str) -> Path:
    path = directory / name
    path.write_text(text)
    return path


def test_default_schedule_is_the_pytorch_podcast() -> None:
    (feed,) = load_schedules(REPO / "schedules")
    assert feed.url == "https://feeds.simplecast.com/OB5FkIl8"
    assert feed.every == timedelta(hours=1)
    assert feed.pages is True
    assert feed.name == "PyTorch Developer Podcast"


def test_many_feeds_per_file_and_files_in_name_order(tmp_path: Path) -> None:
    write(tmp_path, "b.toml", '[[feed]]\nurl = "https://b.example/feed"\ncron = "0 * * * 1"\n')
    write(
        tmp_path,
        "a.toml",
        '[[feed]]\nurl = "https://a.example/1"\nevery = "30m"\npages = false\n'
        '[[feed]]\nurl = "https://a.example/2"\nname = "Two"\n',
    )
    write(tmp_path, "notes.txt", "ignored")
    feeds = load_schedules(tmp_path)
    assert [f.url for f in feeds] == [
        "https://a.example/1",
        "https://a.example/2",
        "https://b.example/feed",
    ]
    assert feeds[0].every == timedelta(minutes=30)
    assert feeds[0].pages is False
    assert feeds[1].every == timedelta(hours=1)  # the default
    assert feeds[2].cron == "0 * * * 1"
    assert feeds[2].every is None
    assert feeds[1].source.endswith("a.toml")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('[[feed]]\nurl = "https://x.example/f"\nevry = "1h"\n', "feed[0].evry: unknown key"),
        ('[[feed]]\nurl = "https://x.example/f"\nevery = "soon"\n', "feed[0].every: bad interval"),
        ('[[feed]]\nurl = "https://x.example/f"\nevery = "0m"\n', "feed[0].every: interval"),
        ('[[feed]]\nurl = "https://x.example/f"\ncron = "0 * *"\n', "feed[0].cron: cron needs 5"),
        ('[[feed]]\nurl = "https://x.example/f"\ncron = "61 * * * *"\n', "feed[0].cron: bad cron"),
        ('[[feed]]\nurl = "https://x.example/f"\ncron = "0 9 * * 8"\n', "feed[0].cron: bad cron"),
        (
            '[[feed]]\nurl = "https://x.example/f"\nevery = "1h"\ncron = "0 * * * *"\n',
            "feed[0].cron: give either every or cron",
        ),
        ('[[feed]]\nname = "no url"\n', "feed[0].url: missing"),
        ('[[feed]]\nurl = "ftp://x.example/f"\n', "feed[0].url: not an http(s) URL"),
        ("[[feed]]\nurl = 5\n", "feed[0].url: must be a str"),
        ('[[feed]]\nurl = "https://x.example/f"\npages = "yes"\n', "feed[0].pages: must be a bool"),
        ('url = "https://x.example/f"\n', "url: unknown key"),
        ("[[feed]\n", "not valid TOML"),
        ("", "feed: no [[feed]] tables"),
    ],
)
def test_bad_schedule_names_file_and_key(tmp_path: Path, text: str, message: str) -> None:
    path = write(tmp_path, "bad.toml", text)
    with pytest.raises(ScheduleError) as info:
        load_schedules(tmp_path)
    assert str(info.value).startswith(str(path))
    assert message in str(info.value)
    assert "\n" not in str(info.value)


def test_duplicate_url_across_files(tmp_path: Path) -> None:
    write(tmp_path, "a.toml", '[[feed]]\nurl = "https://x.example/f"\n')
    write(tmp_path, "b.toml", '[[feed]]\nurl = "https://x.example/f"\n')
    with pytest.raises(ScheduleError, match=r"b\.toml: url: duplicate feed URL, also in .*a\.toml"):
        load_schedules(tmp_path)


def test_missing_directory(tmp_path: Path) -> None:
    with pytest.raises(ScheduleError, match="no such schedules directory"):
        load_schedules(tmp_path / "nope")


@pytest.mark.parametrize(
    ("text", "seconds"),
    [("90s", 90), ("30m", 1800), ("1h", 3600), ("1h30m", 5400), ("2d", 172800), ("1w", 604800)],
)
def test_parse_interval(text: str, seconds: int) -> None:
    assert parse_interval(text) == timedelta(seconds=seconds)


@given(st.integers(min_value=1, max_value=int(MAX_INTERVAL.total_seconds())))
def test_interval_round_trip(seconds: int) -> None:
    interval = timedelta(seconds=seconds)
    assert parse_interval(format_interval(interval)) == interval


@given(st.integers(min_value=int(MAX_INTERVAL.total_seconds()) + 1, max_value=10**4000))
def test_an_interval_over_a_year_is_one_line_of_value_error(seconds: int) -> None:
    text = f"{seconds}s"
    with pytest.raises(ValueError, match="is over the ceiling of a year") as caught:
        parse_interval(text)
    assert len(str(caught.value)) < 120


def test_add_schedule_writes_a_file_that_loads_back(tmp_path: Path) -> None:
    feed = FeedSchedule(
        url="https://x.example/feed.xml", name='My "Show"', every=timedelta(minutes=45)
    )
    path = add_schedule(tmp_path, feed)
    assert path.name == "my-show.toml"
    (loaded,) = load_schedules(tmp_path)
    assert (loaded.url, loaded.name, loaded.every, loaded.pages) == (
        feed.url,
        'My "Show"',
        timedelta(minutes=45),
        True,
    )
    with pytest.raises(ScheduleError, match="already scheduled"):
        add_schedule(tmp_path, feed)


def test_page_every_transcripts_and_chapters(tmp_path: Path) -> None:
    write(
        tmp_path,
        "a.toml",
        '[[feed]]\nurl = "https://a.example/1"\npage_every = "12h"\n'
        "transcripts = false\nchapters = false\n"
        '[[feed]]\nurl = "https://a.example/2"\npage_every = "1h"\n'
        '[[feed]]\nurl = "https://a.example/3"\ntranscripts = true\nchapters = true\n',
    )
    first, second, third = load_schedules(tmp_path)
    assert (first.page_every, first.transcripts, first.chapters) == (
        timedelta(hours=12),
        False,
        False,
    )
    assert second.page_every == timedelta(hours=1)  # the floor itself is fine
    assert (third.page_every, third.transcripts, third.chapters) == (None, True, True)
    default = FeedSchedule(url="https://x.example/f")
    assert (default.page_every, default.transcripts, default.chapters) == (None, True, True)


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ('page_every = "soon"', "feed[0].page_every: bad interval"),
        ('page_every = "0h"', "feed[0].page_every: interval"),
        ('page_every = ""', "feed[0].page_every: bad interval"),
        ('page_every = "59m"', "feed[0].page_every: page_every must be at least 60 minutes"),
        ('page_every = "10s"', "feed[0].page_every: page_every must be at least 60 minutes"),
        ("page_every = 3600", "feed[0].page_every: must be a str"),
        ('transcripts = "yes"', "feed[0].transcripts: must be a bool"),
        ("transcripts = 1", "feed[0].transcripts: must be a bool"),
        ('chapters = "false"', "feed[0].chapters: must be a bool"),
        ("chapters = 0", "feed[0].chapters: must be a bool"),
        ("chapter = true", "feed[0].chapter: unknown key"),
    ],
)
def test_bad_new_keys_name_file_and_key(tmp_path: Path, line: str, message: str) -> None:
    path = write(tmp_path, "bad.toml", f'[[feed]]\nurl = "https://x.example/f"\n{line}\n')
    with pytest.raises(ScheduleError) as info:
        load_schedules(tmp_path)
    assert str(info.value).startswith(f"{path}: ")
    assert message in str(info.value)
    assert "\n" not in str(info.value)


def test_page_every_under_the_floor_needs_allow_fast(tmp_path: Path) -> None:
    write(tmp_path, "fast.toml", '[[feed]]\nurl = "https://x.example/f"\npage_every = "5m"\n')
    with pytest.raises(ScheduleError, match=r"fast\.toml: feed\[0\]\.page_every: .*--allow-fast"):
        load_schedules(tmp_path)
    (feed,) = load_schedules(tmp_path, allow_fast=True)
    assert feed.page_every == timedelta(minutes=5)


@pytest.mark.parametrize(
    "feed",
    [
        FeedSchedule(url="https://x.example/a"),
        FeedSchedule(url="https://x.example/b", page_every=timedelta(days=1, hours=6)),
        FeedSchedule(url="https://x.example/c", transcripts=False),
        FeedSchedule(url="https://x.example/d", chapters=False, pages=False),
        FeedSchedule(
            url="https://x.example/e",
            name="All",
            cron="0 * * * *",
            every=None,
            page_every=timedelta(weeks=2),
            transcripts=False,
            chapters=False,
        ),
    ],
    ids=lambda f: f.url[-1],
)
def test_render_round_trip_of_new_keys(tmp_path: Path, feed: FeedSchedule) -> None:
    text = render_schedule(feed)
    for key, default in (("page_every", None), ("transcripts", True), ("chapters", True)):
        assert (f"\n{key} = " in text) == (getattr(feed, key) != default)
    path = write(tmp_path, "one.toml", text)
    (loaded,) = load_schedules(tmp_path)
    assert loaded == dataclasses.replace(feed, source=str(path))


def test_render_writes_an_under_floor_page_every_that_loads_with_allow_fast(
    tmp_path: Path,
) -> None:
    feed = FeedSchedule(url="https://x.example/f", page_every=timedelta(minutes=5))
    path = add_schedule(tmp_path, feed, allow_fast=True)
    assert 'page_every = "5m"' in path.read_text()
    with pytest.raises(ScheduleError, match="page_every"):
        load_schedules(tmp_path)
    (loaded,) = load_schedules(tmp_path, allow_fast=True)
    assert loaded.page_every == timedelta(minutes=5)
