"""The shared waiting loop: when to wake (rules.wake) and the loop itself (daemon.loop)."""

from __future__ import annotations

import os
import signal
import threading
import time
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from podarchive.daemon.loop import ScheduleWatch, Wakeup, run_loop
from podarchive.daemon.scheduler import CycleResult, Daemon
from podarchive.read.schedule_files import FeedSchedule
from podarchive.rules.policy import FOREVER
from podarchive.rules.wake import (
    due_now,
    earliest,
    scheduled_due,
    seconds_until,
    settle,
    wake_delay,
)

NOW = datetime(2026, 12, 2, 12, 0, tzinfo=UTC)


def test_wake_maths() -> None:
    assert earliest([]) is None
    assert earliest([NOW + timedelta(hours=1), NOW, NOW + timedelta(1)]) == NOW
    assert seconds_until(None, NOW) is None
    assert seconds_until(FOREVER, NOW) is None  # a cron that never fires: nothing to wait for
    assert seconds_until(NOW + timedelta(seconds=90), NOW) == 90.0
    assert seconds_until(NOW - timedelta(seconds=5), NOW) == -5.0
    assert wake_delay(None, 2.0) == 2.0  # nothing due: a tick
    assert wake_delay(0.25, 2.0) == 0.25  # due before the tick: then
    assert wake_delay(3600.0, 2.0) == 2.0  # due later: a tick (heartbeat, files)
    assert wake_delay(-5.0, 2.0) == 0.0  # overdue: at once
    due = {"b": NOW, "a": NOW - timedelta(seconds=1), "c": NOW + timedelta(seconds=1)}
    assert due_now(due, NOW) == ["a", "b"]


def test_scheduled_due_is_the_archives_formula() -> None:
    hourly = scheduled_due(every=timedelta(hours=1), cron=None, after=NOW, key="k")
    assert NOW + timedelta(hours=1) <= hourly < NOW + timedelta(hours=1, minutes=5)
    assert hourly == scheduled_due(every=timedelta(hours=1), cron=None, after=NOW, key="k")
    monday = scheduled_due(every=None, cron="0 9 * * 1", after=NOW, key="k")
    assert datetime(2026, 12, 7, 9, tzinfo=UTC) <= monday < datetime(2026, 12, 7, 9, 5, tzinfo=UTC)
    assert scheduled_due(every=None, cron="0 0 30 2 *", after=NOW, key="k") == FOREVER


def test_settle_takes_a_change_that_stays_for_a_tick() -> None:
    assert settle("a", None, "a") == ("a", None, False)
    assert settle("a", None, "b") == ("a", "b", False)  # maybe half written
    assert settle("a", "b", "c") == ("a", "c", False)  # still changing
    assert settle("a", "c", "c") == ("c", None, True)  # the same for a whole tick: taken
    assert settle("a", "c", "a") == ("a", None, False)  # changed back


def test_schedule_watch(tmp_path: Path) -> None:
    watch = ScheduleWatch(tmp_path)
    assert not watch.changed()
    (tmp_path / "a.toml").write_text("x")
    assert not watch.changed()
    assert watch.changed()
    assert not watch.changed()


def test_wakeup_from_a_thread_and_a_signal_handler() -> None:
    wake = Wakeup()
    try:
        assert wake.wait(0) is False
        wake.set()
        wake.set()
        assert wake.wait(5) is True
        assert wake.wait(0) is False  # drained
        threading.Timer(0.1, wake.set).start()
        started = time.monotonic()
        assert wake.wait(30) is True
        assert time.monotonic() - started < 20
        previous = signal.signal(signal.SIGUSR1, lambda signum, frame: wake.set())
        try:
            os.kill(os.getpid(), signal.SIGUSR1)
            assert wake.wait(5) is True
        finally:
            signal.signal(signal.SIGUSR1, previous)
    finally:
        wake.close()
    wake.set()  # closed: a no-op, never a write to a reused descriptor


