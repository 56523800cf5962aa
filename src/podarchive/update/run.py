"""A run: many feeds updated at once, with their pages and files, as the archive can take.

The cron job and the daemon call :func:`update_due`; ``run URL`` and tests call
:func:`update_feeds`. Worker threads fetch (:func:`podarchive.update.one_feed.fetch_feed`,
:func:`podarchive.update.pages.fetch_page`, :func:`podarchive.update.files.fetch_file`), only the
calling thread stores, and :class:`_Flow` keeps what is started and not yet stored within
:func:`in_flight_limit`, so a run's memory follows its largest feed (#15). A fetch given up
while the run is not stopping (the cluster's broker failed under it) is started again after
:data:`REDO_PAUSE`, doubling up to :data:`REDO_MAX`: nothing of it was recorded, and its feed
is finished, never left half done (#23).
"""

from __future__ import annotations

import functools
import heapq
import itertools
import logging
import queue
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import suppress
from dataclasses import dataclass, field
from functools import partial
from typing import Any, Protocol

import httpx

from podarchive.core.clock import Clock, iso, parse_iso, utcnow
from podarchive.core.errors import Abandoned
from podarchive.core.settings import Settings
from podarchive.core.types import FeedState, FileKind, FileTask, PageTask
from podarchive.core.urls import normalize_url
from podarchive.net.fetch import Fetcher
from podarchive.net.hosts import HostTurns
from podarchive.read.schedule_files import FeedSchedule
from podarchive.runtime.cpu import CpuLane
from podarchive.store import ArchiveLike, KnownItems
from podarchive.update.big_ingest import big_ingest
from podarchive.update.feed_log import (
    changed_settings,
    count_file,
    count_page_outcome,
    fetch_settings,
    log_feed,
)
from podarchive.update.files import FileOutcome, fetch_file, store_file
from podarchive.update.media import MediaFeed, MediaPhase, MediaReport, media_folder
from podarchive.update.one_feed import (
    FeedOutcome,
    FeedReport,
    Known,
    due_feeds,
    fetch_feed,
    store_feed,
)
from podarchive.update.pace import in_flight_limit
from podarchive.update.pages import PageOutcome, fetch_page, pages_due, store_page

log = logging.getLogger("podarchive")
_STARTED, _IDLE, _END = object(), object(), object()  # what _Flow._start_feed did
REDO_PAUSE = 1.0  # seconds before a fetch the broker failed under is started again
REDO_MAX = 16.0  # ... doubling each time the same fetch is given up again, to at most this
_feed_key = functools.lru_cache(maxsize=8192)(normalize_url)  # pure; same URLs each poll (#30)


@dataclass(slots=True)
class RunReport:
    feeds: list[FeedReport] = field(default_factory=list)
    not_due: int = 0  # scheduled feeds skipped because they were not due yet
    stopped: bool = False  # the run was asked to stop before it finished
    media: MediaReport | None = None  # the media phase, when a feed has media = true

    @property
    def failed(self) -> list[FeedReport]:
        return [f for f in self.feeds if not f.ok]


def update_due(
    archive: ArchiveLike,
    schedules: Iterable[FeedSchedule],
    *,
    settings: Settings | None = None,
    transport: httpx.BaseTransport | None = None,
    clock: Clock = utcnow,
    stop: threading.Event | None = None,
    recheck_pages: bool = False,
    recheck_media: bool = False,
    progress: RunWatcher | None = None,
) -> RunReport:
    """Update the scheduled feeds that are due now; the cron job and the daemon call this."""
    due, waiting = due_feeds(archive, schedules, clock())
    report = update_feeds(
        archive,
        due,
        settings=settings,
        transport=transport,
        clock=clock,
        stop=stop,
        recheck_pages=recheck_pages,
        recheck_media=recheck_media,
        progress=progress,
    )
    report.not_due = waiting
    return report


