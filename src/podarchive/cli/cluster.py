"""The cluster's commands (#16): ``worker``, ``scheduler`` and ``reshard``.

Each is a thin shell over :mod:`podarchive.cluster`, imported when the command runs, so
the single-machine commands never load Dramatiq or Redis. Both long-running commands stop
on SIGTERM (exit 0) or Ctrl-C (exit 130), log one line per event on stderr, and turn every
broker or archive failure into one line and exit 1.
"""

from __future__ import annotations

import logging
import signal
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta
from functools import partial
from pathlib import Path
from typing import Any

import click

from podarchive.cli.common import (
    CommandFailure,
    Number,
    UsageFailure,
    _daemon_logging,
    allow_fast_option,
    private_hosts_option,
    run_settings,
    schedules_option,
    show_status,
    tick_option,
    translate_errors,
    verbosity,
)
from podarchive.cli.push import push_options, push_settings
from podarchive.core.errors import ConfigError
from podarchive.read.schedule_files import MAX_INTERVAL, load_schedules

DEFAULT_SHARDS_DIR = Path("shards")
MAX_SHARDS = 4096  # podarchive.rules.shards.MAX_SHARDS, without importing the package

broker_option = click.option(
    "--broker",
    "broker_url",
    envvar="PODARCHIVE_BROKER",
    required=True,
    metavar="URL",
    help="The cluster's Redis, e.g. redis://127.0.0.1:6379/0 (or $PODARCHIVE_BROKER).",
)
shards_dir_option = click.option(
    "--shards-dir",
    "shards_dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=DEFAULT_SHARDS_DIR,
    show_default=True,
    help="Directory of the shard archives (shard-K-of-N.db).",
)


def _need_cluster_extra() -> None:
    """The cluster's libraries come with the ``cluster`` extra: without them, one line."""
    from importlib.util import find_spec

    missing = [name for name in ("dramatiq", "redis") if find_spec(name) is None]
    if missing:
        raise CommandFailure(
            f"{' and '.join(missing)} not installed: pip install -e '.[cluster]' "
            "(the cluster's commands need them; run and daemon do not)"
        )


class _OneLine(logging.Filter):
    """Dramatiq logs some failures with their traceback: keep the line, drop the trace."""

    def filter(self, record: logging.LogRecord) -> bool:
        record.exc_info = None
        record.exc_text = None
        return True


def _cluster_logging() -> None:
    _daemon_logging()
    root = logging.getLogger("podarchive")
    engine = logging.getLogger("dramatiq")
    engine.handlers[:] = list(root.handlers)
    for handler in engine.handlers:
        handler.addFilter(_OneLine())
    engine.setLevel(logging.INFO if root.level <= logging.DEBUG else logging.ERROR)
    engine.propagate = False


@contextmanager
def _stop_on_signals(stop: threading.Event) -> Iterator[dict[str, int]]:
    """SIGTERM and SIGINT set ``stop``; the dict says which came first."""
    seen: dict[str, int] = {}

    def on_signal(number: int, frame: Any) -> None:
        seen.setdefault("signal", number)
        stop.set()

    previous = {s: signal.signal(s, on_signal) for s in (signal.SIGTERM, signal.SIGINT)}
    try:
        yield seen
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)


@click.command()
@broker_option
@click.option(
    "--shard",
    "shard_numbers",
    type=click.IntRange(min=0),
    multiple=True,
    required=True,
    metavar="K",
    help="The shard to keep (repeat to keep several in one process).",
)
@shards_dir_option
@private_hosts_option
@click.option(
    "--threads",
    type=click.IntRange(1, 512),
    metavar="N",
    help="Messages worked on at once per shard.  [default: twice PODARCHIVE_CONCURRENCY]",
)
@verbosity
@translate_errors
def worker(
    broker_url: str,
    shard_numbers: tuple[int, ...],
    shards_dir: Path,
    allow_private_hosts: bool,
    threads: int | None,
) -> None:
    """Keep shard K's archive current from the broker's messages, until stopped.

    Holds SHARDS_DIR/shard-K-of-N.db (created on first start) for its whole life: one
    worker per shard. Publishes the archive's due times to the broker, then polls each
    feed the scheduler enqueues for the shard, with its pages and files, exactly as 'run'
    would; a message is acknowledged only once its feed is stored. Per-host politeness
    (requests at once, the gap between them, Retry-After) is held in the broker, so it holds
    over every worker. SIGTERM stops it with exit 0, Ctrl-C with 130; a feed not yet stored
    is handed back to the queue.
    """
    _need_cluster_extra()
    from podarchive.cluster.worker import run_workers

    _cluster_logging()
    settings = run_settings(allow_private_hosts)
    stop = threading.Event()
    with _stop_on_signals(stop) as seen:
        results = run_workers(
            broker_url,
            shard_numbers,
            shards_dir,
            settings=settings,
            threads=threads,
            stop=stop,
        )
    for shard, counts in sorted(results.items()):
        logging.getLogger("podarchive").info(
            "shard %d: stopped: %d polled, %d failed, %d skipped, %d handed back",
            *(shard, counts.polled, counts.failed, counts.skipped, counts.redelivered),
        )
    if seen.get("signal") == signal.SIGINT:
        sys.exit(130)


