"""One feed's update: fetch → parse → extract → store, as named phases.

A worker thread runs :func:`fetch_feed` (the network, then the pure CPU work handed to the
run's :class:`~podarchive.runtime.cpu.CpuLane`) and returns a plain :class:`FeedOutcome`; only the
calling thread runs :func:`store_feed`, which writes it in one transaction. When to poll,
how long to back off and whether a feed has moved are :mod:`podarchive.rules.policy`'s
decisions. A failure becomes a row in the fetch log, the feed's error state and its
:class:`FeedReport`, never an exception. Many feeds at once, with their pages and files:
:mod:`podarchive.update.run`.
"""

from __future__ import annotations

import dataclasses
import hashlib
import logging
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from podarchive import __version__
from podarchive.core.clock import iso, parse_iso
from podarchive.core.errors import (
    HTTPStatusError,
    PodarchiveError,
    safe_url,
)
from podarchive.core.settings import Settings
from podarchive.core.types import (
    MOVED_BY_CONTENT,
    EpisodeWrites,
    FeedState,
    FetchRecord,
    FetchResult,
    Row,
    SaveStats,
    Snapshot,
    Tag,
)
from podarchive.core.urls import normalize_url
from podarchive.net.fetch import Fetcher
from podarchive.net.fetch_for import blame_last, get_for
from podarchive.read.schedule_files import FeedSchedule
from podarchive.rules import policy
from podarchive.runtime.cpu import CpuLane
from podarchive.store import ArchiveLike, FeedSave, UnchangedPoll

if TYPE_CHECKING:
    from podarchive.read.item_split import FeedSplit
    from podarchive.read.jobs import FeedRead

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
    kept_fewer: str | None = None  # fewer episodes kept than feedparser read items (#23)


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
    kept_fewer: str | None = None  # the body lost episodes: one line from run (#23)
    #: (next_due_at, gone) as stored: what a cluster worker publishes, without a read (#30)
    due: tuple[str | None, bool] | None = None
    #: what failed this run among its pages and files: (kind, error), kind "page",
    #: "transcript" or "chapters" (:func:`podarchive.tasks.status.problem_line` sums them up)
    problems: list[tuple[str, str]] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.error is None


# due-ness -------------------------------------------------------------------------------


def feed_due_at(state: FeedState, schedule: FeedSchedule, host_blocks: dict[str, str]) -> datetime:
    """When this feed should next be polled (policy, from what the archive remembers)."""
    host = (urlsplit(state.current_url).hostname or "") if host_blocks else ""
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
    archive: ArchiveLike, schedules: Iterable[FeedSchedule], now: datetime
) -> tuple[list[FeedSchedule], int]:
    """The scheduled feeds due at ``now`` (gone feeds never are), and how many are not."""
    blocks = archive.host_blocks(iso(now))
    states = archive.feed_states()  # one statement, however many feeds (#30)
    due, waiting = [], 0
    for schedule in schedules:
        state = states.get(schedule.url)
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
            trusted=state.fetch_trusted,
        )
        if result.not_modified:
            return FeedOutcome(schedule, state, records, result)
        digest = hashlib.sha256(result.body).hexdigest()
        if digest == state.content_hash:
            return FeedOutcome(schedule, state, records, result, content_hash=digest)
        from podarchive.read.item_split import split_items  # the parsers load on the first change
        from podarchive.read.rows import channel_row

        body_read = len(records) - 1  # the request whose body is read
        split = split_items(result.body, _item_context(result))
        items = known(state.id) if split and known else None
        read, writes, listed = _read_body(cpu or CpuLane(1), result, split, items)
        lost = (read.kept_fewer,) if read.kept_fewer else ()
        if read.kept_fewer:  # a warning, kept on the fetch log's row of that request too
            records[body_read] = dataclasses.replace(records[body_read], warning=read.kept_fewer)
        move_to, move_note = _check_new_feed_url(fetcher, schedule, state, read, records)
        return FeedOutcome(
            schedule,
            state,
            records,
            result,
            content_hash=digest,
            meta=channel_row(read.channel),
            episodes=writes,
            warnings=(*read.warnings, *read.duplicates, *move_note, *lost),
            move_to=move_to,
            complete=read.channel.complete,
            well_formed=not read.recovered,
            split=split,
            listed=listed,
            channel_tags=read.channel.tags,
            kept_fewer=read.kept_fewer,
        )
    except PodarchiveError as e:
        return FeedOutcome(schedule, state, records, error=e)
    except Exception as e:  # a bug must not cost the other feeds their run
        log.exception("unexpected error updating %s", safe_url(state.url))
        return FeedOutcome(
            schedule, state, records, error=PodarchiveError(f"internal error: {e!r}")
        )