@dataclass(frozen=True, slots=True)
class _Workers:
    """What a run's phases share: the HTTP client, the threads, the CPU lane, the item cache."""

    fetcher: Fetcher
    threads: ThreadPoolExecutor
    cpu: CpuLane
    known: Known | None

    def fetch_feed(self, schedule: FeedSchedule, state: FeedState) -> Future[Any]:
        return self.threads.submit(fetch_feed, self.fetcher, schedule, state, self.known, self.cpu)

    def fetch_page(self, task: PageTask, schedule: FeedSchedule) -> Future[Any]:
        return self.threads.submit(fetch_page, self.fetcher, task, schedule, self.cpu)

    def fetch_file(self, task: FileTask, schedule: FeedSchedule) -> Future[Any]:
        return self.threads.submit(fetch_file, self.fetcher, task, schedule, self.cpu)

    def abort(self) -> None:
        self.fetcher.abort()
        self.cpu.abort()


def update_feeds(
    archive: ArchiveLike,
    schedules: Iterable[FeedSchedule],
    *,
    settings: Settings | None = None,
    transport: httpx.BaseTransport | None = None,
    clock: Clock = utcnow,
    stop: threading.Event | None = None,
    recheck_pages: bool = False,
    hosts: HostTurns | None = None,
    recheck_media: bool = False,
    progress: RunWatcher | None = None,
) -> RunReport:
    """Update every feed in ``schedules`` now (and, where enabled, its episode pages,
    transcripts and chapters files: new ones, and archived ones whose re-check is due, or
    all archived ones with ``recheck_pages``).

    At most :func:`in_flight_limit` fetches are started and not yet stored at any moment,
    so a run's memory follows its largest feed, not its number of feeds (#15). Setting
    ``stop`` makes the run give up what is in flight and return soon; everything stored so
    far is committed (one transaction per feed or page), the rest is left for the next run.
    ``progress`` is told how many feeds there are and each feed, page or file stored.
    """
    listed = list(schedules)
    if progress is not None:
        progress.begin(len(listed))
    with big_ingest(archive, [s.url for s in listed]) as big:  # #30: the links' indexes deferred
        return update_stream(
            archive,
            _Listed(listed, archive),
            settings=settings,
            transport=transport,
            clock=clock,
            stop=stop,
            recheck_pages=recheck_pages,
            hosts=hosts,
            recheck_media=recheck_media,
            progress=progress,
            feeds=len(listed),
            big=big,
        )


class RunWatcher(Protocol):
    """What a run tells its progress display (``runtime.progress.RunProgress``)."""

    def begin(self, feeds: int) -> None: ...
    def stored(self, kind: str, nbytes: int) -> None: ...


class FeedSource(Protocol):
    """Where a run takes its feeds from, one at a time (:func:`update_stream`)."""

    def next_feed(self, block: bool) -> FeedSchedule | None:
        """The next feed to update; None when there is none now (``block``: the run has
        nothing else to do, so wait a little for one). Raises StopIteration at the end."""
        ...


class _Listed:
    """A run's feeds given up front (``run``, the daemon): never idle, then the end."""

    def __init__(self, schedules: list[FeedSchedule], archive: ArchiveLike) -> None:
        self._feeds = iter(schedules)
        self._states = archive.named_states([s.url for s in schedules])  # in one read (#30)

    def next_feed(self, block: bool) -> FeedSchedule | None:
        return next(self._feeds)

    def state(self, schedule: FeedSchedule) -> FeedState | None:  # once: a URL twice is read again
        state, name = self._states.pop(schedule.url, (None, None))
        return state if schedule.name in (None, name) else None


