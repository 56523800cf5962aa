"""The cluster (#16): an hourly cycle of 100,000 loopback feeds on 1, 2 and 4 worker processes.

Run: ``python benchmarks/cluster.py`` (about 15 minutes here; ``--feeds 2000`` for a quick
look, ``--smoke`` for the test suite). Needs Debian's ``redis-server``.

What it does, all on 127.0.0.1:

1. starts its own ``redis-server`` (no persistence) and the benchmark HTTP server in a
   child process; every feed is the same small feed under its own URL, answered with an
   ETag, so an unchanged poll is a ``304``; ``--changed`` of them (1 %) get a new episode
   every cycle and are parsed and stored for real;
2. fills 4 shard archives: the changed feeds ingested for real, the others given a cloned
   fetch state (``common.clone_feed_states``), as ``hourly_cycle.py`` does;
3. for 1, 2 and 4 ``podarchive worker`` processes (sharing the 4 shards: 4, 2 and 1 shards
   each), one cycle in which the scheduler (this process) finds every feed due and
   enqueues it, 20 feeds to a message, and the workers poll and store them all. It reports
   wall time, feeds per second (in all and per worker process), the CPU per feed of the
   workers, of Redis and of the scheduler, and checks the server's counts (every feed
   requested once, the unchanged ones answered 304);
4. the reference, same run: ``podarchive run --all`` (one machine, no broker) over one
   shard's feeds, for the CPU per feed without the cluster. The difference is the broker's
   overhead per task on the worker's side.

Then it projects, with its assumptions printed, how many machines of this size keep 4.5
million feeds (Podcast Index's directory) current hourly.

Everything is on one host, 127.0.0.1, so per-host politeness is opened up
(``PODARCHIVE_PER_HOST=64``, no gap): the benchmark measures throughput, not manners; every
request still takes its turn in Redis, whose cost is counted.
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path

from common import bench_settings, clone_feed_states, machine, show
from feedgen import FeedSpec, feed
from server import ServerProcess

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from redis_server import RedisServer  # noqa: E402  (the tests' Redis starter)

from podarchive.cluster.broker import Cluster, due_key, synced_key  # noqa: E402
from podarchive.cluster.dispatch import ClusterScheduler  # noqa: E402
from podarchive.read.schedule_files import FeedSchedule  # noqa: E402
from podarchive.rules.shards import shard_of, shard_path  # noqa: E402
from podarchive.store import Archive  # noqa: E402
from podarchive.update.run import update_feeds  # noqa: E402

SHARDS = 4
EPISODES = 10
TICK = os.sysconf("SC_CLK_TCK")
WORKER_ENV = {
    "PODARCHIVE_HOST_GAP": "0",
    "PODARCHIVE_PER_HOST": "64",
    "PODARCHIVE_PROCESSES": "1",
    "PODARCHIVE_RETRIES": "0",
}
TARGET_FEEDS = 4_500_000  # Podcast Index lists about this many


def arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--feeds", type=int, default=100_000)
    parser.add_argument("--workers", default="1,2,4", help="worker process counts, e.g. 1,2,4")
    parser.add_argument("--changed", type=float, default=0.01, help="share with a new episode")
    parser.add_argument("--smoke", action="store_true", help="300 feeds, workers 1,2")
    args = parser.parse_args()
    if args.smoke:
        args.feeds, args.workers = 300, "1,2"
    return args


def cpu_seconds(pid: int) -> float:
    """User + system CPU of a live process (and its waited-for children)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return sum(int(fields[i]) for i in (11, 12, 13, 14)) / TICK


def schedule(url: str) -> FeedSchedule:
    return FeedSchedule(
        url=url, every=timedelta(hours=2), pages=False, transcripts=False, chapters=False
    )


@dataclass
class Cycle:
    label: str
    processes: int
    feeds: int
    wall: float
    worker_cpu: float
    redis_cpu: float
    scheduler_cpu: float
    requests: int
    not_modified: int

    def row(self, reference_ms: float | None) -> tuple[str, ...]:
        per_feed_ms = self.worker_cpu / self.feeds * 1000
        over = f"{per_feed_ms - reference_ms:+.2f}" if reference_ms is not None else "-"
        rate = self.feeds / self.wall
        return (
            self.label,
            f"{self.wall:.1f}",
            f"{rate:,.0f}",
            f"{rate / max(1, self.processes):,.0f}",
            f"{per_feed_ms:.2f}",
            over,
            f"{self.redis_cpu / self.feeds * 1e6:.0f}",
            f"{self.scheduler_cpu / self.feeds * 1e6:.0f}",
            f"{self.requests:,} / {self.not_modified:,}",
        )


