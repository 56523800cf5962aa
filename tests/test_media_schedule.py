"""Tests for the schedule files' media keys (#26): defaults, checks, rendering, OPML."""

from __future__ import annotations

import dataclasses
from datetime import UTC, date, datetime
from pathlib import Path

import pytest
from commands import invoke

from podarchive.core.errors import ScheduleError
from podarchive.read.opml import OpmlFeed, parse_opml, render_opml
from podarchive.read.schedule_files import (
    FeedSchedule,
    feed_from_options,
    feed_options,
    load_schedules,
    render_schedule,
    update_schedule,
)
from podarchive.rules.media import GiB, MediaChoice
from podarchive.tasks.subscribe import add_feed

URL = "https://x.example/f"
T0 = datetime(2026, 1, 1, tzinfo=UTC)


def write(directory: Path, name: str, text: str) -> Path:
    path = directory / name
    path.write_text(text)
    return path


def test_media_is_off_by_default(tmp_path: Path) -> None:
    write(tmp_path, "a.toml", f'[[feed]]\nurl = "{URL}"\n')
    (feed,) = load_schedules(tmp_path)
    assert (feed.media, feed.media_types, feed.media_alternates) == (
        False,
        ("audio", "video"),
        False,
    )
    assert (feed.media_since, feed.media_max_bytes, feed.media_versions) == (None, 2 * GiB, 3)
    assert feed.media_choice() == MediaChoice()
    assert "media" not in render_schedule(feed)


def test_media_keys_load(tmp_path: Path) -> None:
    write(
        tmp_path,
        "a.toml",
        f'[[feed]]\nurl = "{URL}"\nmedia = true\nmedia_types = ["video", "audio", "video"]\n'
        "media_alternates = true\nmedia_since = 2024-01-31\nmedia_max_bytes = 1000\n"
        'media_versions = 1\n[[feed]]\nurl = "https://x.example/2"\nmedia = true\n'
        'media_types = "audio"\nmedia_since = "2025-12-01"\n',
    )
    first, second = load_schedules(tmp_path)
    assert first.media_choice() == MediaChoice(
        media=True,
        media_types=frozenset({"audio", "video"}),
        media_alternates=True,
        media_since=date(2024, 1, 31),
        media_max_bytes=1000,
        media_versions=1,
    )
    assert first.media_types == ("audio", "video")
    assert (second.media_types, second.media_since) == (("audio",), date(2025, 12, 1))


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ('media = "yes"', "feed[0].media: must be a bool"),
        ("media_alternates = 1", "feed[0].media_alternates: must be a bool"),
        ("media_types = []", 'feed[0].media_types: must be a list of "audio" and "video"'),
        (
            'media_types = ["podcast"]',
            'feed[0].media_types: must be a list of "audio" and "video", not \'podcast\'',
        ),
        ("media_types = [1]", "not 'int'"),
        ("media_types = true", "feed[0].media_types: must be a list"),
        (
            'media_since = "last year"',
            "feed[0].media_since: must be a date (YYYY-MM-DD), not 'last year'",
        ),
        ('media_since = "2024-02-30"', "feed[0].media_since: must be a date"),
        ("media_since = 2024-01-31T10:00:00Z", "feed[0].media_since: must be a date (YYYY-MM-DD)"),
        ("media_since = 20240131", "feed[0].media_since: must be a date"),
        ("media_max_bytes = 0", "feed[0].media_max_bytes: must be a whole number from 1 to"),
        ('media_max_bytes = "2GiB"', "feed[0].media_max_bytes: must be a whole number"),
        ("media_max_bytes = 2e9", "feed[0].media_max_bytes: must be a whole number"),
        ("media_max_bytes = 2000000000000", "feed[0].media_max_bytes: must be a whole number"),
        ("media_versions = 0", "feed[0].media_versions: must be a whole number from 1 to 1000"),
        ("media_versions = true", "feed[0].media_versions: must be a whole number"),
        ("media_version = 3", "feed[0].media_version: unknown key"),
    ],
)
def test_bad_media_keys_name_file_and_key(tmp_path: Path, line: str, message: str) -> None:
    path = write(tmp_path, "bad.toml", f'[[feed]]\nurl = "{URL}"\n{line}\n')
    with pytest.raises(ScheduleError) as info:
        load_schedules(tmp_path)
    assert str(info.value).startswith(f"{path}: ")
    assert message in str(info.value)
    assert "\n" not in str(info.value)


MEDIA_FEEDS = [
    FeedSchedule(url=URL, media=True),
    FeedSchedule(url=URL, media=True, media_types=("audio",), media_alternates=True),
    FeedSchedule(url=URL, media=True, media_since=date(2020, 2, 29), media_max_bytes=12345),
    FeedSchedule(url=URL, media_versions=7, media_types=("video",)),
]


