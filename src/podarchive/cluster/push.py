"""WebSub on the cluster's scheduler (#29): ``podarchive scheduler --listen --public-url``.

The daemon's :class:`~podarchive.daemon.push.PushManager` and its endpoint
(:class:`~podarchive.daemon.push_http.PushServer`) run in the scheduler, over a store of
their own (:class:`BrokerPushStore`):

- **what a feed names** (its hub and ``rel="self"`` topic) is read from its shard's archive
  in ``--shards-dir``, read-only, beside the worker that writes it (the scheduler must see
  the shards' files); a feed is looked at when the scheduler starts and whenever its stamp
  in the due index changes (its worker polled it), every :data:`LOOK_EVERY` seconds;
- **the subscriptions** live in the broker (``podarchive:push:subs``, one JSON value per
  feed URL), where any scheduler of the cluster finds them: the scheduler keeps no state
  of its own, and a spare or restarted one carries on with the same secrets and tokens;
- **the notifications** are kept as evidence in the broker too (``podarchive:push:notices:
  <sha1 of the URL>``, the last :data:`~podarchive.store.push.NOTICES_KEPT`, each body cut
  at :data:`~podarchive.store.push.NOTICE_BODY_CAP`): the scheduler never writes a shard.

A valid notification makes the feed due now in the broker's index (its score set to 0) and
wakes the scheduler, which claims and enqueues it as any due feed: the worker polls it
through the normal pipeline (its stamp check, host politeness). While a subscription is
live, the schedule entry enqueued has its interval stretched to ``--push-every``.
"""

from __future__ import annotations

import base64
import dataclasses
import hashlib
import json
import time
from collections.abc import Collection, Sequence
from pathlib import Path

from podarchive.cluster.broker import PREFIX, Cluster, broker_errors
from podarchive.cluster.dispatch import ClusterScheduler
from podarchive.core.errors import BrokerError, PodarchiveError
from podarchive.core.settings import Settings, env_int
from podarchive.daemon.push import Links, PushManager, feed_links
from podarchive.daemon.push_http import PushServer
from podarchive.daemon.service import PushOptions
from podarchive.read.schedule_files import FeedSchedule
from podarchive.rules.push import Subscription
from podarchive.rules.shards import shard_of, shard_path
from podarchive.store.push import NOTICES_KEPT, PushNotice
from podarchive.store.reader import ArchiveReader
from podarchive.store.snapshots import SnapshotsMixin

LOOK_EVERY = 30  # seconds between looks for feeds polled since (PODARCHIVE_PUSH_LOOK_S)
SUBS_KEY = f"{PREFIX}:push:subs"


def notices_key(url: str) -> str:
    return f"{PREFIX}:push:notices:{hashlib.sha1(url.encode()).hexdigest()}"


def broker_subscriptions(cluster: Cluster) -> list[Subscription]:
    """The scheduler's WebSub subscriptions kept in the broker, by feed URL."""
    with broker_errors(cluster.url):
        raw = cluster.redis.hgetall(SUBS_KEY)
    subs = []
    for value in raw.values():
        try:
            subs.append(Subscription(**json.loads(value)))
        except (TypeError, ValueError):
            continue  # written by another version: subscribed again
    return sorted(subs, key=lambda sub: sub.feed_url)


class _ShardReader(SnapshotsMixin, ArchiveReader):
    """A shard archive opened to read, with the feed bodies' reads (a hub's links)."""