def fill_shards(srv: ServerProcess, directory: Path, urls: list[str], changed: set[str]) -> None:
    """Changed feeds ingested for real; the rest cloned from one template feed per shard."""
    settings = bench_settings()
    for shard in range(SHARDS):
        mine = [u for u in urls if shard_of(u, SHARDS) == shard]
        template = next(u for u in mine if u not in changed)  # serves the common body
        real = [u for u in mine if u in changed] + [template]
        with Archive(shard_path(directory, shard, SHARDS)) as archive:
            report = update_feeds(archive, [schedule(u) for u in real], settings=settings)
            assert not report.failed, report.failed[0].error
            clone_feed_states(archive, template, [u for u in mine if u not in real])
            archive.checkpoint()


def bump(srv: ServerProcess, paths: dict[str, int], cycle: int) -> None:
    """Each changed feed gets one more episode than in the last cycle."""
    bodies = {
        path: feed(FeedSpec(name=f"c{k}", episodes=EPISODES + cycle, paragraphs=2))
        for path, k in paths.items()
    }
    srv.set(bodies)


def start_workers(
    count: int, broker: str, directory: Path, log: Path
) -> list[subprocess.Popen[bytes]]:
    env = {**os.environ, **WORKER_ENV}
    procs = []
    for w in range(count):
        shards = [a for k in range(SHARDS) if k % count == w for a in ("--shard", str(k))]
        with (log / f"worker-{count}-{w}.log").open("ab") as out:
            procs.append(
                subprocess.Popen(
                    [sys.executable, "-m", "podarchive", "worker", "--broker", broker,
                     "--shards-dir", str(directory), *shards],
                    stdout=out, stderr=out, env=env,
                )
            )  # fmt: skip
    return procs


def wait_until(what: str, check: Callable[[], bool], limit: float = 3600) -> None:
    deadline = time.monotonic() + limit
    while not check():
        if time.monotonic() > deadline:
            sys.exit(f"benchmark stopped: never happened: {what}")
        time.sleep(0.1)


def make_all_due(cluster: Cluster) -> None:
    """Every feed in the due index due now (its stamp, the archive's own, unchanged)."""
    for k in range(SHARDS):
        urls = [u for u, _ in cluster.redis.zscan_iter(due_key(k), count=5000)]
        for start in range(0, len(urls), 5000):
            cluster.redis.zadd(due_key(k), dict.fromkeys(urls[start : start + 5000], 0), xx=True)


def run_cycle(
    count: int,
    cycle_no: int,
    cluster: Cluster,
    redis: RedisServer,
    srv: ServerProcess,
    directory: Path,
    feeds: list[FeedSchedule],
    changed: dict[str, int],
    log: Path,
) -> Cycle:
    bump(srv, changed, cycle_no)
    cluster.redis.delete(*(synced_key(k) for k in range(SHARDS)))  # wait for these workers'
    procs = start_workers(count, redis.url, directory, log)
    try:
        wait_until(
            "every shard published",
            lambda: (
                all(cluster.synced(k) for k in range(SHARDS))
                and all(p.poll() is None for p in procs)
            ),
        )
        time.sleep(1)
        make_all_due(cluster)  # the hour has come round for every feed
        begun = time.time()
        scheduler = ClusterScheduler(cluster, lambda: feeds)
        assert redis.process is not None
        pids = [p.pid for p in procs]
        worker_before = sum(cpu_seconds(p) for p in pids)
        redis_before = cpu_seconds(redis.process.pid)
        requests_before = srv.counts()
        start, sched_cpu = time.perf_counter(), time.process_time()
        report = scheduler.cycle()
        sched_cpu = time.process_time() - sched_cpu
        assert report.total == len(feeds), (report.total, len(feeds))

        def stored() -> int:
            """Feeds whose next due time the workers published: 2 h on (a claim holds 15 min)."""
            pipe = cluster.redis.pipeline()
            for k in range(SHARDS):
                pipe.zcount(due_key(k), begun + 3600, "+inf")
            return sum(pipe.execute())

        wait_until("every feed stored", lambda: stored() >= len(feeds))
        wall = time.perf_counter() - start
        worker_cpu = sum(cpu_seconds(p) for p in pids) - worker_before
        redis_cpu = cpu_seconds(redis.process.pid) - redis_before
        after = srv.counts()
    finally:
        for p in procs:
            p.send_signal(signal.SIGTERM)
        for p in procs:
            p.wait(120)
    requests = after[0] - requests_before[0]
    not_modified = after[1] - requests_before[1]
    if requests != len(feeds) or not_modified != len(feeds) - len(changed):
        errors = failures(directory)
        sys.exit(
            f"benchmark stopped: {requests} requests, {not_modified} 304s for {len(feeds)} "
            f"feeds; {len(errors)} failed, e.g. {errors[:3]}"
        )
    return Cycle(
        f"{count} worker process{'es' if count > 1 else ''} ({SHARDS // count} shards each)",
        count, len(feeds), wall, worker_cpu, redis_cpu, sched_cpu, requests, not_modified,
    )  # fmt: skip


