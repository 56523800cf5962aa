"""Update feeds: fetch → parse → extract → store, as named phases.

Worker threads do the network and the pure CPU work (:func:`fetch_feed`,
:func:`fetch_page`) and return plain outcomes; only the calling thread touches the
archive (:func:`store_feed`, :func:`store_page`). One bad feed or page never stops a
run: every failure becomes a row in the fetch log, the feed's error state, and one
line in the :class:`RunReport`.
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from typing import Any

import httpx

from podarchive.config import FeedSchedule
from podarchive.errors import ExtractError, HTTPStatusError, PodarchiveError
from podarchive.extract import extract_links, extract_page, html_to_text
from podarchive.fetch import Fetcher, FetchRecord
from podarchive.identity import dedupe
from podarchive.parse import parse_feed
from podarchive.settings import Settings
from podarchive.store import Archive, EpisodeWrite, FeedState, PageTask, Row, SaveStats
from podarchive.types import Channel, Episode, FetchResult, PageNotes, ParsedFeed
from podarchive.urls import is_http_url

log = logging.getLogger("podarchive")
Clock = Callable[[], datetime]


def utcnow() -> datetime:
    return datetime.now(UTC)


def iso(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


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
    episodes: tuple[EpisodeWrite, ...] = ()
    warnings: tuple[str, ...] = ()
    error: PodarchiveError | None = None

    @property
    def unchanged(self) -> bool:
        return self.error is None and self.meta is None


@dataclass(frozen=True, slots=True)
class PageOutcome:
    task: PageTask
    records: list[FetchRecord]
    result: FetchResult | None = None
    notes: PageNotes | None = None
    error: PodarchiveError | None = None


@dataclass(slots=True)
class FeedReport:
    """How one feed's update went, for the CLI and the logs."""

    url: str
    label: str
    error: str | None = None
    not_modified: bool = False
    stats: SaveStats = field(default_factory=SaveStats)
    warnings: tuple[str, ...] = ()
    pages_ok: int = 0
    pages_empty: int = 0
    pages_failed: int = 0
    pages_pending: int = 0

    @property
    def ok(self) -> bool:
        return self.error is None


@dataclass(slots=True)
class RunReport:
    feeds: list[FeedReport] = field(default_factory=list)

    @property
    def failed(self) -> list[FeedReport]:
        return [f for f in self.feeds if not f.ok]


# pure phases ----------------------------------------------------------------------------


def channel_row(channel: Channel) -> Row:
    return {
        "title": channel.title,
        "link": channel.link,
        "description": channel.description,
        "author": channel.author,
        "owner_name": channel.owner_name,
        "owner_email": channel.owner_email,
        "image": channel.image,
        "language": channel.language,
        "categories": _json_list(channel.categories),
        "explicit": _bool_int(channel.explicit),
        "type": channel.type,
        "podcast_guid": channel.podcast_guid,
        "locked": _bool_int(channel.locked),
        "funding": _json_list([asdict(f) for f in channel.funding]),
        "new_feed_url": channel.new_feed_url,
        "updated": channel.updated,
    }


def episode_row(episode: Episode) -> Row:
    enclosure = episode.enclosure
    notes = episode.notes_html
    return {
        "guid": episode.guid,
        "title": episode.title,
        "published": episode.published,
        "updated": episode.updated,
        "duration": episode.duration,
        "season": episode.season,
        "number": episode.number,
        "episode_type": episode.episode_type,
        "explicit": _bool_int(episode.explicit),
        "link": episode.link,
        "summary": episode.summary,
        "notes_html": notes,
        "notes_text": html_to_text(notes) if notes else None,
        "image": episode.image,
        "enclosure_url": enclosure.url if enclosure else None,
        "enclosure_type": enclosure.type if enclosure else None,
        "enclosure_length": enclosure.length if enclosure else None,
        "transcripts": _json_list([asdict(t) for t in episode.transcripts]),
        "chapters": _json_list([asdict(c) for c in episode.chapters]),
        "persons": _json_list([asdict(p) for p in episode.persons]),
        "page_url": episode.link if episode.link and is_http_url(episode.link) else None,
    }


