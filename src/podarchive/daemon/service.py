"""The daemon as a use case: its locks, its archive, and the update each cycle runs.

:func:`run_daemon` is what ``podarchive daemon`` calls: it holds the daemon lock (one daemon
per archive), checks once that the archive opens, and runs a :class:`~.scheduler.Daemon`
whose cycles take the archive lock and update the feeds that are due (:func:`cycle_update`).
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from contextlib import nullcontext
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from podarchive.core.clock import iso, utcnow
from podarchive.core.errors import ArchiveLocked
from podarchive.core.settings import Settings
from podarchive.daemon.scheduler import CycleResult, Daemon, Update
from podarchive.read.schedule_files import FeedSchedule, load_schedules
from podarchive.runtime.lock import archive_lock, daemon_lock
from podarchive.store import Archive
from podarchive.tasks.status import heartbeat_path
from podarchive.tasks.upkeep import working
from podarchive.update.one_feed import due_feeds, feed_due_at
from podarchive.update.run import update_feeds

if TYPE_CHECKING:
    from podarchive.daemon.podping import PodpingOptions, PodpingWatcher
    from podarchive.daemon.push import PushManager
    from podarchive.daemon.push_http import PushServer


def cycle_update(
    db_path: Path,
    settings: Settings,
    push: PushManager | None = None,
    podping: PodpingWatcher | None = None,
) -> Update:
    """The daemon's update function: the archive lock, then the batch's due feeds updated.

    An archive deleted (or moved away) while the daemon runs is not started again empty:
    the cycle fails with :class:`ArchiveMissing` (logged once) until it is back. With
    ``push``, a feed a notification made due is polled now (politeness still applies: a
    host's Retry-After, the feed's own not-before), and a feed whose push is live is
    polled at its stretched interval (#29). With ``podping``, a feed a podping named is
    polled now the same way.
    """
    mutex = push.archive_mutex if push else podping.archive_mutex if podping else None

    def update(batch: Sequence[FeedSchedule], stop: threading.Event) -> CycleResult:
        feeds = [push.stretch(f) for f in batch] if push else list(batch)
        pushed = push.take_pushed([f.url for f in feeds]) if push else set()
        pinged = podping.take_pushed([f.url for f in feeds]) if podping else set()
        with mutex or nullcontext():
            result = _cycle(feeds, pushed | pinged, stop)
        if result.skipped:  # the archive was busy: still due when the cycle runs
            for side, urls in ((push, pushed), (podping, pinged)):
                if side is not None:
                    side.push_again(urls)
        return result

    def _cycle(feeds: list[FeedSchedule], pushed: set[str], stop: threading.Event) -> CycleResult:
        try:
            lock = archive_lock(db_path).acquire()
        except ArchiveLocked as e:
            return CycleResult(skipped=str(e))
        with lock, working(db_path, create=False) as archive:
            due, not_due = due_feeds(archive, [f for f in feeds if f.url not in pushed], utcnow())
            polite = _polite(archive, [f for f in feeds if f.url in pushed], utcnow())
            report = update_feeds(archive, [*polite, *due], settings=settings, stop=stop)
            report.not_due = not_due + len(pushed) - len(polite)
            if push is not None:
                push.polled(r.url for r in report.feeds if r.ok)
            blocks = archive.host_blocks(iso(utcnow()))
            states = archive.feed_states()  # one read, however many feeds (#30)
            waiting = {}  # every feed's next due time, polled or not: the daemon sleeps till then
            for feed in feeds:
                state = states.get(feed.url)
                if state is not None and state.gone_at is None:
                    waiting[feed.url] = feed_due_at(state, feed, blocks)
        return CycleResult(
            polled=len(report.feeds),
            failed=len(report.failed),
            not_due=report.not_due,
            waiting=waiting,
            stopped=report.stopped,
        )

    return update


def _polite(archive: Archive, feeds: Sequence[FeedSchedule], now: datetime) -> list[FeedSchedule]:
    """The pushed feeds that may be polled now: not gone, not held back by the server."""
    blocks = archive.host_blocks(iso(now))
    out = []
    for feed in feeds:
        state = archive.feed_state(feed.url)
        if state is not None and state.gone_at is not None:
            continue
        waits = [state.not_before if state else None]
        if state is not None:
            waits.append(blocks.get(urlsplit(state.current_url).hostname or ""))
        if all(w is None or w <= iso(now) for w in waits):
            out.append(feed)
    return out


@dataclass(frozen=True, slots=True)
class PushOptions:
    """``--listen``, ``--public-url`` and ``--push-every`` of ``daemon`` (#29)."""

    listen: str
    public_url: str
    push_every: timedelta = timedelta(days=1)
    lease: int = 86_400


def run_daemon(
    schedules_dir: Path,
    db_path: Path,
    settings: Settings,
    feeds: tuple[FeedSchedule, ...],
    *,
    allow_fast: bool,
    tick: float,
    push: PushOptions | None = None,
    podping: PodpingOptions | None = None,
) -> int | None:
    """Run the daemon over ``feeds`` until a signal stops it; return that signal.

    Raises :class:`ArchiveLocked` when another daemon serves the archive, and the archive's
    own error when it cannot be opened (checked once, not in every cycle). With ``push``,
    the WebSub endpoint listens and feeds that name a hub are subscribed (#29).
    """
    with daemon_lock(db_path).acquire():
        try:
            with archive_lock(db_path), Archive(db_path):
                pass  # fail now, not in every cycle, when the archive cannot be opened
        except ArchiveLocked:
            pass  # a run is using it, so it opens
        runner = Daemon(
            load=lambda: load_schedules(schedules_dir, allow_fast=allow_fast),
            update=lambda feeds, stop: CycleResult(),
            watch=schedules_dir,
            heartbeat=heartbeat_path(db_path),
            tick=tick,
            retry_after_error=min(30.0, 15 * tick),
        )
        manager, server = push_side(runner, db_path, settings, push)
        watcher = podping_side(runner, db_path, settings, podping, manager)
        runner.update = cycle_update(db_path, settings, manager, watcher)
        try:
            if server is not None and manager is not None:
                server.start()
                manager.start()
            if watcher is not None:
                watcher.start()
            runner.run(feeds)
        finally:
            if watcher is not None:
                watcher.stop()
            if server is not None and manager is not None:
                server.stop()
                manager.stop()
    return runner.stopped_by


def push_side(
    runner: Daemon, db_path: Path, settings: Settings, options: PushOptions | None
) -> tuple[PushManager | None, PushServer | None]:
    """The push manager and its endpoint, wired to ``runner`` (None, None without push)."""
    if options is None:
        return None, None
    from podarchive.daemon.push import PushManager
    from podarchive.daemon.push_http import PushServer

    manager = PushManager(
        db_path,
        settings,
        public_url=options.public_url,
        want=runner.want,
        scheduled=lambda: runner.feeds if runner.started.is_set() else None,
        push_every=options.push_every,
        lease=options.lease,
    )
    return manager, PushServer(manager, options.listen)


def podping_side(
    runner: Daemon,
    db_path: Path,
    settings: Settings,
    options: PodpingOptions | None,
    manager: PushManager | None,
) -> PodpingWatcher | None:
    """The podping watcher, wired to ``runner`` (None without ``--podping``)."""
    if options is None:
        return None
    from podarchive.daemon.podping import PodpingWatcher

    mutex = manager.archive_mutex if manager is not None else None
    return PodpingWatcher(db_path, settings, options, want=runner.want, archive_mutex=mutex)
