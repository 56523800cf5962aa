"""The Decider: polite fetching and scheduling, as pure functions over plain data.

Nothing here does I/O or reads the clock: ``now`` is always a parameter. All datetimes are
timezone-aware UTC. The pipeline and the daemon ask these questions; the archive stores the answers.
"""

from __future__ import annotations

import functools
import random
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from itertools import takewhile

from podarchive.rules.cron import next_cron_time

MAX_RETRY_AFTER = timedelta(days=2)  # the longest a server's Retry-After may silence us
MAX_FLOOR = timedelta(days=1)  # the longest a feed's own freshness hints may delay a poll
MAX_BACKOFF = timedelta(days=1)  # the longest error back-off (unless the interval is longer)
NEVER = datetime(1970, 1, 1, tzinfo=UTC)  # due time of a feed never attempted: due at once
FOREVER = datetime.max.replace(tzinfo=UTC)  # due time that never comes (cron that never fires)

TRANSIENT_STATUSES = frozenset({408, 425, 429, 500, 502, 503, 504})
_SY_PERIODS = {
    "hourly": timedelta(hours=1),
    "daily": timedelta(days=1),
    "weekly": timedelta(weeks=1),
    "monthly": timedelta(days=30),
    "yearly": timedelta(days=365),
}
_NO_FLOOR_DIRECTIVES = ("no-cache", "no-store")
_DIGITS = re.compile(r"[0-9]+")
_DIRECTIVE = re.compile(r'([^\s=,]+)\s*(?:=\s*("(?:[^"\\]|\\.)*"|[^\s,]*))?')
_MICROSECOND = timedelta(microseconds=1)
_DATE_ERRORS = (ValueError, TypeError, IndexError, OverflowError)


def _micros(delta: timedelta) -> int:
    return delta // _MICROSECOND


def _add(start: datetime, *deltas: timedelta) -> datetime:
    """``start + sum(deltas)``, or :data:`FOREVER` past the end of the calendar."""
    try:
        return start + sum(deltas, timedelta())
    except OverflowError:
        return FOREVER


def _delta_seconds(value: str | None) -> int | None:
    """A non-negative whole number of seconds (``"120"``), else None."""
    if value is None or not _DIGITS.fullmatch(value.strip()):
        return None
    digits = value.strip().lstrip("0") or "0"
    return int(digits) if len(digits) <= 18 else 10**18  # int() refuses 4300+ digits


def _http_date(value: str | None) -> datetime | None:
    """An HTTP-date as an aware datetime (no zone given → UTC), else None."""
    if not value:
        return None
    # not at import: email.utils brings socket, and a parse worker needs neither (#30)
    from email.utils import parsedate_to_datetime

    try:
        when = parsedate_to_datetime(value.strip())
    except _DATE_ERRORS:
        return None
    return when if when.tzinfo is not None else when.replace(tzinfo=UTC)


# --- Retry-After ---------------------------------------------------------------------------


def parse_retry_after(value: str | None, now: datetime) -> datetime | None:
    """When a ``Retry-After`` (delta-seconds or HTTP-date) lets us ask again.

    Garbage → None; a date in the past → ``now``; never later than ``now + MAX_RETRY_AFTER``.
    """
    seconds = _delta_seconds(value)
    limit = now + MAX_RETRY_AFTER
    if seconds is not None:
        return min(now + timedelta(seconds=min(seconds, 10**9)), limit)
    when = _http_date(value)
    if when is None:
        return None
    try:
        return min(max(when.astimezone(UTC), now), limit)
    except OverflowError:  # year 1 or 9999 shifted out of range by its offset
        return now if when.year < 1000 else limit


# --- Freshness hints -----------------------------------------------------------------------


def _unquote(value: str) -> str:
    if len(value) >= 2 and value[0] == value[-1] == '"':
        return re.sub(r"\\(.)", r"\1", value[1:-1])
    return value


def cache_directives(value: str) -> dict[str, str | None]:
    """``Cache-Control`` as ``{name: value or None}``: names lower-cased, quotes removed.

    Commas inside quoted values do not split; the first occurrence of a directive wins.
    """
    directives: dict[str, str | None] = {}
    for match in _DIRECTIVE.finditer(value):
        name, raw = match.group(1).lower(), match.group(2)
        directives.setdefault(name, None if raw is None else _unquote(raw))
    return directives


def _http_freshness(headers: Mapping[str, str], now: datetime) -> float | None:
    """Seconds the response stays fresh for a private cache (like us), else None.

    ``no-cache`` / ``no-store`` (unqualified) mean "revalidate every time": no floor from HTTP.
    ``max-age`` beats ``Expires`` (minus ``Date``, or ``now`` without one); ``s-maxage`` is for
    shared caches and ignored; ``must-revalidate`` only governs stale copies, so it is ignored.
    ``Age`` (time already spent in a CDN) is subtracted.
    """
    directives = cache_directives(headers.get("cache-control", ""))
    if any(name in directives and directives[name] is None for name in _NO_FLOOR_DIRECTIVES):
        return None
    lifetime: float | None = _delta_seconds(directives.get("max-age"))
    if lifetime is None:
        expires = _http_date(headers.get("expires"))
        if expires is None:
            return None
        lifetime = (expires - (_http_date(headers.get("date")) or now)).total_seconds()
    return lifetime - (_delta_seconds(headers.get("age")) or 0)