def episode_writes(parsed: ParsedFeed, base_url: str) -> tuple[list[EpisodeWrite], list[str]]:
    """Rows and feed-note links for each distinct episode of a parsed feed."""
    kept, warnings = dedupe(parsed.episodes)
    writes = []
    for key, episode in kept:
        links = (
            extract_links(episode.notes_html, episode.link or base_url)
            if episode.notes_html
            else ()
        )
        writes.append(EpisodeWrite(key=key, row=episode_row(episode), links=links))
    return writes, warnings


def _json_list(values: Sequence[Any]) -> str | None:
    return json.dumps(list(values), ensure_ascii=False) if values else None


def _bool_int(value: bool | None) -> int | None:
    return None if value is None else int(value)


# worker phases (no archive access) ------------------------------------------------------


def fetch_feed(fetcher: Fetcher, schedule: FeedSchedule, state: FeedState) -> FeedOutcome:
    """Fetch and parse one feed. Never raises: failures come back in ``error``."""
    records: list[FetchRecord] = []
    try:
        result = fetcher.get(
            state.url,
            kind="feed",
            etag=state.etag,
            last_modified=state.last_modified,
            user_agent=schedule.user_agent,
            log=records,
        )
        if result.not_modified:
            return FeedOutcome(schedule, state, records, result)
        digest = hashlib.sha256(result.body).hexdigest()
        if digest == state.content_hash:
            return FeedOutcome(schedule, state, records, result, content_hash=digest)
        parsed = parse_feed(result.body, result.headers, url=result.final_url)
        writes, duplicates = episode_writes(parsed, result.final_url)
        return FeedOutcome(
            schedule,
            state,
            records,
            result,
            content_hash=digest,
            meta=channel_row(parsed.channel),
            episodes=tuple(writes),
            warnings=(*parsed.warnings, *duplicates),
        )
    except PodarchiveError as e:
        return FeedOutcome(schedule, state, records, error=e)
    except Exception as e:  # a bug must not cost the other feeds their run
        log.exception("unexpected error updating %s", state.url)
        return FeedOutcome(
            schedule, state, records, error=PodarchiveError(f"internal error: {e!r}")
        )


def fetch_page(fetcher: Fetcher, task: PageTask, schedule: FeedSchedule) -> PageOutcome:
    """Fetch and extract one episode page. Never raises."""
    records: list[FetchRecord] = []
    try:
        result = fetcher.get(
            task.url,
            kind="page",
            etag=task.etag,
            last_modified=task.last_modified,
            trusted=False,
            user_agent=schedule.user_agent,
            allow_private_hosts=schedule.allow_private_hosts,
            log=records,
        )
        if result.not_modified:
            return PageOutcome(task, records, result)
        notes = extract_page(result.body, result.final_url, content_type=result.content_type)
        return PageOutcome(task, records, result, notes=notes)
    except PodarchiveError as e:
        return PageOutcome(task, records, error=e)
    except Exception as e:
        log.exception("unexpected error reading page %s", task.url)
        return PageOutcome(task, records, error=PodarchiveError(f"internal error: {e!r}"))


# archive phases (calling thread only) ---------------------------------------------------


def store_feed(archive: Archive, outcome: FeedOutcome, now: str) -> FeedReport:
    report = FeedReport(outcome.state.url, outcome.schedule.label, warnings=outcome.warnings)
    result, state = outcome.result, outcome.state
    if outcome.error is not None:
        status = outcome.error.status if isinstance(outcome.error, HTTPStatusError) else None
        archive.record_feed_error(state.id, str(outcome.error), status, now, outcome.records)
        report.error = str(outcome.error)
        return report
    assert result is not None
    if outcome.meta is None:
        report.not_modified = True
        archive.record_feed_unchanged(
            state.id,
            status=result.status,
            etag=result.etag,
            last_modified=result.last_modified,
            now=now,
            records=outcome.records,
        )
        return report
    assert outcome.content_hash is not None
    report.stats = archive.save_feed(
        state.id,
        outcome.meta,
        outcome.episodes,
        status=result.status,
        etag=result.etag,
        last_modified=result.last_modified,
        content_hash=outcome.content_hash,
        now=now,
        records=outcome.records,
    )
    return report


