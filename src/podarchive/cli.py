"""The only click user: thin commands over the library, exit codes, logging.

Exit codes: 0 every feed succeeded; 1 a feed (or the archive) failed, one line per
failure on stderr; 2 a usage or configuration error.
"""

from __future__ import annotations

import dataclasses
import logging
import sys
from collections.abc import Callable
from datetime import timedelta
from functools import wraps
from pathlib import Path
from typing import Any, TypeVar

import click

from podarchive import __version__
from podarchive.config import (
    FeedSchedule,
    add_schedule,
    check_feed_url,
    load_schedules,
    parse_interval,
)
from podarchive.discover import find_feed
from podarchive.errors import ConfigError, PodarchiveError
from podarchive.pipeline import RunReport, update_due, update_feeds
from podarchive.scheduler import validate_cron
from podarchive.settings import settings_from_env
from podarchive.store import Archive

F = TypeVar("F", bound=Callable[..., Any])
DEFAULT_DB = Path("archive.db")
DEFAULT_SCHEDULES = Path("schedules")


class UsageFailure(click.ClickException):
    """A configuration problem: one line on stderr, exit 2."""

    exit_code = 2

    def show(self, file: Any = None) -> None:
        click.echo(f"podarchive: error: {self.message}", err=True)


class CommandFailure(click.ClickException):
    """The command ran but failed: one line on stderr, exit 1."""

    exit_code = 1

    def show(self, file: Any = None) -> None:
        click.echo(f"podarchive: {self.message}", err=True)


def _setup_logging(verbose: int) -> None:
    level = logging.WARNING if verbose == 0 else logging.INFO if verbose == 1 else logging.DEBUG
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(message)s"))
    root = logging.getLogger("podarchive")
    root.handlers[:] = [handler]
    root.setLevel(level)
    root.propagate = False


def verbosity(command: F) -> F:
    """``-v`` on every command (repeat for more)."""

    @click.option("-v", "--verbose", count=True, help="Log each feed (-vv for debugging).")
    @wraps(command)
    def wrapper(*args: Any, verbose: int, **kwargs: Any) -> Any:
        _setup_logging(
            verbose + (click.get_current_context().find_root().params.get("verbose") or 0)
        )
        return command(*args, **kwargs)

    return wrapper  # type: ignore[return-value]


def translate_errors(command: F) -> F:
    """Library errors become one-line messages with the right exit code, never tracebacks."""

    @wraps(command)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return command(*args, **kwargs)
        except ConfigError as e:
            raise UsageFailure(str(e)) from e
        except PodarchiveError as e:
            raise CommandFailure(str(e)) from e

    return wrapper  # type: ignore[return-value]


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, "--version", prog_name="podarchive")
@click.option("-v", "--verbose", count=True, help="Log each feed (-vv for debugging).")
def cli(verbose: int) -> None:
    """Archive podcasts: feeds, episode pages, show notes and links, into SQLite.

    Browse the archive with Datasette: ``datasette archive.db``.
    """
    _setup_logging(verbose)


db_option = click.option(
    "--db",
    "db_path",
    type=click.Path(dir_okay=False, path_type=Path),
    default=DEFAULT_DB,
    show_default=True,
    help="The archive file (created on first run).",
)
schedules_option = click.option(
    "--schedules",
    "schedules_dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=DEFAULT_SCHEDULES,
    show_default=True,
    help="Directory of schedule files (*.toml).",
)


@cli.command()
@click.argument("urls", nargs=-1, metavar="[URL]...")
@schedules_option
@db_option
@click.option(
    "--allow-private-hosts",
    is_flag=True,
    help="Let episode-page URLs from feeds reach loopback/private addresses.",
)
@click.option("--no-pages", is_flag=True, help="Do not fetch episode web pages.")
@click.option("--all", "everything", is_flag=True, help="Poll every scheduled feed, due or not.")
@verbosity
@translate_errors
def run(
    urls: tuple[str, ...],
    schedules_dir: Path,
    db_path: Path,
    allow_private_hosts: bool,
    no_pages: bool,
    everything: bool,
) -> None:
    """Update the feeds that are due (or every feed with --all, or just the URLs given).

    Each feed is due by its schedule (every/cron), later when it keeps failing (exponential
    back-off) or when the server asked for it (Cache-Control, Retry-After, <ttl>). Feeds
    given as URLs are polled at once.
    """
    settings = settings_from_env()
    if allow_private_hosts:
        settings = settings.replace(allow_private_hosts=True)
    feeds = _adhoc_feeds(urls) if urls else load_schedules(schedules_dir)
    if no_pages:
        feeds = tuple(dataclasses.replace(f, pages=False) for f in feeds)
    with Archive(db_path) as archive:
        if urls or everything:
            report = update_feeds(archive, feeds, settings=settings)
        else:
            report = update_due(archive, feeds, settings=settings)
    if report.not_due:
        logging.getLogger("podarchive").info("%d feeds not due yet", report.not_due)
    _finish(report)


def _adhoc_feeds(urls: tuple[str, ...]) -> tuple[FeedSchedule, ...]:
    feeds = []
    for url in dict.fromkeys(urls):
        try:
            feeds.append(FeedSchedule(url=check_feed_url(url)))
        except ValueError as e:
            raise click.BadParameter(str(e), param_hint="URL") from e
    return tuple(feeds)


def _finish(report: RunReport) -> None:
    for feed in report.failed:
        click.echo(f"podarchive: {feed.label}: {feed.error}", err=True)
    if report.failed:
        sys.exit(1)


@cli.command()
@click.argument("url")
@click.option("--every", help="How often to poll, e.g. 30m, 1h, 1d.  [default: 1h]")
@click.option("--cron", help='Or a crontab expression, e.g. "0 * * * *".')
@click.option("--name", help="A name for the podcast.  [default: the feed's title]")
@click.option("--no-pages", is_flag=True, help="Do not fetch episode web pages.")
@click.option(
    "--no-check", is_flag=True, help="Write the schedule without fetching URL to check it."
)
@click.option(
    "--allow-private-hosts", is_flag=True, help="Let a discovered feed be on a private address."
)
@schedules_option
@verbosity
@translate_errors
def add(
    url: str,
    every: str | None,
    cron: str | None,
    name: str | None,
    no_pages: bool,
    no_check: bool,
    allow_private_hosts: bool,
    schedules_dir: Path,
) -> None:
    """Schedule a new feed: writes a schedule file for URL.

    URL may be the feed or a web page that announces it (<link rel="alternate">): the feed
    is fetched first to check it (and to name it), unless --no-check.
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
    if not no_check:
        settings = settings_from_env()
        if allow_private_hosts:
            settings = settings.replace(allow_private_hosts=True)
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
    )
    path = add_schedule(schedules_dir, feed)
    click.echo(f"added {url} to {path}")


def main() -> None:
    """Console entry point."""
    try:
        cli(prog_name="podarchive")
    except KeyboardInterrupt:  # pragma: no cover - interactive only
        click.echo("podarchive: interrupted", err=True)
        sys.exit(130)