@click.command()
@broker_option
@click.option(
    "--shards",
    type=click.IntRange(1, MAX_SHARDS),
    metavar="N",
    help="The number of shards: sets up a new cluster; must match an existing one.",
)
@schedules_option
@allow_fast_option
@tick_option(5.0, "How often to look for due feeds (and changed schedule files).")
@click.option(
    "--hold",
    type=Number(1.0, MAX_INTERVAL.total_seconds()),
    default=900.0,
    show_default=True,
    metavar="SECONDS",
    help="How long an enqueued feed is not enqueued again while it waits for its worker.",
)
@click.option(
    "--batch",
    type=click.IntRange(1, 1000),
    default=20,
    show_default=True,
    metavar="N",
    help="Feeds of a shard per message (a message's own cost is spread over them).",
)
@click.option("--once", is_flag=True, help="One cycle, then exit (from cron, or to look).")
@push_options
@shards_dir_option
@verbosity
@translate_errors
def scheduler(
    broker_url: str,
    shards: int | None,
    schedules_dir: Path,
    allow_fast: bool,
    tick: float,
    hold: float,
    batch: int,
    once: bool,
    listen: str | None,
    public_url: str | None,
    push_every: str,
    shards_dir: Path,
) -> None:
    """Enqueue each due feed of the schedule files, once, on its shard's queue.

    Due-ness comes from the shards' own next_due_at (each worker publishes its archive's to
    the broker); a claim in the broker keeps a second scheduler started by mistake from
    enqueueing anything twice. The first scheduler of a new cluster sets its number of
    shards (--shards N); 'podarchive reshard' changes it. A changed schedule file is read on
    the next tick (a bad one keeps the last good schedule). With --listen and --public-url
    it subscribes to the WebSub hubs the shards' feeds name (it reads SHARDS_DIR) and a
    notification enqueues its feed at once (docs/push.md). SIGTERM stops it with exit 0,
    Ctrl-C with 130.
    """
    _need_cluster_extra()
    from podarchive.cluster.broker import Cluster

    push = push_settings(listen, public_url, push_every)
    if push is not None and once:
        raise UsageFailure("--listen serves notifications: it does not go with --once")
    _cluster_logging()
    feeds = load_schedules(schedules_dir, allow_fast=allow_fast)  # a bad file is exit 2
    cluster = Cluster(broker_url)
    try:
        runner = _cluster_scheduler(
            cluster, shards, schedules_dir, allow_fast, hold=hold, batch=batch, initial=feeds
        )
        with _pushing(cluster, runner, push, shards_dir):
            signum = _one_cycle(runner) if once else _run_until_stopped(runner, tick)
    finally:
        cluster.close()
    if signum == signal.SIGINT:
        sys.exit(130)


def _cluster_scheduler(
    cluster: Any, shards: int | None, schedules_dir: Path, allow_fast: bool, **options: Any
) -> Any:
    """The scheduler over ``cluster`` once the broker answers; a new cluster is set up with
    ``shards``, an existing one must have as many (else exit 2)."""
    from podarchive.cluster.dispatch import ClusterScheduler

    cluster.ping()
    if shards is not None:
        have = cluster.init_shards(shards)
        if have != shards:
            raise UsageFailure(
                f"the cluster at {cluster.where} has {have} shards, not {shards} "
                "('podarchive reshard' changes it)"
            )
    load = partial(load_schedules, schedules_dir, allow_fast=allow_fast)
    return ClusterScheduler(cluster, load, schedules_dir, **options)


@contextmanager
def _pushing(cluster: Any, runner: Any, push: Any, shards_dir: Path) -> Iterator[None]:
    """The scheduler's WebSub side (#29) while the block runs, when asked for."""
    if push is None:
        yield
        return
    from podarchive.cluster.push import ClusterPush

    side = ClusterPush(cluster, runner, run_settings(False), push, shards_dir)
    side.start()
    try:
        yield
    finally:
        side.stop()


def _one_cycle(runner: Any) -> int | None:
    """``scheduler --once``: one cycle, and what it did on stderr (no signal stops it)."""
    report = runner.cycle()
    click.echo(f"enqueued {report.total} due feeds", err=True)
    for shard in report.waiting_for_worker:
        click.echo(f"podarchive: shard {shard}: no worker has published it yet", err=True)
    return None


