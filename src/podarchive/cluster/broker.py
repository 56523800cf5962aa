"""The only Dramatiq and Redis user: the cluster's shared state, held in its broker.

A cluster is one Redis server (``--broker redis://host:6379/0``). It holds:

- ``podarchive:shards``: the number of shards, set by the first scheduler (``--shards``)
  and changed only by ``reshard``;
- per shard ``k``, the **due index** the workers publish from their archive's own
  ``next_due_at``: ``podarchive:due:k`` (sorted set: configured URL → due time, epoch
  seconds) and ``podarchive:stamps:k`` (hash: URL → ``next_due_at`` exactly as the archive
  has it, or ``gone``), with ``podarchive:synced:k`` naming the worker's last full sync;
- the **messages**, one Dramatiq queue per shard (``shard-k``, namespace ``podarchive.q``),
  each message one feed to poll: its schedule entry and the due stamp it was enqueued for;
- the **per-host politeness** every worker obeys
  (:class:`~podarchive.cluster.host_turns.BrokerHostTurns`, which goes through this
  module's connection): requests in flight per host, the gap between their starts, and
  Retry-After blocks;
- ``podarchive:workers``: each shard's worker heartbeat, for ``status``.

Enqueueing is a claim (:meth:`Cluster.claim`, one Lua script, atomic in Redis): a feed is
claimed only while its due time has passed, and claiming pushes that time ``hold`` seconds
on, so two schedulers never enqueue one feed twice. A worker's own check of the stamp
(:mod:`podarchive.cluster.worker`) makes a duplicated or redelivered message harmless.

Redis and Dramatiq errors are translated here into one-line :class:`BrokerError`.
"""

from __future__ import annotations

import json
import logging
import os
import socket
import threading
import uuid
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from datetime import UTC, date, datetime, timedelta
from typing import Any
from urllib.parse import urlsplit

import dramatiq
import redis
from dramatiq.brokers.redis import RedisBroker
from dramatiq.middleware import CurrentMessage, Retries

from podarchive.core.clock import iso
from podarchive.core.errors import BrokerError
from podarchive.core.settings import env_int
from podarchive.read.schedule_files import FeedSchedule

log = logging.getLogger("podarchive")

PREFIX = "podarchive"
QUEUE_NAMESPACE = "podarchive.q"  # Dramatiq's keys
ACTOR = "poll_feed"
GONE = "gone"
#: A dead worker's unacknowledged messages go back on its queue once its heartbeat is this
#: old (Dramatiq's own setting, 60 s by default; the tests make it shorter still).
HEARTBEAT_TIMEOUT_MS = 15000  # PODARCHIVE_BROKER_HEARTBEAT_MS
#: Per million broker calls, how many also requeue dead workers' messages (Dramatiq's
#: default, 1,000, makes a one-worker queue wait ~15 minutes after a crash).
MAINTENANCE_CHANCE = 50000  # PODARCHIVE_BROKER_MAINTENANCE
BATCH = 1000  # URLs per claim script call and per pipeline of index writes


def broker_tuning() -> tuple[int, int]:
    """Dramatiq's heartbeat timeout (ms) and maintenance chance, from the environment."""
    return (
        env_int("PODARCHIVE_BROKER_HEARTBEAT_MS", HEARTBEAT_TIMEOUT_MS, 100, 3_600_000),
        env_int("PODARCHIVE_BROKER_MAINTENANCE", MAINTENANCE_CHANCE, 0, 1_000_000),
    )


def _translate(e: Exception, url: str) -> BrokerError:
    where = _public(url)
    if isinstance(e, redis.AuthenticationError):
        return BrokerError(f"broker {where} refused the credentials")
    if isinstance(e, redis.ConnectionError | redis.TimeoutError | OSError):
        reason = str(e).splitlines()[0] if str(e) else type(e).__name__
        return BrokerError(f"cannot reach the broker at {where}: {reason}")
    return BrokerError(f"broker {where}: {type(e).__name__}: {str(e).splitlines()[0]}")


def _public(url: str) -> str:
    """The broker URL without its password, for messages."""
    parts = urlsplit(url)
    host = parts.hostname or "localhost"
    port = f":{parts.port}" if parts.port else ""
    return f"{parts.scheme}://{host}{port}{parts.path}"


@contextmanager
def broker_errors(url: str) -> Iterator[None]:
    """Redis errors inside the block become one-line :class:`BrokerError`."""
    try:
        yield
    except redis.RedisError as e:
        raise _translate(e, url) from e
    except OSError as e:
        raise _translate(e, url) from e


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def shards_key() -> str:
    return f"{PREFIX}:shards"


def due_key(shard: int) -> str:
    return f"{PREFIX}:due:{shard}"


