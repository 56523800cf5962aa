"""Schedule files: which feeds exist, and how often each is polled.

A schedule file is TOML in ``schedules/``, holding one or more ``[[feed]]`` tables::

    [[feed]]
    url = "https://feeds.simplecast.com/OB5FkIl8"
    name = "PyTorch Developer Podcast"
    every = "1h"          # or: cron = "0 * * * *"
    pages = true
    page_every = "1d"     # re-check archived episode pages this often (default: by age)
    transcripts = true    # fetch the episodes' podcast:transcript files
    chapters = true       # fetch the episodes' podcast:chapters files
    media = true          # keep the episodes' audio and video (docs/schedules.md: media_*)

Every mistake is reported as one :class:`ScheduleError` naming the file and the key.
Polling more often than once a minute (:data:`MIN_EVERY`) is refused unless ``allow_fast``
(``--allow-fast``, meant for tests) is given; so is re-checking episode pages more often than
once an hour (:data:`podarchive.rules.recheck.MIN_PAGE_EVERY`). No interval may be longer than a
year (:data:`MAX_INTERVAL`): ``every = "3000000d"`` once ended a running daemon with an
OverflowError (#23), and a cron expression that never fires (``0 0 30 2 *``) is refused too.
"""

from __future__ import annotations

import dataclasses
import os
import re
import shutil
import tomllib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import date, timedelta
from functools import partial
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import urlsplit

from podarchive.core.errors import PodarchiveError, ScheduleError, safe_label, safe_url, shorten
from podarchive.core.settings import user_agent_problem
from podarchive.core.urls import feed_url_problem, normalize_url
from podarchive.rules.cron import validate_cron
from podarchive.rules.media import (
    DEFAULT_MAX_BYTES,
    DEFAULT_VERSIONS,
    MEDIA_KINDS,
    MediaChoice,
    MediaKind,
    check_media_count,
    check_media_since,
    check_media_types,
)
from podarchive.rules.recheck import check_page_every

DEFAULT_EVERY = timedelta(hours=1)
MIN_EVERY = timedelta(seconds=60)  # the floor of ``every``, unless allow_fast
MAX_INTERVAL = timedelta(days=365)  # the ceiling of every interval (every, page_every, options)
_FLAGS = frozenset(
    {"pages", "allow_private_hosts", "transcripts", "chapters", "media", "media_alternates"}
)
#: The media keys that are whole numbers (an OPML attribute's text is read as one).
_MEDIA_COUNTS = ("media_max_bytes", "media_versions")
FEED_KEYS = frozenset(
    {"url", "name", "every", "cron", "pages", "user_agent", "allow_private_hosts"}
    | {"page_every", "transcripts", "chapters", "media", "media_types", "media_alternates"}
    | {"media_since", *_MEDIA_COUNTS}
)
_T = TypeVar("_T")
_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}
_INTERVAL = re.compile(r"(\d+)\s*([smhdw])")
_MAX_DIGITS = 12  # more digits than this is over MAX_INTERVAL in any unit


@dataclass(frozen=True, slots=True)
class FeedSchedule:
    """One feed as the user configured it."""

    url: str
    name: str | None = None
    every: timedelta | None = DEFAULT_EVERY
    cron: str | None = None
    pages: bool = True
    user_agent: str | None = None
    allow_private_hosts: bool = False
    page_every: timedelta | None = None  # episode-page re-checks; None: recheck's age rule
    transcripts: bool = True  # fetch podcast:transcript files
    chapters: bool = True  # fetch podcast:chapters files
    media: bool = False  # keep the episodes' media (#26); media_*: which, rules.media
    media_types: tuple[MediaKind, ...] = MEDIA_KINDS  # in MEDIA_KINDS' order
    media_alternates: bool = False
    media_since: date | None = None
    media_max_bytes: int = DEFAULT_MAX_BYTES
    media_versions: int = DEFAULT_VERSIONS
    source: str = ""  # the file it came from ("" for ad hoc feeds)

    @property
    def label(self) -> str:
        """The name (else the URL) for messages: escaped and shortened (:func:`safe_label`)."""
        return safe_label(self.name) if self.name else safe_url(self.url)

    def media_choice(self) -> MediaChoice:
        """The entry's media keys, as :func:`podarchive.rules.media.wanted_media` takes them."""
        return MediaChoice(
            media=self.media,
            media_types=frozenset(self.media_types),
            media_alternates=self.media_alternates,
            media_since=self.media_since,
            media_max_bytes=self.media_max_bytes,
            media_versions=self.media_versions,
        )


