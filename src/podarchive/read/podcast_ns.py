"""A small, hardened lxml pass over a feed's raw bytes for what feedparser gets wrong.

feedparser keeps only the last of repeated ``podcast:*`` tags, names them after whatever
prefix the feed chose, and turns ``<itunes:explicit>true</itunes:explicit>`` into ``None``.
:func:`scan` reads those tags (and raw ``itunes:explicit``, ``itunes:author``,
``itunes:image``, nested ``itunes:category``, Podlove ``psc:chapter`` attributes) by
namespace URI instead.

Namespace URIs and tag kinds come from :mod:`~.feed_names`; :mod:`~.extension_tags` captures
the extension elements as Tag records and writes the documents feedparser reads again.

This module and :mod:`~.extension_tags` are the only ones that import lxml for feeds. The
parser (:func:`hardened_parser`) never resolves entities, loads a DTD or touches the network,
and recovers from broken XML; a body it cannot read at all gives an empty
:class:`PodcastScan`.
"""

from __future__ import annotations

import contextlib
import copy
from collections.abc import Iterator
from dataclasses import dataclass, field

from lxml import etree

from podarchive.core.types import Chapters, Funding, Person, Tag, Transcript
from podarchive.read.chapter_formats import MAX_CHAPTERS, SimpleChapter
from podarchive.read.extension_tags import (
    ScanContext,
    capture,
    channel_document,
    item_document,
    serialize,
)
from podarchive.read.feed_names import (
    ATOM_NAMESPACES,
    CONTENT_NAMESPACE,
    FEED_HISTORY,
    ITEM_NAMES,
    ITEM_NAMESPACES,
    ITUNES,
    OTHER,
    PODCAST,
    PSC,
    RDF_ABOUT,
    RDF_NAMESPACE,
    RSS_TEXT_NAMESPACES,
    split_tag,
)

_FEED_TAGS = ("{*}feed", "{*}rss", "{*}RDF")  # lxml: any namespace or none; _is_feed decides
_ITEM_TAGS = tuple(f"{{*}}{name}" for name in sorted(ITEM_NAMES))  # lxml: any namespace or none


# podcast:transcript and podcast:chapters entries kept per item, of each kind, in document
# order: each is a request at every re-check, so an item listing thousands is cut (#23).
MAX_FILES = 20


@dataclass(frozen=True, slots=True)
class ItemScan:
    """What one ``<item>``/``<entry>`` says in the podcast namespace, plus raw itunes tags."""

    guid: str | None = None  # RSS <guid> / Atom <id> text, for aligning with feedparser
    explicit: str | None = None  # raw itunes:explicit text
    season: str | None = None  # podcast:season
    episode: str | None = None  # podcast:episode
    description: str | None = None  # RSS <description>, raw
    content_encoded: str | None = None  # content:encoded, raw
    itunes_summary: str | None = None
    itunes_subtitle: str | None = None
    transcripts: tuple[Transcript, ...] = ()  # the first MAX_FILES
    chapters: tuple[Chapters, ...] = ()  # the first MAX_FILES
    files_cut: tuple[int, int] = (0, 0)  # transcripts, chapters entries over MAX_FILES
    persons: tuple[Person, ...] = ()
    # psc:chapter (start, title, href, image) attributes, document order, at most
    # MAX_CHAPTERS + 1 (one over the cap, so that chapters.parse_simple_chapters says it cut)
    simple_chapters: tuple[SimpleChapter, ...] = ()
    tags: tuple[Tag, ...] = ()  # extension elements and their subtrees, flattened (#13)
    tags_cut: bool = False  # there were more than MAX_TAGS: the first MAX_TAGS are kept
    # the item alone, without its extension elements that hold RSS/Atom/itunes elements
    # (feedparser would take those for the item's own), for feedparser to read again; None
    # when there are none
    document: bytes | None = None


@dataclass(frozen=True, slots=True)
class ChannelScan:
    """Channel-level podcast-namespace tags and raw itunes tags."""

    guid: str | None = None  # podcast:guid
    locked: str | None = None  # raw podcast:locked text
    funding: tuple[Funding, ...] = ()
    explicit: str | None = None  # raw itunes:explicit text
    new_feed_url: str | None = None
    itunes_author: str | None = None
    itunes_image: str | None = None
    description: str | None = None  # RSS <description>, raw
    itunes_summary: str | None = None
    itunes_subtitle: str | None = None
    categories: tuple[str, ...] = ()  # itunes:category, nested ones as "Parent > Child"
    complete: bool = False  # RFC 5005 <fh:complete/>: the feed lists every entry
    links: tuple[tuple[str, str], ...] = ()  # atom:link (rel, href) of the channel, raw
    tags: tuple[Tag, ...] = ()  # extension elements and their subtrees, flattened (#13)
    tags_cut: bool = False  # there were more than MAX_TAGS: the first MAX_TAGS are kept
    # the channel without its items and without its extension elements that hold
    # RSS/Atom/itunes elements (a podcast:liveItem's <title>, <link>… would be taken for the
    # channel's), for feedparser to read again; None when there are none
    document: bytes | None = None


