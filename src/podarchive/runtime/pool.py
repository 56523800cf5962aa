"""A process pool whose breaking never raises in its manager thread (CPython 3.11's race).

When a worker dies, ``ProcessPoolExecutor``'s manager thread fails every pending future with
``BrokenProcessPool``. On Python 3.11 it calls ``set_exception`` on each, which raises
``InvalidStateError`` for a future another thread has just cancelled (an aborted run cancels
what it no longer waits for): the manager thread dies with a traceback on stderr, and the
pool's remaining workers are left to the lifeline. Later Pythons catch that error in
``terminate_broken``; :class:`SafePool` does the same on 3.11 and is the plain executor
elsewhere.

:func:`lean_spawn` is the ``spawn`` start method without multiprocessing's re-run of the
parent's main module in every worker (#30): run as the ``podarchive`` console script, that
re-run imported the whole command-line tool (click, httpx, sqlite-utils) into each worker,
for nothing: a worker runs module-level functions of the modules it is given. Its locks and
semaphores are not registered with multiprocessing's *resource tracker* either, so no
tracker process is started (#30): a process of its own, about 12 MB, whose only work is to
unlink the semaphores' names should the run die without doing it (see :func:`_untracked`).
"""

from __future__ import annotations

import _multiprocessing  # type: ignore[import-not-found]
import io
import multiprocessing
import os
import sys
from concurrent.futures import InvalidStateError, ProcessPoolExecutor
from concurrent.futures import process as _process
from contextlib import suppress
from multiprocessing import context as _context
from multiprocessing import (
    popen_spawn_posix,
    reduction,
    spawn,
    synchronize,
    util,
)
from typing import Any, TypeVar

L = TypeVar("L", bound=synchronize.SemLock)
_SEMAPHORE: int = synchronize.SEMAPHORE  # type: ignore[attr-defined]
_make_name = synchronize.SemLock._make_name  # type: ignore[attr-defined]

#: What a child's preparation data says about the parent's main module (see _LeanSpawnPopen).
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


class _LeanSpawnPopen(popen_spawn_posix.Popen):
    """``spawn``'s launch (CPython 3.11-3.13's, line for line), with the parent's main module
    left out of what the child prepares: the child imports the modules its target needs,
    not the script that started the parent."""

    def _launch(self, process_obj: Any) -> None:
        prep_data = spawn.get_preparation_data(process_obj._name)
        for key in _MAIN_KEYS:
            prep_data.pop(key, None)
        fp = io.BytesIO()
        _context.set_spawning_popen(self)
        try:
            reduction.dump(prep_data, fp)
            reduction.dump(process_obj, fp)
        finally:
            _context.set_spawning_popen(None)
        parent_r = child_w = child_r = parent_w = None
        try:
            parent_r, child_w = os.pipe()
            child_r, parent_w = os.pipe()
            cmd = spawn.get_command_line(tracker_fd=None, pipe_handle=child_r)  # no tracker
            self._fds.extend([child_r, child_w])  # type: ignore[attr-defined]
            exe = spawn.get_executable()
            self.pid = util.spawnv_passfds(exe, cmd, self._fds)  # type: ignore[attr-defined,arg-type]
            self.sentinel = parent_r
            with open(parent_w, "wb", closefd=False) as f:
                f.write(fp.getbuffer())
        finally:
            fds_to_close = [fd for fd in (parent_r, parent_w) if fd is not None]
            self.finalizer = util.Finalize(self, util.close_fds, fds_to_close)  # type: ignore[attr-defined]
            for fd in (child_r, child_w):
                if fd is not None:
                    os.close(fd)


class _LeanSpawnProcess(_context.SpawnProcess):
    @staticmethod
    def _Popen(process_obj: Any) -> _LeanSpawnPopen:
        return _LeanSpawnPopen(process_obj)


def _untracked(cls: type[L], value: int, maxvalue: int) -> L:
    """A ``cls`` (a lock or semaphore, ``SemLock``'s construction line for line) whose name is
    not registered with the resource tracker: it is unlinked when the object is collected or
    at the process's exit, as ``SemLock`` does, but not if the process is killed (SIGKILL,
    a crash): then a 32-byte ``/dev/shm/sem.mp-*`` file is left behind, where the tracker, a
    12 MB process for the run's length, would have removed it."""
    lock = cls.__new__(cls)
    lock._is_fork_ctx = False  # type: ignore[attr-defined]
    for _ in range(100):
        try:
            lock._semlock = _multiprocessing.SemLock(  # type: ignore[attr-defined]
                _SEMAPHORE, value, maxvalue, _make_name(), False
            )
            break
        except FileExistsError:
            continue
    else:  # pragma: no cover - 100 random names taken
        raise FileExistsError("cannot find name for semaphore")
    lock._make_methods()  # type: ignore[attr-defined]
    name = lock._semlock.name  # type: ignore[attr-defined]
    util.Finalize(lock, _multiprocessing.sem_unlink, (name,), exitpriority=0)
    return lock


class _LeanSpawnContext(_context.SpawnContext):
    Process = _LeanSpawnProcess

    # what ProcessPoolExecutor's queues are made of, without the resource tracker
    def Lock(self) -> Any:  # noqa: N802 - multiprocessing's names
        return _untracked(synchronize.Lock, 1, 1)

    def Semaphore(self, value: int = 1) -> Any:  # noqa: N802
        return _untracked(synchronize.Semaphore, value, _multiprocessing.SemLock.SEM_VALUE_MAX)

    def BoundedSemaphore(self, value: int = 1) -> Any:  # noqa: N802
        return _untracked(synchronize.BoundedSemaphore, value, value)


def lean_spawn() -> multiprocessing.context.BaseContext:
    """A ``spawn`` context whose processes do not import the parent's main module (on the
    Pythons whose launch :class:`_LeanSpawnPopen` copies; on later ones, the plain
    ``spawn``): no fork server to keep, each worker imports its own modules."""
    if sys.version_info < (3, 14) and sys.platform != "win32":
        return _LeanSpawnContext()
    return multiprocessing.get_context("spawn")  # pragma: no cover - later Pythons, Windows
