"""The only click user: thin commands over the library, exit codes, logging.

This module holds the group and the commands that keep an archive current and show it
(``run``, ``daemon``, ``status``, ``serve``); the others have a room each:
:mod:`~podarchive.cli.schedules` (``add``, ``import``, ``export``),
:mod:`~podarchive.cli.archive` (``reparse``, ``backfill``, ``check``),
:mod:`~podarchive.cli.cluster` (``worker``, ``scheduler``, ``reshard``), and
:mod:`~podarchive.cli.common` what they share.

Exit codes: 0 every feed succeeded; 1 a feed (or the archive) failed, one line per
failure on stderr; 2 a usage or configuration error.
"""

from __future__ import annotations

import dataclasses
import logging
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import timedelta
from pathlib import Path
from typing import Any

import click

from podarchive import __version__
from podarchive.cli.common import (
    DEFAULT_SCHEDULES,
    MAX_TICK,
    STOPPED_BY,
    CommandFailure,
    Number,
    UsageFailure,
    _daemon_logging,
    _setup_logging,
    _stop_on_signals,
    allow_fast_option,
    archive_option,
    db_option,
    private_hosts_option,
    run_settings,
    schedules_option,
    shards_layout_options,
    show_status,
    translate_errors,
    verbosity,
)
from podarchive.cli.push import podping_options, podping_settings, push_options, push_settings
from podarchive.core.errors import one_line
from podarchive.core.urls import normalize_url
from podarchive.read.schedule_files import (
    MAX_INTERVAL,
    FeedSchedule,
    check_feed_url,
    load_schedules,
    parse_interval,
)
from podarchive.runtime.lock import FileLock
from podarchive.store import Archive, check_file
from podarchive.tasks.status import plural, problem_line
from podarchive.tasks.upkeep import working
from podarchive.update.run import RunReport, update_due, update_feeds


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, "--version", prog_name="podarchive")
@click.option("-v", "--verbose", count=True, help="Log each feed (-vv for debugging).")
def cli(verbose: int) -> None:
    """Archive podcasts: feeds, episode pages, show notes and links, into SQLite.

    Browse the archive with Datasette: 'podarchive serve'.
    """
    _setup_logging(verbose)


@cli.command()
@click.argument("urls", nargs=-1, metavar="[URL]...")
@schedules_option
@db_option
@private_hosts_option
@allow_fast_option
@click.option("--no-pages", is_flag=True, help="Do not fetch episode web pages.")
@click.option("--all", "everything", is_flag=True, help="Poll every scheduled feed, due or not.")
@click.option(
    "--recheck-pages",
    is_flag=True,
    help="Re-check every archived episode page, transcript and chapters file of the feeds "
    "polled now (conditional GET), due or not.",
)
@click.option(
    "--recheck-media",
    is_flag=True,
    help="Re-check every archived media file of the feeds polled now (conditional GET).",
)
@click.option(
    "--wait",
    "wait_seconds",
    type=Number(0, MAX_INTERVAL.total_seconds()),
    default=0,
    metavar="SECONDS",
    help="If another run holds the archive, wait up to this long for it (default: skip at once).",
)
@click.option(
    "-q", "--quiet", is_flag=True, help="No progress bar (there is none off a terminal: cron)."
)
@verbosity
@translate_errors
def run(
    urls: tuple[str, ...],
    schedules_dir: Path,
    db_path: Path,
    allow_private_hosts: bool,
    allow_fast: bool,
    no_pages: bool,
    everything: bool,
    recheck_pages: bool,
    recheck_media: bool,
    wait_seconds: float,
    quiet: bool,
) -> None:
    """Update the feeds that are due (or every feed with --all, or just the URLs given).

    Each feed is due by its schedule (every/cron), later when it keeps failing (exponential
    back-off) or when the server asked for it (Cache-Control, Retry-After, <ttl>). Feeds
    given as URLs are polled at once, with their schedule entry when they have one.

    One run at a time: a run finding the archive's lock (<db>.lock) held by another run or
    the daemon exits 0 at once with one line, or waits up to --wait SECONDS first.

    Archived episode pages, transcripts and chapters files are re-checked on their own
    schedule (daily in an episode's first week, weekly in its first month, then monthly;
    page_every in the schedule file overrides it); --recheck-pages re-checks them all now.

    Feeds with media = true then get their episodes' audio and video (PODARCHIVE_MEDIA_DIR,
    within PODARCHIVE_MEDIA_BUDGET per run), resuming partial files; archived media is
    re-checked at 1 day, 1 week and 1 month, or now with --recheck-media. Media that fails
    is one line per feed and never fails the run.

    Exit 1 when a feed failed (one line each). Pages, transcripts and chapters files that
    failed do not fail the run: one line per feed says how many, why and what to do; so does
    a warning line for a feed whose body gave fewer episodes than it has items. No feed
    scheduled is one line and exit 0 (a missing schedules directory: exit 2).
    Ctrl-C stops it (exit 130), keeping everything stored so far; so do SIGTERM (exit 143)
    and SIGHUP (exit 129).

    On a terminal a progress bar shows feeds done of those to poll, pages and files fetched
    and bytes read (not under -q, nor off a terminal: cron stays silent).
    """
    settings = run_settings(allow_private_hosts)
    feeds = _feeds_to_poll(urls, schedules_dir, allow_fast, no_pages)
    lock = _run_lock(db_path, wait_seconds) if feeds else None
    if lock is not None:  # else no feed scheduled, or another run holds the archive: exit 0
        update = update_feeds if urls or everything else update_due
        rechecks = {"recheck_pages": recheck_pages, "recheck_media": recheck_media}
        with _run_progress(quiet) as progress:
            report, seen = _update_locked(
                lock, db_path, update, feeds, settings=settings, progress=progress, **rechecks
            )
        _finish(report, seen)


