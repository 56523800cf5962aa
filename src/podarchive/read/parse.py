"""Feed bytes to :class:`~podarchive.core.types.ParsedFeed`: the one module importing feedparser.

feedparser reads the feed (formats, encodings, dates, itunes tags); :mod:`~.podcast_ns`
adds what feedparser loses: every ``podcast:*`` tag, raw ``itunes:explicit``, nested
``itunes:category`` and the raw ``<description>``/``content:encoded``/``itunes:summary``
texts, which feedparser folds into one another depending on their order.

feedparser only ever sees an in-memory ``io.BytesIO``, so it never opens a URL or a file.
HTML is kept raw: no sanitising, no relative-URI rewriting (the archive derives text itself).
Everything that goes wrong raises :class:`~podarchive.core.errors.ParseError` (or ``NotAFeed``).
Two pure helpers read feedparser's result dicts without importing it:
:mod:`~.feed_fields` makes the Channel and Episode fields, :mod:`~.feed_refusal` decides
what is no feed and words feedparser's problems.

Deliberate choices:

* ``guid`` is the RSS ``<guid>`` / Atom ``<id>`` (RSS 1.0: ``rdf:about``) as written, else
  None: the link is never promoted to a guid, and the raw text is preferred because
  feedparser resolves a relative Atom ``<id>`` against the feed URL.
* ``link``: feedparser copies a guid into ``link`` when there is no ``<link>``; that is only
  kept when the guid is an http(s) URL. Media URLs are resolved against ``url`` when given.
* categories: ``itunes:category`` in document order, a nested one as ``"Parent > Child"``
  after its parent; only without any ``itunes:category`` the plain RSS/Atom categories.
* ``notes_html``: ``content:encoded``, else ``<description>``, else feedparser's content or
  summary (Atom). ``summary``: ``itunes:summary``, else ``itunes:subtitle``, else feedparser's
  summary when it differs from the notes.
* enclosure: the first ``audio/*`` or ``video/*`` one, else the first that is not an image or
  text; ``length`` is None unless a positive integer.
* dates: feedparser's struct_time hides how it read a year (``-0001-01-01`` gives 2000). A
  date whose text does not show its year plainly (1-4 digits, unsigned, in 1..9999; see
  :func:`.feed_fields.unreadable_date`) is None, with a warning ``unreadable date '…' in item 3``.
* Podlove Simple Chapters (``psc:chapters``, scanned by podcast_ns) become
  ``Episode.simple_chapters``, relative ``href``/``image`` resolved against the episode's
  http(s) link, else ``url``. Bad entries, or none usable, are a warning naming the item
  (``psc:chapters of item 3 'Title': …``; five items, then a count), never a failure.

* A feed inside another document (an Atom ``<feed>`` in an XHTML page's ``<body>``) is read
  alone (``PodcastScan.unwrapped``): in place, feedparser lost its title to the page, and
  the page's ``<body>`` passed for an extension element holding every entry (issue #23).
  ``ParsedFeed.entries_read`` is feedparser's count of the body's items, for the warning
  when fewer episodes are kept (:mod:`podarchive.read.jobs`).

* Extension elements (#13): ``Channel.tags`` / ``Episode.tags`` are podcast_ns's lossless
  capture (every ``podcast:*``, ``psc:*``, ``media:*``… child and its subtree). An extension
  element holding RSS elements (``podcast:liveItem`` with its ``<title>``, ``<link>``,
  ``<enclosure>``, ``<item>``…) misled feedparser, which took a liveItem's link, language,
  dates, owner, ttl… for the channel's: the channel (or that item) is then read again by
  feedparser from a document of its own direct children (the scan writes it), and an
  ``<item>`` inside an extension element is no episode. Scopes cut at ``MAX_TAGS`` elements
  are one warning.
* An item's ``podcast:transcript`` and ``podcast:chapters`` lists are cut at
  ``podcast_ns.MAX_FILES`` each (the first ones in document order are kept): a warning per
  item, ``item 3 lists 3,000 podcast:transcript files: the first 20 kept`` (five, then a count).

Decoding (issue #17) is :mod:`podarchive.read.feed_encoding`'s: one bad byte or forbidden character
reference costs that character (U+FFFD and a counted warning), never the feed.
"""

