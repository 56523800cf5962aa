"""Update feeds: fetch → parse → extract → store, as named phases.

Worker threads do the network (:func:`fetch_feed`, :func:`fetch_page`) and hand the pure
CPU work (:mod:`podarchive.reading`'s jobs) to the run's :class:`~podarchive.cpu.CpuLane`,
which runs it inline or in worker processes; they return plain outcomes, and only the
calling thread touches the archive (:func:`store_feed`, :func:`store_page`). When to poll,
how long to back off and whether a feed has moved are :mod:`podarchive.policy`'s
decisions. One bad feed or page never stops a run: every failure becomes a row in the
fetch log, the feed's error state, and one line in the :class:`RunReport`.
"""

from __future__ import annotations

import hashlib
import json
import logging
import threading
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from functools import partial
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import httpx

from podarchive import USER_AGENT, __version__, policy
from podarchive.clock import Clock, iso, parse_iso, utcnow
from podarchive.config import FeedSchedule
from podarchive.cpu import CpuLane
from podarchive.episode_files import FileOutcome, fetch_file, store_file
from podarchive.errors import (
    Abandoned,
    HTTPStatusError,
    PodarchiveError,
)
from podarchive.fetch import Fetcher
from podarchive.fetch_for import blame_last, get_for
from podarchive.pages import PageOutcome, count_page, fetch_page, pages_due, store_page
from podarchive.settings import Settings
from podarchive.store import Archive, KnownItems
from podarchive.types import (
    EpisodeWrites,
    FeedState,
    FetchRecord,
    FetchResult,
    FileKind,
    FileTask,
    PageResult,
    PageTask,
    Row,
    SaveStats,
    Snapshot,
    Tag,
)
from podarchive.urls import normalize_url

if TYPE_CHECKING:
    from podarchive.podcast_ns import FeedSplit
    from podarchive.reading import FeedRead

log = logging.getLogger("podarchive")
Known = Callable[[int], dict[str, str]]  # feed id → {item hash: episode key}
PERMANENT = frozenset({301, 308})


# outcomes -------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class FeedOutcome:
    """What fetching and parsing one feed gave, before anything is stored."""

    schedule: FeedSchedule
    state: FeedState
    records: list[FetchRecord]
    result: FetchResult | None = None
    content_hash: str | None = None
    meta: Row | None = None
    episodes: EpisodeWrites = EpisodeWrites()
    warnings: tuple[str, ...] = ()
    error: PodarchiveError | None = None
    move_to: str | None = None  # a verified itunes:new-feed-url
    complete: bool = False  # RFC 5005 fh:complete
    well_formed: bool = True  # parsed without recovering from errors
    split: FeedSplit | None = None  # the body cut into skeleton and items, when possible
    listed: tuple[str, ...] = ()  # keys of listed episodes not parsed: their items are known
    channel_tags: tuple[Tag, ...] = ()  # the channel's extension elements (#13)


@dataclass(slots=True)
class FeedReport:
    """How one feed's update went, for the CLI and the logs."""

    url: str
    label: str
    error: str | None = None
    not_modified: bool = False
    stats: SaveStats = field(default_factory=SaveStats)
    warnings: tuple[str, ...] = ()
    moved_to: str | None = None
    pages_ok: int = 0
    pages_empty: int = 0
    pages_failed: int = 0
    pages_pending: int = 0  # page and file fetches not stored yet
    files_ok: int = 0  # transcripts and chapters files read (or unchanged)
    files_failed: int = 0
    source: str = ""  # the schedule file the feed is in ("" for ad hoc feeds)
    #: what failed this run among its pages and files: (kind, error), kind "page",
    #: "transcript" or "chapters" (:func:`podarchive.status.problem_line` sums them up)
    problems: list[tuple[str, str]] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.error is None


@dataclass(slots=True)
class RunReport:
    feeds: list[FeedReport] = field(default_factory=list)
    not_due: int = 0  # scheduled feeds skipped because they were not due yet
    stopped: bool = False  # the run was asked to stop before it finished

    @property
    def failed(self) -> list[FeedReport]:
        return [f for f in self.feeds if not f.ok]


# due-ness -------------------------------------------------------------------------------


