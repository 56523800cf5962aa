"""The daemon's podping watcher (#29): Hive blocks in, feeds made due now.

:class:`PodpingWatcher` runs on its own thread (``podarchive-podping``). Each pass asks a
Hive API node for the head block, reads the blocks after the archive's cursor (at most
``catch_up`` per pass, :data:`~podarchive.rules.podping.BLOCKS_PER_REQUEST` per request),
keeps the podpings signed by a trusted writer (:mod:`podarchive.rules.podping`), and makes
each archived feed they name due now the way a WebSub notification does (``want``, and the
cycle polls it though not due), each feed at most once per ``once_per``. The cursor is
written to the archive with the pass, so a restart resumes at the block after it. With no
cursor yet, the watcher starts at the head (history is not replayed). A node that fails,
hangs (``timeout``) or answers nonsense is one log line (until it answers again); the next
node is asked.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import Any, TypeVar

from podarchive.core.clock import iso, utcnow
from podarchive.core.errors import FetchError, PodarchiveError, one_line
from podarchive.core.settings import Settings
from podarchive.daemon.push import with_archive
from podarchive.daemon.pushed import PushedFeeds
from podarchive.net.hive import hive_call
from podarchive.rules.podping import (
    BLOCKS_PER_REQUEST,
    DEFAULT_NODES,
    DEFAULT_WRITERS,
    Ping,
    Span,
    feeds_named,
    head_block,
    next_range,
    read_span,
)
from podarchive.store import Archive

T = TypeVar("T")
log = logging.getLogger("podarchive.daemon")


@dataclass(frozen=True, slots=True)
class PodpingOptions:
    """``--podping``, ``--podping-node``, ``--podping-writer`` of ``daemon``, and the pace."""

    nodes: tuple[str, ...] = DEFAULT_NODES
    writers: tuple[str, ...] = DEFAULT_WRITERS
    every: float = 3.0  # seconds between passes (Hive makes a block every 3 s)
    catch_up: int = 200  # blocks read per pass at most (10 minutes of Hive)
    timeout: float = 10.0  # seconds one request to a node may take in all
    once_per: timedelta = field(default=timedelta(minutes=5))  # a feed made due at most so often


class PodpingWatcher:
    """Watch Hive for podpings; ``want(url)`` makes a feed due now; ``take_pushed`` gives the
    cycle the feeds a ping made due (polled though not due, as WebSub's)."""

    def __init__(
        self,
        db_path: Path,
        settings: Settings,
        options: PodpingOptions,
        *,
        want: Callable[[str], None],
        archive_mutex: threading.Lock | None = None,
    ) -> None:
        self.db_path, self.settings, self.options = db_path, settings, options
        self.want = want
        #: shared with the daemon's cycle (and the push thread): one archive writer at a time
        self.archive_mutex = archive_mutex or threading.Lock()
        self._lock = threading.Lock()
        self._pushed = PushedFeeds()
        self._last_wanted: dict[str, float] = {}
        self._node = 0  # the node that answered last: asked first
        self._failing: set[str] = set()  # nodes whose failure was logged, until they answer
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.log: list[tuple[float, str]] = []  # (monotonic, event) for tests

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="podarchive-podping", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=30)

    def take_pushed(self, urls: Collection[str]) -> set[str]:
        return self._pushed.take(urls)

    def push_again(self, urls: Collection[str]) -> None:
        self._pushed.put_back(urls)

    def _run(self) -> None:
        """Pass after pass until stopped; a failure is one line until the next success."""
        last_error: str | None = None
        while not self._stop.is_set():
            behind = False
            try:
                behind = self.step()
                last_error = None
            except PodarchiveError as e:
                if str(e) != last_error:
                    log.warning("podping: %s; watching goes on", one_line(str(e), 300))
                last_error = str(e)
            if not behind:
                self._stop.wait(self.options.every)

    def step(self) -> bool:
        """One pass; True when blocks are left to read (the next pass follows at once)."""
        head = self._call("condenser_api.get_dynamic_global_properties", [], head_block)
        found = self._with_archive(lambda a: (a.podping_cursor(),))
        if found is None:
            return False  # another process has the archive: the next pass
        cursor = found[0]
        if cursor is None:
            if self._save(head, None, []) is not None:
                self._event(f"started at block {head}")
            return False
        wanted = next_range(cursor.block, head, self.options.catch_up)
        if wanted is None:
            return False
        start, count = wanted
        spans = self._spans(start, start + count - 1)
        pings = [p for span in spans for p in span.pings]
        feeds = self._save(spans[-1].last, spans[-1].last_time, pings)
        if feeds is None:
            return False
        self._event(f"read blocks {start}-{spans[-1].last}: {len(pings)} pings")
        for url in feeds:
            self._nudge(url)
        return spans[-1].last < head

    def _spans(self, first: int, last: int) -> list[Span]:
        """Blocks ``first`` to ``last`` in requests of at most BLOCKS_PER_REQUEST; a node
        that gives fewer than asked (not made yet there) ends the pass where it stopped."""
        spans: list[Span] = []
        while first <= last:
            count = min(BLOCKS_PER_REQUEST, last - first + 1)
            spans.append(self._blocks(first, count))
            if spans[-1].last < first + count - 1:
                break
            first = spans[-1].last + 1
        return spans

    def _blocks(self, start: int, count: int) -> Span:
        params = {"starting_block_num": start, "count": count}
        return self._call(
            "block_api.get_block_range", params, lambda r: read_span(start, r, self.options.writers)
        )

    def _save(self, block: int, block_time: str | None, pings: list[Ping]) -> list[str] | None:
        def save(archive: Archive) -> list[str]:
            feeds = feeds_named(pings, archive.feed_names()) if pings else []
            archive.save_podping_cursor(block, block_time, iso(utcnow()))
            return feeds

        return self._with_archive(save)  # None: another process has it (read again next pass)

    def _nudge(self, url: str) -> None:
        now = time.monotonic()
        with self._lock:
            last = self._last_wanted.get(url)
            if last is not None and now - last < self.options.once_per.total_seconds():
                return
            self._last_wanted[url] = now
            self._pushed.add(url)
        self._event(f"pinged {url}")
        self.want(url)

    def _call(self, method: str, params: Any, read: Callable[[Any], T]) -> T:
        """``method`` on the first node that answers (and whose answer ``read`` takes)."""
        nodes = self.options.nodes
        for turn in range(len(nodes)):
            index = (self._node + turn) % len(nodes)
            try:
                result = hive_call(
                    nodes[index],
                    method,
                    params,
                    settings=self.settings,
                    timeout=self.options.timeout,
                )
                value = read(result)
            except (FetchError, ValueError) as e:
                self._event(f"node failed {nodes[index]}")
                if nodes[index] not in self._failing:  # one line until it answers again
                    self._failing.add(nodes[index])
                    log.warning("podping: node %s failed: %s", nodes[index], one_line(str(e), 200))
                continue
            if nodes[index] in self._failing:
                self._failing.discard(nodes[index])
                log.info("podping: node %s answers again", nodes[index])
            self._node = index
            return value
        raise FetchError(f"no Hive node answered {method}")

    def _with_archive(self, work: Callable[[Archive], T]) -> T | None:
        return with_archive(self.db_path, self.archive_mutex, work)

    def _event(self, what: str) -> None:
        self.log.append((time.monotonic(), what))
