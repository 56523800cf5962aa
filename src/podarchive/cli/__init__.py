"""The only click user: thin commands over the library, exit codes, logging.

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
from contextlib import contextmanager, suppress
from datetime import timedelta
from pathlib import Path
from typing import Any

import click

from podarchive import __version__
from podarchive.cli.common import (
    INTERRUPTED,
    CommandFailure,
    Interrupted,
    UsageFailure,
    _daemon_logging,
    _setup_logging,
    _stop_on_ctrl_c,
    allow_fast_option,
    archive_option,
    db_option,
    private_hosts_option,
    run_settings,
    schedules_option,
    shards_layout_options,
    translate_errors,
    verbosity,
)
from podarchive.clock import now_iso
from podarchive.config import (
    FeedSchedule,
    add_schedule,
    check_every,
    check_feed_url,
    load_schedules,
    parse_interval,
)
from podarchive.cron import validate_cron
from podarchive.errors import StorageError
from podarchive.lock import FileLock
from podarchive.recheck import check_page_every
from podarchive.run import RunReport, update_due, update_feeds
from podarchive.status import plural, problem_line
from podarchive.store import Archive, check_file
from podarchive.urls import normalize_url


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
    "--wait",
    "wait_seconds",
    type=click.FloatRange(min=0),
    default=0,
    metavar="SECONDS",
    help="If another run holds the archive, wait up to this long for it (default: skip at once).",
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
    wait_seconds: float,
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

    Exit 1 when a feed failed (one line each). Pages, transcripts and chapters files that
    failed do not fail the run: one line per feed says how many, why and what to do.
    Ctrl-C stops it (exit 130), keeping everything stored so far.
    """
    from podarchive.errors import ArchiveLocked
    from podarchive.lock import archive_lock

    settings = run_settings(allow_private_hosts)
    if urls:
        feeds = _adhoc_feeds(urls, schedules_dir)
    else:
        feeds = load_schedules(schedules_dir, allow_fast=allow_fast)
    if no_pages:
        feeds = tuple(dataclasses.replace(f, pages=False) for f in feeds)
    check_file(db_path)  # not even a lock file beside another program's database
    try:
        lock = archive_lock(db_path).acquire(wait=wait_seconds)
    except ArchiveLocked as e:
        click.echo(f"podarchive: {e}; skipping", err=True)
        return
    stop = threading.Event()
    with lock, _working(db_path) as archive, _stop_on_ctrl_c(stop):
        update = update_feeds if urls or everything else update_due
        report = update(archive, feeds, settings=settings, recheck_pages=recheck_pages, stop=stop)
    if report.stopped:
        raise Interrupted(f"{INTERRUPTED}; what was stored is kept; the next run does the rest")
    if report.not_due:
        logging.getLogger("podarchive").info("%s not due yet", plural(report.not_due, "feed"))
    _finish(report)


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


@contextmanager
def _working(db_path: Path, *, create: bool = True) -> Iterator[Archive]:
    """The archive for a command that writes: refused untouched unless it is one, given a
    ``quick_check`` once a day, and checkpointed afterwards (so the WAL does not grow)."""
    with Archive(db_path, create=create) as archive:
        archive.check_daily()
        _fill_tags_once(archive)
        try:
            yield archive
        except BaseException:
            with suppress(StorageError):  # the first error is the one to report
                archive.checkpoint()
            raise
        archive.checkpoint()


def _locked(db_path: Path) -> FileLock:
    """The archive's lock for a command that must not wait: held by another run, the command
    fails in one line. A foreign database gets no lock file beside it."""
    from podarchive.errors import ArchiveLocked
    from podarchive.lock import archive_lock

    check_file(db_path)
    try:
        return archive_lock(db_path).acquire()
    except ArchiveLocked as e:
        raise CommandFailure(str(e)) from e