def failures(directory: Path) -> list[str]:
    """The last errors of the feeds that failed, over every shard."""
    import sqlite3

    errors = []
    for shard in range(SHARDS):
        with sqlite3.connect(shard_path(directory, shard, SHARDS)) as db:
            rows = db.execute("SELECT url, last_error FROM feeds WHERE error_count > 0")
            errors.extend(f"{url}: {error}" for url, error in rows)
    return errors


def reference(
    srv: ServerProcess, directory: Path, urls: list[str], changed: dict[str, int], cycle_no: int
) -> Cycle:
    """``podarchive run --all`` over shard 0's feeds: one machine, no broker."""
    mine = [u for u in urls if shard_of(u, SHARDS) == 0]
    mine_changed = {p: k for p, k in changed.items() if srv.url(p) in set(mine)}
    bump(srv, mine_changed, cycle_no)
    schedules = directory.parent / "reference-schedules"
    schedules.mkdir(exist_ok=True)
    (schedules / "feeds.toml").write_text(
        "".join(f'[[feed]]\nurl = "{u}"\npages = false\ntranscripts = false\n'
                f'chapters = false\n\n' for u in mine)
    )  # fmt: skip
    env = {**os.environ, **WORKER_ENV}
    before, counts = os.times(), srv.counts()
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "podarchive", "run", "--all", "--schedules", str(schedules),
         "--db", str(shard_path(directory, 0, SHARDS))],
        env=env, capture_output=True, text=True, timeout=3600,
    )  # fmt: skip
    wall = time.perf_counter() - start
    after, counts_after = os.times(), srv.counts()
    if done.returncode != 0:
        sys.exit(f"benchmark stopped: the reference run failed: {done.stderr[-500:]}")
    cpu = (after.children_user - before.children_user) + (
        after.children_system - before.children_system
    )
    requests, not_modified = counts_after[0] - counts[0], counts_after[1] - counts[1]
    return Cycle(
        "reference: podarchive run --all (1 process, no broker)",
        1, len(mine), wall, cpu, 0.0, 0.0, requests, not_modified,
    )  # fmt: skip