def test_run_loop_sleeps_until_due_or_a_tick_or_a_wakeup() -> None:
    stop = threading.Event()
    waits: list[float] = []

    class Recorder:
        def wait(self, timeout: float | None = None) -> bool:
            waits.append(timeout or 0.0)
            if len(waits) == 4:
                stop.set()
            return False

    answers = iter([0.5, None, 100.0, -1.0])
    run_loop(lambda: next(answers), wake=Recorder(), tick=2.0, stopped=stop.is_set)
    assert waits == [0.5, 2.0, 2.0, 0.0]
    steps = []
    run_loop(lambda: steps.append(1), wake=stop, tick=2.0, stopped=stop.is_set)
    assert steps == []  # stopped before: no step at all


def test_daemon_sleeps_until_the_due_time_not_a_tick(tmp_path: Path) -> None:
    """A tick of a minute, a feed due in 0.3 s: it is asked for again long before the tick."""
    feed = FeedSchedule(url="https://a.example/f", every=timedelta(hours=1))
    calls: list[float] = []

    def update(feeds: Sequence[FeedSchedule], stop: threading.Event) -> CycleResult:
        calls.append(time.monotonic())
        due = datetime.now(UTC) + timedelta(seconds=0.3)
        return CycleResult(polled=1, waiting={feed.url: due})

    daemon = Daemon(load=lambda: [feed], update=update, watch=tmp_path, tick=60.0)
    thread = threading.Thread(target=daemon.run, args=([feed],), kwargs={"signals": False})
    thread.start()
    try:
        deadline = time.monotonic() + 30
        while len(calls) < 3 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert len(calls) >= 3, calls
        assert all(0.2 < b - a < 30 for a, b in zip(calls, calls[1:], strict=False))
        # a new feed is asked for at once: apply wakes the loop
        other = FeedSchedule(url="https://b.example/f", every=timedelta(days=1))
        before = len(calls)
        daemon.apply([feed, other])
        deadline = time.monotonic() + 30
        while len(calls) == before and time.monotonic() < deadline:
            time.sleep(0.05)
        assert len(calls) > before
    finally:
        daemon.request("stop")
        thread.join(timeout=30)
    assert not thread.is_alive()


@pytest.mark.parametrize("skipped", ["another process holds the archive", None])
def test_a_cycle_in_flight_is_never_doubled(tmp_path: Path, skipped: str | None) -> None:
    feed = FeedSchedule(url="https://a.example/f", every=timedelta(hours=1))
    running, most = [0], [0]
    lock = threading.Lock()

    def update(feeds: Sequence[FeedSchedule], stop: threading.Event) -> CycleResult:
        with lock:
            running[0] += 1
            most[0] = max(most[0], running[0])
        time.sleep(0.2)
        with lock:
            running[0] -= 1
        return CycleResult(skipped=skipped, waiting={feed.url: datetime.now(UTC)})

    daemon = Daemon(load=lambda: [feed], update=update, watch=tmp_path, tick=0.05)
    thread = threading.Thread(target=daemon.run, args=([feed],), kwargs={"signals": False})
    thread.start()
    time.sleep(1.0)
    daemon.request("stop")
    thread.join(timeout=30)
    assert not thread.is_alive()
    assert most[0] == 1


def test_a_feed_left_due_does_not_spin_the_loop(tmp_path: Path) -> None:
    """An update that leaves its feed due now is asked again a tick later, not at once."""
    feed = FeedSchedule(url="https://a.example/f", every=timedelta(hours=1))
    calls: list[float] = []

    def update(feeds: Sequence[FeedSchedule], stop: threading.Event) -> CycleResult:
        calls.append(time.monotonic())
        return CycleResult(not_due=1, waiting={feed.url: datetime.now(UTC) - timedelta(1)})

    daemon = Daemon(load=lambda: [feed], update=update, watch=tmp_path, tick=0.2)
    thread = threading.Thread(target=daemon.run, args=([feed],), kwargs={"signals": False})
    thread.start()
    time.sleep(1.0)
    daemon.request("stop")
    thread.join(timeout=30)
    assert not thread.is_alive()
    assert 1 <= len(calls) <= 6  # about one a tick (0.2 s), not thousands
    assert all(b - a >= 0.15 for a, b in zip(calls, calls[1:], strict=False))
