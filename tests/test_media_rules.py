"""Tests for podarchive.rules.media: which files, when re-checked, which versions, the budget."""

from __future__ import annotations

import threading
from datetime import UTC, date, datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from podarchive.core.types import Enclosure
from podarchive.rules.media import (
    Budget,
    GiB,
    MediaChoice,
    MediaTarget,
    alternate_sources,
    media_kind,
    next_media_check,
    versions_to_drop,
    wanted_media,
)

ON = MediaChoice(media=True)
T0 = datetime(2026, 1, 1, 12, tzinfo=UTC)
DAY = timedelta(days=1)


@pytest.mark.parametrize(
    ("content_type", "url", "kind"),
    [
        ("audio/mpeg", "https://h.example/e", "audio"),
        ("Audio/MP4; codecs=mp4a", "https://h.example/e.mp4", "audio"),  # the type wins
        ("video/mp4", "https://h.example/e.mp3", "video"),
        (None, "https://h.example/a/e.MP3?x=1", "audio"),
        ("", "https://h.example/e.opus", "audio"),
        ("application/octet-stream", "https://h.example/e.m4v", "video"),
        (None, "https://h.example/e%2Ewebm", "video"),
        (None, "https://h.example/e.mp3/", None),
        (None, "https://h.example/episode", None),
        ("application/pdf", "https://h.example/e.mp3", None),
        ("text/html", "https://h.example/e.mp4", None),
    ],
)
def test_media_kind_by_type_else_extension(
    content_type: str | None, url: str, kind: str | None
) -> None:
    assert media_kind(content_type, url) == kind


def test_nothing_without_media() -> None:
    enclosure = Enclosure("https://h.example/e.mp3", "audio/mpeg", 100)
    assert wanted_media(enclosure, [], T0, MediaChoice()) == []
    assert wanted_media(None, [], T0, ON) == []


def test_enclosure_by_media_types() -> None:
    audio = Enclosure("https://h.example/e.mp3", "audio/mpeg", 100)
    video = Enclosure("https://h.example/e.mp4", None, None)
    assert wanted_media(audio, [], T0, ON) == [
        MediaTarget("https://h.example/e.mp3", "audio/mpeg", 100, "audio")
    ]
    only_video = MediaChoice(media=True, media_types=frozenset({"video"}))
    assert wanted_media(audio, [], T0, only_video) == []
    assert [t.kind for t in wanted_media(video, [], T0, only_video)] == ["video"]
    pdf = Enclosure("https://h.example/e.pdf", "application/pdf", 100)
    assert wanted_media(pdf, [], T0, ON) == []


def test_alternates_only_when_asked_each_url_once() -> None:
    enclosure = Enclosure("https://h.example/e.mp3", "audio/mpeg", 100)
    alternates = alternate_sources(
        "audio/opus",
        50,
        [("https://h.example/e.opus", None), ("https://h.example/e.mp3", None)]
        + [("https://cdn.example/e.mp4", "video/mp4"), ("ipfs://x", None)],
    )
    assert [t.url for t in wanted_media(enclosure, alternates, T0, ON)] == [enclosure.url]
    both = MediaChoice(media=True, media_alternates=True)
    targets = wanted_media(enclosure, alternates, T0, both)
    assert [(t.url, t.kind, t.source) for t in targets] == [
        ("https://h.example/e.mp3", "audio", "enclosure"),
        ("https://h.example/e.opus", "audio", "alternate"),
        ("https://cdn.example/e.mp4", "video", "alternate"),
        ("ipfs://x", "audio", "alternate"),  # the fetcher refuses schemes it does not fetch
    ]
    assert targets[1].length == 50
    assert targets[1].content_type == "audio/opus"


def test_media_since() -> None:
    enclosure = Enclosure("https://h.example/e.mp3", "audio/mpeg")
    since = MediaChoice(media=True, media_since=date(2026, 1, 1))
    assert wanted_media(enclosure, [], T0, since)
    assert wanted_media(enclosure, [], date(2026, 1, 1), since)
    assert wanted_media(enclosure, [], T0 - DAY, since) == []
    assert wanted_media(enclosure, [], None, since) == []  # no date: cannot tell
    assert wanted_media(enclosure, [], None, ON)  # no media_since: every episode


def test_declared_length_over_the_cap_is_skipped_with_a_reason() -> None:
    choice = MediaChoice(media=True, media_max_bytes=1000)
    (at_cap,) = wanted_media(Enclosure("https://h.example/a.mp3", None, 1000), [], T0, choice)
    assert at_cap.skipped is None
    (over,) = wanted_media(Enclosure("https://h.example/b.mp3", None, 1001), [], T0, choice)
    assert over.skipped == "declares 1001 bytes, over media_max_bytes (1000)"
    (bad,) = wanted_media(Enclosure("https://h.example/c.mp3", None, -1), [], T0, choice)
    assert bad.length is None
    assert bad.skipped is None


