"""The generic extractor: the notes are the page's main block once its furniture is gone.

The rule, in order (prose: text outside links, headings and ``<time>``):

1. the ``<article>`` with most text, else ``<main>``, else ``[role=main]``, if it has at least
   :data:`MIN_NOTES_CHARS` of prose;
2. else the element whose class or id says notes (``notes``, ``show-notes``, ``description``,
   ``summary``, ``entry-content``, …) with most prose, if it has :data:`MIN_NOTES_CHARS`;
3. else an explicit container even when short: that notes-named element, else the page's only
   ``<article>``, else its only ``<main>``/``[role=main]``, if it has at least
   :data:`MIN_SHORT_NOTES_CHARS` of prose (a short sentence is notes; a title, a date or a
   duration is not, and several short ``<article>`` elements are teaser cards);
4. else the densest container (readability-style), if it has :data:`MIN_NOTES_CHARS` of
   prose: with no explicit container the threshold keeps furniture out.

The block is then narrowed to a single child that holds nearly all its text, joined with the
siblings that continue it, and tidied (``trim``). Before all that, hidden elements, players and
platform furniture go (``boilerplate``, ``platforms``) and an on-page transcript is cut out
(``transcript``). Given the feed's notes, the page block that carries them wins (``guided``);
a feed summary only confirms the main block. The structured description (JSON-LD, Open Graph)
replaces a block that is only its teaser. It applies to every page, so it comes last.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import NamedTuple

from bs4.element import NavigableString, PageElement, PreformattedString, Tag

from podarchive.core.types import PageNotes
from podarchive.core.urls import domain_of
from podarchive.read.extract.assemble import (
    MIN_REFERENCE_TOKENS,
    Transcript,
    checked_against,
    from_description,
    from_feed,
    is_summary,
    more_notes,
    named_boxes_after,
    notes_of,
    tidied,
)
from podarchive.read.extract.boilerplate import (
    names_notes,
    names_others,
    names_summary,
    remove_boilerplate,
)
from podarchive.read.extract.edges import page_names, trim_head, trim_tail
from podarchive.read.extract.guided import reference_tokens, tokens
from podarchive.read.extract.lead import find_deck, summary_lead, with_deck
from podarchive.read.extract.page import Page
from podarchive.read.extract.platforms import drupal_fields_after
from podarchive.read.extract.soup import child_tags, collapse
from podarchive.read.extract.structured import (
    Described,
    has_structured_data,
    meta_description,
    structured_description,
)
from podarchive.read.extract.text import INVISIBLE_TAGS, LINE_TAGS, PARAGRAPH_TAGS
from podarchive.read.extract.transcript_block import cut_transcript
from podarchive.read.extract.trim import split_siblings

NAME = "generic"
#: Generic notes with fewer characters of text outside links than this are "no notes".
MIN_NOTES_CHARS = 40
#: An explicit notes container (see :func:`notes`) needs only this many characters of prose.
MIN_SHORT_NOTES_CHARS = 12
#: A landmark with less than this share of the page's prose may be a card beside the text,
#: when the densest text outside it has this many times its prose.
LANDMARK_SHARE = 0.3
ELSEWHERE_FACTOR = 2.0
#: A notes-named element inside a landmark is the notes when it holds this share of its prose.
NAMED_SHARE = 0.3
#: Elements whose text is a label, not prose, for the thresholds.
LABEL_TAGS = ("h1", "h2", "h3", "h4", "h5", "h6", "time")
#: Elements whose text is a paragraph for the density score (their parent is the candidate).
SCORED_PARAGRAPH_TAGS = PARAGRAPH_TAGS | {"li", "dd", "dt", "td", "th"}
#: Lists, tables and quotes: the densest one is a part of running text, which is the notes.
PART_TAGS = frozenset({"ul", "ol", "dl", "table", "tbody", "blockquote"})
#: The elements of running text.
TEXT_FLOW_TAGS = PART_TAGS | PARAGRAPH_TAGS | {"h1", "h2", "h3", "h4", "h5", "h6", "pre", "br"}
TEXT_FLOW_TAGS |= {"figure", "hr", "a", "strong", "em", "b", "i", "span"}
#: Elements that hold the text written directly in them for the density score.
BLOCK_TAGS = LINE_TAGS | PARAGRAPH_TAGS | {"td", "th", "br", "body", "html"}


def applies(text: str, url: str) -> bool:
    """Always: this is the fallback."""
    return True


def notes(page: Page) -> PageNotes | None:
    """The page's notes: the block carrying the feed's notes, else the main block (the rule is
    in the module docstring), checked against the structured description; or None.

    A page with no notes found is read once more alone where the feed's notes were given
    (a script-built page holds its notes in its structured data, which a feed's reading does
    not look at), then keeping the ``<header>`` and ``<footer>`` elements inside its
    ``<main>`` or ``<article>``: some sites write the notes in one."""
    found = _notes(page)
    if found is None and page.feed_notes:
        found = _notes(Page(page.text, page.url))  # the page alone: its structured data too
    if found is None and ("<footer" in page.lowered or "<header" in page.lowered):
        found = _notes(Page(page.text, page.url, page.feed_notes), inner_sections=True)
    return found


def _notes(page: Page, *, inner_sections: bool = False) -> PageNotes | None:
    body = page.soup.body
    if body is None:
        body = page.soup
    summary = meta_description(page.soup)
    described = _described(page)  # a structured one read before the scripts go
    names = page_names(page.soup)
    deck = find_deck(body, page.lowered)  # a lead under the headline, before furniture goes
    remove_boilerplate(body, _reference(described), inner_sections=inner_sections)
    transcript = cut_transcript(body, page.lowered)
    matched = _matched(body, described, page, transcript, names)
    if matched is not None and page.feed_notes and not is_summary(page.feed_notes):
        return matched  # the feed's notes: the page's notes are where they are
    stats = _text_stats(body)
    block = _notes_block(body, stats)
    if block is None:
        if matched is None and described is not None and described.method != "feed-match":
            return from_description(described, page.base_url, transcript)
        return matched
    found = _block_notes(block, stats, page, names, deck, summary, transcript)
    if described is None:
        return found
    if matched is not None and not more_notes(found, matched):
        return matched  # the summary's block and what continues it hold the notes
    return checked_against(found, described, page.base_url, matched)


def _described(page: Page) -> Described | None:
    """The reference for the notes: the feed's notes, else the page's structured description
    (JSON-LD, Open Graph, app state), if any."""
    if page.feed_notes:
        return Described("feed-match", page.feed_notes)
    if has_structured_data(page.text):
        return structured_description(page.soup, page.url)
    return None


def _matched(
    body: Tag,
    described: Described | None,
    page: Page,
    transcript: Transcript,
    names: frozenset[str],
) -> PageNotes | None:
    """The page block that carries the feed's notes or a full structured description."""
    if described is None or not (page.feed_notes or _full_structured(described)):
        return None
    return from_feed(body, described.text, page.base_url, transcript, described.method, names)


