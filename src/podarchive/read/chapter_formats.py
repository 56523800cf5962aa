"""Chapters: Podcasting 2.0 JSON chapters and Podlove Simple Chapters → :class:`ParsedChapters`.

Serves issue #12's "Chapters" (one row per chapter: start, end, title, url, image). Pure: bytes
or values in, values out; stdlib and leaf modules only. Reading ``psc:chapter`` elements out of
a feed is :mod:`podarchive.read.podcast_ns`'s job (lxml lives there); :func:`parse_simple_chapters`
takes their attributes as tuples.

The rules, shared by both formats:

- chapters are sorted by start (stable: equal starts keep their order);
- a missing end is the start of the next chapter of the table of contents (a ``toc: false``
  chapter, which changes the image or link inside another, ends at the next chapter of any
  kind); the last chapter's end stays None; an end before its start is dropped;
- times are seconds: numbers, numeric strings, or ``[[HH:]MM:]SS[.fff]``; a negative,
  non-finite or unreadable start makes the entry bad;
- ``url`` / ``image`` are resolved against the chapters file's URL and kept only when http(s);
- bad entries are skipped: one warning counts them and quotes up to :data:`MAX_EXAMPLES`;
- a body that is not JSON, has no chapter list, or whose entries are all bad raises
  :class:`ChaptersError` (an empty list is fine: no chapters).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import replace
from typing import Any

from podarchive.core.errors import ChaptersError
from podarchive.core.types import Chapter, ParsedChapters
from podarchive.core.urls import is_http_url, join_url

MAX_EXAMPLES = 5  # bad entries quoted in the skip warning
MAX_CHAPTERS = 10_000  # entries read from one body; more are dropped with a warning
_MAX_SECONDS = 10.0**9  # ~31 years: anything longer is not a time in an episode
_NPT = re.compile(r"(?:(?:(\d+):)?(\d+):)?(\d+(?:\.\d*)?|\.\d+)")
#: A Podlove ``psc:chapter``'s attributes as read from the feed: (start, title, href, image).
SimpleChapter = tuple[str | None, str | None, str | None, str | None]


class _BadEntry(ValueError):
    """One entry is not a usable chapter; the message says why."""


# --- times and text ------------------------------------------------------------------------


def parse_time(value: object) -> float | None:
    """Seconds from a JSON number, a numeric string or ``[[HH:]MM:]SS[.fff]``, else None.

    Negative, non-finite and absurd (over ~31 years) values give None, as do booleans and
    minutes or seconds of 60 and more after a colon.
    """
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        seconds = float(value) if abs(value) < 2 * _MAX_SECONDS else math.inf
    elif isinstance(value, str):
        seconds = _parse_clock(value.strip())
    else:
        return None
    return seconds if 0 <= seconds <= _MAX_SECONDS else None


def _parse_clock(text: str) -> float:
    """``[[HH:]MM:]SS[.fff]`` (or a plain decimal number) as seconds; NaN when unreadable."""
    match = _NPT.fullmatch(text)
    if match is None or len(text) > 40:
        return _plain_number(text)
    hours, minutes, seconds = match.groups()
    sec = float(seconds)
    if minutes is not None and (sec >= 60 or (hours is not None and int(minutes) >= 60)):
        return math.nan
    return int(hours or 0) * 3600 + int(minutes or 0) * 60 + sec


def _plain_number(text: str) -> float:
    try:
        return float(text) if len(text) <= 40 else math.nan
    except ValueError:
        return math.nan


def _clean_text(value: object) -> str | None:
    """A title: whitespace collapsed, lone surrogates replaced; numbers as text; else None."""
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        return None
    text = " ".join(str(value).split())
    return text.encode("utf-8", "replace").decode("utf-8") or None


def _absolute(value: object, base: str | None) -> str | None:
    """``value`` resolved against ``base`` when it is a string; None unless http(s)."""
    text = _clean_text(value) if isinstance(value, str) else None
    if text is None:
        return None
    try:
        url = join_url(base, text) if base else text
    except ValueError:
        return None
    return url if is_http_url(url) else None


# --- the shared finish ---------------------------------------------------------------------


def _fill_ends(chapters: Sequence[Chapter]) -> tuple[Chapter, ...]:
    """Sorted by start, each missing end filled from the next start (see the module rules)."""
    filled: list[Chapter] = []
    next_any: float | None = None
    next_toc: float | None = None
    for chapter in reversed(sorted(chapters, key=lambda c: c.start)):
        if chapter.end is None:
            chapter = replace(chapter, end=next_toc if chapter.toc else next_any)
        filled.append(chapter)
        next_any = chapter.start
        next_toc = chapter.start if chapter.toc else next_toc
    return tuple(reversed(filled))


def _skip_warning(bad: Sequence[str]) -> tuple[str, ...]:
    if not bad:
        return ()
    examples = "; ".join(bad[:MAX_EXAMPLES])
    noun = "entry" if len(bad) == 1 else "entries"
    return (f"skipped {len(bad)} bad chapter {noun}: {examples}",)


def _finish(
    entries: Iterable[object],
    read: Callable[[Any], Chapter],
    fmt: str,
    version: str | None = None,
) -> ParsedChapters:
    """Read each entry with ``read`` (raising _BadEntry), then sort, fill and count."""
    chapters: list[Chapter] = []
    bad: list[str] = []
    warnings: list[str] = []
    for index, entry in enumerate(entries):
        if index >= MAX_CHAPTERS:
            warnings.append(f"read only the first {MAX_CHAPTERS} chapters")
            break
        try:
            chapters.append(read(entry))
        except _BadEntry as e:
            bad.append(f"#{index + 1} {e}")
    if bad and not chapters:
        raise ChaptersError(f"no usable chapter: {_skip_warning(bad)[0]}")
    return ParsedChapters(
        chapters=_fill_ends(chapters),
        format=fmt,
        version=version,
        skipped=len(bad),
        warnings=(*_skip_warning(bad), *warnings),
    )


# --- Podcasting 2.0 JSON -------------------------------------------------------------------


def parse_chapters_json(body: bytes, base_url: str | None = None) -> ParsedChapters:
    """A ``podcast:chapters`` JSON body → its chapters; ``base_url`` is the file's own URL.

    Accepts a UTF-8/16/32 body with or without BOM (else reads it as windows-1252, with a
    warning), ``{"version", "chapters": [...]}`` or a bare list of chapters. Raises
    :class:`ChaptersError` for anything unusable (see the module docstring).
    """
    text, warnings = _decode(body)
    try:
        document = json.loads(text)
    except (ValueError, RecursionError) as e:
        raise ChaptersError(f"chapters are not JSON: {_first_line(e)}") from None
    entries, version = _chapter_list(document)
    parsed = _finish(entries, lambda entry: _json_chapter(entry, base_url), "json", version)
    return replace(parsed, warnings=(*warnings, *parsed.warnings))


def _decode(body: bytes) -> tuple[str, tuple[str, ...]]:
    if not body.strip():
        raise ChaptersError("empty chapters body")
    try:
        return body.decode(json.detect_encoding(body)), ()
    except UnicodeDecodeError:
        return body.decode("cp1252", "replace"), ("chapters are not UTF-8: read as windows-1252",)


def _first_line(error: BaseException) -> str:
    text = str(error) or type(error).__name__
    return text.splitlines()[0][:120]


def _chapter_list(document: object) -> tuple[list[object], str | None]:
    """The chapter entries and the version string of a decoded document."""
    if isinstance(document, list):
        return document, None
    if not isinstance(document, dict):
        raise ChaptersError(f"chapters JSON is a {type(document).__name__}, not an object")
    entries = document.get("chapters")
    if not isinstance(entries, list):
        raise ChaptersError('chapters JSON has no "chapters" list')
    version = document.get("version")
    return entries, _clean_text(version) if isinstance(version, str) else None


def _json_chapter(entry: object, base_url: str | None) -> Chapter:
    if not isinstance(entry, Mapping):
        raise _BadEntry(f"is a {type(entry).__name__}, not an object")
    if "startTime" not in entry:
        raise _BadEntry("has no startTime")
    start = parse_time(entry["startTime"])
    if start is None:
        raise _BadEntry(f"bad startTime {_quote(entry['startTime'])}")
    end = parse_time(entry.get("endTime"))
    return Chapter(
        start=start,
        end=end if end is not None and end >= start else None,
        title=_clean_text(entry.get("title")),
        url=_absolute(entry.get("url"), base_url),
        image=_absolute(entry.get("img"), base_url),
        toc=not _is_false(entry.get("toc")),
    )


def _is_false(value: object) -> bool:
    """JSON ``false``, or the string "false" some producers write."""
    return value is False or (isinstance(value, str) and value.strip().lower() == "false")


def _quote(value: object) -> str:
    text = json.dumps(value, ensure_ascii=False, default=str) if _short(value) else "…"
    return text if len(text) <= 40 else text[:39] + "…"


def _short(value: object) -> bool:
    return not isinstance(value, list | dict) or len(value) <= 3


# --- Podlove Simple Chapters ---------------------------------------------------------------


def parse_simple_chapters(
    entries: Iterable[SimpleChapter], base_url: str | None = None
) -> ParsedChapters:
    """Podlove Simple Chapters (``psc:chapter`` start, title, href, image) → chapters.

    ``base_url`` is the feed's URL (or the episode's link) for relative ``href``/``image``.
    ``start`` is Normal Play Time: ``HH:MM:SS.mmm``, ``MM:SS`` or seconds. Every end comes from
    the next chapter's start. Raises :class:`ChaptersError` when every entry is bad.
    """
    return _finish(entries, lambda entry: _simple_chapter(entry, base_url), "psc")


def _simple_chapter(entry: SimpleChapter, base_url: str | None) -> Chapter:
    start_text, title, href, image = entry
    start = parse_time(start_text)
    if start is None:
        raise _BadEntry("has no start" if start_text is None else f"bad start {_quote(start_text)}")
    return Chapter(
        start=start,
        title=_clean_text(title),
        url=_absolute(href, base_url),
        image=_absolute(image, base_url),
    )