def update_stream(
    archive: ArchiveLike,
    source: FeedSource,
    *,
    settings: Settings | None = None,
    transport: httpx.BaseTransport | None = None,
    clock: Clock = utcnow,
    stop: threading.Event | None = None,
    recheck_pages: bool = False,
    hosts: HostTurns | None = None,
    on_done: Callable[[str, FeedReport | None], None] | None = None,
    recheck_media: bool = False,
    progress: RunWatcher | None = None,
    feeds: int | None = None,
    big: bool = False,
) -> RunReport:
    """:func:`update_feeds` over feeds that arrive while it runs (a cluster worker's
    messages, #16): one archive, HTTP client and CPU lane for as long as ``source`` lasts.

    ``on_done(url, report)`` is called, on this thread, once each feed started is stored
    with its pages and files (``report`` None: it was given up because the run is
    stopping, nothing of it recorded). With ``on_done`` the run keeps no reports of its own,
    so it can last for ever.

    Then the media of the feeds with ``media = true`` (:mod:`podarchive.update.media`, its
    own threads), unless stopping; ``recheck_media`` makes every stored file due for a
    conditional re-check now. A stream handing its feeds on (``on_done``) fetches no media:
    a cluster worker hands them to its own media thread (:mod:`podarchive.cluster.media`).
    ``feeds``: how many feeds ``source`` holds, when known (the CPU lane is sized by it);
    ``big``: a big first ingest, every parse in worker processes (``runtime.cpu.lane_plan``).
    """
    settings = settings or Settings()
    report = RunReport()
    blocks = {
        host: until
        for host, stamp in archive.host_blocks(iso(clock())).items()
        if (until := parse_iso(stamp)) is not None
    }
    threads = ThreadPoolExecutor(max(1, settings.concurrency), "podarchive")
    known: KnownItems | None = archive.known_items() if settings.item_cache else None
    with (
        Fetcher(settings, transport=transport, blocked_hosts=blocks, hosts=hosts) as fetcher,
        CpuLane.for_run(feeds, settings.processes, big) as cpu,
    ):
        workers = _Workers(fetcher, threads, cpu, known)
        flow = _Flow(archive, workers, report, settings, clock, stop, recheck_pages, on_done)
        flow.progress = progress
        try:
            flow.run(source)
            if flow.media_feeds and not (stop is not None and stop.is_set()):
                phase = _media_phase(archive, fetcher, settings, clock, stop)
                report.media = phase.run(flow.media_feeds, recheck_media) if phase else None
        finally:
            stopping = stop is not None and stop.is_set()
            if stopping:
                workers.abort()
            threads.shutdown(wait=not stopping, cancel_futures=True)
            if known is not None:
                known.close()
        archive.save_host_blocks(
            {host: iso(until) for host, until in fetcher.blocked_hosts.items()}, iso(clock())
        )
    report.stopped = bool(stop and stop.is_set())
    return report


def _media_phase(
    archive: ArchiveLike,
    fetcher: Fetcher,
    settings: Settings,
    clock: Clock,
    stop: threading.Event | None,
) -> MediaPhase | None:
    folder = media_folder(archive, settings)
    if folder is None:
        return None
    return MediaPhase(archive, fetcher, folder, settings, clock, stop)


@dataclass(slots=True)
class _Followers:
    """A stored feed whose pages and files are still to be listed and fetched."""

    schedule: FeedSchedule
    feed_id: int
    report: FeedReport
    settings: str | None = None  # its fetch settings, read with its state (#30)


