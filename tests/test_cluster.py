"""The cluster (#16) against a real Redis: claims, per-host turns, and whole processes.

The end-to-end test runs what an operator runs: two ``podarchive scheduler`` processes (one
started by mistake), two ``podarchive worker`` processes keeping two shards each of four,
feeds on a loopback server whose request log is the judge. Then the faults: a duplicated
message, a worker killed with SIGKILL in the middle of a feed, the broker restarted with
everything it held lost (also while a worker's pages are in flight, #23). Nothing may be
lost, no feed left in flight, and no feed polled twice for one due time.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from functools import partial
from http.server import BaseHTTPRequestHandler
from pathlib import Path

import pytest
from conftest import FAST_ENV
from hypothesis import given
from hypothesis import strategies as st
from loopback import LoopbackSite
from redis_server import RedisServer

from podarchive.cluster.broker import (
    Cluster,
    schedule_from_message,
    schedule_to_message,
)
from podarchive.cluster.host_turns import BrokerHostTurns
from podarchive.cluster.worker import ShardWorker
from podarchive.core.errors import HostBackoff, StorageError
from podarchive.read.schedule_files import FeedSchedule
from podarchive.rules.shards import shard_of, shard_path
from podarchive.store import Archive

SHARDS = 4
CLUSTER_ENV = {
    **FAST_ENV,
    "PODARCHIVE_BROKER_HEARTBEAT_MS": "1500",  # a killed worker's message back in ~2 s
    "PODARCHIVE_BROKER_MAINTENANCE": "1000000",  # every broker call looks for dead workers
    "PODARCHIVE_PROCESSES": "1",
}
PATIENCE = 120.0  # seconds an event may take on a loaded machine before the test fails


@pytest.fixture
def redis_server(tmp_path: Path) -> Iterator[RedisServer]:
    with RedisServer(tmp_path / "redis") as server:
        yield server


@pytest.fixture
def cluster(redis_server: RedisServer) -> Iterator[Cluster]:
    c = Cluster(redis_server.url)
    yield c
    c.close()


def rss(name: str, episodes: int = 3) -> str:
    items = "".join(
        f"<item><title>{name} episode {i}</title><guid>{name}-{i}</guid>"
        f"<description>&lt;p&gt;Notes {i} with &lt;a href='https://example.com/{name}/{i}'"
        f"&gt;a link&lt;/a&gt;&lt;/p&gt;</description>"
        f"<pubDate>Mon, 0{i + 1} Jun 2026 10:00:00 GMT</pubDate></item>"
        for i in range(episodes)
    )
    return (
        "<?xml version='1.0' encoding='utf-8'?><rss version='2.0'><channel>"
        f"<title>{name}</title><link>https://example.com/{name}</link>"
        f"<description>The {name} show</description>{items}</channel></rss>"
    )


def wait_for(what: str, check: Callable[[], bool], patience: float = PATIENCE) -> None:
    """Until ``check()`` holds; the test fails (naming ``what``) if it never does."""
    deadline = time.monotonic() + patience
    while not check():
        if time.monotonic() > deadline:
            pytest.fail(f"never happened: {what}")
        time.sleep(0.05)


# the messages and the claims -------------------------------------------------------------


@given(
    every=st.one_of(st.none(), st.integers(60, 10**6)),
    page_every=st.one_of(st.none(), st.integers(3600, 10**6)),
    name=st.one_of(st.none(), st.text(max_size=20)),
    pages=st.booleans(),
)
def test_a_schedule_survives_the_message(
    every: int | None, page_every: int | None, name: str | None, pages: bool
) -> None:
    schedule = FeedSchedule(
        url="https://example.com/feed",
        name=name,
        every=None if every is None else timedelta(seconds=every),
        cron="0 * * * *" if every is None else None,
        pages=pages,
        page_every=None if page_every is None else timedelta(seconds=page_every),
        source="schedules/x.toml",
    )
    assert schedule_from_message(schedule_to_message(schedule)) == schedule


def test_a_message_from_a_newer_scheduler_is_read() -> None:
    values = {**schedule_to_message(FeedSchedule(url="https://example.com/f")), "new_key": 1}
    assert schedule_from_message(values).url == "https://example.com/f"


def test_two_schedulers_never_claim_one_feed(redis_server: RedisServer) -> None:
    """Eight claimants at once, two connections: every feed claimed by exactly one."""
    urls = [f"https://example.com/{i}" for i in range(3000)]
    clients = [Cluster(redis_server.url) for _ in range(2)]
    claimed: list[list[str]] = [[] for _ in range(8)]
    start = threading.Barrier(8)

    def claim(k: int) -> None:
        start.wait()
        got = clients[k % 2].claim(0, urls, now=time.time(), hold=600)
        claimed[k] = [c.url for c in got]

    threads = [threading.Thread(target=claim, args=(k,)) for k in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    everything = [u for part in claimed for u in part]
    assert sorted(everything) == sorted(urls)  # none lost, none twice
    again = clients[0].claim(0, urls, now=time.time(), hold=600)
    assert again == []  # held: not claimed again until the hold runs out
    later = clients[0].claim(0, urls[:5], now=time.time() + 601, hold=600)
    assert [c.url for c in later] == urls[:5]
    for c in clients:
        c.close()


def test_a_claim_follows_the_shards_own_due_times(cluster: Cluster) -> None:
    from podarchive.cluster.broker import DueEntry

    now = datetime(2026, 12, 3, 12, tzinfo=UTC)
    past, future = "2026-12-03T11:00:00Z", "2026-12-03T13:00:00Z"
    cluster.sync(
        1,
        [
            DueEntry("https://a/due", past),
            DueEntry("https://a/later", future),
            DueEntry("https://a/gone", None, gone=True),
        ],
    )
    urls = ["https://a/due", "https://a/later", "https://a/gone", "https://a/new"]
    got = cluster.claim(1, urls, now=now.timestamp(), hold=60)
    assert {(c.url, c.stamp) for c in got} == {("https://a/due", past), ("https://a/new", None)}
    assert cluster.due_urls(1, now.timestamp()) == []  # both held now
    assert cluster.synced(1) is not None
    assert cluster.synced(2) is None


# per-host politeness, held in the broker ---------------------------------------------------


def test_the_per_host_limit_and_gap_hold_across_workers(redis_server: RedisServer) -> None:
    """Two workers' limiters (two connections), six threads: never more than two requests
    in flight to the host, and each start at least the gap after the one before."""
    workers = [Cluster(redis_server.url) for _ in range(2)]
    turns = [BrokerHostTurns(w, per_host=2, gap=0.05, deadline=30, connect=5) for w in workers]
    lock = threading.Lock()
    in_flight, most, starts = [0], [0], []

    def request(k: int) -> None:
        for _ in range(3):
            with turns[k % 2].slot("feeds.example.com") as sent:
                with lock:
                    in_flight[0] += 1
                    most[0] = max(most[0], in_flight[0])
                    starts.append(time.monotonic())
                sent()
                time.sleep(0.15)  # longer than the gap: a second request starts meanwhile
                with lock:
                    in_flight[0] -= 1

    threads = [threading.Thread(target=request, args=(k,)) for k in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(starts) == 18
    assert most[0] == 2
    gaps = [b - a for a, b in zip(starts, starts[1:], strict=False)]
    assert min(gaps) >= 0.045  # a lower bound: a loaded machine only makes gaps longer
    for w in workers:
        w.close()


def test_a_retry_after_given_to_one_worker_holds_every_worker(
    redis_server: RedisServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Seen by every worker: at once by one that had not asked about the host, and by one
    that had within BLOCK_RECHECK seconds (made 0 here, not waited for)."""
    import podarchive.cluster.host_turns as host_turns

    one, other, third = (Cluster(redis_server.url) for _ in range(3))
    a, b, c = (
        BrokerHostTurns(w, per_host=2, gap=0, deadline=30, connect=5) for w in (one, other, third)
    )
    c.check("feeds.example.com")  # nothing yet, and c remembers that for a while
    a.block("feeds.example.com", datetime.now(UTC) + timedelta(hours=1))
    with pytest.raises(HostBackoff, match="asked us not to return before"):
        b.check("feeds.example.com")
    b.check("other.example.com")
    c.check("feeds.example.com")  # its own recent look still stands…
    monkeypatch.setattr(host_turns, "BLOCK_RECHECK", 0.0)
    with pytest.raises(HostBackoff):
        c.check("feeds.example.com")  # …until it looks again
    for w in (one, other, third):
        w.close()


