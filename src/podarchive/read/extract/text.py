"""Plain text of HTML: :func:`html_to_text`, and :func:`notes_text_and_links` for feed notes.

Blocks become lines and paragraphs are set off by one blank line; the walk is iterative.
"""

from __future__ import annotations

import functools
import html as html_lib
from collections.abc import Iterator

from bs4.element import NavigableString, PageElement, PreformattedString, Tag

from podarchive.core.types import Link
from podarchive.read.extract.decode import valid
from podarchive.read.extract.links import (
    Anchor,
    anchors_of,
    base_href_of,
    has_base_tag,
    links_of,
    resolved_base,
)
from podarchive.read.extract.soup import collapse, parse, tags

#: Elements whose text is never notes text.
INVISIBLE_TAGS = frozenset({"script", "style", "noscript", "template", "head", "title"})
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

_CELL, _LINE, _PARAGRAPH = 0, 1, 2  # break markers in a text stream, weakest first
#: The break marker each block element puts before and after its text.
_BREAKS = (
    dict.fromkeys(("td", "th"), _CELL)
    | dict.fromkeys(LINE_TAGS | {"br"}, _LINE)
    | dict.fromkeys(PARAGRAPH_TAGS, _PARAGRAPH)
)


def html_to_text(html: str) -> str:
    """Plain text of an HTML fragment: a line per block, at most one blank line, stripped.

    Script and style are dropped. Input without tags is taken as plain text: its entities are
    decoded and its own line breaks kept.
    """
    if "<" not in html:
        return _normalize_plain_text(valid(html_lib.unescape(html)))
    soup = parse(html)
    return "" if soup is None else text_of(soup)


def notes_text_and_links(html: str, base_url: str | None) -> tuple[str, tuple[Link, ...]]:
    """:func:`html_to_text` and :func:`.extract_links` of one fragment, parsed once.

    Feed show notes need both; parsing the HTML twice was most of an ingest's CPU. One walk
    of the tree gives the text and the anchors; the anchors' hrefs and texts are remembered
    per fragment (:func:`_derived`, a bounded cache: feeds repeat notes across episodes), so
    only the URL work is done again for another base URL.
    """
    if "<" not in html:
        return _normalize_plain_text(valid(html_lib.unescape(html))), ()
    derived = _derived(html)
    if derived is None:
        return "", ()
    text, anchors, base_href = derived
    base = base_url if base_href is None else resolved_base(base_href, base_url)
    return text, links_of(anchors, base)


#: Fragments whose derivation :func:`_derived` keeps (~15 KB each with the key: ~4 MB).
DERIVED_CACHE_SIZE = 256


@functools.lru_cache(maxsize=DERIVED_CACHE_SIZE)
def _derived(html: str) -> tuple[str, tuple[Anchor, ...], str | None] | None:
    """The text, the anchors and the ``<base href>`` of a fragment; None if nothing parses.

    Everything here depends on the markup alone (never on a base URL), so it is shared by
    every episode whose notes are the same. The values are immutable.
    """
    soup = parse(html, lean=True)
    if soup is None:
        return None
    found: list[Tag] = []
    text = _assemble(_text_pieces(soup, found))
    base_href = base_href_of(soup) if has_base_tag(html) else None
    return text, anchors_of(found), base_href


def forget_derived() -> None:
    """Empty the cache of :func:`_derived` (what a worker keeps between jobs, #30)."""
    _derived.cache_clear()


def text_of(root: Tag) -> str:
    """Plain text of ``root``: blocks become lines, paragraphs blank-line separated."""
    return _assemble(_text_pieces(root))


def _text_pieces(root: Tag, anchors: list[Tag] | None = None) -> list[str | int]:
    """Text (str) and break markers (int: ``_CELL``, ``_LINE``, ``_PARAGRAPH``) in order.

    A block's marker goes out on entry and is pushed to come out again after its children.
    With ``anchors``, every ``<a>`` under ``root`` is appended to it in document order (those
    inside the invisible and ``<pre>`` elements the text leaves out, too): the tags
    :func:`.links_in` would walk the tree again for.
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
                if anchors is not None:
                    anchors += tags(node, "a")
                continue
            if name == "a" and anchors is not None and node is not root:
                anchors.append(node)
            marker = _BREAKS.get(name)
            if marker is not None:
                pieces.append(marker)
                stack.append(marker)
            if name == "pre":
                pieces += _pre_lines(node)
                if anchors is not None:
                    anchors += tags(node, "a")
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
            line = collapse("".join(current))
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