def _run_until_stopped(runner: Any, tick: float) -> int | None:
    """The scheduler's cycles every ``tick`` until SIGTERM or SIGINT; the signal."""
    stop = threading.Event()
    with _stop_on_signals(stop) as seen:
        runner.run(stop, tick)
    return seen.get("signal")


@click.command()
@click.option(
    "--shards",
    "new_shards",
    type=click.IntRange(1, MAX_SHARDS),
    required=True,
    metavar="M",
    help="The number of shards to move to.",
)
@click.option(
    "--from",
    "old_shards",
    type=click.IntRange(1, MAX_SHARDS),
    metavar="N",
    help="The layout to move from, when SHARDS_DIR holds several.",
)
@shards_dir_option
@click.option(
    "--broker",
    "broker_url",
    envvar="PODARCHIVE_BROKER",
    metavar="URL",
    help="Also tell the cluster's broker the new number (and drop its due index).",
)
@verbosity
@translate_errors
def reshard(
    new_shards: int, old_shards: int | None, shards_dir: Path, broker_url: str | None
) -> None:
    """Move every feed, with its whole history, into a layout of M shards.

    Stop the workers and the scheduler first (a worker holds its shard's lock). The new
    archives shard-K-of-M.db are written beside the old ones, checked row for row against
    them, and only then put in place; the old files are never changed (delete them when
    the new layout serves you well). With --broker the cluster's number of shards is
    changed too; start the workers with the new shards after.
    """
    from podarchive.cluster.reshard import reshard as move

    try:
        report = move(shards_dir, new_shards, from_shards=old_shards)
    except ConfigError as e:  # the layout's own wording names serve's and status's option
        raise UsageFailure(str(e).replace("give --shards N", "give --from N")) from e
    if broker_url:
        _need_cluster_extra()
        from podarchive.cluster.broker import Cluster

        cluster = Cluster(broker_url)
        try:
            cluster.set_shards(new_shards)
        finally:
            cluster.close()
    click.echo(_reshard_summary(report))


def _reshard_summary(report: Any) -> str:
    return (
        f"resharded {report.feeds_moved} feeds from {report.old_shards} to "
        f"{report.new_shards} shards in {report.seconds:.1f} s"
    )


def cluster_status(
    shards_dir: Path,
    shards: int | None,
    broker_url: str | None,
    threshold: timedelta,
    as_json: bool,
) -> None:
    """``status --shards-dir``: every shard's feeds, and with a broker its workers (exit 1:
    a feed failing longer than the threshold, or a shard without a live worker)."""

    from podarchive.cluster.shard_status import cluster_report, render_cluster
    from podarchive.core.clock import utcnow

    count, feeds = _shard_feeds(shards_dir, shards)
    workers, queued, where, push = _broker_view(broker_url, count) if broker_url else (None,) * 4
    now = utcnow()
    doc = cluster_report(
        count, feeds, now, threshold, workers=workers, queued=queued, broker=where, push=push or ()
    )
    failing = bool(doc["failing"] or doc["workers_missing"])
    show_status(doc, as_json, lambda: render_cluster(doc, now), failing=failing)


def _shard_feeds(shards_dir: Path, shards: int | None) -> tuple[int, dict[int, Any]]:
    """The layout's number of shards, and each shard's feed statuses (None: no archive)."""
    from podarchive.rules.shards import find_shards, parse_shard_name
    from podarchive.store import Archive

    paths = find_shards(shards_dir, shards)
    parsed = [parse_shard_name(p.name) for p in paths]
    count = next(p[1] for p in parsed if p is not None)
    feeds: dict[int, Any] = dict.fromkeys(range(count))
    for path, names in zip(paths, parsed, strict=True):
        assert names is not None
        with Archive.open_to_read(path) as archive:
            feeds[names[0]] = archive.feed_statuses()
    return count, feeds


def _broker_view(broker_url: str, count: int) -> tuple[Any, dict[int, Any], str, list[Any]]:
    """From the cluster's broker: its live workers, each shard's queue, where it is, and the
    scheduler's WebSub subscriptions."""
    _need_cluster_extra()
    from podarchive.cluster.broker import Cluster
    from podarchive.cluster.push import broker_subscriptions

    cluster = Cluster(broker_url)
    try:
        queued = {k: cluster.queued(k) for k in range(count)}
        return cluster.workers(), queued, cluster.where, broker_subscriptions(cluster)
    finally:
        cluster.close()


COMMANDS = (worker, scheduler, reshard)
__all__ = ["COMMANDS", "CommandFailure"]