def test_an_unreachable_broker_is_one_line(tmp_path: Path) -> None:
    from podarchive.core.errors import BrokerError

    cluster = Cluster("redis://127.0.0.1:9/0", connect_timeout=2)
    with pytest.raises(BrokerError, match=r"cannot reach the broker at redis://127.0.0.1:9/0"):
        cluster.ping()


# the whole cluster, as processes --------------------------------------------------------


class Processes:
    """podarchive subprocesses of one test, their stderr in files, all stopped at the end."""

    def __init__(self, tmp_path: Path, broker: str) -> None:
        self.tmp_path, self.broker = tmp_path, broker
        self.running: dict[str, subprocess.Popen[bytes]] = {}
        self.env = {**os.environ, **CLUSTER_ENV}

    def start(self, name: str, *args: str) -> subprocess.Popen[bytes]:
        command = [sys.executable, "-m", "podarchive", *args, "--broker", self.broker]
        with (self.tmp_path / f"{name}.log").open("ab") as log:  # the child keeps its copy
            process = subprocess.Popen(
                command, cwd=self.tmp_path, env=self.env, stdout=log, stderr=log
            )
        self.running[name] = process
        return process

    def log(self, name: str) -> str:
        return (self.tmp_path / f"{name}.log").read_text(errors="replace")

    def stop(self, name: str, how: int = signal.SIGTERM) -> int:
        process = self.running.pop(name)
        process.send_signal(how)
        return process.wait(60)

    def stop_all(self) -> None:
        for name in list(self.running):
            process = self.running[name]
            if process.poll() is None:
                self.stop(name)
            else:
                self.running.pop(name)


