"""(#30) An unchanged poll's in-process CPU: a 304, in the daemon's cycle and on a cluster
worker's path, beside httpx's own floor (a bare client's GET of the same 304) in the same run.

Run: ``python benchmarks/unchanged_poll.py`` (~1 min; ``--smoke`` for seconds; ``--check``
exits 1 when a path costs more than ``--target`` ms, 1.0 by default). ``--runs 3`` measures
every path three times in turn and reports (and checks) each one's median: on a shared
machine one run can be 30 % off.

- **daemon cycle**: the daemon's own update (``daemon.service.cycle_update``) of ``--feeds``
  due feeds, as it runs each time feeds fall due; every feed is made due again between two
  cycles (not timed); two cycles warm up, then ``--cycles`` cycles are timed. "whole": the
  cycle's own cost (the lock, opening the archive, its HTTP client, its threads, the
  checkpoint) shared by its feeds; "fixed cost out": less the CPU of as many cycles of
  the same feeds when none is due (the start-up of a cycle), the figure ``--check`` uses;
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
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

import httpx
from common import bench_settings, clone_feed_states, fresh_archive, machine, schedules
from feedgen import FeedSpec, feed
from server import ServerProcess

from podarchive.daemon.service import cycle_update
from podarchive.read.schedule_files import FeedSchedule
from podarchive.store import Archive
from podarchive.update.one_feed import FeedReport
from podarchive.update.run import update_due, update_feeds, update_stream


def arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--smoke", action="store_true", help="tiny sizes, a few seconds")
    parser.add_argument("--feeds", type=int, default=300, help="feeds per daemon cycle")
    parser.add_argument("--cycles", type=int, default=5, help="timed daemon cycles")
    parser.add_argument("--check", action="store_true", help="exit 1 above --target")
    parser.add_argument("--target", type=float, default=1.0, help="ms of CPU per 304")
    parser.add_argument("--runs", type=int, default=1, help="measure N times, report medians")
    args = parser.parse_args()
    if args.smoke:
        args.feeds, args.cycles = 20, 2
    return args


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


DUE_AGAIN = "UPDATE feeds SET last_fetched_at = '2000-01-01T00:00:00Z', not_before = NULL"


def daemon_cycles(
    db: Path, urls: list[str], cycles: int, srv: ServerProcess
) -> tuple[float, float]:
    """ms of CPU per feed of the daemon's own update (``daemon.service.cycle_update``: the
    archive lock, the archive opened, due-ness, the run, every feed's next due time, the
    checkpoint), as a whole and without the cycle's fixed cost.

    Two cycles warm up, then ``cycles`` are timed, every feed made due again before each
    (not timed); then as many cycles in which no feed is due give the fixed cost."""
    feeds, update = schedules(urls), cycle_update(db, bench_settings())
    spent, idle, before = 0.0, 0.0, (0, 0)
    for cycle in range(-2, 2 * cycles):
        if cycle < cycles:
            with Archive(db) as archive, archive.transaction():
                archive.db.execute(DUE_AGAIN)
        if cycle == 0:
            before = srv.counts()
        cpu = time.process_time()
        result = update(feeds, threading.Event())
        if cycle >= cycles:
            idle += time.process_time() - cpu
            assert result.polled == 0, result
            continue
        if cycle >= 0:
            spent += time.process_time() - cpu
        assert result.polled == len(urls), result
        assert not result.failed, result
    after = srv.counts()
    assert after[1] - before[1] == cycles * len(urls), "every timed poll is a 304"
    return 1000 * spent / (cycles * len(urls)), 1000 * (spent - idle) / (cycles * len(urls))


class WorkerSource:
    """A cluster worker's stream (``cluster/worker.py``) without the broker: the feeds of its
    messages as fast as the stream takes them, each read for its due stamp before its poll
    (the worker's skip check) and, unless its report has it, after it is stored (the due
    time it publishes)."""

    def __init__(self, archive: Archive, feeds: list[FeedSchedule], warm: int) -> None:
        self.archive, self.feeds, self.warm = archive, iter(feeds), warm
        self.stored = 0
        self.started_cpu = 0.0
        self.statements: list[str] = []

    def next_feed(self, block: bool) -> FeedSchedule | None:
        schedule = next(self.feeds)  # StopIteration: the end of the stream
        next(self.archive.due_stamps(schedule.url), None)
        return schedule

    def done(self, url: str, report: FeedReport | None) -> None:
        assert report is not None
        assert report.not_modified, report
        if getattr(report, "due", None) is None:  # before #30 the worker read it back
            next(self.archive.due_stamps(url), None)
        self.stored += 1
        if self.stored == self.warm:
            self.started_cpu = time.process_time()


def worker_path(db: Path, urls: list[str], warm: int) -> tuple[float, float]:
    """ms of CPU per feed of a worker's stream after its first ``warm`` feeds are stored,
    and its SQL statements per feed (the worker's own reads and the stream's few included)."""
    feeds = schedules(urls)
    with Archive(db) as archive:
        update_feeds(archive, feeds, settings=bench_settings())  # the clones' first 304s
        source = WorkerSource(archive, feeds, warm)
        archive.db.conn.set_trace_callback(source.statements.append)  # a list append: cheap
        update_stream(archive, source, settings=bench_settings(), on_done=source.done)
        spent = time.process_time() - source.started_cpu
        archive.db.conn.set_trace_callback(None)
    return 1000 * spent / (len(urls) - warm), len(source.statements) / len(urls)


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
    """SQL statements per feed of one more daemon cycle (the cycle's own shared), counted
    on the archive's connection (sqlite3's trace callback)."""
    with Archive(db) as archive:
        with archive.transaction():
            archive.db.execute(DUE_AGAIN)
        statements: list[str] = []
        archive.db.conn.set_trace_callback(statements.append)
        update_due(archive, schedules(urls), settings=bench_settings())
        archive.db.conn.set_trace_callback(None)
    return len(statements) / len(urls)


def main() -> int:
    args = arguments()
    print(f"# unchanged poll (#30): {args.feeds} feeds x {args.cycles} cycles; {machine()}")
    runs: list[tuple[float, float, float, float]] = []
    with tempfile.TemporaryDirectory() as tmp, ServerProcess() as srv:
        db, urls = archive_of(Path(tmp), srv, "daemon", args.feeds)
        etag = srv_etag(db)
        feeds = args.feeds * args.cycles // 2
        for run in range(max(1, args.runs)):
            floor = httpx_floor(urls, etag, max(1, args.cycles))
            whole, daemon = daemon_cycles(db, urls, args.cycles, srv)
            db2, urls2 = archive_of(Path(tmp), srv, f"worker{run}", feeds)
            worker, worker_statements = worker_path(db2, urls2, warm=min(20, feeds // 4))
            runs.append((floor, whole, daemon, worker))
            if args.runs > 1:
                print(f"run {run + 1}: floor {floor:.3f}, daemon (fixed cost out) ", end="")
                print(f"{daemon:.3f}, worker {worker:.3f} ms")
        statements = statements_per_feed(db, urls)
    floor, whole, daemon, worker = (statistics.median(column) for column in zip(*runs, strict=True))
    median = f" (median of {len(runs)} runs)" if len(runs) > 1 else ""
    print(f"{'path' + median:<34}{'CPU ms per 304':>16}{'over httpx':>12}")
    print(f"{'httpx floor (bare client GET)':<34}{floor:>16.3f}{'':>12}")
    print(f"{'daemon cycle, whole':<34}{whole:>16.3f}{whole - floor:>12.3f}")
    print(f"{'daemon cycle, fixed cost out':<34}{daemon:>16.3f}{daemon - floor:>12.3f}")
    print(f"{'cluster worker path (stream)':<34}{worker:>16.3f}{worker - floor:>12.3f}")
    print(f"SQL statements per feed: update_due {statements:.2f}, ", end="")
    print(f"worker path {worker_statements:.2f} (its due-stamp reads included)")
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