from __future__ import annotations

import dataclasses
import functools
import io
from collections.abc import Iterator, Mapping, Sequence
from typing import Any, TypeVar

import feedparser
import feedparser.encodings
import feedparser.mixin

from podarchive.core.errors import ChaptersError, ParseError, one_line
from podarchive.core.types import Chapters, Enclosure, Episode, ParsedFeed, Transcript
from podarchive.core.urls import is_http_url, join_url
from podarchive.read import podcast_ns
from podarchive.read.chapter_formats import SimpleChapter, parse_simple_chapters
from podarchive.read.deferred import attach
from podarchive.read.extension_tags import MAX_TAGS
from podarchive.read.feed_encoding import bom_charset, readable, xml_content_type
from podarchive.read.feed_fields import (
    FPDict,
    fp_get,
    fp_str,
    read_channel,
    read_episode,
    unreadable_date,
)
from podarchive.read.feed_refusal import (
    MAX_REASON,
    bozo_exception,
    one_line_reason,
    recovered_warnings,
    refuse_unusable,
)
from podarchive.read.podcast_ns import ItemScan, PodcastScan

attach(feedparser)  # its deferred ``http`` module, as ``import feedparser.http`` expects

# feedparser guesses a feed's encoding with chardet when chardet happens to be installed (a
# library such as frictionless pulls it in), and reads a mislabelled feed differently then.
# A feed must read the same wherever podarchive runs: its fallbacks are declared ones only.
feedparser.encodings.lazy_chardet_encoding = None

__all__ = ["parse_feed"]

_SAMPLES = 5  # examples a warning about many items quotes


def parse_feed(
    body: bytes, headers: Mapping[str, str] | None = None, url: str | None = None
) -> ParsedFeed:
    """Parse a feed body. ``headers`` are the HTTP response's; ``url`` only resolves links."""
    if not body.strip():
        raise ParseError("empty body")
    readable_body, fp_headers, repairs = readable(body, _feedparser_headers(headers, url, body))
    result = _run_feedparser(readable_body, fp_headers)
    read, scan = _unwrapped(result, _scan(readable_body, fp_get(result, "encoding")), fp_headers)
    refuse_unusable(body, read, scan)
    feed: FPDict = fp_get(read, "feed") or {}
    if scan.channel.document is not None:  # an extension element holds RSS: the channel alone
        feed = _reread(scan.channel.document, fp_headers, "feed") or feed
    every_entry = list(fp_get(read, "entries") or [])
    entries = _outside_extensions(every_entry, scan)
    episodes, chapter_notes = _episodes(entries, scan.items, url, fp_headers)
    return ParsedFeed(
        channel=read_channel(feed, scan.channel if scan.root else None, url),
        episodes=episodes,
        version=str(fp_get(read, "version") or ""),
        warnings=(
            *repairs,
            *recovered_warnings(result),
            *_date_warnings(feed, entries),
            *_chapter_warnings(chapter_notes),
            *_tag_warnings(scan),
            *_file_warnings(scan),
        ),
        recovered=bozo_exception(result) is not None,
        entries_read=len(fp_get(result, "entries") or []),
        entries_nested=len(every_entry) - len(entries),
    )


# --- feedparser ------------------------------------------------------------------------


def _feedparser_headers(
    headers: Mapping[str, str] | None, url: str | None, body: bytes = b""
) -> dict[str, str]:
    """Lower-cased headers; ``url`` as Content-Location; a default XML Content-Type.

    Without a Content-Type feedparser decodes an undeclared body as ISO-8859-1 and flags it;
    ``application/xml`` gives XML's own rules (declaration, BOM, else UTF-8). A body that
    starts with a byte-order mark is decoded by it whatever the header's charset or the XML
    declaration say (RFC 7303 section 3.2); feedparser would let either of them win.
    """
    lowered = {str(k).lower(): str(v) for k, v in (headers or {}).items()}
    if url:
        lowered["content-location"] = url
    bom = bom_charset(body)
    lowered["content-type"] = (
        f"application/xml; charset={bom}"
        if bom
        else xml_content_type(lowered.get("content-type", ""))
    )
    return lowered