class _Flow:
    """A run's work, started in order and stored as it finishes, with back-pressure.

    Feeds start first, in the order given (as before: a feed is never queued behind another
    feed's pages); a stored feed's pages and files are listed only when their turn comes,
    so the queue of work not started is one small entry per feed, never one per page.
    """

    def __init__(
        self,
        archive: ArchiveLike,
        workers: _Workers,
        report: RunReport,
        settings: Settings,
        clock: Clock,
        stop: threading.Event | None,
        recheck_pages: bool,
        on_done: Callable[[str, FeedReport | None], None] | None = None,
    ) -> None:
        self.archive, self.workers, self.report = archive, workers, report
        self.settings, self.clock, self.stop = settings, clock, stop
        self.recheck_pages, self.limit = recheck_pages, in_flight_limit(settings)
        self.on_done = on_done  # set: a stream that forgets each feed once it is done
        self.pending: set[Future[Any]] = set()
        #: started futures as they finish: one queue to wait on, not a waiter on each (#30)
        self.finished: queue.SimpleQueue[Future[Any]] = queue.SimpleQueue()
        self.followers: deque[_Followers] = deque()
        self.tasks: deque[Callable[[], Future[Any]]] = deque()  # one listed feed's fetches
        self.reports: dict[int, FeedReport] = {}
        self.settled: dict[int, str] = {}  # fetch settings to keep once a feed's followers are in
        self.fetching: dict[str, str] = {}  # feed URL → label: never two GETs of one feed
        self.keys: dict[int, str] = {}  # feed id → its key in ``fetching``
        # fetches to start again: a heap of (not before, order, start); given up per URL
        self.redo: list[tuple[float, int, Callable[[], Future[Any]]]] = []
        self.redone: dict[str, int] = {}
        self.media_feeds: list[MediaFeed] = []  # stored feeds with media = true, in order
        self.progress: RunWatcher | None = None
        self._order = itertools.count()

    def run(self, source: FeedSource) -> None:
        more_feeds = True
        while True:
            self._start_redone()
            more_feeds, idle = self._start_feeds(source, more_feeds)
            if not more_feeds or idle:  # pages and files may start meanwhile
                self._start_followers()
            if not self.pending:
                if self._stopping():
                    return
                if more_feeds:
                    continue  # a stream between feeds
                if not self.redo:
                    return
                self._pause(self.redo[0][0] - time.monotonic())
                continue
            done = self._finished()
            if self._stopping():
                self._abort()
                more_feeds = False
            for future in done:
                self._store(future.result())

    def _start(self, future: Future[Any]) -> None:
        """Count ``future`` in flight until it finishes."""
        self.pending.add(future)
        future.add_done_callback(self.finished.put)

    def _finished(self) -> list[Future[Any]]:
        """Finished futures, taken out of ``pending`` (those cancelled by a stop skipped); waits
        up to 0.1 s for one."""
        try:
            got = [self.finished.get(timeout=0.1)]
        except queue.Empty:
            return []
        with suppress(queue.Empty):
            while True:
                got.append(self.finished.get_nowait())
        done = [f for f in got if f in self.pending]
        self.pending.difference_update(done)
        return done

    def _start_feeds(self, source: FeedSource, more_feeds: bool) -> tuple[bool, bool]:
        """Start feeds' fetches while there is room: whether more feeds may come, and whether
        the source has none now (idle)."""
        idle, cpu = False, self.workers.cpu
        while more_feeds and cpu.room(len(self.pending), self.limit) and not self._stopping():
            started = self._start_feed(source, block=not self._busy())
            more_feeds, idle = started is not _END, started is _IDLE
            if idle:
                break
        return more_feeds, idle

    def _start_followers(self) -> None:
        """Start pages' and files' fetches while there is room and there are some."""
        while self.workers.cpu.room(len(self.pending), self.limit) and self._start_follower():
            pass

    def _abort(self) -> None:
        """Stopping: the workers' fetches cancelled, nothing more started."""
        self.workers.abort()
        for future in self.pending:
            future.cancel()
        self.pending = set()
        self.followers.clear()
        self.tasks.clear()
        self.redo.clear()

    def _busy(self) -> bool:
        return bool(self.pending or self.tasks or self.followers)

    def _stopping(self) -> bool:
        return self.stop is not None and self.stop.is_set()

    def _pause(self, seconds: float) -> None:
        if seconds > 0:
            if self.stop is not None:
                self.stop.wait(seconds)
            else:
                time.sleep(seconds)

    def _redo_later(self, outcome: FeedOutcome | PageOutcome | FileOutcome) -> None:
        """A fetch given up while the run goes on: the cluster's broker failed under it
        (per-host turns live there), nothing of it was recorded. The same fetch starts again
        after :data:`REDO_PAUSE` (again and again while the broker is away, each pause twice
        the last, to :data:`REDO_MAX`), so its feed is stored whole once the broker is back,
        and never left in flight (#23)."""
        url = _url_of(outcome)
        times = self.redone[url] = self.redone.get(url, 0) + 1
        pause = min(REDO_PAUSE * 2 ** (times - 1), REDO_MAX)
        log.debug("%s: %s; again in %g s", url, outcome.error, pause)
        entry = (time.monotonic() + pause, next(self._order), _again(self.workers, outcome))
        heapq.heappush(self.redo, entry)

    def _start_redone(self) -> None:
        now = time.monotonic()
        while self.redo and self.redo[0][0] <= now and len(self.pending) < self.limit:
            self._start(heapq.heappop(self.redo)[2]())

    def _start_feed(self, source: FeedSource, block: bool) -> object:
        """Start the next feed's fetch unless started already: _STARTED, _IDLE (none now), _END."""
        try:
            schedule = source.next_feed(block)
        except StopIteration:
            return _END
        if schedule is None:
            return _IDLE
        known = source.state(schedule) if isinstance(source, _Listed) else None
        state = known or self.archive.ensure_feed(schedule.url, schedule.name, iso(self.clock()))
        key = _feed_key(state.current_url)
        twin = self.fetching.setdefault(key, label := schedule.label)  # made once (#30)
        if twin != label:
            note = f"same feed as {twin} (it moved there); not fetched twice"
            twin_report = FeedReport(schedule.url, schedule.label, warnings=(note,))
            self._keep(twin_report)
            self._done(twin_report)
        else:
            self.keys[state.id] = key
            self._start(self.workers.fetch_feed(schedule, state))
        return _STARTED

    def _keep(self, report: FeedReport) -> None:
        """The run's list of reports, kept unless a stream hands each one on (``on_done``)."""
        if self.on_done is None:
            self.report.feeds.append(report)

    def _tell(self, outcome: FeedOutcome | PageOutcome | FileOutcome) -> None:
        """Tell the progress display a feed, page or file is stored, and its bytes."""
        if self.progress is not None:
            kind = "feed" if isinstance(outcome, FeedOutcome) else "file"
            self.progress.stored(kind, sum(record.bytes for record in outcome.records))

    def _done(self, report: FeedReport, *, feed_id: int | None = None) -> None:
        """A feed's report is final: a stream hands it on and forgets the feed."""
        if self.on_done is None:
            return
        if feed_id is not None:
            self.reports.pop(feed_id, None)
            self.fetching.pop(self.keys.pop(feed_id, ""), None)
        self.on_done(report.url, report)

    def _start_follower(self) -> bool:
        """Start the next page or file fetch, listing the next feed's when one is needed."""
        while not self.tasks and self.followers:
            self._list_followers(self.followers.popleft())
        if not self.tasks:
            return False
        self._start(self.tasks.popleft()())
        return True

    def _list_followers(self, entry: _Followers) -> None:
        starts, fingerprint = _followers(
            self.archive, entry, self.workers, self.clock, self.recheck_pages, self.settings
        )
        self.tasks.extend(starts)
        if fingerprint is not None:
            self.settled[entry.feed_id] = fingerprint
        if entry.report.pages_pending == 0:
            log_feed(entry.report)
            self._done(entry.report, feed_id=entry.feed_id)

    def _store(self, outcome: FeedOutcome | PageOutcome | FileOutcome) -> None:
        if isinstance(outcome.error, Abandoned):
            if not self._stopping():
                self._redo_later(outcome)
            elif isinstance(outcome, FeedOutcome) and self.on_done is not None:
                self.on_done(outcome.state.url, None)
            return  # not the feed's fault: nothing is recorded (stopping: the next run redoes it)
        if self.redone:
            self.redone.pop(_url_of(outcome), None)
        self._tell(outcome)
        now = self.clock()
        if isinstance(outcome, FeedOutcome):
            feed_id = outcome.state.id
            feed_report = store_feed(self.archive, outcome, now, self.settings)
            self._keep(feed_report)
            self.reports[feed_id] = feed_report
            if feed_report.ok and not self._stopping():
                if outcome.schedule.media and self.on_done is None:
                    media = MediaFeed(outcome.schedule, feed_id, feed_report.label)
                    self.media_feeds.append(media)
                settings = outcome.state.fetch_settings
                entry = _Followers(outcome.schedule, feed_id, feed_report, settings)
                if _has_followers(outcome.schedule):
                    feed_report.pages_pending = -1  # listed when their turn comes
                    self.followers.append(entry)
                else:
                    self._list_followers(entry)  # nothing to fetch: settle it now
                return
        elif isinstance(outcome, FileOutcome):
            feed_id = outcome.task.feed_id
            status = store_file(self.archive, outcome, iso(now))
            feed_report = self.reports[feed_id]
            count_file(feed_report, status, outcome)
        else:
            feed_id = outcome.task.feed_id
            status = store_page(self.archive, outcome, iso(now))
            feed_report = self.reports[feed_id]
            count_page_outcome(feed_report, status, outcome)
        if feed_report.pages_pending == 0:
            log_feed(feed_report)
            if (fingerprint := self.settled.pop(feed_id, None)) is not None:
                self.archive.set_fetch_settings(feed_id, fingerprint)  # all its followers are in
            self._done(feed_report, feed_id=feed_id)


