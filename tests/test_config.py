from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from podarchive.config import (
    FeedSchedule,
    add_schedule,
    format_interval,
    load_schedules,
    parse_interval,
)
from podarchive.errors import ScheduleError

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


@given(st.integers(min_value=1, max_value=10**8))
def test_interval_round_trip(seconds: int) -> None:
    interval = timedelta(seconds=seconds)
    assert parse_interval(format_interval(interval)) == interval


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
