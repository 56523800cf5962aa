"""The daemon: it sleeps until the earliest time a feed is due, then updates the due ones.

Due-ness is the archive's: each cycle reports when each of its feeds is next due (from the
feed's schedule, back-off, Retry-After and freshness hints, :mod:`podarchive.rules.policy`),
and the main thread sleeps until the earliest of those times, one tick at most (the heartbeat
and the look at the schedule files), or until something wakes it: a signal, a cycle's end,
:meth:`Daemon.wake` (for a push notification). The waiting loop is
:func:`podarchive.daemon.loop.run_loop`, shared with the cluster's scheduler.

APScheduler does what it is good at here: it runs each update cycle, one at a time, on the
one thread of its pool (``podarchive-runner_0``), so the archive is never written by two
threads and stopping never waits on a cycle in flight. It no longer holds one job per feed,
and its CronTrigger is not used: cron expressions follow crontab (:mod:`podarchive.rules.cron`).
"""

from __future__ import annotations

import logging
import os
import signal
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from types import FrameType
from typing import Any

from apscheduler.executors.pool import ThreadPoolExecutor
from apscheduler.jobstores.memory import MemoryJobStore
from apscheduler.schedulers.background import BackgroundScheduler

from podarchive.core.clock import iso, utcnow
from podarchive.core.errors import ConfigError, ScheduleError, one_line
from podarchive.daemon.loop import Fingerprint, ScheduleWatch, Wakeup, fingerprint, run_loop
from podarchive.read.schedule_files import DEFAULT_EVERY, FeedSchedule
from podarchive.rules.policy import FOREVER
from podarchive.rules.wake import due_now, earliest, scheduled_due, seconds_until
from podarchive.tasks.status import write_heartbeat

__all__ = ["CycleResult", "Daemon", "Fingerprint", "fingerprint", "job_spec"]

log = logging.getLogger("podarchive.daemon")
RUNNER = "podarchive-runner"  # the name of the one thread that runs update cycles (+ "_0")


@dataclass(frozen=True, slots=True)
class CycleResult:
    """What one update cycle did, as the update function reports it to the daemon."""

    polled: int = 0
    failed: int = 0
    not_due: int = 0
    # url → when the archive says it is next due; a feed left out is due by its schedule
    waiting: Mapping[str, datetime] = field(default_factory=dict)
    skipped: str | None = None  # why nothing ran (another process holds the archive)
    stopped: bool = False

    @property
    def summary(self) -> str:
        if self.skipped:
            return f"skipped: {self.skipped}"
        text = f"{self.polled} updated, {self.failed} failed, {self.not_due} not due"
        return text + (" (stopped)" if self.stopped else "")


Update = Callable[[Sequence[FeedSchedule], threading.Event], CycleResult]
Load = Callable[[], Sequence[FeedSchedule]]


def job_spec(feed: FeedSchedule) -> tuple[str, str]:
    """What a feed's due time depends on: a reload changes it only when this changes."""
    if feed.cron:
        return ("cron", feed.cron)
    return ("every", str((feed.every or DEFAULT_EVERY).total_seconds()))


def schedule_due(feed: FeedSchedule, after: datetime) -> datetime:
    """When ``feed`` is next due by its schedule alone (the archive did not say)."""
    every = None if feed.cron else feed.every or DEFAULT_EVERY
    return scheduled_due(every=every, cron=feed.cron, after=after, key=feed.url)


def _checked_due(feed: FeedSchedule, now: datetime) -> datetime:
    """:func:`schedule_due`, for a schedule that fires: anything else is a ScheduleError."""
    key = "cron" if feed.cron else "every"
    try:
        due = schedule_due(feed, now)
    except (ValueError, OverflowError) as e:
        raise ScheduleError(feed.source or feed.url, f"cannot be scheduled: {e}", key) from e
    if due >= FOREVER:
        raise ScheduleError(feed.source or feed.url, "never fires", key)
    return due


def _feeds(count: int) -> str:
    return f"{count} feed{'' if count == 1 else 's'}"