@given(
    st.lists(
        st.tuples(
            st.sampled_from(["https://h.example/a", "https://h.example/b", "x"]),
            st.sampled_from([".mp3", ".mp4", ".pdf", ""]),
            st.sampled_from([None, "audio/mpeg", "video/mp4", "text/plain"]),
            st.one_of(st.none(), st.integers(-5, 3 * GiB)),
        ),
        max_size=6,
    ),
    st.frozensets(st.sampled_from(["audio", "video"])),
    st.booleans(),
)
def test_wanted_media_properties(
    files: list[tuple[str, str, str | None, int | None]],
    kinds: frozenset[str],
    alternates_on: bool,
) -> None:
    enclosures = [Enclosure(url + ext, kind, length) for url, ext, kind, length in files]
    choice = MediaChoice(media=True, media_types=kinds, media_alternates=alternates_on)  # type: ignore[arg-type]
    first = enclosures[0] if enclosures else None
    targets = wanted_media(first, enclosures[1:], T0, choice)
    urls = [t.url for t in targets]
    assert len(urls) == len(set(urls))
    assert all(t.kind in kinds for t in targets)
    assert all(
        (t.skipped is not None) == ((t.length or 0) > choice.media_max_bytes) for t in targets
    )
    if not alternates_on:
        assert all(t.source == "enclosure" for t in targets)
        assert len(targets) <= 1


def test_rechecks_at_a_day_a_week_a_month_then_never() -> None:
    assert next_media_check(T0, 0, T0, False) == T0 + DAY
    assert next_media_check(T0, 1, T0 + DAY, False) == T0 + 7 * DAY
    assert next_media_check(T0, 2, T0 + 7 * DAY, False) == T0 + 30 * DAY
    assert next_media_check(T0, 3, T0 + 30 * DAY, False) is None
    later = T0 + 400 * DAY
    assert next_media_check(T0, 3, later, True) == later  # --recheck-media
    assert next_media_check(T0, 0, later, True) == later


def test_a_late_recheck_skips_the_ages_it_passed() -> None:
    # archived, then no run for 2 months: one re-check, not three in a row
    assert next_media_check(T0, 0, T0 + 60 * DAY, False) == T0 + DAY  # due (in the past)
    assert next_media_check(T0, 1, T0 + 60 * DAY, False, last_checked=T0 + 60 * DAY) is None
    assert next_media_check(T0, 1, T0 + 8 * DAY, False, last_checked=T0 + 8 * DAY) == T0 + 30 * DAY


@given(st.integers(0, 10), st.integers(0, 100), st.booleans())
def test_next_media_check_properties(done: int, hours: int, recheck: bool) -> None:
    now = T0 + timedelta(hours=hours)
    due = next_media_check(T0, done, now, recheck)
    if recheck:
        assert due == now
    elif done >= 3:
        assert due is None
    else:
        assert due is not None
        assert T0 + DAY <= due <= T0 + 30 * DAY


def test_versions_to_drop_keeps_first_and_latest() -> None:
    versions = [(1, "a"), (2, "b"), (3, "c"), (4, "d"), (5, "e")]
    assert versions_to_drop(versions, 3) == ["b", "c"]
    assert versions_to_drop(versions, 2) == ["b", "c", "d"]
    assert versions_to_drop(versions, 1) == ["b", "c", "d", "e"]
    assert versions_to_drop(versions, 5) == []
    assert versions_to_drop(list(reversed(versions)), 3) == ["b", "c"]  # by number, not order
    # a payload that came back is kept while a kept version holds it
    assert versions_to_drop([(1, "a"), (2, "b"), (3, "a"), (4, "c")], 2) == ["b"]


@given(
    st.lists(st.sampled_from("abcdef"), min_size=0, max_size=12),
    st.integers(1, 6),
)
def test_versions_to_drop_properties(shas: list[str], cap: int) -> None:
    versions = list(enumerate(shas, start=1))
    dropped = versions_to_drop(versions, cap)
    kept = [(n, sha) for n, sha in versions if sha not in dropped]
    assert len(dropped) == len(set(dropped))
    if versions:
        assert versions[0] in kept  # never the first
        if cap >= 2:
            assert versions[-1] in kept  # and the latest
    assert len({sha for _, sha in kept}) <= max(cap, 1)


def test_budget_takes_until_spent() -> None:
    budget = Budget(100)
    assert budget.take(60)
    assert budget.left == 40
    assert not budget.take(41)
    assert budget.left == 40
    assert budget.take(40)
    assert budget.left == 0
    assert budget.take(0)
    budget.give_back(500)
    assert budget.left == 100
    assert budget.spent == 0
    with pytest.raises(ValueError, match="cannot take"):
        budget.take(-1)


def test_budget_is_shared_by_threads() -> None:
    budget = Budget(10_000)
    taken: list[bool] = []
    lock = threading.Lock()

    def worker() -> None:
        for _ in range(1000):
            ok = budget.take(3)
            with lock:
                taken.append(ok)

    threads = [threading.Thread(target=worker) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sum(taken) == 10_000 // 3
    assert budget.spent == 3 * (10_000 // 3)
