"""Where the CPU-heavy pure work of a run happens: inline, or in worker processes.

Parsing feeds and extracting pages are pure functions (bytes in, values out) that hold the
GIL for milliseconds per item. Run in the fetch threads, they serialise on the GIL and starve
the archive writer (every ``sqlite3`` step gives the GIL up and waits to get it back). So a
run hands them to a :class:`CpuLane`:

* small work runs inline, in the calling thread: a run of 304s, one new episode or a feed
  whose only change is its ``lastBuildDate`` never pays for a process;
* once a run has handed the lane more than ``start_after`` bytes of markup, the lane starts
  one worker process per core (``spawn``, importing the parsers as it starts) and sends the rest
  there, so a first ingest or a backfill uses every core;
* a run of a few feeds (fewer than :data:`FEW_FEEDS`) parses in its own process unless it
  reads more than :data:`FEW_FEEDS_START_AFTER` of markup (:func:`lane_plan`, #30): a
  worker per core costs about 50 MB of memory, more than the whole run
  otherwise needs, for a few seconds of parsing saved at best.

Inline jobs run one at a time (the GIL runs one anyway): the run's memory holds one parse,
not one per fetch thread. While a thread waits for its turn (inline, or a worker's job
slot), the lane is :meth:`CpuLane.saturated` and a run starts no more fetches
(:meth:`CpuLane.room`, #30): a first ingest on loopback fetched its eight feeds at once and
held their bodies and rows while the lane caught up.

The calling thread waits for its job without holding the GIL. :meth:`CpuLane.abort` makes
every wait give up at once with :class:`~podarchive.core.errors.Abandoned`.

Workers die with the process that started them, however it ends (SIGTERM, SIGHUP,
SIGKILL, a crash): each holds the read end of the lane's *lifeline*, a pipe whose write end
only that process holds, and exits when it reads EOF (#23): nothing outlives the run
holding its stdout and stderr. (``PR_SET_PDEATHSIG`` would not do: the signal follows the
thread that started the worker, not the process.)
"""

from __future__ import annotations

import gc
import importlib
import logging
import multiprocessing
import os
import signal
import threading
from collections import deque
from collections.abc import Callable, Iterable
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from concurrent.futures.process import BrokenProcessPool
from contextlib import suppress
from multiprocessing.connection import Connection
from typing import Any, TypeVar

from podarchive.core.errors import Abandoned, PodarchiveError
from podarchive.runtime.malloc import return_big_blocks
from podarchive.runtime.pool import SafePool, lean_spawn

T = TypeVar("T")
log = logging.getLogger("podarchive")

#: Modules a worker imports as it starts (``read.jobs`` imports its parsers on first use:
#: they are named here), so that its first job does not pay for them.
PRELOAD = [
    "podarchive.read.jobs",
    "podarchive.read.parse",
    "podarchive.read.rows",
    "podarchive.read.extract",
    "podarchive.read.transcript_formats",
]
#: What a worker runs after each job ("module:function"): it empties the parsers' memos, so
#: a worker keeps no more than its imports and one job's working set between jobs (#30).
AFTER_JOB = "podarchive.read.jobs:forget_memos"
#: Bytes of markup a run handles inline before it starts worker processes.
START_AFTER = 1024 * 1024
#: Runs of fewer feeds than this parse in their own process (see :func:`lane_plan`)...
FEW_FEEDS = 32
#: ...unless they read more markup than this: a backfill of a long feed still gets workers.
FEW_FEEDS_START_AFTER = 32 * 1024 * 1024
_POLL = 0.1  # seconds between checks for an abort while waiting on a worker
#: In a worker process: :data:`AFTER_JOB`, resolved as the worker starts (None elsewhere).
_after_job: Callable[[], object] | None = None