def _feeds_to_poll(
    urls: tuple[str, ...], schedules_dir: Path, allow_fast: bool, no_pages: bool
) -> tuple[FeedSchedule, ...]:
    """The URLs given, else the scheduled feeds (none: one line says how to add one)."""
    if urls:
        feeds = _adhoc_feeds(urls, schedules_dir)
    else:
        feeds = _scheduled(schedules_dir, allow_fast)
        if not feeds:
            hint = f"add one with: {_add(schedules_dir)}"
            click.echo(f"podarchive: no feeds scheduled in {schedules_dir}; {hint}", err=True)
            return ()  # not a failure (cron before the first feed): exit 0, the archive untouched
    if no_pages:
        feeds = tuple(dataclasses.replace(f, pages=False) for f in feeds)
    return feeds


def _run_lock(db_path: Path, wait_seconds: float) -> FileLock | None:
    """The archive's lock, waiting up to ``wait_seconds``; None (and one line) when another
    run or the daemon keeps it."""
    from podarchive.core.errors import ArchiveLocked
    from podarchive.runtime.lock import archive_lock

    check_file(db_path)  # not even a lock file beside another program's database
    try:
        return archive_lock(db_path).acquire(wait=wait_seconds)
    except ArchiveLocked as e:
        click.echo(f"podarchive: {e}; skipping", err=True)
        return None


@contextmanager
def _run_progress(quiet: bool) -> Iterator[Any]:
    """The run's progress bar on stderr when it is a terminal and not ``quiet``, else None
    (rich is imported only then: cron's start-up stays light)."""
    if quiet or not sys.stderr.isatty():
        yield None
        return
    from podarchive.runtime.progress import make_run_progress

    shown = make_run_progress(sys.stderr)
    if shown is None:
        yield None
        return
    with shown:
        yield shown


def _update_locked(
    lock: FileLock, db_path: Path, update: Callable[..., RunReport], *args: Any, **kwargs: Any
) -> tuple[RunReport, list[signal.Signals]]:
    """``update(archive, *args, **kwargs)`` holding ``lock``, until done or stopped by a
    signal; the report, and the signals seen."""
    stop = threading.Event()
    with lock, working(db_path) as archive, _stop_on_signals(stop) as seen:
        report = update(archive, *args, stop=stop, **kwargs)
    return report, seen


def _scheduled(schedules_dir: Path, allow_fast: bool) -> tuple[FeedSchedule, ...]:
    """The scheduled feeds; a missing directory is a usage error saying how to make one."""
    if not schedules_dir.is_dir():
        raise UsageFailure(
            f"{schedules_dir}: no such schedules directory ('{_add(schedules_dir)}' makes "
            "it; or give --schedules DIR)"
        )
    return load_schedules(schedules_dir, allow_fast=allow_fast)


