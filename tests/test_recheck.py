"""Tests for podarchive.rules.recheck: age rule, back-off, jitter, page_every, next_check, properties."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from podarchive.rules.policy import FOREVER, MAX_BACKOFF, PAGE_RETRY_BASE, error_backoff, jitter
from podarchive.rules.recheck import (
    JITTER_CAP,
    JITTER_FRACTION,
    MAX_RECHECK_WAIT,
    MIN_PAGE_EVERY,
    check_page_every,
    episode_age,
    next_check,
    page_recheck_due,
    recheck_backoff,
    recheck_interval,
)

NOW = datetime(2026, 12, 2, 12, 0, tzinfo=UTC)
URL = "https://show.example.com/episodes/42"
H, D, W = timedelta(hours=1), timedelta(days=1), timedelta(weeks=1)


def due(
    *,
    published: datetime | None = None,
    first_seen: datetime = NOW - 3 * D,
    last_checked: datetime | None = NOW - D,
    every: timedelta | None = None,
    failures: int = 0,
    url: str = URL,
) -> datetime:
    return page_recheck_due(
        url=url,
        published=published,
        first_seen=first_seen,
        last_checked=last_checked,
        now=NOW,
        every=every,
        failures=failures,
    )


def jit(interval: timedelta, url: str = URL) -> timedelta:
    return jitter(url, interval, JITTER_FRACTION, JITTER_CAP)


@pytest.mark.parametrize(
    ("age", "interval"),
    [
        (timedelta(), D),
        (6 * D + 23 * H, D),
        (7 * D, W),
        (29 * D, W),
        (30 * D, 30 * D),
        (3650 * D, 30 * D),
    ],
)
def test_age_rule(age: timedelta, interval: timedelta) -> None:
    assert recheck_interval(age) == interval


def test_age_from_published_else_first_seen_never_negative() -> None:
    assert episode_age(NOW - 10 * D, NOW - D, NOW) == 10 * D
    assert episode_age(None, NOW - D, NOW) == D
    assert episode_age(NOW + D, NOW - D, NOW) == timedelta()  # a date in the future


def test_never_checked_is_due_now() -> None:
    assert due(last_checked=None) == NOW
    assert due(last_checked=None, every=W, failures=5) == NOW


def test_due_follows_the_age_at_the_last_check() -> None:
    checked = NOW - D
    assert due(published=NOW - 3 * D, last_checked=checked) == checked + D + jit(D)
    assert due(published=NOW - 10 * D, last_checked=checked) == checked + W + jit(W)
    old = 30 * D
    assert due(published=NOW - 400 * D, last_checked=checked) == checked + old + jit(old)
    # the age at the last check counts, not at now: the due time does not move between runs
    assert due(published=checked - 6 * D - 23 * H, last_checked=checked) == checked + D + jit(D)


def test_published_wins_over_first_seen() -> None:
    # a back catalogue found today: old episodes are checked monthly, not daily
    assert due(published=NOW - 400 * D, first_seen=NOW - D) > NOW + W


def test_every_overrides_the_age_rule() -> None:
    checked = NOW - D
    assert due(published=NOW - 400 * D, every=6 * H, last_checked=checked) == checked + 6 * H + jit(
        6 * H
    )


@pytest.mark.parametrize(
    ("interval", "failures", "wait"),
    [
        (D, 0, D),
        (D, 1, 2 * D),
        (D, 2, 4 * D),
        (D, 3, 8 * D),
        (D, 50, 8 * D),
        (D, -1, D),
        (W, 3, 56 * D),
        (30 * D, 1, 60 * D),
        (30 * D, 2, MAX_RECHECK_WAIT),
        (30 * D, 9, MAX_RECHECK_WAIT),
        (365 * D, 3, 365 * D),  # a longer page_every is never shortened
        (timedelta.max, 3, timedelta.max),
    ],
)
def test_backoff(interval: timedelta, failures: int, wait: timedelta) -> None:
    assert recheck_backoff(interval, failures) == wait


def test_failures_back_off_from_the_last_check() -> None:
    checked = NOW - D
    assert due(last_checked=checked, failures=2) == checked + 4 * D + jit(D)


def test_jitter_spreads_pages_and_is_stable() -> None:
    checked = NOW - D
    times = {due(url=f"https://show.example.com/e/{i}", last_checked=checked) for i in range(200)}
    assert len(times) > 190
    assert all(checked + D <= t < checked + D + D / 10 for t in times)
    assert due(last_checked=checked) == due(last_checked=checked)


def test_past_the_calendar_is_forever() -> None:
    assert due(every=timedelta.max, last_checked=NOW) == FOREVER


def test_check_page_every() -> None:
    assert check_page_every(2 * H) == 2 * H
    assert check_page_every(MIN_PAGE_EVERY) == MIN_PAGE_EVERY
    with pytest.raises(ValueError, match="at least 60 minutes"):
        check_page_every(timedelta(minutes=5))
    assert check_page_every(timedelta(seconds=1), allow_fast=True) == timedelta(seconds=1)


# --- properties ----------------------------------------------------------------------------

MOMENTS = st.datetimes(
    min_value=datetime(2000, 1, 1), max_value=datetime(2040, 1, 1), timezones=st.just(UTC)
)
SPANS = st.timedeltas(min_value=timedelta(), max_value=timedelta(days=2000))
EVERY = st.none() | st.timedeltas(min_value=timedelta(seconds=1), max_value=timedelta(days=400))


@given(MOMENTS, SPANS, st.none() | SPANS, SPANS, EVERY, st.integers(0, 20), st.text(max_size=30))
def test_due_between_min_and_max(
    checked: datetime,
    seen_before: timedelta,
    published_before: timedelta | None,
    until_now: timedelta,
    every: timedelta | None,
    failures: int,
    url: str,
) -> None:
    published = None if published_before is None else checked - published_before
    got = page_recheck_due(
        url=url,
        published=published,
        first_seen=checked - seen_before,
        last_checked=checked,
        now=checked + until_now,
        every=every,
        failures=failures,
    )
    interval = every or recheck_interval(episode_age(published, checked - seen_before, checked))
    minimum = every or timedelta(days=1)
    assert got >= checked + minimum
    assert got >= checked + interval
    upper = recheck_backoff(interval, failures) + min(interval * JITTER_FRACTION, JITTER_CAP)
    assert got <= checked + upper
    if failures == 0:
        assert got < checked + interval + max(min(interval / 10, JITTER_CAP), timedelta.resolution)


@given(MOMENTS, SPANS, SPANS, st.integers(0, 5), st.text(max_size=30))
def test_older_episodes_are_checked_no_more_often(
    checked: datetime, younger: timedelta, extra: timedelta, failures: int, url: str
) -> None:
    def at(age: timedelta) -> datetime:
        return page_recheck_due(
            url=url,
            published=checked - age,
            first_seen=checked,
            last_checked=checked,
            now=checked,
            failures=failures,
        )

    assert at(younger + extra) >= at(younger)


@given(MOMENTS, SPANS, SPANS, st.none() | SPANS, EVERY.filter(lambda e: e is not None))
def test_every_always_wins(
    checked: datetime,
    a: timedelta,
    b: timedelta,
    published: timedelta | None,
    every: timedelta,
) -> None:
    def at(seen: timedelta) -> datetime:
        return page_recheck_due(
            url=URL,
            published=None if published is None else checked - published,
            first_seen=checked - seen,
            last_checked=checked,
            now=checked,
            every=every,
        )

    assert at(a) == at(b) == checked + every + jit(every)


@given(MOMENTS, st.none() | MOMENTS, EVERY, st.integers(0, 20))
def test_never_checked_is_always_due_now(
    now: datetime, published: datetime | None, every: timedelta | None, failures: int
) -> None:
    got = page_recheck_due(
        url=URL,
        published=published,
        first_seen=now,
        last_checked=None,
        now=now,
        every=every,
        failures=failures,
    )
    assert got == now


# --- next_check: pages and files fetched at ``now`` ----------------------------------------

URLS = st.text(max_size=30) | st.just(URL)
FAILURES = st.integers(0, 60) | st.integers(61, 10**6)


@st.composite
def fetches(draw: st.DrawFn) -> dict[str, Any]:
    """next_check's keywords but ``archived`` and ``failures``: a fetch at ``now``."""
    now = draw(MOMENTS)
    return {
        "url": draw(URLS),
        "published": draw(st.none() | MOMENTS),  # after now too: age 0
        "first_seen": draw(st.sampled_from([now]) | MOMENTS),
        "now": now,
        "every": draw(EVERY),
    }


