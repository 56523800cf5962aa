"""Show notes and links from HTML: the only module that uses Beautiful Soup. Pure functions.

* :func:`extract_links` — every http(s) ``<a href>`` of a fragment, absolute, in document order.
* :func:`html_to_text` — plain text of a fragment, one line per block.
* :func:`extract_page` — the show notes of an episode page (Simplecast-aware, generic fallback).

Only ``extract_page`` raises, and only :class:`~podarchive.errors.ExtractError`. Every walk over
the tree is iterative, so deeply nested pages cannot exhaust the recursion limit.
"""

from __future__ import annotations

import functools
import html as html_lib
import json
import re
from collections.abc import Callable, Iterator
from typing import NamedTuple

from bs4 import BeautifulSoup
from bs4.element import NavigableString, PageElement, PreformattedString, Tag
from bs4.exceptions import ParserRejectedMarkup
from bs4.filter import SoupStrainer

from podarchive.errors import ExtractError
from podarchive.types import Link, PageNotes
from podarchive.urls import domain_of, http_link_parts, is_http_url, join_url

#: Generic notes with fewer characters of text outside links than this are "no notes".
MIN_NOTES_CHARS = 40

#: Media types accepted as HTML; a missing or octet-stream type is sniffed instead.
HTML_MEDIA_TYPES = frozenset({"text/html", "application/xhtml+xml"})
SNIFFED_MEDIA_TYPES = frozenset({"", "application/octet-stream"})

#: Elements whose text is never notes text.
INVISIBLE_TAGS = frozenset({"script", "style", "noscript", "template", "head", "title"})
#: Page furniture the generic extractor removes before it looks for the notes.
BOILERPLATE_TAGS = frozenset(
    {"script", "style", "noscript", "template", "nav", "header", "footer", "aside", "form"}
    | {"iframe", "svg", "button", "select", "textarea", "dialog"}
)
#: ARIA landmarks that are never the notes.
BOILERPLATE_ROLES = frozenset(
    {"navigation", "banner", "contentinfo", "complementary", "search", "menu", "menubar", "dialog"}
)
#: A word of a class or id (split on "-", "_") that marks page furniture.
BOILERPLATE_WORD_RE = re.compile(
    r"\w*nav|navigation|\w*menu|sidebar|comments?|share|sharing|sharedaddy|social|footer"
    r"|cookies?|consent|gdpr|breadcrumbs?|crumbs|related|pagination|pager|prevnext|popup"
    r"|modal|newsletter|subscribe|widgets?|skip"
)
#: Class prefixes that describe a state, not a component ("has-sidebar", "no-comments").
STATE_CLASS_PREFIXES = ("has-", "no-", "with-", "without-")
#: Never removed as boilerplate, whatever their class says.
PROTECTED_TAGS = frozenset({"html", "body", "article", "main"})

#: Elements that start a new line in plain text.
LINE_TAGS = frozenset(
    {"address", "article", "aside", "dd", "details", "div", "dl", "dt", "fieldset"}
    | {"figcaption", "footer", "form", "header", "hgroup", "li", "main", "nav", "ol"}
    | {"section", "summary", "tbody", "tfoot", "thead", "tr", "ul", "caption", "center"}
)
#: Elements set off by a blank line in plain text.
PARAGRAPH_TAGS = frozenset(
    {"p", "h1", "h2", "h3", "h4", "h5", "h6", "blockquote", "pre", "table", "hr", "figure"}
)
#: Elements whose text is a paragraph for the density score (their parent is the candidate).
SCORED_PARAGRAPH_TAGS = PARAGRAPH_TAGS | {"li", "dd", "dt", "td", "th"}
HEADING_TAGS = ("h1", "h2", "h3", "h4", "h5", "h6")
BLOCK_TAGS = LINE_TAGS | PARAGRAPH_TAGS | {"td", "th", "br", "body", "html"}