def stamps_key(shard: int) -> str:
    return f"{PREFIX}:stamps:{shard}"


def synced_key(shard: int) -> str:
    return f"{PREFIX}:synced:{shard}"


def workers_key() -> str:
    return f"{PREFIX}:workers"


def queue_name(shard: int) -> str:
    return f"shard-{shard}"


# the messages ---------------------------------------------------------------------------


def schedule_to_message(schedule: FeedSchedule) -> dict[str, Any]:
    """A schedule entry as JSON values (timedeltas as seconds, a date as ISO text)."""
    values = asdict(schedule)
    for name in ("every", "page_every"):
        value = values[name]
        values[name] = None if value is None else value.total_seconds()
    since = values.get("media_since")
    values["media_since"] = None if since is None else since.isoformat()
    values["media_types"] = list(values.get("media_types", ()))
    return values


def schedule_from_message(values: dict[str, Any]) -> FeedSchedule:
    """The inverse of :func:`schedule_to_message`; unknown keys are ignored (a newer
    scheduler), so a message never fails a worker for a field it does not know."""
    known = set(FeedSchedule.__dataclass_fields__)
    kwargs = {k: v for k, v in values.items() if k in known}
    for name in ("every", "page_every"):
        if kwargs.get(name) is not None:
            kwargs[name] = timedelta(seconds=float(kwargs[name]))
    if kwargs.get("media_since") is not None:
        kwargs["media_since"] = date.fromisoformat(kwargs["media_since"])
    if "media_types" in kwargs:
        kwargs["media_types"] = tuple(kwargs["media_types"])
    return FeedSchedule(**kwargs)


def due_score(next_due_at: str | None) -> float:
    """The due index's score for a stored ``next_due_at`` (None: due now)."""
    if not next_due_at:
        return 0.0
    try:
        stamp = datetime.fromisoformat(next_due_at.replace("Z", "+00:00"))
    except ValueError:
        return 0.0
    if stamp.tzinfo is None:
        stamp = stamp.replace(tzinfo=UTC)
    return stamp.timestamp()


class Redeliver(BrokerError):
    """Raised by a message's handler: the feed was not stored (the worker is stopping); the
    message goes back on its queue, nothing is lost. A fetch the broker failed under is
    started again by the worker itself (:mod:`podarchive.update.run`), not handed back."""


@dataclass(frozen=True, slots=True)
class DueEntry:
    """One feed of a shard, as its worker publishes it to the due index."""

    url: str
    next_due_at: str | None  # as the archive has it
    gone: bool = False


@dataclass(frozen=True, slots=True)
class Claimed:
    """A feed a scheduler claimed: enqueue it with the stamp it was due by."""

    url: str
    stamp: str | None  # None: the shard has never stored this feed


# Lua: atomic in Redis, so two schedulers (or two threads) cannot both claim a feed.
_CLAIM = """
local now = tonumber(ARGV[1])
local hold = tonumber(ARGV[2])
local out = {}
for i = 3, #ARGV do
  local url = ARGV[i]
  local score = redis.call('ZSCORE', KEYS[1], url)
  local due
  if score then
    due = tonumber(score) <= now
  else
    due = redis.call('HEXISTS', KEYS[2], url) == 0
  end
  if due then
    redis.call('ZADD', KEYS[1], now + hold, url)
    table.insert(out, url)
    table.insert(out, redis.call('HGET', KEYS[2], url) or '')
  end
end
return out
"""