def interval_at_now(fetch: dict[str, Any]) -> timedelta:
    """The interval a page checked now follows: ``every``, else the age rule at now."""
    every: timedelta | None = fetch["every"]
    if every is not None:
        return every
    return recheck_interval(episode_age(fetch["published"], fetch["first_seen"], fetch["now"]))


@settings(max_examples=60)
@given(fetches(), FAILURES)
def test_next_check_of_an_archived_page_is_its_recheck_from_now(
    fetch: dict[str, Any], failures: int
) -> None:
    got = next_check(archived=True, failures=failures, **fetch)
    assert got == page_recheck_due(last_checked=fetch["now"], failures=failures, **fetch)


@settings(max_examples=60)
@given(fetches())
def test_next_check_of_an_archived_page_waits_at_least_its_interval(
    fetch: dict[str, Any],
) -> None:
    now, interval = fetch["now"], interval_at_now(fetch)
    got = next_check(archived=True, **fetch)
    assert got >= now + interval
    assert got < now + interval + max(
        min(interval * JITTER_FRACTION, JITTER_CAP), timedelta.resolution
    )
    if fetch["every"] is None:
        assert got >= now + D  # the age rule's shortest interval


@settings(max_examples=60)
@given(fetches(), st.booleans(), FAILURES, FAILURES)
def test_next_check_is_monotone_in_failures(
    fetch: dict[str, Any], archived: bool, a: int, b: int
) -> None:
    fewer, more = sorted((a, b))
    assert next_check(archived=archived, failures=fewer, **fetch) <= next_check(
        archived=archived, failures=more, **fetch
    )