def _memoize_base_uri() -> None:
    """Memoize the ``make_safe_absolute_uri`` that feedparser's element handler calls.

    Given a base URL (our Content-Location), feedparser resolves that base against itself at
    the start of every element: a quarter of its time on a typical feed. The function is pure
    (strings in, a string out), so the cache changes nothing but the time. A feedparser
    without that name is left alone.
    """
    join = getattr(feedparser.mixin, "make_safe_absolute_uri", None)
    if callable(join) and not hasattr(join, "cache_info"):
        feedparser.mixin.make_safe_absolute_uri = functools.lru_cache(maxsize=256)(join)


_memoize_base_uri()


def _guard_psc_start() -> None:
    """Make feedparser's reading of a ``psc:chapter`` start safe when the start is missing.

    feedparser 6 matches its regex on the ``start`` attribute as given, so one
    ``<psc:chapter>`` without ``start`` inside ``<psc:chapters>`` raises TypeError out of
    ``feedparser.parse`` and the whole feed fails. Its reading is not used here (podcast_ns
    reads Podlove chapters), so a start that is not a string now reads as None, which is
    what feedparser gives for any other unreadable start. A feedparser without that name
    is left alone.
    """
    psc: Any = getattr(getattr(feedparser, "namespaces", None), "psc", None)
    read = getattr(psc, "_parse_psc_chapter_start", None)
    if not callable(read) or getattr(read, "_podarchive_guard", False):
        return

    def guarded(start: object) -> Any:
        return read(start) if isinstance(start, str) else None

    guarded._podarchive_guard = True  # type: ignore[attr-defined]
    psc._parse_psc_chapter_start = guarded


_guard_psc_start()


def _run_feedparser(body: bytes, headers: dict[str, str]) -> FPDict:
    try:
        result: FPDict = feedparser.parse(
            io.BytesIO(body),
            response_headers=headers,
            sanitize_html=False,
            resolve_relative_uris=False,
        )
    except Exception as e:  # feedparser has crashed on odd input before; never let it escape
        raise ParseError(f"feedparser failed: {type(e).__name__}: {one_line_reason(e)}") from e
    return result


def _scan(body: bytes, encoding: object) -> PodcastScan:
    """The lxml pass, decoding the body with the encoding feedparser settled on."""
    try:
        return podcast_ns.scan(body, encoding if isinstance(encoding, str) else None)
    except Exception:  # the scan only adds detail; feedparser's result stands without it
        return PodcastScan()


def _unwrapped(
    result: FPDict, scan: PodcastScan, headers: Mapping[str, str]
) -> tuple[FPDict, PodcastScan]:
    """feedparser's reading and the scan of the feed alone when the body wraps it.

    Inside an XHTML page (``<html><body><feed xmlns="…Atom">``) feedparser takes the page's
    ``<body>`` for content and loses the feed's title; the scan writes the feed element
    alone (:attr:`PodcastScan.unwrapped`), and both read that. The first reading stands when
    nothing wraps the feed or the feed alone does not read.
    """
    if scan.unwrapped is None:
        return result, scan
    try:
        inner = _run_feedparser(scan.unwrapped, {**headers, "content-type": "application/xml"})
    except ParseError:
        return result, scan
    if not fp_get(inner, "version"):
        return result, scan
    return inner, _scan(scan.unwrapped, fp_get(inner, "encoding"))