def _again(
    workers: _Workers, outcome: FeedOutcome | PageOutcome | FileOutcome
) -> Callable[[], Future[Any]]:
    """The fetch that gave ``outcome``, ready to start again."""
    if isinstance(outcome, FeedOutcome):
        return partial(workers.fetch_feed, outcome.schedule, outcome.state)
    if isinstance(outcome, FileOutcome):
        return partial(workers.fetch_file, outcome.task, outcome.schedule)
    assert outcome.schedule is not None  # fetch_page always gives it
    return partial(workers.fetch_page, outcome.task, outcome.schedule)


def _url_of(outcome: FeedOutcome | PageOutcome | FileOutcome) -> str:
    return outcome.schedule.url if isinstance(outcome, FeedOutcome) else outcome.task.url


def _has_followers(schedule: FeedSchedule) -> bool:
    return schedule.pages or schedule.transcripts or schedule.chapters


def _followers(
    archive: ArchiveLike,
    entry: _Followers,
    workers: _Workers,
    clock: Clock,
    recheck_pages: bool,
    settings: Settings,
) -> tuple[list[Callable[[], Future[Any]]], str | None]:
    """The fetches a stored feed calls for (its due pages and files, by its schedule), each
    ready to start, and the fetch settings to remember once they are stored (None: nothing).

    When the schedule's fetch settings changed since the feed's pages and files were last
    fetched (:func:`fetch_settings`: private hosts allowed, a user agent, pages turned on),
    those that failed are due now, not after their back-off.
    """
    schedule, feed_id, report, now = entry.schedule, entry.feed_id, entry.report, clock()
    fingerprint = fetch_settings(schedule, settings)
    before = entry.settings  # read with the feed's state when its poll started
    retry = before is not None and before != fingerprint  # unknown before: nothing to redo
    if retry:
        changed = ", ".join(changed_settings(before or "", fingerprint))
        log.info("%s: %s changed: retrying what failed now", report.label, changed)
    starts: list[Callable[[], Future[Any]]] = []
    if schedule.pages:
        pages = pages_due(archive, feed_id, now, recheck_pages, failed_now=retry)
        starts.extend(partial(workers.fetch_page, t, schedule) for t in pages)
    kinds: list[FileKind] = ["transcript"] if schedule.transcripts else []
    kinds.extend(["chapters"] if schedule.chapters else [])
    if kinds:  # none (an unchanged poll's usual case): no stamp to format (#30)
        files = archive.files_to_fetch(
            feed_id, iso(now), kinds, everything=recheck_pages, failing=retry
        )
        starts.extend(partial(workers.fetch_file, t, schedule) for t in files)
    report.pages_pending = len(starts)
    remember = None if before == fingerprint else fingerprint
    if remember is not None and not starts:
        archive.set_fetch_settings(feed_id, remember)
        remember = None
    return starts, remember
