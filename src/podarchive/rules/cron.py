"""Crontab expressions: validation and fire times, in crontab's own meaning.

APScheduler 3.x numbers weekdays from Monday = 0, while crontab has Sunday = 0 (and 7).
:func:`cron_trigger` translates a standard five-field crontab expression so that
``0 9 * * 1`` means Monday 09:00, as it does in cron.

The cron maths is APScheduler's ``CronTrigger``, imported lazily inside :func:`cron_trigger`:
importing this module (and :mod:`~.policy`, :mod:`~podarchive.read.schedule_files`, users)
loads no APScheduler. This module and :mod:`podarchive.daemon.scheduler` are the only ones that
touch APScheduler.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta, timezone
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from apscheduler.triggers.cron import CronTrigger

_DAY_NAMES = ("sun", "mon", "tue", "wed", "thu", "fri", "sat")
_NAME_TO_CRON = {name: i for i, name in enumerate(_DAY_NAMES)}
_DOW_TERM = re.compile(r"^(\*|[a-z0-9]+(?:-[a-z0-9]+)?)(?:/(\d+))?$")


def _day_number(token: str) -> int:
    if token in _NAME_TO_CRON:
        return _NAME_TO_CRON[token]
    if token.isdigit() and 0 <= int(token) <= 7:
        return int(token) % 7
    raise ValueError(f"bad day of week {token!r}")


def _expand_day_term(term: str) -> set[int]:
    match = _DOW_TERM.match(term)
    if not match:
        raise ValueError(f"bad day of week {term!r}")
    span, step_text = match.group(1), match.group(2)
    step = int(step_text) if step_text else 1
    if step < 1:
        raise ValueError(f"bad step in day of week {term!r}")
    if span == "*":
        first, last = 0, 6
    elif "-" in span:
        start, end = span.split("-")
        first, last = _day_number(start), _day_number(end)
        if end == "7":
            last = 7
        if last < first:
            raise ValueError(f"bad day-of-week range {term!r}")
    else:
        first = last = _day_number(span)
        if step_text:
            last = 6
    return {day % 7 for day in range(first, last + 1, step)}


def crontab_day_of_week(field: str) -> str:
    """Translate a crontab day-of-week field to APScheduler's names (``1-5`` → ``mon,…,fri``)."""
    field = field.strip().lower()
    if field in ("*", "?"):
        return "*"
    days: set[int] = set()
    for term in field.split(","):
        days |= _expand_day_term(term)
    return ",".join(_DAY_NAMES[d] for d in sorted(days))


def cron_trigger(expr: str, tz: timezone = UTC, jitter: float | None = None) -> CronTrigger:
    """A CronTrigger for a five-field crontab expression. Raises ValueError when it is bad.

    ``jitter`` delays each fire by up to that many seconds (``from_crontab`` has no jitter).
    """
    from apscheduler.triggers.cron import CronTrigger  # lazily: see the module docstring

    fields = expr.split()
    if len(fields) != 5:
        raise ValueError(f"cron needs 5 fields (minute hour day month weekday), got {len(fields)}")
    minute, hour, day, month, dow = fields
    try:
        return CronTrigger(
            minute=minute,
            hour=hour,
            day=day,
            month=month,
            day_of_week=crontab_day_of_week(dow),
            timezone=tz,
            jitter=jitter,
        )
    except ValueError as e:
        raise ValueError(f"bad cron expression {expr!r}: {e}") from e


def validate_cron(expr: str) -> None:
    """ValueError unless ``expr`` is a crontab expression that fires (``0 0 30 2 *`` never
    does: a feed scheduled so would never be polled)."""
    if cron_trigger(expr).get_next_fire_time(None, datetime.now(UTC)) is None:
        raise ValueError(f"cron expression {expr!r} never fires")


def next_cron_time(expr: str, after: datetime) -> datetime | None:
    """The first time after ``after`` that ``expr`` fires (UTC)."""
    fire: datetime | None = cron_trigger(expr).get_next_fire_time(None, after)
    return fire


def cron_gap(expr: str, after: datetime) -> timedelta | None:
    """The time between the first two fires after ``after``; None if it fires less often."""
    first = next_cron_time(expr, after)
    second = next_cron_time(expr, first + timedelta(seconds=1)) if first else None
    return second - first if first and second else None