def _reread(document: bytes, headers: Mapping[str, str], key: str) -> Any:
    """feedparser's ``feed`` (or first entry) of a document the scan wrote; None if unread.

    The scan writes the channel, or one item, without the extension elements that hold RSS
    elements (a ``podcast:liveItem``'s ``<link>``…), which feedparser would take for the
    channel's or item's own. The document declares its encoding; the headers keep the base.
    """
    try:
        result = _run_feedparser(document, {**headers, "content-type": "application/xml"})
    except ParseError:
        return None
    if not fp_get(result, "version"):
        return None
    if key == "feed":
        return fp_get(result, "feed") or None
    entries = fp_get(result, "entries") or []
    return entries[0] if len(entries) == 1 and isinstance(entries[0], dict) else None


def _outside_extensions(entries: list[FPDict], scan: PodcastScan) -> list[FPDict]:
    """feedparser's entries but those of items inside an extension element (a liveItem's).

    By position when feedparser found every item the scan did, else by guid.
    """
    if not scan.nested_items:
        return entries
    if len(entries) == len(scan.items) + len(scan.nested_items):
        drop = {number for number, _ in scan.nested_items}
        return [entry for number, entry in enumerate(entries) if number not in drop]
    kept = {item.guid for item in scan.items}
    nested = {guid for _, guid in scan.nested_items if guid is not None and guid not in kept}
    return [entry for entry in entries if fp_str(entry, "id") not in nested]


# --- channel ---------------------------------------------------------------------------


# --- episodes --------------------------------------------------------------------------


def _align(
    entries: list[FPDict], items: tuple[ItemScan, ...]
) -> Iterator[tuple[FPDict, ItemScan | None]]:
    """Pair feedparser entries with scanned items: by position when counts agree, else guid."""
    if len(entries) == len(items):
        yield from zip(entries, items, strict=True)
        return
    by_guid: dict[str, ItemScan] = {}
    for item in items:
        if item.guid is not None:
            by_guid.setdefault(item.guid, item)
    for entry in entries:
        guid = fp_str(entry, "id")
        yield entry, by_guid.get(guid) if guid else None


def _episodes(
    entries: list[FPDict],
    items: tuple[ItemScan, ...],
    url: str | None,
    headers: Mapping[str, str] | None = None,
) -> tuple[tuple[Episode, ...], list[str]]:
    """The episodes, media URLs absolute when ``url`` is given, and their psc:chapters notes.

    An item whose extension elements hold RSS elements is read again without them (``headers``
    are feedparser's, for the base URL).
    """
    episodes: list[Episode] = []
    notes: list[str] = []
    for number, (entry, item) in enumerate(_align(entries, items), 1):
        if item is not None and item.document is not None:
            entry = _reread(item.document, headers or {}, "entry") or entry
        episode = read_episode(entry, item)
        if url:
            episode = _absolute(episode, url)
        if item is not None and item.simple_chapters:
            episode, note = _with_simple_chapters(episode, item.simple_chapters, url, number)
            if note:
                notes.append(note)
        episodes.append(episode)
    return tuple(episodes), notes


def _with_simple_chapters(
    episode: Episode, entries: Sequence[SimpleChapter], url: str | None, number: int
) -> tuple[Episode, str | None]:
    """``episode`` with its Podlove Simple Chapters read, and a note on what went wrong.

    Relative ``href``/``image`` resolve against the episode's link when it is http(s), else
    the feed's URL. Unusable chapters (every entry bad) leave none and give a note; the feed
    is read all the same.
    """
    base = episode.link if episode.link and is_http_url(episode.link) else url
    try:
        parsed = parse_simple_chapters(entries, base)
    except ChaptersError as e:
        return episode, _chapter_note(episode, number, str(e))
    note = _chapter_note(episode, number, "; ".join(parsed.warnings)) if parsed.warnings else None
    return dataclasses.replace(episode, simple_chapters=parsed.chapters), note


def _chapter_note(episode: Episode, number: int, problem: str) -> str:
    """``psc:chapters of item 3 'Title': <problem>`` on one line."""
    name = episode.title or episode.guid
    where = f"item {number} {_quoted(name)}" if name else f"item {number}"
    return one_line(f"psc:chapters of {where}: {problem}", MAX_REASON + 100)