def _add(schedules_dir: Path) -> str:
    """The command that schedules a feed in ``schedules_dir``."""
    where = "" if schedules_dir == DEFAULT_SCHEDULES else f" --schedules {schedules_dir}"
    return f"podarchive add URL{where}"


def _adhoc_feeds(urls: tuple[str, ...], schedules_dir: Path) -> tuple[FeedSchedule, ...]:
    """The feeds given as URLs: each one's schedule entry if it has one (its name, pages,
    user agent…), else the defaults."""
    # the polling floor does not matter here: these feeds are polled now, once
    scheduled = load_schedules(schedules_dir, allow_fast=True) if schedules_dir.is_dir() else ()
    entries = {normalize_url(f.url): f for f in scheduled}
    feeds = []
    for url in dict.fromkeys(urls):
        try:
            checked = check_feed_url(url)
        except ValueError as e:
            raise click.BadParameter(str(e), param_hint="URL") from e
        feeds.append(entries.get(normalize_url(checked)) or FeedSchedule(url=checked))
    return tuple(dict.fromkeys(feeds))


def _finish(report: RunReport, seen: list[signal.Signals]) -> None:
    """A run stopped by a signal: one line, exit 128 + its number. Else one line per failed
    feed (exit 1), then one per feed whose body gave fewer episodes than items or whose pages
    or files failed (these alone leave the exit code 0)."""
    if report.stopped:
        signum = seen[0] if seen else signal.SIGINT
        kept = "what was stored is kept; the next run does the rest"
        click.echo(f"podarchive: {STOPPED_BY[signum]}; {kept}", err=True)
        sys.exit(128 + signum)
    if report.not_due:
        logging.getLogger("podarchive").info("%s not due yet", plural(report.not_due, "feed"))
    for feed in report.failed:  # labels are escaped and shortened (FeedSchedule.label)
        click.echo(f"podarchive: {feed.label}: {one_line(feed.error or '')}", err=True)
    for feed in report.feeds:
        if feed.kept_fewer:
            click.echo(f"podarchive: {feed.label}: warning: {one_line(feed.kept_fewer)}", err=True)
        line = problem_line(feed.label, feed.problems, feed.source)
        if line is not None:
            click.echo(f"podarchive: {line}", err=True)
    for label, problems in (report.media.problems if report.media else {}).items():
        click.echo(f"podarchive: {problem_line(label, problems, '')}", err=True)
    if report.failed:
        sys.exit(1)


# daemon and status (issue 5) ---------------------------------------------------------------
# (imports are local so that this section stays self-contained)


@cli.command()
@schedules_option
@db_option
@private_hosts_option
@allow_fast_option
@click.option(
    "--tick",
    type=Number(0.05, MAX_TICK),
    default=2.0,
    show_default=True,
    metavar="SECONDS",
    help="How often to write the heartbeat and look for changed schedule files.",
)
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


@cli.command()
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


@cli.command()
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


from podarchive.cli.archive import COMMANDS as ARCHIVE_COMMANDS  # noqa: E402
from podarchive.cli.changes import COMMANDS as CHANGE_COMMANDS  # noqa: E402
from podarchive.cli.cluster import COMMANDS as CLUSTER_COMMANDS  # noqa: E402
from podarchive.cli.compact import COMMANDS as COMPACT_COMMANDS  # noqa: E402
from podarchive.cli.export_bag import COMMANDS as EXPORT_BAG_COMMANDS  # noqa: E402
from podarchive.cli.export_warc import COMMANDS as EXPORT_WARC_COMMANDS  # noqa: E402
from podarchive.cli.schedules import COMMANDS as SCHEDULE_COMMANDS  # noqa: E402

for _command in (
    *SCHEDULE_COMMANDS,
    *ARCHIVE_COMMANDS,
    *COMPACT_COMMANDS,
    *CHANGE_COMMANDS,
    *EXPORT_BAG_COMMANDS,
    *EXPORT_WARC_COMMANDS,
    *CLUSTER_COMMANDS,
):
    cli.add_command(_command)


def main() -> None:
    """Console entry point."""
    from podarchive.runtime.malloc import return_big_blocks

    return_big_blocks()  # a run's feed bodies go back to the system once stored (#15)
    try:
        cli(prog_name="podarchive")
    except KeyboardInterrupt:  # pragma: no cover - interactive only
        click.echo("podarchive: interrupted", err=True)
        sys.exit(130)
