"""The process pool's breaking, with a cancelled job pending (runtime.pool, CPython 3.11's race).

A worker killed while one job runs and a later one was cancelled: the plain 3.11 executor's
manager thread dies with ``InvalidStateError`` (a traceback on stderr in a run's Ctrl-C);
:class:`~podarchive.runtime.pool.SafePool` fails the running jobs and stays quiet.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
import time
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool

import pytest

from podarchive.runtime.pool import SafePool


def _break_with_a_cancelled_job(pool: ProcessPoolExecutor) -> list[BaseException]:
    """Kill the one worker while a job runs and a queued one has been cancelled."""
    seen: list[BaseException] = []
    hook = threading.excepthook
    threading.excepthook = lambda args: seen.append(args.exc_value)  # type: ignore[assignment]
    try:
        running = pool.submit(time.sleep, 60)
        queued = [pool.submit(time.sleep, 60) for _ in range(4)]
        deadline = time.monotonic() + 30
        while not running.running() and time.monotonic() < deadline:
            time.sleep(0.01)
        assert queued[-1].cancel()  # beyond the call queue: still pending, so cancellable
        (pid,) = pool._processes  # type: ignore[attr-defined]
        os.kill(pid, signal.SIGKILL)
        with pytest.raises(BrokenProcessPool):
            running.result(timeout=30)
        manager = pool._executor_manager_thread  # type: ignore[attr-defined]
        pool.shutdown(wait=True)
        if manager is not None:
            manager.join(timeout=30)
    finally:
        threading.excepthook = hook
    return seen


def test_a_killed_worker_breaks_the_pool_quietly() -> None:
    assert _break_with_a_cancelled_job(SafePool(1)) == []


@pytest.mark.skipif(sys.version_info >= (3, 12), reason="later Pythons have the fix")
def test_the_plain_executor_shows_the_race_this_guards() -> None:
    seen = _break_with_a_cancelled_job(ProcessPoolExecutor(1))
    assert [type(e).__name__ for e in seen] == ["InvalidStateError"]
