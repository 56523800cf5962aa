"""Crontab expressions: validation and fire times, in crontab's own meaning (Debian cron).

Five fields, ``minute hour day-of-month month day-of-week``, each a ``*``, a number, a
three-letter name (months and weekdays), a range or a list of these, with an optional
``/step``. Sunday is 0 or 7. When both day-of-month and day-of-week are restricted (neither
starts with ``*``), a day matches when EITHER does, as crontab(5) says: ``0 6 1 * 1`` fires at
06:00 on the 1st of each month and on every Monday. All times are UTC.

The maths is cronsim's (the Healthchecks.io author's, which follows Debian cron), imported
lazily so that importing this module loads nothing beyond the standard library. cronsim also
reads some extensions crontab does not have (a seconds field, ``L``, ``LW``, ``#``): they are
refused here, so a schedule file means what the same line would in a crontab.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from cronsim import CronSim

FIELDS = ("minute", "hour", "day-of-month", "month", "day-of-week")
_VALUE = r"(?:[0-9]+|[a-z]{3})"  # a number or a three-letter name (cronsim checks which)
_TERM = re.compile(rf"(?:\*|{_VALUE}(?:-{_VALUE})?)(?:/[0-9]+)?", re.IGNORECASE)
_SECOND = timedelta(seconds=1)


def _fields(expr: str) -> list[str]:
    """The five fields, each made only of crontab's own syntax; ValueError otherwise."""
    fields = expr.split()
    if len(fields) != 5:
        raise ValueError(f"cron needs 5 fields (minute hour day month weekday), got {len(fields)}")
    for name, text in zip(FIELDS, fields, strict=True):
        if not all(_TERM.fullmatch(term) for term in text.split(",")):
            raise ValueError(f"bad cron expression {expr!r}: bad {name} {text!r}")
    return fields


def _sim(expr: str, start: datetime) -> CronSim | None:
    """cronsim's iterator over the fire times strictly after ``start`` (whole seconds); None
    for an expression that never fires. ValueError (one line) for a bad one."""
    from cronsim import CronSim, CronSimError  # lazily: see the module docstring

    fields = _fields(expr)
    try:
        return CronSim(" ".join(fields), start)
    except CronSimError as e:
        if _impossible_day(fields):
            return None
        raise ValueError(f"bad cron expression {expr!r}: {str(e).lower()}") from e


def _impossible_day(fields: list[str]) -> bool:
    """Valid fields that no date satisfies (``0 0 30 2 *``): cronsim calls that a bad
    day-of-month, crontab takes it and never runs it. Here it is "never fires"."""
    from cronsim import CronSim, CronSimError

    now = datetime.now(UTC)
    minute, hour, day, month, weekday = fields
    try:
        CronSim(f"{minute} {hour} 1 {month} {weekday}", now)  # the rest is good
        CronSim(f"0 0 {day} * *", now)  # and the day is one some month has
    except CronSimError:
        return False
    return True


def validate_cron(expr: str) -> None:
    """ValueError (one line) unless ``expr`` is a crontab expression that fires (``0 0 30 2
    *`` never does: a feed scheduled so would never be polled)."""
    if next_cron_time(expr, datetime.now(UTC)) is None:
        raise ValueError(f"cron expression {expr!r} never fires")


def next_cron_time(expr: str, after: datetime) -> datetime | None:
    """The first time at or after ``after`` (rounded up to a whole second) that ``expr``
    fires, in UTC; None when it never fires again. ValueError when ``expr`` is bad."""
    start = after.astimezone(UTC)
    whole = start.replace(microsecond=0)
    sim = _sim(expr, whole - _SECOND if whole == start else whole)  # cronsim: strictly after
    if sim is None:
        return None
    try:
        fire: datetime = next(sim)
    except (StopIteration, OverflowError):  # cronsim looks 50 years ahead, then gives up
        return None
    return fire


def cron_gap(expr: str, after: datetime) -> timedelta | None:
    """The time between the first two fires after ``after``; None if it fires less often."""
    first = next_cron_time(expr, after)
    second = next_cron_time(expr, first + _SECOND) if first else None
    return second - first if first and second else None
