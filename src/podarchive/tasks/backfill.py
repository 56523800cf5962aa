"""Backfill: a podcast's whole back catalogue, resumable and exactly-once.

For each feed, in named phases:

1. **feed** (here) — the subscription document is updated as in a run
   (:func:`one_feed.fetch_feed`, :func:`one_feed.store_feed`); its last stored body gives
   the links to walk.
2. **archive** (:mod:`.backfill_walk`) — paged feeds (``rel="next"``) and RFC 5005
   archives (``prev-archive``) walked, each document stored once; an interrupted walk
   continues where it stopped.
3. **site** (``site=True``, :mod:`.backfill_site`) — episodes found on the podcast's web
   site (its sitemap, else its episode listing).
4. **pages** and 5. **files** (:mod:`.backfill_phases`) — every episode page, transcript
   and chapters file not yet archived, and those that failed.
6. **media** (``media = true``, :mod:`.backfill_media`) — the episodes' audio and video not
   yet stored, newest first, within the media budget.

One :class:`Fetcher` serves the whole backfill, so the per-host limits, gap, retries,
Retry-After and address guard of runs apply. Setting ``stop`` ends the backfill gracefully:
nothing new is started, requests in flight finish and are stored (for at most ``grace``
seconds, or until ``abandon`` is set, then they are abandoned: counted as left, not as
done, by the report and the progress alike). ``dry_run`` fetches only the feed documents
(feed, archive and paged documents, site listings), writes nothing, and lists the pages and
files the real backfill would fetch: those the archive has due, and those of the episodes
it would store (the feed's own new ones included).

What it is told and what it reports (:class:`BackfillOptions`, :class:`BackfillReport`) live
in :mod:`.backfill_model`; the summary a person reads, in :mod:`.backfill_summary`.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable
from contextlib import AbstractContextManager, nullcontext
from datetime import datetime

import httpx

from podarchive.core.clock import Clock, iso, parse_iso, utcnow
from podarchive.core.errors import Abandoned, PodarchiveError, StorageError
from podarchive.core.settings import Settings
from podarchive.core.types import EpisodeWrite, FeedState, FetchRecord, FetchResult, ParsedFeed
from podarchive.net.fetch import Fetcher
from podarchive.net.fetch_for import get_for
from podarchive.read.parse import parse_feed
from podarchive.read.rows import episode_writes
from podarchive.read.schedule_files import FeedSchedule
from podarchive.store import ArchiveLike
from podarchive.tasks.backfill_media import media_phase
from podarchive.tasks.backfill_model import (
    MAX_DOCUMENTS,
    BackfillOptions,
    BackfillReport,
    Context,
    FeedBackfill,
    NoProgress,
    Progress,
    Walk,
)
from podarchive.tasks.backfill_phases import files_phase, pages_phase
from podarchive.tasks.backfill_site import site_phase
from podarchive.tasks.backfill_walk import walk_documents
from podarchive.update.big_ingest import big_ingest
from podarchive.update.one_feed import fetch_feed, store_feed


def backfill(
    archive: ArchiveLike | None,
    schedules: Iterable[FeedSchedule],
    *,
    options: BackfillOptions | None = None,
    settings: Settings | None = None,
    transport: httpx.BaseTransport | None = None,
    clock: Clock = utcnow,
    stop: threading.Event | None = None,
    progress: Progress | None = None,
    abandon: threading.Event | None = None,
) -> BackfillReport:
    """Backfill each feed of ``schedules`` in turn. Never raises for a feed's failure.

    After ``stop``, setting ``abandon`` (a second Ctrl-C) gives up the pages and files in
    flight at once instead of after ``options.grace``; the report still counts what was
    stored.

    ``archive`` may be read-only (:meth:`Archive.open_read_only`) or None with
    ``options.dry_run``.
    """
    options = options or BackfillOptions()
    settings = settings or Settings()
    if archive is None and not options.dry_run:
        raise ValueError("backfill needs an archive unless it is a dry run")
    report = BackfillReport(dry_run=options.dry_run)
    stop = stop or threading.Event()
    limit = options.limit if options.limit is not None else -1
    blocks = _host_blocks(archive, clock)
    with Fetcher(settings, transport=transport, blocked_hosts=blocks) as fetcher:
        ctx = Context(
            archive, fetcher, options, settings, clock, stop, progress or NoProgress(), [limit],
            abandon or threading.Event(),
        )  # fmt: skip
        listed = list(schedules)
        with _big(ctx, [s.url for s in listed]):  # #30: a big backfill defers link indexes
            for schedule in listed:
                if stop.is_set():
                    break
                report.feeds.append(_backfill_feed(ctx, schedule))
        if ctx.writing and archive is not None:
            archive.save_host_blocks(
                {host: iso(until) for host, until in fetcher.blocked_hosts.items()}, ctx.now()
            )
    report.stopped = stop.is_set()
    return report


def _big(ctx: Context, urls: list[str]) -> AbstractContextManager[bool]:
    """:func:`big_ingest` when the backfill writes (a dry run's archive is read-only)."""
    if ctx.writing and ctx.archive is not None:
        return big_ingest(ctx.archive, urls)
    return nullcontext(False)


def _host_blocks(archive: ArchiveLike | None, clock: Clock) -> dict[str, datetime]:
    """The hosts the archive says are blocked (a Retry-After), and until when."""
    if archive is None:
        return {}
    return {
        host: until
        for host, stamp in archive.host_blocks(iso(clock())).items()
        if (until := parse_iso(stamp)) is not None
    }


def _backfill_feed(ctx: Context, schedule: FeedSchedule) -> FeedBackfill:
    report = FeedBackfill(schedule.url, schedule.label)
    try:
        _feed_phases(ctx, schedule, report)
    except Abandoned:
        pass  # a stop: nothing half-done was stored
    except StorageError:
        raise  # the archive itself (damaged, full): not one feed's failure
    except PodarchiveError as e:
        report.error = str(e)
    return report


def _feed_phases(ctx: Context, schedule: FeedSchedule, report: FeedBackfill) -> None:
    """The phases of one feed in turn, until a stop; the walk is finished when complete."""
    state, body = _feed_phase(ctx, schedule, report)
    if body is None or ctx.stop.is_set():
        return
    walk_id = _walk_id(ctx, state)
    parsed = parse_feed(body.body, body.headers, url=body.final_url)
    writes, _ = episode_writes(parsed, body.final_url)
    report.feed_episodes = len(writes)
    walk = Walk(schedule, state, walk_id, report, seen={w.key for w in writes})
    if not ctx.writing:  # the real run stores the feed's episodes first: plan them too
        walk.planned.extend(_unknown(ctx, state, writes))
    complete = _documents_phases(ctx, walk, parsed)
    if not ctx.stop.is_set():
        pages_phase(ctx, walk)
    if not ctx.stop.is_set():
        files_phase(ctx, walk)
    if not ctx.stop.is_set():
        media_phase(ctx, walk)
    if complete and walk_id is not None and ctx.writing and not ctx.stop.is_set():
        assert ctx.archive is not None
        ctx.archive.finish_walk(walk_id, ctx.now())


def _walk_id(ctx: Context, state: FeedState) -> int | None:
    """The feed's open walk (one is started when writing); None in a dry run without one."""
    if ctx.archive is None:
        return None
    if ctx.writing:
        return ctx.archive.open_walk(state.id) or ctx.archive.start_walk(state.id, ctx.now())
    return ctx.archive.open_walk(state.id)


def _unknown(ctx: Context, state: FeedState, writes: list[EpisodeWrite]) -> list[EpisodeWrite]:
    """The feed's episodes the archive does not have yet (all of them without an archive)."""
    archive = ctx.archive
    known = archive.episode_keys(state.id) if archive is not None and state.id else set()
    return [w for w in writes if w.key not in known]


def _documents_phases(ctx: Context, walk: Walk, parsed: ParsedFeed) -> bool:
    """The archive phase (unless pages only) and the site phase (with ``site``): True when
    both reached their ends."""
    complete = True
    if not ctx.options.pages_only:
        complete = walk_documents(ctx, walk, parsed.channel.links)
    if ctx.options.site and not ctx.stop.is_set():
        site = parsed.channel.link
        if site:
            complete &= site_phase(ctx, walk, site)
        else:
            walk.report.failures.append((walk.schedule.url, "--site: the feed names no web site"))
    return complete


# feed -----------------------------------------------------------------------------------


def _feed_phase(
    ctx: Context, schedule: FeedSchedule, report: FeedBackfill
) -> tuple[FeedState, FetchResult | None]:
    """Update the subscription document as a run does; return its last known body."""
    archive = ctx.archive
    ctx.progress.start(report.label, "feed", 1)
    try:
        if ctx.writing and archive is not None:
            state = archive.ensure_feed(schedule.url, schedule.name, ctx.now())
            outcome = fetch_feed(ctx.fetcher, schedule, state)
            report.requests += len(outcome.records)
            if isinstance(outcome.error, Abandoned):
                raise outcome.error
            feed_report = store_feed(archive, outcome, ctx.clock(), ctx.settings)
            if feed_report.error:
                report.failures.append((schedule.url, feed_report.error))
            stored = archive.latest_feed_body(state.id)
            if stored is not None:
                body, url, content_type = stored
                headers = {"content-type": content_type} if content_type else {}
                return state, FetchResult(
                    url=url, final_url=url, status=200, headers=headers, body=body
                )
            if feed_report.error:
                report.error = feed_report.error
                return state, None
        else:
            known = archive.feed_state(schedule.url) if archive is not None else None
            state = known or FeedState(0, schedule.url, None, None, None, 0)
        records: list[FetchRecord] = []
        try:  # a dry run, or an archive without a snapshot of this feed: fetch it plainly
            url, trusted = state.current_url, state.fetch_trusted  # trusted unless moved by content
            result = get_for(ctx.fetcher, schedule, url, records, kind="feed", trusted=trusted)
        finally:
            report.requests += len(records)
        return state, result
    finally:
        ctx.progress.advance()
        ctx.progress.done()


__all__ = [
    "MAX_DOCUMENTS",
    "BackfillOptions",
    "BackfillReport",
    "FeedBackfill",
    "NoProgress",
    "Progress",
    "backfill",
]