@dataclass(frozen=True, slots=True)
class PodcastScan:
    root: str | None = None  # local name of the root element, None when unreadable
    channel: ChannelScan = ChannelScan()
    items: tuple[ItemScan, ...] = ()
    # <item>/<entry> elements inside an extension element (a podcast:liveItem's): no episodes.
    # (index among every <item>/<entry> of the document, in document order; its guid)
    nested_items: tuple[tuple[int, str | None], ...] = ()
    # the feed alone, when the document wraps it (an Atom <feed> in an XHTML page's <body>):
    # what feedparser and the scan should read instead; nothing else is scanned then
    unwrapped: bytes | None = None


def scan(body: bytes, encoding: str | None = None) -> PodcastScan:
    """Read the podcast-namespace tags of a feed body; an empty scan when it won't parse.

    ``encoding`` is the one feedparser decoded the body with; None leaves it to the XML rules.
    """
    root = _parse(body, encoding) if encoding else None
    utf8 = root is not None and (encoding or "").lower().replace("_", "-") in ("utf-8", "utf8")
    if root is None:  # no encoding given, or lxml does not know feedparser's name for it
        root = _parse(body, None)
    if root is None:
        return PodcastScan()
    feed = _feed_element(root)
    if feed is not root:
        document = serialize(copy.deepcopy(feed), encoding or "utf-8")
        return PodcastScan(root=split_tag(root.tag)[1], unwrapped=document)
    context = ScanContext(root, encoding or "utf-8")
    channel = _scan_channel(_channel_element(root), utf8, context)
    items: list[ItemScan] = []
    skipped: list[tuple[int, str | None]] = []
    for number, el in enumerate(_items(root)):  # document order: an outer item comes first
        if el in context.nested:
            skipped.append((number, _scan_item(el).guid))
        else:
            items.append(_scan_item(el, utf8, context))
    return PodcastScan(
        root=split_tag(root.tag)[1],
        channel=channel,
        items=tuple(items),
        nested_items=tuple(skipped),
    )


def hardened_parser(
    *, recover: bool, encoding: str | None = None, strip: bool = True
) -> etree.XMLParser:
    """The one lxml parser setting for untrusted XML (feeds, OPML): no entity expansion, no
    DTD, no network, no huge trees; ``strip`` drops comments and processing instructions."""
    return etree.XMLParser(
        encoding=encoding or None,
        resolve_entities=False,
        no_network=True,
        load_dtd=False,
        huge_tree=False,
        recover=recover,
        remove_comments=strip,
        remove_pis=strip,
    )


def _parse(body: bytes, encoding: str | None) -> etree._Element | None:
    try:
        parser = hardened_parser(recover=True, encoding=encoding)
        root = etree.fromstring(body.lstrip() if body[:1].isspace() else body, parser)
    except (etree.LxmlError, ValueError, LookupError):  # LookupError: unknown encoding name
        return None
    return root if root is not None and isinstance(root.tag, str) else None


def _cp1252_table() -> dict[int, str]:
    table = {}
    for code in range(0x80, 0xA0):
        # 0x81, 0x8D, 0x8F, 0x90, 0x9D are undefined in Windows-1252: left alone
        with contextlib.suppress(UnicodeDecodeError):
            table[code] = bytes([code]).decode("cp1252")
    return table


_CP1252 = _cp1252_table()


def _repair(text: str | None, utf8: bool) -> str | None:
    """feedparser's repairs of a text (see the module docstring)."""
    if text is None or text.isascii():  # both repairs leave ASCII alone
        return text
    if utf8:
        with contextlib.suppress(UnicodeEncodeError, UnicodeDecodeError):
            text = text.encode("iso-8859-1").decode("utf-8")
    return text.translate(_CP1252)


def _items(root: etree._Element) -> Iterator[etree._Element]:
    """Every RSS <item> / Atom <entry>, in document order."""
    for el in root.iter(*_ITEM_TAGS):
        if split_tag(el.tag)[0] in ITEM_NAMESPACES:
            yield el