@pytest.mark.parametrize("feed", MEDIA_FEEDS)
def test_media_keys_render_and_load_back(tmp_path: Path, feed: FeedSchedule) -> None:
    text = render_schedule(feed)
    path = write(tmp_path, "one.toml", text)
    (loaded,) = load_schedules(tmp_path)
    assert loaded == dataclasses.replace(feed, source=str(path))


def test_rendered_media_keys_read_as_written() -> None:
    feed = FeedSchedule(
        url=URL,
        media=True,
        media_types=("audio",),
        media_since=date(2024, 1, 31),
        media_versions=2,
    )
    assert render_schedule(feed).splitlines()[-4:] == [
        "media = true",
        'media_types = ["audio"]',
        "media_since = 2024-01-31",
        "media_versions = 2",
    ]


@pytest.mark.parametrize("feed", MEDIA_FEEDS)
def test_media_keys_survive_opml_export_and_import(feed: FeedSchedule) -> None:
    body = render_opml([OpmlFeed(feed.url, "F", options=feed_options(feed))], "t", T0)
    (outline,) = parse_opml(body)
    back = feed_from_options(outline.url, None, outline.options, path="x.opml", where="podarchive")
    assert back == dataclasses.replace(feed, source="x.opml")


def test_a_bad_media_attribute_in_opml_names_it() -> None:
    with pytest.raises(ScheduleError, match="podarchive:media_versions: must be a whole number"):
        feed_from_options(URL, None, [("media_versions", "-1")], path="x.opml", where="podarchive")
    with pytest.raises(ScheduleError, match="podarchive:media: must be true or false"):
        feed_from_options(URL, None, [("media", "yes")], path="x.opml", where="podarchive")


def test_update_keeps_the_media_keys(tmp_path: Path) -> None:
    path = write(
        tmp_path, "a.toml", f'[[feed]]\nurl = "{URL}"\nmedia = true\nmedia_types = ["audio"]\n'
    )
    (old,) = load_schedules(tmp_path)
    update_schedule(old, dataclasses.replace(old, media_versions=5))
    (new,) = load_schedules(tmp_path)
    assert (new.media, new.media_types, new.media_versions) == (True, ("audio",), 5)
    assert "media_versions = 5" in path.read_text()


# add --media ---------------------------------------------------------------------------------


def test_add_feed_writes_media(tmp_path: Path) -> None:
    report = add_feed(tmp_path, URL, name="M", media=True, check=False)
    assert Path(report.path).read_text().endswith("pages = true\nmedia = true\n")
    (feed,) = load_schedules(tmp_path)
    assert feed.media_choice().media
    again = add_feed(tmp_path, URL, media=False, check=False, given={"media"})
    assert again.changed == ("media back to its default",)
    assert again.action == "updated"
    assert not load_schedules(tmp_path)[0].media


def test_add_media_on_the_command_line(tmp_path: Path) -> None:
    schedules = tmp_path / "schedules"
    where = ["--no-check", "--schedules", str(schedules)]
    code, out, err = invoke("add", URL, "--name", "M", "--media", *where)
    assert (code, err) == (0, "")
    path = schedules / "m.toml"
    assert out == f"added {URL} to {path}\n"
    assert path.read_text() == (
        f'[[feed]]\nurl = "{URL}"\nname = "M"\nevery = "1h"\npages = true\nmedia = true\n'
    )
    # the other media keys, written by hand, are kept when media is switched off and on
    path.write_text(path.read_text() + 'media_types = ["audio"]\n')
    code, out, _ = invoke("add", URL, "--no-media", *where)
    assert (code, out) == (
        0,
        f"updated {URL} in {path}: media back to its default (other settings kept)\n",
    )
    assert (load_schedules(schedules)[0].media, load_schedules(schedules)[0].media_types) == (
        False,
        ("audio",),
    )
    code, out, _ = invoke("add", URL, "--media", *where)
    assert (code, out) == (0, f"updated {URL} in {path}: media = true (other settings kept)\n")
    code, out, _ = invoke("add", "https://x.example/other", "--name", "O", *where)
    assert code == 0
    assert "media" not in (schedules / "o.toml").read_text()


def test_export_and_import_carry_the_media_keys(tmp_path: Path) -> None:
    schedules, other = tmp_path / "schedules", tmp_path / "other"
    schedules.mkdir()
    write(
        schedules,
        "a.toml",
        f'[[feed]]\nurl = "{URL}"\nmedia = true\nmedia_types = ["video"]\n'
        "media_since = 2024-01-31\nmedia_max_bytes = 5000\n",
    )
    opml = tmp_path / "feeds.opml"
    assert invoke("export", "-o", str(opml), "--schedules", str(schedules))[0] == 0
    assert 'podarchive:media_types="video"' in opml.read_text()
    code, _, err = invoke("import", str(opml), "--no-check", "--schedules", str(other))
    assert (code, err) == (0, "")
    (before,), (after,) = load_schedules(schedules), load_schedules(other)
    assert after.media_choice() == before.media_choice()
