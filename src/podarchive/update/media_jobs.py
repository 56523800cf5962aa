"""One media download of a run's media phase (:class:`~podarchive.update.media.MediaPhase`):
which files an episode wants now (:func:`media_jobs`), the download into a partial file and
its commit (:func:`fetch_media`, a worker thread), and its record in the ledger
(:func:`store_media`, the calling thread). Imported by the phase's first run, not with the
run itself: a run without media never loads the downloader (#30).
"""

from __future__ import annotations

import hashlib
import logging
import threading
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from typing import Any

from podarchive.core.clock import iso, parse_iso
from podarchive.core.errors import PodarchiveError, one_line, safe_url
from podarchive.core.types import FetchRecord, Row
from podarchive.net.download import Download, download
from podarchive.net.fetch import Fetcher
from podarchive.rules.media import (
    MediaTarget,
    image_extension,
    image_max_bytes,
    image_target,
    next_media_check,
    versions_to_drop,
)
from podarchive.rules.media import wanted_media as wanted_files
from podarchive.store import ArchiveLike, MediaState, MediaTask
from podarchive.store.media_files import MediaFolder, Payload, media_error, media_extension
from podarchive.update.media_feed import MediaFeed, published_at, task_files

log = logging.getLogger("podarchive")
RETRY_FIRST = timedelta(hours=1)  # a failed download is tried again after this, ...
RETRY_MAX = timedelta(days=30)  # ... four times longer each time, up to this


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
        set_state(archive, job, state, now)
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


def set_state(archive: ArchiveLike, job: MediaJob, state: MediaState, now: str) -> None:
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
    set_state(archive, job, state, now)
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
    set_state(archive, job, state, now)


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
