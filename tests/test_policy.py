from __future__ import annotations

import random
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime

import pytest
from hypothesis import given
from hypothesis import strategies as st

from podarchive.rules.policy import (
    FOREVER,
    MAX_BACKOFF,
    MAX_FLOOR,
    MAX_RETRY_AFTER,
    NEVER,
    PodcastIdentity,
    RedirectSighting,
    cache_directives,
    error_backoff,
    freshness_floor,
    is_due,
    is_transient_status,
    jitter,
    next_due,
    parse_retry_after,
    retry_delays,
    same_podcast,
    should_follow_move,
)

NOW = datetime(2026, 12, 2, 12, 0, tzinfo=UTC)  # a Wednesday
KEY = "https://feeds.example.com/show.xml"
H, D = timedelta(hours=1), timedelta(days=1)


def http_date(when: datetime) -> str:
    return format_datetime(when, usegmt=True)


# --- parse_retry_after ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (None, None),
        ("", None),
        ("soon", None),
        ("-5", None),
        ("1.5", None),
        ("\u0663", None),  # an Arabic-Indic digit is not delta-seconds
        ("0", NOW),
        ("120", NOW + timedelta(seconds=120)),
        (" 120 ", NOW + timedelta(seconds=120)),
        ("999999999999", NOW + MAX_RETRY_AFTER),
        ("9" * 5000, NOW + MAX_RETRY_AFTER),
        (http_date(NOW + H), NOW + H),
        ("Wed, 02 Dec 2026 13:00:00 GMT", NOW + H),
        ("Wed, 02 Dec 2026 14:00:00 +0100", NOW + H),
        ("Wed, 02 Dec 2026 13:00:00 -0000", NOW + H),  # no zone: UTC
        ("Wed, 21 Oct 2015 07:28:00 GMT", NOW),  # past → now
        (http_date(NOW + timedelta(days=30)), NOW + MAX_RETRY_AFTER),
        ("Fri, 31 Dec 9999 23:59:59 -2359", NOW + MAX_RETRY_AFTER),
        ("Mon, 01 Jan 0001 00:00:00 +2359", NOW),
        ("Wed, 32 Dec 2026 13:00:00 GMT", None),
    ],
)
def test_parse_retry_after(value: str | None, expected: datetime | None) -> None:
    assert parse_retry_after(value, NOW) == expected


@given(
    st.one_of(
        st.none(),
        st.text(),
        st.integers(min_value=-(10**30), max_value=10**30).map(str),
        st.datetimes(timezones=st.just(UTC)).map(http_date),
    )
)
def test_retry_after_never_raises_nor_exceeds_cap(value: str | None) -> None:
    when = parse_retry_after(value, NOW)
    assert when is None or NOW <= when <= NOW + MAX_RETRY_AFTER


# --- freshness_floor -----------------------------------------------------------------------


def test_cache_directives_respect_quotes() -> None:
    assert cache_directives('private="set-cookie, x-foo", MAX-AGE="60", no-store') == {
        "private": "set-cookie, x-foo",
        "max-age": "60",
        "no-store": None,
    }


@pytest.mark.parametrize(
    ("headers", "expected"),
    [
        ({}, None),
        ({"cache-control": "max-age=300"}, timedelta(seconds=300)),
        ({"cache-control": 'public, max-age="600", must-revalidate'}, timedelta(seconds=600)),
        ({"cache-control": "Public,MAX-AGE=60"}, timedelta(seconds=60)),
        ({"cache-control": 'private="set-cookie, max-age=9", max-age=120'}, timedelta(seconds=120)),
        ({"cache-control": 'no-cache="set-cookie", max-age=120'}, timedelta(seconds=120)),
        ({"cache-control": "max-age=60, max-age=6000"}, timedelta(seconds=60)),  # first wins
        ({"cache-control": "no-cache, max-age=600"}, None),
        ({"cache-control": "no-store", "expires": http_date(NOW + H)}, None),
        ({"cache-control": "max-age=0"}, None),
        ({"cache-control": "max-age=-1"}, None),
        ({"cache-control": "max-age=abc"}, None),
        ({"cache-control": "s-maxage=3600"}, None),
        ({"cache-control": "s-maxage=3600, max-age=60"}, timedelta(seconds=60)),
        ({"cache-control": "max-age=604800"}, MAX_FLOOR),
        ({"cache-control": "max-age=600", "age": "100"}, timedelta(seconds=500)),
        ({"cache-control": "max-age=600", "age": "900"}, None),
        ({"cache-control": "max-age=60", "expires": http_date(NOW + H)}, timedelta(seconds=60)),
        ({"cache-control": "max-age=x", "expires": http_date(NOW + H)}, H),
        ({"expires": http_date(NOW + H)}, H),
        ({"expires": http_date(NOW - H)}, None),  # in the past
        ({"expires": "0"}, None),
        ({"expires": http_date(NOW + H), "date": "garbage"}, H),
    ],
)
def test_floor_from_http(headers: dict[str, str], expected: timedelta | None) -> None:
    assert freshness_floor(headers, NOW) == (None if expected is None else NOW + expected)


