"""How many fetches a run has started and not stored: a slow start up to the run's limit (#30).

A run's memory follows what it has in flight: each fetch holds its body, then its parsed rows,
until the one thread that writes the archive stores it. At the start of a first ingest every
fetch thread used to fetch at once, and eight bodies of 1.8 MB and their split documents
waited for the CPU lane, which had not started its workers yet. So a run starts with a few
fetches in flight (:func:`first_in_flight`: the lane's processes and one more), and
:class:`Pace` allows one more each time something is stored while the lane keeps up (not
:meth:`~podarchive.runtime.cpu.CpuLane.saturated`), up to :func:`in_flight_limit`.

Each stored fetch while the lane keeps up adds one, so a round of answers doubles what is in
flight, as TCP's slow start does: against slow servers (the network the bottleneck, the lane
idle) a run reaches full concurrency after a few answers; while parsing is the bottleneck it
stays where the lane can follow.
"""

from __future__ import annotations

from podarchive.core.settings import Settings


def in_flight_limit(settings: Settings) -> int:
    """Fetches a run starts before the first of them is stored: one per request slot, so
    every slot stays busy, and no more, so finished outcomes (a parsed feed is megabytes)
    never pile up waiting for the one thread that writes the archive."""
    return max(1, settings.concurrency)


def first_in_flight(processes: int) -> int:
    """Fetches in flight at a run's start, with a CPU lane of ``processes`` processes: one
    for each to parse, and one on the way."""
    return max(1, processes) + 1


class Pace:
    """Fetches a run may have in flight now: ``start`` at first, one more for each fetch
    stored while the CPU lane keeps up, to ``limit``."""

    __slots__ = ("limit", "now")

    def __init__(self, start: int, limit: int) -> None:
        self.limit = max(1, limit)
        self.now = max(1, min(start, self.limit))

    def stored(self, lane_saturated: bool) -> None:
        """A fetch was stored; ``lane_saturated``: whether a thread waits for the lane now."""
        if not lane_saturated and self.now < self.limit:
            self.now += 1
