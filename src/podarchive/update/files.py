"""Transcript and chapters files: fetched and read by worker threads, stored by the run's.

Every ``podcast:transcript`` and ``podcast:chapters`` file an episode lists is fetched once
new, then re-checked like its episode's page (:mod:`podarchive.rules.recheck`). The URLs come from
feed content: they are fetched untrusted (the address guard, politeness and
``max_file_bytes`` hold), and a file that fails is one line in the fetch log and the file's
``error``, backs off, and never fails its feed.
"""

from __future__ import annotations

import logging

from podarchive.core.errors import PodarchiveError, safe_url
from podarchive.core.records import record
from podarchive.core.types import (
    FetchRecord,
    FetchResult,
    FileKind,
    FileTask,
    KeptBody,
    PageResult,
    ParsedChapters,
    ParsedTranscript,
)
from podarchive.net.fetch import Fetcher
from podarchive.net.fetch_for import blame_last, get_again
from podarchive.read.schedule_files import FeedSchedule
from podarchive.rules import recheck
from podarchive.runtime.cpu import CpuLane
from podarchive.store import ArchiveLike

log = logging.getLogger("podarchive")


@record
class FileOutcome:
    """What fetching and reading one transcript or chapters file gave."""

    task: FileTask
    schedule: FeedSchedule
    records: list[FetchRecord]
    result: FetchResult | None = None
    body: KeptBody | None = None
    parsed: ParsedTranscript | ParsedChapters | None = None
    error: PodarchiveError | None = None


def fetch_file(
    fetcher: Fetcher, task: FileTask, schedule: FeedSchedule, cpu: CpuLane | None = None
) -> FileOutcome:
    """Fetch and read one transcript or chapters file. Never raises.

    The URL comes from feed content: it is fetched untrusted (the address guard, politeness
    and the size cap hold), and a body that does not read is this file's failure only.
    """
    records: list[FetchRecord] = []
    try:
        result = get_again(fetcher, schedule, task, records, kind=task.kind)
        if result.not_modified:
            return FileOutcome(task, schedule, records, result)
        body = KeptBody.of(result.body, result.final_url, result.content_type)
        lane, weight = cpu or CpuLane(1), len(body.body)
        from podarchive.read.jobs import read_chapters, read_transcript  # loaded on first use

        parsed: ParsedTranscript | ParsedChapters
        if task.kind == "transcript":
            args = (body.body, body.url, body.content_type, task.declared_type)
            parsed = lane.run(read_transcript, *args, weight=weight)
        else:
            parsed = lane.run(read_chapters, body.body, body.url, weight=weight)
        return FileOutcome(task, schedule, records, result, body, parsed)
    except PodarchiveError as e:
        return FileOutcome(task, schedule, records, error=e)
    except Exception as e:
        log.exception("unexpected error reading %s %s", task.kind, safe_url(task.url))
        return FileOutcome(task, schedule, records, error=PodarchiveError(f"internal error: {e!r}"))


def store_file(archive: ArchiveLike, outcome: FileOutcome, now: str) -> PageResult:
    """Store a transcript or chapters file outcome: ok, not_modified, empty or failed.

    A file that fails keeps the rows it was last read into; its reason goes to the fetch
    log and the file's ``error``, and it backs off (:func:`podarchive.rules.recheck.next_check`).
    """
    task, result = outcome.task, outcome.result
    status: PageResult
    if outcome.error is not None:
        status = "failed"
    elif result is not None and result.not_modified:
        status = "not_modified"
    else:
        count = len(getattr(outcome.parsed, "segments", getattr(outcome.parsed, "chapters", ())))
        status = "ok" if count else "empty"
    read = status != "failed"
    archived = read or task.status in ("ok", "empty")
    next_at = recheck.next_check_at(
        task.url,
        archived=archived,
        published=task.published,
        first_seen=task.first_seen_at,
        now=now,
        every=outcome.schedule.page_every,
        failures=0 if read else task.failures + 1,
    )
    result, body = outcome.result, outcome.body
    records = blame_last(outcome.records, outcome.error) if outcome.error else outcome.records
    with archive.transaction():
        archive.record_file(
            task,
            status=status,
            now=now,
            records=records,
            next_check_at=next_at,
            error=str(outcome.error) if outcome.error else None,
            body=body,
            parsed=outcome.parsed,
            etag=result.etag if result else None,
            last_modified=result.last_modified if result else None,
        )
        if result is not None:  # its exchanges (#27), the body where it was kept
            archive.record_captures(
                result.exchanges,
                kind=task.kind,
                feed_id=task.feed_id,
                episode_id=task.episode_id,
                body_sha256=body.hash if body else None,
                body_size=len(body.body) if body else None,
            )
    return status


def file_kinds(schedule: FeedSchedule) -> list[FileKind]:
    """The kinds of file the schedule wants fetched (``transcripts``, ``chapters`` keys)."""
    kinds: list[FileKind] = []
    if schedule.transcripts:
        kinds.append("transcript")
    if schedule.chapters:
        kinds.append("chapters")
    return kinds
