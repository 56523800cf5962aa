"""The schedule files' commands: ``add`` (one feed), ``import`` and ``export`` (OPML)."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import click
from click.core import ParameterSource

from podarchive.cli.common import (
    CommandFailure,
    UsageFailure,
    allow_fast_option,
    schedules_option,
    translate_errors,
    verbosity,
)
from podarchive.core.errors import OpmlError, escape_controls, one_line, safe_url
from podarchive.read.schedule_files import load_schedules
from podarchive.tasks.status import plural
from podarchive.tasks.subscribe import (
    AddReport,
    BadSetting,
    ImportEntry,
    ImportReport,
    add_feed,
    import_feeds,
)


@contextmanager
def options_named() -> Iterator[None]:
    """A bad setting is named by its option: ``--page-every: …`` (exit 2)."""
    try:
        yield
    except BadSetting as e:
        raise UsageFailure(f"--{e.setting.replace('_', '-')}: {e.problem}") from e


@click.command()
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
    "--media/--no-media",
    default=False,
    help="Keep the episodes' audio and video (writes media = true; the other media_* keys: "
    "docs/schedules.md).  [default: no media]",
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
def add(url: str, no_check: bool, allow_fast: bool, schedules_dir: Path, **options: Any) -> None:
    """Schedule a new feed: writes a schedule file for URL.

    URL may be the feed or a web page that announces it (<link rel="alternate">): the feed
    is fetched first to check it (and to name it), unless --no-check. Every option given is
    written into the schedule entry (--allow-private-hosts as allow_private_hosts = true,
    --no-pages as pages = false, --media as media = true, and so on).

    A URL already scheduled is not added twice: the options given update its entry, in
    its file, and its other settings are kept (one line says what changed; no fetch).
    """
    _one_schedule(options)
    with options_named():
        report = add_feed(
            schedules_dir,
            url,
            **_settings(options),
            given=_given(options),
            check=not no_check,
            allow_fast=allow_fast,
            on_found=_found,
        )
    _print_added(report)


#: The options that clear a schedule entry's field (the others set the field of their name).
NO_FLAGS = {"no_pages": "pages", "no_transcripts": "transcripts", "no_chapters": "chapters"}


def _one_schedule(options: dict[str, Any]) -> None:
    if options["every"] and options["cron"]:
        raise click.UsageError("give --every or --cron, not both")


def _settings(options: dict[str, Any]) -> dict[str, Any]:
    """The schedule entry's settings the options give (``no_pages`` as ``pages=False``…)."""
    return {NO_FLAGS.get(k, k): (not v if k in NO_FLAGS else v) for k, v in options.items()}


def _given(options: dict[str, Any]) -> set[str]:
    """The fields of the entry that an option given on the command line sets."""
    context = click.get_current_context()
    return {
        NO_FLAGS.get(option, option)
        for option in options
        if context.get_parameter_source(option) is ParameterSource.COMMANDLINE
    }


def _found(feed: str, page: str) -> None:
    click.echo(f"found the feed {safe_url(feed)} on {safe_url(page)}")


def _print_added(report: AddReport) -> None:
    """``add``'s one line; a feed already scheduled with no option given to change is a usage
    error, as adding it twice would be."""
    url = safe_url(report.url)
    where = f"{url} is already scheduled in {report.path}"
    if report.action == "scheduled":
        raise UsageFailure(f"{where}; give the options to change (--every, --name…)")
    if report.action == "unchanged":
        click.echo(f"{where} with these settings; nothing changed")
    elif report.action == "updated":
        changed = ", ".join(report.changed)
        click.echo(f"updated {url} in {report.path}: {changed} (other settings kept)")
    else:
        click.echo(f"added {url} to {report.path}")


# OPML import and export (issue 14) ----------------------------------------------------------


class OpmlFailure(click.ClickException):
    """A file that is no usable OPML: ``podarchive: FILE: reason``, exit 2."""

    exit_code = 2

    def show(self, file: Any = None) -> None:
        click.echo(f"podarchive: {escape_controls(self.message)}", err=True)


@click.command("import")
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
    opml_file: Path, no_check: bool, allow_fast: bool, schedules_dir: Path, **options: Any
) -> None:
    """Schedule every feed of an OPML file (a podcast app's export): one new schedule file.

    Each outline with an xmlUrl is a feed (nested outlines are walked), named by its title
    or text, with the settings 'podarchive export' wrote into it (podarchive:every…; the
    options given here win). Feeds already scheduled, duplicates in the file and URLs that
    are not http(s) or hold a control character or white space are reported and left out;
    each new feed is fetched once to check it is a feed (or a page announcing one), unless
    --no-check. The new feeds go into <schedules>/import-<FILE's name>.toml (-2, -3… if
    taken). Exit 1 if a feed failed its check (the others are scheduled), 2 if FILE is no
    usable OPML or a setting in it is bad.
    """
    _one_schedule(options)
    try:
        with options_named():
            report = import_feeds(
                schedules_dir,
                opml_file,
                **_settings(options),
                check=not no_check,
                allow_fast=allow_fast,
                each=_print_entry,
            )
    except OpmlError as e:
        raise OpmlFailure(str(e)) from e
    click.echo(_import_summary(report))
    if report.count("failed"):
        sys.exit(1)


def _print_entry(entry: ImportEntry) -> None:
    """One feed's line, as soon as the import knows its fate (a failed check on stderr)."""
    url = safe_url(entry.outcome.feed.url)
    if entry.failed is not None:
        click.echo(f"podarchive: {url}: {one_line(entry.failed)}; not scheduled", err=True)
        return
    if entry.found_on is not None:
        click.echo(f"found the feed {url} on {safe_url(entry.found_on)}")
    click.echo(entry.outcome.line)


def _import_summary(report: ImportReport) -> str:
    """``subs.opml: 2 scheduled in schedules/import-subs.toml, 1 already scheduled…``."""
    where = f" in {report.path}" if report.path is not None else ""
    dupes = report.count("duplicate")
    return (
        f"{report.opml_file}: {report.count('new')} scheduled{where}, "
        f"{report.count('scheduled')} already scheduled, "
        f"{plural(dupes, 'duplicate')}, {report.count('failed')} failed, "
        f"{report.count('skipped')} skipped"
    )


@click.command()
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

    One <outline type="rss" text=… title=… xmlUrl=…/> per feed, in UTF-8, with the feed's
    settings that are not the defaults as podarchive:every="30m"… attributes (apps ignore
    them; 'podarchive import' reads them back).
    """
    from podarchive.core.clock import utcnow
    from podarchive.read.opml import OpmlFeed, render_opml
    from podarchive.read.schedule_files import feed_options

    feeds = load_schedules(schedules_dir, allow_fast=True)  # exporting polls nothing
    outlines = [OpmlFeed(f.url, f.name, options=feed_options(f)) for f in feeds]
    body = render_opml(outlines, "podarchive feeds", utcnow())
    if output is None or str(output) == "-":
        sys.stdout.flush()
        sys.stdout.buffer.write(body)
        sys.stdout.buffer.flush()
        return
    try:
        output.write_bytes(body)
    except OSError as e:
        raise CommandFailure(f"{output}: cannot write: {e.strerror}") from e
    click.echo(f"exported {plural(len(feeds), 'feed')} to {output}")


COMMANDS = (add, import_opml, export)