_CELL, _LINE, _PARAGRAPH = 0, 1, 2  # break markers in a text stream, weakest first
#: The break marker each block element puts before and after its text.
_BREAKS = (
    dict.fromkeys(("td", "th"), _CELL)
    | dict.fromkeys(LINE_TAGS | {"br"}, _LINE)
    | dict.fromkeys(PARAGRAPH_TAGS, _PARAGRAPH)
)
_XML_DECLARATION_RE = re.compile(r"\s*<\?xml[^>]*>")
_FEED_ROOT_RE = re.compile(
    r"\s*(?:<\?[^>]*>\s*|<!--.*?-->\s*|<!DOCTYPE[^>]*>\s*)*<(?:rss|feed|rdf:RDF)[\s>]", re.I | re.S
)
_BASE_TAG_RE = re.compile(r"<base", re.I)
_SURROGATE_RE = re.compile("[\ud800-\udfff]")
_META_CHARSET_RE = re.compile(rb"<meta[^>]+charset\s*=\s*[\"']?\s*([A-Za-z0-9_.:-]+)", re.I)
_NEXT_DATA_ID = "__NEXT_DATA__"
_SIMPLECAST_HOST = "simplecast.com"
_SIMPLECAST_PLAYER = "player.simplecast.com"
_SHOW_NOTES_HEADINGS = frozenset({"show notes", "shownotes", "episode notes"})
_BOMS = (
    (b"\xef\xbb\xbf", "utf-8"),
    (b"\xff\xfe", "utf-16-le"),
    (b"\xfe\xff", "utf-16-be"),
)
#: WHATWG: these labels mean windows-1252 in HTML.
_WINDOWS_1252_ALIASES = frozenset({"iso-8859-1", "iso8859-1", "latin1", "latin-1", "ascii"})
_WINDOWS_1252_ALIASES |= {"us-ascii", "l1"}


# --- public API --------------------------------------------------------------------------


def extract_links(html: str, base_url: str | None) -> tuple[Link, ...]:
    """Every http(s) ``<a href>`` in document order, made absolute.

    Relative hrefs resolve against the fragment's ``<base href>``, else ``base_url``; links that
    end up without an http(s) scheme (``mailto:``, ``javascript:``, relative without a base) and
    in-page ``#…`` links are skipped. Positions count the kept links from 0.
    """
    soup = _parse(html, SoupStrainer(["a", "base"]))
    if soup is None:
        return ()
    return _links_in(soup, _base_of(soup, base_url))


def html_to_text(html: str) -> str:
    """Plain text of an HTML fragment: a line per block, at most one blank line, stripped.

    Script and style are dropped. Input without tags is taken as plain text: its entities are
    decoded and its own line breaks kept.
    """
    if "<" not in html:
        return _normalize_plain_text(_valid(html_lib.unescape(html)))
    soup = _parse(html)
    return "" if soup is None else _text_of(soup)


def notes_text_and_links(html: str, base_url: str | None) -> tuple[str, tuple[Link, ...]]:
    """:func:`html_to_text` and :func:`extract_links` of one fragment, parsed once.

    Feed show notes need both; parsing the HTML twice was most of an ingest's CPU.
    """
    if "<" not in html:
        return _normalize_plain_text(_valid(html_lib.unescape(html))), ()
    soup = _parse(html)
    if soup is None:
        return "", ()
    links = _links_in(soup, _base_of(soup, base_url))
    return _text_of(soup), links


def extract_page(html: bytes | str, url: str, *, content_type: str | None = None) -> PageNotes:
    """The show notes of an episode page fetched from ``url``.

    Raises :class:`ExtractError` with a one-line reason ("not HTML …", "no show notes found").
    """
    return _page_notes(_decode_page(html, content_type), url)


def _page_notes(text: str, url: str) -> PageNotes:
    """:func:`extract_page` of decoded markup: Simplecast JSON alone if it has the notes."""
    if _NEXT_DATA_ID in text and '"episode"' in text:  # worth a scripts-only parse first
        notes = _next_data_notes(text, url)
        if notes is not None:
            return notes
    soup = _parse(text, huge_tree=True)
    if soup is None:
        raise ExtractError("not HTML: the parser rejected the page")
    base = _page_base(soup, text, url)
    simplecast = _on_simplecast(text, url)
    episode = _next_data_episode(soup) if simplecast or _NEXT_DATA_ID in text else None
    if simplecast or episode is not None:
        notes = _simplecast_notes(soup, episode, base)
        if notes is not None:
            return notes
    return _generic_notes(soup, base)


# --- parsing and decoding ----------------------------------------------------------------


FEED_LINK_TYPES = ("application/rss+xml", "application/atom+xml", "application/xml", "text/xml")