def _chapter_warnings(notes: Sequence[str]) -> tuple[str, ...]:
    """The first few psc:chapters notes, one line each, then one line counting the rest."""
    if len(notes) <= _SAMPLES:
        return tuple(notes)
    rest = len(notes) - _SAMPLES
    more = f"psc:chapters of {rest:,} more item{'s' if rest > 1 else ''} had bad entries too"
    return (*notes[:_SAMPLES], more)


def _tag_warnings(scan: PodcastScan) -> tuple[str, ...]:
    """One line naming the scopes whose extension elements were cut at MAX_TAGS."""
    cut = ["the channel"] if scan.channel.tags_cut else []
    cut += [f"item {number}" for number, item in enumerate(scan.items, 1) if item.tags_cut]
    if not cut:
        return ()
    shown = ", ".join(cut[:_SAMPLES])
    if len(cut) > _SAMPLES:
        shown += f" and {len(cut) - _SAMPLES:,} more"
    most = f"{MAX_TAGS:,}"
    return (f"more than {most} extension elements in {shown}: the first {most} kept",)


def _file_warnings(scan: PodcastScan) -> tuple[str, ...]:
    """One line per item (the first few, then a count) listing more transcripts or chapters
    files than podcast_ns.MAX_FILES: the first ones are kept, in document order."""
    most = podcast_ns.MAX_FILES
    lines = [
        f"item {number} lists {most + cut:,} {kind} files: the first {most} kept"
        for number, item in enumerate(scan.items, 1)
        for kind, cut in zip(
            ("podcast:transcript", "podcast:chapters"), item.files_cut, strict=True
        )
        if cut
    ]
    if len(lines) <= _SAMPLES:
        return tuple(lines)
    rest = (
        f"{len(lines) - _SAMPLES:,} more lists of over {most} files: the first {most} of each kept"
    )
    return (*lines[:_SAMPLES], rest)


def _absolute(episode: Episode, base: str) -> Episode:
    """Resolve the media URLs feedparser leaves relative (enclosure, image, transcripts...)."""
    image = episode.image and join_url(base, episode.image)
    enclosure = episode.enclosure and _resolved(episode.enclosure, base)
    transcripts = tuple(_resolved(t, base) for t in episode.transcripts)
    chapters = tuple(_resolved(c, base) for c in episode.chapters)
    if (image, enclosure, transcripts, chapters) == (
        episode.image,
        episode.enclosure,
        episode.transcripts,
        episode.chapters,
    ):
        return episode  # already absolute: the usual case, and no copy to make
    return dataclasses.replace(
        episode, image=image, enclosure=enclosure, transcripts=transcripts, chapters=chapters
    )


_WithUrl = TypeVar("_WithUrl", Enclosure, Transcript, Chapters)


def _resolved(item: _WithUrl, base: str) -> _WithUrl:
    url = join_url(base, item.url)
    return item if url == item.url else dataclasses.replace(item, url=url)


# --- small readers -----------------------------------------------------------------------


def _date_warnings(feed: FPDict, entries: Sequence[FPDict]) -> tuple[str, ...]:
    """One warning for the unreadable dates of a feed: their count and a few of them."""
    found = [
        (text, where)
        for d, where in (
            (feed, "the channel"),
            *((e, f"item {i}") for i, e in enumerate(entries, 1)),
        )
        for key in ("published", "updated")
        if (text := unreadable_date(d, key)) is not None
    ]
    if not found:
        return ()
    samples = ", ".join(f"{_quoted(text)} in {where}" for text, where in found[:_SAMPLES])
    if len(found) == 1:
        return (f"unreadable date {samples}",)
    if len(found) <= _SAMPLES:
        return (f"{len(found)} unreadable dates: {samples}",)
    return (f"{len(found):,} unreadable dates, e.g. {samples}, …",)


def _quoted(text: str) -> str:
    """``text`` on one line, cut to 40 characters, in single quotes."""
    line = " ".join(text.split())
    return f"'{line if len(line) <= 40 else line[:39] + '…'}'"