def _fill_tags_once(archive: Archive) -> None:
    """After the upgrade to schema 9, once: feeds archived before it get their extension
    elements (``tags``) from their stored snapshots (a ``reparse`` of those feeds)."""
    if archive.feeds_without_tags():
        log = logging.getLogger("podarchive")
        log.info("filling podcast tags from the stored snapshots (once, after the upgrade)")
        from podarchive.reparse import fill_tags

        for report in fill_tags(archive, now_iso()):
            replayed = plural(report.bodies, "body", "bodies")
            log.info("%s: %s replayed for its tags", report.label, replayed)


def _finish(report: RunReport) -> None:
    """One line per failed feed (exit 1), then one per feed whose pages or files failed
    (these alone leave the exit code 0)."""
    for feed in report.failed:
        click.echo(f"podarchive: {feed.label}: {feed.error}", err=True)
    for feed in report.feeds:
        line = problem_line(feed.label, feed.problems, feed.source)
        if line is not None:
            click.echo(f"podarchive: {line}", err=True)
    if report.failed:
        sys.exit(1)


@cli.command()
@click.argument("url")
@click.option("--every", help="How often to poll, e.g. 30m, 1h, 1d.  [default: 1h]")
@click.option("--cron", help='Or a crontab expression, e.g. "0 * * * *".')
@click.option("--name", help="A name for the podcast.  [default: the feed's title]")
@click.option("--no-pages", is_flag=True, help="Do not fetch episode web pages.")
@click.option(
    "--page-every",
    metavar="INTERVAL",
    help="Re-check archived episode pages this often (at least 1h).  "
    "[default: by the episode's age]",
)
@click.option("--no-transcripts", is_flag=True, help="Do not fetch podcast:transcript files.")
@click.option("--no-chapters", is_flag=True, help="Do not fetch podcast:chapters files.")
@click.option(
    "--user-agent",
    metavar="TEXT",
    help="The User-Agent to send for this feed (for hosts that refuse unknown agents).",
)
@click.option(
    "--no-check", is_flag=True, help="Write the schedule without fetching URL to check it."
)
@click.option(
    "--allow-private-hosts",
    is_flag=True,
    help="Let this feed's episode pages and files (and a feed found on the page URL) be on "
    "loopback and private addresses.",
)
@allow_fast_option
@schedules_option
@translate_errors
def add(
    url: str,
    every: str | None,
    cron: str | None,
    name: str | None,
    no_pages: bool,
    page_every: str | None,
    no_transcripts: bool,
    no_chapters: bool,
    user_agent: str | None,
    no_check: bool,
    allow_private_hosts: bool,
    allow_fast: bool,
    schedules_dir: Path,
) -> None:
    """Schedule a new feed: writes a schedule file for URL.

    URL may be the feed or a web page that announces it (<link rel="alternate">): the feed
    is fetched first to check it (and to name it), unless --no-check. Every option given is
    written into the schedule entry (--allow-private-hosts as allow_private_hosts = true,
    --no-pages as pages = false, and so on).
    """
    if every and cron:
        raise click.UsageError("give --every or --cron, not both")
    try:
        url = check_feed_url(url)
        interval: timedelta | None = parse_interval(every) if every else None
        if cron:
            validate_cron(cron)
    except ValueError as e:
        raise click.BadParameter(str(e)) from e
    try:
        interval = check_every(interval, allow_fast=allow_fast) if interval else None
    except ValueError as e:
        raise UsageFailure(f"--every: {e}") from e
    try:
        recheck = parse_interval(page_every) if page_every else None
        recheck = check_page_every(recheck, allow_fast=allow_fast) if recheck else None
    except ValueError as e:
        raise UsageFailure(f"--page-every: {e}") from e
    if user_agent is not None and (not user_agent.strip() or not user_agent.isprintable()):
        raise click.BadParameter("must be printable text", param_hint="--user-agent")
    if not no_check:
        settings = run_settings(allow_private_hosts)
        if user_agent:
            settings = settings.replace(user_agent=user_agent)
        from podarchive.discover import find_feed

        found = find_feed(url, settings)
        if found.discovered_from:
            click.echo(f"found the feed {found.url} on {found.discovered_from}")
        url, name = found.url, name or found.title
    feed = FeedSchedule(
        url=url,
        name=name,
        every=interval if interval else (None if cron else timedelta(hours=1)),
        cron=cron,
        pages=not no_pages,
        user_agent=user_agent,
        allow_private_hosts=allow_private_hosts,
        page_every=recheck,
        transcripts=not no_transcripts,
        chapters=not no_chapters,
    )
    path = add_schedule(schedules_dir, feed, allow_fast=allow_fast)
    click.echo(f"added {url} to {path}")