class Daemon:
    """Poll feeds when they are due until SIGTERM/SIGINT; reload on SIGHUP or file changes.

    ``update(feeds, stop)`` is called from one runner thread only. ``stop`` is set on
    SIGTERM/SIGINT: the update must then abandon what is in flight and return soon.
    """

    def __init__(
        self,
        *,
        load: Load,
        update: Update,
        watch: Path,
        heartbeat: Path | None = None,
        tick: float = 2.0,
        retry_after_error: float = 30.0,
    ) -> None:
        self.load, self.update, self.watch = load, update, watch
        self.heartbeat, self.tick = heartbeat, tick
        self.retry_after_error = retry_after_error
        self.stop = threading.Event()
        self.stopped_by: int | None = None  # the signal that stopped it (SIGTERM, SIGINT)
        self.started_at = utcnow()
        self.started = threading.Event()  # set once the first schedule is applied
        self._feeds: dict[str, FeedSchedule] = {}
        self._specs: dict[str, tuple[str, str]] = {}
        self._due: dict[str, datetime] = {}  # url → when it is next due (the archive's word)
        self._wanted: set[str] = set()  # asked for at once: new and changed feeds
        self._batch: list[str] | None = None  # the cycle's feeds, from its start to its end
        self._state = threading.Lock()
        self._idle = threading.Event()  # no cycle running
        self._idle.set()
        self._wake = Wakeup()
        self._files = ScheduleWatch(watch)
        self._beat_lock = threading.Lock()
        self._activity = "starting"
        self._last_cycle: dict[str, Any] | None = None
        self._last_reload: dict[str, Any] | None = None
        self._busy_logged = False
        self._failing: str | None = None  # the error the last cycle failed with, if it did
        self._flags: set[str] = set()
        self._scheduler = BackgroundScheduler(
            timezone=UTC,
            jobstores={"default": MemoryJobStore()},  # never shared (pitfall #5)
            executors={"default": ThreadPoolExecutor(1, {"thread_name_prefix": RUNNER})},
            job_defaults={"coalesce": True, "max_instances": 1, "misfire_grace_time": None},
        )

    # public -----------------------------------------------------------------------------

    @property
    def feeds(self) -> dict[str, FeedSchedule]:
        with self._state:
            return dict(self._feeds)

    def due(self) -> dict[str, datetime]:
        """When each feed is next due, as the daemon knows it."""
        with self._state:
            return dict(self._due)

    def wake(self) -> None:
        """Look again at once (e.g. a push notification said a feed changed)."""
        self._wake.set()

    def want(self, url: str) -> None:
        """Make a scheduled feed due now (a valid push notification, #29) and wake."""
        with self._state:
            if url not in self._feeds:
                return
            self._wanted.add(url)
        self._wake.set()

    def request(self, flag: str) -> None:
        """Ask the main loop to ``stop`` or ``reload``; safe from a signal handler."""
        self._flags.add(flag)
        self._wake.set()

    def run(self, initial: Sequence[FeedSchedule] | None = None, *, signals: bool = True) -> None:
        """Run until stopped. ``initial`` defaults to ``load()`` (whose errors propagate)."""
        feeds = list(self.load() if initial is None else initial)
        previous = self._install_signals() if signals else {}
        try:
            self._scheduler.start()
            self.apply(feeds)
            self.started.set()
            self._files.reset()
            log.info(
                "daemon started (pid %d): %s from %s, tick %gs",
                os.getpid(),
                _feeds(len(feeds)),
                self.watch,
                self.tick,
            )
            self._activity = "idle"  # before the first cycle says "updating" (#23)
            run_loop(self._step, wake=self._wake, tick=self.tick, stopped=self._stopping)
        finally:
            self._shut_down(previous)

    def reload(self, why: str) -> bool:
        """Load the schedules again; on an error keep the last good ones and log one line.

        No error of a schedule file may end the daemon: a :class:`ConfigError` is the
        expected one; anything else is logged the same way, with its type.
        """
        try:
            feeds = list(self.load())
            added, removed, changed = self.apply(feeds)
        except Exception as e:
            error = str(e) if isinstance(e, ConfigError) else f"{type(e).__name__}: {e}"
            self._last_reload = {"at": iso(utcnow()), "ok": False, "error": error}
            log.error(
                "schedules not reloaded (%s): %s; keeping the last good schedule (%s)",
                why,
                one_line(error, 1000),
                _feeds(len(self._feeds)),
            )
            return False
        self._last_reload = {"at": iso(utcnow()), "ok": True, "error": None}
        log.info(
            "schedules reloaded (%s): %s; %d added, %d removed, %d changed",
            why,
            _feeds(len(feeds)),
            added,
            removed,
            changed,
        )
        return True

    def apply(self, feeds: Sequence[FeedSchedule]) -> tuple[int, int, int]:
        """Take ``feeds`` as the schedule, by diffing: new and changed feeds are asked for at
        once (the archive decides whether they are due); gone ones are forgotten; the others
        keep their due times.

        Every new or changed schedule is checked first: one that cannot be (a ScheduleError
        naming its file) leaves everything as it was.
        """
        now = utcnow()
        new = {feed.url: feed for feed in feeds}
        fresh = {
            url: _checked_due(feed, now)
            for url, feed in new.items()
            if self._specs.get(url) != job_spec(feed)
        }
        with self._state:
            gone = set(self._feeds) - set(new)
            for url in gone:
                self._specs.pop(url, None)
                self._due.pop(url, None)
                self._wanted.discard(url)
            changed = len(fresh.keys() & self._specs.keys())
            for url, due in fresh.items():
                self._specs[url] = job_spec(new[url])
                self._due[url] = due
                self._wanted.add(url)
            self._feeds = new
        if fresh:
            self._wake.set()
        return len(fresh) - changed, len(gone), changed

    # the main loop ----------------------------------------------------------------------

    def _stopping(self) -> bool:
        return "stop" in self._flags

    def _step(self) -> float | None:
        """One turn of the main loop: reload, start a cycle if feeds are due, heartbeat; the
        seconds until the next feed is due (None while a cycle runs: its end wakes us)."""
        if "reload" in self._flags:
            self._flags.discard("reload")
            self.reload("SIGHUP")
            self._files.reset()
        elif self._files.changed():
            self.reload("schedule files changed")
        self._start_cycle()
        self._beat()
        with self._state:
            if self._batch is not None:
                return None
            return seconds_until(earliest(self._due.values()), utcnow())

    def _start_cycle(self) -> None:
        """Hand the feeds due now (and those asked for) to APScheduler's runner thread."""
        with self._state:
            if self._batch is not None:
                return  # one cycle at a time; its end wakes the loop
            urls = sorted(self._wanted.union(due_now(self._due, utcnow())))
            if not urls:
                return
            self._wanted.clear()
            self._batch = urls
            batch = [self._feeds[url] for url in urls]
        self._scheduler.add_job(self._cycle, args=[batch], name=f"update {_feeds(len(batch))}")

    def _shut_down(self, previous: Mapping[int, Any]) -> None:
        busy = self._activity.startswith("updating")
        log.info("stopping%s", ": abandoning the update in flight" if busy else "")
        self._activity = "stopping"
        with self._state:  # a cycle not started yet sees it and does not start
            self.stop.set()
        if self._scheduler.running:
            self._scheduler.shutdown(wait=False)  # never wait on a cycle here
        self._idle.wait(timeout=max(10.0, 3 * self.tick))
        self._restore_signals(previous)
        self._activity = "stopped"
        self._beat(stopped=True)
        self._wake.close()
        log.info("stopped")

    # the runner thread ------------------------------------------------------------------

    def _cycle(self, batch: list[FeedSchedule]) -> None:
        """One update cycle, on APScheduler's runner thread."""
        with self._state:
            if self.stop.is_set():
                return
            self._idle.clear()
        try:
            self._run_cycle(batch)
        finally:
            with self._state:
                self._batch = None
            self._idle.set()
            self._wake.set()

    def _run_cycle(self, batch: list[FeedSchedule]) -> None:
        started = utcnow()
        self._activity = f"updating {_feeds(len(batch))}"
        self._beat()
        retry: datetime | None = None
        try:
            result = self.update(batch, self.stop)
        except Exception as e:  # an archive that cannot be opened must not end the daemon
            self._log_failure(str(e))
            retry = started + timedelta(seconds=self.retry_after_error)
            result = CycleResult(failed=len(batch), skipped=f"error: {e}")
        else:
            retry = self._after(result, started)
        finished = utcnow()
        self._record(batch, result, retry, finished)
        self._last_cycle = {
            "started_at": iso(started),
            "finished_at": iso(finished),
            "seconds": round((finished - started).total_seconds(), 3),
            "feeds": len(batch),
            "polled": result.polled,
            "failed": result.failed,
            "not_due": result.not_due,
            "skipped": result.skipped,
            "summary": result.summary,
        }
        log.debug("cycle done in %.2fs: %s", (finished - started).total_seconds(), result.summary)
        self._activity = "stopping" if self.stop.is_set() else "idle"
        self._beat()

    def _after(self, result: CycleResult, started: datetime) -> datetime | None:
        """Log what a cycle that returned says; when to ask for its feeds again if skipped."""
        if self._failing is not None and not result.skipped:
            log.info("update cycles work again")
            self._failing = None
        if not result.skipped:
            self._busy_logged = False
            return None
        if not self._busy_logged:
            log.info("%s; retrying each tick", result.skipped)
        self._busy_logged = True
        return started + timedelta(seconds=self.tick)

    def _record(
        self,
        batch: Sequence[FeedSchedule],
        result: CycleResult,
        retry: datetime | None,
        now: datetime,
    ) -> None:
        """Each feed's next due time: ``retry`` (a skipped or failed cycle), else the
        archive's, else its schedule's; never sooner than a tick (a second at most) from now,
        so an update that leaves a due feed due cannot spin the loop. A feed removed or
        changed meanwhile is left alone."""
        soonest = now + timedelta(seconds=min(self.tick, 1.0))
        with self._state:
            for feed in batch:
                if self._feeds.get(feed.url) is None or feed.url in self._wanted:
                    continue
                due = retry or result.waiting.get(feed.url) or schedule_due(feed, now)
                self._due[feed.url] = max(due, soonest)

    def _log_failure(self, error: str) -> None:
        """ERROR once per failure (a damaged or deleted archive fails every cycle alike)."""
        if error != self._failing:
            log.error("update cycle failed: %s; retrying every %gs", error, self.retry_after_error)
        else:
            log.debug("update cycle failed again: %s", error)
        self._failing = error

    # heartbeat and signals --------------------------------------------------------------

    def _beat(self, *, stopped: bool = False) -> None:
        if self.heartbeat is None:
            return
        now = utcnow()
        with self._state:
            ready = self._wanted.union(due_now(self._due, now))
            next_due = earliest(self._due.values())
            data: dict[str, Any] = {
                "pid": os.getpid(),
                "state": "stopped" if stopped else "running",
                "started_at": iso(self.started_at),
                "heartbeat_at": iso(now),
                "activity": self._activity,
                "feeds": len(self._feeds),
                "wanted": len(ready),
                "waiting": len(self._due.keys() - ready),
                "next_due_at": iso(next_due) if next_due and next_due < FOREVER else None,
                "tick": self.tick,
                "schedules": str(self.watch),
                "last_cycle": self._last_cycle,
                "last_reload": self._last_reload,
            }
        if stopped:
            data["stopped_at"] = iso(now)
        with self._beat_lock:
            try:
                write_heartbeat(self.heartbeat, data)
            except OSError as e:
                log.warning("cannot write heartbeat %s: %s", self.heartbeat, e)

    def _install_signals(self) -> dict[int, Any]:
        previous: dict[int, Any] = {}

        def stop(signum: int, frame: FrameType | None) -> None:
            self.stopped_by = self.stopped_by or signum
            self.request("stop")

        def reload(signum: int, frame: FrameType | None) -> None:
            self.request("reload")

        for signum, handler in (
            (signal.SIGTERM, stop),
            (signal.SIGINT, stop),
            (signal.SIGHUP, reload),
        ):
            previous[signum] = signal.signal(signum, handler)
        return previous

    def _restore_signals(self, previous: Mapping[int, Any]) -> None:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
