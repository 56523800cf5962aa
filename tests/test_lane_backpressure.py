"""The CPU lane tells a run when it is the bottleneck (#30): a thread waiting for it.

A run starts no more fetches while :meth:`CpuLane.saturated` holds, so bodies and parsed
rows the lane cannot take yet do not pile up in the run's memory. Event-driven: a job held
on an event, a second caller waiting for its turn.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

import pytest

import podarchive.runtime.cpu as cpu
from podarchive.runtime.cpu import CpuLane

needs_two_cores = pytest.mark.skipif(cpu.usable_cores() < 2, reason="one usable core")


def _until(check: Callable[[], bool]) -> bool:
    """Poll ``check()`` until true or 30 s pass (the machine may be loaded)."""
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if check():
            return True
        time.sleep(0.01)
    return False


def _held(started: threading.Event, release: threading.Event) -> str:
    started.set()
    release.wait(30)
    return "held"


def test_an_idle_or_busy_lane_is_not_saturated_until_a_caller_waits() -> None:
    lane = CpuLane(1)  # inline: one job at a time
    started, release = threading.Event(), threading.Event()
    results: list[object] = []
    assert not lane.saturated()
    first = threading.Thread(
        target=lambda: results.append(lane.run(_held, started, release, weight=1))
    )
    first.start()
    assert started.wait(30)
    assert not lane.saturated()  # one job runs, nobody waits: fetches may go on
    second = threading.Thread(target=lambda: results.append(lane.run(abs, -2, weight=1)))
    second.start()
    assert _until(lane.saturated)  # the second caller waits for its turn
    release.set()
    first.join(30)
    second.join(30)
    assert results == ["held", 2]
    assert not lane.saturated()


@needs_two_cores
def test_a_caller_waiting_for_a_worker_slot_saturates_the_lane(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(cpu, "START_AFTER", 0)  # every job goes to the workers
    with CpuLane(2) as lane:
        slots = 2 * lane.processes
        # a job per slot that sleeps (2 s) long enough for a waiter to be seen, and one caller more
        busy = threading.Thread(
            target=lambda: lane.map(time.sleep, [(2.0,)] * slots, weight=1), daemon=True
        )
        busy.start()
        assert _until(lambda: lane._slots._value == 0)  # type: ignore[attr-defined]
        out: list[object] = []
        waiter = threading.Thread(target=lambda: out.append(lane.run(abs, -3, weight=1)))
        waiter.start()
        assert _until(lane.saturated)  # a slot frees only when a 2 s job ends
        waiter.join(60)
        busy.join(60)
        assert out == [3]
        assert not lane.saturated()


def test_a_run_starts_a_fetch_only_with_room_and_a_lane_not_saturated() -> None:
    lane = CpuLane(1)
    started, release = threading.Event(), threading.Event()
    assert lane.room(0, 8)
    assert lane.room(7, 8)
    assert not lane.room(8, 8)
    first = threading.Thread(target=lambda: lane.run(_held, started, release, weight=1))
    first.start()
    assert started.wait(30)
    second = threading.Thread(target=lambda: lane.run(abs, -1, weight=1))
    second.start()
    assert _until(lane.saturated)
    assert not lane.room(1, 8)  # a fetch waits for the lane: no more start
    assert lane.room(0, 8)  # nothing in flight (a stream between feeds): always
    release.set()
    first.join(30)
    second.join(30)
    assert lane.room(1, 8)
