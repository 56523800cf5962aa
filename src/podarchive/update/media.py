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

import logging
import threading
from collections.abc import Iterable
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

from podarchive.core.clock import Clock, iso
from podarchive.core.errors import Abandoned, MediaStoreError, one_line
from podarchive.core.settings import Settings
from podarchive.rules.media import Budget
from podarchive.store import ArchiveLike
from podarchive.update.media_feed import MediaFeed as MediaFeed  # the run names it here

if TYPE_CHECKING:  # the downloads' own module is imported by the phase's first run (#30)
    from podarchive.net.fetch import Fetcher
    from podarchive.store.media_files import MediaFolder
    from podarchive.update.media_jobs import MediaJob, MediaOutcome

log = logging.getLogger("podarchive")


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
        from podarchive.update.media_jobs import fetch_media, media_jobs

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
        from podarchive.update.media_jobs import store_media

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
        from podarchive.net.download import strong_validator
        from podarchive.update.media_jobs import set_state

        error, result, job = outcome.error, outcome.result, outcome.job
        if result is not None and result.complete:
            state = replace(
                job.task.state,
                partial_key=job.partial_key,
                partial_bytes=result.size,
                validator=strong_validator(result.etag, result.last_modified),
                next_check_at=iso(self.clock()),
            )
            set_state(self.archive, job, state, iso(self.clock()))
        if not self.halt.is_set():
            log.warning("media: %s; no more media this run", one_line(str(error)))
        self.report.disk_full = one_line(str(error))
        self.halt.set()


def media_folder(archive: ArchiveLike, settings: Settings) -> MediaFolder | None:
    """The archive's media folder (``media_dir``, else ``media`` beside the archive file);
    None for an archive without a file (a test's stand-in) and no ``media_dir``."""
    from podarchive.core.settings import media_dir_for
    from podarchive.store.media_files import MediaFolder

    path = getattr(archive, "path", None)
    if path is None and not settings.media_dir:
        return None
    return MediaFolder(media_dir_for(Path(path or "."), settings))
