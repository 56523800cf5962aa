"""(#30) An unchanged poll's in-process CPU: a 304, in the daemon's cycle and on a cluster
worker's path, beside httpx's own floor (a bare client's GET of the same 304) in the same run.

Run: ``python benchmarks/unchanged_poll.py`` (~1 min; ``--smoke`` for seconds; ``--check``
exits 1 when a path costs more than ``--target`` ms, 1.0 by default).

- **daemon cycle**: ``update_due`` over ``--feeds`` due feeds, as the daemon calls it each time
  feeds fall due (its fake clock moves an hour and a half between cycles, so every feed is
  due again); a first cycle warms up, then ``--cycles`` cycles are timed whole, the cycle's
  own cost (its HTTP client, its threads) shared by its feeds;
- **worker path**: one long ``update_stream`` fed the feeds of the broker's messages, as a
  cluster worker's stream is (without the broker), with the worker's own archive reads
  around each feed (its due stamp before the poll, and after, to publish it); the time runs
  from the end of the warm-up feeds to the last feed stored, so start-up is not counted;
- **httpx floor**: ``httpx.Client().get`` of the same URLs with ``If-None-Match``, one thread.

CPU is ``time.process_time`` of this process (all its threads); the server runs in a child
process (``server.py``). Statements per feed are counted on the archive's connection
(sqlite3's trace callback) over one more cycle.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx
from common import bench_settings, clone_feed_states, fresh_archive, machine, schedules
from feedgen import FeedSpec, feed
from server import ServerProcess

from podarchive.read.schedule_files import FeedSchedule
from podarchive.store import Archive
from podarchive.update.one_feed import FeedReport
from podarchive.update.run import update_due, update_feeds, update_stream

CYCLE = timedelta(minutes=90)  # past every feed's hour and its jitter


def arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--smoke", action="store_true", help="tiny sizes, a few seconds")
    parser.add_argument("--feeds", type=int, default=300, help="feeds per daemon cycle")
    parser.add_argument("--cycles", type=int, default=5, help="timed daemon cycles")
    parser.add_argument("--check", action="store_true", help="exit 1 above --target")
    parser.add_argument("--target", type=float, default=1.0, help="ms of CPU per 304")
    args = parser.parse_args()
    if args.smoke:
        args.feeds, args.cycles = 20, 2
    return args


class Clock:
    def __init__(self) -> None:
        self.now = datetime.now(UTC)  # the feed ingested for real was polled just now

    def __call__(self) -> datetime:
        return self.now


def archive_of(tmp: Path, srv: ServerProcess, name: str, feeds: int) -> tuple[Path, list[str]]:
    """An archive of ``feeds`` feeds of one small body: one ingested, the others cloned."""
    body = feed(FeedSpec(name="unchanged", episodes=30))
    paths = [f"/{name}/{i}" for i in range(feeds)]
    srv.set({p: body for p in paths})
    urls = [srv.url(p) for p in paths]
    with fresh_archive(tmp, f"{name}.db") as archive:
        report = update_feeds(archive, schedules(urls[:1]), settings=bench_settings())
        assert not report.failed, report.failed[0].error
        clone_feed_states(archive, urls[0], urls[1:])
    return tmp / f"{name}.db", urls


def daemon_cycles(db: Path, urls: list[str], cycles: int, srv: ServerProcess) -> float:
    """ms of CPU per feed over ``cycles`` timed cycles of ``update_due`` after a warm-up."""
    feeds, clock, settings = schedules(urls), Clock(), bench_settings()
    with Archive(db) as archive:
        for _ in range(2):  # the clones' first 304s, then one like every other
            clock.now += CYCLE
            update_due(archive, feeds, settings=settings, clock=clock)
        before = srv.counts()
        cpu = time.process_time()
        for _ in range(cycles):
            clock.now += CYCLE
            report = update_due(archive, feeds, settings=settings, clock=clock)
            assert len(report.feeds) == len(urls)
            assert all(f.not_modified for f in report.feeds)
        spent = time.process_time() - cpu
    after = srv.counts()
    assert after[1] - before[1] == cycles * len(urls), "every timed poll is a 304"
    return 1000 * spent / (cycles * len(urls))


class WorkerSource:
    """A cluster worker's stream (``cluster/worker.py``) without the broker: the feeds of its
    messages as fast as the stream takes them, each read for its due stamp before its poll
    (the worker's skip check) and after it is stored (the due time it publishes)."""

    def __init__(self, archive: Archive, feeds: list[FeedSchedule], warm: int) -> None:
        self.archive, self.feeds, self.warm = archive, iter(feeds), warm
        self.stored = 0
        self.started_cpu = 0.0

    def next_feed(self, block: bool) -> FeedSchedule | None:
        schedule = next(self.feeds)  # StopIteration: the end of the stream
        next(self.archive.due_stamps(schedule.url), None)
        return schedule

    def done(self, url: str, report: FeedReport | None) -> None:
        assert report is not None
        assert report.not_modified, report
        next(self.archive.due_stamps(url), None)
        self.stored += 1
        if self.stored == self.warm:
            self.started_cpu = time.process_time()


def worker_path(db: Path, urls: list[str], warm: int) -> float:
    """ms of CPU per feed of a worker's stream after its first ``warm`` feeds are stored."""
    feeds = schedules(urls)
    with Archive(db) as archive:
        update_feeds(archive, feeds, settings=bench_settings())  # the clones' first 304s
        source = WorkerSource(archive, feeds, warm)
        update_stream(archive, source, settings=bench_settings(), on_done=source.done)
        spent = time.process_time() - source.started_cpu
    return 1000 * spent / (len(urls) - warm)


def httpx_floor(urls: list[str], etag: str, rounds: int) -> float:
    """ms of CPU per bare ``httpx`` GET answered 304 (one client, one thread, keep-alive)."""
    with httpx.Client() as client:
        for url in urls[:10]:
            assert client.get(url, headers={"If-None-Match": etag}).status_code == 304
        cpu = time.process_time()
        for _ in range(rounds):
            for url in urls:
                assert client.get(url, headers={"If-None-Match": etag}).status_code == 304
        spent = time.process_time() - cpu
    return 1000 * spent / (rounds * len(urls))


def statements_per_feed(db: Path, urls: list[str]) -> float:
    """SQL statements per feed of one more daemon cycle (the cycle's own reads shared)."""
    clock = Clock()
    clock.now += 20 * CYCLE
    with Archive(db) as archive:
        statements: list[str] = []
        archive.db.conn.set_trace_callback(statements.append)
        update_due(archive, schedules(urls), settings=bench_settings(), clock=clock)
        archive.db.conn.set_trace_callback(None)
    return len(statements) / len(urls)


def main() -> int:
    args = arguments()
    print(f"# unchanged poll (#30): {args.feeds} feeds x {args.cycles} cycles; {machine()}")
    with tempfile.TemporaryDirectory() as tmp, ServerProcess() as srv:
        db, urls = archive_of(Path(tmp), srv, "daemon", args.feeds)
        etag = srv_etag(db)
        floor = httpx_floor(urls, etag, max(1, args.cycles))
        daemon = daemon_cycles(db, urls, args.cycles, srv)
        statements = statements_per_feed(db, urls)
        feeds = args.feeds * args.cycles // 2
        db2, urls2 = archive_of(Path(tmp), srv, "worker", feeds)
        worker = worker_path(db2, urls2, warm=min(20, feeds // 4))
    print(f"{'path':<34}{'CPU ms per 304':>16}{'over httpx':>12}")
    print(f"{'httpx floor (bare client GET)':<34}{floor:>16.3f}{'':>12}")
    print(f"{'daemon cycle (update_due)':<34}{daemon:>16.3f}{daemon - floor:>12.3f}")
    print(f"{'cluster worker path (stream)':<34}{worker:>16.3f}{worker - floor:>12.3f}")
    print(f"SQL statements per feed in a daemon cycle: {statements:.2f}")
    if args.check:
        worst = max(daemon, worker)
        verdict = "PASS" if worst <= args.target else "FAIL"
        print(f"{verdict}: CPU per 304 {worst:.3f} ms (target <= {args.target} ms)")
        return 0 if worst <= args.target else 1
    return 0


def srv_etag(db: Path) -> str:
    with Archive(db) as archive:
        (etag,) = archive.db.execute("SELECT etag FROM feeds LIMIT 1").fetchone()
    return str(etag)


if __name__ == "__main__":
    sys.exit(main())