def discover_feeds(html: bytes | str, url: str, *, content_type: str | None = None) -> list[str]:
    """Feed URLs a web page announces with ``<link rel="alternate" type="…rss/atom…">``.

    Absolute, in document order, without duplicates. Never raises; a page that is not HTML
    announces nothing.
    """
    try:
        text = _decode_page(html, content_type)
    except ExtractError:
        return []
    soup = _parse(text, SoupStrainer(["base", "link"]))
    if soup is None:
        return []
    base = _base_of(soup, url)
    found: list[str] = []
    for tag in soup.find_all("link"):
        rels = _attr(tag, "rel").lower().split()
        kind = _attr(tag, "type").split(";")[0].strip().lower()
        if "alternate" in rels and kind in FEED_LINK_TYPES:
            absolute = _absolute_href(_attr(tag, "href"), base)
            if absolute and absolute not in found:
                found.append(absolute)
    return found


def _parse(
    markup: str, strainer: SoupStrainer | None = None, *, huge_tree: bool = False
) -> BeautifulSoup | None:
    """``markup`` parsed by lxml, or None if there is nothing to parse."""
    if "<" not in markup:  # also keeps bs4's MarkupResemblesLocatorWarning away
        return None
    if "<?xml" in markup:  # a plain find first: the expression tries a match at every offset
        markup = _XML_DECLARATION_RE.sub("", markup, count=1)  # avoids XMLParsedAsHTMLWarning
    try:
        data = markup.encode("utf-8")  # bytes parse faster
    except UnicodeEncodeError:  # lone surrogates
        data = _valid(markup).encode("utf-8")
    try:
        return BeautifulSoup(
            data, "lxml", from_encoding="utf-8", parse_only=strainer, huge_tree=huge_tree
        )
    except ParserRejectedMarkup:
        return None


def _decode_page(body: bytes | str, content_type: str | None) -> str:
    media_type, charset = _parse_content_type(content_type)
    if media_type not in HTML_MEDIA_TYPES | SNIFFED_MEDIA_TYPES:
        raise ExtractError(f"not HTML: {media_type}")
    text = _valid(body if isinstance(body, str) else _decode_bytes(body, charset))
    text = text.removeprefix("\ufeff")
    if "<" not in text:
        raise ExtractError("not HTML: no markup")
    if _FEED_ROOT_RE.match(text[:4096]):
        raise ExtractError("not HTML: looks like a feed")
    return text


def _valid(text: str) -> str:
    """``text`` with each lone surrogate (which SQLite refuses to store) as U+FFFD."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return _SURROGATE_RE.sub("\ufffd", text)
    return text


def _parse_content_type(content_type: str | None) -> tuple[str, str | None]:
    """``text/html; charset="UTF-8"`` → (``text/html``, ``UTF-8``)."""
    media_type, *params = (content_type or "").split(";")
    charset = None
    for param in params:
        name, _, value = param.partition("=")
        if name.strip().lower() == "charset":
            charset = value.strip().strip("\"'") or None
    return media_type.strip().lower(), charset


def _decode_bytes(body: bytes, charset: str | None) -> str:
    """Decode by BOM, then the header charset, then ``<meta charset>``, else UTF-8."""
    for bom, encoding in _BOMS:
        if body.startswith(bom):
            return body[len(bom) :].decode(encoding, "replace")
    if charset is None:
        match = _META_CHARSET_RE.search(body[:4096])
        charset = match[1].decode("ascii") if match else None
    try:
        return body.decode(_usable_encoding(charset), "replace")
    except LookupError:  # an unknown charset, or a codec that is not a text encoding
        return body.decode("utf-8", "replace")


def _usable_encoding(charset: str | None) -> str:
    """The codec for a declared charset, following the WHATWG aliases (UTF-8 if none)."""
    if not charset:
        return "utf-8"
    label = charset.strip().lower()
    if label in _WINDOWS_1252_ALIASES:
        return "cp1252"
    if label.startswith("utf-16"):  # a readable meta tag cannot truly mean UTF-16
        return "utf-8"
    return label


def _page_base(soup: BeautifulSoup, text: str, url: str) -> str | None:
    """:func:`_base_of` a page, without walking the tree when its markup has no ``<base``."""
    if "<?xml" not in text and _BASE_TAG_RE.search(text) is None:  # _parse cuts "<?xml …>"
        return url
    return _base_of(soup, url)


def _base_of(soup: BeautifulSoup, base_url: str | None) -> str | None:
    """The document's ``<base href>`` resolved against ``base_url``, else ``base_url``."""
    base = next((tag for tag in _tags(soup, "base") if tag.has_attr("href")), None)
    href = _attr(base, "href").strip() if base is not None else ""
    if not href:
        return base_url
    return _join(base_url, href) or base_url