def feed_due_at(state: FeedState, schedule: FeedSchedule, host_blocks: dict[str, str]) -> datetime:
    """When this feed should next be polled (policy, from what the archive remembers)."""
    host = urlsplit(state.current_url).hostname or ""
    return policy.next_due(
        every=schedule.every,
        cron=schedule.cron,
        last_attempt=parse_iso(state.last_fetched_at),
        error_count=state.error_count,
        floor=parse_iso(state.not_before),
        not_before=parse_iso(host_blocks.get(host)),
        key=state.url,
    )


def due_feeds(
    archive: Archive, schedules: Iterable[FeedSchedule], now: datetime
) -> tuple[list[FeedSchedule], int]:
    """The scheduled feeds due at ``now`` (gone feeds never are), and how many are not."""
    blocks = archive.host_blocks(iso(now))
    due, waiting = [], 0
    for schedule in schedules:
        state = archive.feed_state(schedule.url)
        if state is None or _is_due(state, schedule, blocks, now):
            due.append(schedule)
        else:
            waiting += 1
    return due, waiting


def _is_due(
    state: FeedState, schedule: FeedSchedule, blocks: dict[str, str], now: datetime
) -> bool:
    return state.gone_at is None and policy.is_due(feed_due_at(state, schedule, blocks), now)


# worker phases (no archive access) ------------------------------------------------------


def fetch_feed(
    fetcher: Fetcher,
    schedule: FeedSchedule,
    state: FeedState,
    known: Known | None = None,
    cpu: CpuLane | None = None,
) -> FeedOutcome:
    """Fetch and parse one feed. Never raises: failures come back in ``error``.

    With ``known`` (the item cache), only the items whose raw bytes the archive has not
    stored for this feed go through feedparser; the others are listed by key (issue #7).
    ``cpu`` decides where the parsing runs (default: inline).
    """
    records: list[FetchRecord] = []
    try:
        result = get_for(
            fetcher,
            schedule,
            state.current_url,
            records,
            kind="feed",
            etag=state.etag,
            last_modified=state.last_modified,
            trusted=True,
        )
        if result.not_modified:
            return FeedOutcome(schedule, state, records, result)
        digest = hashlib.sha256(result.body).hexdigest()
        if digest == state.content_hash:
            return FeedOutcome(schedule, state, records, result, content_hash=digest)
        from podarchive.podcast_ns import split_items  # the parsers load on the first change
        from podarchive.rows import channel_row

        split = split_items(result.body, _item_context(result))
        items = known(state.id) if split and known else None
        read, writes, listed = _read_body(cpu or CpuLane(1), result, split, items)
        move_to, move_note = _check_new_feed_url(fetcher, schedule, state, read, records)
        return FeedOutcome(
            schedule,
            state,
            records,
            result,
            content_hash=digest,
            meta=channel_row(read.channel),
            episodes=writes,
            warnings=(*read.warnings, *read.duplicates, *move_note),
            move_to=move_to,
            complete=read.channel.complete,
            well_formed=not read.recovered,
            split=split,
            listed=listed,
            channel_tags=read.channel.tags,
        )
    except PodarchiveError as e:
        return FeedOutcome(schedule, state, records, error=e)
    except Exception as e:  # a bug must not cost the other feeds their run
        log.exception("unexpected error updating %s", state.url)
        return FeedOutcome(
            schedule, state, records, error=PodarchiveError(f"internal error: {e!r}")
        )


#: Bumped whenever parsing or row derivation reads an unchanged item differently, so that the
#: item cache of every archive forgets what the older code made of each item.
#: 2: bad bytes, character references and dates cost only themselves (#17).
#: 3: Podlove Simple Chapters (``simple_chapters``) are read from items (#12).
#: 4: every extension element is kept (``tags``, #13).
READ_REVISION = 4


def _item_context(result: FetchResult) -> str:
    """What besides its bytes decides how an item reads: parser version, base URL, charset."""
    return f"{__version__}+{READ_REVISION}\0{result.final_url}\0{result.content_type or ''}"


