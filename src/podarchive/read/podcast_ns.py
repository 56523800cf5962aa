"""A small, hardened lxml pass over a feed's raw bytes for what feedparser gets wrong.

feedparser keeps only the last of repeated ``podcast:*`` tags, names them after whatever
prefix the feed chose, and turns ``<itunes:explicit>true</itunes:explicit>`` into ``None``.
:func:`scan` reads those tags (and raw ``itunes:explicit``, ``itunes:author``,
``itunes:image``, nested ``itunes:category``, Podlove ``psc:chapter`` attributes) by
namespace URI instead.

This is the only module that imports lxml for feeds. The parser never resolves entities,
loads a DTD or touches the network, and recovers from broken XML; a body it cannot read
at all gives an empty :class:`PodcastScan`.
"""

from __future__ import annotations

import contextlib
import copy
import functools
from collections.abc import Iterator
from dataclasses import dataclass, field

from lxml import etree

from podarchive.core.types import Chapters, Funding, Person, Tag, Transcript
from podarchive.read.chapter_formats import MAX_CHAPTERS, SimpleChapter

PODCAST_NAMESPACES = frozenset(
    {
        "https://podcastindex.org/namespace/1.0",
        "http://podcastindex.org/namespace/1.0",
        "https://github.com/podcastindex-org/podcast-namespace/blob/main/docs/1.0.md",
    }
)
ITUNES_NAMESPACES = frozenset(
    {
        "http://www.itunes.com/dtds/podcast-1.0.dtd",
        "https://www.itunes.com/dtds/podcast-1.0.dtd",
    }
)
# Podlove Simple Chapters (psc:chapters): the spec's URI, and https / a trailing slash tolerated.
PSC_NAMESPACES = frozenset(
    {
        "http://podlove.org/simple-chapters",
        "https://podlove.org/simple-chapters",
        "http://podlove.org/simple-chapters/",
        "https://podlove.org/simple-chapters/",
    }
)
ATOM_NAMESPACES = frozenset(
    {"http://www.w3.org/2005/atom", "http://www.w3.org/2005/atom/", "http://purl.org/atom/ns#"}
)
# Where <item>/<entry> may live: no namespace (RSS 0.9x/2.0), RSS 1.0, RSS 0.90, Atom.
ITEM_NAMESPACES = ATOM_NAMESPACES | {
    "",
    "http://purl.org/rss/1.0/",
    "http://my.netscape.com/rdf/simple/0.9/",
}
CONTENT_NAMESPACE = "http://purl.org/rss/1.0/modules/content/"
RSS_TEXT_NAMESPACES = frozenset(
    {"", "http://purl.org/rss/1.0/", "http://my.netscape.com/rdf/simple/0.9/"}
)
RDF_NAMESPACE = "http://www.w3.org/1999/02/22-rdf-syntax-ns#"
RDF_ABOUT = f"{{{RDF_NAMESPACE}}}about"
ITEM_NAMES = frozenset({"item", "entry"})
_FEED_TAGS = ("{*}feed", "{*}rss", "{*}RDF")  # lxml: any namespace or none; _is_feed decides
_ITEM_TAGS = tuple(f"{{*}}{name}" for name in sorted(ITEM_NAMES))  # lxml: any namespace or none
# Undeclared prefixes (``<podcast:locked>`` with no xmlns) arrive from lxml's recovery as a
# literal "prefix:name" tag; these well-known prefixes are accepted in that case only.
KNOWN_PREFIXES = {"podcast": "podcast", "itunes": "itunes", "psc": "psc"}

PODCAST = "podcast"
PSC = "psc"
FEED_HISTORY = "http://purl.org/syndication/history/1.0"  # RFC 5005
ITUNES = "itunes"
OTHER = ""