def parse_interval(text: str) -> timedelta:
    """``"90s"``, ``"30m"``, ``"1h30m"``, ``"2d"``, ``"1w"`` → timedelta, at most
    :data:`MAX_INTERVAL`. Raises ValueError (one line) for anything else."""
    compact = text.strip().lower().replace(" ", "")
    if not compact or _INTERVAL.sub("", compact):
        example = "use e.g. 90s, 30m, 1h, 1h30m, 2d, 1w"
        raise ValueError(f"bad interval {shorten(text, 40)!r} ({example})")
    terms = _INTERVAL.findall(compact)
    too_long = ValueError(f"interval {shorten(text, 40)!r} is over the ceiling of a year (365d)")
    if any(len(n.lstrip("0")) > _MAX_DIGITS for n, _ in terms):
        raise too_long  # int() of thousands of digits is slow, and refused
    seconds = sum(int(n) * _UNITS[unit] for n, unit in terms)
    if seconds > MAX_INTERVAL.total_seconds():
        raise too_long
    if seconds <= 0:
        raise ValueError(f"interval {text!r} must be longer than zero")
    return timedelta(seconds=seconds)


def format_interval(interval: timedelta) -> str:
    seconds = int(interval.total_seconds())
    parts = []
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60), ("s", 1)):
        count, seconds = divmod(seconds, size)
        if count:
            parts.append(f"{count}{unit}")
    return "".join(parts) or "0s"


def check_every(interval: timedelta, *, allow_fast: bool = False) -> timedelta:
    """``interval``, unless it is under :data:`MIN_EVERY` without ``allow_fast`` (ValueError)."""
    if interval < MIN_EVERY and not allow_fast:
        raise ValueError(
            f"{format_interval(interval)} is under the {int(MIN_EVERY.total_seconds())} s floor; "
            "use --allow-fast (for tests)"
        )
    return interval


def check_feed_url(url: str) -> str:
    """A configured feed URL must be absolute http(s), without control characters or white
    space inside (:func:`~podarchive.core.urls.feed_url_problem`). Returns it stripped."""
    url = url.strip()
    problem = feed_url_problem(url)
    if problem is not None:
        raise ValueError(f"{problem}: '{safe_url(url)}'")
    return url


def load_schedules(directory: Path, *, allow_fast: bool = False) -> tuple[FeedSchedule, ...]:
    """Every feed of every ``*.toml`` file in ``directory``, in file-name order.

    ``allow_fast`` accepts intervals under :data:`MIN_EVERY` (tests).
    """
    if not directory.is_dir():
        raise ScheduleError(str(directory), "no such schedules directory")
    feeds: list[FeedSchedule] = []
    seen: dict[str, str] = {}
    for path in sorted(directory.glob("*.toml")):
        for feed in load_schedule_file(path, allow_fast=allow_fast):
            if feed.url in seen:
                raise ScheduleError(
                    str(path), f"duplicate feed URL, also in {seen[feed.url]}", "url"
                )
            seen[feed.url] = str(path)
            feeds.append(feed)
    return tuple(feeds)


