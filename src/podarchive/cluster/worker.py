"""``podarchive worker``: one shard's archive, kept current from the broker's messages.

A worker holds its shard archive's lock for its whole life, so a shard is written by one
worker at a time, and everything one archive guarantees (history, revisions, crash safety)
holds per shard. It publishes the archive's due times to the broker's index on start (and
again whenever the broker lost them), then runs one long :func:`podarchive.update.run.update_stream`
fed by Dramatiq's threads: each message is put on the stream and its thread waits until the
feed, with its pages and files, is stored; only then is the message acknowledged. A worker
killed mid-feed leaves the message unacknowledged, and Dramatiq gives it to the next worker
of the shard; the archive's transaction per feed means nothing was half stored.

Before a feed is polled the stream checks, on the thread that owns the archive, that the
message is still current: its stamp must equal the feed's ``next_due_at`` in the archive
(a poll moves it), the feed must not be gone, in flight already, or on another shard, and
its host must not have asked the cluster to wait. A duplicated or redelivered message for
a feed already polled is acknowledged without a request: nothing is polled twice for one
due time. A poll does not always move the stamp (one polled before its due time, by a push
or a copy of a message, may store the same ``next_due_at``: a cron's next fire, or the
same second), so the worker also remembers when it began such a poll: a message sent
before that is answered by it, and skipped.

A feed with ``media = true``, once stored, is handed to the shard's media thread
(:class:`podarchive.cluster.media.ShardMedia`), which downloads its due media beside the
stream without holding up any feed.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from podarchive.cluster.broker import Cluster, DueEntry, Redeliver, worker_identity
from podarchive.cluster.host_turns import BrokerHostTurns
from podarchive.cluster.media import ShardMedia
from podarchive.core.clock import iso, utcnow
from podarchive.core.errors import Abandoned, BrokerError
from podarchive.core.settings import Settings
from podarchive.read.schedule_files import FeedSchedule
from podarchive.rules.shards import check_shard, shard_of, shard_path
from podarchive.runtime.lock import FileLock, archive_lock_path
from podarchive.store import Archive, check_file
from podarchive.update.media import MediaFeed
from podarchive.update.one_feed import FeedReport
from podarchive.update.run import update_stream

log = logging.getLogger("podarchive")
BEAT_EVERY = 2.0  # seconds between heartbeats (and checks that the due index is there)
PUBLISH_BATCH = 64  # due times sent to the broker's index in one round trip


@dataclass(slots=True)
class _Job:
    schedule: FeedSchedule
    stamp: str | None
    sent: float | None = None  # when the message was enqueued (epoch seconds), if known
    started: float = 0.0  # when the stream took it for a poll (epoch seconds)
    done: threading.Event = field(default_factory=threading.Event)
    outcome: str = ""  # "polled", "failed", "skipped: …", "" while in flight
    redeliver: bool = False

    def finish(self, outcome: str, *, redeliver: bool = False) -> None:
        self.outcome, self.redeliver = outcome, redeliver
        self.done.set()


@dataclass(slots=True)
class WorkerCounts:
    polled: int = 0
    failed: int = 0
    skipped: int = 0
    redelivered: int = 0


class ShardWorker:
    """The worker of shard ``shard`` of the cluster at ``cluster``, its archive in
    ``directory``. :meth:`run` blocks until ``stop`` is set."""

    def __init__(
        self,
        cluster: Cluster,
        shard: int,
        directory: Path,
        *,
        settings: Settings | None = None,
        threads: int | None = None,
    ) -> None:
        self.cluster = cluster
        self.shards = cluster.require_shards()
        self.shard = check_shard(shard, self.shards)
        self.path = shard_path(directory, shard, self.shards)
        self.settings = settings or Settings()
        # enough Dramatiq threads waiting on stored feeds to keep every fetch slot busy
        self.threads = threads or max(2, 2 * self.settings.concurrency)
        self.hosts = BrokerHostTurns(
            cluster,
            self.settings.per_host,
            self.settings.host_gap,
            self.settings.deadline,
            self.settings.connect_timeout,
        )
        self.counts = WorkerCounts()
        self._intake: queue.Queue[_Job] = queue.Queue()
        self._in_flight: dict[str, _Job] = {}
        self._stop = threading.Event()
        self._started_at = iso(utcnow())
        self._resync = threading.Event()
        self._archive: Archive | None = None  # while run() holds it
        self.media: ShardMedia | None = None  # while run() holds the archive
        self._unpublished: dict[str, DueEntry] = {}  # due times not yet in the broker
        #: URL → when a poll that left its stamp unmoved began: answers messages sent before
        self._unmoved: dict[str, float] = {}

    # the process's life

    def run(self, stop: threading.Event) -> WorkerCounts:
        """Lock the shard, publish its due index, consume its queue until ``stop``."""
        self._stop = stop
        self.path.parent.mkdir(parents=True, exist_ok=True)
        check_file(self.path)
        lock = FileLock(
            archive_lock_path(self.path), what="another worker or run", target=str(self.path)
        )
        with lock.acquire(), Archive(self.path) as archive:
            archive.check_daily()  # never write into a damaged shard (as run and the daemon)
            self._archive = archive
            self.media = ShardMedia(self.path, self.settings, self.hosts, stop)
            self.media.start()
            self._publish_all(archive)
            self._beat_once()
            beats = threading.Thread(target=self._beat, name="podarchive-beat", daemon=True)
            beats.start()
            consumer = self.cluster.consume(self.shard, self._handle, threads=self.threads)
            log.info(
                "worker of shard %d of %d: %s, %d threads, broker %s",
                *(self.shard, self.shards, self.path, self.threads, self.cluster.where),
            )
            try:
                update_stream(
                    archive,
                    self,
                    settings=self.settings,
                    stop=stop,
                    hosts=self.hosts,
                    on_done=self._done,
                )
            finally:
                stop.set()
                consumer.stop(timeout=10_000)
                self.media.join()
                self._abandon_waiting()
                self._flush()
                archive.checkpoint()
            self._beat_once(stopped=True)
        return self.counts

    def _beat(self) -> None:
        """Every BEAT_EVERY seconds: the heartbeat, and the due index published again if the
        broker lost it. An outage is logged once, and its end once."""
        trouble = False
        while not self._stop.wait(BEAT_EVERY):
            try:
                self._beat_once()
                if self.cluster.synced(self.shard) is None:
                    log.warning("shard %d: the broker lost its due index", self.shard)
                    self._resync.set()
            except BrokerError as e:
                if not trouble:
                    log.warning("shard %d: %s (trying again every %g s)", self.shard, e, BEAT_EVERY)
                trouble = True
            else:
                if trouble:
                    log.info("shard %d: the broker is back", self.shard)
                trouble = False

    def _beat_once(self, *, stopped: bool = False) -> None:
        info: dict[str, Any] = {
            **worker_identity(),
            "shard": self.shard,
            "shards": self.shards,
            "archive": str(self.path),
            "started_at": self._started_at,
            "seen_at": iso(utcnow()),
            "in_flight": len(self._in_flight),
            "stopped": stopped,
            **asdict(self.counts),
        }
        self.cluster.beat(self.shard, info)

    def _publish_all(self, archive: Archive) -> None:
        entries = (DueEntry(u, d, g) for u, d, g in archive.due_stamps())
        count = self.cluster.sync(self.shard, entries)
        log.info("shard %d: %d feeds published to the due index", self.shard, count)

    # Dramatiq's threads

    def _handle(self, feeds: list[tuple[FeedSchedule, str | None]], sent: float | None) -> None:
        """One message, enqueued at ``sent``: hand its feeds to the stream, wait until each is
        stored (or skipped). Any not stored sends the message back; those stored are skipped
        by their stamp."""
        jobs = [_Job(schedule, stamp, sent) for schedule, stamp in feeds]
        for job in jobs:
            self._intake.put(job)
        for job in jobs:
            while not job.done.wait(0.5):
                if self._stop.is_set() and not job.done.wait(5):
                    label = job.schedule.label
                    raise Redeliver(f"{label}: the worker stopped before it was stored")
        back = [job for job in jobs if job.redeliver]
        if back:
            raise Redeliver(f"{back[0].schedule.label}: {back[0].outcome}")

    def _abandon_waiting(self) -> None:
        while True:
            try:
                job = self._intake.get_nowait()
            except queue.Empty:
                break
            job.finish("not started: the worker stopped", redeliver=True)
        for job in list(self._in_flight.values()):
            job.finish("not stored: the worker stopped", redeliver=True)
        self._in_flight.clear()

    # the stream (the thread that owns the archive)

    def next_feed(self, block: bool) -> FeedSchedule | None:
        """:class:`podarchive.update.run.FeedSource`: the next message still worth a poll."""
        if self._resync.is_set():
            self._resync.clear()
            self._republish()
        try:
            job = self._intake.get_nowait()
        except queue.Empty:
            self._flush()  # idle: the due times stored so far go to the broker
            try:
                job = self._intake.get(timeout=0.05) if block else self._intake.get_nowait()
            except queue.Empty:
                if self._stop.is_set():
                    raise StopIteration from None
                return None
        skip = self._skip_reason(job)
        if skip is not None:
            self.counts.skipped += 1
            log.debug("%s: skipped: %s", job.schedule.label, skip)
            job.finish(f"skipped: {skip}")
            return None
        job.started = time.time()  # the message's clock: a scheduler's, maybe on another host
        self._in_flight[job.schedule.url] = job
        return job.schedule

    def _skip_reason(self, job: _Job) -> str | None:
        url = job.schedule.url
        if shard_of(url, self.shards) != self.shard:
            return f"belongs to shard {shard_of(url, self.shards)}, not {self.shard}"
        if url in self._in_flight:
            return "already being polled (a duplicated message)"
        assert self._archive is not None
        current = next(self._archive.due_stamps(url), None)
        # each skip also sets the broker's index right, so the feed is not claimed again
        # with the same stale stamp (a missed publish, an index from another layout)
        if current is not None:
            _, next_due_at, gone = current
            if gone:
                self._queue_publish([DueEntry(url, None, gone=True)])
                return "gone (410)"
            if next_due_at != job.stamp:
                self._queue_publish([DueEntry(url, next_due_at)])
                return "already polled for this due time (a duplicated or late message)"
        elif job.stamp is not None:
            self._queue_publish([DueEntry(url, None)])  # never stored here: due as new
            return "not in this shard's archive (a message from before a reshard?)"
        if job.sent is not None and job.sent <= self._unmoved.get(url, float("-inf")):
            return "polled since this message was sent (a duplicated message)"
        host = urlsplit(url).hostname or ""
        until = self._host_block(host)
        if until is not None:
            try:
                self.cluster.hold(self.shard, [url], until.timestamp())
            except BrokerError as e:
                log.warning("shard %d: %s", self.shard, e)
            return f"{host} asked us not to return before {iso(until)}"
        return None

    def _host_block(self, host: str) -> datetime | None:
        try:
            return self.hosts.blocked_until(host)
        except Abandoned:
            return None  # the fetch will meet the broker's trouble and be retried

    def _done(self, url: str, report: FeedReport | None) -> None:
        job = self._in_flight.pop(url, None)
        if report is None:
            self.counts.redelivered += 1
            if job is not None:
                job.finish("given up before it was stored", redeliver=True)
            return
        if report.ok:
            self.counts.polled += 1
        else:
            self.counts.failed += 1
        assert self._archive is not None
        if report.due is not None:  # as stored: no read of it back (#30)
            self._queue_publish([DueEntry(url, *report.due)])
        else:
            self._queue_publish(DueEntry(u, d, g) for u, d, g in self._archive.due_stamps(url))
        if job is not None and report.due is not None and report.due[0] == job.stamp:
            self._unmoved[url] = job.started  # the stamp alone would let a copy poll again
        else:
            self._unmoved.pop(url, None)
        if job is not None:
            if report.ok and job.schedule.media:
                self._want_media(job.schedule, report)
            job.finish("polled" if report.ok else f"failed: {report.error}")

    def _want_media(self, schedule: FeedSchedule, report: FeedReport) -> None:
        """A stored feed with ``media = true``: its due media to the media thread."""
        assert self._archive is not None
        assert self.media is not None
        state = self._archive.feed_state(report.moved_to or report.url)
        if state is not None:
            self.media.want(MediaFeed(schedule, state.id, report.label))

    def _queue_publish(self, entries: Iterable[DueEntry]) -> None:
        """Due times for the broker's index, sent :data:`PUBLISH_BATCH` at a time or when
        the stream is idle: a claim holds a feed for minutes, so a second's delay is safe,
        and one round trip per feed is not free. Lost in a crash, they are published by
        the next start, and a late message meanwhile is skipped (and sets the index right)."""
        for entry in entries:
            self._unpublished[entry.url] = entry
        if len(self._unpublished) >= PUBLISH_BATCH:
            self._flush()

    def _flush(self) -> None:
        if not self._unpublished:
            return
        try:
            self.cluster.publish(self.shard, list(self._unpublished.values()))
        except BrokerError as e:  # kept, and sent with the next batch
            log.debug("shard %d: due times not published yet: %s", self.shard, e)
            return
        self._unpublished.clear()

    def _republish(self) -> None:
        if self._archive is not None:
            try:
                self._publish_all(self._archive)
            except BrokerError as e:
                log.warning("shard %d: %s", self.shard, e)
                self._resync.set()


def run_workers(
    broker_url: str,
    shards: Sequence[int],
    directory: Path,
    *,
    settings: Settings | None = None,
    threads: int | None = None,
    stop: threading.Event,
) -> dict[int, WorkerCounts]:
    """``podarchive worker --shard K [--shard K2 …]``: one :class:`ShardWorker` per shard,
    each on its own thread with its own broker connection, until ``stop`` or until one of
    them fails (then the others stop too and the first error is raised)."""
    clusters = [Cluster(broker_url) for _ in shards]
    try:
        clusters[0].ping()
        if clusters[0].wait_for_shards(stop) is None:
            return {}  # stopped while waiting
        workers = [
            ShardWorker(c, k, directory, settings=settings, threads=threads)
            for c, k in zip(clusters, dict.fromkeys(shards), strict=False)
        ]
        errors: list[BaseException] = []
        results: dict[int, WorkerCounts] = {}

        def serve(worker: ShardWorker) -> None:
            try:
                results[worker.shard] = worker.run(stop)
            except BaseException as e:  # reported by the main thread
                errors.append(e)
                stop.set()

        running = [
            threading.Thread(target=serve, args=(w,), name=f"podarchive-shard-{w.shard}")
            for w in workers
        ]
        for thread in running:
            thread.start()
        while any(t.is_alive() for t in running):
            for thread in running:
                thread.join(0.2)
        if errors:
            raise errors[0]
        return results
    finally:
        for cluster in clusters:
            cluster.close()