def _block_notes(
    block: Tag,
    stats: _TextStats,
    page: Page,
    names: frozenset[str],
    deck: Tag | None,
    summary: str,
    transcript: Transcript,
) -> PageNotes:
    """The notes of the chosen ``block``: narrowed, joined with what continues it, tidied, its
    header and the show's tail trimmed, and the lead it left out put back."""
    parts = split_siblings(_narrowed(block, stats))
    parts += named_boxes_after(parts[-1]) or drupal_fields_after(parts[-1])
    own_domain = domain_of(page.base_url or page.url)
    parts = tidied(parts, own_domain)
    trim_head(parts[0], names)
    trim_tail(parts[-1], names, own_domain)
    by_summary = deck is None and bool(summary)
    if by_summary:
        deck = summary_lead(parts[0], summary, tokens)
    parts = with_deck(parts, deck, tokens, summary=by_summary)
    return notes_of(parts, page.base_url, NAME, transcript=transcript)


def _reference(described: Described | None) -> list[str] | None:
    """The tokens of the feed's notes or of a full structured description, if long enough to
    tell the notes' block by."""
    if described is None or not (described.method == "feed-match" or _full_structured(described)):
        return None
    reference = reference_tokens(described.text)
    return reference if len(reference) >= MIN_REFERENCE_TOKENS else None