def load_schedule_file(path: Path, *, allow_fast: bool = False) -> list[FeedSchedule]:
    """The feeds of one file. Whatever is wrong with it is a :class:`ScheduleError`: the
    daemon keeps its last good schedule on exactly that (and logs one line)."""
    data = _read_toml(path)
    unknown = sorted(set(data) - {"feed"})
    if unknown:
        raise ScheduleError(str(path), "unknown key (expected [[feed]] tables)", unknown[0])
    tables = data.get("feed", [])
    if not isinstance(tables, list) or not tables:
        raise ScheduleError(str(path), "no [[feed]] tables", "feed")
    return [
        _feed_from_table(str(path), f"feed[{i}]", table, allow_fast)
        for i, table in enumerate(tables)
    ]


def _read_toml(path: Path) -> dict[str, Any]:
    if path.exists() and not path.is_file():  # a FIFO would block the daemon for good
        raise ScheduleError(str(path), "cannot read: not a regular file")
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as e:
        raise ScheduleError(str(path), f"cannot read: {e}") from e
    except ValueError as e:  # TOMLDecodeError, and an integer of 4,300+ digits
        raise ScheduleError(str(path), f"not valid TOML: {shorten(str(e), 200)}") from e
    except RecursionError as e:
        raise ScheduleError(str(path), "not valid TOML: nested too deeply") from e
    except MemoryError as e:
        raise ScheduleError(str(path), "cannot read: too large") from e


def _feed_from_table(
    path: str, where: str, table: Any, allow_fast: bool, dot: str = "."
) -> FeedSchedule:
    """The feed ``table`` describes; a ScheduleError names ``path`` and the key (``where``,
    ``dot``, the key's name: ``feed[0].every``, or in an OPML file ``line 7: podarchive:every``)."""
    if not isinstance(table, dict):
        raise ScheduleError(path, "must be a table", where)
    unknown = sorted(set(table) - FEED_KEYS)
    if unknown:
        raise ScheduleError(path, "unknown key", f"{where}{dot}{unknown[0]}")

    def get(key: str, kind: type, default: Any = None) -> Any:
        value = table.get(key, default)
        if value is not default and not isinstance(value, kind):
            raise ScheduleError(path, f"must be a {kind.__name__}", f"{where}{dot}{key}")
        return value

    at = f"{where}{dot}"  # before a key's name
    if "url" not in table:
        raise ScheduleError(path, "missing", f"{at}url")
    url = _checked(path, f"{at}url", lambda: check_feed_url(get("url", str)))
    every_text, cron = get("every", str), get("cron", str)
    if every_text is not None and cron is not None:
        raise ScheduleError(path, "give either every or cron, not both", f"{at}cron")
    every: timedelta | None = DEFAULT_EVERY if cron is None else None
    if every_text is not None:
        every = _checked(
            path,
            f"{at}every",
            lambda: check_every(parse_interval(every_text), allow_fast=allow_fast),
        )
    if cron is not None:
        _checked(path, f"{at}cron", lambda: validate_cron(cron))
    page_every_text = get("page_every", str)
    page_every: timedelta | None = None
    if page_every_text is not None:
        page_every = _checked(
            path,
            f"{at}page_every",
            lambda: check_page_every(parse_interval(page_every_text), allow_fast=allow_fast),
        )
    user_agent = get("user_agent", str)
    problem = None if user_agent is None else user_agent_problem(user_agent)
    if problem is not None:
        shown = shorten(user_agent, 40)
        raise ScheduleError(path, f"{shown!r} is {problem}", f"{where}{dot}user_agent")
    return FeedSchedule(
        url=url,
        name=get("name", str),
        every=every,
        cron=cron,
        pages=get("pages", bool, True),
        user_agent=user_agent,
        allow_private_hosts=get("allow_private_hosts", bool, False),
        page_every=page_every,
        transcripts=get("transcripts", bool, True),
        chapters=get("chapters", bool, True),
        media=get("media", bool, False),
        media_alternates=get("media_alternates", bool, False),
        **_media_keys(path, at, table),
        source=path,
    )


