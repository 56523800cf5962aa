"""When to re-check an archived episode page with a conditional GET: pure rules, clock passed in.

Serves issue #12's "Episode pages re-checked", beside the feeds' rules in
:mod:`~.policy` (whose :func:`~podarchive.rules.policy.jitter` it reuses). The numbers:

- **Age rule** (:func:`recheck_interval`): daily while the episode is under a week old, weekly
  until it is a month (30 days) old, then monthly. An edit is likeliest just after release
  (typos, added links), and a 304 costs the host little; a 1,000-episode back catalogue costs
  about 33 requests a day.
- The age is taken at the last check (``published``, else ``first_seen``; a date in the future
  counts as age 0), so a page's due time does not move between runs.
- ``every`` (the schedule's ``page_every``) replaces the age rule; it may not be under
  :data:`MIN_PAGE_EVERY` (one hour) unless ``allow_fast``: one schedule line covers every
  episode of a feed, so a short one multiplies.
- **Failures** double the wait per consecutive failed re-check, at most 3 doublings (× 8:
  a daily page that keeps failing is asked every 8 days), and never beyond
  :data:`MAX_RECHECK_WAIT` (90 days) unless the interval itself is longer. The page is already
  archived: a failing host loses us freshness only.
- **Jitter**: ``policy.jitter`` on the page URL, up to 10 % of the interval and at most 12 h,
  so 10,000 daily pages spread over 2.4 h instead of falling due in the same second.
- A page never checked is due now.
- Transcript and chapters files follow the same rules (:func:`next_check`); one never read
  yet retries like a failing page (``policy.error_backoff``: hours, then days).
"""

from __future__ import annotations

from datetime import datetime, timedelta

from podarchive.core.clock import iso, parse_iso
from podarchive.rules.policy import FOREVER, PAGE_RETRY_BASE, error_backoff, jitter

DAY = timedelta(days=1)
FIRST_WEEK = timedelta(days=7)
FIRST_MONTH = timedelta(days=30)
#: (age under, interval) in order; older than the last bound → :data:`OLD_INTERVAL`.
AGE_RULE: tuple[tuple[timedelta, timedelta], ...] = ((FIRST_WEEK, DAY), (FIRST_MONTH, FIRST_WEEK))
OLD_INTERVAL = FIRST_MONTH
MAX_DOUBLINGS = 3  # failures back off to at most the interval × 8
MAX_RECHECK_WAIT = timedelta(days=90)  # the longest back-off, unless the interval is longer
JITTER_FRACTION = 0.1
JITTER_CAP = timedelta(hours=12)
MIN_PAGE_EVERY = timedelta(hours=1)  # the floor of ``page_every``, unless allow_fast


def episode_age(published: datetime | None, first_seen: datetime, at: datetime) -> timedelta:
    """How old the episode is at ``at``: from ``published``, else ``first_seen``; never < 0."""
    born = published if published is not None else first_seen
    try:
        return max(at - born, timedelta())
    except OverflowError:  # pragma: no cover - aware datetimes near the calendar's ends
        return timedelta()


def recheck_interval(age: timedelta) -> timedelta:
    """The age rule: daily in the first week, weekly in the first month, then monthly."""
    for bound, interval in AGE_RULE:
        if age < bound:
            return interval
    return OLD_INTERVAL


def recheck_backoff(interval: timedelta, failures: int) -> timedelta:
    """The wait after ``failures`` consecutive failed re-checks (0 → ``interval``).

    ``interval × 2**min(failures, MAX_DOUBLINGS)``, at most :data:`MAX_RECHECK_WAIT` but never
    below ``interval``.
    """
    if interval >= MAX_RECHECK_WAIT:
        return interval
    return min(interval * (1 << min(max(failures, 0), MAX_DOUBLINGS)), MAX_RECHECK_WAIT)


def page_recheck_due(
    *,
    url: str,
    published: datetime | None,
    first_seen: datetime,
    last_checked: datetime | None,
    now: datetime,
    every: timedelta | None = None,
    failures: int = 0,
) -> datetime:
    """When the archived page at ``url`` is next worth a conditional GET.

    Never checked → ``now``. Else ``last_checked`` + :func:`recheck_backoff` of the interval
    (``every``, else :func:`recheck_interval` of the age at ``last_checked``) + the page's
    jitter. Aware UTC datetimes; past the calendar's end → :data:`policy.FOREVER`.
    """
    if last_checked is None:
        return now
    interval = (
        every
        if every is not None
        else recheck_interval(episode_age(published, first_seen, last_checked))
    )
    wait = recheck_backoff(interval, failures)
    try:
        return last_checked + wait + jitter(url, interval, JITTER_FRACTION, JITTER_CAP)
    except OverflowError:
        return FOREVER


def next_check(
    *,
    url: str,
    archived: bool,
    published: datetime | None,
    first_seen: datetime,
    now: datetime,
    every: timedelta | None = None,
    failures: int = 0,
) -> datetime:
    """When a page or file fetched at ``now`` is next due.

    ``archived`` (read at least once): :func:`page_recheck_due` with ``failures`` consecutive
    failed re-checks. Never read: the retry back-off of a failing page after ``failures``
    failures, from ``now``.
    """
    if archived:
        return page_recheck_due(
            url=url,
            published=published,
            first_seen=first_seen,
            last_checked=now,
            now=now,
            every=every,
            failures=failures,
        )
    try:
        return now + error_backoff(max(1, failures), PAGE_RETRY_BASE)
    except OverflowError:  # pragma: no cover - past the calendar's end
        return FOREVER


def next_check_at(
    url: str,
    *,
    archived: bool,
    published: str | None,
    first_seen: str | None,
    now: str,
    every: timedelta | None,
    failures: int,
) -> str:
    """:func:`next_check` over the archive's timestamps (``first_seen`` missing: ``now``)."""
    moment = parse_iso(now)
    if moment is None:
        raise ValueError(f"not a timestamp: {now!r}")
    return iso(
        next_check(
            url=url,
            archived=archived,
            published=parse_iso(published),
            first_seen=parse_iso(first_seen) or moment,
            now=moment,
            every=every,
            failures=failures,
        )
    )


def check_page_every(interval: timedelta, *, allow_fast: bool = False) -> timedelta:
    """``interval`` as a ``page_every``, unless under :data:`MIN_PAGE_EVERY` (ValueError).

    The schedule loader (``config``) parses the text with its ``parse_interval`` and passes it
    here; ``allow_fast`` is the same switch as for ``every``.
    """
    if interval < MIN_PAGE_EVERY and not allow_fast:
        raise ValueError(
            f"page_every must be at least {int(MIN_PAGE_EVERY.total_seconds()) // 60} minutes; "
            "use --allow-fast (for tests)"
        )
    return interval
