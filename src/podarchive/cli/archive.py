"""Commands that work on an archive as a whole: ``reparse``, ``backfill``, ``check``, ``audit``."""

from __future__ import annotations

import dataclasses
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from podarchive.cli.common import (
    CommandFailure,
    Number,
    UsageFailure,
    _locked,
    archive_option,
    private_hosts_option,
    run_settings,
    schedules_option,
    translate_errors,
    verbosity,
)
from podarchive.read.schedule_files import (
    FeedSchedule,
    check_feed_url,
    load_schedules,
)
from podarchive.store import Archive
from podarchive.tasks.upkeep import working

if TYPE_CHECKING:
    from podarchive.core.settings import Settings
    from podarchive.tasks.backfill import BackfillOptions, BackfillReport


@click.command()
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
    from podarchive.tasks.reparse import reparse as rebuild_from_snapshots
    from podarchive.tasks.reparse import report_line, skipped_lines

    with _locked(db_path), working(db_path) as archive:
        reports = rebuild_from_snapshots(archive, feeds)
    for r in reports:
        click.echo(report_line(r))
        for line in skipped_lines(r):
            click.echo(line, err=True)


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


@contextmanager
def _stop_twice() -> Iterator[tuple[threading.Event, threading.Event]]:
    """(stop, abandon): the first Ctrl-C or SIGTERM sets ``stop`` (nothing new is started);
    a second sets ``abandon`` too (what is in flight is given up, the summary stays); a
    third Ctrl-C interrupts at once."""
    import signal

    stop, abandon = threading.Event(), threading.Event()

    def on_signal(number: int, frame: Any) -> None:
        if stop.is_set():  # a second Ctrl-C: what is in flight is given up, the summary stays
            abandon.set()
            signal.signal(signal.SIGINT, signal.default_int_handler)  # a third: at once
        stop.set()

    previous = {s: signal.signal(s, on_signal) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield stop, abandon
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)


@contextmanager
def _backfill_archive(db_path: Path, dry_run: bool) -> Iterator[Archive | None]:
    """A dry run reads the archive if there is one; a backfill writes it, under its lock."""
    if not dry_run:
        with _locked(db_path), working(db_path) as archive:
            yield archive
        return
    existing = Archive.open_read_only(db_path) if db_path.is_file() else None
    try:
        yield existing
    finally:
        if existing is not None:
            existing.close()


def _backfill_settings(allow_private_hosts: bool, rate: float | None) -> Settings:
    """A run's settings, with ``--rate`` as a longer gap between requests to one host."""
    settings = run_settings(allow_private_hosts)
    if rate:
        settings = settings.replace(host_gap=max(settings.host_gap, 1 / rate))
    return settings


def _run_backfill(
    db_path: Path, schedules: tuple[FeedSchedule, ...], options: BackfillOptions, settings: Settings
) -> BackfillReport:
    """The backfill (:func:`podarchive.tasks.backfill.backfill`), stopped gracefully by
    Ctrl-C or SIGTERM, its progress on stderr."""
    from podarchive.runtime.progress import make_progress
    from podarchive.tasks.backfill import backfill as run_backfill

    with (
        _stop_twice() as (stop, abandon),
        make_progress(sys.stderr) as progress,
        _backfill_archive(db_path, options.dry_run) as archive,
    ):
        return run_backfill(
            archive, schedules, options=options, settings=settings, stop=stop,
            progress=progress, abandon=abandon,
        )  # fmt: skip


@click.command()
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
    type=Number(0.001, 1000, "a number of requests per second"),
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
    fetches every episode page, transcript and chapters file not yet archived or that
    failed (files as 'run' fetches them; --limit counts pages only); --site also looks for
    episodes on the podcast's web site (sitemap.xml or its episode listing). A feed with
    media = true gets its episodes' media too, newest first, within PODARCHIVE_MEDIA_BUDGET.
    --dry-run counts what the real backfill would fetch (media: files and declared bytes).
    Interrupt it at any point (Ctrl-C: exit
    130) and run it again: it continues where it stopped and fetches nothing twice. A
    summary goes to stdout (what was done, also when interrupted); progress to stderr.
    """
    from podarchive.tasks.backfill import BackfillOptions
    from podarchive.tasks.backfill_summary import ending, summary_lines

    settings = _backfill_settings(allow_private_hosts, rate)
    schedules = _backfill_feeds(feeds, schedules_dir, allow_private_hosts)
    day = since.strftime("%Y-%m-%d") if since else None
    options = BackfillOptions(
        since=day, limit=limit, dry_run=dry_run, pages_only=pages_only, site=site
    )
    report = _run_backfill(db_path, schedules, options, settings)
    for line in summary_lines(report):
        click.echo(line)
    lines, code = ending(report)
    for line in lines:
        click.echo(line, err=True)
    if code:
        sys.exit(code)


# check (issue #17) --------------------------------------------------------------------------
# (imports are local so that this section stays self-contained)


@click.command()
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
    from podarchive.tasks.archive_check import check as check_archive
    from podarchive.tasks.archive_check import check_lines, rebuilt_line

    report = check_archive(
        db_path, repair_fts=repair_fts, on_rebuilt=lambda t: click.echo(rebuilt_line(db_path, t))
    )
    for line in check_lines(report):
        click.echo(line)
    if not report.sound:
        sys.exit(1)


# audit (issue #26) --------------------------------------------------------------------------
# (imports are local so that this section stays self-contained)


class Size(click.ParamType):  # type: ignore[type-arg]
    """A number of bytes: ``1048576``, ``500MB``, ``2GiB`` (one line and exit 2 otherwise)."""

    name = "size"

    def convert(self, value: Any, param: click.Parameter | None, ctx: Any) -> int:
        from podarchive.tasks.audit import parse_size

        if isinstance(value, int):
            return value
        try:
            return parse_size(str(value))
        except ValueError as e:
            raise UsageFailure(f"--budget: {e}") from e


@click.command()
@archive_option("The archive file whose media to audit (it must exist).")
@click.option(
    "--budget", type=Size(), metavar="BYTES", help="Re-hash at most this much (500MB, 2GiB)."
)
@click.option("--all", "everything", is_flag=True, help="Re-hash every stored file (the default).")
@verbosity
@translate_errors
def audit(db_path: Path, budget: int | None, everything: bool) -> None:
    """Re-hash the stored media files and record each check as a fixity event.

    Files never audited come first, then those audited longest ago, within --budget bytes
    (a later audit continues where this one stopped) or all of them. Prints one line per
    damaged file (changed bytes, or missing) with the episodes it belongs to, then a
    summary; exit 1 when any file is damaged, 0 otherwise. 'status' shows the last audit.
    """
    from podarchive.core.clock import now_iso
    from podarchive.core.settings import media_dir_for, settings_from_env
    from podarchive.store.media_files import MediaFolder
    from podarchive.tasks.audit import audit as run_audit
    from podarchive.tasks.audit import damaged_line, summary_line

    if budget is not None and everything:
        raise UsageFailure("--budget and --all: give one of them")
    if not db_path.exists():
        raise CommandFailure(f"no archive at {db_path}")
    folder = MediaFolder(media_dir_for(db_path, settings_from_env()))
    with _locked(db_path), working(db_path, create=False) as archive:
        report = run_audit(archive, folder, budget=budget, now=now_iso())
    for damaged in report.damaged:
        click.echo(damaged_line(damaged))
    click.echo(summary_line(report))
    if report.damaged:
        sys.exit(1)


COMMANDS = (reparse, backfill, check, audit)