def test_expires_counts_from_date() -> None:
    headers = {"expires": http_date(NOW + H), "date": http_date(NOW - timedelta(minutes=10))}
    assert freshness_floor(headers, NOW) == NOW + H + timedelta(minutes=10)


@pytest.mark.parametrize(
    ("headers", "feed", "expected"),
    [
        ({"cache-control": "max-age=300"}, {"ttl_minutes": 60}, H),  # ttl larger
        ({"cache-control": "max-age=3600"}, {"ttl_minutes": 5}, H),  # max-age larger
        ({"cache-control": "no-cache"}, {"ttl_minutes": 30}, timedelta(minutes=30)),
        ({}, {"ttl_minutes": 7 * 24 * 60}, MAX_FLOOR),  # ttl of a week: capped
        ({}, {"ttl_minutes": -5}, None),
        ({}, {"ttl_minutes": 0}, None),
        ({}, {"ttl_minutes": 10**400}, MAX_FLOOR),
        ({}, {"update_period": "weekly", "update_frequency": 7}, D),
        ({}, {"update_period": "  Hourly "}, H),
        ({}, {"update_period": "daily", "update_frequency": 2}, 12 * H),
        ({}, {"update_frequency": 4}, 6 * H),  # period defaults to daily
        ({}, {"update_period": "yearly"}, MAX_FLOOR),
        ({}, {"update_period": "fortnightly"}, None),
        ({}, {"update_period": "daily", "update_frequency": 0}, None),
        ({}, {"update_period": "daily", "update_frequency": 10**400}, None),
        ({}, {"ttl_minutes": 90, "update_period": "hourly"}, timedelta(minutes=90)),
    ],
)
def test_floor_takes_the_largest_hint(
    headers: dict[str, str], feed: dict[str, int | str], expected: timedelta | None
) -> None:
    floor = freshness_floor(headers, NOW, **feed)  # type: ignore[arg-type]
    assert floor == (None if expected is None else NOW + expected)


@given(
    st.dictionaries(st.sampled_from(["cache-control", "expires", "date", "age"]), st.text()),
    st.one_of(st.none(), st.integers()),
    st.one_of(st.none(), st.text()),
    st.one_of(st.none(), st.integers()),
)
def test_floor_never_raises_and_is_capped(
    headers: dict[str, str], ttl: int | None, period: str | None, frequency: int | None
) -> None:
    floor = freshness_floor(
        headers, NOW, ttl_minutes=ttl, update_period=period, update_frequency=frequency
    )
    assert floor is None or NOW < floor <= NOW + MAX_FLOOR


# --- error_backoff and jitter --------------------------------------------------------------


@pytest.mark.parametrize(
    ("errors", "interval", "expected"),
    [
        (0, H, H),
        (-3, H, H),
        (1, H, H),
        (2, H, 2 * H),
        (3, H, 4 * H),
        (5, H, 16 * H),
        (6, H, MAX_BACKOFF),  # 32h capped
        (10**18, H, MAX_BACKOFF),
        (10**18, timedelta(seconds=1), MAX_BACKOFF),
        (3, timedelta(weeks=1), timedelta(weeks=1)),  # never below the interval
        (4, timedelta(), timedelta()),
    ],
)
def test_error_backoff(errors: int, interval: timedelta, expected: timedelta) -> None:
    assert error_backoff(errors, interval) == expected


