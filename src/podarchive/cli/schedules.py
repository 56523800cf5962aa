"""The schedule files' commands: ``add`` (one feed), ``import`` and ``export`` (OPML)."""

from __future__ import annotations

import dataclasses
import sys
from datetime import timedelta
from pathlib import Path
from typing import Any

import click
from click.core import ParameterSource

from podarchive.cli.common import (
    CommandFailure,
    UsageFailure,
    allow_fast_option,
    run_settings,
    schedules_option,
    translate_errors,
    verbosity,
)
from podarchive.core.errors import safe_url, shorten
from podarchive.core.settings import user_agent_problem
from podarchive.read.schedule_files import (
    FeedSchedule,
    add_schedule,
    check_every,
    check_feed_url,
    find_schedule,
    load_schedules,
    parse_interval,
    render_schedule,
    update_schedule,
)
from podarchive.rules.cron import validate_cron
from podarchive.rules.recheck import check_page_every


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

    A URL already scheduled is not added twice: the options given update its entry, in
    its file, and its other settings are kept (one line says what changed; no fetch).
    """
    if every and cron:
        raise click.UsageError("give --every or --cron, not both")
    try:
        url = check_feed_url(url)
    except ValueError as e:
        raise UsageFailure(str(e)) from e  # one line, whatever URL holds
    try:
        interval = check_every(parse_interval(every), allow_fast=allow_fast) if every else None
        if cron:
            validate_cron(cron)
    except ValueError as e:
        raise UsageFailure(f"--{'every' if every else 'cron'}: {e}") from e
    try:
        recheck = parse_interval(page_every) if page_every else None
        recheck = check_page_every(recheck, allow_fast=allow_fast) if recheck else None
    except ValueError as e:
        raise UsageFailure(f"--page-every: {e}") from e
    problem = None if user_agent is None else user_agent_problem(user_agent)
    if problem is not None:
        raise UsageFailure(f"--user-agent: {shorten(user_agent or '', 40)!r} is {problem}")
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
    scheduled = find_schedule(schedules_dir, url, allow_fast=allow_fast)
    if scheduled is None and not no_check:
        settings = run_settings(allow_private_hosts)
        if user_agent:
            settings = settings.replace(user_agent=user_agent)
        from podarchive.tasks.discover import find_feed

        found = find_feed(url, settings)
        if found.discovered_from:
            click.echo(f"found the feed {safe_url(found.url)} on {safe_url(found.discovered_from)}")
        url, name = found.url, name or found.title
        scheduled = find_schedule(schedules_dir, url, allow_fast=allow_fast)
    if scheduled is not None:
        _update_entry(scheduled, _given(feed), allow_fast)
        return
    feed = dataclasses.replace(feed, url=url, name=name)
    path = add_schedule(schedules_dir, feed, allow_fast=allow_fast)
    click.echo(f"added {safe_url(url)} to {path}")


#: The schedule entry's fields each option of ``add`` sets (--every and --cron: both, as one
#: replaces the other).
ADD_OPTIONS = {
    "every": ("every", "cron"), "cron": ("every", "cron"), "name": ("name",),
    "no_pages": ("pages",), "page_every": ("page_every",), "no_transcripts": ("transcripts",),
    "no_chapters": ("chapters",), "user_agent": ("user_agent",),
    "allow_private_hosts": ("allow_private_hosts",),
}  # fmt: skip


def _given(feed: FeedSchedule) -> dict[str, Any]:
    """The fields of ``feed`` (the entry ``add`` would write) that an option given set."""
    context = click.get_current_context()
    return {
        field: getattr(feed, field)
        for option, fields in ADD_OPTIONS.items()
        if context.get_parameter_source(option) is ParameterSource.COMMANDLINE
        for field in fields
    }


def _update_entry(scheduled: FeedSchedule, changes: dict[str, Any], allow_fast: bool) -> None:
    """``add`` for a URL already scheduled: the options given change its entry (one line
    says how); none given is a usage error, as adding it twice would be."""
    where = f"{safe_url(scheduled.url)} is already scheduled in {scheduled.source}"
    if not changes:
        raise UsageFailure(f"{where}; give the options to change (--every, --name…)")
    updated = dataclasses.replace(scheduled, **changes)
    before = render_schedule(scheduled).splitlines()
    changed = [line for line in render_schedule(updated).splitlines() if line not in before]
    if not changed:
        click.echo(f"{where} with these settings; nothing changed")
        return
    path = update_schedule(scheduled, updated, allow_fast=allow_fast)
    click.echo(
        f"updated {safe_url(scheduled.url)} in {path}: {', '.join(changed)} (other settings kept)"
    )


# OPML import and export (issue 14) ----------------------------------------------------------
# (imports are local so that this section stays self-contained)


class OpmlFailure(click.ClickException):
    """A file that is no usable OPML: ``podarchive: FILE: reason``, exit 2."""

    exit_code = 2

    def show(self, file: Any = None) -> None:
        from podarchive.core.errors import escape_controls

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
    or text, with the settings 'podarchive export' wrote into it (podarchive:every…; the
    options given here win). Feeds already scheduled, duplicates in the file and URLs that
    are not http(s) or hold a control character or white space are reported and left out;
    each new feed is fetched once to check it is a feed (or a page announcing one), unless
    --no-check. The new feeds go into <schedules>/import-<FILE's name>.toml (-2, -3… if
    taken). Exit 1 if a feed failed its check (the others are scheduled), 2 if FILE is no
    usable OPML or a setting in it is bad.
    """
    from podarchive.core.errors import OpmlError, one_line
    from podarchive.read.opml import MAX_OPML_BYTES, ImportSorter, parse_opml
    from podarchive.read.schedule_files import add_schedules

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
    overrides = _overrides(interval, cron, no_pages, allow_private_hosts)
    plans = [
        _planned(s.feed, str(opml_file), overrides, allow_fast) if s.verdict == "new" else None
        for s in first
    ]
    settings = None if no_check else run_settings(allow_private_hosts)
    from podarchive.tasks.discover import FeedChecks

    checks = FeedChecks(new, settings)
    counts = dict.fromkeys(("new", "scheduled", "duplicate", "failed", "skipped"), 0)
    chosen: list[FeedSchedule] = []
    with checks:
        for outcome, plan in zip(first, plans, strict=True):
            if outcome.verdict == "new" and settings:
                found = checks.next()
                if isinstance(found, str):
                    url = safe_url(outcome.feed.url)
                    click.echo(f"podarchive: {url}: {one_line(found)}; not scheduled", err=True)
                    counts["failed"] += 1
                    continue
                outcome = _checked(outcome, found, sorter)
            counts[outcome.verdict] += 1
            click.echo(outcome.line)
            if outcome.verdict == "new" and plan is not None:
                chosen.append(
                    dataclasses.replace(plan, url=outcome.feed.url, name=outcome.feed.title)
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
        f"{counts['skipped']} skipped"
    )
    if counts["failed"]:
        sys.exit(1)


