"""The daemon's podping watcher (#29) end to end, in process: a stub Hive JSON-RPC node on
loopback serving crafted blocks, a loopback feed, the archive's cursor. A trusted writer's
ping polls the feed once (again within 5 minutes: not again); other accounts' pings change
nothing; a restart reads the blocks made while stopped once; a hung node is one log line
and the next node answers; the cursor migration on a v20 archive; the status line."""

from __future__ import annotations

import json
import logging
import shutil
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import closing, contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

import pytest
from archive_rows import every_row, schema
from loopback import LoopbackSite, Reply

from podarchive.core.settings import Settings
from podarchive.daemon.podping import PodpingOptions, PodpingWatcher
from podarchive.daemon.scheduler import Daemon
from podarchive.daemon.service import cycle_update, podping_side
from podarchive.read.schedule_files import FeedSchedule
from podarchive.store import Archive
from podarchive.store import base as store_base
from podarchive.store.migrations_podping import _podping_v21
from podarchive.store.schema import MIGRATIONS
from podarchive.tasks.status import render_table, report

V14 = Path(__file__).parent / "fixtures" / "archives" / "v14.sqlite"
FIRST = 90_000_000


def block_id(number: int) -> str:
    return f"{number:08x}" + "0" * 32


def ping_op(writer: str, *iris: str, op_id: str = "pp_podcast_update") -> dict[str, Any]:
    body = {"version": "1.0", "medium": "podcast", "reason": "update", "iris": list(iris)}
    return {
        "type": "custom_json_operation",
        "value": {
            "required_auths": [],
            "required_posting_auths": [writer],
            "id": op_id,
            "json": json.dumps(body),
        },
    }


@dataclass
class StubHive:
    """A Hive API node: JSON-RPC 2.0 over POST, head and block ranges from ``blocks``."""

    site: LoopbackSite
    head: int = FIRST
    blocks: dict[int, dict[str, Any]] = field(default_factory=dict)
    ranges: list[tuple[int, int]] = field(default_factory=list)  # (start, count) given
    asked: list[int] = field(default_factory=list)  # the counts asked for
    hang: threading.Event | None = None  # set: answer; unset: hang until the test ends
    max_count: int = 1000  # blocks given per answer at most (a node may give fewer)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def __post_init__(self) -> None:
        handler_class = self.site._server.RequestHandlerClass
        handler_class.do_POST = lambda handler: self.site._handle(handler)  # type: ignore[attr-defined]
        self.site.handle("/rpc", self._answer)

    @property
    def url(self) -> str:
        return self.site.url("/rpc")

    def add_block(self, *ops: dict[str, Any]) -> int:
        with self.lock:
            self.head += 1
            stamp = datetime(2026, 12, 6, tzinfo=UTC) + timedelta(seconds=3 * self.head)
            self.blocks[self.head] = {
                "block_id": block_id(self.head),
                "timestamp": stamp.strftime("%Y-%m-%dT%H:%M:%S"),
                "transactions": [{"operations": list(ops)}] if ops else [],
            }
            return self.head

    def _answer(self, handler: BaseHTTPRequestHandler) -> None:
        length = int(handler.headers.get("Content-Length", "0"))
        request = json.loads(handler.rfile.read(length))
        if self.hang is not None:
            self.hang.wait(timeout=30)
        result = self._result(request["method"], request["params"])
        body = json.dumps({"jsonrpc": "2.0", "id": request.get("id"), "result": result}).encode()
        handler.send_response(200)
        handler.send_header("Content-Type", "application/json")
        handler.send_header("Content-Length", str(len(body)))
        handler.end_headers()
        handler.wfile.write(body)

    def _result(self, method: str, params: Any) -> Any:
        with self.lock:
            if method == "condenser_api.get_dynamic_global_properties":
                return {"head_block_number": self.head, "time": "2026-12-06T12:00:00"}
            assert method == "block_api.get_block_range", method
            start, count = params["starting_block_num"], params["count"]
            self.asked.append(count)
            empty = {"timestamp": "2026-12-06T00:00:00", "transactions": []}
            end = min(start + count, start + self.max_count, self.head + 1)
            self.ranges.append((start, end - start))
            return {
                "blocks": [
                    self.blocks.get(n, {"block_id": block_id(n), **empty})
                    for n in range(start, end)
                ]
            }


def wait_for(condition: Callable[[], object], timeout: float = 15.0, what: str = "") -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what or condition}"
        time.sleep(0.02)


def cursor(db: Path) -> int | None:
    with closing(sqlite3.connect(db)) as conn:
        if not conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'podping_cursor'").fetchone():
            return None
        row = conn.execute("SELECT block FROM podping_cursor").fetchone()
    return None if row is None else int(row[0])


def feeds_in(db: Path) -> int:
    with closing(sqlite3.connect(db)) as conn:
        return int(conn.execute("SELECT count(*) FROM feeds").fetchone()[0])


