"""Episode pages: fetched and read by worker threads, stored by the run's thread.

A page is fetched when it is new, when it failed or had no notes (with a back-off), and once
archived, when its re-check is due (:mod:`podarchive.rules.recheck`: by the episode's age, or the
schedule's ``page_every``; every archived page with ``run --recheck-pages``). Its raw body is
kept whenever one came, unless it reads into the notes and links already current (issue #23);
a re-check that answers 304, or serves the body kept last, writes nothing but bookkeeping and
the fetch log.
"""

from __future__ import annotations

import logging
from datetime import datetime
from typing import Protocol

from podarchive.core.clock import iso, parse_iso
from podarchive.core.errors import ExtractError, PodarchiveError, safe_url
from podarchive.core.records import record
from podarchive.core.types import (
    FetchRecord,
    FetchResult,
    KeptBody,
    PageHow,
    PageNotes,
    PageResult,
    PageTask,
)
from podarchive.net.fetch import Fetcher
from podarchive.net.fetch_for import blame_last, get_again
from podarchive.read.schedule_files import FeedSchedule
from podarchive.rules import policy, recheck
from podarchive.runtime.cpu import CpuLane
from podarchive.store import ArchiveLike

log = logging.getLogger("podarchive")


@record
class PageOutcome:
    """What fetching and reading one episode page gave."""

    task: PageTask
    records: list[FetchRecord]
    result: FetchResult | None = None
    notes: PageNotes | None = None
    error: PodarchiveError | None = None
    body: KeptBody | None = None  # the raw page, kept even when it has no notes
    schedule: FeedSchedule | None = None  # its page_every sets the next re-check


def fetch_page(
    fetcher: Fetcher, task: PageTask, schedule: FeedSchedule, cpu: CpuLane | None = None
) -> PageOutcome:
    """Fetch and extract one episode page. Never raises. ``cpu``: where extraction runs."""
    records: list[FetchRecord] = []
    try:
        result = get_again(fetcher, schedule, task, records, kind="page")
        if result.not_modified:
            return PageOutcome(task, records, result, schedule=schedule)
        from podarchive.read.jobs import read_page  # the extractor loads on the first page read

        body = KeptBody.of(result.body, result.final_url, result.content_type)
        try:
            notes = (cpu or CpuLane(1)).run(
                read_page,
                body.body,
                body.url,
                body.content_type,
                task.feed_notes,
                weight=len(body.body),
            )
        except ExtractError as e:  # no notes: the page is still worth keeping
            return PageOutcome(task, records, result, error=e, body=body, schedule=schedule)
        return PageOutcome(task, records, result, notes=notes, body=body, schedule=schedule)
    except PodarchiveError as e:
        return PageOutcome(task, records, error=e, schedule=schedule)
    except Exception as e:
        log.exception("unexpected error reading page %s", safe_url(task.url))
        error = PodarchiveError(f"internal error: {e!r}")
        return PageOutcome(task, records, error=error, schedule=schedule)


def store_page(archive: ArchiveLike, outcome: PageOutcome, now: str) -> PageResult:
    """Store a page outcome; returns its status (ok, not_modified, empty, failed).

    A page read with notes (or re-checked) gets its next re-check from
    :func:`podarchive.rules.recheck.next_check`; its raw body is kept whenever one came, unless its
    notes and links are the current ones (:meth:`Archive.record_page`). Its exchanges are
    captures (#27), in the same transaction.
    """
    with archive.transaction():
        status = _store_page(archive, outcome, now)
        if outcome.result is not None:
            body = outcome.body
            archive.record_captures(
                outcome.result.exchanges,
                kind="page",
                feed_id=outcome.task.feed_id,
                episode_id=outcome.task.episode_id,
                body_sha256=body.hash if body else None,
                body_size=len(body.body) if body else None,
            )
    return status


def _store_page(archive: ArchiveLike, outcome: PageOutcome, now: str) -> PageResult:
    task, result = outcome.task, outcome.result
    if outcome.error is not None:
        status: PageResult = "empty" if isinstance(outcome.error, ExtractError) else "failed"
        archive.record_page(
            task,
            status=status,
            error=str(outcome.error),
            now=now,
            records=blame_last(outcome.records, outcome.error),
            body=outcome.body,
            recheck_at=_page_recheck_at(archive, outcome, status, now),
        )
        return status
    assert result is not None
    status = "not_modified" if outcome.notes is None else "ok"
    recheck_at = _page_recheck_at(archive, outcome, status, now)
    if outcome.notes is None:
        archive.record_page(
            task, status=status, now=now, records=outcome.records, recheck_at=recheck_at
        )
        return status
    notes = outcome.notes
    archive.record_page(
        task,
        status=status,
        now=now,
        records=outcome.records,
        extractor=notes.extractor,
        notes_html=notes.html,
        notes_text=notes.text,
        links=notes.links,
        etag=result.etag,
        last_modified=result.last_modified,
        body=outcome.body,
        recheck_at=recheck_at,
        how=PageHow.of(notes),
    )
    return status


def _page_recheck_at(
    archive: ArchiveLike, outcome: PageOutcome, status: str, now: str
) -> str | None:
    """When the page is next re-checked; None while it has never been read with notes."""
    task = outcome.task
    read = status in ("ok", "not_modified")
    if not read and task.status != "ok":
        return None  # not archived yet: the retry back-off of pages_to_fetch applies
    if task.first_seen_at is None:
        published, first_seen = archive.page_age(task.episode_id)
    else:
        published, first_seen = task.published, task.first_seen_at
    return recheck.next_check_at(
        task.url,
        archived=True,
        published=published,
        first_seen=first_seen,
        now=now,
        every=outcome.schedule.page_every if outcome.schedule else None,
        failures=0 if read else task.failures + 1,
    )


def pages_due(
    archive: ArchiveLike,
    feed_id: int,
    now: datetime,
    everything: bool = False,
    failed_now: bool = False,
) -> list[PageTask]:
    """The feed's episode pages to fetch now: new ones, failed ones whose wait is over, and
    archived ones whose re-check is due (with ``everything``, every archived one).

    ``failed_now`` (the schedule's fetch settings changed): every page that failed, or had
    no notes, is due now, whatever its back-off, and so is every failing re-check.
    """
    fresh = archive.with_feed_notes(
        [
            t
            for t in archive.pages_to_fetch(feed_id)
            if failed_now
            or policy.page_retry_due(t.status, t.attempts, parse_iso(t.fetched_at), now)
        ]
    )
    recheck = archive.pages_to_recheck(feed_id, iso(now), everything=everything, failing=failed_now)
    return fresh + recheck


class PageCounts(Protocol):
    """A report that tallies episode pages (:class:`FeedReport`, a backfill's report)."""

    pages_ok: int
    pages_empty: int
    pages_failed: int


def count_page(counts: PageCounts, status: PageResult) -> bool:
    """Tally one stored page: ok (a 304 too), empty or failed. True for empty or failed."""
    if status in ("ok", "not_modified"):
        counts.pages_ok += 1
        return False
    if status == "empty":
        counts.pages_empty += 1
    else:
        counts.pages_failed += 1
    return True