def _sy_seconds(period: str | None, frequency: int | None) -> float | None:
    """``sy:updatePeriod`` / ``sy:updateFrequency`` as seconds between updates, else None.

    The syndication module's defaults apply: period ``daily``, frequency 1. An unknown period or
    a frequency below 1 voids the hint.
    """
    if period is None and frequency is None:
        return None
    length = _SY_PERIODS.get((period or "daily").strip().lower())
    times = 1 if frequency is None else frequency
    if length is None or times < 1:
        return None
    return (length / times).total_seconds()


def freshness_floor(
    headers: Mapping[str, str],
    now: datetime,
    *,
    ttl_minutes: int | None = None,
    update_period: str | None = None,
    update_frequency: int | None = None,
) -> datetime | None:
    """The earliest time worth polling again: a lower bound on the next poll, or None.

    The largest of the HTTP freshness (see :func:`_http_freshness`; ``headers`` has lower-case
    names), RSS ``<ttl>`` minutes and the ``sy:`` update rate, capped at ``now + MAX_FLOOR`` so a
    feed claiming a week cannot silence us for a week. Negative or garbage hints are ignored;
    None when no hint gives a positive delay.
    """
    hints = [
        _http_freshness(headers, now),
        None if ttl_minutes is None else ttl_minutes * 60,
        _sy_seconds(update_period, update_frequency),
    ]
    longest = max((h for h in hints if h is not None and h > 0), default=None)
    if longest is None:
        return None
    return now + timedelta(seconds=min(longest, MAX_FLOOR.total_seconds()))


# --- Scheduling ----------------------------------------------------------------------------


def error_backoff(error_count: int, interval: timedelta) -> timedelta:
    """The wait between runs after ``error_count`` consecutive failures.

    ``interval * 2**(error_count - 1)`` capped at :data:`MAX_BACKOFF`, but never less than
    ``interval`` (a weekly feed stays weekly). ``error_count <= 0`` → ``interval``.
    """
    if error_count <= 0:
        return interval
    doublings = min(error_count - 1, _micros(MAX_BACKOFF).bit_length())  # more cannot matter
    backoff = min(_micros(interval) << doublings, _micros(MAX_BACKOFF))
    return max(interval, timedelta(microseconds=backoff))


def jitter(
    key: str, interval: timedelta, fraction: float = 0.1, cap: timedelta = timedelta(minutes=5)
) -> timedelta:
    """A stable offset in ``[0, min(interval * fraction, cap))`` from a hash of ``key``.

    Spreads feeds sharing an interval while keeping each feed's due time the same across runs
    (``hash()`` is salted per process, so SHA-256). ``fraction`` is clamped to ``[0, 1]``.
    """
    if not fraction > 0:  # also NaN
        return timedelta()
    width = _micros(min(interval * min(fraction, 1.0), cap))
    if width <= 0:
        return timedelta()
    return timedelta(microseconds=_key_number(key) % width)


@functools.lru_cache(maxsize=8192)
def _key_number(key: str) -> int:
    """The first 8 bytes of ``key``'s SHA-256 as a number; pure, so remembered: a feed's
    key is hashed three times each poll (its due-ness, its next due time, the daemon's
    wait), with the same key every time (#30)."""
    import hashlib  # not at import: a parse worker need not load OpenSSL (#30)

    digest = hashlib.sha256(key.encode("utf-8", "surrogatepass")).digest()
    return int.from_bytes(digest[:8], "big")


def _cron_due(cron: str, last_attempt: datetime, error_count: int, key: str) -> datetime:
    """The cron fire time strictly after ``last_attempt``, backed off and jittered by its gap."""
    fire = next_cron_time(cron, _add(last_attempt, _MICROSECOND))  # next_cron_time is inclusive
    if fire is None:
        return FOREVER
    following = next_cron_time(cron, _add(fire, _MICROSECOND))
    gap = following - fire if following is not None else fire - last_attempt
    if error_count > 0:
        fire = max(fire, _add(last_attempt, error_backoff(error_count, gap)))
    return _add(fire, jitter(key, gap))