def write_schedule(directory: Path, urls: list[str]) -> None:
    directory.mkdir(exist_ok=True)
    entries = "".join(
        f'[[feed]]\nurl = "{u}"\nname = "{u.rsplit("/", 1)[1]}"\nevery = "1h"\npages = false\n\n'
        for u in urls
    )
    (directory / "feeds.toml").write_text(entries)


def archived(tmp_path: Path, url: str) -> bool:
    """The feed is stored, with its episodes, in the shard its URL hashes to."""
    path = shard_path(tmp_path / "shards", shard_of(url, SHARDS), SHARDS)
    try:
        with Archive.open_to_read(path) as archive:
            state = archive.feed_state(url)
    except StorageError:  # not there yet, or its worker is creating it
        return False
    return state is not None and state.content_hash is not None


def feeds_in(tmp_path: Path, shard: int) -> set[str]:
    with Archive.open_to_read(shard_path(tmp_path / "shards", shard, SHARDS)) as archive:
        return {url for _, url, _ in archive.feeds()}


@pytest.mark.slow
def test_the_cluster_polls_each_due_feed_once_through_its_faults(
    tmp_path: Path, redis_server: RedisServer
) -> None:
    site = LoopbackSite()
    release = threading.Event()

    def slow(handler: BaseHTTPRequestHandler) -> None:
        """Answers only once released: the worker polling it is killed meanwhile."""
        if not release.wait(PATIENCE):
            return
        body = rss("slow").encode()
        handler.send_response(200)
        handler.send_header("Content-Type", "application/rss+xml")
        handler.send_header("Content-Length", str(len(body)))
        handler.end_headers()
        handler.wfile.write(body)

    with site:
        urls = [site.url(f"/feed/{i}") for i in range(12)]
        for i in range(12):
            site.serve(f"/feed/{i}", rss(f"show{i}"))
        site.handle("/feed/slow", slow)

        def hits(url: str) -> int:
            return site.hits(url.split(str(site.port), 1)[1])

        write_schedule(tmp_path / "schedules", urls)
        procs = Processes(tmp_path, redis_server.url)
        workers = {"worker-a": ("0", "1"), "worker-b": ("2", "3")}

        def start_worker(name: str) -> None:
            shards = [a for k in workers[name] for a in ("--shard", k)]
            procs.start(name, "worker", *shards)

        try:
            for name in ("scheduler-1", "scheduler-2"):  # the second one by mistake
                procs.start(name, "scheduler", "--shards", "4", "--tick", "0.2")
            for name in workers:
                start_worker(name)

            # 1. every feed polled once, into the shard its URL hashes to
            wait_for("12 feeds archived", lambda: all(archived(tmp_path, u) for u in urls))
            for shard in range(SHARDS):
                assert feeds_in(tmp_path, shard) == {
                    u for u in urls if shard_of(u, SHARDS) == shard
                }
            assert [hits(u) for u in urls] == [1] * 12

            # 2. duplicated messages: three with the feed's current stamp, two stale ones, all
            # sent while the shard's worker is paused, so each copy is sent before any poll
            # began (one sent after a poll began is a new request, e.g. a push: polled)
            probe = Cluster(redis_server.url)
            target, shard = urls[0], shard_of(urls[0], SHARDS)
            stamp = probe.redis.hget(f"podarchive:stamps:{shard}", target)
            assert stamp
            schedule = FeedSchedule(url=target, name="0", pages=False)
            skipped_before = probe.workers()[shard]["skipped"]
            owner = procs.running[next(n for n in workers if str(shard) in workers[n])]
            owner.send_signal(signal.SIGSTOP)
            try:
                for copy_stamp in (stamp.decode(),) * 3 + ("2020-01-01T00:00:00Z",) * 2:
                    probe.enqueue(shard, schedule, copy_stamp)
            finally:
                owner.send_signal(signal.SIGCONT)
            wait_for(
                "four copies skipped",
                lambda: probe.workers()[shard]["skipped"] >= skipped_before + 4,
            )
            assert hits(target) == 2  # one poll for the three current copies, none for stale

            # 2b. an index that went wrong (a stale stamp, due now) is set right by the worker
            # that skips the message the schedulers send for it: no request, no loop
            stamps, due = f"podarchive:stamps:{shard}", f"podarchive:due:{shard}"
            probe.redis.hset(stamps, target, "2020-01-01T00:00:00Z")
            probe.redis.zadd(due, {target: 0})
            wait_for("the index repaired", lambda: probe.redis.zscore(due, target) > time.time())
            with Archive.open_to_read(shard_path(tmp_path / "shards", shard, SHARDS)) as a:
                ((_, next_due_at, _),) = list(a.due_stamps(target))
            wait_for(
                "the stamp repaired",
                lambda: probe.redis.hget(stamps, target) == next_due_at.encode(),
            )
            assert hits(target) == 2

            # 3. a worker killed in the middle of a feed
            slow_url = site.url("/feed/slow")
            victim = (
                "worker-a" if str(shard_of(slow_url, SHARDS)) in workers["worker-a"] else "worker-b"
            )
            write_schedule(tmp_path / "schedules", [*urls, slow_url])
            wait_for("the slow feed requested", lambda: hits(slow_url) == 1)
            assert procs.stop(victim, signal.SIGKILL) == -signal.SIGKILL
            release.set()
            assert not archived(tmp_path, slow_url)
            start_worker(victim)
            wait_for("the slow feed archived", lambda: archived(tmp_path, slow_url))
            assert hits(slow_url) == 2  # the killed attempt, then the one that was stored
            assert [hits(u) for u in urls] == [2] + [1] * 11

            # 4. the broker restarted, everything it held lost; two feeds added meanwhile
            redis_server.restart()
            added = [site.url(f"/feed/{i}") for i in (12, 13)]
            for i in (12, 13):
                site.serve(f"/feed/{i}", rss(f"show{i}"))
            write_schedule(tmp_path / "schedules", [*urls, slow_url, *added])
            wait_for("the added feeds archived", lambda: all(archived(tmp_path, u) for u in added))
            wait_for(
                "every shard published again",
                lambda: all(probe.synced(k) for k in range(SHARDS)),
            )
            time.sleep(1.0)  # a few scheduler ticks more: nothing else may be polled
            assert [hits(u) for u in [*urls, slow_url, *added]] == [2] + [1] * 11 + [2, 1, 1]
            probe.close()

            # SIGTERM: each stops cleanly, in one line per event, no traceback
            for name in list(procs.running):
                assert procs.stop(name) == 0, procs.log(name)
            for name in ("scheduler-1", "scheduler-2", "worker-a", "worker-b"):
                assert "Traceback" not in procs.log(name), procs.log(name)
        finally:
            release.set()
            procs.stop_all()