def _is_feed(el: etree._Element) -> bool:
    """An Atom ``<feed>``, an RSS ``<rss>`` or an RSS 1.0 ``<rdf:RDF>``."""
    kind, local = split_tag(el.tag)
    return (
        (local == "feed" and kind in ATOM_NAMESPACES)
        or (local == "rss" and kind == OTHER)
        or (local == "RDF" and kind == RDF_NAMESPACE)
    )


def _feed_element(root: etree._Element) -> etree._Element:
    """The document's feed: its root, else the first feed inside it (an Atom ``<feed>`` in an
    XHTML page's ``<body>``, which feedparser reads too), else the root.

    Read in place, the page's elements would pass for the feed's: its ``<body>``, an
    extension element, would hold every entry (no episode), and the channel its ``<html>``.
    """
    if _is_feed(root):
        return root
    return next((el for el in root.iter(*_FEED_TAGS) if _is_feed(el)), root)


def _channel_element(root: etree._Element) -> etree._Element:
    """RSS <channel> (the first), else the root itself (Atom <feed>)."""
    for child in root:
        if split_tag(child.tag)[1] == "channel":
            return child
    return root


def _children(el: etree._Element) -> Iterator[tuple[str, str, etree._Element]]:
    for child in el:
        kind, local = split_tag(child.tag)
        if local:
            yield kind, local, child


def _text(el: etree._Element) -> str | None:
    text = "".join(el.itertext()).strip()
    return text or None


def _attr(el: etree._Element, name: str) -> str | None:
    value = el.get(name)
    if value is None:
        return None
    value = value.strip()
    return value or None


@dataclass(slots=True)
class _ItemFound:
    """What an item's children said so far (the first of single-valued ones)."""

    found: dict[str, str | None] = field(default_factory=dict)
    transcripts: list[Transcript] = field(default_factory=list)
    chapters: list[Chapters] = field(default_factory=list)
    persons: list[Person] = field(default_factory=list)
    simple_chapters: list[SimpleChapter] = field(default_factory=list)

    def add(self, kind: str, local: str, el: etree._Element, utf8: bool) -> None:
        if kind == PODCAST and self._add_podcast(local, el):
            return
        if kind == PSC and local == "chapters":
            _simple_chapters(el, self.simple_chapters)
        elif (key := _item_key(kind, local)) is not None:
            text = _raw_text(el) if key in RAW_KEYS else _text(el)
            self.found.setdefault(key, text if key == "guid" else _repair(text, utf8))

    def _add_podcast(self, local: str, el: etree._Element) -> bool:
        """Add a podcast:transcript, podcast:chapters or podcast:person; False if it is none."""
        if local == "transcript" and (url := _attr(el, "url")):
            self.transcripts.append(
                Transcript(url, _attr(el, "type"), _attr(el, "language"), _attr(el, "rel"))
            )
        elif local == "chapters" and (url := _attr(el, "url")):
            self.chapters.append(Chapters(url, _attr(el, "type")))
        elif local == "person" and (name := _text(el)):
            self.persons.append(
                Person(
                    name, _attr(el, "role"), _attr(el, "group"), _attr(el, "href"), _attr(el, "img")
                )
            )
        else:
            return False
        return True


def _scan_item(
    item: etree._Element, utf8: bool = False, context: ScanContext | None = None
) -> ItemScan:
    scanned = _ItemFound()
    for kind, local, el in _children(item):
        scanned.add(kind, local, el, utf8)
    found, transcripts, chapters = scanned.found, scanned.transcripts, scanned.chapters
    captured = capture(item, context)
    return ItemScan(
        guid=found.get("guid") or _attr(item, RDF_ABOUT),
        explicit=found.get("explicit"),
        season=found.get("season"),
        episode=found.get("episode"),
        description=found.get("description"),
        content_encoded=found.get("content_encoded"),
        itunes_summary=found.get("itunes_summary"),
        itunes_subtitle=found.get("itunes_subtitle"),
        transcripts=tuple(transcripts[:MAX_FILES]),
        chapters=tuple(chapters[:MAX_FILES]),
        files_cut=(max(0, len(transcripts) - MAX_FILES), max(0, len(chapters) - MAX_FILES)),
        persons=tuple(scanned.persons),
        simple_chapters=tuple(scanned.simple_chapters),
        tags=captured.tags,
        tags_cut=captured.cut,
        document=item_document(item, captured.mislead, context),
    )


def _simple_chapters(chapters: etree._Element, found: list[SimpleChapter]) -> None:
    """Append each ``psc:chapter``'s (start, title, href, image), stopping one over the cap."""
    for kind, local, el in _children(chapters):
        if len(found) > MAX_CHAPTERS:
            return
        if kind == PSC and local == "chapter":
            found.append(
                (_attr(el, "start"), _attr(el, "title"), _attr(el, "href"), _attr(el, "image"))
            )