# daemon and status (issue 5) ---------------------------------------------------------------
# (imports are local so that this section stays self-contained)


def _daemon_update(db_path: Path, settings: Any) -> Callable[..., Any]:
    """The daemon's update function: the archive lock, then ``update_due`` for the batch.

    An archive deleted (or moved away) while the daemon runs is not started again empty:
    the cycle fails with :class:`ArchiveMissing` (logged once) until it is back.
    """
    from collections.abc import Sequence

    from podarchive.clock import iso, utcnow
    from podarchive.errors import ArchiveLocked
    from podarchive.lock import archive_lock
    from podarchive.pipeline import feed_due_at
    from podarchive.scheduler import CycleResult

    def update(feeds: Sequence[FeedSchedule], stop: threading.Event) -> CycleResult:
        try:
            lock = archive_lock(db_path).acquire()
        except ArchiveLocked as e:
            return CycleResult(skipped=str(e))
        with lock, _working(db_path, create=False) as archive:
            report = update_due(archive, feeds, settings=settings, stop=stop)
            polled = {f.url for f in report.feeds}
            blocks = archive.host_blocks(iso(utcnow()))
            waiting = {}
            for feed in feeds:
                state = None if feed.url in polled else archive.feed_state(feed.url)
                if state is not None and state.gone_at is None:
                    waiting[feed.url] = feed_due_at(state, feed, blocks)
        return CycleResult(
            polled=len(report.feeds),
            failed=len(report.failed),
            not_due=report.not_due,
            waiting=waiting,
            stopped=report.stopped,
        )

    return update