def test_a_copy_sent_before_a_poll_that_left_the_stamp_is_not_polled_again(
    tmp_path: Path, redis_server: RedisServer
) -> None:
    """A poll before the due time need not move the stamp (a cron's next fire stays the
    same): copies sent with it before that poll began are answered by it, not polled again;
    a message sent after it began (a push) is polled. The copies are sent while no worker
    runs, so each is sent before the poll; one Dramatiq thread takes them one by one."""

    def start_worker() -> tuple[ShardWorker, threading.Event, threading.Thread]:
        worker = ShardWorker(Cluster(redis_server.url), 0, tmp_path / "shards", threads=1)
        stop = threading.Event()
        running = threading.Thread(target=worker.run, args=(stop,))
        running.start()
        return worker, stop, running

    def stop_worker(worker: ShardWorker, stop: threading.Event, running: threading.Thread) -> None:
        stop.set()
        running.join(30)
        worker.cluster.close()

    with LoopbackSite() as site:
        site.serve("/feed", rss("cron"))
        url = site.url("/feed")
        probe = Cluster(redis_server.url)
        probe.init_shards(1)
        schedule = FeedSchedule(url=url, name="cron", cron="0 0 1 1 *", pages=False)
        first = start_worker()
        try:
            probe.enqueue(0, schedule, None)  # never stored: polled
            wait_for("the feed's stamp published", lambda: bool(probe.stamps(0).get(url)))
            wait_for("the first poll counted", lambda: first[0].counts.polled == 1)
        finally:
            stop_worker(*first)
        stamp = probe.stamps(0)[url]
        for _ in range(3):
            probe.enqueue(0, schedule, stamp)
        worker, stop, running = start_worker()
        try:
            wait_for("the copies taken", lambda: worker.counts.polled + worker.counts.skipped == 3)
            assert (site.hits("/feed"), worker.counts.polled, worker.counts.skipped) == (2, 1, 2)
            assert probe.stamps(0)[url] == stamp  # the early poll left it: the cron's fire
            probe.enqueue(0, schedule, stamp)  # sent after that poll began: a new request
            wait_for("the later message polled", lambda: worker.counts.polled == 2)
            assert (site.hits("/feed"), worker.counts.skipped) == (3, 2)
        finally:
            stop_worker(worker, stop, running)
            probe.close()