def _media_keys(path: str, at: str, table: dict[str, Any]) -> dict[str, Any]:
    """The media keys of a feed's table that are not flags, checked (rules.media); a bad one
    is a ScheduleError naming it (``feed[0].media_types``)."""
    checks: dict[str, Callable[[Any], Any]] = {
        "media_types": check_media_types,
        "media_since": check_media_since,
        **{key: partial(check_media_count, key) for key in _MEDIA_COUNTS},
    }
    return {
        key: _checked(path, f"{at}{key}", partial(check, table[key]))
        for key, check in checks.items()
        if key in table
    }


def _checked(path: str, key: str, check: Callable[[], _T]) -> _T:
    """``check()``; a ValueError it raises (a ScheduleError too) a ScheduleError of ``key``."""
    try:
        return check()
    except ValueError as e:
        raise ScheduleError(path, str(e), key) from e


def schedule_file_name(url: str, name: str | None) -> str:
    """A file name for a new schedule, from the feed's name or its URL."""
    base = name or (urlsplit(url).hostname or "feed") + urlsplit(url).path
    slug = re.sub(r"[^a-z0-9]+", "-", base.lower()).strip("-")[:60] or "feed"
    return f"{slug}.toml"


def _toml_string(value: str) -> str:
    escaped = value.replace("\\", "\\\\").replace('"', '\\"')
    return '"' + "".join(c if c.isprintable() else _toml_escape(c) for c in escaped) + '"'


def _toml_escape(char: str) -> str:
    code = ord(char)
    return f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"


def _settings(feed: FeedSchedule) -> list[tuple[str, Any]]:
    """``feed``'s settings but its URL and name, in order: ``every`` (or ``cron``),
    ``pages``, then each other one that is not the default."""
    found: list[tuple[str, Any]] = []
    if feed.cron:
        found.append(("cron", feed.cron))
    elif feed.every is not None:
        found.append(("every", format_interval(feed.every)))
    found.append(("pages", feed.pages))
    if feed.page_every is not None:
        found.append(("page_every", format_interval(feed.page_every)))
    found += [(key, False) for key in ("transcripts", "chapters") if not getattr(feed, key)]
    if feed.allow_private_hosts:
        found.append(("allow_private_hosts", True))
    if feed.user_agent:
        found.append(("user_agent", feed.user_agent))
    return found + _media_settings(feed)


def _media_settings(feed: FeedSchedule) -> list[tuple[str, Any]]:
    """``feed``'s media keys that are not the defaults, in the order docs/schedules.md has."""
    default = FeedSchedule(url="")
    keys = ("media", "media_types", "media_alternates", "media_since", *_MEDIA_COUNTS)
    return [(k, getattr(feed, k)) for k in keys if getattr(feed, k) != getattr(default, k)]


def _toml_value(value: Any) -> str:
    """A setting's value as TOML: true/false, a number, a date, a list of strings, a string."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | date):
        return str(value) if isinstance(value, int) else value.isoformat()
    if isinstance(value, tuple):
        return "[" + ", ".join(_toml_string(item) for item in value) + "]"
    return _toml_string(value)


def _option_text(value: Any) -> str:
    """A setting's value as an OPML attribute's text (a list: comma-separated)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, tuple):
        return ",".join(value)
    return value.isoformat() if isinstance(value, date) else str(value)


def render_schedule(feed: FeedSchedule) -> str:
    """``feed`` as a ``[[feed]]`` table: every setting that is not the default, and ``pages``."""
    lines = ["[[feed]]", f"url = {_toml_string(feed.url)}"]
    if feed.name:
        lines.append(f"name = {_toml_string(feed.name)}")
    lines += [f"{key} = {_toml_value(value)}" for key, value in _settings(feed)]
    return "\n".join(lines) + "\n"


_DEFAULTS = {("every", format_interval(DEFAULT_EVERY)), ("pages", True)}


def feed_options(feed: FeedSchedule) -> tuple[tuple[str, str], ...]:
    """``feed``'s settings that are not the defaults, as text: the ``podarchive:`` attributes
    of its OPML outline (``(("every", "30m"), ("pages", "false"))``)."""
    return tuple(
        (key, _option_text(value))
        for key, value in _settings(feed)
        if (key, value) not in _DEFAULTS
    )