RSS = (
    b'<?xml version="1.0"?><rss version="2.0"><channel><title>Pinged</title>'
    b"<item><guid>ep-1</guid><title>Episode 1</title></item></channel></rss>"
)


@dataclass
class Running:
    daemon: Daemon
    watcher: PodpingWatcher
    thread: threading.Thread

    def stop(self) -> None:
        self.daemon.request("stop")
        self.thread.join(timeout=20)
        self.watcher.stop()
        assert not self.thread.is_alive()


@contextmanager
def daemon_with_podping(
    db: Path, feeds: list[FeedSchedule], tmp: Path, nodes: list[str], **options: Any
) -> Iterator[Running]:
    settings = Settings(host_gap=0, allow_private_hosts=True)
    daemon = Daemon(load=lambda: feeds, update=lambda f, s: None, watch=tmp, tick=0.1)  # type: ignore[arg-type,return-value]
    opts = PodpingOptions(nodes=tuple(nodes), every=0.05, **options)
    watcher = podping_side(daemon, db, settings, opts, None)
    assert watcher is not None
    daemon.update = cycle_update(db, settings, None, watcher)
    with Archive(db):
        pass
    watcher.start()
    thread = threading.Thread(target=daemon.run, args=(feeds,), kwargs={"signals": False})
    thread.start()
    running = Running(daemon, watcher, thread)
    try:
        yield running
    finally:
        if thread.is_alive():
            running.stop()


def feed_schedule(url: str) -> FeedSchedule:
    return FeedSchedule(url=url, every=timedelta(hours=1), allow_private_hosts=True)


def test_a_trusted_ping_polls_the_feed_once_and_others_change_nothing(tmp_path: Path) -> None:
    db = tmp_path / "a.db"
    with LoopbackSite() as site, LoopbackSite() as node_site:
        hive = StubHive(node_site)
        site.routes["/feed"] = Reply(RSS)
        feed_url = site.url("/feed")
        with daemon_with_podping(db, [feed_schedule(feed_url)], tmp_path, [hive.url]) as run:
            wait_for(lambda: cursor(db) == FIRST, what="the cursor at the head")
            wait_for(lambda: site.hits("/feed") == 1, what="the first poll")
            assert hive.ranges == []  # history is not replayed
            # other accounts, other ids, an unknown feed: nothing polled, nothing added
            hive.add_block(ping_op("mallory", feed_url))
            hive.add_block(ping_op("podping.aaa", feed_url, op_id="not_podping"))
            last = hive.add_block(ping_op("podping.bbb", site.url("/unknown")))
            wait_for(lambda: (cursor(db) or 0) >= last, what="the untrusted blocks read")
            assert site.hits("/feed") == 1
            assert feeds_in(db) == 1
            # a trusted writer's ping, naming the feed as normalized: polled once, at once
            upper = feed_url.replace("http://127.0.0.1", "HTTP://127.0.0.1") + "#frag"
            pinged = hive.add_block(ping_op("podping.aaa", upper))
            wait_for(lambda: site.hits("/feed") == 2, timeout=5, what="the pinged poll")
            assert (cursor(db) or 0) >= pinged
            # pinged again within 5 minutes: not polled again
            again = hive.add_block(ping_op("podping.ccc", feed_url))
            wait_for(lambda: (cursor(db) or 0) >= again, what="the second ping read")
            run.stop()
            assert site.hits("/feed") == 2
            assert [e for _, e in run.watcher.log if e.startswith("pinged")] == [
                f"pinged {feed_url}"
            ]


def test_a_restart_reads_the_blocks_made_while_stopped_once(tmp_path: Path) -> None:
    db = tmp_path / "a.db"
    with LoopbackSite() as site, LoopbackSite() as node_site:
        hive = StubHive(node_site)
        site.routes["/feed"] = Reply(RSS)
        feed_url = site.url("/feed")
        feeds = [feed_schedule(feed_url)]
        with daemon_with_podping(db, feeds, tmp_path, [hive.url]):
            wait_for(lambda: cursor(db) == FIRST, what="the cursor at the head")
            wait_for(lambda: site.hits("/feed") == 1, what="the first poll")
            for _ in range(3):
                hive.add_block()
            wait_for(lambda: cursor(db) == FIRST + 3, what="blocks read")
        for _ in range(120):  # made while stopped: more than one pass (catch_up 50)
            hive.add_block()
        pinged = hive.add_block(ping_op("podping.ddd", feed_url))
        for _ in range(5):
            hive.add_block()
        hive.max_count = 7  # fewer than asked for: the next request starts where it stopped
        with daemon_with_podping(db, feeds, tmp_path, [hive.url], catch_up=50):
            wait_for(lambda: site.hits("/feed") == 2, timeout=5, what="the ping made while stopped")
            wait_for(lambda: cursor(db) == hive.head, what="caught up")
        assert pinged > FIRST + 3
        read = sorted(n for start, count in hive.ranges for n in range(start, start + count))
        assert read == list(range(FIRST + 1, hive.head + 1))  # each block once, none missed
        assert max(hive.asked) <= 50
        assert site.hits("/feed") == 2


