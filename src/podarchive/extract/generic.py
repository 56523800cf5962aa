"""The generic extractor: the notes are the page's main block once its furniture is gone.

The block is the ``<article>`` with most text, else ``<main>``, else ``[role=main]``, else the
densest container (readability-style), narrowed to a single child that holds nearly all its
text. It applies to every page, so it comes last.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import NamedTuple

from bs4.element import NavigableString, PageElement, PreformattedString, Tag

from podarchive.extract.boilerplate import remove_boilerplate
from podarchive.extract.links import links_in
from podarchive.extract.markup import inner_html
from podarchive.extract.page import Page
from podarchive.extract.soup import child_tags, collapse
from podarchive.extract.text import INVISIBLE_TAGS, LINE_TAGS, PARAGRAPH_TAGS, text_of
from podarchive.types import PageNotes

NAME = "generic"
#: Generic notes with fewer characters of text outside links than this are "no notes".
MIN_NOTES_CHARS = 40
#: Elements whose text is a paragraph for the density score (their parent is the candidate).
SCORED_PARAGRAPH_TAGS = PARAGRAPH_TAGS | {"li", "dd", "dt", "td", "th"}
#: Elements that hold the text written directly in them for the density score.
BLOCK_TAGS = LINE_TAGS | PARAGRAPH_TAGS | {"td", "th", "br", "body", "html"}


def applies(text: str, url: str) -> bool:
    """Always: this is the fallback."""
    return True


def notes(page: Page) -> PageNotes | None:
    """The main block's notes, or None if it has under :data:`MIN_NOTES_CHARS` of own text."""
    body = page.soup.body
    if body is None:
        body = page.soup
    remove_boilerplate(body)
    stats = _text_stats(body)
    block = _notes_block(body, stats)
    if block is None or stats.outside[id(block)] < MIN_NOTES_CHARS:
        return None
    block = _narrowed(block, stats)
    html = inner_html(block).strip()
    return PageNotes(html, text_of(block), links_in(block, page.base_url), NAME)


class _TextStats(NamedTuple):
    """Characters of text per visible element (by ``id``): all, and outside links."""

    tags: list[Tag]  # the visible elements: the root, then those under it in document order
    total: dict[int, int]
    outside: dict[int, int]


def _text_stats(root: Tag) -> _TextStats:
    """The :class:`_TextStats` of ``root`` and the visible elements under it.

    One walk for each element's own text, then sums bubbled up in reverse order (children first).
    """
    tags, own = _own_text(root)
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


def _own_text(root: Tag) -> tuple[list[Tag], dict[int, int]]:
    """The visible elements (``root`` first, document order), and the text directly in each."""
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
    return tags, own


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
            length = 0 if isinstance(node, PreformattedString) else len(collapse(node))
            if length:
                lengths[id(block)] = (block, lengths.get(id(block), (block, 0))[1] + length)
    return list(lengths.values())


def _narrowed(block: Tag, stats: _TextStats) -> Tag:
    """Step down into a single child container while it holds >= 90 % of the block's text."""
    total = stats.total
    while True:
        containers = [
            child
            for child in child_tags(block)
            if child.name not in SCORED_PARAGRAPH_TAGS and child.name != "a" and id(child) in total
        ]
        if not containers:
            return block
        biggest = max(containers, key=lambda child: total[id(child)])
        if total[id(biggest)] < 0.9 * total[id(block)]:
            return block
        block = biggest