intervals = st.timedeltas(min_value=timedelta(seconds=1), max_value=timedelta(weeks=8))


@given(st.integers(max_value=10**20), st.integers(max_value=10**20), intervals)
def test_error_backoff_is_monotone_and_capped(a: int, b: int, interval: timedelta) -> None:
    low, high = sorted((a, b))
    assert interval <= error_backoff(low, interval) <= error_backoff(high, interval)
    assert error_backoff(high, interval) <= max(interval, MAX_BACKOFF)
    if interval <= MAX_BACKOFF:
        assert error_backoff(high, interval) <= MAX_BACKOFF


@pytest.mark.parametrize(
    ("interval", "fraction", "cap", "bound"),
    [
        (H, 0.1, timedelta(minutes=5), timedelta(minutes=5)),  # 6 min, capped
        (timedelta(minutes=10), 0.1, timedelta(minutes=5), timedelta(minutes=1)),
        (D, 0.5, timedelta(hours=2), timedelta(hours=2)),
        (H, 5.0, timedelta(days=9), H),  # fraction clamped to 1
    ],
)
def test_jitter_bounds(
    interval: timedelta, fraction: float, cap: timedelta, bound: timedelta
) -> None:
    offsets = {jitter(f"https://host/{i}.xml", interval, fraction, cap) for i in range(500)}
    assert all(timedelta() <= j < bound for j in offsets)
    assert len(offsets) > 450  # spread out
    assert max(offsets) > bound * 0.9


@pytest.mark.parametrize(
    ("interval", "fraction", "cap"),
    [
        (timedelta(), 0.1, timedelta(minutes=5)),
        (H, 0.0, timedelta(minutes=5)),
        (H, -1.0, timedelta(minutes=5)),
        (H, float("nan"), timedelta(minutes=5)),
        (H, 0.1, timedelta()),
        (-H, 0.1, timedelta(minutes=5)),
    ],
)
def test_jitter_zero_width(interval: timedelta, fraction: float, cap: timedelta) -> None:
    assert jitter(KEY, interval, fraction, cap) == timedelta()


@given(
    st.text(),
    intervals,
    st.floats(allow_nan=True, allow_infinity=True),
    st.timedeltas(max_value=timedelta(days=30)),
)
def test_jitter_is_bounded_and_deterministic(
    key: str, interval: timedelta, fraction: float, cap: timedelta
) -> None:
    offset = jitter(key, interval, fraction, cap)
    assert offset == jitter(key, interval, fraction, cap)
    assert offset >= timedelta()
    assert offset == timedelta() or offset < min(interval, cap)
    if fraction == fraction and 0 < fraction <= 1:
        assert offset <= interval * fraction


# --- next_due ------------------------------------------------------------------------------


def due(**kwargs: object) -> datetime:
    args: dict[str, object] = {
        "every": H,
        "cron": None,
        "last_attempt": NOW,
        "error_count": 0,
        "floor": None,
        "not_before": None,
        "key": KEY,
    }
    return next_due(**(args | kwargs))  # type: ignore[arg-type]


J_HOUR = jitter(KEY, H)
J_WEEK = jitter(KEY, timedelta(weeks=1))


