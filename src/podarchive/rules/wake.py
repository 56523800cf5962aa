"""When to wake: the pure maths of the daemon's and the cluster scheduler's waits.

Both long-running loops (:func:`podarchive.daemon.loop.run_loop`) sleep until the earliest
time a feed is due, but never longer than one tick (the heartbeat, the look at the schedule
files), and wake early when their wake-up is set (a signal, a reload, a cycle's end, later a
push notification). The due times themselves are the archive's (:mod:`~.policy`):
:func:`scheduled_due` only stands in for a feed the archive has not said anything about.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import datetime, timedelta
from typing import TypeVar

from podarchive.rules.policy import FOREVER, next_due

T = TypeVar("T")


def earliest(times: Iterable[datetime]) -> datetime | None:
    """The earliest of ``times``; None when there are none."""
    return min(times, default=None)


def seconds_until(due: datetime | None, now: datetime) -> float | None:
    """Seconds from ``now`` to ``due`` (negative when it has passed); None without a due."""
    if due is None or due >= FOREVER:
        return None
    return (due - now).total_seconds()


def wake_delay(until_due: float | None, tick: float) -> float:
    """How long to sleep: until the due time (not at all when it has passed), at most a tick.

    Nothing due (None) or a due time beyond the tick: one tick.
    """
    if until_due is None:
        return tick
    return min(tick, max(0.0, until_due))


def due_now(due: Mapping[str, datetime], now: datetime) -> list[str]:
    """The keys due at ``now``, sorted (a cycle's batch, in a stable order)."""
    return sorted(key for key, at in due.items() if at <= now)


def scheduled_due(
    *, every: timedelta | None, cron: str | None, after: datetime, key: str
) -> datetime:
    """When a feed is next due by its schedule alone, as if attempted at ``after`` without
    an error: :func:`~.policy.next_due`'s own formula (jitter included), for a feed whose
    due time the archive did not give (a gone feed, or one a cycle did not get to).

    A cron expression that never fires again gives :data:`~.policy.FOREVER`.
    """
    return next_due(
        every=every,
        cron=cron,
        last_attempt=after,
        error_count=0,
        floor=None,
        not_before=None,
        key=key,
    )


def settle(last: T, settling: T | None, current: T) -> tuple[T, T | None, bool]:
    """A change is taken once it has stayed the same for a whole tick (a file being written
    is not read half way): ``(last, settling, changed)`` after looking at ``current``."""
    if current == last:
        return last, None, False
    if current == settling:
        return current, None, True
    return last, current, False
