"""The daemon as a use case: its locks, its archive, and the update each cycle runs.

:func:`run_daemon` is what ``podarchive daemon`` calls: it holds the daemon lock (one daemon
per archive), checks once that the archive opens, and runs a :class:`~.scheduler.Daemon`
whose cycles take the archive lock and update the feeds that are due (:func:`cycle_update`).
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from pathlib import Path

from podarchive.core.clock import iso, utcnow
from podarchive.core.errors import ArchiveLocked
from podarchive.core.settings import Settings
from podarchive.daemon.scheduler import CycleResult, Daemon, Update
from podarchive.read.schedule_files import FeedSchedule, load_schedules
from podarchive.runtime.lock import archive_lock, daemon_lock
from podarchive.store import Archive
from podarchive.tasks.status import heartbeat_path
from podarchive.tasks.upkeep import working
from podarchive.update.one_feed import feed_due_at
from podarchive.update.run import update_due


def cycle_update(db_path: Path, settings: Settings) -> Update:
    """The daemon's update function: the archive lock, then ``update_due`` for the batch.

    An archive deleted (or moved away) while the daemon runs is not started again empty:
    the cycle fails with :class:`ArchiveMissing` (logged once) until it is back.
    """

    def update(feeds: Sequence[FeedSchedule], stop: threading.Event) -> CycleResult:
        try:
            lock = archive_lock(db_path).acquire()
        except ArchiveLocked as e:
            return CycleResult(skipped=str(e))
        with lock, working(db_path, create=False) as archive:
            report = update_due(archive, feeds, settings=settings, stop=stop)
            blocks = archive.host_blocks(iso(utcnow()))
            waiting = {}  # every feed's next due time, polled or not: the daemon sleeps till then
            for feed in feeds:
                state = archive.feed_state(feed.url)
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


def run_daemon(
    schedules_dir: Path,
    db_path: Path,
    settings: Settings,
    feeds: tuple[FeedSchedule, ...],
    *,
    allow_fast: bool,
    tick: float,
) -> int | None:
    """Run the daemon over ``feeds`` until a signal stops it; return that signal.

    Raises :class:`ArchiveLocked` when another daemon serves the archive, and the archive's
    own error when it cannot be opened (checked once, not in every cycle).
    """
    with daemon_lock(db_path).acquire():
        try:
            with archive_lock(db_path), Archive(db_path):
                pass  # fail now, not in every cycle, when the archive cannot be opened
        except ArchiveLocked:
            pass  # a run is using it, so it opens
        runner = Daemon(
            load=lambda: load_schedules(schedules_dir, allow_fast=allow_fast),
            update=cycle_update(db_path, settings),
            watch=schedules_dir,
            heartbeat=heartbeat_path(db_path),
            tick=tick,
            retry_after_error=min(30.0, 15 * tick),
        )
        runner.run(feeds)
    return runner.stopped_by