def _read_body(
    cpu: CpuLane, result: FetchResult, split: FeedSplit | None, known: dict[str, str] | None
) -> tuple[FeedRead, EpisodeWrites, tuple[str, ...]]:
    """The feed's read, its writes and the keys of known items not parsed again.

    With the item cache and a split body, only new items are parsed, in chunks that the
    CPU lane may spread over worker processes; anything a partial parse could get wrong
    falls back to a parse of the whole body.
    """
    from podarchive.reading import read_feed, read_items

    headers, url = result.headers, result.final_url

    def read_all(
        documents: Iterable[tuple[bytes, Sequence[str] | None]], weight: int
    ) -> list[FeedRead]:
        argsets = ((document, headers, url, hashes) for document, hashes in documents)
        return cpu.map(read_feed, argsets, weight=weight)

    if split is not None and known is not None:
        items = read_items(split, known, read_all)
        if items is not None:
            return items.read, items.read.writes, items.listed
    hashes = split.hashes if split is not None else None
    read = read_all([(result.body, hashes)], len(result.body))[0]
    return read, read.writes, ()


def _check_new_feed_url(
    fetcher: Fetcher,
    schedule: FeedSchedule,
    state: FeedState,
    read: FeedRead,
    records: list[FetchRecord],
) -> tuple[str | None, tuple[str, ...]]:
    """``itunes:new-feed-url`` is a proposal: follow it only if it serves the same podcast."""
    from podarchive.parse import parse_feed
    from podarchive.rows import podcast_identity

    proposed = read.channel.new_feed_url
    if not proposed or normalize_url(proposed) == normalize_url(state.current_url):
        return None, ()
    try:
        result = get_for(fetcher, schedule, proposed, records, kind="feed")
        candidate = parse_feed(result.body, result.headers, url=result.final_url)
    except PodarchiveError as e:
        return None, (f"itunes:new-feed-url {proposed} not followed: {e}",)
    if policy.same_podcast(read.identity, podcast_identity(candidate)):
        return proposed, ()
    return None, (f"itunes:new-feed-url {proposed} not followed: it serves another podcast",)


# archive phases (calling thread only) ---------------------------------------------------


def store_feed(
    archive: Archive, outcome: FeedOutcome, now: datetime, settings: Settings
) -> FeedReport:
    """Store one feed's outcome, its error or freshness state and any move, atomically."""
    report = FeedReport(
        outcome.state.url,
        outcome.schedule.label,
        warnings=outcome.warnings,
        source=outcome.schedule.source,
    )
    with archive.transaction():
        if outcome.error is not None:
            report.error = str(outcome.error)
            _store_failure(archive, outcome, now)
        else:
            report.not_modified, report.stats = _store_success(archive, outcome, now)
        report.moved_to = _apply_moves(archive, outcome, now, settings)
        state = archive.feed_state(outcome.state.url)
        assert state is not None
        archive.set_schedule_state(
            state.id,
            next_due_at=None if state.gone_at else iso(feed_due_at(state, outcome.schedule, {})),
            not_before=state.not_before,
        )
    return report


def _store_failure(archive: Archive, outcome: FeedOutcome, now: datetime) -> None:
    error, state = outcome.error, outcome.state
    assert error is not None
    status = error.status if isinstance(error, HTTPStatusError) else None
    archive.record_feed_error(
        state.id,
        str(error),
        status,
        iso(now),
        blame_last(outcome.records, error),
        gone=status == 410,
    )
    retry_after = isinstance(error, HTTPStatusError) and policy.parse_retry_after(
        error.retry_after, now
    )
    archive.set_schedule_state(
        state.id, next_due_at=None, not_before=iso(retry_after) if retry_after else None
    )


