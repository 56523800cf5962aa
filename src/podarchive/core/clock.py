"""Time as podarchive writes it: aware UTC datetimes, and one timestamp format.

Every timestamp podarchive stores or shows (the archive, the fetch log, the lock files, the
daemon's heartbeat) is ISO 8601 UTC to the second: ``2022-06-06T13:00:00Z``
(:data:`TIMESTAMP_FORMAT`). Leaf module: imports only the stdlib.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime

TIMESTAMP_FORMAT = "%Y-%m-%dT%H:%M:%SZ"

Clock = Callable[[], datetime]  # what a run asks for "now" (tests pass a fixed one)


def utcnow() -> datetime:
    """Now, as an aware UTC datetime."""
    return datetime.now(UTC)


def iso(moment: datetime) -> str:
    """``moment`` as a timestamp (``2022-06-06T13:00:00Z``), converted to UTC."""
    return moment.astimezone(UTC).strftime(TIMESTAMP_FORMAT)


def now_iso() -> str:
    """Now, as a timestamp."""
    return iso(utcnow())


def parse_iso(text: str | None) -> datetime | None:
    """A timestamp written by :func:`iso` as an aware UTC datetime; None for None or ``""``.

    Raises ValueError for any other format.
    """
    if not text:
        return None
    return datetime.strptime(text, TIMESTAMP_FORMAT).replace(tzinfo=UTC)