def _overrides(
    interval: timedelta | None, cron: str | None, no_pages: bool, allow_private_hosts: bool
) -> dict[str, Any]:
    """What the command's options set in every new entry, over the OPML file's settings."""
    overrides: dict[str, Any] = {"every": interval, "cron": cron} if interval or cron else {}
    if no_pages:
        overrides["pages"] = False
    if allow_private_hosts:
        overrides["allow_private_hosts"] = True
    return overrides


def _planned(feed: Any, path: str, overrides: dict[str, Any], allow_fast: bool) -> FeedSchedule:
    """A new feed's schedule entry: its outline's podarchive settings, checked as a schedule
    file's (a bad one is exit 2, before anything is fetched), then the command's options."""
    from podarchive.read.schedule_files import feed_from_options

    where = f"line {feed.line}: podarchive" if feed.line else "podarchive"
    entry = feed_from_options(
        feed.url, feed.title, feed.options, path=path, where=where, allow_fast=allow_fast
    )
    return dataclasses.replace(entry, **overrides)


def _checked(outcome: Any, found: Any, sorter: Any) -> Any:
    """A new feed that passed its check: named after the feed when the OPML gave no name;
    sorted again when the feed was found on a web page (it may be scheduled already)."""
    title = outcome.feed.title or " ".join((found.title or "").split()) or None
    feed = dataclasses.replace(outcome.feed, url=found.url, title=title)
    if found.url == outcome.feed.url:
        return dataclasses.replace(outcome, feed=feed)
    click.echo(f"found the feed {safe_url(found.url)} on {safe_url(outcome.feed.url)}")
    return sorter.sort(feed)


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
    click.echo(f"exported {len(feeds)} feed{'' if len(feeds) == 1 else 's'} to {output}")


COMMANDS = (add, import_opml, export)
