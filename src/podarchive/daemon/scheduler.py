"""The daemon's scheduler: APScheduler's user, with :mod:`podarchive.rules.cron` (crontab maths).

:class:`Daemon` runs a ``BackgroundScheduler`` (threads, in-memory job store) with one job
per feed. A job only marks its feed as *wanted*; one runner thread hands the wanted batch
to the update function it was given (the CLI passes one that takes the archive lock and
calls ``run.update_due``), so the archive is never written by two threads and a
feed's back-off and Retry-After hold whatever its trigger says. Feeds the update found not
due yet come back with their due time and are asked for again then.
"""

from __future__ import annotations

import contextlib
import logging
import os
import select
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
from apscheduler.triggers.base import BaseTrigger
from apscheduler.triggers.interval import IntervalTrigger

from podarchive.core.clock import iso, utcnow
from podarchive.core.errors import ConfigError, ScheduleError, one_line
from podarchive.read.schedule_files import DEFAULT_EVERY, FeedSchedule
from podarchive.rules.cron import cron_gap, cron_trigger
from podarchive.tasks.status import write_heartbeat

log = logging.getLogger("podarchive.daemon")
MAX_JITTER = timedelta(minutes=5)


@dataclass(frozen=True, slots=True)
class CycleResult:
    """What one update cycle did, as the update function reports it to the daemon."""

    polled: int = 0
    failed: int = 0
    not_due: int = 0
    waiting: Mapping[str, datetime] = field(default_factory=dict)  # not polled: url → due at
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
Fingerprint = tuple[tuple[str, int, int], ...]


def _jitter(gap: timedelta) -> float:
    """As the archive's due-ness: up to 10 % of the interval, at most five minutes."""
    return min(gap * 0.1, MAX_JITTER).total_seconds()


def job_spec(feed: FeedSchedule) -> tuple[str, str]:
    """What a feed's job depends on: a job is replaced only when this changes (pitfall #3)."""
    if feed.cron:
        return ("cron", feed.cron)
    return ("every", str((feed.every or DEFAULT_EVERY).total_seconds()))


def job_trigger(feed: FeedSchedule, now: datetime) -> tuple[BaseTrigger, int]:
    """The trigger for a feed's job and its misfire grace time in seconds (one interval:
    a fire missed by less than that, e.g. over a suspend, still happens, coalesced)."""
    if feed.cron:
        gap = cron_gap(feed.cron, now) or DEFAULT_EVERY
        return cron_trigger(feed.cron, jitter=_jitter(gap)), max(60, int(gap.total_seconds()))
    every = feed.every or DEFAULT_EVERY
    trigger = IntervalTrigger(seconds=every.total_seconds(), jitter=_jitter(every), timezone=UTC)
    return trigger, max(60, int(every.total_seconds()))


def _checked_trigger(feed: FeedSchedule, now: datetime) -> tuple[BaseTrigger, int]:
    """:func:`job_trigger`, for a trigger that fires: anything else is a ScheduleError."""
    key = "cron" if feed.cron else "every"
    try:
        trigger, grace = job_trigger(feed, now)
        fires = trigger.get_next_fire_time(None, now) is not None
    except (ValueError, OverflowError) as e:
        raise ScheduleError(feed.source or feed.url, f"cannot be scheduled: {e}", key) from e
    if not fires:
        raise ScheduleError(feed.source or feed.url, "never fires", key)
    return trigger, grace


def fingerprint(directory: Path) -> Fingerprint:
    """Names, mtimes and sizes of the schedule files: a change means "reload"."""
    try:
        paths = sorted(directory.glob("*.toml"))
    except OSError:
        return ()
    out = []
    for path in paths:
        try:
            stat = path.stat()
        except OSError:
            continue
        out.append((path.name, stat.st_mtime_ns, stat.st_size))
    return tuple(out)


def _feeds(count: int) -> str:
    return f"{count} feed{'' if count == 1 else 's'}"