@pytest.mark.parametrize(
    ("kwargs", "expected"),
    [
        ({"last_attempt": None}, NEVER),
        ({"last_attempt": None, "not_before": NOW}, NOW),
        ({}, NOW + H + J_HOUR),
        ({"error_count": 3}, NOW + 4 * H + J_HOUR),
        ({"error_count": 40}, NOW + MAX_BACKOFF + J_HOUR),
        ({"floor": NOW + 3 * H}, NOW + 3 * H),
        ({"floor": NOW + timedelta(minutes=1)}, NOW + H + J_HOUR),
        ({"not_before": NOW + 2 * D, "floor": NOW + D}, NOW + 2 * D),
        # crontab 1 = Monday: from Wednesday noon, next Monday 09:00
        ({"every": None, "cron": "0 9 * * 1"}, datetime(2026, 12, 7, 9, tzinfo=UTC) + J_WEEK),
        # failing: at least one weekly gap after the last attempt
        ({"every": None, "cron": "0 9 * * 1", "error_count": 1}, NOW + timedelta(weeks=1) + J_WEEK),
        # both given: cron wins (as in render_schedule)
        ({"cron": "0 9 * * 1"}, datetime(2026, 12, 7, 9, tzinfo=UTC) + J_WEEK),
        ({"every": None, "cron": "0 0 30 2 *"}, FOREVER),  # 30 February never comes
    ],
)
def test_next_due(kwargs: dict[str, object], expected: datetime) -> None:
    assert due(**kwargs) == expected


def test_cron_attempt_at_fire_time_waits_for_the_next_fire() -> None:
    monday = datetime(2026, 12, 7, 9, tzinfo=UTC)
    assert due(every=None, cron="0 9 * * 1", last_attempt=monday) == monday + timedelta(
        weeks=1
    ) + jitter(KEY, timedelta(weeks=1))
    hourly = due(every=None, cron="0 * * * *", last_attempt=monday)
    assert hourly == monday + H + J_HOUR


def test_cron_backoff_uses_the_gap_to_the_following_fire() -> None:
    # weekdays at 09:00, failing on Thursday: the next fire is Friday, and the gap after it is
    # Friday → Monday (3 days), so the back-off (never below that gap) lands on Sunday 09:00
    thursday = datetime(2026, 12, 3, 9, tzinfo=UTC)
    gap = timedelta(days=3)
    assert due(every=None, cron="0 9 * * 1-5", last_attempt=thursday, error_count=2) == (
        thursday + gap + jitter(KEY, gap)
    )
    # failing on Friday: Monday's fire, then a 1-day gap; one day of back-off is already over
    friday = datetime(2026, 12, 4, 9, tzinfo=UTC)
    assert due(every=None, cron="0 9 * * 1-5", last_attempt=friday, error_count=2) == (
        datetime(2026, 12, 7, 9, tzinfo=UTC) + jitter(KEY, D)
    )


def test_next_due_needs_a_schedule() -> None:
    with pytest.raises(ValueError, match="every or cron"):
        due(every=None, cron=None)


def test_is_due() -> None:
    assert is_due(NOW, NOW)
    assert is_due(NEVER, NOW)
    assert not is_due(NOW + timedelta(microseconds=1), NOW)
    assert not is_due(FOREVER, NOW)


moments = st.datetimes(
    min_value=datetime(2000, 1, 1), max_value=datetime(2100, 1, 1), timezones=st.just(UTC)
)
CRONS = ["0 9 * * 1", "*/15 * * * *", "0 0 1 * *", "30 6 * * 1-5", "0 0 29 2 *"]


@given(
    every=st.one_of(st.none(), intervals),
    cron=st.one_of(st.none(), st.sampled_from(CRONS)),
    last_attempt=st.one_of(st.none(), moments),
    error_count=st.integers(min_value=0, max_value=10**9),
    floor=st.one_of(st.none(), moments),
    not_before=st.one_of(st.none(), moments),
    key=st.text(),
)
def test_next_due_never_precedes_its_inputs(
    every: timedelta | None,
    cron: str | None,
    last_attempt: datetime | None,
    error_count: int,
    floor: datetime | None,
    not_before: datetime | None,
    key: str,
) -> None:
    if every is None and cron is None:
        every = H
    when = next_due(
        every=every,
        cron=cron,
        last_attempt=last_attempt,
        error_count=error_count,
        floor=floor,
        not_before=not_before,
        key=key,
    )
    for bound in (last_attempt, floor, not_before):
        assert bound is None or when >= bound
    if last_attempt is not None:
        assert when > last_attempt
        if cron is None and every is not None:
            assert when >= last_attempt + error_backoff(error_count, every)


# --- a simulated week ----------------------------------------------------------------------