class Cluster:
    """A connection to the cluster's broker. Thread-safe (redis-py pools connections)."""

    def __init__(self, url: str, *, connect_timeout: float = 5.0) -> None:
        self._tuning = broker_tuning()  # out of range: one line, before any work
        self.url = url
        self.where = _public(url)
        try:
            self.redis = redis.Redis.from_url(
                url,
                socket_connect_timeout=connect_timeout,
                socket_timeout=30,
                health_check_interval=30,
            )
        except ValueError as e:
            raise BrokerError(f"not a Redis URL: {_public(url)} ({e})") from e
        self._claim = self.redis.register_script(_CLAIM)
        self._dramatiq: RedisBroker | None = None

    def ping(self) -> None:
        with broker_errors(self.url):
            self.redis.ping()

    def close(self) -> None:
        self.redis.close()

    # the cluster's settings

    def shards(self) -> int | None:
        """The cluster's number of shards; None before a scheduler set it."""
        with broker_errors(self.url):
            value = self.redis.get(shards_key())
        return None if value is None else int(value)

    def require_shards(self) -> int:
        shards = self.shards()
        if shards is None:
            raise BrokerError(
                f"no cluster at {self.where} yet: start 'podarchive scheduler --shards N' first"
            )
        return shards

    def wait_for_shards(self, stop: threading.Event, poll: float = 1.0) -> int | None:
        """The cluster's number of shards, waiting (until ``stop``) for a scheduler to set
        it: a worker may start first (systemd starts units in any order)."""
        told = False
        while not stop.is_set():
            shards = self.shards()
            if shards is not None:
                return shards
            if not told:
                log.info("waiting for 'podarchive scheduler --shards N' to set up %s", self.where)
                told = True
            stop.wait(poll)
        return None

    def init_shards(self, shards: int) -> int:
        """Set the number of shards unless one is set; returns the cluster's number."""
        with broker_errors(self.url):
            self.redis.set(shards_key(), shards, nx=True)
        return self.require_shards()

    def set_shards(self, shards: int) -> None:
        """After a reshard: the new number, and every shard's due index dropped (each worker
        publishes its own again when it starts)."""
        with broker_errors(self.url):
            old = self.shards() or 0
            pipe = self.redis.pipeline()
            for shard in range(max(old, shards)):
                pipe.delete(due_key(shard), stamps_key(shard), synced_key(shard))
            pipe.delete(workers_key())
            pipe.set(shards_key(), shards)
            pipe.execute()

    # the due index (written by a shard's worker, read by schedulers)

    def publish(self, shard: int, entries: Iterable[DueEntry]) -> int:
        """Write feeds' due times into the shard's index; returns how many."""
        with broker_errors(self.url):
            return self._write_index(due_key(shard), stamps_key(shard), entries)

    def sync(self, shard: int, entries: Iterable[DueEntry]) -> int:
        """Replace the shard's whole index with ``entries`` (a worker starting): the index
        is rebuilt under temporary keys and renamed, so schedulers never see it half done."""
        token = uuid.uuid4().hex
        due_tmp, stamps_tmp = f"{due_key(shard)}:{token}", f"{stamps_key(shard)}:{token}"
        with broker_errors(self.url):
            count = self._write_index(due_tmp, stamps_tmp, entries)
            swap = self.redis.pipeline(transaction=True)
            swap.delete(due_key(shard), stamps_key(shard))
            if self.redis.exists(due_tmp):
                swap.rename(due_tmp, due_key(shard))
            if self.redis.exists(stamps_tmp):
                swap.rename(stamps_tmp, stamps_key(shard))
            swap.set(synced_key(shard), f"{iso(datetime.now(UTC))} {token}")
            swap.execute()
        return count

    def _write_index(self, due: str, stamps: str, entries: Iterable[DueEntry]) -> int:
        """Each entry into the sorted set ``due`` (gone: out of it) and the hash ``stamps``,
        :data:`BATCH` to a round trip; returns how many."""
        count = 0
        pipe = self.redis.pipeline(transaction=False)
        for entry in entries:
            if entry.gone:
                pipe.zrem(due, entry.url)
                pipe.hset(stamps, entry.url, GONE)
            else:
                pipe.zadd(due, {entry.url: due_score(entry.next_due_at)})
                pipe.hset(stamps, entry.url, entry.next_due_at or "")
            count += 1
            if count % BATCH == 0:
                pipe.execute()
        pipe.execute()
        return count

    def synced(self, shard: int) -> str | None:
        """The shard's last full sync (its id), None when its index was never published."""
        with broker_errors(self.url):
            value = self.redis.get(synced_key(shard))
        return None if value is None else _text(value)

    def due_urls(self, shard: int, now: float, limit: int = 10_000) -> list[str]:
        """URLs the shard's index says are due at ``now`` (epoch seconds), earliest first."""
        with broker_errors(self.url):
            urls = self.redis.zrangebyscore(due_key(shard), "-inf", now, start=0, num=limit)
        return [_text(u) for u in urls]

    def claim(self, shard: int, urls: Sequence[str], now: float, hold: float) -> list[Claimed]:
        """Of ``urls``, those due (or never stored, never gone) claimed for enqueueing, their
        due time pushed ``hold`` seconds on. Atomic: a URL is claimed by one caller."""
        claimed: list[Claimed] = []
        with broker_errors(self.url):
            for start in range(0, len(urls), BATCH):
                batch = list(urls[start : start + BATCH])
                keys = [due_key(shard), stamps_key(shard)]
                out = self._claim(keys=keys, args=[now, hold, *batch])
                for i in range(0, len(out), 2):
                    claimed.append(Claimed(_text(out[i]), _text(out[i + 1]) or None))
        return claimed

    def hold(self, shard: int, urls: Iterable[str], until: float) -> None:
        """Push these feeds' due time to ``until`` (a feed not scheduled, a host's block)."""
        with broker_errors(self.url):
            mapping = dict.fromkeys(urls, until)
            if mapping:
                self.redis.zadd(due_key(shard), mapping, xx=True)

    def make_due(self, shard: int, urls: Iterable[str]) -> None:
        """Make these feeds of the index due now (a WebSub notification, #29); a feed the
        index does not hold is due already (never stored) or gone (left so)."""
        self.hold(shard, urls, 0.0)

    def stamps(self, shard: int) -> dict[str, str]:
        """The shard's stamps (URL → ``next_due_at`` as its archive has it, or ``gone``)."""
        with broker_errors(self.url):
            raw = self.redis.hgetall(stamps_key(shard))
        return {_text(k): _text(v) for k, v in raw.items()}

    def index_size(self, shard: int) -> tuple[int, int]:
        """Feeds in the shard's index: (polled, gone)."""
        with broker_errors(self.url):
            stamps = self.redis.hlen(stamps_key(shard))
            due = self.redis.zcard(due_key(shard))
        return due, stamps - due

    # the messages

    def dramatiq_broker(self) -> RedisBroker:
        """Dramatiq's broker over this connection (one per process)."""
        if self._dramatiq is None:
            make: Any = RedisBroker  # untyped
            self._dramatiq = make(
                client=self.redis,
                namespace=QUEUE_NAMESPACE,
                middleware=[
                    Retries(max_retries=5, min_backoff=1_000, max_backoff=60_000),
                    CurrentMessage(),  # the message's enqueue time, for the worker's skips
                ],
                heartbeat_timeout=self._tuning[0],
                maintenance_chance=self._tuning[1],
            )
        return self._dramatiq

    def enqueue(self, shard: int, schedule: FeedSchedule, stamp: str | None) -> None:
        """One message: poll this feed on its shard, if it is still due by ``stamp``."""
        self.enqueue_batch(shard, [(schedule, stamp)])

    def enqueue_batch(self, shard: int, feeds: Sequence[tuple[FeedSchedule, str | None]]) -> None:
        """One message for several feeds of a shard (a message costs ~0.75 ms of CPU over
        producer, broker and worker: benchmarks/engines.md), each polled if still due by
        its stamp. It is acknowledged once every one of them is stored."""
        message: dramatiq.Message[Any] = dramatiq.Message(
            queue_name=queue_name(shard),
            actor_name=ACTOR,
            args=(),
            kwargs={"feeds": [[schedule_to_message(f), stamp] for f, stamp in feeds]},
            options={},
        )
        with broker_errors(self.url):
            self.dramatiq_broker().enqueue(message)

    def queued(self, shard: int) -> int:
        """Messages waiting on the shard's queue (not those being worked on)."""
        with broker_errors(self.url):
            return int(self.redis.llen(f"{QUEUE_NAMESPACE}:{queue_name(shard)}"))

    def consume(
        self,
        shard: int,
        handle: Callable[[list[tuple[FeedSchedule, str | None]], float | None], None],
        *,
        threads: int,
    ) -> dramatiq.Worker:
        """Start a Dramatiq worker running ``handle([(schedule, stamp), …], sent)`` for each
        message of the shard's queue on ``threads`` threads, ``sent`` the time it was first
        enqueued (epoch seconds, the sender's clock); the caller stops it (``worker.stop()``)."""
        broker = self.dramatiq_broker()

        def poll_feed(feeds: list[list[Any]]) -> None:
            message = CurrentMessage.get_current_message()
            sent = None if message is None else message.message_timestamp / 1000
            try:
                handle([(schedule_from_message(f), stamp) for f, stamp in feeds], sent)
            except Redeliver as e:  # retried by Dramatiq, without an error in its log
                raise dramatiq.Retry(str(e), delay=1_000) from e

        declare: Any = dramatiq.actor  # its overloads do not know the untyped RedisBroker
        declare(poll_feed, actor_name=ACTOR, queue_name=queue_name(shard), broker=broker)
        worker = dramatiq.Worker(
            broker, queues={queue_name(shard)}, worker_threads=threads, worker_timeout=200
        )
        with broker_errors(self.url):
            worker.start()
        return worker

    # workers' heartbeats

    def beat(self, shard: int, info: dict[str, Any]) -> None:
        with broker_errors(self.url):
            self.redis.hset(workers_key(), str(shard), json.dumps(info, sort_keys=True))

    def workers(self) -> dict[int, dict[str, Any]]:
        with broker_errors(self.url):
            raw = self.redis.hgetall(workers_key())
        beats = {}
        for key, value in raw.items():
            try:
                beats[int(key)] = json.loads(value)
            except ValueError:
                continue
        return beats


def worker_identity() -> dict[str, Any]:
    return {"host": socket.gethostname(), "pid": os.getpid()}