def feed_from_options(
    url: str,
    name: str | None,
    options: Sequence[tuple[str, str]],
    *,
    path: str,
    where: str,
    allow_fast: bool = False,
) -> FeedSchedule:
    """The feed an OPML outline describes with :func:`feed_options`' attributes, checked as
    a schedule file's table is: a bad one is a ScheduleError naming ``path`` and the
    attribute (``where``: ``line 7: podarchive``)."""
    table: dict[str, Any] = {"url": url} | ({"name": name} if name else {})
    for key, text in options:
        if key in ("url", "name") or key in table:
            raise ScheduleError(path, "not a podarchive setting here", f"{where}:{key}")
        table[key] = text
        if key in _FLAGS:
            if text.strip() not in ("true", "false"):
                raise ScheduleError(path, "must be true or false", f"{where}:{key}")
            table[key] = text.strip() == "true"
        elif key in _MEDIA_COUNTS and re.fullmatch(r"[0-9]{1,20}", text.strip()):
            table[key] = int(text.strip())
    return _feed_from_table(path, where, table, allow_fast, dot=":")


def add_schedule(directory: Path, feed: FeedSchedule, *, allow_fast: bool = False) -> Path:
    """Write ``feed`` as a new schedule file in ``directory``; refuses a URL already there.

    A directory that cannot be made or written is a one-line :class:`PodarchiveError`
    (``cannot write schedules/x.toml: Permission denied``), not a traceback.
    """
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise PodarchiveError(f"cannot make {directory}: {e.strerror or e}") from e
    try:
        check_feed_url(feed.url)
    except ValueError as e:  # a feed found on a page announcing it
        raise PodarchiveError(f"not scheduled: {e}") from e
    existing = {f.url: f.source for f in load_schedules(directory, allow_fast=allow_fast)}
    if feed.url in existing:
        raise ScheduleError(existing[feed.url], f"{safe_url(feed.url)} is already scheduled", "url")
    path = directory / schedule_file_name(feed.url, feed.name)
    stem, n = path.stem, 2
    while path.exists():
        path = directory / f"{stem}-{n}.toml"
        n += 1
    created = False
    try:
        with path.open("x", encoding="utf-8") as f:  # never overwrites a file made meanwhile
            created = True
            f.write(render_schedule(feed))
    except OSError as e:
        if created:  # half written (a full disk): no broken schedule file is left behind
            path.unlink(missing_ok=True)
        raise PodarchiveError(f"cannot write {path}: {e.strerror or e}") from e
    return path


def find_schedule(directory: Path, url: str, *, allow_fast: bool = False) -> FeedSchedule | None:
    """The entry scheduling ``url`` in ``directory`` (URLs compared normalized), if any."""
    if not directory.is_dir():
        return None
    wanted = normalize_url(url)
    feeds = load_schedules(directory, allow_fast=allow_fast)
    return next((f for f in feeds if normalize_url(f.url) == wanted), None)


#: A ``[[feed]]`` table's header line, where a schedule file's tables start.
_FEED_TABLE = re.compile(r"^[ \t]*\[\[[ \t]*feed[ \t]*\]\]", re.M)