RAW_KEYS = frozenset({"description", "content_encoded"})


def _item_key(kind: str, local: str) -> str | None:
    """Which single-valued ItemScan field a child element feeds, if any."""
    if kind in ITEM_NAMESPACES and local in ("guid", "id"):
        return "guid"
    if kind in RSS_TEXT_NAMESPACES and local == "description":
        return "description"
    if kind == CONTENT_NAMESPACE and local == "encoded":
        return "content_encoded"
    if kind == PODCAST and local in ("season", "episode"):
        return local
    if kind == ITUNES and local in ("explicit", "summary", "subtitle"):
        return local if local == "explicit" else "itunes_" + local
    return None


def _raw_text(el: etree._Element) -> str | None:
    """An element's text exactly as written, or None when it holds markup (left to feedparser)."""
    if len(el) or el.text is None:
        return None
    return el.text.strip() or None


@dataclass(slots=True)
class _ChannelFound:
    """What a channel's children said so far (the first of single-valued ones)."""

    found: dict[str, str | None] = field(default_factory=dict)
    funding: list[Funding] = field(default_factory=list)
    categories: list[str] = field(default_factory=list)
    links: list[tuple[str, str]] = field(default_factory=list)
    complete: bool = False

    def add(self, kind: str, local: str, el: etree._Element, utf8: bool) -> None:
        if kind == PODCAST:
            self._add_podcast(local, el)
        elif kind == ITUNES:
            self._add_itunes(local, el, utf8)
        elif kind in RSS_TEXT_NAMESPACES and local == "description":
            self.found.setdefault("description", _repair(_raw_text(el), utf8))
        elif kind == FEED_HISTORY and local == "complete":
            self.complete = True
        elif kind in ATOM_NAMESPACES and local == "link" and (href := _attr(el, "href")):
            self.links.append(((_attr(el, "rel") or "alternate").lower(), href))

    def _add_podcast(self, local: str, el: etree._Element) -> None:
        if local in ("guid", "locked"):
            self.found.setdefault(local, _text(el))
        elif local == "funding" and (url := _attr(el, "url")):
            self.funding.append(Funding(url, _text(el)))

    def _add_itunes(self, local: str, el: etree._Element, utf8: bool) -> None:
        if local in ("explicit", "new-feed-url", "author", "summary", "subtitle"):
            self.found.setdefault(local, _repair(_text(el), utf8))
        elif local == "image":
            self.found.setdefault("image", _attr(el, "href") or _attr(el, "url"))
        elif local == "category":
            self.categories.extend(_categories(el, ()))


def _scan_channel(
    channel: etree._Element, utf8: bool = False, context: ScanContext | None = None
) -> ChannelScan:
    scanned = _ChannelFound()
    for kind, local, el in _children(channel):
        scanned.add(kind, local, el, utf8)
    found = scanned.found
    captured = capture(channel, context)
    return ChannelScan(
        complete=scanned.complete,
        links=tuple(scanned.links),
        guid=found.get("guid"),
        locked=found.get("locked"),
        funding=tuple(scanned.funding),
        explicit=found.get("explicit"),
        new_feed_url=found.get("new-feed-url"),
        itunes_author=found.get("author"),
        itunes_image=found.get("image"),
        description=found.get("description"),
        itunes_summary=found.get("summary"),
        itunes_subtitle=found.get("subtitle"),
        categories=tuple(dict.fromkeys(scanned.categories)),
        tags=captured.tags,
        tags_cut=captured.cut,
        document=channel_document(channel, captured.mislead, context),
    )


def _categories(el: etree._Element, parents: tuple[str, ...]) -> Iterator[str]:
    """An itunes:category and its nested ones, as "Parent" then "Parent > Child"."""
    text = _attr(el, "text")
    if text is None:
        return
    path = (*parents, text)
    yield " > ".join(path)
    for kind, local, child in _children(el):
        if kind == ITUNES and local == "category":
            yield from _categories(child, path)


# extension elements, losslessly (issue #13) --------------------------------------------


def well_formed(skeleton: bytes) -> bool:
    """Does lxml's strict, hardened parser read ``skeleton`` as one well-formed element?"""
    parser = hardened_parser(recover=False, strip=False)
    try:
        root = etree.fromstring(skeleton.lstrip(), parser)
    except (etree.LxmlError, ValueError, LookupError):
        return False
    return root is not None and isinstance(root.tag, str)