# --- links -------------------------------------------------------------------------------


def _links_in(root: Tag, base_url: str | None) -> tuple[Link, ...]:
    links: list[Link] = []
    for anchor in _tags(root, "a"):
        absolute = _resolved_href(_attr(anchor, "href"), base_url)
        if absolute is None or (parts := http_link_parts(absolute)) is None:
            continue
        normalized, domain = parts
        text = _collapse(anchor.get_text())
        links.append(Link(len(links), absolute, normalized, domain, text))
    return tuple(links)


def _absolute_href(href: str, base_url: str | None) -> str | None:
    """The absolute http(s) URL an href points to, or None for links that are skipped."""
    absolute = _resolved_href(href, base_url)
    return absolute if absolute is not None and is_http_url(absolute) else None


def _resolved_href(href: str, base_url: str | None) -> str | None:
    """``href`` resolved against ``base_url`` (any scheme); None for empty and ``#…`` hrefs."""
    href = href.strip()
    if not href or href.startswith("#"):
        return None
    return _join(base_url, href)


def _join(base_url: str | None, href: str) -> str | None:
    try:
        return join_url(base_url, href) if base_url else href
    except ValueError:  # e.g. a malformed IPv6 host
        return None


def _attr(tag: Tag, name: str) -> str:
    value = tag.get(name)
    if value is None:
        return ""
    return value if isinstance(value, str) else " ".join(value)


# --- text --------------------------------------------------------------------------------


def _text_of(root: Tag) -> str:
    """Plain text of ``root``: blocks become lines, paragraphs blank-line separated."""
    return _assemble(_text_pieces(root))


def _text_pieces(root: Tag) -> list[str | int]:
    """Text (str) and break markers (int: ``_CELL``, ``_LINE``, ``_PARAGRAPH``) in order.

    A block's marker goes out on entry and is pushed to come out again after its children.
    """
    pieces: list[str | int] = []
    stack: list[PageElement | int] = [root]
    while stack:
        node = stack.pop()
        if type(node) is NavigableString:  # the usual case first: plain text
            pieces.append(node)
        elif isinstance(node, Tag):
            name = node.name
            if name in INVISIBLE_TAGS and node is not root:
                continue
            marker = _BREAKS.get(name)
            if marker is not None:
                pieces.append(marker)
                stack.append(marker)
            if name == "pre":
                pieces += _pre_lines(node)
            else:
                stack += reversed(node.contents)
        elif isinstance(node, int | NavigableString) and not isinstance(node, PreformattedString):
            pieces.append(node)  # a marker, or text of a special kind (script, ruby, …)
    return pieces


def _pre_lines(pre: Tag) -> Iterator[str | int]:
    for line in pre.get_text().splitlines():
        yield line
        yield _LINE


def _assemble(pieces: list[str | int]) -> str:
    """Join text and markers: whitespace collapsed per line, at most one blank line."""
    lines: list[str] = []
    current: list[str] = []
    pending = _CELL  # the strongest break seen since the last line

    for piece in [*pieces, _LINE]:
        if isinstance(piece, str):
            current.append(piece)
        elif piece == _CELL:
            current.append(" ")
        else:
            line = _collapse("".join(current))
            current.clear()
            if line:
                if pending == _PARAGRAPH and lines:
                    lines.append("")
                lines.append(line)
                pending = _CELL
            pending = max(pending, piece)
    return "\n".join(lines)


def _normalize_plain_text(text: str) -> str:
    """Whitespace collapsed within lines, runs of blank lines squeezed to one, stripped."""
    pieces: list[str | int] = []
    for line in text.splitlines():
        pieces.append(line if line.strip() else _PARAGRAPH)
        pieces.append(_LINE)
    return _assemble(pieces)


def _collapse(text: str) -> str:
    return " ".join(text.split())


# --- markup ------------------------------------------------------------------------------


