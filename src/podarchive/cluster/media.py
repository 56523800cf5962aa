"""A shard worker's media (#26): the media phase on a thread of its own, for ever.

A ``run`` fetches media after its feeds, pages and files (:mod:`podarchive.update.media`).
A worker's stream never ends, so its media cannot wait for the end: each feed with
``media = true`` is handed to :class:`ShardMedia` once it is stored with its pages and
files, and a thread of its own runs :class:`~podarchive.update.media.MediaPhase` over the
feeds handed on since its last pass. Feeds are never held up by media: the thread has its
own connection to the shard's archive (SQLite in WAL mode; its short writes wait their turn
behind the stream's) and its own HTTP clients, and the per-host turns are the cluster's,
kept in the broker, so media and feeds of one host share its politeness across every
worker. The shards share one media folder (``media`` beside them, or ``media_dir``): a
payload fetched by two shards is stored once, and each shard's partial downloads are in
``.partial/<shard>/``. The byte budget (``media_budget``) is per pass, as it is per run.
When the worker stops, downloads in flight end after their current chunk and keep their
partial files, which the feed's next poll resumes.
"""

from __future__ import annotations

import logging
import threading
from pathlib import Path

from podarchive.core.clock import Clock, utcnow
from podarchive.core.errors import PodarchiveError, one_line
from podarchive.core.settings import Settings
from podarchive.net.fetch import Fetcher
from podarchive.net.hosts import HostTurns
from podarchive.store import Archive
from podarchive.store.media_files import MediaFolder
from podarchive.update.media import MediaFeed, MediaPhase, MediaReport, media_folder

log = logging.getLogger("podarchive")
IDLE_WAKE = 1.0  # seconds between looks at ``stop`` while there is nothing to fetch


class ShardMedia:
    """The media thread of the shard archive at ``path``; :meth:`want` hands it a feed."""

    def __init__(
        self,
        path: Path,
        settings: Settings,
        hosts: HostTurns,
        stop: threading.Event,
        clock: Clock = utcnow,
    ) -> None:
        self.path, self.settings, self.hosts = path, settings, hosts
        self.stop, self.clock = stop, clock
        self.passes: list[MediaReport] = []  # every pass's report, oldest first
        self._wanted: dict[int, MediaFeed] = {}  # feed id → feed, handed on since last pass
        self._lock = threading.Lock()
        self._wake = threading.Event()
        self._fetcher: Fetcher | None = None  # while the thread runs
        self._thread = threading.Thread(target=self._serve, name="podarchive-media", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def want(self, feed: MediaFeed) -> None:
        """Fetch ``feed``'s due media in the next pass (any thread; a feed handed on twice
        before its pass is fetched once)."""
        with self._lock:
            self._wanted[feed.feed_id] = feed
        self._wake.set()

    def join(self) -> None:
        """Wait for the thread (after ``stop``): downloads in flight are given up at once
        (a read blocked on a slow host too), keeping their partial files."""
        self._wake.set()
        if self._fetcher is not None:
            self._fetcher.abort()
        if self._thread.is_alive():
            self._thread.join()

    def _take(self) -> list[MediaFeed]:
        with self._lock:
            feeds, self._wanted = list(self._wanted.values()), {}
        return feeds

    def _serve(self) -> None:
        try:
            with Archive(self.path) as archive, Fetcher(self.settings, hosts=self.hosts) as fetch:
                shared = media_folder(archive, self.settings)
                assert shared is not None  # a shard archive is a file
                folder = MediaFolder(shared.root, owner=self.path.stem)
                self._fetcher = fetch
                while not self.stop.is_set():
                    self._wake.wait(IDLE_WAKE)
                    self._wake.clear()
                    feeds = self._take()
                    if feeds and not self.stop.is_set():
                        phase = MediaPhase(
                            archive, fetch, folder, self.settings, self.clock, self.stop
                        )
                        self.passes.append(phase.run(feeds))
                        log_pass(self.path, self.passes[-1])
        except PodarchiveError as e:
            log.warning("%s: media stopped: %s", self.path.name, one_line(str(e)))
        except Exception:  # the worker's feeds go on; the media thread's end is logged
            log.exception("%s: media stopped by an internal error", self.path.name)


def log_pass(path: Path, report: MediaReport) -> None:
    """One line per pass that did something (the failures have their own lines)."""
    if report.stored or report.failed or report.partial or report.left:
        log.info(
            "%s: media: %d stored, %d unchanged, %d partial, %d failed, %d left, %d bytes",
            *(path.name, report.stored, report.unchanged, report.partial, report.failed),
            *(report.left, report.moved),
        )