@cli.command()
@schedules_option
@db_option
@private_hosts_option
@allow_fast_option
@click.option(
    "--tick",
    type=click.FloatRange(min=0.05),
    default=2.0,
    show_default=True,
    metavar="SECONDS",
    help="How often to write the heartbeat and look for changed schedule files.",
)
@verbosity
@translate_errors
def daemon(
    schedules_dir: Path, db_path: Path, allow_private_hosts: bool, allow_fast: bool, tick: float
) -> None:
    """Poll the scheduled feeds on their schedules until stopped (SIGTERM or Ctrl-C).

    One job per feed (every/cron, with jitter); each update cycle takes the archive lock and
    updates the feeds that are due, as 'run' does. SIGHUP, or a change to the schedule files
    seen on the next tick, reloads the schedules (a bad file keeps the last good schedule).
    Logs one line per feed update on stderr (-v for more); writes <db>.daemon.json as a
    heartbeat for 'podarchive status'. If the archive is deleted while it runs, cycles fail
    (one ERROR line) until it is back: a new empty archive is only started by a restart.
    SIGTERM stops it with exit 0, Ctrl-C (SIGINT) with exit 130; what was stored is kept.
    """
    from podarchive.errors import ArchiveLocked
    from podarchive.lock import archive_lock, daemon_lock
    from podarchive.scheduler import Daemon
    from podarchive.status import heartbeat_path

    _daemon_logging()
    settings = run_settings(allow_private_hosts)
    feeds = load_schedules(schedules_dir, allow_fast=allow_fast)  # a bad file is exit 2
    check_file(db_path)  # not even a lock file beside another program's database
    try:
        life = daemon_lock(db_path).acquire()
    except ArchiveLocked as e:
        raise CommandFailure(str(e)) from e
    with life:
        try:
            with archive_lock(db_path), Archive(db_path):
                pass  # fail now, not in every cycle, when the archive cannot be opened
        except ArchiveLocked:
            pass  # a run is using it, so it opens
        runner = Daemon(
            load=lambda: load_schedules(schedules_dir, allow_fast=allow_fast),
            update=_daemon_update(db_path, settings),
            watch=schedules_dir,
            heartbeat=heartbeat_path(db_path),
            tick=tick,
            retry_after_error=min(30.0, 15 * tick),
        )
        runner.run(feeds)
    if runner.stopped_by == signal.SIGINT:
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
    import json

    from podarchive.clock import utcnow
    from podarchive.status import heartbeat_path, read_heartbeat, render_table
    from podarchive.status import report as status_report

    try:
        threshold = parse_interval(failing_for)
    except ValueError as e:
        raise click.BadParameter(str(e), param_hint="--failing-for") from e
    if shards_dir is not None:
        from podarchive.cli.cluster import cluster_status

        cluster_status(shards_dir, shards, broker_url, threshold, as_json)
        return
    if not db_path.is_file():
        raise CommandFailure(f"no archive at {db_path}")
    with Archive.open_to_read(db_path) as archive:
        feeds = archive.feed_statuses()
    now = utcnow()
    doc = status_report(feeds, read_heartbeat(heartbeat_path(db_path)), now, threshold)
    if as_json:
        click.echo(json.dumps(doc, indent=2, ensure_ascii=False))
    else:
        click.echo(render_table(doc, now), nl=False)
    if doc["failing"]:
        sys.exit(1)


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
    what changed recently, removed episodes, failing feeds, episodes by year. Read-only;
    needs the datasette extra. With --shards-dir, every shard of a cluster in one
    Datasette: each shard its own database, and 'all-shards' searching them all at once.
    """
    from podarchive.serve import serve as serve_archive
    from podarchive.serve import serve_shards

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


@cli.command()
@click.argument("feeds", nargs=-1, metavar="[FEED]...")
@archive_option("The archive file to rebuild (it must exist).")
@verbosity
@translate_errors
def reparse(feeds: tuple[str, ...], db_path: Path) -> None:
    """Rebuild feeds (URL or name; all by default) from their stored snapshots.

    Replays every distinct body each feed was fetched with, in order, through the current
    parser, and every kept episode page body through the current extractor, without the
    network. Pages archived before their bodies were kept stay as they are.
    """
    if not db_path.exists():
        raise CommandFailure(f"no archive at {db_path}")
    from podarchive.reparse import reparse as rebuild_from_snapshots

    with _locked(db_path), _working(db_path) as archive:
        reports = rebuild_from_snapshots(archive, feeds)
    for r in reports:
        s = r.stats
        episodes = "episode" if s.new + s.changed + s.unchanged == 1 else "episodes"
        click.echo(
            f"{r.label}: {plural(r.bodies, 'body', 'bodies')} replayed; {s.new} new, "
            f"{s.changed} changed, {s.unchanged} unchanged {episodes}; "
            f"{plural(r.pages, 'page')} re-read ({r.pages_changed} changed, {r.pages_kept} "
            "kept as they were)"
        )
        for problem in r.skipped:
            click.echo(f"podarchive: {r.label}: skipped a body seen {problem}", err=True)


# backfill (issue 6) -------------------------------------------------------------------------
# (imports are local so that this section stays self-contained)


def _backfill_feeds(
    feeds: tuple[str, ...], schedules_dir: Path, allow_private_hosts: bool
) -> tuple[FeedSchedule, ...]:
    """The feeds named (URL or schedule name), or every scheduled feed when none is."""
    # the polling floor does not matter here: backfill fetches once, not on the interval
    wanted = schedules_dir.is_dir() or not feeds
    scheduled = load_schedules(schedules_dir, allow_fast=True) if wanted else ()
    chosen: list[FeedSchedule] = []
    for name in dict.fromkeys(feeds):
        match = next((f for f in scheduled if name in (f.url, f.name)), None)
        if match is None:
            try:
                match = FeedSchedule(url=check_feed_url(name))
            except ValueError as e:
                raise click.BadParameter(
                    f"{name!r} is neither a scheduled feed's name nor an http(s) URL",
                    param_hint="FEED",
                ) from e
        chosen.append(match)
    result = tuple(chosen) if feeds else scheduled
    if allow_private_hosts:
        result = tuple(dataclasses.replace(f, allow_private_hosts=True) for f in result)
    return result


def _print_backfill(report: Any) -> None:
    """The summary on stdout: per feed, episodes per source, pages, failures."""
    verb = "would fetch" if report.dry_run else "fetched"
    for f in report.feeds:
        click.echo(f"{f.label}:")
        if f.error:
            click.echo(f"  failed: {f.error}")
        click.echo(
            f"  episodes: {f.feed_episodes} in the feed, {f.archive_new} new from "
            f"{plural(f.documents_fetched, 'archive/paged document')} fetched"
            + (f" ({f.documents_done_before} done before)" if f.documents_done_before else "")
        )
        if f.site_found or f.site_new:
            click.echo(
                f"  site: {plural(f.site_found, 'episode page')} found, {f.site_matched} in "
                f"the feed, {f.site_new} new"
            )
        if report.dry_run:
            for url in f.would_fetch:
                click.echo(f"  would fetch {url}")
            click.echo(f"  pages: would fetch {len(f.would_fetch)}")
        else:
            click.echo(
                f"  pages: {verb} {f.pages_fetched} ({f.pages_ok} ok, {f.pages_empty} without "
                f"notes, {f.pages_failed} failed)"
                + (f", {f.pages_left} left" if f.pages_left else "")
            )
        for url, reason in f.failures:
            click.echo(f"  failure: {url}: {reason}")
    if report.dry_run:
        pages = sum(len(f.would_fetch) for f in report.feeds)
        click.echo(
            f"dry run: {plural(report.requests, 'request')} made for the feed documents; "
            f"{plural(pages, 'more request', 'more requests')} for episode pages; nothing written"
        )
    else:
        click.echo(plural(report.requests, "request"))


@cli.command()
@click.argument("feeds", nargs=-1, metavar="[FEED]...")
@schedules_option
@archive_option("The archive file (created if there is none yet; --dry-run only reads it).")
@private_hosts_option
@click.option(
    "--since",
    type=click.DateTime(formats=["%Y-%m-%d"]),
    metavar="DATE",
    help="Only episodes and pages published on or after DATE (YYYY-MM-DD).",
)
@click.option(
    "--limit", type=click.IntRange(min=0), metavar="N", help="Fetch at most N episode pages."
)
@click.option(
    "--dry-run",
    is_flag=True,
    help="Fetch only the feed documents; print what would be fetched; write nothing.",
)
@click.option("--pages-only", is_flag=True, help="Skip feed paging: only fetch episode pages.")
@click.option("--site", is_flag=True, help="Also find episodes on the podcast's web site.")
@click.option(
    "--rate",
    type=click.FloatRange(min=0, min_open=True),
    metavar="PER_SECOND",
    help="At most this many requests per second to one host (slower than the default).",
)
@verbosity
@translate_errors
def backfill(
    feeds: tuple[str, ...],
    schedules_dir: Path,
    db_path: Path,
    allow_private_hosts: bool,
    since: Any,
    limit: int | None,
    dry_run: bool,
    pages_only: bool,
    site: bool,
    rate: float | None,
) -> None:
    """Archive the whole back catalogue of FEEDs (URLs or names; all scheduled by default).

    Walks paged feeds (atom:link rel="next") and RFC 5005 archives (prev-archive), then
    fetches every episode page not yet archived or that failed; --site also looks for
    episodes on the podcast's web site (sitemap.xml or its episode listing). Interrupt it
    at any point (Ctrl-C: exit 130) and run it again: it continues where it stopped and
    fetches nothing twice. A summary goes to stdout; progress to stderr.
    """
    import signal
    import threading

    from podarchive.backfill import BackfillOptions
    from podarchive.backfill import backfill as run_backfill
    from podarchive.progress import make_progress

    settings = run_settings(allow_private_hosts)
    if rate:
        settings = settings.replace(host_gap=max(settings.host_gap, 1 / rate))
    schedules = _backfill_feeds(feeds, schedules_dir, allow_private_hosts)
    options = BackfillOptions(
        since=since.strftime("%Y-%m-%d") if since else None,
        limit=limit,
        dry_run=dry_run,
        pages_only=pages_only,
        site=site,
    )
    stop = threading.Event()

    def on_signal(number: int, frame: Any) -> None:
        stop.set()
        signal.signal(signal.SIGINT, signal.default_int_handler)  # a second Ctrl-C: at once

    previous = {s: signal.signal(s, on_signal) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        with make_progress(sys.stderr) as progress:
            if dry_run:
                archive = Archive.open_read_only(db_path) if db_path.is_file() else None
                try:
                    report = run_backfill(
                        archive, schedules, options=options, settings=settings, stop=stop,
                        progress=progress,
                    )  # fmt: skip
                finally:
                    if archive is not None:
                        archive.close()
            else:
                with _locked(db_path), _working(db_path) as archive:
                    report = run_backfill(
                        archive, schedules, options=options, settings=settings, stop=stop,
                        progress=progress,
                    )  # fmt: skip
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)
    _print_backfill(report)
    if report.stopped:
        click.echo("podarchive: interrupted; run backfill again to continue", err=True)
        sys.exit(130)
    if report.failed:
        for f in report.failed:
            click.echo(f"podarchive: {f.label}: {f.error}", err=True)
        sys.exit(1)


# check (issue #17) --------------------------------------------------------------------------
# (imports are local so that this section stays self-contained)


def _advice(db: Path, problems: list[Any], *, repaired: bool) -> list[str]:
    """What to do about ``problems``: restore or recover; for the search index alone, rebuild."""
    if all(p.check not in ("integrity_check", "foreign_key_check") for p in problems):
        if repaired:
            return []
        return [
            "what to do: only the full-text index is damaged; rebuild it from the episodes:",
            f"  podarchive check --repair-fts --db {db}",
        ]
    return [
        f"what to do: restore {db} from a backup, or recover what SQLite can still read:",
        f'  sqlite3 {db} ".recover" | sqlite3 recovered.db',
        "  then run 'podarchive check --db recovered.db' and use it in place of the archive",
    ]


def _report_check(db: Path, tables: list[str], problems: list[Any]) -> None:
    if not problems:
        fts = [f"{t} integrity-check" for t in tables]
        checks = ", ".join(["integrity_check", "foreign_key_check", *fts])
        click.echo(f"{db}: sound ({checks})")
        return
    click.echo(f"{db}: DAMAGED, {len(problems)} problem{'s' if len(problems) != 1 else ''}")
    for p in problems:
        click.echo(f"  {p.check}: {p.text}")


@cli.command()
@archive_option("The archive file to check (never created).")
@click.option(
    "--repair-fts",
    is_flag=True,
    help="Rebuild a damaged full-text index from the episodes (when nothing else is damaged).",
)
@translate_errors
def check(db_path: Path, repair_fts: bool) -> None:
    """Check the archive: SQLite's integrity_check, foreign_key_check and the full-text index.

    Prints one line per problem and what to do; exit 0 when sound, 1 when not. Changes
    nothing, except with --repair-fts: a damaged full-text index (and nothing else) is
    rebuilt from the episodes, under the archive lock.
    """
    from podarchive.errors import ArchiveLocked
    from podarchive.lock import archive_lock
    from podarchive.store import check_archive

    tables, problems = check_archive(db_path)
    broken = sorted({p.check for p in problems if p.check in tables})
    repaired = False
    if repair_fts and broken and len(broken) == len({p.check for p in problems}):
        try:
            lock = archive_lock(db_path).acquire()
        except ArchiveLocked as e:
            raise CommandFailure(f"{e}; not repairing now") from e
        with lock, Archive(db_path) as archive:
            for table in broken:
                archive.rebuild_fts(table)
                click.echo(f"{db_path}: {table} rebuilt")
        tables, problems = check_archive(db_path)
        repaired = True
    elif repair_fts and broken:
        click.echo(f"{db_path}: not rebuilding the full-text index of a damaged archive")
    _report_check(db_path, tables, problems)
    for line in _advice(db_path, problems, repaired=repaired) if problems else []:
        click.echo(line)
    if problems:
        sys.exit(1)


# OPML import and export (issue 14) ----------------------------------------------------------
# (imports are local so that this section stays self-contained)


class OpmlFailure(click.ClickException):
    """A file that is no usable OPML: ``podarchive: FILE: reason``, exit 2."""

    exit_code = 2

    def show(self, file: Any = None) -> None:
        click.echo(f"podarchive: {self.message}", err=True)


@cli.command("import")
@click.argument("opml_file", metavar="FILE", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--every", help="How often to poll each feed, e.g. 30m, 1h, 1d.  [default: 1h]")
@click.option("--cron", help='Or a crontab expression, e.g. "0 * * * *".')
@click.option("--no-pages", is_flag=True, help="Do not fetch the feeds' episode web pages.")
@click.option(
    "--no-check", is_flag=True, help="Schedule the feeds without fetching each to check it."
)
@click.option(
    "--allow-private-hosts",
    is_flag=True,
    help="Let feeds found on web pages, and the new feeds' episode pages, be on loopback "
    "and private addresses (writes allow_private_hosts = true into each new entry).",
)
@allow_fast_option
@schedules_option
@verbosity
@translate_errors
def import_opml(
    opml_file: Path,
    every: str | None,
    cron: str | None,
    no_pages: bool,
    no_check: bool,
    allow_private_hosts: bool,
    allow_fast: bool,
    schedules_dir: Path,
) -> None:
    """Schedule every feed of an OPML file (a podcast app's export): one new schedule file.

    Each outline with an xmlUrl is a feed (nested outlines are walked), named by its title
    or text. Feeds already scheduled, duplicates in the file and URLs that are not http(s)
    are reported and left out; each new feed is fetched once to check it is a feed (or a
    page announcing one), unless --no-check. The new feeds go into
    <schedules>/import-<FILE's name>.toml (-2, -3… if taken). Exit 1 if a feed failed its
    check (the others are scheduled), 2 if FILE is no usable OPML.
    """
    from podarchive.config import add_schedules
    from podarchive.errors import OpmlError
    from podarchive.opml import MAX_OPML_BYTES, ImportSorter, parse_opml

    if every and cron:
        raise click.UsageError("give --every or --cron, not both")
    try:
        interval = check_every(parse_interval(every), allow_fast=allow_fast) if every else None
        if cron:
            validate_cron(cron)
    except ValueError as e:
        raise UsageFailure(f"--{'every' if every else 'cron'}: {e}") from e
    try:
        with opml_file.open("rb") as f:
            feeds = parse_opml(f.read(MAX_OPML_BYTES + 1))
    except OSError as e:
        raise OpmlFailure(f"{opml_file}: cannot read: {e.strerror}") from e
    except OpmlError as e:
        raise OpmlFailure(f"{opml_file}: {e}") from e
    scheduled = (
        {f.url: f.source for f in load_schedules(schedules_dir, allow_fast=allow_fast)}
        if schedules_dir.exists()
        else {}
    )
    sorter = ImportSorter(scheduled)
    first = [sorter.sort(feed) for feed in feeds]
    new = [s.feed.url for s in first if s.verdict == "new"]
    settings = None if no_check else run_settings(allow_private_hosts)
    from podarchive.discover import FeedChecks

    checks = FeedChecks(new, settings)
    counts = dict.fromkeys(("new", "scheduled", "duplicate", "failed", "not-http"), 0)
    chosen: list[FeedSchedule] = []
    with checks:
        for outcome in first:
            if outcome.verdict == "new" and settings:
                found = checks.next()
                if isinstance(found, str):
                    click.echo(f"podarchive: {outcome.feed.url}: {found}; not scheduled", err=True)
                    counts["failed"] += 1
                    continue
                outcome = _checked(outcome, found, sorter)
            counts[outcome.verdict] += 1
            click.echo(outcome.line)
            if outcome.verdict == "new":
                chosen.append(
                    FeedSchedule(
                        url=outcome.feed.url,
                        name=outcome.feed.title,
                        every=interval if interval else (None if cron else timedelta(hours=1)),
                        cron=cron,
                        pages=not no_pages,
                        allow_private_hosts=allow_private_hosts,
                    )
                )
    where = ""
    if chosen:
        path = add_schedules(
            schedules_dir, chosen, f"import-{opml_file.stem}", allow_fast=allow_fast
        )
        where = f" in {path}"
    dupes = counts["duplicate"]
    click.echo(
        f"{opml_file}: {counts['new']} scheduled{where}, {counts['scheduled']} already "
        f"scheduled, {dupes} duplicate{'' if dupes == 1 else 's'}, {counts['failed']} failed, "
        f"{counts['not-http']} skipped"
    )
    if counts["failed"]:
        sys.exit(1)


def _checked(outcome: Any, found: Any, sorter: Any) -> Any:
    """A new feed that passed its check: named after the feed when the OPML gave no name;
    sorted again when the feed was found on a web page (it may be scheduled already)."""
    title = outcome.feed.title or " ".join((found.title or "").split()) or None
    feed = dataclasses.replace(outcome.feed, url=found.url, title=title)
    if found.url == outcome.feed.url:
        return dataclasses.replace(outcome, feed=feed)
    click.echo(f"found the feed {found.url} on {outcome.feed.url}")
    return sorter.sort(feed)


@cli.command()
@click.option(
    "-o",
    "--output",
    type=click.Path(dir_okay=False, path_type=Path, allow_dash=True),
    help="Write the OPML to this file.  [default: standard output]",
)
@schedules_option
@verbosity
@translate_errors
def export(output: Path | None, schedules_dir: Path) -> None:
    """Print the scheduled feeds as OPML 2.0, for podcast apps (or podarchive import).

    One <outline type="rss" text=… title=… xmlUrl=…/> per feed, in UTF-8.
    """
    from podarchive.clock import utcnow
    from podarchive.opml import OpmlFeed, render_opml

    feeds = load_schedules(schedules_dir, allow_fast=True)  # exporting polls nothing
    body = render_opml([OpmlFeed(f.url, f.name) for f in feeds], "podarchive feeds", utcnow())
    if output is None or str(output) == "-":
        sys.stdout.flush()
        sys.stdout.buffer.write(body)
        sys.stdout.buffer.flush()
        return
    try:
        output.write_bytes(body)
    except OSError as e:
        raise CommandFailure(f"{output}: cannot write: {e.strerror}") from e
    click.echo(f"exported {len(feeds)} feed{'' if len(feeds) == 1 else 's'} to {output}")


from podarchive.cli.cluster import COMMANDS as CLUSTER_COMMANDS  # noqa: E402

for _command in CLUSTER_COMMANDS:
    cli.add_command(_command)


def main() -> None:
    """Console entry point."""
    from podarchive.malloc import return_big_blocks

    return_big_blocks()  # a run's feed bodies go back to the system once stored (#15)
    try:
        cli(prog_name="podarchive")
    except KeyboardInterrupt:  # pragma: no cover - interactive only
        click.echo("podarchive: interrupted", err=True)
        sys.exit(130)
