"""A process pool whose breaking never raises in its manager thread (CPython 3.11's race).

When a worker dies, ``ProcessPoolExecutor``'s manager thread fails every pending future with
``BrokenProcessPool``. On Python 3.11 it calls ``set_exception`` on each, which raises
``InvalidStateError`` for a future another thread has just cancelled (an aborted run cancels
what it no longer waits for): the manager thread dies with a traceback on stderr, and the
pool's remaining workers are left to the lifeline. Later Pythons catch that error in
``terminate_broken``; :class:`SafePool` does the same on 3.11 and is the plain executor
elsewhere.

:func:`lean_forkserver` is the ``forkserver`` start method without multiprocessing's re-run
of the parent's main module in every worker (#30): run as the ``podarchive`` console script,
that re-run imported the whole command-line tool (click, httpx, sqlite-utils) into each
worker, for nothing: a worker runs module-level functions of the modules it is given.
"""

from __future__ import annotations

import io
import multiprocessing
import os
import sys
from concurrent.futures import InvalidStateError, ProcessPoolExecutor
from concurrent.futures import process as _process
from contextlib import suppress
from multiprocessing import context as _context
from multiprocessing import forkserver, popen_forkserver, reduction, spawn, util
from typing import Any

#: What a child's preparation data says about the parent's main module (see _LeanPopen).
_MAIN_KEYS = ("init_main_from_name", "init_main_from_path")


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


class _LeanPopen(popen_forkserver.Popen):
    """``forkserver``'s launch (CPython 3.11-3.13's, line for line), with the parent's main
    module left out of what the child prepares: the child imports the modules its target
    needs, not the script that started the parent."""

    def _launch(self, process_obj: Any) -> None:
        prep_data = spawn.get_preparation_data(process_obj._name)
        for key in _MAIN_KEYS:
            prep_data.pop(key, None)
        buf = io.BytesIO()
        _context.set_spawning_popen(self)
        try:
            reduction.dump(prep_data, buf)
            reduction.dump(process_obj, buf)
        finally:
            _context.set_spawning_popen(None)
        self.sentinel, w = forkserver.connect_to_new_process(self._fds)  # type: ignore[attr-defined]
        parent_w = os.dup(w)  # the child's sentinel of its parent, as the original keeps
        self.finalizer = util.Finalize(self, util.close_fds, (parent_w, self.sentinel))  # type: ignore[attr-defined]
        with open(w, "wb", closefd=True) as f:
            f.write(buf.getbuffer())
        self.pid = forkserver.read_signed(self.sentinel)


class _LeanProcess(_context.ForkServerProcess):
    @staticmethod
    def _Popen(process_obj: Any) -> _LeanPopen:
        return _LeanPopen(process_obj)


class _LeanContext(_context.ForkServerContext):
    Process = _LeanProcess


def lean_forkserver(preload: list[str]) -> multiprocessing.context.BaseContext:
    """A ``forkserver`` context whose server imports ``preload`` and whose processes do not
    import the parent's main module (on the Pythons whose launch :class:`_LeanPopen` copies;
    on later ones, the plain ``forkserver``)."""
    ctx = (
        _LeanContext() if sys.version_info < (3, 14) else multiprocessing.get_context("forkserver")
    )
    ctx.set_forkserver_preload(preload)
    return ctx