def _inner_html(root: Tag) -> str:
    """``root.decode_contents()``, built without bs4's per-node formatting machinery.

    Follows bs4's walk and its "minimal" formatter: attributes sorted, ``&<>`` escaped, quotes
    chosen as bs4 does, void elements as ``<br/>``, script and style text as is. Other strings
    (comments, CDATA, …) format themselves; a tag bs4 treats specially (hidden, with a namespace
    prefix or an attribute value that is not a plain string) hands the whole job back to bs4.
    """
    formatter = root.formatter_for_name("minimal")
    raw_text = formatter.cdata_containing_tags  # script, style: their text goes out as is
    pieces: list[str] = []
    open_tags: list[Tag] = []
    for node in root.descendants:
        parent = node.parent
        while open_tags and parent is not open_tags[-1] and _closes(open_tags[-1], parent):
            pieces.append(f"</{open_tags.pop().name}>")
        if type(node) is NavigableString and parent is not None and parent.name not in raw_text:
            pieces.append(_escaped(node))
        elif isinstance(node, NavigableString):
            pieces.append(node.output_ready(formatter))
        elif not isinstance(node, Tag) or (start := _start_tag(node)) is None:
            return root.decode_contents()
        else:
            pieces.append(start)
            if not node.is_empty_element:
                open_tags.append(node)
    pieces += (f"</{tag.name}>" for tag in reversed(open_tags))
    return "".join(pieces)


def _closes(open_tag: Tag, parent: Tag | None) -> bool:
    """Whether ``open_tag`` ends before a node of ``parent``: bs4's ``parent != open_tag``."""
    return parent is not open_tag and (
        parent is None or parent.name != open_tag.name or parent != open_tag
    )


def _start_tag(tag: Tag) -> str | None:
    """The start tag as bs4's minimal formatter writes it; None if bs4 must write it."""
    if tag.hidden or tag.prefix:
        return None
    slash = "/" if tag.is_empty_element else ""
    if not tag.attrs:
        return f"<{tag.name}{slash}>"
    attributes: list[str] = []
    for key, value in sorted(tag.attrs.items()):
        if isinstance(value, list):
            value = " ".join(value)
        elif type(value) is not str:
            return None
        if type(key) is not str:
            return None
        attributes.append(f" {key}={_quoted(_escaped(value))}")
    return f"<{tag.name}{''.join(attributes)}{slash}>"


def _escaped(text: str) -> str:
    """``&``, ``<`` and ``>`` as entities, like bs4's ``substitute_xml``."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _quoted(value: str) -> str:
    """An attribute value in quotes, like bs4's ``quoted_attribute_value``."""
    if '"' not in value:
        return f'"{value}"'
    if "'" not in value:
        return f"'{value}'"
    return '"' + value.replace('"', "&quot;") + '"'


# --- Simplecast --------------------------------------------------------------------------


def _on_simplecast(text: str, url: str) -> bool:
    """Whether the page is on simplecast.com or embeds its player (else only its JSON tells)."""
    host = domain_of(url)
    on_simplecast = host == _SIMPLECAST_HOST or host.endswith("." + _SIMPLECAST_HOST)
    return on_simplecast or _SIMPLECAST_PLAYER in text


def _next_data_notes(text: str, url: str) -> PageNotes | None:
    """The notes in a page's ``__NEXT_DATA__`` JSON, parsing only its scripts and ``<base>``.

    lxml reads the whole page either way, so these elements come out as in a full parse; None
    sends the page down the full path (no JSON notes, or notes without text).
    """
    soup = _parse(text, SoupStrainer(["base", "script"]), huge_tree=True)
    episode = None if soup is None else _next_data_episode(soup)
    if soup is None or episode is None:
        return None
    notes_html = _first_text_field(episode, "long_description", "description")
    if notes_html is None:
        return None
    return _notes_from_fragment(notes_html, _base_of(soup, url))


def _simplecast_notes(
    soup: BeautifulSoup, episode: dict[str, object] | None, base_url: str | None
) -> PageNotes | None:
    """Notes from the ``__NEXT_DATA__`` ``episode``, else the "Show notes" section, else None."""
    if episode is not None:
        notes_html = _first_text_field(episode, "long_description", "description")
        if notes_html is not None:
            return _notes_from_fragment(notes_html, base_url)
    section = _show_notes_section(soup)
    if section is None:
        return None
    _remove_tags(section, INVISIBLE_TAGS)
    text = _text_of(section)
    if not text:
        return None
    html = _inner_html(section).strip()
    return PageNotes(html, text, _links_in(section, base_url), "simplecast")


