"""The media phase of a run (#26): the episodes' audio and video, after feeds, pages and files.

For each feed whose schedule has ``media = true``, once it is stored with its pages and
files: the episodes whose media is due (:meth:`Archive.media_due`: never fetched, a retry
after its back-off, or a re-check by :func:`podarchive.rules.media.next_media_check`) →
:func:`podarchive.rules.media.wanted_media` → one :func:`podarchive.net.download.download`
each, on the phase's own threads (``media_concurrency``), into a partial file that a later
run resumes. A complete file is committed to the content-addressed folder
(:class:`~podarchive.store.media_files.MediaFolder`) and recorded on the calling thread:
payload, fetch row, the episode's version; more versions than ``media_versions`` drop the
ones :func:`~podarchive.rules.media.versions_to_drop` names (a payload's file goes only when
no episode refers to it any more). The run's byte budget (``media_budget``) stops new
downloads once spent, and a full disk stops the phase; each is one line. A failure is a
fetch row and the state's error with a back-off, one line in the log, never the feed's.

The feed's images (#28: its artwork, its episodes' own images) are more files of the same
phase, before its episodes' media (they are small): the same guard, politeness, deadline,
budget and re-check ages, at most :func:`~podarchive.rules.media.image_max_bytes` each, stored
in the same folder, recorded by feed and URL in the images' ledger (:mod:`podarchive.store.images`).
"""

from __future__ import annotations

import hashlib
import logging
import threading
from collections.abc import Iterable
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from podarchive.core.clock import Clock, iso, parse_iso
from podarchive.core.errors import (
    Abandoned,
    MediaStoreError,
    PodarchiveError,
    one_line,
    safe_url,
)
from podarchive.core.settings import Settings
from podarchive.core.types import Enclosure, FetchRecord, Row
from podarchive.net.download import Download, download, strong_validator
from podarchive.net.fetch import Fetcher
from podarchive.read.schedule_files import FeedSchedule
from podarchive.rules.media import (
    Budget,
    MediaTarget,
    alternate_sources,
    image_extension,
    image_max_bytes,
    image_target,
    next_media_check,
    versions_to_drop,
)
from podarchive.rules.media import wanted_media as wanted_files
from podarchive.store import ArchiveLike, MediaState, MediaTask
from podarchive.store.media_files import MediaFolder, Payload, media_error, media_extension

log = logging.getLogger("podarchive")
RETRY_FIRST = timedelta(hours=1)  # a failed download is tried again after this, ...
RETRY_MAX = timedelta(days=30)  # ... four times longer each time, up to this


@dataclass(frozen=True, slots=True)
class MediaFeed:
    """A stored feed whose media is to be fetched in this run."""

    schedule: FeedSchedule
    feed_id: int
    label: str


@dataclass(frozen=True, slots=True)
class MediaJob:
    """One file to download: an episode's enclosure (or an alternate enclosure's source) as
    :func:`wanted_files` chose it."""

    feed: MediaFeed
    task: MediaTask
    target: MediaTarget

    @property
    def partial_key(self) -> str:
        digest = hashlib.sha256(self.task.url.encode("utf-8", "surrogatepass")).hexdigest()
        if self.image:
            return f"image-{digest[:32]}"
        return f"{self.task.episode_id}-{digest[:16]}"

    @property
    def image(self) -> bool:
        """A podcast's artwork or an episode's image (#28), recorded by feed and URL."""
        return self.task.source == "image"


@dataclass(slots=True)
class MediaOutcome:
    """What one download gave (worker thread); stored by :func:`store_media`."""

    job: MediaJob
    records: list[FetchRecord] = field(default_factory=list)
    result: Download | None = None
    payload: Payload | None = None
    ext: str = ""
    error: PodarchiveError | None = None


@dataclass(slots=True)
class MediaReport:
    """How a run's media phase went: files stored, unchanged, left partial, failed."""

    stored: int = 0
    unchanged: int = 0
    partial: int = 0
    failed: int = 0
    moved: int = 0  # bytes transferred
    left: int = 0  # due but not started: the budget was spent, a stop, a full disk
    budget_spent: bool = False
    disk_full: str | None = None
    #: feed label → (kind "media", error) per failure, as FeedReport.problems
    problems: dict[str, list[tuple[str, str]]] = field(default_factory=dict)
    failures: list[tuple[str, str]] = field(default_factory=list)  # (URL, error)


