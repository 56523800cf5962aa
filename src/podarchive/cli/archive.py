"""Commands that work on an archive as a whole: ``reparse``, ``backfill`` and ``check``."""

from __future__ import annotations

import dataclasses
import sys
import threading
from pathlib import Path
from typing import Any

import click

from podarchive.cli.common import (
    CommandFailure,
    Number,
    _locked,
    _working,
    archive_option,
    private_hosts_option,
    run_settings,
    schedules_option,
    translate_errors,
    verbosity,
)
from podarchive.core.errors import one_line, safe_url
from podarchive.read.schedule_files import (
    FeedSchedule,
    check_feed_url,
    load_schedules,
)
from podarchive.store import Archive
from podarchive.tasks.status import plural


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
            click.echo(f"  failed: {one_line(f.error)}")
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
            for url in [*f.would_fetch, *f.would_fetch_files]:
                click.echo(f"  would fetch {safe_url(url)}")
            click.echo(f"  pages: would fetch {len(f.would_fetch)}")
            if f.would_fetch_files:
                click.echo(f"  transcripts and chapters: would fetch {len(f.would_fetch_files)}")
        else:
            click.echo(
                f"  pages: {verb} {f.pages_fetched} ({f.pages_ok} ok, {f.pages_empty} without "
                f"notes, {f.pages_failed} failed)"
                + (f", {f.pages_left} left" if f.pages_left else "")
            )
            if f.files_fetched or f.files_left:
                click.echo(
                    f"  transcripts and chapters: {verb} {f.files_fetched} ({f.files_ok} read, "
                    f"{f.files_failed} failed)" + (f", {f.files_left} left" if f.files_left else "")
                )
        for url, reason in f.failures:
            click.echo(f"  failure: {safe_url(url)}: {one_line(reason)}")
    if report.dry_run:
        more = sum(len(f.would_fetch) + len(f.would_fetch_files) for f in report.feeds)
        click.echo(
            f"dry run: {plural(report.requests, 'request')} made for the feed documents; "
            f"{plural(more, 'more request', 'more requests')} for episode pages, transcripts "
            "and chapters; nothing written"
        )
    else:
        click.echo(plural(report.requests, "request"))


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
    episodes on the podcast's web site (sitemap.xml or its episode listing). --dry-run
    counts what the real backfill would fetch. Interrupt it at any point (Ctrl-C: exit
    130) and run it again: it continues where it stopped and fetches nothing twice. A
    summary goes to stdout (what was done, also when interrupted); progress to stderr.
    """
    import signal

    from podarchive.runtime.progress import make_progress
    from podarchive.tasks.backfill import BackfillOptions
    from podarchive.tasks.backfill import backfill as run_backfill

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
    stop, abandon = threading.Event(), threading.Event()

    def on_signal(number: int, frame: Any) -> None:
        if stop.is_set():  # a second Ctrl-C: what is in flight is given up, the summary stays
            abandon.set()
            signal.signal(signal.SIGINT, signal.default_int_handler)  # a third: at once
        stop.set()

    previous = {s: signal.signal(s, on_signal) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        with make_progress(sys.stderr) as progress:
            if dry_run:
                archive = Archive.open_read_only(db_path) if db_path.is_file() else None
                try:
                    report = run_backfill(
                        archive, schedules, options=options, settings=settings, stop=stop,
                        progress=progress, abandon=abandon,
                    )  # fmt: skip
                finally:
                    if archive is not None:
                        archive.close()
            else:
                with _locked(db_path), _working(db_path) as archive:
                    report = run_backfill(
                        archive, schedules, options=options, settings=settings, stop=stop,
                        progress=progress, abandon=abandon,
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
            click.echo(f"podarchive: {f.label}: {one_line(f.error or '')}", err=True)
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
    from podarchive.core.errors import ArchiveLocked
    from podarchive.runtime.lock import archive_lock
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


COMMANDS = (reparse, backfill, check)
