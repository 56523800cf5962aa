"""The lead paragraph the notes' block may have left out.

* :func:`find_deck` and :func:`with_deck` — the lead under the headline (a "dek",
  "standfirst", "subtitle"), looked for before the furniture goes, put before the notes when
  the block left it out.
* :func:`summary_lead` — the element just before the block whose text is the page's summary.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from itertools import islice

from bs4.element import PageElement, Tag

from podarchive.extract.soup import HEADING_TAGS, attr, collapse, tags
from podarchive.extract.trim import CARD_HEADINGS, is_card

#: Class words of a lead paragraph under the headline.
DECK_WORDS = frozenset(
    {"dek", "deck", "standfirst", "subtitle", "subheadline", "subhead", "lede", "intro"}
    | {"description", "teaser", "kicker", "summary", "synopsis"}
)
#: Deck words of a subtitle: a lead only when it is a sentence.
SUBTITLE_WORDS = frozenset({"subtitle", "subheadline", "subhead"})
#: Class words of a description that is not the episode's: the site's, the show's, an author's.
NOT_EPISODE_WORDS = frozenset({"site", "blog", "channel", "show", "podcast", "series", "author"})
_DECK_CHARS = (40, 1000)
#: A lead shorter than this must end as a sentence does.
_SHORT_DECK_CHARS = 80
#: A lead is among this many elements after the headline.
_DECK_REACH = 150
_DECK_HEADLINES = 3


def find_deck(body: Tag, page_text: str) -> Tag | None:
    """The first element after an ``<h1>`` (of the first few), within the headline's own
    block, whose class names a lead paragraph, if any.

    ``page_text``, the page's markup in lower case, spares the walk where no such word is.
    """
    if not any(word in page_text for word in DECK_WORDS):
        return None
    for headline in islice(tags(body, "h1"), _DECK_HEADLINES):  # a cookie dialog's comes first
        deck = _deck_after(headline)
        if deck is not None:
            return deck
    return None


def _deck_after(headline: Tag) -> Tag | None:
    end = _element_after(_deck_scope(headline))
    seen = 0
    for tag in headline.next_elements:
        if tag is end:
            return None  # past the headline's own block
        if not isinstance(tag, Tag):
            continue
        seen += 1
        if seen > _DECK_REACH:
            return None
        if not tag.attrs.get("class") or tag.name == "h1":
            continue
        joined = attr(tag, "class").lower()
        if not any(word in joined for word in DECK_WORDS):
            continue
        words = {w for token in joined.split() for w in re.split(r"[-_]+", token)}
        if DECK_WORDS.isdisjoint(words) or not NOT_EPISODE_WORDS.isdisjoint(words):
            continue  # no lead, or the site's or the show's own ("site-description")
        text = collapse(tag.get_text())
        if tag.find(CARD_HEADINGS) is not None or is_card(tag):
            continue  # a lead has no heading of its own: this is a teaser card
        if words & DECK_WORDS <= SUBTITLE_WORDS and not _ends_sentence(text):
            continue  # a subtitle with no end: a second headline, not a lead
        if _is_lead(text) and _near_headline(tag):
            return tag
    return None


def _ends_sentence(text: str) -> bool:
    return text.rstrip()[-1:] in '.!?…:)"”。！？）」'


def _element_after(scope: Tag) -> PageElement | None:
    """The first node after ``scope`` and all it holds, in document order."""
    node: PageElement | None = scope
    while node is not None and node.next_sibling is None:
        node = node.parent
    return None if node is None else node.next_sibling


def _deck_scope(headline: Tag) -> Tag:
    """The block a lead shares with the headline: two levels above it (a header, an article)."""
    scope = headline
    for _ in range(2):
        if scope.parent is None or scope.parent.name in ("body", "html"):
            break
        scope = scope.parent
    return scope


def _is_lead(text: str) -> bool:
    """Whether ``text`` reads as a lead paragraph: long enough, and a sentence where it is
    short (a short phrase with no end is a subtitle, a second headline)."""
    if not _DECK_CHARS[0] <= len(text) <= _DECK_CHARS[1]:
        return False
    return len(text) >= _SHORT_DECK_CHARS or _ends_sentence(text)


def _near_headline(tag: Tag) -> bool:
    """Whether an ``<h1>`` comes before ``tag`` within a few levels of it."""
    headline = tag.find_previous("h1")
    if headline is None:
        return False
    near = {id(parent) for parent in list(tag.parents)[:3]}
    return any(id(parent) in near for parent in list(headline.parents)[:3])


def with_deck(
    parts: list[Tag], deck: Tag | None, tokens_of: Callable[[str], list[str]]
) -> list[Tag]:
    """``parts`` with ``deck`` first when they neither hold it nor repeat its words."""
    if deck is None:
        return parts
    above = {id(parent) for parent in deck.parents}
    if any(part is deck or id(part) in above for part in parts):
        return parts  # the block holds it
    chosen = {id(part) for part in parts}
    if any(id(tag) in chosen for tag in tags(deck)):
        return parts
    words = tokens_of(deck.get_text())
    first = set(tokens_of(" ".join(part.get_text() for part in parts)))
    if not words or sum(word in first for word in words) >= 0.8 * len(words):
        return parts  # the notes repeat it
    return [deck, *parts]


#: A lead found by the page's summary: at most this many levels up from the block, looking at
#: the sibling just before.
_SUMMARY_LEAD_LEVELS = 3


def summary_lead(block: Tag, summary: str, tokens_of: Callable[[str], list[str]]) -> Tag | None:
    """The element just before ``block`` (or before a wrapper of it, a few levels up) whose
    text is the page's summary (its meta description): a lead the block left out."""
    wanted = set(tokens_of(summary))
    if len(wanted) < 4:
        return None
    node = block
    for _ in range(_SUMMARY_LEAD_LEVELS):
        before = _previous_with_text(node)
        if before is not None:
            found = tokens_of(before.get_text())
            if not found or len(found) > 2 * len(wanted):
                return None
            if before.name in HEADING_TAGS or not _is_lead(collapse(before.get_text())):
                return None  # a subtitle, a second headline
            inside = sum(token in wanted for token in found)
            if inside >= 0.8 * len(found) and len(set(found) & wanted) >= 0.6 * len(wanted):
                return before
            return None
        parent = node.parent
        if parent is None or parent.name in ("body", "html"):
            return None
        node = parent
    return None


def _previous_with_text(node: Tag) -> Tag | None:
    for sibling in node.find_previous_siblings():
        if isinstance(sibling, Tag) and collapse(sibling.get_text()):
            return sibling
    return None