#: Bumped whenever parsing or row derivation reads an unchanged item differently, so that the
#: item cache of every archive forgets what the older code made of each item.
#: 2: bad bytes, character references and dates cost only themselves (#17).
#: 3: Podlove Simple Chapters (``simple_chapters``) are read from items (#12).
#: 4: every extension element is kept (``tags``, #13).
#: 5: an item's transcripts and chapters files are cut at podcast_ns.MAX_FILES each (#23).
READ_REVISION = 5


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
    from podarchive.read.jobs import read_feed, read_items

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
    proposed = read.channel.new_feed_url
    if not proposed or normalize_url(proposed) == normalize_url(state.current_url):
        return None, ()
    from podarchive.read.parse import parse_feed  # feedparser, only for a proposal (#30)
    from podarchive.read.rows import podcast_identity

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
    archive: ArchiveLike, outcome: FeedOutcome, now: datetime, settings: Settings
) -> FeedReport:
    """Store one feed's outcome, its error or freshness state and any move, atomically."""
    report = FeedReport(
        outcome.state.url,
        outcome.schedule.label,
        warnings=outcome.warnings,
        source=outcome.schedule.source,
        kept_fewer=outcome.kept_fewer,
    )
    unchanged = _unchanged_poll(outcome, now)
    if unchanged is not None:
        report.not_modified = True
        archive.store_unchanged(unchanged)
        report.due = (unchanged.next_due_at, False)
        return report
    with archive.transaction():
        if outcome.error is not None:
            report.error = str(outcome.error)
            _store_failure(archive, outcome, now)
        else:
            report.not_modified, report.stats = _store_success(archive, outcome, now)
            _store_captures(archive, outcome)
        report.moved_to = _apply_moves(archive, outcome, now, settings)
        state = archive.feed_state(outcome.state.url)
        assert state is not None
        due = None if state.gone_at else iso(feed_due_at(state, outcome.schedule, {}))
        archive.set_schedule_state(state.id, next_due_at=due, not_before=state.not_before)
    report.due = (due, state.gone_at is not None)
    return report


def _unchanged_poll(outcome: FeedOutcome, now: datetime) -> UnchangedPoll | None:
    """An unchanged poll's writes, all decided here (#30): a 304 or the body kept last,
    reached without a permanent redirect (whose sightings count towards a move). What the
    general path reads back after its writes is known: the poll succeeded, now."""
    state, result = outcome.state, outcome.result
    if outcome.error is not None or outcome.meta is not None or result is None:
        return None
    if outcome.move_to or _permanent_target(result) is not None:
        return None
    floor = policy.freshness_floor(
        result.headers,
        now,
        ttl_minutes=state.ttl,
        update_period=state.update_period,
        update_frequency=state.update_frequency,
    )
    # as feed_due_at would read the stored state back: to the second, no errors, not gone
    due = policy.next_due(
        every=outcome.schedule.every,
        cron=outcome.schedule.cron,
        last_attempt=_to_the_second(now),
        error_count=0,
        floor=_to_the_second(floor) if floor else None,
        not_before=None,
        key=state.url,
    )
    body = outcome.content_hash is not None
    return UnchangedPoll(
        state.id,
        status=result.status,
        etag=result.etag,
        last_modified=result.last_modified,
        now=iso(now),
        records=outcome.records,
        next_due_at=iso(due),
        not_before=iso(floor) if floor else None,
        exchanges=result.exchanges,
        body_sha256=outcome.content_hash,
        body_size=len(result.body) if body else None,
        clear_redirects=state.redirects,
    )


def _to_the_second(moment: datetime) -> datetime:
    """``moment`` as :func:`iso` writes it and :func:`parse_iso` reads it back."""
    return moment.astimezone(UTC).replace(microsecond=0)


def _store_failure(archive: ArchiveLike, outcome: FeedOutcome, now: datetime) -> None:
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


def _store_success(
    archive: ArchiveLike, outcome: FeedOutcome, now: datetime
) -> tuple[bool, SaveStats]:
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
            FeedSave(
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
        )
        archive.set_warnings(state.id, outcome.warnings)
    archive.set_schedule_state(state.id, next_due_at=None, not_before=iso(floor) if floor else None)
    return outcome.meta is None, stats


def _store_captures(archive: ArchiveLike, outcome: FeedOutcome) -> None:
    """The poll's exchanges (#27): its redirect hops, then the answer, whose body (when one
    came: not a 304) is the snapshot with its SHA-256, new or kept before."""
    result = outcome.result
    assert result is not None
    body = outcome.content_hash is not None
    archive.record_captures(
        result.exchanges,
        kind="feed",
        feed_id=outcome.state.id,
        body_sha256=outcome.content_hash,
        body_size=len(result.body) if body else None,
    )


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
    archive: ArchiveLike, outcome: FeedOutcome, now: datetime, settings: Settings
) -> str | None:
    """Record permanent redirects; switch the feed's URL when policy says it has moved."""
    state, result = outcome.state, outcome.result
    old = state.current_url
    if outcome.move_to:
        archive.move_feed(state.id, old, outcome.move_to, MOVED_BY_CONTENT, iso(now))
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