def _store_success(archive: Archive, outcome: FeedOutcome, now: datetime) -> tuple[bool, SaveStats]:
    result, state = outcome.result, outcome.state
    assert result is not None
    meta = outcome.meta or {}
    floor = policy.freshness_floor(
        result.headers,
        now,
        ttl_minutes=meta.get("ttl", state.ttl),
        update_period=meta.get("update_period", state.update_period),
        update_frequency=meta.get("update_frequency", state.update_frequency),
    )
    if outcome.meta is None:
        archive.record_feed_unchanged(
            state.id,
            status=result.status,
            etag=result.etag,
            last_modified=result.last_modified,
            now=iso(now),
            records=outcome.records,
        )
        stats = SaveStats()
    else:
        assert outcome.content_hash is not None
        stats = archive.save_feed(
            state.id,
            outcome.meta,
            outcome.episodes,
            status=result.status,
            etag=result.etag,
            last_modified=result.last_modified,
            content_hash=outcome.content_hash,
            now=iso(now),
            records=outcome.records,
            complete=outcome.complete,
            mark_absent=outcome.well_formed,
            snapshot=_snapshot(result, outcome.split),
            also_listed=outcome.listed,
            channel_tags=outcome.channel_tags,
        )
        archive.set_warnings(state.id, outcome.warnings)
    archive.set_schedule_state(state.id, next_due_at=None, not_before=iso(floor) if floor else None)
    return outcome.meta is None, stats


SNAPSHOT_REGIONS = 4  # a body that prepends up to 3 items to a kept one is kept as a delta


def _snapshot(result: FetchResult, split: FeedSplit | None) -> Snapshot:
    if split is None:
        return Snapshot(result.body, result.final_url, result.content_type)
    regions = split.region_hashes(SNAPSHOT_REGIONS)  # region 0 is the whole items region
    return Snapshot(
        result.body,
        result.final_url,
        result.content_type,
        items_from=split.start,
        items_to=split.end,
        items_hash=regions[0][1],
        regions=tuple(regions),
    )


def _apply_moves(
    archive: Archive, outcome: FeedOutcome, now: datetime, settings: Settings
) -> str | None:
    """Record permanent redirects; switch the feed's URL when policy says it has moved."""
    state, result = outcome.state, outcome.result
    old = state.current_url
    if outcome.move_to:
        archive.move_feed(state.id, old, outcome.move_to, "itunes:new-feed-url", iso(now))
        return outcome.move_to
    if result is not None:
        target = _permanent_target(result)
        if target is None:
            archive.clear_redirects(state.id)
            return None
        archive.record_redirect(state.id, result.redirects[0].status, target, iso(now))
    sightings = [
        policy.RedirectSighting(target, at)
        for target, stamp in archive.redirect_sightings(state.id)
        if (at := parse_iso(stamp)) is not None
    ]
    move = policy.should_follow_move(
        sightings,
        now,
        min_polls=settings.move_after_polls,
        min_age=timedelta(days=settings.move_after_days),
        old_url_failing=outcome.error is not None,
    )
    if move is None or move == old:
        return None
    reason = "old URL failing" if outcome.error is not None else "permanent redirect"
    archive.move_feed(state.id, old, move, reason, iso(now))
    return move


def _permanent_target(result: FetchResult) -> str | None:
    """Where the leading run of 301/308 redirects from the asked URL ends, if any."""
    target = None
    for hop in result.redirects:
        if hop.status not in PERMANENT:
            break
        target = hop.location
    return target


# the run --------------------------------------------------------------------------------


