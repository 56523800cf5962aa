"""How many fetches a run has started and not stored (#15, #30)."""

from __future__ import annotations

from podarchive.core.settings import Settings


def in_flight_limit(settings: Settings) -> int:
    """Fetches a run starts before the first of them is stored: one per request slot, so
    every slot stays busy, and no more, so finished outcomes (a parsed feed is megabytes)
    never pile up waiting for the one thread that writes the archive."""
    return max(1, settings.concurrency)