def projection(cycles: list[Cycle], reference_cycle: Cycle, changed: float) -> list[str]:
    """How many machines of this size keep 4.5 million feeds current hourly, three ways."""
    cores = os.cpu_count() or 1
    best = max(cycles, key=lambda c: c.feeds / c.wall)
    per_feed = best.worker_cpu / best.feeds
    redis_per_feed = best.redis_cpu / best.feeds
    sched_per_feed = best.scheduler_cpu / best.feeds
    rate = TARGET_FEEDS / 3600
    utilisation = 0.6
    cpu_machines = rate * (per_feed + sched_per_feed) / (cores * utilisation)
    measured_rate = best.feeds / best.wall
    latency, concurrency = 0.4, 8
    in_flight = rate * latency
    single_ms = reference_cycle.worker_cpu / reference_cycle.feeds * 1000
    return [
        f"4.5 million feeds hourly = {rate:,.0f} polls/s on average.",
        f"- CPU per poll in the best configuration here ({best.label}), "
        f"{100 * changed:.0f} % of feeds changed: worker {per_feed * 1000:.2f} ms, "
        f"scheduler {sched_per_feed * 1e6:.0f} µs, Redis {redis_per_feed * 1e6:.0f} µs "
        f"(one machine without the broker: {single_ms:.2f} ms).",
        f"- by CPU, at {int(utilisation * 100)} % use of {cores} cores: "
        f"{cpu_machines:.1f} → {int(cpu_machines) + 1} machines of this size for the workers, "
        f"plus one for Redis ({rate * redis_per_feed:.2f} cores of it) and the scheduler.",
        f"- by measured throughput ({measured_rate:,.0f} polls/s on this 2-core machine, "
        f"which also ran Redis and the HTTP server): {rate / measured_rate:.1f} → "
        f"{int(rate / measured_rate) + 1} machines.",
        f"- by network: real hosts answer in ~{latency:g} s, so {in_flight:,.0f} requests must "
        f"be in flight; at {concurrency} per shard that is ≥ {int(in_flight / concurrency) + 1} "
        "shards over those machines (or more PODARCHIVE_CONCURRENCY per worker).",
        "- assumptions: every feed polled hourly (most real feeds are polled less often), "
        "1 % of polls find a new episode, no episode pages or files (they add a fetch per new "
        "episode), feeds of this size; a 304 costs the same on the internet as on loopback, "
        "but TLS adds ~1 ms of CPU to each new connection.",
    ]


def main() -> None:
    args = arguments()
    counts = [int(c) for c in args.workers.split(",")]
    print(machine())
    print(f"{args.feeds:,} feeds over {SHARDS} shards; {args.changed:.0%} changed per cycle; "
          "Redis and the HTTP server on this machine too\n")  # fmt: skip
    with (
        tempfile.TemporaryDirectory() as tmp,
        ServerProcess(lifetime=7200) as srv,
        RedisServer(Path(tmp) / "redis") as redis,
    ):
        directory, log = Path(tmp) / "shards", Path(tmp)
        directory.mkdir()
        paths = [f"/feed/{i}" for i in range(args.feeds)]
        template = feed(FeedSpec(name="same", episodes=EPISODES, paragraphs=2))
        srv.set(dict.fromkeys(paths, template))
        step = max(1, round(1 / args.changed)) if args.changed > 0 else 0
        changed = {p: k for k, p in enumerate(paths) if step and k % step == 1}
        bump(srv, changed, 0)
        urls = [srv.url(p) for p in paths]
        started = time.perf_counter()
        fill_shards(srv, directory, urls, {srv.url(p) for p in changed})
        print(f"(filled {SHARDS} shards in {time.perf_counter() - started:.0f} s)\n")
        cluster = Cluster(redis.url)
        cluster.init_shards(SHARDS)
        feeds = [schedule(u) for u in urls]
        cycles = []
        for n, count in enumerate(counts, start=1):
            cycles.append(run_cycle(count, n, cluster, redis, srv, directory, feeds, changed, log))
            print(f"  {cycles[-1].label}: {cycles[-1].wall:.1f} s", flush=True)
        used = int(cluster.redis.info("memory")["used_memory"])
        ref = reference(srv, directory, urls, changed, len(counts) + 1)
        cluster.close()
    ref_ms = ref.worker_cpu / ref.feeds * 1000
    print()
    show(
        [
            ("configuration", "wall s", "feeds/s", "per process", "worker CPU ms/feed",
             "vs reference ms", "Redis µs/feed", "scheduler µs/feed", "requests / 304s"),
            *(c.row(ref_ms) for c in cycles),
            ref.row(None),
        ]
    )  # fmt: skip
    broker_ms = [
        (c.worker_cpu / c.feeds * 1000 - ref_ms) + (c.redis_cpu + c.scheduler_cpu) / c.feeds * 1000
        for c in cycles
    ]
    print(
        f"\nbroker overhead per feed (worker CPU over the reference, plus Redis and the "
        f"scheduler): {min(broker_ms):.2f}–{max(broker_ms):.2f} ms"
    )
    print(f"Redis memory with {args.feeds:,} feeds indexed: {used / 1e6:.1f} MB "
          f"({used / args.feeds:.0f} bytes per feed → "
          f"{used / args.feeds * TARGET_FEEDS / 1e9:.1f} GB for 4.5 million)\n")  # fmt: skip
    for line in projection(cycles, ref, args.changed):
        print(line)


if __name__ == "__main__":
    main()