def media_jobs(
    archive: ArchiveLike, feed: MediaFeed, now: datetime, recheck: bool = False
) -> list[MediaJob]:
    """The feed's media downloads due now, newest episode first (``recheck``: every stored
    file too, ``run --recheck-media``)."""
    choice = feed.schedule.media_choice()
    due = archive.media_due(
        feed.feed_id, iso(now), recheck=recheck, alternates=choice.media_alternates
    )
    jobs = []
    if choice.media:  # #28: the artwork and the episodes' images first (small)
        images = archive.images_due(feed.feed_id, iso(now), recheck=recheck)
        jobs += [MediaJob(feed, task, image_target(task.url)) for task in images]
    for task in due:
        for target in wanted_files(*task_files(task), published_at(task.published), choice):
            jobs.append(MediaJob(feed, task, target))
    return jobs


def task_files(task: MediaTask) -> tuple[Enclosure | None, list[Enclosure]]:
    """A due task as :func:`wanted_files` takes it: the episode's enclosure, or one of its
    alternate enclosure sources (:func:`~podarchive.rules.media.alternate_sources`)."""
    if task.source == "alternate":
        return None, alternate_sources(task.content_type, task.length, [(task.url, None)])
    return Enclosure(task.url, task.content_type, task.length), []


def published_at(text: object) -> datetime | None:
    """An episode's stored publish time as a datetime (None: none, or not a date)."""
    try:
        return parse_iso(str(text)) if text else None
    except ValueError:
        return None


def fetch_media(
    fetcher: Fetcher, folder: MediaFolder, job: MediaJob, stop: threading.Event | None = None
) -> MediaOutcome:
    """Download one file into its partial file (resuming it), and commit it when complete.
    Never raises: an error is the outcome's."""
    outcome = MediaOutcome(job)
    schedule, task = job.feed.schedule, job.task
    try:
        partial = folder.partial_path(job.partial_key)
        recheck = task.stored and not partial.exists()
        outcome.result = result = download(
            fetcher,
            job.target.url,
            partial,
            records=outcome.records,
            max_bytes=(
                image_max_bytes(schedule.media_max_bytes) if job.image else schedule.media_max_bytes
            ),
            user_agent=schedule.user_agent,
            allow_private_hosts=schedule.allow_private_hosts,
            etag=task.state.etag if recheck else None,
            last_modified=task.state.last_modified if recheck else None,
            resume_validator=task.state.validator if task.state.partial_key else None,
            stop=stop,
        )
        if result.complete and not result.not_modified:
            content_type = result.headers.get("content-type") or job.target.content_type
            ext_of = image_extension if job.image else media_extension
            outcome.ext = ext_of(content_type, result.final_url)
            outcome.payload = folder.commit(partial, outcome.ext)
    except PodarchiveError as e:
        outcome.error = e
    except OSError as e:  # the partial file could not be written (a full disk)
        outcome.error = media_error(e, "write a media file")
    except Exception as e:
        log.exception("unexpected error downloading %s", safe_url(job.target.url))
        outcome.error = PodarchiveError(f"internal error: {e!r}")
    return outcome


def store_media(archive: ArchiveLike, folder: MediaFolder, outcome: MediaOutcome, now: str) -> str:
    """Record one download on the calling thread: ``stored``, ``unchanged``, ``partial`` or
    ``failed`` (whose reason is one line in the log)."""
    job, result = outcome.job, outcome.result
    if outcome.error is not None or result is None:
        return _failed(archive, outcome, now)
    if result.not_modified:
        _fetched(archive, outcome, "unchanged", now)
        _schedule_next(archive, job, result, now, rechecked=True)
        return "unchanged"
    if outcome.payload is None:
        _fetched(archive, outcome, "partial", now)
        state = replace(
            job.task.state,
            partial_key=job.partial_key,
            partial_bytes=result.size,
            next_check_at=now,  # due again: the next run resumes it
        )
        _set_state(archive, job, state, now)
        return "partial"
    payload = outcome.payload
    content_type = result.headers.get("content-type") or job.target.content_type
    with archive.transaction():
        archive.record_payload(payload.sha256, payload.size, content_type, outcome.ext, now)
        _fetched(archive, outcome, "stored", now, sha256=payload.sha256)
    before = {row["sha256"] for row in _versions(archive, job)}
    if job.image:
        archive.add_image_version(job.feed.feed_id, job.task.url, payload.sha256, now)
    else:
        archive.add_media_version(job.task.episode_id, job.task.url, payload.sha256, now)
    _cap_versions(archive, folder, job)
    _schedule_next(archive, job, result, now, rechecked=job.task.stored)
    return "unchanged" if payload.sha256 in before else "stored"


def _fetched(
    archive: ArchiveLike, outcome: MediaOutcome, what: str, now: str, sha256: str | None = None
) -> None:
    """The fetch row: the URL asked, the final one, status, validators, headers, bytes; a
    stored or unchanged file's exchanges are captures too (#27; not a partial file's)."""
    result = outcome.result
    status = result.status if result else getattr(outcome.error, "status", None)
    with archive.transaction():
        _fetch_row(archive, outcome, what, now, status, sha256)
        if result is not None and what in ("stored", "unchanged"):
            payload = outcome.payload if sha256 else None
            archive.record_captures(
                result.exchanges,
                kind="media",
                feed_id=outcome.job.feed.feed_id,
                episode_id=None if outcome.job.image else outcome.job.task.episode_id,
                body_sha256=payload.sha256 if payload else None,
                body_size=payload.size if payload else None,
            )


