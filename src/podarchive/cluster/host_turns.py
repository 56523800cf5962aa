"""Per-host politeness over the whole cluster, kept in its broker (#16).

:class:`BrokerHostTurns` is a :class:`podarchive.net.hosts.HostTurns` whose state lives in
Redis, shared by every worker: at most ``per_host`` requests in flight to a host, ``gap``
seconds between the moments two are sent, and the Retry-After any worker was given. Two Lua
scripts take and mark a turn atomically; every turn is a lease, so a worker that dies
holding one frees it when the lease ends. It talks to Redis only through
:class:`podarchive.cluster.broker.Cluster`'s connection and error translation.
"""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from datetime import UTC, datetime

from podarchive.cluster.broker import PREFIX, Cluster, broker_errors, log
from podarchive.core.clock import iso
from podarchive.core.errors import Abandoned, BrokerError, HostBackoff

BLOCK_RECHECK = 2.0  # seconds a worker trusts what it last read of a host's Retry-After

# Per-host turns. KEYS: slots (sorted set: token → lease end), next start (ms), starting
# (the token of the request being started, only with a gap: the gap counts from when a
# request is sent, so none starts meanwhile). ARGV: token, limit, slot lease ms, start lease
# ms (0: no gap). Returns 0 (go) or the ms to wait before asking again.
_TAKE_TURN = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[2]) then return 25 end
if redis.call('EXISTS', KEYS[3]) == 1 then return 20 end
local nxt = tonumber(redis.call('GET', KEYS[2]) or '0')
if nxt > now then return nxt - now end
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[3]), ARGV[1])
redis.call('PEXPIRE', KEYS[1], ARGV[3])
if tonumber(ARGV[4]) > 0 then redis.call('SET', KEYS[3], ARGV[1], 'PX', ARGV[4]) end
return 0
"""
# The request was sent: the next may start ``gap`` ms from now. KEYS: next start, starting.
# ARGV: gap ms, token.
_SENT = """
if redis.call('GET', KEYS[2]) == ARGV[2] then redis.call('DEL', KEYS[2]) end
local gap = tonumber(ARGV[1])
if gap <= 0 then return 0 end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('SET', KEYS[1], now + gap, 'PX', gap)
return 0
"""


class BrokerHostTurns:
    """:class:`podarchive.net.hosts.HostTurns` held in the broker, for every worker at once: at
    most ``per_host`` requests in flight to a host and ``gap`` seconds between the moments
    two are sent, over the whole cluster; a host's Retry-After blocks every worker.

    A turn is a lease: a worker that dies holding one frees it when the lease ends (the
    fetch deadline plus a margin); the start of a request holds the host for at most the
    connect timeout plus a margin until the request is written.
    """

    def __init__(
        self, cluster: Cluster, per_host: int, gap: float, deadline: float, connect: float
    ) -> None:
        self._cluster = cluster
        self._take_turn = cluster.redis.register_script(_TAKE_TURN)
        self._sent = cluster.redis.register_script(_SENT)
        self._per_host = max(1, per_host)
        self._gap_ms = max(0, int(gap * 1000))
        self._lease_ms = int((deadline + 30) * 1000)
        self._start_ms = int((connect + 5) * 1000) if self._gap_ms else 0
        self._lock = threading.Lock()
        self._blocked: dict[str, datetime] = {}
        self._seen: dict[str, tuple[float, datetime | None]] = {}  # host → (asked at, until)

    @property
    def blocked(self) -> dict[str, datetime]:
        with self._lock:
            return dict(self._blocked)

    def _keys(self, host: str) -> tuple[str, str, str, str]:
        base = f"{PREFIX}:host:{host}"
        return f"{base}:slots", f"{base}:next", f"{base}:block", f"{base}:starting"

    @contextmanager
    def _broker(self) -> Iterator[None]:
        """A broker failure in the middle of a fetch is not the feed's fault: the fetch is
        given up (:class:`Abandoned`: nothing recorded) and started again by the run."""
        try:
            with broker_errors(self._cluster.url):
                yield
        except BrokerError as e:
            raise Abandoned(f"abandoned: {e}") from e

    def block(self, host: str, until: datetime) -> None:
        with self._lock:
            self._blocked[host] = max(until, self._blocked.get(host, until))
            self._seen[host] = (time.monotonic(), self._blocked[host])
        stamp = until.timestamp()
        try:
            with broker_errors(self._cluster.url):
                current = self._cluster.redis.get(self._keys(host)[2])
                if current is None or float(current) < stamp:
                    ms = max(1, int((stamp - time.time()) * 1000))
                    self._cluster.redis.set(self._keys(host)[2], stamp, px=ms)
        except BrokerError as e:  # this worker still knows it; the archive keeps it too
            log.warning("%s: Retry-After not shared with the cluster: %s", host, e)

    def blocked_until(self, host: str) -> datetime | None:
        """When the host lets us back (a Retry-After any worker was given), if later than now.
        Asked of the broker at most every :data:`BLOCK_RECHECK` seconds per host: a block is
        rare and long (Retry-After is seconds to days), a GET per request is not free."""
        now = time.monotonic()
        with self._lock:
            seen = self._seen.get(host)
        if seen is None or now - seen[0] > BLOCK_RECHECK:
            with self._broker():
                value = self._cluster.redis.get(self._keys(host)[2])
            until = None if value is None else datetime.fromtimestamp(float(value), UTC)
            with self._lock:
                if len(self._seen) > 10_000:
                    self._seen.clear()
                self._seen[host] = (now, until)
        else:
            until = seen[1]
        return until if until is not None and until > datetime.now(UTC) else None

    def check(self, host: str) -> None:
        until = self.blocked_until(host)
        if until is not None:
            raise HostBackoff(f"waiting: {host} asked us not to return before {iso(until)}")

    @contextmanager
    def slot(self, host: str) -> Iterator[Callable[[], None]]:
        """Wait for the host's turn in the cluster; yields ``sent``, as HostLimiter.slot."""
        slots, next_start, _, starting = self._keys(host)
        token = uuid.uuid4().hex
        while True:
            with self._broker():
                wait = int(
                    self._take_turn(
                        keys=[slots, next_start, starting],
                        args=[token, self._per_host, self._lease_ms, self._start_ms],
                    )
                )
            if wait <= 0:
                break
            time.sleep(wait / 1000)
        done = False

        def sent() -> None:
            nonlocal done
            if not done:
                done = True
                if not self._gap_ms:
                    return  # no gap, no start lease: nothing to tell the broker
                with self._broker():
                    self._sent(keys=[next_start, starting], args=[self._gap_ms, token])

        try:
            yield sent
        finally:
            try:
                sent()
            finally:
                with suppress(BrokerError), broker_errors(self._cluster.url):
                    self._cluster.redis.zrem(slots, token)  # else its lease frees it