def usable_cores() -> int:
    """CPUs this process may run on (its affinity mask where the platform has one)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - macOS, Windows
        return os.cpu_count() or 1


def lane_plan(feeds: int | None, processes: int = 0, big: bool = False) -> tuple[int, int]:
    """(processes, start_after) of the CPU lane of a run of ``feeds`` feeds (None: unknown,
    a stream), with the ``processes`` setting (0: sized by the run; 1: none; more: that many
    workers, after :data:`START_AFTER` bytes, whatever the run's size).

    A big first ingest (``big``: :func:`podarchive.update.big_ingest.is_big`) sends every
    job to the workers from the first one (#30): parsing its first megabyte inline made the
    run's own process import the parsers (feedparser, lxml, Beautiful Soup: about 10 MB) and
    keep that parse's high-water mark, for a run that starts the workers a second later.

    With the default, a run of fewer than :data:`FEW_FEEDS` feeds waits for
    :data:`FEW_FEEDS_START_AFTER` bytes rather than :data:`START_AFTER`. Measured on 2
    cores (#30): 10 feeds of 300 episodes (18 MB of markup) take about 10 s of parsing, and
    the pool for it (fork server, two workers, multiprocessing's resource tracker) took
    the process tree from about 100 MB to 234 MB. Above it, or past those bytes (a long
    feed's backfill), parsing is long enough to be worth every core.
    """
    if big:
        return processes, 0
    if processes == 0 and feeds is not None and feeds < FEW_FEEDS:
        return processes, FEW_FEEDS_START_AFTER
    return processes, START_AFTER


class CpuLane:
    """Runs pure jobs inline or in a lazily started pool of worker processes.

    ``processes`` is the pool's size (0: one per usable core; 1: never start a pool);
    ``start_after`` the bytes handled inline first (default :data:`START_AFTER`).
    Thread-safe: fetch threads call :meth:`map` concurrently.
    """

    def __init__(self, processes: int = 0, start_after: int | None = None) -> None:
        self.processes = processes if processes > 0 else usable_cores()
        self.start_after = START_AFTER if start_after is None else start_after
        self._handled = 0
        self._inline = threading.RLock()  # one inline job at a time (re-entered by read_items)
        self._pool: SafePool | None = None
        #: the workers' lifeline (read end, write end), made with the first pool
        self._lifeline: tuple[Connection[Any, Any], Connection[Any, Any]] | None = None
        self._lock = threading.Lock()
        self._abort = threading.Event()
        #: jobs sent to the pool and not collected, over every calling thread: what waits
        #: in the pool's queue (a big feed's chunks, pages) stays a few jobs' worth (#15)
        self._slots = threading.Semaphore(2 * self.processes)
        #: calling threads waiting for the lane (a job slot, or the inline turn): while
        #: there are some, the lane is the run's bottleneck (see :meth:`saturated`)
        self._waiters = 0

    @classmethod
    def for_run(cls, feeds: int | None, processes: int = 0, big: bool = False) -> CpuLane:
        """The lane of a run of ``feeds`` feeds (None: not known), sized by :func:`lane_plan`."""
        size, start_after = lane_plan(feeds, processes, big)
        return cls(size, start_after)

    def __enter__(self) -> CpuLane:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def started(self) -> bool:
        """Whether worker processes were started in this run."""
        return self._pool is not None

    def _parallel(self, weight: int) -> bool:
        """Count ``weight`` bytes of work; True when it goes to worker processes."""
        if self.processes < 2:
            return False
        with self._lock:
            self._handled += weight
            return self._pool is not None or self._handled > self.start_after

    def saturated(self) -> bool:
        """Whether a thread is waiting for the lane now: a run then starts no more fetches
        (#30). Each would only hold its body, then its parsed rows, in the run's memory
        until the lane had time for it; while none waits, the lane keeps up with the
        fetches and they run at full concurrency."""
        return self._waiters > 0

    def room(self, in_flight: int, limit: int) -> bool:
        """Whether a run with ``in_flight`` fetches started and not stored may start another:
        fewer than ``limit``, and the lane not :meth:`saturated` (#30: what the lane cannot
        take yet would wait in memory); always when none is in flight."""
        return in_flight == 0 or (in_flight < limit and not self.saturated())

    def _wait_turn(self, lock: threading.Semaphore | Any, timeout: float) -> bool:
        """``lock`` acquired within ``timeout`` seconds, counted as a wait for the lane if it
        is not free at once."""
        if lock.acquire(False):
            return True
        if timeout <= 0:
            return False
        with self._lock:
            self._waiters += 1
        try:
            return bool(lock.acquire(timeout=timeout))
        finally:
            with self._lock:
                self._waiters -= 1

    def run(self, fn: Callable[..., T], *args: Any, weight: int) -> T:
        """``fn(*args)``, inline or in a worker depending on what the run has handled."""
        return self.map(fn, [args], weight=weight)[0]

    def map(
        self, fn: Callable[..., T], argsets: Iterable[tuple[Any, ...]], *, weight: int
    ) -> list[T]:
        """``[fn(*args) for args in argsets]`` in order; in parallel once the pool is up.

        ``weight`` is the bytes of markup the jobs read, in all. ``fn`` must be a module-level
        function and its arguments and result picklable. ``argsets`` is taken lazily: no more
        than two jobs per worker are in the pool at once, over all the threads that call the
        lane, so arguments made on the fly (a big feed's chunks) are made only as workers are
        ready for them. Exceptions ``fn`` raises
        come back as they are. A job whose worker died (killed, out of memory, crashed) is
        tried once more in a fresh pool, then fails alone with a :class:`PodarchiveError`.
        """
        if not self._parallel(weight):
            return self._inline_map(fn, argsets)
        results: list[T] = []
        waiting: deque[tuple[Future[T], tuple[Any, ...]]] = deque()
        jobs = iter(argsets)
        try:
            for args in jobs:
                self._take_slot(waiting, results, fn)
                try:
                    waiting.append((self._submit(fn, args), args))
                except OSError as e:  # no processes here (a sandbox, no /dev/shm)
                    self._slots.release()
                    if results or waiting:
                        raise
                    log.warning("podarchive: worker processes unavailable (%s); parsing inline", e)
                    self.processes = 1
                    return [fn(*args), *(fn(*rest) for rest in jobs)]
            while waiting:
                results.append(self._collect(*waiting.popleft(), fn))
        finally:
            for future, _ in waiting:
                future.cancel()
                self._slots.release()
        return results

    def _inline_map(self, fn: Callable[..., T], argsets: Iterable[tuple[Any, ...]]) -> list[T]:
        """The jobs in this thread, while no other thread runs one inline."""
        while not self._wait_turn(self._inline, _POLL):
            if self._abort.is_set():
                raise Abandoned()
        try:
            return [fn(*args) for args in argsets]
        finally:
            self._inline.release()

    def _take_slot(
        self,
        waiting: deque[tuple[Future[T], tuple[Any, ...]]],
        results: list[T],
        fn: Callable[..., T],
    ) -> None:
        """Take one of the lane's job slots (two a worker, shared by every calling thread);
        while none is free, collect this caller's oldest result, or wait for another's."""
        while not self._wait_turn(self._slots, 0 if waiting else _POLL):
            if self._abort.is_set():
                raise Abandoned()
            if waiting:
                results.append(self._collect(*waiting.popleft(), fn))

    def _collect(self, future: Future[T], args: tuple[Any, ...], fn: Callable[..., T]) -> T:
        try:
            return self._result(future, fn, args)
        finally:
            self._slots.release()

    def abort(self) -> None:
        """Make every current and later wait raise :class:`Abandoned`."""
        self._abort.set()

    def close(self) -> None:
        with self._lock:
            pool, self._pool = self._pool, None
        if pool is not None:
            pool.shutdown(wait=not self._abort.is_set(), cancel_futures=True)
        with self._lock:
            lifeline, self._lifeline = self._lifeline, None
        for end in lifeline or ():
            end.close()  # workers still in a job of an aborted run stop now

    def _submit(self, fn: Callable[..., T], args: tuple[Any, ...]) -> Future[T]:
        pool = self._ensure_pool()
        try:
            return pool.submit(_gc_paused, fn, *args)
        except BrokenProcessPool:
            self._drop(pool)
            return self._ensure_pool().submit(_gc_paused, fn, *args)

    def _result(self, future: Future[T], fn: Callable[..., T], args: tuple[Any, ...]) -> T:
        try:
            return self._wait(future)
        except BrokenProcessPool:
            pass  # this job's worker, or another's, died: the pool is gone for every job
        try:
            return self._wait(self._submit(fn, args))
        except BrokenProcessPool as e:
            raise self._lost(e) from e

    def _ensure_pool(self) -> SafePool:
        with self._lock:
            if self._pool is None:
                if self._lifeline is None:
                    self._lifeline = multiprocessing.Pipe(duplex=False)
                self._pool = SafePool(
                    self.processes,
                    mp_context=_context(),
                    initializer=_worker_init,
                    initargs=(self._lifeline[0],),
                )
            return self._pool

    def _drop(self, broken: SafePool) -> None:
        """Forget a broken pool (once, whichever job notices first)."""
        with self._lock:
            if self._pool is broken:
                self._pool = None
        broken.shutdown(wait=False, cancel_futures=True)

    def _wait(self, future: Future[T]) -> T:
        while True:
            if self._abort.is_set():
                raise Abandoned()
            try:
                return future.result(timeout=_POLL)
            except FutureTimeout:
                continue

    def _lost(self, e: BaseException) -> PodarchiveError:
        if self._abort.is_set():
            return Abandoned()
        return PodarchiveError("a parser process died reading this (out of memory, or killed)")


def _gc_paused(fn: Callable[..., T], *args: Any) -> T:
    """``fn(*args)`` in a worker, with the cyclic garbage collector paused meanwhile.

    A page or a chunk of items parses into many thousands of linked objects (BeautifulSoup
    trees are cyclic), built and dropped within one job: with the collector on, it walks
    the growing trees again and again and promotes them to older generations; paused, they
    are freed by the first young collection after the job (measured 9.1 → 7.9 ms a page).
    A worker runs one job at a time, so this is the worker's own business; inline jobs, in
    the user's process, leave the collector alone. Then the worker runs :data:`AFTER_JOB`.
    """
    gc.disable()
    try:
        return fn(*args)
    finally:
        gc.enable()
        if _after_job is not None:
            _after_job()


def _worker_init(lifeline: Connection[Any, Any]) -> None:
    """Ctrl-C is the run's to handle (it stops cleanly); a worker never sees it. A worker
    ends when its lifeline does (the run is gone), and returns the big blocks it frees to
    the system, as the run's process does."""
    global _after_job
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    for module in PRELOAD:
        importlib.import_module(module)
    _after_job = resolve(AFTER_JOB)
    threading.Thread(target=_die_at_eof, args=(lifeline,), name="lifeline", daemon=True).start()
    return_big_blocks()


def resolve(name: str) -> Callable[[], object]:
    """The function named ``"module:function"``."""
    module, _, function = name.partition(":")
    found: Callable[[], object] = getattr(importlib.import_module(module), function)
    return found


def _die_at_eof(lifeline: Connection[Any, Any]) -> None:
    """Wait, in a worker, until the lifeline's write end is closed, then end the worker at
    once, wherever its job is (nobody is left to want the result)."""
    with suppress(EOFError, OSError):
        lifeline.recv_bytes()  # nothing is ever sent: this returns only at EOF
    os._exit(1)


def _context() -> multiprocessing.context.BaseContext:
    """``spawn`` (never ``fork`` from a threaded process), without the parent's main module.

    Not ``forkserver`` (#30): its server is one more process, the size of a worker (about
    32 MB with the parsers preloaded), and the pages a worker shares with it count again in
    every worker's resident size; measured on a 100-feed first ingest, the tree's summed RSS
    went from 230 to 211 MB with spawn, its PSS unchanged (172, 170 MB), its wall time not
    longer. A worker starts once per run (about half a second of CPU to import the parsers).
    """
    return lean_spawn()