class BrokerPushStore:
    """The scheduler's :class:`~podarchive.daemon.push.PushStore`: subscriptions and
    notifications in the broker, links read from the shards' archives."""

    def __init__(self, cluster: Cluster, shards_dir: Path, shards: int) -> None:
        self.cluster, self.shards_dir, self.shards = cluster, shards_dir, shards

    def load(self) -> list[Subscription]:
        return broker_subscriptions(self.cluster)

    def links(self, urls: Collection[str]) -> Links | None:
        by_shard: dict[int, list[str]] = {}
        for url in urls:
            by_shard.setdefault(shard_of(url, self.shards), []).append(url)
        found: Links = {}
        for shard, here in sorted(by_shard.items()):
            path = shard_path(self.shards_dir, shard, self.shards)
            if not path.exists():  # its worker has not made it yet
                found.update(dict.fromkeys(here))
                continue
            with _ShardReader.open_to_read(path) as archive:
                found.update({url: feed_links(archive, url) for url in here})  # type: ignore[arg-type]
        return found

    def save(self, subs: Sequence[Subscription], notices: Sequence[PushNotice]) -> bool:
        try:
            self._save(subs, notices)
        except BrokerError:
            return False  # the broker is away (the scheduler says so): written later
        return True

    def _save(self, subs: Sequence[Subscription], notices: Sequence[PushNotice]) -> None:
        with broker_errors(self.cluster.url):
            pipe = self.cluster.redis.pipeline(transaction=False)
            for sub in subs:
                pipe.hset(SUBS_KEY, sub.feed_url, json.dumps(dataclasses.asdict(sub)))
            for notice in notices:
                value = {**dataclasses.asdict(notice), "body": base64.b64encode(notice.body)}
                value["body"] = value["body"].decode()
                pipe.lpush(notices_key(notice.feed_url), json.dumps(value))
                pipe.ltrim(notices_key(notice.feed_url), 0, NOTICES_KEPT - 1)
            pipe.execute()

    def notices(self, url: str) -> list[PushNotice]:
        """The feed's notifications kept, oldest first."""
        with broker_errors(self.cluster.url):
            raw = self.cluster.redis.lrange(notices_key(url), 0, -1)
        out = []
        for value in reversed(raw):
            fields = json.loads(value)
            fields["body"] = base64.b64decode(fields["body"])
            out.append(PushNotice(**fields))
        return out


class ClusterPush:
    """The scheduler's WebSub side: a :class:`PushManager` over :class:`BrokerPushStore`,
    its endpoint, and the hooks :class:`ClusterScheduler` calls each cycle."""

    def __init__(
        self,
        cluster: Cluster,
        scheduler: ClusterScheduler,
        settings: Settings,
        options: PushOptions,
        shards_dir: Path,
    ) -> None:
        self.cluster, self.scheduler = cluster, scheduler
        self.store = BrokerPushStore(cluster, shards_dir, scheduler.shards)
        self.manager = PushManager(
            None,
            settings,
            public_url=options.public_url,
            want=lambda url: scheduler.nudge.set(),  # the manager keeps the URL as pushed
            scheduled=scheduler.schedule,
            push_every=options.push_every,
            lease=options.lease,
            store=self.store,
        )
        self.server = PushServer(self.manager, options.listen)
        self.look_every = env_int("PODARCHIVE_PUSH_LOOK_S", LOOK_EVERY, 1, 86_400)
        self._stamps: dict[int, dict[str, str]] = {}
        self._looked = 0.0
        scheduler.before_cycle = self.before_cycle
        scheduler.adjust = self.manager.stretch

    def start(self) -> None:
        self.manager.start()  # the subscriptions loaded before a callback can arrive
        self.server.start()

    def stop(self) -> None:
        self.server.stop()
        self.manager.stop()

    def before_cycle(self) -> None:
        """On the scheduler's thread, before it claims: the feeds a notification made due
        are due now in the index; now and then, the feeds polled since are looked at."""
        schedule = self.scheduler.schedule()
        pushed = self.manager.take_pushed(list(schedule))
        try:
            for url in sorted(pushed):
                self.cluster.make_due(shard_of(url, self.scheduler.shards), [url])
        except PodarchiveError:
            self.manager.push_again(pushed)  # the broker is away: due when it is back
            raise
        if time.monotonic() - self._looked >= self.look_every:
            self._looked = time.monotonic()
            self._look_polled(schedule)

    def _look_polled(self, schedule: dict[str, FeedSchedule]) -> None:
        """Feeds whose stamp in the due index changed since the last look: their worker
        polled them, so their body may name a hub now (the first look only remembers)."""
        changed: list[str] = []
        for shard in range(self.scheduler.shards):
            stamps = self.cluster.stamps(shard)
            before = self._stamps.get(shard)
            if before is not None:
                changed.extend(u for u, s in stamps.items() if before.get(u) != s)
            self._stamps[shard] = stamps
        polled = [url for url in changed if url in schedule]
        if polled:
            self.manager.polled(polled)