def _fetch_row(
    archive: ArchiveLike,
    outcome: MediaOutcome,
    what: str,
    now: str,
    status: int | None,
    sha256: str | None,
) -> None:
    result = outcome.result
    job = outcome.job
    row: dict[str, Any] = {
        "outcome": what,
        "now": now,
        "final_url": result.final_url if result else None,
        "status": status,
        "etag": result.etag if result else None,
        "last_modified": result.last_modified if result else None,
        "headers": result.headers if result else None,
        "moved": sum(r.bytes for r in outcome.records),
        "sha256": sha256,
        "error": one_line(str(outcome.error)) if outcome.error else None,
        "records": outcome.records,
    }
    if job.image:
        archive.record_image_fetch(job.feed.feed_id, job.task.url, **row)
    else:
        archive.record_media_fetch(
            job.task.episode_id, job.task.url, **row, feed_id=job.feed.feed_id
        )


def _versions(archive: ArchiveLike, job: MediaJob) -> list[Row]:
    """The stored versions of the job's file, oldest first (an image's by its URL)."""
    if job.image:
        return archive.image_versions(job.feed.feed_id, job.task.url)
    return archive.media_versions(job.task.episode_id, job.task.url)


def _set_state(archive: ArchiveLike, job: MediaJob, state: MediaState, now: str) -> None:
    """Write the download state of the job's file (an image's by its URL)."""
    if job.image:
        archive.set_image_state(job.feed.feed_id, job.task.url, state, now)
    else:
        archive.set_media_state(job.task.episode_id, job.task.url, state, now)


def _failed(archive: ArchiveLike, outcome: MediaOutcome, now: str) -> str:
    """A failure: a fetch row, the state's error and its back-off, one line in the log."""
    job, error = outcome.job, str(outcome.error)
    _fetched(archive, outcome, "failed", now)
    state = job.task.state
    failures = state.error_count + 1
    wait_for = min(RETRY_FIRST * 4 ** (failures - 1), RETRY_MAX)
    moment = parse_iso(now)
    assert moment is not None
    state = replace(
        state,
        error_count=failures,
        last_error=one_line(error),
        next_check_at=iso(moment + wait_for),
    )
    _set_state(archive, job, state, now)
    log.info("%s: media %s: %s", job.feed.label, safe_url(job.task.url), one_line(error))
    return "failed"


def _schedule_next(
    archive: ArchiveLike, job: MediaJob, result: Download, now: str, *, rechecked: bool
) -> None:
    """The stored copy's validators and its next re-check (the age rule from when it was
    first archived); no partial file, no error."""
    task, moment = job.task, parse_iso(now)
    assert moment is not None
    versions = _versions(archive, job)
    archived = parse_iso(versions[0]["first_seen_at"]) if versions else None
    checks = task.state.checks + 1 if rechecked else 0
    due = next_media_check(archived or moment, checks, moment, False, last_checked=moment)
    state = MediaState(
        etag=result.etag or task.state.etag,
        last_modified=result.last_modified or task.state.last_modified,
        next_check_at=iso(due) if due else None,
        checks=checks,
    )
    _set_state(archive, job, state, now)


def _cap_versions(archive: ArchiveLike, folder: MediaFolder, job: MediaJob) -> None:
    """Drop the versions over the feed's ``media_versions``; a payload's file is removed
    only when no episode's version refers to it any more."""
    task = job.task
    versions = _versions(archive, job)
    ext = {row["sha256"]: row["ext"] or "" for row in versions}
    numbered = [(row["version"], row["sha256"]) for row in versions]
    for sha256 in versions_to_drop(numbered, job.feed.schedule.media_versions):
        if job.image:
            left = archive.drop_image_version(job.feed.feed_id, task.url, sha256)
        else:
            left = archive.drop_media_version(task.episode_id, task.url, sha256)
        if left == 0:
            path = folder.path_of(sha256, ext[sha256])
            try:
                path.unlink(missing_ok=True)
            except OSError as e:
                log.warning("media: cannot remove %s: %s", path, e)