WEEK_START = datetime(2026, 11, 30, tzinfo=UTC)  # a Monday
TICK = timedelta(minutes=1)
OUTAGE = (WEEK_START + 2 * D + 6 * H, WEEK_START + 3 * D + 6 * H)


def failing(when: datetime) -> bool:
    return OUTAGE[0] <= when < OUTAGE[1]


def simulate(
    every: timedelta, key: str, fails: Callable[[datetime], bool]
) -> list[tuple[datetime, int]]:
    """Step a fake clock through a week; poll when due. Returns (time, errors after it)."""
    polls: list[tuple[datetime, int]] = []
    errors, last = 0, None
    now = WEEK_START
    while now < WEEK_START + timedelta(weeks=1):
        when = next_due(
            every=every,
            cron=None,
            last_attempt=last,
            error_count=errors,
            floor=None,
            not_before=None,
            key=key,
        )
        if is_due(when, now):
            errors = errors + 1 if fails(now) else 0
            last = now
            polls.append((now, errors))
        now += TICK
    return polls


def assert_gaps_follow_backoff(
    polls: list[tuple[datetime, int]], every: timedelta, key: str
) -> None:
    for (before, errors), (after, _) in zip(polls, polls[1:], strict=False):
        expected = error_backoff(errors, every) + jitter(key, every)
        assert timedelta() <= (after - before) - expected < TICK