def _full_structured(described: Described) -> bool:
    """Whether a structured description is full notes to find the page's block by: app state
    or JSON-LD, not a summary (an ``og:description`` is one, cut to a length)."""
    return described.method != "open-graph"


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
    """The notes container by the rule of the module docstring (steps 1 to 4), or None."""
    visible = stats.tags[1:]
    groups = list(_landmark_groups(visible))
    block = _landmark_block(body, groups, stats)
    if block is None:
        block = _named_block(body, visible, stats)
    if block is None:
        block = _short_landmark(groups, stats)
    if block is None:
        block = _dense_block(body, stats)
    return block


def _landmark_block(body: Tag, groups: list[list[Tag]], stats: _TextStats) -> Tag | None:
    """Step 1: the ``<article>`` (else ``<main>``, ``[role=main]``) with most text, if it has
    :data:`MIN_NOTES_CHARS` of prose; or the page's densest text where the landmarks are cards
    beside it; or the element inside it named for the notes."""
    for landmarks in groups:
        if not landmarks:
            continue
        best = max(landmarks, key=lambda tag: stats.total[id(tag)])
        prose = _prose(best, stats)
        if len(landmarks) > 1 and (elsewhere := _text_beside_cards(body, landmarks, prose, stats)):
            return elsewhere  # several small ones: cards (hosts, other episodes)
        if prose >= MIN_NOTES_CHARS:
            if (elsewhere := _text_elsewhere(body, best, prose, stats)) is not None:
                return elsewhere  # the landmark is a card beside the page's text
            return _named_inside(best, prose, stats) or best
    return None


def _named_block(body: Tag, visible: list[Tag], stats: _TextStats) -> Tag | None:
    """Step 2 (and 3's first part): the element named for the notes with most prose, if it has
    :data:`MIN_SHORT_NOTES_CHARS`; a summary-named one may be a lead beside the page's text."""
    named = [tag for tag in visible if names_notes(tag) and not names_others(tag)]
    if len(named) > 1 and all(names_summary(tag) for tag in named):
        return None  # several summaries and nothing else named: other episodes' cards
    if not named:
        return None
    best = max(named, key=lambda tag: stats.outside[id(tag)])
    prose = _prose(best, stats)
    if prose < MIN_SHORT_NOTES_CHARS:
        return None
    if names_summary(best):  # "episode-summary": maybe only a lead beside the notes
        return _text_elsewhere(body, best, prose, stats) or best
    return best  # long or short: the page says these are the notes


def _short_landmark(groups: list[list[Tag]], stats: _TextStats) -> Tag | None:
    """Step 3: the page's only ``<article>`` (else only ``<main>``, ``[role=main]``) even when
    short, if it has :data:`MIN_SHORT_NOTES_CHARS` of prose."""
    for landmarks in groups:
        if len(landmarks) > 1:
            return None  # several short ones: teaser cards, not the page's content
        if landmarks and _prose(landmarks[0], stats) >= MIN_SHORT_NOTES_CHARS:
            return landmarks[0]
    return None


def _dense_block(body: Tag, stats: _TextStats) -> Tag | None:
    """Step 4: the densest container, if it has :data:`MIN_NOTES_CHARS` of prose."""
    block = _densest_block(body)
    if block is None or _prose(block, stats) < MIN_NOTES_CHARS:
        return None
    return block