class Daemon:
    """Poll feeds on their schedules until SIGTERM/SIGINT; reload on SIGHUP or file changes.

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
        self._feeds: dict[str, FeedSchedule] = {}
        self._specs: dict[str, tuple[str, str]] = {}
        self._wanted: set[str] = set()
        self._deferred: dict[str, datetime] = {}
        self._state = threading.Lock()
        self._work = threading.Event()
        self._beat_lock = threading.Lock()
        self._activity = "starting"
        self._last_cycle: dict[str, Any] | None = None
        self._last_reload: dict[str, Any] | None = None
        self._busy_logged = False
        self._failing: str | None = None  # the error the last cycle failed with, if it did
        self._flags: set[str] = set()
        self._pipe_r, self._pipe_w = os.pipe()
        os.set_blocking(self._pipe_w, False)
        self._scheduler = BackgroundScheduler(
            timezone=UTC,
            jobstores={"default": MemoryJobStore()},  # never shared (pitfall #5)
            executors={"default": ThreadPoolExecutor(1)},  # jobs only mark feeds wanted
            job_defaults={"coalesce": True, "max_instances": 1},
        )

    # public -----------------------------------------------------------------------------

    @property
    def feeds(self) -> dict[str, FeedSchedule]:
        with self._state:
            return dict(self._feeds)

    def job_ids(self) -> set[str]:
        return {job.id for job in self._scheduler.get_jobs()}

    def request(self, flag: str) -> None:
        """Ask the main loop to ``stop`` or ``reload``; safe from a signal handler."""
        self._flags.add(flag)
        with contextlib.suppress(OSError):  # pipe full: the loop is awake anyway
            os.write(self._pipe_w, b"!")

    def run(self, initial: Sequence[FeedSchedule] | None = None, *, signals: bool = True) -> None:
        """Run until stopped. ``initial`` defaults to ``load()`` (whose errors propagate)."""
        feeds = list(self.load() if initial is None else initial)
        previous = self._install_signals() if signals else {}
        runner = threading.Thread(target=self._runner, name="podarchive-runner")
        try:
            self._scheduler.start()
            self.apply(feeds)
            last_print, settling = fingerprint(self.watch), None
            log.info(
                "daemon started (pid %d): %s from %s, tick %gs",
                os.getpid(),
                _feeds(len(feeds)),
                self.watch,
                self.tick,
            )
            self._activity = "idle"  # before the runner's first cycle says "updating" (#23)
            runner.start()
            while True:
                self._beat()
                self._sleep(self.tick)
                if "stop" in self._flags:
                    break
                if "reload" in self._flags:
                    self._flags.discard("reload")
                    self.reload("SIGHUP")
                    last_print, settling = fingerprint(self.watch), None
                current = fingerprint(self.watch)
                if current == last_print:
                    settling = None
                elif current == settling:  # the same change for a whole tick: written
                    last_print, settling = current, None
                    self.reload("schedule files changed")
                else:
                    settling = current  # maybe half written: look again next tick
                self._promote_deferred()
        finally:
            busy = self._activity.startswith("updating")
            log.info("stopping%s", ": abandoning the update in flight" if busy else "")
            self._activity = "stopping"
            self.stop.set()
            self._work.set()
            if self._scheduler.running:
                self._scheduler.shutdown(wait=False)  # jobs are instant; never wait on them
            if runner.is_alive():
                runner.join(timeout=max(10.0, 3 * self.tick))
            self._restore_signals(previous)
            self._activity = "stopped"
            self._beat(stopped=True)
            os.close(self._pipe_r)
            os.close(self._pipe_w)
            log.info("stopped")

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
        """Reconcile the jobs with ``feeds`` by diffing: add new, remove gone, reschedule only
        the changed ones; untouched jobs keep their next run time (pitfall #3).

        Every new or changed trigger is made first: one that cannot be (a ScheduleError
        naming its file) leaves the jobs as they were.
        """
        now = utcnow()
        new = {feed.url: feed for feed in feeds}
        triggers = {
            url: _checked_trigger(feed, now)
            for url, feed in new.items()
            if self._specs.get(url) != job_spec(feed)
        }
        added = removed = changed = 0
        with self._state:
            for url in set(self._feeds) - set(new):
                self._scheduler.remove_job(url)
                self._specs.pop(url, None)
                self._wanted.discard(url)
                self._deferred.pop(url, None)
                removed += 1
            for url, feed in new.items():
                if url not in triggers:
                    continue
                trigger, grace = triggers[url]
                if url in self._specs:
                    self._scheduler.reschedule_job(url, trigger=trigger)
                    self._scheduler.modify_job(url, misfire_grace_time=grace)
                    changed += 1
                else:
                    self._scheduler.add_job(
                        self._want,
                        trigger,
                        args=[url],
                        id=url,
                        name=feed.label,
                        coalesce=True,
                        max_instances=1,
                        misfire_grace_time=grace,
                    )
                    added += 1
                self._specs[url] = job_spec(feed)
                self._deferred.pop(url, None)
                self._wanted.add(url)  # new or changed: poll now if the archive says it is due
            self._feeds = new
        if self._wanted:
            self._work.set()
        return added, removed, changed

    # internals --------------------------------------------------------------------------

    def _want(self, url: str) -> None:
        """The job: mark the feed wanted and wake the runner. Never touches the archive."""
        with self._state:
            if url in self._feeds:
                self._wanted.add(url)
        self._work.set()

    def _promote_deferred(self) -> None:
        now = utcnow()
        with self._state:
            ready = [url for url, due in self._deferred.items() if due <= now]
            for url in ready:
                del self._deferred[url]
                self._wanted.add(url)
        if ready:
            self._work.set()

    def _take_batch(self) -> list[FeedSchedule]:
        with self._state:
            batch = [self._feeds[url] for url in sorted(self._wanted) if url in self._feeds]
            self._wanted.clear()
        return batch

    def _runner(self) -> None:
        while not self.stop.is_set():
            self._work.wait(self.tick)
            self._work.clear()
            if self.stop.is_set():
                break
            batch = self._take_batch()
            if batch:
                self._cycle(batch)

    def _cycle(self, batch: list[FeedSchedule]) -> None:
        started = utcnow()
        self._activity = f"updating {_feeds(len(batch))}"
        self._beat()
        try:
            result = self.update(batch, self.stop)
        except Exception as e:  # an archive that cannot be opened must not end the daemon
            self._log_failure(str(e))
            self._defer(batch, started + timedelta(seconds=self.retry_after_error))
            result = CycleResult(failed=len(batch), skipped=f"error: {e}")
        else:
            if self._failing is not None and not result.skipped:
                log.info("update cycles work again")
                self._failing = None
            if result.skipped:
                if not self._busy_logged:
                    log.info("%s; retrying each tick", result.skipped)
                self._busy_logged = True
                self._defer(batch, started + timedelta(seconds=self.tick))
            else:
                self._busy_logged = False
                with self._state:
                    for url, due in result.waiting.items():
                        if url in self._feeds:
                            self._deferred[url] = due
        finished = utcnow()
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

    def _log_failure(self, error: str) -> None:
        """ERROR once per failure (a damaged or deleted archive fails every cycle alike)."""
        if error != self._failing:
            log.error("update cycle failed: %s; retrying every %gs", error, self.retry_after_error)
        else:
            log.debug("update cycle failed again: %s", error)
        self._failing = error

    def _defer(self, batch: Sequence[FeedSchedule], until: datetime) -> None:
        with self._state:
            for feed in batch:
                if feed.url in self._feeds:
                    self._deferred[feed.url] = until

    def _beat(self, *, stopped: bool = False) -> None:
        if self.heartbeat is None:
            return
        now = utcnow()
        with self._state:
            data: dict[str, Any] = {
                "pid": os.getpid(),
                "state": "stopped" if stopped else "running",
                "started_at": iso(self.started_at),
                "heartbeat_at": iso(now),
                "activity": self._activity,
                "feeds": len(self._feeds),
                "wanted": len(self._wanted),
                "waiting": len(self._deferred),
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

    def _sleep(self, seconds: float) -> None:
        readable, _, _ = select.select([self._pipe_r], [], [], seconds)
        if readable:
            with contextlib.suppress(BlockingIOError):
                os.read(self._pipe_r, 4096)

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
