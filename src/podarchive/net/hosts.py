"""Per-host politeness: how many requests go to one host at once, how far apart they start,
and none before a time the host asked for (Retry-After).

:class:`HostTurns` is what :class:`podarchive.net.fetch.Fetcher` asks for a turn;
:class:`HostLimiter` keeps the rules in one process (``run``, the daemon, backfill). The
cluster keeps the same rules in its broker, for every worker at once
(:class:`podarchive.cluster.host_turns.BrokerHostTurns`).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from datetime import datetime
from typing import Protocol

from podarchive.core.clock import iso, utcnow
from podarchive.core.errors import HostBackoff


class HostTurns(Protocol):
    """Per-host politeness as a :class:`Fetcher` asks for it: :class:`HostLimiter` in one
    process; the cluster's limiter holds the same limit and gap in its broker (#16)."""

    @property
    def blocked(self) -> dict[str, datetime]: ...

    def block(self, host: str, until: datetime) -> None: ...

    def check(self, host: str) -> None: ...

    def slot(self, host: str) -> AbstractContextManager[Callable[[], None]]: ...


class HostLimiter:
    """Per host: at most ``per_host`` requests in flight, ``gap`` seconds between the moments
    they are sent, and none at all before a time the host asked for (Retry-After)."""

    def __init__(
        self, per_host: int, gap: float = 0.0, blocked: dict[str, datetime] | None = None
    ) -> None:
        self._per_host = max(1, per_host)
        self._gap = max(0.0, gap)
        self._lock = threading.Lock()
        self._semaphores: dict[str, threading.Semaphore] = {}
        self._starters: dict[str, threading.Lock] = {}
        self._next_start: dict[str, float] = {}
        self.blocked: dict[str, datetime] = dict(blocked or {})

    def block(self, host: str, until: datetime) -> None:
        with self._lock:
            self.blocked[host] = max(until, self.blocked.get(host, until))

    def check(self, host: str) -> None:
        with self._lock:
            until = self.blocked.get(host)
        if until is not None and until > utcnow():
            stamp = iso(until)
            raise HostBackoff(f"waiting: {host} asked us not to return before {stamp}")

    @contextmanager
    def slot(self, host: str) -> Iterator[Callable[[], None]]:
        """Wait for a turn at ``host``; yields ``sent``, to call once the request is written.

        Until ``sent()`` (or the end of the block) no other request to the host starts, and
        the next one waits ``gap`` seconds from that moment: connection setup of varying
        length cannot bunch the requests up.
        """
        semaphore, starter = self._semaphores.get(host), self._starters.get(host)
        if semaphore is None or starter is None:  # made once per host, not at every request (#30)
            with self._lock:
                semaphore = self._semaphores.setdefault(host, threading.Semaphore(self._per_host))
                starter = self._starters.setdefault(host, threading.Lock())
        with semaphore:
            if self._gap <= 0:
                yield lambda: None
                return
            starter.acquire()  # released by sent(), possibly inside the block
            done = False

            def sent() -> None:
                nonlocal done
                if not done:
                    done = True
                    with self._lock:
                        self._next_start[host] = time.monotonic() + self._gap
                    starter.release()

            try:
                with self._lock:
                    wait = self._next_start.get(host, 0.0) - time.monotonic()
                if wait > 0:
                    time.sleep(wait)
                yield sent
            finally:
                sent()
