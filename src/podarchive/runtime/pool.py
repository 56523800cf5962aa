"""A process pool whose breaking never raises in its manager thread (CPython 3.11's race).

When a worker dies, ``ProcessPoolExecutor``'s manager thread fails every pending future with
``BrokenProcessPool``. On Python 3.11 it calls ``set_exception`` on each, which raises
``InvalidStateError`` for a future another thread has just cancelled (an aborted run cancels
what it no longer waits for): the manager thread dies with a traceback on stderr, and the
pool's remaining workers are left to the lifeline. Later Pythons catch that error in
``terminate_broken``; :class:`SafePool` does the same on 3.11 and is the plain executor
elsewhere.
"""

from __future__ import annotations

import sys
from concurrent.futures import InvalidStateError, ProcessPoolExecutor
from concurrent.futures import process as _process
from contextlib import suppress
from typing import Any


class _ManagerThread(_process._ExecutorManagerThread):
    def terminate_broken(self, cause: Any) -> None:
        pending = dict(self.pending_work_items)
        self.pending_work_items.clear()
        try:
            super().terminate_broken(cause)  # marks the pool broken, stops the workers
        finally:
            broken = _process.BrokenProcessPool(
                "A process in the process pool was terminated abruptly while the future was "
                "running or pending."
            )
            for item in pending.values():
                with suppress(InvalidStateError):  # cancelled meanwhile: nobody waits for it
                    item.future.set_exception(broken)


class SafePool(ProcessPoolExecutor):
    """``ProcessPoolExecutor``, with the 3.11 manager thread's race closed."""

    if sys.version_info < (3, 12):

        def _start_executor_manager_thread(self) -> None:
            if self._executor_manager_thread is None:
                if not self._safe_to_dynamically_spawn_children:
                    self._launch_processes()
                self._executor_manager_thread = _ManagerThread(self)
                self._executor_manager_thread.start()
                _process._threads_wakeups[self._executor_manager_thread] = (
                    self._executor_manager_thread_wakeup
                )
