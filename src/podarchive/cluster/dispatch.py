"""``podarchive scheduler``: each due feed enqueued once, on its shard's queue.

Due-ness comes from the shards themselves: every worker publishes its archive's
``next_due_at`` (which each poll sets from the feed's schedule, back-off, Retry-After and
freshness hints) to the broker's due index. A cycle, every ``tick`` seconds:

1. reload the schedule files if they changed (a bad file keeps the last good schedule);
2. per shard whose worker has published its index: the feeds the index says are due, and
   the scheduled feeds the shard has never stored, are *claimed* (one atomic script: a
   claim pushes the feed's due time ``hold`` seconds on, so a second scheduler started by
   mistake finds nothing left to claim), then enqueued with the stamp they were due by,
   ``batch`` feeds of a shard to a message;
3. feeds in the index that no schedule lists any more are held an hour at a time, never
   polled.

A message lost with the broker (a restart without persistence) is enqueued again when its
hold runs out or when the worker publishes its index again, whichever is first; a late
duplicate is skipped by the worker. The scheduler keeps no state of its own worth keeping:
restart it at will, or run a spare (the claims keep them from doubling anything).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from podarchive.cluster.broker import Cluster
from podarchive.core.errors import BrokerError, ConfigError, one_line
from podarchive.daemon.loop import Fingerprint, fingerprint, run_loop
from podarchive.read.schedule_files import FeedSchedule
from podarchive.rules.shards import shard_of

log = logging.getLogger("podarchive")
HOLD = 900.0  # seconds a claimed feed is not claimed again (its message is being worked on)
UNSCHEDULED_HOLD = 3600.0  # a feed no schedule lists any more: looked at again in an hour
DUE_BATCH = 10_000
BATCH = 20  # feeds per message: a message's own cost spread thin (benchmarks/engines.md)


@dataclass(slots=True)
class CycleReport:
    enqueued: dict[int, int] = field(default_factory=dict)  # shard → messages enqueued
    waiting_for_worker: list[int] = field(default_factory=list)  # shards with no index yet
    unscheduled: int = 0

    @property
    def total(self) -> int:
        return sum(self.enqueued.values())


class ClusterScheduler:
    """Enqueues the cluster's due feeds; :meth:`cycle` once, :meth:`run` until stopped."""

    def __init__(
        self,
        cluster: Cluster,
        load: Callable[[], Sequence[FeedSchedule]],
        watch: Path | None = None,
        *,
        hold: float = HOLD,
        batch: int = BATCH,
        clock: Callable[[], float] = time.time,
        initial: Sequence[FeedSchedule] | None = None,
    ) -> None:
        """``initial``: the schedule already loaded (else ``load()`` gives it now)."""
        self.cluster, self.load, self.watch = cluster, load, watch
        self.hold, self.batch, self.clock = hold, max(1, batch), clock
        self.shards = cluster.require_shards()
        self._by_shard: dict[int, dict[str, FeedSchedule]] = {}
        self._fingerprint: Fingerprint | None = None
        self._new: dict[int, set[str]] = {}  # per shard: scheduled URLs to offer as new
        self._seen_sync: dict[int, str | None] = {}
        self._told: set[int] = set()  # shards whose missing worker was logged
        self._schedule: dict[str, FeedSchedule] = {}
        #: set to cycle at once (a WebSub notification, #29: :mod:`.push`)
        self.nudge = threading.Event()
        #: called at the start of each cycle, and on each schedule entry enqueued (#29)
        self.before_cycle: Callable[[], None] = lambda: None
        self.adjust: Callable[[FeedSchedule], FeedSchedule] = lambda feed: feed
        self._apply(self.load() if initial is None else initial)

    def schedule(self) -> dict[str, FeedSchedule]:
        """Every scheduled feed by URL (the last good schedule)."""
        return self._schedule

    def reload(self) -> bool:
        """Load the schedule files again; False (and the last good schedule kept) on error."""
        try:
            feeds = self.load()
        except Exception as e:  # no schedule file may end the scheduler (#23), as the daemon
            error = str(e) if isinstance(e, ConfigError) else f"{type(e).__name__}: {e}"
            log.error("schedule not reloaded: %s (the last good one stays)", one_line(error))
            return False
        self._apply(feeds)
        log.info("schedule reloaded: %d feeds", len(feeds))
        return True

    def _apply(self, feeds: Sequence[FeedSchedule]) -> None:
        """Group the schedule by shard; feeds new to it are offered as new on the next cycle."""
        if self.watch is not None:
            self._fingerprint = fingerprint(self.watch)
        by_shard: dict[int, dict[str, FeedSchedule]] = {k: {} for k in range(self.shards)}
        for feed in feeds:
            by_shard[shard_of(feed.url, self.shards)][feed.url] = feed
        for shard, feeds_here in by_shard.items():
            before = self._by_shard.get(shard, {})
            added = {url for url in feeds_here if url not in before}
            self._new.setdefault(shard, set()).update(added)
        self._by_shard = by_shard
        self._schedule = {url: feed for here in by_shard.values() for url, feed in here.items()}

    def cycle(self) -> CycleReport:
        """Claim and enqueue what is due now, shard by shard."""
        if self.watch is not None and fingerprint(self.watch) != self._fingerprint:
            self.reload()
        have = self.cluster.init_shards(self.shards)  # again, after a broker that lost it
        if have != self.shards:
            raise BrokerError(
                f"the cluster at {self.cluster.where} now has {have} shards, this scheduler "
                f"{self.shards}: restart it"
            )
        self.nudge.clear()
        self.before_cycle()
        report = CycleReport()
        for shard in range(self.shards):
            self._cycle_shard(shard, report)
        return report

    def _cycle_shard(self, shard: int, report: CycleReport) -> None:
        synced = self.cluster.synced(shard)
        if synced is None:
            report.waiting_for_worker.append(shard)
            if shard not in self._told:
                self._told.add(shard)
                log.info("shard %d: waiting for its worker to publish its due index", shard)
            return
        self._told.discard(shard)
        feeds = self._by_shard[shard]
        if self._seen_sync.get(shard) != synced:  # a fresh index: offer every feed again
            self._seen_sync[shard] = synced
            self._new[shard] = set(feeds)
        now = self.clock()
        candidates = list(self._new.get(shard, ()))  # dropped once claimed, not before
        unscheduled: list[str] = []
        while True:
            due = self.cluster.due_urls(shard, now, DUE_BATCH)
            candidates.extend(u for u in due if u in feeds)
            unscheduled.extend(u for u in due if u not in feeds)
            claimed = self.cluster.claim(shard, candidates, now, self.hold)
            self.cluster.hold(shard, unscheduled, now + UNSCHEDULED_HOLD)
            for start in range(0, len(claimed), self.batch):
                batch = claimed[start : start + self.batch]
                entries = [(self.adjust(feeds[c.url]), c.stamp) for c in batch]
                self.cluster.enqueue_batch(shard, entries)
            self._new[shard] = set()
            report.enqueued[shard] = report.enqueued.get(shard, 0) + len(claimed)
            report.unscheduled += len(unscheduled)
            if len(due) < DUE_BATCH:
                return
            candidates, unscheduled = [], []

    def run(self, stop: threading.Event, tick: float = 5.0) -> None:
        """Cycle every ``tick`` seconds until ``stop``; a broker outage is logged and waited
        out (the next cycle tries again), never fatal.

        The daemon's waiting loop (:func:`~podarchive.daemon.loop.run_loop`), woken by
        ``stop`` or :attr:`nudge`. The due times are in the broker, where workers publish them
        at any time, so each step looks at them again and none is known here: the loop
        sleeps a tick.
        """
        state = {"trouble": False}

        def step() -> None:
            state["trouble"] = self._logged_cycle(state["trouble"], tick)

        def stopping() -> None:
            stop.wait()
            self.nudge.set()

        threading.Thread(target=stopping, name="podarchive-stop", daemon=True).start()
        run_loop(step, wake=self.nudge, tick=tick, stopped=stop.is_set)

    def _logged_cycle(self, trouble: bool, tick: float) -> bool:
        """One :meth:`cycle`, logged; whether the broker is in trouble now."""
        try:
            report = self.cycle()
        except BrokerError as e:
            if not trouble:
                log.error("%s (trying again every %g s)", e, tick)
            return True
        if trouble:
            log.info("the broker is back")
        if report.total:
            shards = ", ".join(f"{k}: {n}" for k, n in report.enqueued.items() if n)
            log.info("enqueued %d due feeds (shard %s)", report.total, shards)
        return False