def test_a_hung_node_is_one_line_and_the_next_node_answers(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    db = tmp_path / "a.db"
    release = threading.Event()
    with LoopbackSite() as site, LoopbackSite() as hung_site, LoopbackSite() as node_site:
        hung = StubHive(hung_site, hang=release)
        hive = StubHive(node_site)
        site.routes["/feed"] = Reply(RSS)
        feed_url = site.url("/feed")
        nodes = [hung.url, hive.url]
        try:
            with daemon_with_podping(db, [feed_schedule(feed_url)], tmp_path, nodes, timeout=0.3):
                wait_for(lambda: cursor(db) == FIRST, what="the cursor, from the second node")
                wait_for(lambda: site.hits("/feed") == 1, what="the first poll")
                hive.add_block(ping_op("podping.eee", feed_url))
                wait_for(lambda: site.hits("/feed") == 2, timeout=5, what="the pinged poll")
        finally:
            release.set()
    failed = [r for r in caplog.records if "podping: node" in r.getMessage()]
    assert failed
    assert failed[0].getMessage().startswith(f"podping: node {hung.url} failed: timeout")
    assert all(r.exc_info is None and "\n" not in r.getMessage() for r in caplog.records)


def test_all_nodes_down_is_one_line_per_pass_and_watching_goes_on(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    db = tmp_path / "a.db"
    with LoopbackSite() as node_site:
        dead = node_site.url("/none")  # 404
    with Archive(db):
        pass
    settings = Settings(allow_private_hosts=True)
    watcher = PodpingWatcher(db, settings, PodpingOptions(nodes=(dead,), every=0.05), want=print)
    watcher.start()
    try:
        wait_for(lambda: len([e for _, e in watcher.log if e.startswith("node failed")]) >= 2)
    finally:
        watcher.stop()
    lines = [r.getMessage() for r in caplog.records if r.name == "podarchive.daemon"]
    assert [line for line in lines if "no Hive node answered" in line] == [
        "podping: no Hive node answered condenser_api.get_dynamic_global_properties; "
        "watching goes on"
    ]
    assert len([line for line in lines if "failed" in line]) == 1  # not one per pass
    assert all("\n" not in line for line in lines)
    assert cursor(db) is None


# the cursor's migration and status ---------------------------------------------------------


def v20_archive(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "archive.db"
    shutil.copy(V14, path)
    with monkeypatch.context() as m:
        m.setattr(store_base, "MIGRATIONS", store_base.MIGRATIONS[:20])
        m.setattr(store_base, "SCHEMA_VERSION", 20)
        with Archive(path) as v20:
            assert v20.schema_version == 20
    return path


def test_a_v20_archive_gets_the_cursor_table_keeping_every_row(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert MIGRATIONS[20] is _podping_v21
    path = v20_archive(tmp_path, monkeypatch)
    with closing(sqlite3.connect(path)) as conn:
        before = every_row(conn)
        schema_before = schema(conn)
    monkeypatch.setattr(store_base, "MIGRATIONS", store_base.MIGRATIONS[:21])
    monkeypatch.setattr(store_base, "SCHEMA_VERSION", 21)
    with Archive(path) as archive, Archive(tmp_path / "fresh.db") as fresh:
        assert archive.schema_version == fresh.schema_version == 21
        assert schema(archive.db.conn) == schema(fresh.db.conn)
        after = every_row(archive.db.conn)
        assert archive.podping_cursor() is None
        archive.save_podping_cursor(FIRST, "2026-12-06T12:00:00", "2026-12-06T12:00:01Z")
        archive.save_podping_cursor(FIRST + 1, None, "2026-12-06T12:00:04Z")
        got = archive.podping_cursor()
        names = archive.feed_names()
    assert after == before | {"podping_cursor": []}
    with closing(sqlite3.connect(path)) as conn:
        added = {name for _, name in set(schema(conn)) - set(schema_before)}
    assert added == {"podping_cursor"}
    assert got is not None
    assert (got.block, got.block_time) == (FIRST + 1, None)
    feed_urls = {url for _, url in names}
    assert feed_urls == {row[1] for row in before["feeds"]}
    assert feed_urls


def test_status_shows_the_cursor_when_there_is_one() -> None:
    now = datetime(2026, 12, 6, 12, 0, 10, tzinfo=UTC)
    cursor_row = {
        "block": FIRST,
        "block_time": "2026-12-06T12:00:00",
        "updated_at": "2026-12-06T12:00:04Z",
    }
    doc = report([], None, now, timedelta(days=1), podping=cursor_row)
    assert doc["podping"] == cursor_row
    text = render_table(doc, now)
    assert f"podping: block {FIRST} (made 2026-12-06T12:00:00), read 6s ago" in text
    assert "podping" not in render_table(report([], None, now, timedelta(days=1)), now)
