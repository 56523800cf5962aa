"""The backfill's **pages** and **files** phases, fetched in a pool and stored one by one.

- **pages** — every episode page not yet archived, and those that failed, through
  :func:`pages.fetch_page` / :func:`pages.store_page` (one transaction per page).
- **files** — every ``podcast:transcript`` and ``podcast:chapters`` file of the feed's
  episodes not yet read, and those that failed, through :func:`files.fetch_file` /
  :func:`files.store_file`, as a run fetches them (untrusted URLs; ``--limit`` counts pages
  only).

A dry run fetches none of them: it lists those the archive has due and those of the
episodes it would store.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from functools import partial

from podarchive.core.errors import Abandoned
from podarchive.core.types import FileKind, FileTask, PageTask, Row
from podarchive.read.extract import page_title
from podarchive.store import FILE_TABLES, ArchiveLike
from podarchive.tasks.backfill_model import SITE_PAGE_KEY, Context, FeedBackfill, Walk, on_or_after
from podarchive.update.files import FileOutcome, fetch_file, file_kinds, store_file
from podarchive.update.pages import PageOutcome, count_page, fetch_page, store_page

#: A job: fetches in the pool, and gives back how to store what it got (False: abandoned).
Job = Callable[[], Callable[[], bool]]


# episode pages --------------------------------------------------------------------------


def pages_phase(ctx: Context, walk: Walk) -> None:
    """Every episode page not yet archived, and those that failed, on or after --since (a
    dry run counts those of the episodes it would have stored too)."""
    schedule, report = walk.schedule, walk.report
    tasks: list[tuple[PageTask, str]] = []
    if ctx.archive is not None and walk.state.id:
        tasks = ctx.archive.backfill_page_tasks(walk.state.id, ctx.options.since)
    if not schedule.pages:
        tasks = [t for t in tasks if t[1].startswith(SITE_PAGE_KEY)]
    if not ctx.writing:
        urls = [t.url for t, _ in tasks] + _planned_pages(ctx, walk)
        allowed = _take(ctx, len(urls))
        report.would_fetch = urls[:allowed]
        report.pages_left = len(urls) - allowed
        return
    allowed = _take(ctx, len(tasks))
    report.pages_left = len(tasks) - allowed
    tasks = tasks[:allowed]
    if not tasks:
        return
    archive = ctx.archive
    assert archive is not None

    def job(task: PageTask, key: str) -> Callable[[], bool]:
        outcome = fetch_page(ctx.fetcher, task, schedule)
        return lambda: _store_page(archive, outcome, key, ctx.now(), report)

    ctx.progress.start(report.label, "episode pages", len(tasks))
    try:
        report.pages_left += _fetch_each(ctx, [partial(job, task, key) for task, key in tasks])
    finally:
        ctx.progress.done()


def _planned_pages(ctx: Context, walk: Walk) -> list[str]:
    """A dry run: the pages of the episodes it would have stored, on or after --since."""
    wanted = walk.schedule.pages
    return [
        str(p.row["page_url"])
        for p in walk.planned
        if p.row.get("page_url")
        and (wanted or p.key.startswith(SITE_PAGE_KEY))
        and on_or_after(p.row.get("published"), ctx.options.since)
    ]


def _take(ctx: Context, wanted: int) -> int:
    """How many of ``wanted`` pages --limit still allows (and count them off)."""
    if ctx.budget[0] < 0:
        return wanted
    allowed = min(wanted, ctx.budget[0])
    ctx.budget[0] -= allowed
    return allowed


def _store_page(
    archive: ArchiveLike, outcome: PageOutcome, key: str, now: str, report: FeedBackfill
) -> bool:
    """Store one page's outcome; False when it was abandoned (a stop: nothing recorded)."""
    report.requests += len(outcome.records)
    if isinstance(outcome.error, Abandoned):
        return False  # the next backfill fetches it
    with archive.transaction():
        status = store_page(archive, outcome, now)
        if (
            key.startswith(SITE_PAGE_KEY)
            and outcome.result is not None
            and outcome.notes is not None
        ):
            title = page_title(outcome.result.body, content_type=outcome.result.content_type)
            if title:
                archive.set_site_episode_title(outcome.task.episode_id, title)
    if count_page(report, status):
        report.failures.append((outcome.task.url, str(outcome.error)))
    return True


# transcripts and chapters files -------------------------------------------------------------