def rss_with_pages(name: str, page_url: Callable[[int], str], episodes: int) -> str:
    """A feed whose episodes each link to an episode page."""
    items = "".join(
        f"<item><title>{name} episode {i}</title><guid>{name}-{i}</guid>"
        f"<link>{page_url(i)}</link><description>Episode {i}</description>"
        f"<pubDate>Mon, 0{i + 1} Jun 2026 10:00:00 GMT</pubDate></item>"
        for i in range(episodes)
    )
    return (
        "<?xml version='1.0' encoding='utf-8'?><rss version='2.0'><channel>"
        f"<title>{name}</title><link>https://example.com/{name}</link>"
        f"<description>The {name} show</description>{items}</channel></rss>"
    )


PAGE = (
    "<html><head><title>Episode</title></head><body><article>"
    + "<p>Show notes of this episode, long enough to be worth keeping.</p>" * 5
    + "</article></body></html>"
)


class HeldSite:
    """Feeds and episode pages on a loopback site, the pages answered only once ``release``
    is set; it notes the most requests it ever had open at once for one path. The pages are
    on ``localhost``, another host than ``127.0.0.1`` for the per-host turns: held pages
    never keep a feed on ``127.0.0.1`` from its turn."""

    def __init__(self, site: LoopbackSite) -> None:
        self.site, self.release = site, threading.Event()
        self._lock = threading.Lock()
        self._open: dict[str, int] = {}
        self.most_at_once = 0

    def held(self) -> int:
        """Page requests open now."""
        with self._lock:
            return sum(n for path, n in self._open.items() if path.startswith("/page/"))

    def feed(self, number: int, episodes: int, host: str = "127.0.0.1") -> str:
        """Feed ``number`` on ``host``, its ``episodes`` episodes each with a page; returns
        its URL."""
        for e in range(episodes):
            self._route(f"/page/{number}/{e}", PAGE, "text/html", hold=True)
        body = rss_with_pages(f"paged{number}", partial(self._url, "localhost", number), episodes)
        self._route(f"/pfeed/{number}", body, "application/rss+xml", hold=False)
        return f"http://{host}:{self.site.port}/pfeed/{number}"

    def _url(self, host: str, number: int, episode: int) -> str:
        return f"http://{host}:{self.site.port}/page/{number}/{episode}"

    def _route(self, path: str, text: str, content_type: str, *, hold: bool) -> None:
        body = text.encode()

        def answer(handler: BaseHTTPRequestHandler) -> None:
            with self._lock:
                self._open[path] = self._open.get(path, 0) + 1
                self.most_at_once = max(self.most_at_once, self._open[path])
            try:
                if hold and not self.release.wait(PATIENCE):
                    return
                fresh = handler.headers.get("If-None-Match") != '"v1"'
                handler.send_response(200 if fresh else 304)
                handler.send_header("ETag", '"v1"')
                handler.send_header("Content-Type", content_type)
                handler.send_header("Content-Length", str(len(body) if fresh else 0))
                handler.end_headers()
                if fresh:
                    handler.wfile.write(body)
            finally:
                with self._lock:
                    self._open[path] -= 1

        self.site.handle(path, answer)