def _next_data_episode(soup: BeautifulSoup) -> dict[str, object] | None:
    """``props.pageProps.episode`` of the Next.js data script, if it is an object."""
    script = next((tag for tag in _tags(soup, "script") if tag.get("id") == _NEXT_DATA_ID), None)
    if script is None:
        return None
    try:
        data = json.loads(script.get_text())
    except (ValueError, RecursionError):  # malformed or absurdly nested JSON
        return None
    for key in ("props", "pageProps", "episode"):
        if not isinstance(data, dict):
            return None
        data = data.get(key)
    return data if isinstance(data, dict) else None


def _first_text_field(record: dict[str, object], *keys: str) -> str | None:
    for key in keys:
        value = record.get(key)
        if isinstance(value, str) and value.strip():
            return _valid(value.strip())  # JSON's "\ud800" is a lone surrogate
    return None


def _notes_from_fragment(notes_html: str, base_url: str | None) -> PageNotes | None:
    text = html_to_text(notes_html)
    if not text:
        return None
    return PageNotes(notes_html, text, extract_links(notes_html, base_url), "simplecast")


def _show_notes_section(soup: BeautifulSoup) -> Tag | None:
    """The element after a "Show notes" heading, else ``.episode-description``."""
    for heading in _tags(soup, *HEADING_TAGS):
        if _collapse(heading.get_text()).rstrip(":").casefold() in _SHOW_NOTES_HEADINGS:
            following = heading.find_next_sibling()
            if isinstance(following, Tag):
                return following
    return next((tag for tag in _tags(soup) if "episode-description" in _classes(tag)), None)


# --- generic -----------------------------------------------------------------------------


def _generic_notes(soup: BeautifulSoup, base_url: str | None) -> PageNotes:
    body = soup.body
    if body is None:
        body = soup
    _remove_boilerplate(body)
    stats = _text_stats(body)
    block = _notes_block(body, stats)
    if block is None or stats.outside[id(block)] < MIN_NOTES_CHARS:
        raise ExtractError("no show notes found")
    block = _narrowed(block, stats)
    html = _inner_html(block).strip()
    return PageNotes(html, _text_of(block), _links_in(block, base_url), "generic")


def _remove_boilerplate(body: Tag) -> None:
    """Extract page furniture: boilerplate tags, ARIA landmarks and class/id-marked elements.

    An element that contains an ``<article>`` or ``<main>`` is never removed for its class or
    role, and a ``<form>`` holding most of the page (ASP.NET style) is kept.
    """
    protected = functools.cache(lambda: _landmark_ancestors(body))  # only if a tag asks
    doomed: list[Tag] = []
    stack = _child_tags(body)[::-1]
    while stack:
        tag = stack.pop()
        if _is_boilerplate(tag, protected):
            doomed.append(tag)
        else:
            stack += [child for child in reversed(tag.contents) if isinstance(child, Tag)]
    forms = [tag for tag in doomed if tag.name == "form"]
    if forms:
        half_page = len(_collapse(body.get_text())) / 2
        doomed = [tag for tag in doomed if tag not in forms or len(tag.get_text()) <= half_page]
    for tag in doomed:
        tag.extract()


def _remove_tags(root: Tag, names: frozenset[str]) -> None:
    for tag in list(_tags(root, *names)):
        tag.extract()


def _is_boilerplate(tag: Tag, protected: Callable[[], set[int]]) -> bool:
    """Whether to remove ``tag``; ``protected()``: the ids of landmark ancestors."""
    if tag.name in BOILERPLATE_TAGS:
        return tag.name != "form" or id(tag) not in protected()
    if tag.name in PROTECTED_TAGS or not _is_marked_boilerplate(tag):
        return False
    return id(tag) not in protected()


def _is_marked_boilerplate(tag: Tag) -> bool:
    """Whether the role, a class or the id of ``tag`` names page furniture."""
    attrs = tag.attrs
    if "role" not in attrs and "class" not in attrs and "id" not in attrs:
        return False
    return _attr(tag, "role").strip().lower() in BOILERPLATE_ROLES or any(
        BOILERPLATE_WORD_RE.fullmatch(word) for word in _class_and_id_words(tag)
    )


def _landmark_ancestors(root: Tag) -> set[int]:
    """The ids of every element that has an ``<article>`` or ``<main>`` inside it."""
    ancestors: set[int] = set()
    for landmark in _tags(root, "article", "main"):
        for parent in landmark.parents:
            if id(parent) in ancestors:
                break
            ancestors.add(id(parent))
    return ancestors