class MediaPhase:
    """A run's media downloads over the feeds given, on their own threads; the calling
    thread records each one. ``stop`` ends it early keeping the partial files."""

    def __init__(
        self,
        archive: ArchiveLike,
        fetcher: Fetcher,
        folder: MediaFolder,
        settings: Settings,
        clock: Clock,
        stop: threading.Event | None = None,
    ) -> None:
        self.archive, self.fetcher, self.folder = archive, fetcher, folder
        self.settings, self.clock = settings, clock
        self.stop = stop or threading.Event()
        self.halt = threading.Event()  # the phase's own stop: a full disk, the run's stop
        self.budget = Budget(settings.media_budget)
        self.report = MediaReport()
        self.reserved: dict[int, int] = {}  # id(job) → bytes taken from the budget

    def run(self, feeds: Iterable[MediaFeed], recheck: bool = False) -> MediaReport:
        now = self.clock()
        jobs = [job for feed in feeds for job in media_jobs(self.archive, feed, now, recheck)]
        queue = iter(jobs)
        left = len(jobs)
        pending: dict[Future[MediaOutcome], MediaJob] = {}
        with ThreadPoolExecutor(self.settings.media_concurrency, "podarchive-media") as threads:
            while True:
                while len(pending) < self.settings.media_concurrency and self._may_start():
                    job = next(queue, None)
                    if job is None:
                        break
                    if not self._reserve(job, left):
                        break
                    left -= 1
                    future = threads.submit(fetch_media, self.fetcher, self.folder, job, self.halt)
                    pending[future] = job
                if not pending:
                    self.report.left += left
                    break
                done, _ = wait(pending, timeout=0.1, return_when=FIRST_COMPLETED)
                if self.stop.is_set():
                    self.halt.set()
                for future in done:
                    pending.pop(future)
                    self._store(future.result())
        return self.report

    def _may_start(self) -> bool:
        return not (self.halt.is_set() or self.stop.is_set() or self.report.budget_spent)

    def _reserve(self, job: MediaJob, left: int) -> bool:
        """Take the bytes the file declares (less any partial file) from the budget; when
        they are not there, no more downloads start this run (one line)."""
        have = self._partial_size(job)
        need = max((job.target.length or 0) - have, 0)
        if self.budget.left > 0 and self.budget.take(need):
            self.reserved[id(job)] = need
            return True
        self.report.budget_spent = True
        log.warning(
            "media: the run's budget of %d bytes is spent; %d downloads left for the next run",
            self.settings.media_budget,
            left,
        )
        return False

    def _partial_size(self, job: MediaJob) -> int:
        try:
            path = self.folder.partial_path(job.partial_key)
            return path.stat().st_size if path.exists() else 0
        except (MediaStoreError, OSError):
            return 0

    def _settle_budget(self, outcome: MediaOutcome) -> None:
        """What the download moved against what it reserved."""
        moved = sum(r.bytes for r in outcome.records)
        reserved = self.reserved.pop(id(outcome.job), 0)
        self.report.moved += moved
        if moved < reserved:
            self.budget.give_back(reserved - moved)
        elif moved > reserved and not self.budget.take(moved - reserved):
            self.budget.take(self.budget.left)

    def _store(self, outcome: MediaOutcome) -> None:
        self._settle_budget(outcome)
        if isinstance(outcome.error, Abandoned):
            return  # the run is stopping: nothing recorded, the partial file kept
        if isinstance(outcome.error, MediaStoreError) and outcome.error.disk_full:
            self._disk_full(outcome)
            return
        status = store_media(self.archive, self.folder, outcome, iso(self.clock()))
        report = self.report
        if status == "failed":
            report.failed += 1
            problems = report.problems.setdefault(outcome.job.feed.label, [])
            problems.append(("media", one_line(str(outcome.error))))
            report.failures.append((outcome.job.task.url, one_line(str(outcome.error))))
        elif status == "partial":
            report.partial += 1
        elif status == "unchanged":
            report.unchanged += 1
        else:
            report.stored += 1

    def _disk_full(self, outcome: MediaOutcome) -> None:
        """The media folder's disk is full: no more media this run (one line); the partial
        files are kept (a complete one with its validator, so the next run only asks whether
        it is still whole), nothing else is touched."""
        error, result, job = outcome.error, outcome.result, outcome.job
        if result is not None and result.complete:
            state = replace(
                job.task.state,
                partial_key=job.partial_key,
                partial_bytes=result.size,
                validator=strong_validator(result.etag, result.last_modified),
                next_check_at=iso(self.clock()),
            )
            _set_state(self.archive, job, state, iso(self.clock()))
        if not self.halt.is_set():
            log.warning("media: %s; no more media this run", one_line(str(error)))
        self.report.disk_full = one_line(str(error))
        self.halt.set()


def media_folder(archive: ArchiveLike, settings: Settings) -> MediaFolder | None:
    """The archive's media folder (``media_dir``, else ``media`` beside the archive file);
    None for an archive without a file (a test's stand-in) and no ``media_dir``."""
    from podarchive.core.settings import media_dir_for

    path = getattr(archive, "path", None)
    if path is None and not settings.media_dir:
        return None
    return MediaFolder(media_dir_for(Path(path or "."), settings))