def _text_elsewhere(body: Tag, chosen: Tag, prose: int, stats: _TextStats) -> Tag | None:
    """The page's densest text, when ``chosen`` (a landmark or a notes-named element) holds
    under :data:`LANDMARK_SHARE` of the page's prose and that text, outside it, holds twice
    its prose: ``chosen`` is then a card or a summary beside the notes."""
    if prose >= LANDMARK_SHARE * _prose(body, stats):
        return None
    elsewhere = _outside(_densest_block(body), chosen)
    if elsewhere is None or _prose(elsewhere, stats) <= ELSEWHERE_FACTOR * prose:
        return None
    return elsewhere


def _text_beside_cards(
    body: Tag, landmarks: list[Tag], prose: int, stats: _TextStats
) -> Tag | None:
    """The page's densest text, when several landmarks, the largest with ``prose``, hold
    little of the page's prose and that text, outside them all, holds more: the landmarks
    are cards (hosts, other episodes) beside the notes."""
    if prose >= LANDMARK_SHARE * _prose(body, stats):
        return None
    block = _densest_block(body)
    if block is None or any(_outside(block, landmark) is None for landmark in landmarks):
        return None
    return block if _prose(block, stats) > prose else None


def _outside(block: Tag | None, landmark: Tag) -> Tag | None:
    """``block`` unless it is ``landmark``, inside it, holds it, or holds other articles."""
    if block is None or block is landmark:
        return None
    if any(parent is landmark for parent in block.parents):
        return None
    if any(parent is block for parent in landmark.parents):
        return None
    if block.find("article") is not None:
        return None  # a box of other articles: cards, not the page's text
    return block


def _named_inside(block: Tag, prose: int, stats: _TextStats) -> Tag | None:
    """The element inside a landmark whose class or id says it holds the notes ("description",
    "show-notes", …), when it holds a good share of the landmark's prose: the landmark's
    header, player and other episodes are then left out at once."""
    named = [
        tag
        for tag in block.find_all(True)
        if id(tag) in stats.outside and names_notes(tag) and not names_others(tag)
    ]
    if not named:
        return None
    best = max(named, key=lambda tag: stats.outside[id(tag)])
    if _prose(best, stats) < max(MIN_NOTES_CHARS, NAMED_SHARE * prose):
        return None
    return best


def _prose(tag: Tag, stats: _TextStats) -> int:
    """Characters of text in ``tag`` outside links, headings and ``<time>``."""
    outside = stats.outside
    labels = sum(outside.get(id(label), 0) for label in tag.find_all(LABEL_TAGS))
    return max(outside[id(tag)] - labels, 0)


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
    best = tags[max(scores, key=lambda key: scores[key])]  # first of equals: dicts keep order
    parent = best.parent
    if best.name in PART_TAGS and parent is not None and _is_text_flow(parent):
        return parent  # a list or a quote is a part of the notes, not their container
    return best


def _is_text_flow(tag: Tag) -> bool:
    """Whether every child of ``tag`` with text is a paragraph, a heading, a list or a quote
    (running text, not a page of components)."""
    return all(
        child.name in TEXT_FLOW_TAGS
        for child in child_tags(tag)
        if child.name not in INVISIBLE_TAGS and collapse(child.get_text())
    )


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
    """Step down into a single child container while it holds >= 90 % of the block's text (a
    list or a quote is a part of the text, never stepped into)."""
    total = stats.total
    while True:
        containers = [
            child
            for child in child_tags(block)
            if child.name not in SCORED_PARAGRAPH_TAGS
            and child.name not in PART_TAGS
            and child.name != "a"
            and id(child) in total
        ]
        if not containers:
            return block
        biggest = max(containers, key=lambda child: total[id(child)])
        if total[id(biggest)] < 0.9 * total[id(block)]:
            return block
        block = biggest