def test_hourly_feed_across_a_week_with_an_outage() -> None:
    key = "https://a.example/hourly.xml"
    polls = simulate(H, key, failing)
    assert_gaps_follow_backoff(polls, H, key)
    failures = [p for p in polls if p[1]]
    assert [errors for _, errors in failures] == [1, 2, 3, 4, 5]  # 1h, 2h, 4h, 8h, then 16h
    assert all(failing(when) for when, _ in failures)
    recovery = polls[polls.index(failures[-1]) + 1][0]
    assert OUTAGE[1] <= recovery < OUTAGE[1] + 16 * H
    period = H + jitter(key, H)
    healthy = timedelta(weeks=1) - (recovery - failures[0][0])
    assert len(polls) - 5 in range(healthy // (period + TICK), healthy // period + 2)


def test_daily_feed_across_a_week_with_an_outage() -> None:
    key = "https://b.example/daily.xml"
    polls = simulate(D, key, failing)
    assert_gaps_follow_backoff(polls, D, key)
    assert len(polls) == 7  # failing never makes a daily feed poll more often, nor less
    assert [errors for _, errors in polls] == [0, 0, 0, 1, 0, 0, 0]


def test_healthy_feeds_on_one_interval_spread_out() -> None:
    keys = [f"https://host.example/{i}.xml" for i in range(1000)]
    dues = {due(key=key) for key in keys}
    minutes = {(d - NOW - H) // timedelta(minutes=1) for d in dues}
    assert minutes == set(range(5))


# --- failures within a run -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("status", "transient"),
    [
        (None, True),
        (408, True),
        (425, True),
        (429, True),
        (500, True),
        (502, True),
        (503, True),
        (504, True),
        (200, False),
        (304, False),
        (400, False),
        (401, False),
        (403, False),
        (404, False),
        (410, False),
        (501, False),
        (505, False),
    ],
)
def test_is_transient_status(status: int | None, transient: bool) -> None:
    assert is_transient_status(status) is transient


def test_retry_delays_full_jitter() -> None:
    delays = retry_delays(8, rng=random.Random(42))
    assert delays == retry_delays(8, rng=random.Random(42))
    assert len(delays) == 8
    for i, delay in enumerate(delays):
        assert 0.0 <= delay <= min(8.0, 0.5 * 2**i)
    assert delays != retry_delays(8, rng=random.Random(43))


@pytest.mark.parametrize(
    ("attempts", "base", "cap"),
    [(0, 0.5, 8.0), (-1, 0.5, 8.0), (3, 0.0, 8.0), (3, 1.0, 0.0), (3, -1.0, -1.0)],
)
def test_retry_delays_degenerate(attempts: int, base: float, cap: float) -> None:
    assert all(d == 0.0 for d in retry_delays(attempts, base, cap, random.Random(1)))
    assert len(retry_delays(attempts, base, cap, random.Random(1))) == max(attempts, 0)


def test_retry_delays_never_overflow() -> None:
    delays = retry_delays(3000, base=1e300, cap=8.0, rng=random.Random(0))
    assert all(0.0 <= d <= 8.0 for d in delays)
    assert max(retry_delays(3000, base=1e-300, cap=8.0, rng=random.Random(0))) > 4.0


# --- feed moves ----------------------------------------------------------------------------

NEW, OTHER = "https://new.example/feed", "https://other.example/feed"


def seen(*entries: tuple[str, float]) -> list[RedirectSighting]:
    """Sightings of (target, days before NOW)."""
    return [RedirectSighting(t, NOW - timedelta(days=days)) for t, days in entries]


@pytest.mark.parametrize(
    ("sightings", "failing_old", "expected"),
    [
        ([], False, None),
        ([], True, None),
        (seen((NEW, 3), (NEW, 2), (NEW, 1)), False, NEW),
        (seen((NEW, 3), (NEW, 2)), False, None),  # too few polls
        (seen((NEW, 1), (NEW, 0.5), (NEW, 0)), False, None),  # too young
        (seen((NEW, 2), (NEW, 1), (NEW, 0)), False, NEW),  # exactly two days
        (seen((NEW, 5), (NEW, 4), (NEW, 3), (OTHER, 0)), False, None),  # latest differs
        (seen((OTHER, 5), (NEW, 4), (NEW, 3), (NEW, 2)), False, NEW),
        (seen((NEW, 5), (NEW, 4), (OTHER, 3), (NEW, 2), (NEW, 1)), False, None),  # restarted
        (seen((NEW, 1), (NEW, 3), (NEW, 2)), False, NEW),  # order of the list does not matter
        (seen((NEW, 4), (NEW, 3), (OTHER, 0.1)), True, OTHER),  # failing: at once, latest
    ],
)
def test_should_follow_move(
    sightings: list[RedirectSighting], failing_old: bool, expected: str | None
) -> None:
    assert should_follow_move(sightings, NOW, old_url_failing=failing_old) == expected


def test_should_follow_move_thresholds() -> None:
    sightings = seen((NEW, 0.2), (NEW, 0.1))
    assert should_follow_move(sightings, NOW, min_polls=2, min_age=timedelta(hours=4))
    assert not should_follow_move(sightings, NOW, min_polls=3, min_age=timedelta(hours=4))


GUID_A = "917393e3-1b1e-5cef-ace4-edaa54e1f810"
GUID_B = "ead4c236-bf58-58c6-a2c6-a6b28d128cb6"


@pytest.mark.parametrize(
    ("old", "new", "same"),
    [
        (
            PodcastIdentity(GUID_A, "Show", frozenset({"e1"})),
            PodcastIdentity(GUID_A.upper(), "Renamed", frozenset()),
            True,
        ),
        (  # both have a guid: it alone decides
            PodcastIdentity(GUID_A, "Show", frozenset({"e1"})),
            PodcastIdentity(GUID_B, "Show", frozenset({"e1"})),
            False,
        ),
        (
            PodcastIdentity(None, "The  Show", frozenset({"e1", "e2"})),
            PodcastIdentity(GUID_B, " the show ", frozenset({"e2", "e3"})),
            True,
        ),
        (
            PodcastIdentity(None, "The Show", frozenset({"e1"})),
            PodcastIdentity(None, "The Show", frozenset({"e2"})),
            False,
        ),
        (
            PodcastIdentity(None, "The Show", frozenset({"e1"})),
            PodcastIdentity(None, "Another Show", frozenset({"e1"})),
            False,
        ),
        (
            PodcastIdentity("", None, frozenset({"e1"})),
            PodcastIdentity(None, None, frozenset({"e1"})),
            False,
        ),
        (
            PodcastIdentity(None, "Show", frozenset({" "})),
            PodcastIdentity(None, "show", frozenset({" "})),
            False,
        ),
    ],
)
def test_same_podcast(old: PodcastIdentity, new: PodcastIdentity, same: bool) -> None:
    assert same_podcast(old, new) is same
    assert same_podcast(new, old) is same
