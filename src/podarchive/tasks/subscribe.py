"""Schedule feeds: :func:`add_feed` (``podarchive add``: one URL, the feed or a web page that
announces it) and :func:`import_feeds` (``podarchive import``: every feed of an OPML file).

Each checks the settings it is given, fetches each new feed once to check it (unless told not
to), writes the schedule files and returns a report of what it did and why; the command line
prints it. A bad setting is a :class:`BadSetting`, a file that is no usable OPML an
:class:`~podarchive.core.errors.OpmlError` naming the file; fetch and schedule-file errors are
the library's own (:class:`~podarchive.core.errors.PodarchiveError`, one line each).

The parsing stack (read.opml, tasks.discover) is imported when a function needs it, so that
importing this module loads no parser.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from podarchive.core.errors import ConfigError, OpmlError, shorten
from podarchive.core.settings import Settings, settings_from_env, user_agent_problem
from podarchive.read.schedule_files import (
    DEFAULT_EVERY,
    FeedSchedule,
    add_schedule,
    add_schedules,
    check_every,
    check_feed_url,
    feed_from_options,
    find_schedule,
    load_schedules,
    parse_interval,
    render_schedule,
    update_schedule,
)
from podarchive.rules.cron import validate_cron
from podarchive.rules.recheck import check_page_every

if TYPE_CHECKING:
    from podarchive.read.opml import ImportSorter, OpmlFeed, Sorted
    from podarchive.tasks.discover import FeedChecks


class BadSetting(ConfigError):
    """A setting given for the new entries is bad: ``setting`` names it as the schedule file
    does (``every``, ``cron``, ``page_every``, ``user_agent``), ``problem`` says why."""

    def __init__(self, setting: str, problem: str) -> None:
        self.setting = setting
        self.problem = problem
        super().__init__(f"{setting}: {problem}")


# add ---------------------------------------------------------------------------------------

#: What :func:`add_feed` did: wrote a new schedule file; changed the entry of a feed already
#: scheduled; found that entry already holding the settings given; or found the feed already
#: scheduled and no setting given to change.
AddAction = Literal["added", "updated", "unchanged", "scheduled"]


@dataclass(frozen=True, slots=True)
class AddReport:
    action: AddAction
    url: str  # the feed's URL: as written (added), or as its entry has it
    path: str  # the schedule file written, or the one holding the entry
    changed: tuple[str, ...] = ()  # updated: the entry's lines that are new
    found_on: str | None = None  # the web page the feed was found on (added)


def add_feed(
    schedules_dir: Path,
    url: str,
    *,
    every: str | None = None,
    cron: str | None = None,
    name: str | None = None,
    pages: bool = True,
    page_every: str | None = None,
    transcripts: bool = True,
    chapters: bool = True,
    user_agent: str | None = None,
    allow_private_hosts: bool = False,
    media: bool = False,
    given: Collection[str] = (),
    check: bool = True,
    allow_fast: bool = False,
    settings: Settings | None = None,
    on_found: Callable[[str, str], None] | None = None,
) -> AddReport:
    """Schedule the feed at ``url`` (or announced by the page at ``url``).

    A URL not scheduled yet is fetched first to check it (unless not ``check``; ``settings``
    for that fetch: from the environment by default), named by the feed's title when no
    ``name`` is given, and written as a new schedule file. ``on_found(feed, page)`` is told
    at once when the feed was found on a web page.

    A URL already scheduled is not fetched: the fields named in ``given`` (schedule-entry
    fields: ``every``, ``name``, ``pages``, ``media``…; ``every`` and ``cron`` replace each
    other) change its entry in its file, its other settings kept (``media_types`` and the
    other media keys too: ``media`` switches them on or off).
    """
    wanted = FeedSchedule(  # checked in this order: URL, every/cron, page_every, user_agent
        url=check_url(url),
        name=name,
        every=_every(every, cron, allow_fast),
        cron=cron,
        pages=pages,
        page_every=_page_every(page_every, allow_fast),
        user_agent=_user_agent(user_agent),
        allow_private_hosts=allow_private_hosts,
        transcripts=transcripts,
        chapters=chapters,
        media=media,
    )
    entry, found_on = wanted, None
    scheduled = find_schedule(schedules_dir, entry.url, allow_fast=allow_fast)
    if scheduled is None and check:
        from podarchive.tasks.discover import find_feed

        found = find_feed(entry.url, _check_settings(settings, allow_private_hosts, user_agent))
        if found.discovered_from and on_found is not None:
            on_found(found.url, found.discovered_from)
        found_on = found.discovered_from
        entry = dataclasses.replace(entry, url=found.url, name=name or found.title)
        scheduled = find_schedule(schedules_dir, found.url, allow_fast=allow_fast)
    if scheduled is not None:  # the options given, not what the check found, change it
        return _update_entry(scheduled, wanted, given, allow_fast)
    path = add_schedule(schedules_dir, entry, allow_fast=allow_fast)
    return AddReport("added", entry.url, str(path), found_on=found_on)


def check_url(url: str) -> str:
    """A feed URL to schedule (absolute http(s), no control character or white space in it),
    stripped; else a ConfigError saying why."""
    try:
        return check_feed_url(url)
    except ValueError as e:
        raise ConfigError(str(e)) from e


def _every(every: str | None, cron: str | None, allow_fast: bool) -> timedelta | None:
    """The entry's interval: ``every`` checked (or ``cron`` checked, and no interval); the
    default with neither."""
    if every and cron:
        raise ConfigError("give every or cron, not both")
    if cron:
        try:
            validate_cron(cron)
        except ValueError as e:
            raise BadSetting("cron", str(e)) from e
        return None
    if not every:
        return DEFAULT_EVERY
    try:
        return check_every(parse_interval(every), allow_fast=allow_fast)
    except ValueError as e:
        raise BadSetting("every", str(e)) from e


def _page_every(page_every: str | None, allow_fast: bool) -> timedelta | None:
    try:
        recheck = parse_interval(page_every) if page_every else None
        return check_page_every(recheck, allow_fast=allow_fast) if recheck else None
    except ValueError as e:
        raise BadSetting("page_every", str(e)) from e


def _user_agent(user_agent: str | None) -> str | None:
    problem = None if user_agent is None else user_agent_problem(user_agent)
    if problem is not None:
        raise BadSetting("user_agent", f"{shorten(user_agent or '', 40)!r} is {problem}")
    return user_agent


def _check_settings(
    settings: Settings | None, allow_private_hosts: bool, user_agent: str | None = None
) -> Settings:
    """The settings to fetch a new feed with, to check it: the feed's own private-hosts
    permission and user agent over ``settings`` (by default the environment's)."""
    settings = settings or settings_from_env()
    if allow_private_hosts:
        settings = settings.replace(allow_private_hosts=True)
    return settings.replace(user_agent=user_agent) if user_agent else settings


def _update_entry(
    scheduled: FeedSchedule, entry: FeedSchedule, given: Collection[str], allow_fast: bool
) -> AddReport:
    """``add`` for a feed already scheduled: the fields ``given`` take ``entry``'s values."""
    fields = set(given) | ({"every", "cron"} if {"every", "cron"} & set(given) else set())
    changes = {field: getattr(entry, field) for field in fields}
    if not changes:
        return AddReport("scheduled", scheduled.url, scheduled.source)
    updated = dataclasses.replace(scheduled, **changes)
    before, after = render_schedule(scheduled).splitlines(), render_schedule(updated).splitlines()
    changed = [line for line in after if line not in before]
    keys = {line.partition(" = ")[0] for line in after}
    changed += [  # a key given and gone: back to its default (--no-media)
        f"{key} back to its default"
        for key in (line.partition(" = ")[0] for line in before)
        if key in given and key not in keys
    ]
    if not changed:
        return AddReport("unchanged", scheduled.url, scheduled.source)
    path = update_schedule(scheduled, updated, allow_fast=allow_fast)
    return AddReport("updated", scheduled.url, str(path), changed=tuple(changed))


# import ------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ImportEntry:
    """One feed of the file and what the import did with it: ``outcome`` says it (its
    verdict and line; for a feed found on a web page, the feed's), unless its check
    ``failed`` (it is not scheduled; ``outcome`` is then the file's outline, as new)."""

    outcome: Sorted
    failed: str | None = None  # why its check failed, one line
    found_on: str | None = None  # the page URL the file gave, when the feed was found on it

    @property
    def verdict(self) -> str:
        """``new`` (scheduled now), ``scheduled`` (already), ``duplicate``, ``skipped`` or
        ``failed``."""
        return "failed" if self.failed is not None else self.outcome.verdict


@dataclass(frozen=True, slots=True)
class ImportReport:
    opml_file: Path
    entries: tuple[ImportEntry, ...]
    path: Path | None  # the new schedule file (None when no feed was new)

    def count(self, verdict: str) -> int:
        return sum(1 for entry in self.entries if entry.verdict == verdict)


def import_feeds(
    schedules_dir: Path,
    opml_file: Path,
    *,
    every: str | None = None,
    cron: str | None = None,
    pages: bool = True,
    allow_private_hosts: bool = False,
    check: bool = True,
    allow_fast: bool = False,
    settings: Settings | None = None,
    each: Callable[[ImportEntry], None] | None = None,
) -> ImportReport:
    """Schedule every feed of ``opml_file`` that is new, in one new schedule file
    (``<schedules_dir>/import-<its name>.toml``, -2, -3… if taken).

    Each new feed's entry is its outline's podarchive settings, checked as a schedule
    file's (a bad one is a ScheduleError before anything is fetched), under the settings
    given here (``every`` or ``cron``; ``pages=False``; ``allow_private_hosts``). Unless
    not ``check``, each new feed is fetched once to check it (a few hosts at once):
    named after the feed when the file gave no name, and sorted again when it was found on
    a web page. ``each(entry)`` is told each feed's fate in file order, as it is known.
    """
    from podarchive.read.opml import ImportSorter

    overrides = _overrides(every, cron, pages, allow_private_hosts, allow_fast)
    feeds = read_opml(opml_file)
    sorter = ImportSorter(_scheduled_urls(schedules_dir, allow_fast))
    first = [sorter.sort(feed) for feed in feeds]
    plans = [
        _planned(s.feed, str(opml_file), overrides, allow_fast) if s.verdict == "new" else None
        for s in first
    ]
    checking = _check_settings(settings, allow_private_hosts) if check else None
    entries, chosen = _check_all(first, plans, sorter, checking, each)
    path = None
    if chosen:
        name = f"import-{opml_file.stem}"
        path = add_schedules(schedules_dir, chosen, name, allow_fast=allow_fast)
    return ImportReport(opml_file, tuple(entries), path)


def read_opml(opml_file: Path) -> list[OpmlFeed]:
    """The feeds of an OPML file; an OpmlError naming the file when it is none."""
    from podarchive.read.opml import MAX_OPML_BYTES, parse_opml

    try:
        with opml_file.open("rb") as f:
            return parse_opml(f.read(MAX_OPML_BYTES + 1))
    except OSError as e:
        raise OpmlError(f"{opml_file}: cannot read: {e.strerror}") from e
    except OpmlError as e:
        raise OpmlError(f"{opml_file}: {e}") from e


def _overrides(
    every: str | None, cron: str | None, pages: bool, allow_private_hosts: bool, allow_fast: bool
) -> dict[str, Any]:
    """What the settings given set in every new entry, over the OPML file's settings."""
    overrides: dict[str, Any] = {}
    if every or cron:
        overrides.update(every=_every(every, cron, allow_fast), cron=cron)
    if not pages:
        overrides["pages"] = False
    if allow_private_hosts:
        overrides["allow_private_hosts"] = True
    return overrides


def _scheduled_urls(schedules_dir: Path, allow_fast: bool) -> dict[str, str]:
    """Every scheduled feed URL → the file it is in (none without the directory)."""
    if not schedules_dir.exists():
        return {}
    return {f.url: f.source for f in load_schedules(schedules_dir, allow_fast=allow_fast)}


def _planned(
    feed: OpmlFeed, path: str, overrides: dict[str, Any], allow_fast: bool
) -> FeedSchedule:
    """A new feed's schedule entry: its outline's podarchive settings, checked as a schedule
    file's, then the settings given."""
    where = f"line {feed.line}: podarchive" if feed.line else "podarchive"
    entry = feed_from_options(
        feed.url, feed.title, feed.options, path=path, where=where, allow_fast=allow_fast
    )
    return dataclasses.replace(entry, **overrides)


def _check_all(
    first: Sequence[Sorted],
    plans: Sequence[FeedSchedule | None],
    sorter: ImportSorter,
    settings: Settings | None,
    each: Callable[[ImportEntry], None] | None,
) -> tuple[list[ImportEntry], list[FeedSchedule]]:
    """Each feed's fate (the new ones checked, without ``settings`` taken as they are) and
    the entries to write."""
    from podarchive.tasks.discover import FeedChecks

    entries: list[ImportEntry] = []
    chosen: list[FeedSchedule] = []
    with FeedChecks([s.feed.url for s in first if s.verdict == "new"], settings) as checks:
        for outcome, plan in zip(first, plans, strict=True):
            new = outcome.verdict == "new" and settings is not None
            entry = _checked(outcome, checks, sorter) if new else ImportEntry(outcome)
            entries.append(entry)
            if each is not None:
                each(entry)
            if entry.verdict == "new" and plan is not None:
                feed = entry.outcome.feed
                chosen.append(dataclasses.replace(plan, url=feed.url, name=feed.title))
    return entries, chosen


def _checked(outcome: Sorted, checks: FeedChecks, sorter: ImportSorter) -> ImportEntry:
    """A new feed after its check: failed; or named after the feed when the file gave no
    name, and sorted again when the feed was found on a web page (it may be scheduled)."""
    found = checks.next()
    if isinstance(found, str):
        return ImportEntry(outcome, failed=found)
    title = outcome.feed.title or " ".join((found.title or "").split()) or None
    feed = dataclasses.replace(outcome.feed, url=found.url, title=title)
    if found.url == outcome.feed.url:
        return ImportEntry(dataclasses.replace(outcome, feed=feed))
    return ImportEntry(sorter.sort(feed), found_on=outcome.feed.url)