def update_schedule(old: FeedSchedule, new: FeedSchedule, *, allow_fast: bool = False) -> Path:
    """Rewrite ``old``'s ``[[feed]]`` table in its file (``old.source``) as ``new`` (``add``
    for a URL already scheduled). The file's other tables and the comments between tables
    stay as they were; comments inside the rewritten table are lost. The new file is written
    beside the old one, must load as exactly the old feeds with ``new`` in ``old``'s place,
    then replaces it; anything else is a one-line :class:`PodarchiveError`, the file untouched.
    """
    path = Path(old.source)
    feeds = load_schedule_file(path, allow_fast=allow_fast)
    index = next((i for i, f in enumerate(feeds) if f.url == old.url), None)
    if index is None:  # the file changed meanwhile
        raise PodarchiveError(f"{path} no longer schedules {old.url}: nothing changed")
    expected = [*feeds[:index], _sourced(new, path), *feeds[index + 1 :]]
    updated = _replace_table(path.read_text(encoding="utf-8"), index, len(feeds), new)
    if updated is None:
        raise PodarchiveError(f"cannot find {old.url}'s [[feed]] table in {path}: edit it by hand")
    draft = path.with_name(f".{path.stem}.{os.getpid()}.tmp")  # not *.toml: no loader reads it
    try:
        draft.write_text(updated, encoding="utf-8")
        shutil.copymode(path, draft)
        if not _loads_as(draft, expected, allow_fast):
            raise PodarchiveError(f"cannot rewrite {path} safely: edit it by hand")
        os.replace(draft, path)
    except OSError as e:
        raise PodarchiveError(f"cannot write {path}: {e.strerror or e}") from e
    finally:
        draft.unlink(missing_ok=True)
    return path


def _replace_table(text: str, index: int, count: int, feed: FeedSchedule) -> str | None:
    """``text`` (a schedule file of ``count`` tables) with its ``index``-th ``[[feed]]`` table
    rendered anew from ``feed``; the comments and blank lines after that table's keys stay
    (they lead into the next one). None when the tables cannot be told apart in the text."""
    starts = [m.start() for m in _FEED_TABLE.finditer(text)]
    if len(starts) != count:
        return None
    start, end = starts[index], (starts[index + 1] if index + 1 < count else len(text))
    lines = text[start:end].splitlines(keepends=True)
    cut = len(lines)
    while cut > 1 and (not lines[cut - 1].strip() or lines[cut - 1].lstrip().startswith("#")):
        cut -= 1
    return text[:start] + render_schedule(feed) + "".join(lines[cut:]) + text[end:]


def _sourced(feed: FeedSchedule, path: Path) -> FeedSchedule:
    return dataclasses.replace(feed, source=str(path))


def _loads_as(draft: Path, expected: list[FeedSchedule], allow_fast: bool) -> bool:
    """Whether the schedule file ``draft`` holds exactly the feeds ``expected``."""
    try:
        loaded = load_schedule_file(draft, allow_fast=allow_fast)
    except ScheduleError:
        return False
    return [_sourced(f, Path(expected[0].source)) for f in loaded] == expected


def add_schedules(
    directory: Path, feeds: Sequence[FeedSchedule], name: str, *, allow_fast: bool = False
) -> Path:
    """Write ``feeds`` into one new schedule file in ``directory`` (``podarchive import``),
    named after ``name`` (``-2``, ``-3``… when taken: never overwrites another file).

    The file appears whole (written beside it first, then linked into place) and only once it
    loads; a URL already scheduled (or twice in ``feeds``) is refused, as by :func:`add_schedule`.
    """
    existing = (
        {f.url: f.source for f in load_schedules(directory, allow_fast=allow_fast)}
        if directory.exists()
        else {}
    )
    for feed in feeds:
        if feed.url in existing:
            raise ScheduleError(
                existing[feed.url], f"{safe_url(feed.url)} is already scheduled", "url"
            )
        existing[feed.url] = "this import"
    stem = schedule_file_name("", name).removesuffix(".toml")
    draft = directory / f".{stem}.{os.getpid()}.tmp"  # not *.toml: no loader reads it
    try:
        directory.mkdir(parents=True, exist_ok=True)
        draft.write_text("\n".join(render_schedule(feed) for feed in feeds), encoding="utf-8")
        load_schedule_file(draft, allow_fast=allow_fast)
        path, n = directory / f"{stem}.toml", 2
        while True:
            try:
                os.link(draft, path)  # fails if the name is taken, even by a racing writer
                return path
            except FileExistsError:
                path, n = directory / f"{stem}-{n}.toml", n + 1
    except OSError as e:
        raise PodarchiveError(
            f"cannot write a schedule file in {directory}: {e.strerror or e}"
        ) from e
    finally:
        draft.unlink(missing_ok=True)
