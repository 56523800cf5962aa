"""``daemon``, ``status`` and ``serve``: keep an archive current and show it."""

from __future__ import annotations

import dataclasses
import signal
import sys
from datetime import timedelta
from pathlib import Path
from typing import Any

import click

from podarchive.cli.common import (
    CommandFailure,
    UsageFailure,
    _daemon_logging,
    allow_fast_option,
    archive_option,
    db_option,
    private_hosts_option,
    run_settings,
    schedules_option,
    shards_layout_options,
    show_status,
    tick_option,
    translate_errors,
    verbosity,
)
from podarchive.cli.push import podping_options, podping_settings, push_options, push_settings
from podarchive.read.schedule_files import load_schedules, parse_interval
from podarchive.store import Archive, check_file


@click.command()
@schedules_option
@db_option
@private_hosts_option
@allow_fast_option
@tick_option(2.0, "How often to write the heartbeat and look for changed schedule files.")
@push_options
@podping_options
@verbosity
@translate_errors
def daemon(
    schedules_dir: Path,
    db_path: Path,
    allow_private_hosts: bool,
    allow_fast: bool,
    tick: float,
    listen: str | None,
    public_url: str | None,
    push_every: str,
    **podping_args: Any,
) -> None:
    """Poll the scheduled feeds on their schedules until stopped (SIGTERM or Ctrl-C).

    Sleeps until the archive says the next feed is due (every/cron, back-off, Retry-After);
    each update cycle takes the archive lock and updates the feeds that are due, as 'run'
    does. SIGHUP, or a change to the schedule files seen on the next tick, reloads the
    schedules (a bad file keeps the last good schedule). Logs one line per feed update on
    stderr (-v for more); writes <db>.daemon.json as a heartbeat for 'podarchive status'.
    If the archive is deleted while it runs, cycles fail (one ERROR line) until it is back:
    a new empty archive is only started by a restart.
    SIGTERM stops it with exit 0, Ctrl-C (SIGINT) with exit 130; what was stored is kept.
    With --listen and --public-url, feeds that name a WebSub hub are subscribed to, and a
    signed notification makes the feed due at once (docs/push.md). With --podping, a
    podping on Hive from a trusted writer naming an archived feed makes it due at once.
    """
    from podarchive.core.errors import ArchiveLocked
    from podarchive.daemon.service import run_daemon

    _daemon_logging()
    settings = run_settings(allow_private_hosts)
    push = push_settings(listen, public_url, push_every)
    podping = podping_settings(**podping_args)
    feeds = load_schedules(schedules_dir, allow_fast=allow_fast)  # a bad file is exit 2
    check_file(db_path)  # not even a lock file beside another program's database
    try:
        stopped_by = run_daemon(
            schedules_dir,
            db_path,
            settings,
            feeds,
            allow_fast=allow_fast,
            tick=tick,
            push=push,
            podping=podping,
        )
    except ArchiveLocked as e:
        raise CommandFailure(str(e)) from e
    if stopped_by == signal.SIGINT:
        sys.exit(130)  # Ctrl-C in the foreground; its log already says it stopped


@click.command()
@archive_option("The archive file to read (opened read-only; never created or changed).")
@click.option("--json", "as_json", is_flag=True, help="Print JSON (format 1, see README).")
@click.option(
    "--failing-for",
    default="1d",
    show_default=True,
    metavar="INTERVAL",
    help="Exit 1 when a feed has been failing for longer than this (e.g. 6h, 1d, 1w).",
)
@shards_layout_options(
    "A cluster's shard archives (shard-K-of-N.db) instead of --db: every shard's feeds."
)
@click.option(
    "--broker",
    "broker_url",
    envvar="PODARCHIVE_BROKER",
    metavar="URL",
    help="With --shards-dir: also each shard's worker and queue, from the cluster's Redis.",
)
@translate_errors
def status(
    db_path: Path,
    as_json: bool,
    failing_for: str,
    shards_dir: Path | None,
    shards: int | None,
    broker_url: str | None,
) -> None:
    """Show each feed's health and whether the daemon is alive.

    A table: last success, errors, next due, episodes, pages still missing (with the
    commonest reason they fail), failing transcripts and chapters files, moves and 410s,
    then the daemon's heartbeat. Exit 1 when any feed has been failing longer than
    --failing-for (for monitoring), else 0. Reads the archive without writing anything,
    so anyone who may read the file can run it.

    With --shards-dir, the feeds of every shard of a cluster, each shard's line, and with
    --broker its worker and queue; exit 1 also when a shard has no live worker.
    """
    try:
        threshold = parse_interval(failing_for)
    except ValueError as e:
        raise UsageFailure(f"--failing-for: {e}") from e
    if shards_dir is not None:
        from podarchive.cli.cluster import cluster_status

        cluster_status(shards_dir, shards, broker_url, threshold, as_json)
    else:
        _archive_status(db_path, threshold, as_json)


def _archive_status(db_path: Path, threshold: timedelta, as_json: bool) -> None:
    """``status`` of one archive: its feeds and the daemon's heartbeat (exit 1: a feed
    failing for longer than ``threshold``)."""
    from podarchive.core.clock import utcnow
    from podarchive.tasks.status import heartbeat_path, read_heartbeat, render_table
    from podarchive.tasks.status import report as status_report

    if not db_path.is_file():
        raise CommandFailure(f"no archive at {db_path}")
    with Archive.open_to_read(db_path) as archive:
        feeds = archive.feed_statuses()
        last_audit = archive.last_audit()
        push = archive.push_subscriptions()
        cursor = archive.podping_cursor()
    now = utcnow()
    heartbeat = read_heartbeat(heartbeat_path(db_path))
    podping = dataclasses.asdict(cursor) if cursor else None
    doc = status_report(feeds, heartbeat, now, threshold, last_audit, push=push, podping=podping)
    show_status(doc, as_json, lambda: render_table(doc, now), failing=bool(doc["failing"]))


@click.command()
@archive_option("The archive file to browse (never created).")
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on.")
@click.option(
    "--port", default=8001, show_default=True, type=click.IntRange(0, 65535), help="Port."
)
@shards_layout_options("Browse a cluster's shard archives (shard-K-of-N.db) instead of --db.")
@translate_errors
def serve(db_path: Path, host: str, port: int, shards_dir: Path | None, shards: int | None) -> None:
    """Browse and search the archive in Datasette, with podarchive's metadata.

    Table titles and descriptions, facets, full-text search on episodes, and canned
    queries: search show notes, most-linked domains, episodes linking to a URL or domain,
    what changed recently, removed episodes, failing feeds, episodes by year. An episode's
    page plays its archived media from the media folder, served at /-/media/. Read-only;
    needs the datasette extra. With --shards-dir, every shard of a cluster in one
    Datasette: each shard its own database, and 'all-shards' searching them all at once.
    """
    from podarchive.web.serve import serve as serve_archive
    from podarchive.web.serve import serve_shards

    if shards_dir is not None:
        serve_shards(
            shards_dir,
            shards=shards,
            host=host,
            port=port,
            announce=lambda url: click.echo(
                f"serving {shards_dir} at {url} (Ctrl-C stops)", err=True
            ),
        )
        return
    serve_archive(
        db_path,
        host=host,
        port=port,
        announce=lambda url: click.echo(f"serving {db_path} at {url} (Ctrl-C stops)", err=True),
    )