def files_phase(ctx: Context, walk: Walk) -> None:
    """The transcripts and chapters files of the feed's episodes not yet read, and those
    that failed, on or after --since: fetched as a run fetches them (untrusted: the address
    guard, the same per-host politeness), stored one by one. A dry run counts them, with
    those of the episodes it would have stored."""
    schedule, report = walk.schedule, walk.report
    kinds = file_kinds(schedule)
    tasks = _due_files(ctx, walk, kinds)
    if not ctx.writing:
        report.would_fetch_files = [t.url for t in tasks] + _planned_files(ctx, walk, kinds)
        return
    if not tasks:
        return
    archive = ctx.archive
    assert archive is not None

    def job(task: FileTask) -> Callable[[], bool]:
        outcome = fetch_file(ctx.fetcher, task, schedule)
        return lambda: _store_file(archive, outcome, ctx.now(), report)

    ctx.progress.start(report.label, "transcripts and chapters", len(tasks))
    try:
        report.files_left = _fetch_each(ctx, [partial(job, t) for t in tasks])
    finally:
        ctx.progress.done()


def _due_files(ctx: Context, walk: Walk, kinds: Sequence[FileKind]) -> list[FileTask]:
    """The files of ``kinds`` not yet read or that failed, on or after --since."""
    if ctx.archive is None or not walk.state.id or not kinds:
        return []
    due = ctx.archive.files_to_fetch(walk.state.id, ctx.now(), kinds, failing=True)
    return [
        t
        for t in due
        if t.status in ("pending", "failed") and on_or_after(t.published, ctx.options.since)
    ]


def _planned_files(ctx: Context, walk: Walk, kinds: Sequence[FileKind]) -> list[str]:
    """A dry run: the files of the episodes it would have stored, on or after --since."""
    return [
        url
        for p in walk.planned
        if on_or_after(p.row.get("published"), ctx.options.since)
        for url in _listed_files(p.row, kinds)
    ]


def _store_file(archive: ArchiveLike, outcome: FileOutcome, now: str, report: FeedBackfill) -> bool:
    """Store one file's outcome; False when it was abandoned (a stop: nothing recorded)."""
    report.requests += len(outcome.records)
    if isinstance(outcome.error, Abandoned):
        return False
    if store_file(archive, outcome, now) == "failed":
        report.files_failed += 1
        report.failures.append((outcome.task.url, str(outcome.error)))
    else:
        report.files_ok += 1
    return True


def _listed_files(row: Row, kinds: Sequence[FileKind]) -> list[str]:
    """The URLs of the files of ``kinds`` an episode row lists (its JSON ``transcripts`` and
    ``chapters`` columns), once each, as the store lists them to fetch."""
    urls: list[str] = []
    for kind in kinds:
        try:
            items = json.loads(row.get(FILE_TABLES[kind][1]) or "[]")
        except ValueError:
            continue
        listed = (
            [i.get("url") for i in items if isinstance(i, dict)] if isinstance(items, list) else []
        )
        urls += dict.fromkeys(url for url in listed if isinstance(url, str) and url)
    return urls


# the pool -------------------------------------------------------------------------------


def _fetch_each(ctx: Context, jobs: list[Job]) -> int:
    """Run ``jobs`` (each fetches in the pool and gives back how to store what it got:
    False when it was abandoned) with at most ``per_host`` in flight, storing each on this
    thread as it arrives; how many were not done (a stop: not started, or abandoned).
    Progress counts only what was stored, so it says what the summary says."""
    width = max(1, min(ctx.settings.per_host, ctx.settings.concurrency))
    pending: set[Future[Callable[[], bool]]] = set()
    todo = list(reversed(jobs))
    left = 0
    stopped_at: float | None = None
    with ThreadPoolExecutor(width, "podarchive-backfill") as pool:
        try:
            while todo or pending:
                while todo and len(pending) < width and not ctx.stop.is_set():
                    pending.add(pool.submit(todo.pop()))
                if ctx.stop.is_set():
                    stopped_at = stopped_at or time.monotonic()
                    late = time.monotonic() - stopped_at > ctx.options.grace
                    if late or ctx.abandon.is_set():
                        ctx.fetcher.abort()
                    if not pending:
                        break
                done, pending = wait(pending, timeout=0.1, return_when=FIRST_COMPLETED)
                for future in done:
                    if future.result()():
                        ctx.progress.advance()
                    else:
                        left += 1
        finally:
            left += len(todo)
    return left