# What feedparser maps fully into its own fields (#13): RSS and Atom under every namespace URI
# it reads as the format's own, itunes, content, Dublin Core and syndication, and their
# prefixes when undeclared (feedparser's loose parser goes by the prefix). Everything else is
# an extension, kept as Tag records. Kinds as _split gives them (URIs lower-cased).
DC_NAMESPACE = "http://purl.org/dc/elements/1.1/"
SY_NAMESPACE = "http://purl.org/rss/1.0/modules/syndication/"
MAPPED_KINDS = ITEM_NAMESPACES | {
    ITUNES,
    CONTENT_NAMESPACE,
    DC_NAMESPACE,
    SY_NAMESPACE,
    "http://backend.userland.com/rss",
    "http://blogs.law.harvard.edu/tech/rss",
    "http://purl.org/rss/1.0/modules/rss091#",
    "http://purl.org/echo/",
    "http://purl.org/pie/",
    "http://example.com/newformat#",
    "http://example.com/necho",
    "uri/of/echo/namespace#",
    "?atom",
    "?content",
    "?dc",
    "?sy",
}
# Captured elements per scope (the channel, one item); the rest are cut, with a warning.
# Twice MAX_CHAPTERS: a psc:chapters with as many chapters as are read is kept whole.
MAX_TAGS = 2 * MAX_CHAPTERS
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
        document = _serialize(copy.deepcopy(feed), encoding or "utf-8")
        return PodcastScan(root=_split(root.tag)[1], unwrapped=document)
    context = _Context(root, encoding or "utf-8")
    channel = _scan_channel(_channel_element(root), utf8, context)
    items: list[ItemScan] = []
    skipped: list[tuple[int, str | None]] = []
    for number, el in enumerate(_items(root)):  # document order: an outer item comes first
        if el in context.nested:
            skipped.append((number, _scan_item(el).guid))
        else:
            items.append(_scan_item(el, utf8, context))
    return PodcastScan(
        root=_split(root.tag)[1],
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


@functools.lru_cache(maxsize=1024)  # a feed repeats a few dozen tag names thousands of times
def _split(tag: object) -> tuple[str, str]:
    """(kind, local name) of a tag: PODCAST, ITUNES, PSC, or the lower-cased other URI."""
    if not isinstance(tag, str):
        return OTHER, ""
    if tag.startswith("{"):
        uri, _, local = tag[1:].partition("}")
        uri = uri.lower()
        if uri in PODCAST_NAMESPACES:
            return PODCAST, local
        if uri in ITUNES_NAMESPACES:
            return ITUNES, local
        if uri in PSC_NAMESPACES:
            return PSC, local
        return uri, local
    prefix, colon, local = tag.partition(":")
    if colon:
        return KNOWN_PREFIXES.get(prefix.lower(), "?" + prefix), local
    return OTHER, tag


def _items(root: etree._Element) -> Iterator[etree._Element]:
    """Every RSS <item> / Atom <entry>, in document order."""
    for el in root.iter(*_ITEM_TAGS):
        if _split(el.tag)[0] in ITEM_NAMESPACES:
            yield el


def _is_feed(el: etree._Element) -> bool:
    """An Atom ``<feed>``, an RSS ``<rss>`` or an RSS 1.0 ``<rdf:RDF>``."""
    kind, local = _split(el.tag)
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
        if _split(child.tag)[1] == "channel":
            return child
    return root


def _children(el: etree._Element) -> Iterator[tuple[str, str, etree._Element]]:
    for child in el:
        kind, local = _split(child.tag)
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


def _scan_item(
    item: etree._Element, utf8: bool = False, context: _Context | None = None
) -> ItemScan:
    found: dict[str, str | None] = {}
    transcripts: list[Transcript] = []
    chapters: list[Chapters] = []
    persons: list[Person] = []
    simple_chapters: list[SimpleChapter] = []
    for kind, local, el in _children(item):
        if kind == PODCAST and local == "transcript" and (url := _attr(el, "url")):
            transcripts.append(
                Transcript(url, _attr(el, "type"), _attr(el, "language"), _attr(el, "rel"))
            )
        elif kind == PODCAST and local == "chapters" and (url := _attr(el, "url")):
            chapters.append(Chapters(url, _attr(el, "type")))
        elif kind == PODCAST and local == "person" and (name := _text(el)):
            persons.append(
                Person(
                    name, _attr(el, "role"), _attr(el, "group"), _attr(el, "href"), _attr(el, "img")
                )
            )
        elif kind == PSC and local == "chapters":
            _simple_chapters(el, simple_chapters)
        elif (key := _item_key(kind, local)) is not None:
            text = _raw_text(el) if key in RAW_KEYS else _text(el)
            found.setdefault(key, text if key == "guid" else _repair(text, utf8))
    captured = _capture(item, context)
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
        persons=tuple(persons),
        simple_chapters=tuple(simple_chapters),
        tags=captured.tags,
        tags_cut=captured.cut,
        document=_item_document(item, captured.mislead, context),
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


def _scan_channel(
    channel: etree._Element, utf8: bool = False, context: _Context | None = None
) -> ChannelScan:
    found: dict[str, str | None] = {}
    funding: list[Funding] = []
    categories: list[str] = []
    links: list[tuple[str, str]] = []
    complete = False
    for kind, local, el in _children(channel):
        if kind == PODCAST and local in ("guid", "locked"):
            found.setdefault(local, _text(el))
        elif kind == PODCAST and local == "funding" and (url := _attr(el, "url")):
            funding.append(Funding(url, _text(el)))
        elif kind == ITUNES and local in (
            "explicit",
            "new-feed-url",
            "author",
            "summary",
            "subtitle",
        ):
            found.setdefault(local, _repair(_text(el), utf8))
        elif kind in RSS_TEXT_NAMESPACES and local == "description":
            found.setdefault("description", _repair(_raw_text(el), utf8))
        elif kind == ITUNES and local == "image":
            found.setdefault("image", _attr(el, "href") or _attr(el, "url"))
        elif kind == ITUNES and local == "category":
            categories.extend(_categories(el, ()))
        elif kind == FEED_HISTORY and local == "complete":
            complete = True
        elif kind in ATOM_NAMESPACES and local == "link" and (href := _attr(el, "href")):
            links.append(((_attr(el, "rel") or "alternate").lower(), href))
    captured = _capture(channel, context)
    return ChannelScan(
        complete=complete,
        links=tuple(links),
        guid=found.get("guid"),
        locked=found.get("locked"),
        funding=tuple(funding),
        explicit=found.get("explicit"),
        new_feed_url=found.get("new-feed-url"),
        itunes_author=found.get("author"),
        itunes_image=found.get("image"),
        description=found.get("description"),
        itunes_summary=found.get("summary"),
        itunes_subtitle=found.get("subtitle"),
        categories=tuple(dict.fromkeys(categories)),
        tags=captured.tags,
        tags_cut=captured.cut,
        document=_channel_document(channel, captured.mislead, context),
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


@dataclass(slots=True)
class _Context:
    """What one scan shares between its scopes."""

    root: etree._Element
    encoding: str  # the body's, for the documents feedparser reads again
    nested: set[etree._Element] = field(default_factory=set)  # items in extensions


@dataclass(frozen=True, slots=True)
class _Captured:
    tags: tuple[Tag, ...] = ()
    cut: bool = False
    # the scope's extension elements that hold feed vocabulary (RSS, Atom, itunes…)
    mislead: tuple[etree._Element, ...] = ()


def _extension(kind: str) -> bool:
    """Whether elements of this kind (see _split) are extensions, kept as Tag records."""
    return kind not in MAPPED_KINDS


def _capture(scope: etree._Element, context: _Context | None = None) -> _Captured:
    """The scope's extension children with their whole subtrees, as flattened Tag records.

    Document order; ``parent`` indexes the same tuple, ``position`` counts among the parent's
    children. One pass over each captured subtree (no recursion: depth is no cost); after
    MAX_TAGS records the pass goes on only to find feed vocabulary and nested items.
    """
    tags: list[Tag] = []
    mislead: list[etree._Element] = []
    cut = False
    top = 0
    for child in scope:
        kind, local = _split(child.tag)
        if not local or not _extension(kind):
            continue
        misleads = False
        counts: dict[int, int] = {}  # captured children so far, by parent index
        stack: list[tuple[etree._Element, int | None]] = [(child, None)]
        while stack:
            el, parent = stack.pop()
            if el is not child:
                el_kind, el_local = _split(el.tag)
                if not _extension(el_kind):
                    misleads = True
                    if (
                        context is not None
                        and el_local in ITEM_NAMES
                        and el_kind in ITEM_NAMESPACES
                    ):
                        context.nested.add(el)
            if len(tags) >= MAX_TAGS:
                cut = True
                stack.extend((c, None) for c in reversed(el) if isinstance(c.tag, str))
                continue
            if parent is None:
                position, top = top, top + 1
            else:
                position = counts.get(parent, 0)
                counts[parent] = position + 1
            index = len(tags)
            tags.append(_tag(el, parent, position))
            stack.extend((c, index) for c in reversed(el) if isinstance(c.tag, str))
        if misleads:
            mislead.append(child)
    return _Captured(tuple(tags), cut, tuple(mislead))


@functools.lru_cache(maxsize=1024)
def _qualified(tag: str) -> tuple[str, str]:
    """(namespace URI as written, local name); an undeclared prefix (left in the tag by
    lxml's recovery) is the namespace, as ``namespaces.label`` expects."""
    if tag.startswith("{"):
        uri, _, local = tag[1:].partition("}")
        return uri, local
    prefix, colon, local = tag.partition(":")
    return (prefix, local) if colon else ("", tag)


def _tag(el: etree._Element, parent: int | None, position: int) -> Tag:
    namespace, name = _qualified(el.tag)
    return Tag(
        namespace=namespace,
        name=name,
        attributes=tuple(el.attrib.items()),
        text=_own_text(el),
        parent=parent,
        position=position,
    )


def _own_text(el: etree._Element) -> str | None:
    """The element's text and its children's tails (not their text), stripped; None if empty.

    An entity reference left unresolved counts as written (``&name;``).
    """
    if not len(el):
        text = el.text
    else:
        pieces = [el.text or ""]
        for child in el:
            if not isinstance(child.tag, str):
                pieces.append(child.text or "")
            pieces.append(child.tail or "")
        text = "".join(pieces)
    if text is None:
        return None
    return text.strip() or None


def _channel_document(
    channel: etree._Element, mislead: tuple[etree._Element, ...], context: _Context | None
) -> bytes | None:
    """The feed without items and without ``mislead``: what feedparser should read the
    channel from. None when nothing misleads (feedparser's first reading stands)."""
    if not mislead or context is None:
        return None
    drop = set(mislead)
    root = context.root
    try:
        top = _shallow(root)
        if channel is root:
            _append_kept(top, root, drop)
        else:
            for child in root:
                if child is channel:
                    _append_kept(_sub(top, channel), channel, drop)
                elif not _is_item(child):
                    top.append(copy.deepcopy(child))
        return _serialize(top, context.encoding)
    except (etree.LxmlError, ValueError, TypeError):  # odd recovered names: keep the first reading
        return None


def _item_document(
    item: etree._Element, mislead: tuple[etree._Element, ...], context: _Context | None
) -> bytes | None:
    """The item alone inside its ancestors' start tags, without ``mislead``; None when
    nothing misleads."""
    if not mislead or context is None:
        return None
    try:
        ancestors = list(item.iterancestors())
        ancestors.reverse()
        if not ancestors:
            return None
        top = parent = _shallow(ancestors[0])
        for ancestor in ancestors[1:]:
            parent = _sub(parent, ancestor)
        _append_kept(_sub(parent, item), item, set(mislead))
        return _serialize(top, context.encoding)
    except (etree.LxmlError, ValueError, TypeError):
        return None


def _shallow(el: etree._Element) -> etree._Element:
    """A copy of the element's start tag: name, attributes and namespaces; no content."""
    return etree.Element(el.tag, dict(el.attrib), nsmap=el.nsmap)


def _sub(parent: etree._Element, el: etree._Element) -> etree._Element:
    copied = _shallow(el)
    parent.append(copied)
    return copied


def _append_kept(target: etree._Element, source: etree._Element, drop: set[etree._Element]) -> None:
    """Deep copies of ``source``'s children but items and ``drop``, after its text."""
    target.text = source.text
    for child in source:
        if child not in drop and not _is_item(child):
            target.append(copy.deepcopy(child))


def _is_item(el: etree._Element) -> bool:
    kind, local = _split(el.tag)
    return local in ITEM_NAMES and kind in ITEM_NAMESPACES


def _serialize(root: etree._Element, encoding: str) -> bytes:
    """The document in the body's encoding (said in its declaration), else in UTF-8."""
    try:
        return bytes(etree.tostring(root, encoding=encoding, xml_declaration=True))
    except (LookupError, ValueError, etree.LxmlError):
        return bytes(etree.tostring(root, encoding="utf-8", xml_declaration=True))


def well_formed(skeleton: bytes) -> bool:
    """Does lxml's strict, hardened parser read ``skeleton`` as one well-formed element?"""
    parser = hardened_parser(recover=False, strip=False)
    try:
        root = etree.fromstring(skeleton.lstrip(), parser)
    except (etree.LxmlError, ValueError, LookupError):
        return False
    return root is not None and isinstance(root.tag, str)