def update_due(
    archive: Archive,
    schedules: Iterable[FeedSchedule],
    *,
    settings: Settings | None = None,
    transport: httpx.BaseTransport | None = None,
    clock: Clock = utcnow,
    stop: threading.Event | None = None,
    recheck_pages: bool = False,
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
    archive: Archive,
    schedules: Iterable[FeedSchedule],
    *,
    settings: Settings | None = None,
    transport: httpx.BaseTransport | None = None,
    clock: Clock = utcnow,
    stop: threading.Event | None = None,
    recheck_pages: bool = False,
) -> RunReport:
    """Update every feed in ``schedules`` now (and, where enabled, its episode pages,
    transcripts and chapters files: new ones, and archived ones whose re-check is due, or
    all archived ones with ``recheck_pages``).

    At most :func:`in_flight_limit` fetches are started and not yet stored at any moment,
    so a run's memory follows its largest feed, not its number of feeds (#15). Setting
    ``stop`` makes the run give up what is in flight and return soon; everything stored so
    far is committed (one transaction per feed or page), the rest is left for the next run.
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
        Fetcher(settings, transport=transport, blocked_hosts=blocks) as fetcher,
        CpuLane(settings.processes) as cpu,
    ):
        workers = _Workers(fetcher, threads, cpu, known)
        flow = _Flow(archive, workers, report, settings, clock, stop, recheck_pages)
        try:
            flow.run(schedules)
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


def in_flight_limit(settings: Settings) -> int:
    """Fetches a run starts before the first of them is stored: one per request slot, so
    every slot stays busy, and no more, so finished outcomes (a parsed feed is megabytes)
    never pile up waiting for the one thread that writes the archive."""
    return max(1, settings.concurrency)


@dataclass(slots=True)
class _Followers:
    """A stored feed whose pages and files are still to be listed and fetched."""

    schedule: FeedSchedule
    feed_id: int
    report: FeedReport


class _Flow:
    """A run's work, started in order and stored as it finishes, with back-pressure.

    Feeds start first, in the order given (as before: a feed is never queued behind another
    feed's pages); a stored feed's pages and files are listed only when their turn comes,
    so the queue of work not started is one small entry per feed, never one per page.
    """

    def __init__(
        self,
        archive: Archive,
        workers: _Workers,
        report: RunReport,
        settings: Settings,
        clock: Clock,
        stop: threading.Event | None,
        recheck_pages: bool,
    ) -> None:
        self.archive, self.workers, self.report = archive, workers, report
        self.settings, self.clock, self.stop = settings, clock, stop
        self.recheck_pages = recheck_pages
        self.limit = in_flight_limit(settings)
        self.pending: set[Future[Any]] = set()
        self.followers: deque[_Followers] = deque()
        self.tasks: deque[Callable[[], Future[Any]]] = deque()  # one listed feed's fetches
        self.reports: dict[int, FeedReport] = {}
        self.settled: dict[int, str] = {}  # fetch settings to keep once a feed's followers are in
        self.fetching: dict[str, str] = {}  # feed URL → label: never two GETs of one feed

    def run(self, schedules: Iterable[FeedSchedule]) -> None:
        feeds = iter(schedules)
        more_feeds = True
        while True:
            while more_feeds and len(self.pending) < self.limit and not self._stopping():
                more_feeds = self._start_feed(feeds)
            while not more_feeds and len(self.pending) < self.limit and self._start_follower():
                pass
            if not self.pending:
                return
            done, self.pending = wait(self.pending, timeout=0.1, return_when=FIRST_COMPLETED)
            if self._stopping():
                self.workers.abort()
                for future in self.pending:
                    future.cancel()
                self.pending = set()
                more_feeds = False
                self.followers.clear()
                self.tasks.clear()
            for future in done:
                self._store(future.result())

    def _stopping(self) -> bool:
        return self.stop is not None and self.stop.is_set()

    def _start_feed(self, feeds: Iterator[FeedSchedule]) -> bool:
        """Start the next feed's fetch (unless it is one already started); False: no more."""
        schedule = next(feeds, None)
        if schedule is None:
            return False
        state = self.archive.ensure_feed(schedule.url, schedule.name, iso(self.clock()))
        twin = self.fetching.setdefault(normalize_url(state.current_url), schedule.label)
        if twin != schedule.label:
            note = f"same feed as {twin} (it moved there); not fetched twice"
            self.report.feeds.append(FeedReport(schedule.url, schedule.label, warnings=(note,)))
        else:
            self.pending.add(self.workers.fetch_feed(schedule, state))
        return True

    def _start_follower(self) -> bool:
        """Start the next page or file fetch, listing the next feed's when one is needed."""
        while not self.tasks and self.followers:
            self._list_followers(self.followers.popleft())
        if not self.tasks:
            return False
        self.pending.add(self.tasks.popleft()())
        return True

    def _list_followers(self, entry: _Followers) -> None:
        starts, fingerprint = _followers(
            self.archive, entry, self.workers, self.clock, self.recheck_pages, self.settings
        )
        self.tasks.extend(starts)
        if fingerprint is not None:
            self.settled[entry.feed_id] = fingerprint
        if entry.report.pages_pending == 0:
            _log_feed(entry.report)

    def _store(self, outcome: FeedOutcome | PageOutcome | FileOutcome) -> None:
        if isinstance(outcome.error, Abandoned):
            return  # not the feed's fault: nothing is recorded, the next run redoes it
        now = self.clock()
        if isinstance(outcome, FeedOutcome):
            feed_id = outcome.state.id
            feed_report = store_feed(self.archive, outcome, now, self.settings)
            self.report.feeds.append(feed_report)
            self.reports[feed_id] = feed_report
            if feed_report.ok and not self._stopping():
                entry = _Followers(outcome.schedule, feed_id, feed_report)
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
            _count_file(feed_report, status, outcome)
        else:
            feed_id = outcome.task.feed_id
            status = store_page(self.archive, outcome, iso(now))
            feed_report = self.reports[feed_id]
            _count_page(feed_report, status, outcome)
        if feed_report.pages_pending == 0:
            _log_feed(feed_report)
            if (fingerprint := self.settled.pop(feed_id, None)) is not None:
                self.archive.set_fetch_settings(feed_id, fingerprint)  # all its followers are in


def fetch_settings(schedule: FeedSchedule, settings: Settings) -> str:
    """The settings a feed's pages and files are fetched with, as JSON (kept per feed).

    Effective values: ``allow_private_hosts`` from the schedule or the run
    (``--allow-private-hosts``), a user agent given by the schedule or the environment.
    """
    agent = schedule.user_agent or (
        settings.user_agent if settings.user_agent != USER_AGENT else None
    )
    values = {
        "allow_private_hosts": schedule.allow_private_hosts or settings.allow_private_hosts,
        "user_agent": agent,
        "pages": schedule.pages,
        "transcripts": schedule.transcripts,
        "chapters": schedule.chapters,
    }
    return json.dumps(values, sort_keys=True, ensure_ascii=False)


def _changed_settings(before: str, now: str) -> list[str]:
    try:
        old = json.loads(before)
    except ValueError:
        old = {}
    new = json.loads(now)
    return sorted(k for k in new if not isinstance(old, dict) or old.get(k) != new[k])


def _has_followers(schedule: FeedSchedule) -> bool:
    return schedule.pages or schedule.transcripts or schedule.chapters


def _followers(
    archive: Archive,
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
    before = archive.fetch_settings(feed_id)
    retry = before is not None and before != fingerprint  # unknown before: nothing to redo
    if retry:
        changed = ", ".join(_changed_settings(before or "", fingerprint))
        log.info("%s: %s changed: retrying what failed now", report.label, changed)
    starts: list[Callable[[], Future[Any]]] = []
    if schedule.pages:
        pages = pages_due(archive, feed_id, now, recheck_pages, failed_now=retry)
        starts.extend(partial(workers.fetch_page, t, schedule) for t in pages)
    kinds: list[FileKind] = []
    if schedule.transcripts:
        kinds.append("transcript")
    if schedule.chapters:
        kinds.append("chapters")
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


def _count_page(report: FeedReport, status: PageResult, outcome: PageOutcome) -> None:
    report.pages_pending -= 1
    if count_page(report, status):
        log.info("%s: page %s: %s", report.label, outcome.task.url, outcome.error)
    if status == "failed":
        report.problems.append(("page", str(outcome.error)))


def _count_file(report: FeedReport, status: PageResult, outcome: FileOutcome) -> None:
    report.pages_pending -= 1
    if status == "failed":
        report.files_failed += 1
        report.problems.append((outcome.task.kind, str(outcome.error)))
        log.info("%s: %s %s: %s", report.label, outcome.task.kind, outcome.task.url, outcome.error)
    else:
        report.files_ok += 1


def _log_feed(report: FeedReport) -> None:
    if report.error:
        log.info("%s: failed: %s", report.label, report.error)
    elif report.not_modified:
        log.info("%s: unchanged", report.label)
    else:
        s = report.stats
        log.info(
            "%s: %d new, %d changed, %d unchanged episodes; pages: %d ok, %d empty, %d failed",
            *(report.label, s.new, s.changed, s.unchanged),
            *(report.pages_ok, report.pages_empty, report.pages_failed),
        )
        if report.files_ok or report.files_failed:
            log.info(
                "%s: transcripts and chapters: %d read, %d failed",
                *(report.label, report.files_ok, report.files_failed),
            )
    if report.moved_to:
        log.warning("%s: moved to %s (update its schedule file)", report.label, report.moved_to)
    for warning in report.warnings:
        log.info("%s: warning: %s", report.label, warning)