def next_due(
    *,
    every: timedelta | None,
    cron: str | None,
    last_attempt: datetime | None,
    error_count: int,
    floor: datetime | None,
    not_before: datetime | None,
    key: str,
) -> datetime:
    """When the feed should next be polled.

    Never attempted → :data:`NEVER`. ``cron`` (which wins when both are given) → its next fire
    time, when failing at least ``last_attempt + error_backoff(errors, gap to the fire after)``;
    ``every`` → ``last_attempt + error_backoff(errors, every)``; either plus :func:`jitter`. The
    result is then raised to ``floor`` (:func:`freshness_floor`) and ``not_before`` (Retry-After).
    A cron that never fires again gives :data:`FOREVER`. Raises ValueError without either.
    """
    if every is None and cron is None:
        raise ValueError("a feed needs every or cron")
    if last_attempt is None:
        due = NEVER
    elif cron is not None:
        due = _cron_due(cron, last_attempt, error_count, key)
    else:
        assert every is not None
        due = _add(last_attempt, error_backoff(error_count, every), jitter(key, every))
    return max(t for t in (due, floor, not_before) if t is not None)


def is_due(due: datetime, now: datetime) -> bool:
    return now >= due


# --- Failures within a run -----------------------------------------------------------------


def is_transient_status(status: int | None) -> bool:
    """Worth retrying? None (connection error, timeout), 408, 425, 429 and 500/502/503/504."""
    return status is None or status in TRANSIENT_STATUSES


def retry_delays(
    attempts: int, base: float = 0.5, cap: float = 8.0, rng: random.Random | None = None
) -> list[float]:
    """Seconds to sleep before each of ``attempts`` retries within one run.

    Exponential back-off with full jitter: retry ``i`` sleeps ``uniform(0, min(cap, base * 2**i))``.
    Pass a seeded ``rng`` for repeatable delays. The caller should also honour any Retry-After.
    """
    rng = random.Random() if rng is None else rng
    cap = max(cap, 0.0)
    ceiling = min(max(base, 0.0), cap)
    delays: list[float] = []
    for _ in range(max(attempts, 0)):
        delays.append(rng.uniform(0.0, ceiling))
        ceiling = min(ceiling * 2, cap)
    return delays


# --- Feed moves ----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class RedirectSighting:
    """One poll of a feed's URL that answered with a permanent redirect (301/308)."""

    target: str
    seen_at: datetime


def should_follow_move(
    sightings: Sequence[RedirectSighting],
    now: datetime,
    *,
    min_polls: int = 3,
    min_age: timedelta = timedelta(days=2),
    old_url_failing: bool = False,
) -> str | None:
    """The URL to adopt for a feed that keeps redirecting permanently, else None.

    Adopt the latest target once the unbroken run of latest sightings pointing there is at least
    ``min_polls`` long and its first is ``min_age`` old (a different target restarts the count);
    at once when ``old_url_failing``. The caller clears ``sightings`` after a poll that did not
    redirect, and records only 301/308.
    """
    if not sightings:
        return None
    ordered = sorted(sightings, key=lambda s: s.seen_at)
    target = ordered[-1].target
    if old_url_failing:
        return target
    run = list(takewhile(lambda s: s.target == target, reversed(ordered)))
    if len(run) >= min_polls and now - run[-1].seen_at >= min_age:
        return target
    return None


@dataclass(frozen=True, slots=True)
class PodcastIdentity:
    """What tells two feeds apart: ``podcast:guid``, the title and the episode guids."""

    podcast_guid: str | None
    title: str | None
    episode_guids: frozenset[str]


def _norm_title(title: str | None) -> str:
    return " ".join((title or "").split()).casefold()


def _guids(identity: PodcastIdentity) -> set[str]:
    return {g.strip() for g in identity.episode_guids if g.strip()}


def same_podcast(old: PodcastIdentity, new: PodcastIdentity) -> bool:
    """Is ``new`` the same show as ``old``? The rule for adopting ``itunes:new-feed-url``.

    When both carry a ``podcast:guid``, it alone decides (compared case-insensitively). Otherwise
    the titles must match ignoring case and whitespace, and share at least one episode guid;
    a missing or blank title never matches.
    """
    old_guid = (old.podcast_guid or "").strip().lower()
    new_guid = (new.podcast_guid or "").strip().lower()
    if old_guid and new_guid:
        return old_guid == new_guid
    title = _norm_title(old.title)
    return bool(title) and title == _norm_title(new.title) and bool(_guids(old) & _guids(new))


PAGE_RETRY_BASE = timedelta(hours=1)  # a failed episode page waits 1 h, 2 h, 4 h … (≤ a day)


def page_retry_due(
    status: str | None, attempts: int, last_attempt: datetime | None, now: datetime
) -> bool:
    """Should a failed (or note-less) episode page be asked again now?

    Pending pages (new or changed episodes) always are; failed and empty ones back off
    exponentially between runs, like failing feeds, so a dead page costs its host a request
    a day at most.
    """
    if status == "pending" or last_attempt is None:
        return True
    return now >= last_attempt + error_backoff(max(1, attempts), PAGE_RETRY_BASE)
