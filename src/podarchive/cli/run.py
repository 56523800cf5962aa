"""``run``: update the feeds that are due, once (cron's command).

Imported only for ``run`` (:class:`~podarchive.cli.LazyCommands`): what it imports is what
cron's start-up costs on every run, so the commands' other libraries stay out of here.
"""

from __future__ import annotations

import dataclasses
import logging
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import click

from podarchive.cli.common import (
    DEFAULT_SCHEDULES,
    STOPPED_BY,
    Number,
    UsageFailure,
    _stop_on_signals,
    allow_fast_option,
    db_option,
    private_hosts_option,
    run_settings,
    schedules_option,
    translate_errors,
    verbosity,
)
from podarchive.core.errors import one_line
from podarchive.core.urls import normalize_url
from podarchive.read.schedule_files import (
    MAX_INTERVAL,
    FeedSchedule,
    check_feed_url,
    load_schedules,
)
from podarchive.runtime.lock import FileLock
from podarchive.store import check_file
from podarchive.tasks.status import plural, problem_line
from podarchive.tasks.upkeep import working
from podarchive.update.run import RunReport, update_due, update_feeds


@click.command()
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