def store_page(archive: Archive, outcome: PageOutcome, now: str) -> str:
    """Store a page outcome; returns its status (ok, not_modified, empty, failed)."""
    task, result = outcome.task, outcome.result
    if outcome.error is not None:
        status = "empty" if isinstance(outcome.error, ExtractError) else "failed"
        archive.record_page(
            task, status=status, error=str(outcome.error), now=now, records=outcome.records
        )
        return status
    assert result is not None
    if outcome.notes is None:
        archive.record_page(task, status="not_modified", now=now, records=outcome.records)
        return "not_modified"
    notes = outcome.notes
    archive.record_page(
        task,
        status="ok",
        now=now,
        records=outcome.records,
        extractor=notes.extractor,
        notes_html=notes.html,
        notes_text=notes.text,
        links=notes.links,
        etag=result.etag,
        last_modified=result.last_modified,
    )
    return "ok"


# the run --------------------------------------------------------------------------------


def update_feeds(
    archive: Archive,
    schedules: Iterable[FeedSchedule],
    *,
    settings: Settings | None = None,
    transport: httpx.BaseTransport | None = None,
    clock: Clock = utcnow,
) -> RunReport:
    """Update every feed in ``schedules`` (and, where enabled, its episode pages)."""
    settings = settings or Settings()
    schedules = list(schedules)
    report = RunReport()
    reports: dict[int, FeedReport] = {}
    with (
        Fetcher(settings, transport=transport) as fetcher,
        ThreadPoolExecutor(
            max_workers=max(1, settings.concurrency), thread_name_prefix="podarchive"
        ) as pool,
    ):
        pending: set[Future[Any]] = set()
        for schedule in schedules:
            state = archive.ensure_feed(schedule.url, schedule.name, iso(clock()))
            pending.add(pool.submit(fetch_feed, fetcher, schedule, state))
        by_feed = {s.url: s for s in schedules}
        while pending:
            done, pending = wait(pending, return_when=FIRST_COMPLETED)
            for future in done:
                outcome = future.result()
                if isinstance(outcome, FeedOutcome):
                    feed_report = store_feed(archive, outcome, iso(clock()))
                    report.feeds.append(feed_report)
                    reports[outcome.state.id] = feed_report
                    schedule = by_feed[outcome.state.url]
                    tasks = archive.pages_to_fetch(outcome.state.id) if feed_report.ok else []
                    if not schedule.pages:
                        tasks = []
                    feed_report.pages_pending = len(tasks)
                    pending.update(pool.submit(fetch_page, fetcher, t, schedule) for t in tasks)
                else:
                    status = store_page(archive, outcome, iso(clock()))
                    feed_report = reports[outcome.task.feed_id]
                    _count_page(feed_report, status, outcome)
                if feed_report.pages_pending == 0:
                    _log_feed(feed_report)
    return report


def _count_page(report: FeedReport, status: str, outcome: PageOutcome) -> None:
    report.pages_pending -= 1
    if status in ("ok", "not_modified"):
        report.pages_ok += 1
    elif status == "empty":
        report.pages_empty += 1
        log.info("%s: page %s: %s", report.label, outcome.task.url, outcome.error)
    else:
        report.pages_failed += 1
        log.info("%s: page %s: %s", report.label, outcome.task.url, outcome.error)


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
    for warning in report.warnings:
        log.info("%s: warning: %s", report.label, warning)