def _class_and_id_words(tag: Tag) -> Iterator[str]:
    for token in (_attr(tag, "class") + " " + _attr(tag, "id")).lower().split():
        if not token.startswith(STATE_CLASS_PREFIXES):
            yield from filter(None, re.split(r"[-_]+", token))


class _TextStats(NamedTuple):
    """Characters of text per visible element (by ``id``): all, and outside links."""

    tags: list[Tag]  # the visible elements: the root, then those under it in document order
    total: dict[int, int]
    outside: dict[int, int]


def _text_stats(root: Tag) -> _TextStats:
    """The :class:`_TextStats` of ``root`` and the visible elements under it.

    One pass: a pre-order walk, then sums bubbled up in reverse order (children first).
    """
    tags: list[Tag] = []
    own: dict[int, int] = {}
    stack = [root]
    while stack:
        tag = stack.pop()
        tags.append(tag)
        length = 0
        for child in reversed(tag.contents):  # pushed last to first: popped in document order
            if isinstance(child, Tag):
                if child.name not in INVISIBLE_TAGS:
                    stack.append(child)
            elif isinstance(child, NavigableString) and not isinstance(child, PreformattedString):
                length += len(" ".join(child.split()))
        own[id(tag)] = length
    total = own.copy()
    outside = own.copy()
    for tag in reversed(tags):
        key = id(tag)
        if tag.name == "a":
            outside[key] = 0
        parent = tag.parent
        if tag is not root and parent is not None:
            total[id(parent)] += total[key]
            outside[id(parent)] += outside[key]
    return _TextStats(tags, total, outside)


def _notes_block(body: Tag, stats: _TextStats) -> Tag | None:
    """``<article>`` with most text, else ``<main>``, else ``[role=main]``, else the densest."""
    for tags in _landmark_groups(stats.tags[1:]):
        if tags:
            best = max(tags, key=lambda tag: stats.total[id(tag)])
            if stats.outside[id(best)] >= MIN_NOTES_CHARS:
                return best
    return _densest_block(body)


def _landmark_groups(tags: list[Tag]) -> Iterator[list[Tag]]:
    """The ``<article>`` elements, then the ``<main>`` ones, then those with ``role=main``."""
    yield [tag for tag in tags if tag.name == "article"]
    yield [tag for tag in tags if tag.name == "main"]
    yield [tag for tag in tags if tag.get("role") == "main"]


def _densest_block(body: Tag) -> Tag | None:
    """The container whose paragraphs hold the most text outside links (readability-style).

    A paragraph's text scores for its parent and half for its grandparent; text sitting
    directly in a container scores for the container and half for its parent.
    """
    scores: dict[int, float] = {}
    tags: dict[int, Tag] = {}
    for block, length in _own_text_lengths(body):
        scored: Tag | None = block
        if block.name in SCORED_PARAGRAPH_TAGS and block is not body:
            scored = block.parent
        for weight, tag in ((1.0, scored), (0.5, scored.parent if scored else None)):
            if tag is not None:
                tags[id(tag)] = tag
                scores[id(tag)] = scores.get(id(tag), 0.0) + weight * length
    if not scores:
        return None
    best = max(scores, key=lambda key: scores[key])  # first of equals: dicts keep order
    return tags[best]


def _own_text_lengths(body: Tag) -> list[tuple[Tag, int]]:
    """Block elements with the characters of text outside links whose nearest block they are."""
    lengths: dict[int, tuple[Tag, int]] = {}
    stack: list[tuple[PageElement, Tag, bool]] = [(body, body, False)]
    while stack:
        node, block, in_link = stack.pop()
        if isinstance(node, Tag):
            if node.name not in INVISIBLE_TAGS:
                inner = node if node.name in BLOCK_TAGS else block
                linked = in_link or node.name == "a"
                stack.extend((child, inner, linked) for child in reversed(node.contents))
        elif not in_link and isinstance(node, NavigableString):
            length = 0 if isinstance(node, PreformattedString) else len(_collapse(node))
            if length:
                lengths[id(block)] = (block, lengths.get(id(block), (block, 0))[1] + length)
    return list(lengths.values())