@settings(max_examples=60)
@given(fetches(), FAILURES)
def test_next_check_of_an_archived_page_backs_off_at_most_to_the_longest_wait(
    fetch: dict[str, Any], failures: int
) -> None:
    now, interval = fetch["now"], interval_at_now(fetch)
    got = next_check(archived=True, failures=failures, **fetch)
    assert got >= now + interval  # a back-off never shortens the interval
    assert got <= now + max(interval, MAX_RECHECK_WAIT) + JITTER_CAP
    assert got < now + max(interval, MAX_RECHECK_WAIT) + max(
        min(interval * JITTER_FRACTION, JITTER_CAP), timedelta.resolution
    )


@settings(max_examples=60)
@given(fetches(), FAILURES)
def test_next_check_of_a_file_never_read_is_the_page_retry_back_off(
    fetch: dict[str, Any], failures: int
) -> None:
    """Never read: the page retry back-off from now; the age rule, ``every`` and the jitter
    play no part.
    """
    now = fetch["now"]
    got = next_check(archived=False, failures=failures, **fetch)
    assert got == now + error_backoff(max(1, failures), PAGE_RETRY_BASE)
    assert now < got <= now + max(MAX_BACKOFF, PAGE_RETRY_BASE)
    assert got == next_check(
        url="other",
        archived=False,
        published=None,
        first_seen=now,
        now=now,
        every=timedelta(days=365),
        failures=failures,
    )
    if failures <= 1:
        assert got == now + PAGE_RETRY_BASE  # the first retry: an hour


@pytest.mark.parametrize(
    ("archived", "failures", "wait"),
    [
        (True, 0, 30 * D),  # a 400-day-old episode: monthly
        (True, 1, 60 * D),
        (True, 3, MAX_RECHECK_WAIT),
        (False, 0, H),
        (False, 1, H),
        (False, 2, 2 * H),
        (False, 5, 16 * H),
        (False, 6, D),  # error_backoff's cap
        (False, 60, D),
    ],
)
def test_next_check_examples(archived: bool, failures: int, wait: timedelta) -> None:
    got = next_check(
        url=URL, archived=archived, published=NOW - 400 * D, first_seen=NOW - D, now=NOW,
        failures=failures,
    )  # fmt: skip
    assert got == NOW + wait + (jit(30 * D) if archived else timedelta())


def test_next_check_past_the_calendar_is_forever() -> None:
    end = datetime.max.replace(tzinfo=UTC) - H
    assert next_check(url=URL, archived=True, published=None, first_seen=NOW, now=NOW,
                      every=timedelta.max) == FOREVER  # fmt: skip
    assert next_check(url=URL, archived=False, published=None, first_seen=end, now=end,
                      failures=9) == FOREVER  # fmt: skip