@pytest.mark.slow
def test_a_broker_lost_with_pages_in_flight_wedges_no_feed(
    tmp_path: Path, redis_server: RedisServer
) -> None:
    """#23 (4): Redis stopped while a worker's pages are held by the server (its other
    fetches waiting for the host's turn, which the broker keeps), long enough for the worker
    to notice, and started again empty; then the held answers come. Every page is fetched
    once and stored, every feed polled again once due and no feed left "in flight", nothing
    requested twice at once; a feed that arrived just before the loss (on the pages' host:
    it waits for a turn too) is stored once. Three feeds of two pages and the late one:
    eight fetches, every one started at once."""
    with LoopbackSite() as site:
        held = HeldSite(site)
        urls = [held.feed(f, episodes=2) for f in range(3)]
        late = held.feed(3, episodes=2, host="localhost")
        pages = sorted(f"/page/{f}/{e}" for f in range(4) for e in range(2))
        schedules = tmp_path / "schedules"
        schedules.mkdir()
        lines = [f'[[feed]]\nurl = "{u}"\nevery = "20s"\npages = true\n' for u in urls]
        (schedules / "feeds.toml").write_text("\n".join(lines))
        path = shard_path(tmp_path / "shards", 0, 1)
        procs = Processes(tmp_path, redis_server.url)
        probe = Cluster(redis_server.url)

        def polls(url: str) -> int:
            return site.hits(url.split(str(site.port), 1)[1])

        def pages_pending() -> int | None:
            try:
                with Archive.open_to_read(path) as archive:
                    rows = archive.feed_statuses()
            except StorageError:
                return None
            return sum(int(r["pages_pending"]) for r in rows) if len(rows) == 4 else None

        try:
            procs.start("scheduler", "scheduler", "--shards", "1", "--tick", "0.2", "--allow-fast")
            procs.start("worker", "worker", "--shard", "0", "--allow-private-hosts")
            wait_for("every feed polled", lambda: all(polls(u) == 1 for u in urls))
            wait_for("two pages held by the server", lambda: held.held() == 2)
            (schedules / "late.toml").write_text(f'[[feed]]\nurl = "{late}"\npages = true\n')
            wait_for("the late feed taken", lambda: probe.workers()[0]["in_flight"] == 4)

            # the broker goes, long enough for the worker to notice, and comes back empty
            redis_server.stop()
            wait_for("the loss noticed", lambda: "cannot reach the broker" in procs.log("worker"))
            redis_server.start()
            held.release.set()

            wait_for("every page stored", lambda: pages_pending() == 0)
            wait_for("every feed polled again once due", lambda: all(polls(u) >= 2 for u in urls))
            wait_for("no feed in flight", lambda: probe.workers()[0]["in_flight"] == 0)
            assert polls(late) == 1
            # each page once: the two held, and those abandoned, redone
            assert sorted(r.path for r in site.requests if r.path.startswith("/page/")) == pages
            assert held.most_at_once == 1
            for name in list(procs.running):
                assert procs.stop(name) == 0, procs.log(name)
            assert "Traceback" not in procs.log("worker"), procs.log("worker")
        finally:
            held.release.set()
            probe.close()
            procs.stop_all()


def test_a_scheduler_keeps_its_last_good_schedule_on_any_reload_error(
    cluster: Cluster, caplog: pytest.LogCaptureFixture
) -> None:
    """No error of the schedule files ends the cluster scheduler (#23): not only a
    ConfigError but anything loading them raises is one line, and the last good one stays."""
    from podarchive.cluster.dispatch import ClusterScheduler
    from podarchive.read.schedule_files import FeedSchedule

    good = [FeedSchedule(url="https://example.com/a.xml")]
    loads: list[Callable[[], list[FeedSchedule]]] = [lambda: good]

    def load() -> list[FeedSchedule]:
        return loads[-1]()

    def broken() -> list[FeedSchedule]:
        raise OverflowError("date value out of range\nsecond line")

    cluster.set_shards(2)
    scheduler = ClusterScheduler(cluster, load)
    loads.append(broken)
    with caplog.at_level("ERROR", logger="podarchive"):
        assert scheduler.reload() is False
    (record,) = [r for r in caplog.records if "not reloaded" in r.getMessage()]
    assert "OverflowError: date value out of range second line" in record.getMessage()
    assert "\n" not in record.getMessage()
    kept = [url for feeds in scheduler._by_shard.values() for url in feeds]
    assert kept == ["https://example.com/a.xml"]  # the last good schedule