def _narrowed(block: Tag, stats: _TextStats) -> Tag:
    """Step down into a single child container while it holds >= 90 % of the block's text."""
    total = stats.total
    while True:
        containers = [
            child
            for child in _child_tags(block)
            if child.name not in SCORED_PARAGRAPH_TAGS and child.name != "a" and id(child) in total
        ]
        if not containers:
            return block
        biggest = max(containers, key=lambda child: total[id(child)])
        if total[id(biggest)] < 0.9 * total[id(block)]:
            return block
        block = biggest


# --- tree walking ------------------------------------------------------------------------


def _tags(root: Tag, *names: str) -> Iterator[Tag]:
    """The elements under ``root`` in document order (only ``names``, if given); iterative."""
    wanted = frozenset(names)
    for node in root.descendants:  # follows next_element: no recursion, no per-tag lists
        if isinstance(node, Tag) and (not wanted or node.name in wanted):
            yield node


def _child_tags(tag: Tag) -> list[Tag]:
    return [child for child in tag.contents if isinstance(child, Tag)]


def _classes(tag: Tag) -> list[str]:
    return _attr(tag, "class").split()


# --- site discovery (issue 6) ------------------------------------------------------------

_SITEMAP_ENTRY_RE = re.compile(
    r"<(?:\w+:)?(url|sitemap)\b[^>]*>(.*?)</(?:\w+:)?\1\s*>", re.I | re.S
)
_SITEMAP_LOC_RE = re.compile(r"<(?:\w+:)?loc\b[^>]*>\s*(.*?)\s*</(?:\w+:)?loc\s*>", re.I | re.S)
_SITEMAP_LASTMOD_RE = re.compile(
    r"<(?:\w+:)?lastmod\b[^>]*>\s*(.*?)\s*</(?:\w+:)?lastmod\s*>", re.I | re.S
)
_CDATA_RE = re.compile(r"<!\[CDATA\[(.*?)\]\]>", re.S)


def page_title(html: bytes | str, *, content_type: str | None = None) -> str | None:
    """The title of a web page: its first ``<h1>``, else ``og:title``, else ``<title>``.

    Never raises; None when the page has none (or is not HTML).
    """
    try:
        text = _decode_page(html, content_type)
    except ExtractError:
        return None
    soup = _parse(text, SoupStrainer(["h1", "meta", "title"]))
    if soup is None:
        return None
    tags = list(_tags(soup, "h1", "meta", "title"))
    for name in ("h1", "meta", "title"):
        for tag in tags:
            if tag.name != name or (
                name == "meta" and _attr(tag, "property").lower() != "og:title"
            ):
                continue
            value = _collapse(_attr(tag, "content") if name == "meta" else tag.get_text())
            if value:
                return value
    return None


def page_links(
    html: bytes | str, url: str, *, content_type: str | None = None
) -> list[tuple[str, str]]:
    """``(rel, absolute URL)`` of every http(s) ``<a href>`` and ``<link href>`` of a page.

    ``rel`` is lower-cased and space-separated (``""`` when absent). Never raises.
    """
    try:
        text = _decode_page(html, content_type)
    except ExtractError:
        return []
    soup = _parse(text, SoupStrainer(["a", "link", "base"]))
    if soup is None:
        return []
    base = _base_of(soup, url)
    found: list[tuple[str, str]] = []
    for tag in _tags(soup, "a", "link"):
        absolute = _absolute_href(_attr(tag, "href"), base)
        if absolute is not None:
            found.append((_attr(tag, "rel").lower(), absolute))
    return found


def sitemap_entries(body: bytes | str) -> tuple[list[tuple[str, str | None]], list[str]]:
    """A sitemap's page entries ``(url, lastmod)`` and the child sitemaps of a sitemap index.

    Read with regular expressions, not an XML parser: a sitemap is a flat list of ``<loc>``
    elements, and this way no entity or DTD is ever expanded. Only http(s) URLs are kept.
    """
    text = body.decode("utf-8", "replace") if isinstance(body, bytes) else body
    pages: list[tuple[str, str | None]] = []
    children: list[str] = []
    for kind, inner in _SITEMAP_ENTRY_RE.findall(text):
        loc = _SITEMAP_LOC_RE.search(inner)
        if loc is None:
            continue
        url = html_lib.unescape(_CDATA_RE.sub(r"\1", loc[1])).strip()
        if not is_http_url(url):
            continue
        if kind.lower() == "sitemap":
            children.append(url)
        else:
            lastmod = _SITEMAP_LASTMOD_RE.search(inner)
            pages.append((url, lastmod[1].strip() if lastmod else None))
    return pages, children
