"""Notes found by a reference text: the feed's description of the episode, or the page's own
structured data.

:func:`find_span` locates the run of the page's text that carries the reference (tokens
compared fuzzily, across markup: a maximum-sum run over the text nodes, each scoring its tokens
found in the reference minus those not). :func:`feed_block` takes the natural container of that
run: the notes with their start, their end and the links the feed did not have.
:func:`is_teaser` tells a page block that only shows the start of a longer reference.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Set as AbstractSet
from typing import NamedTuple

from bs4.element import NavigableString, PreformattedString, Tag

from podarchive.read.extract.soup import child_tags, collapse
from podarchive.read.extract.text import INVISIBLE_TAGS, html_to_text

_TOKEN_RE = re.compile(r"\w+")
_CJK_RE = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af]")
#: A token not in the reference costs this much against one that is.
MISS_COST = 1.5
#: The run must hold this share of the reference's tokens, and this share of its own tokens
#: must be the reference's, for the page block to count as the reference's.
MIN_COVERAGE = 0.5
MIN_PRECISION = 0.6
#: Reference tokens at least this many times the page block's: the page shows a teaser.
TEASER_RATIO = 1.4
#: A page line of at least this many tokens that is the reference's opening, and at most this
#: share of it, is a teaser cut from it ("… the night she …").
MIN_CUT_TOKENS = 12
CUT_SHARE = 0.85
#: A link of at most this many tokens that opens the run is post meta, not the notes' start.
LINK_LABEL_TOKENS = 6
#: The container grows to a parent holding at most this many times the run's text.
CONTAINER_GROWTH = 1.1
#: ... and at most this many levels up.
CONTAINER_LEVELS = 6


def tokens(text: str) -> list[str]:
    """Lower-cased word tokens; each CJK character is one."""
    found: list[str] = []
    for word in _TOKEN_RE.findall(text.lower()):
        if _CJK_RE.search(word):
            found += list(word)
        else:
            found.append(word)
    return found


def weighted_length(text: str) -> int:
    """The length of ``text``, a CJK character counting twice (it says what a word does)."""
    return len(text) + len(_CJK_RE.findall(text))


def reference_tokens(reference: str) -> list[str]:
    """The tokens of a reference given as HTML or plain text."""
    return tokens(html_to_text(reference))


class Span(NamedTuple):
    """The page's run of text that carries a reference."""

    first: NavigableString
    last: NavigableString
    hits: int  # its tokens found in the reference
    size: int  # all its tokens
    coverage: float  # share of the reference's tokens it holds
    inside: frozenset[int]  # the ids of its text nodes


def find_span(root: Tag, reference: list[str], skip: AbstractSet[int] = frozenset()) -> Span | None:
    """The best-scoring run of text under ``root`` for ``reference``, if it is good enough;
    the elements whose ids are in ``skip`` are left out."""
    wanted = Counter(reference)
    if not wanted:
        return None
    strings = _strings(root, skip)
    run = _best_run(strings, wanted)
    if run is None:
        return None
    first, last = run
    first = _past_labels(strings, first, last, wanted)
    first, last = _without_repeats(strings, first, last, wanted)
    hits, size = _counts(strings[first : last + 1], wanted)
    coverage = min(1.0, hits / len(reference))
    if coverage < MIN_COVERAGE or hits < MIN_PRECISION * size:
        return None
    inside = frozenset(id(string) for string in strings[first : last + 1])
    return Span(strings[first], strings[last], hits, size, coverage, inside)


def _best_run(strings: list[NavigableString], wanted: Counter[str]) -> tuple[int, int] | None:
    """The first and last index of the maximum-sum run of ``strings``, each scoring its tokens
    in ``wanted`` less :data:`MISS_COST` for each not; None when no run scores above 0."""
    best: tuple[float, int, int] | None = None  # score, first, last
    score = 0.0
    start = 0
    for index, string in enumerate(strings):
        found = tokens(string)
        good = sum(1 for token in found if token in wanted)
        gain = good - MISS_COST * (len(found) - good)
        if score <= 0:
            score, start = 0.0, index
        score += gain
        if score > 0 and (best is None or score > best[0]):
            best = (score, start, index)
    return None if best is None else (best[1], best[2])


def _past_labels(
    strings: list[NavigableString], first: int, last: int, wanted: Counter[str]
) -> int:
    """``first`` moved past the strings before the notes: the headline, a category or show
    link; or a line with none of their words ("38 min Explicit")."""
    while first < last:
        found = tokens(strings[first])
        if any(token in wanted for token in found) and not _is_lead_label(strings[first]):
            break
        first += 1
    return first


#: A string at an end of the run only repeats it when under this share of its tokens are
#: the reference's not yet matched by the rest of the run.
FRESH_SHARE = 0.5
#: ... and a header's line has at most this many tokens (a paragraph of CJK text, a token a
#: character, shares most of its characters with the rest however new it is).
HEADER_TOKENS = 12


def _without_repeats(
    strings: list[NavigableString], first: int, last: int, wanted: Counter[str]
) -> tuple[int, int]:
    """The run ``first``..``last`` less the strings at either end that only repeat words the
    rest of it matched as often as the reference has them: other episodes' cards of the same
    show after the notes, the page's header ("Listen on Apple Podcasts", the show's name)
    before them. Read outwards from the string that matches most of the reference."""
    found = [tokens(string) for string in strings[first : last + 1]]
    matched = _fresh_counts(found, wanted)
    core = max(range(len(found)), key=lambda index: matched[index])
    after = _fresh_counts(found[core:], wanted)
    end = len(found) - 1
    while end > core and after[end - core] < FRESH_SHARE * len(found[end]):
        end -= 1
    before = _fresh_counts(found[: end + 1][::-1], wanted)[::-1]
    start = 0
    while (
        start < core
        and len(found[start]) <= HEADER_TOKENS
        and before[start] < FRESH_SHARE * len(found[start])
    ):
        start += 1
    return first + start, first + end


def _fresh_counts(run: list[list[str]], wanted: Counter[str]) -> list[int]:
    """For each string's tokens, how many match reference tokens not yet matched by the
    strings before it (each reference token matched at most as often as it occurs)."""
    used: Counter[str] = Counter()
    fresh: list[int] = []
    for found in run:
        new = 0
        for token in found:
            if used[token] < wanted[token]:
                used[token] += 1
                new += 1
        fresh.append(new)
    return fresh


def _counts(run: list[NavigableString], wanted: Counter[str]) -> tuple[int, int]:
    """The run's tokens found in the reference, and all its tokens."""
    hits = size = 0
    for string in run:
        found = tokens(string)
        hits += sum(1 for token in found if token in wanted)
        size += len(found)
    return hits, size


def _is_lead_label(string: NavigableString) -> bool:
    """Whether ``string`` is the page's headline or a link's few words (a category, tag or
    byline link): what leads up to the notes, whose words the notes may share."""
    if string.find_parent("h1") is not None:
        return True
    return len(tokens(string)) <= LINK_LABEL_TOKENS and string.find_parent("a") is not None


def _strings(root: Tag, skip: AbstractSet[int] = frozenset()) -> list[NavigableString]:
    """The visible text nodes under ``root`` that hold a word, in document order, but for
    those of the elements whose ids are in ``skip``."""
    found: list[NavigableString] = []
    stack: list[object] = [root]
    while stack:
        node = stack.pop()
        if isinstance(node, Tag):
            if node.name not in INVISIBLE_TAGS and id(node) not in skip:
                stack.extend(reversed(node.contents))
        elif (
            isinstance(node, NavigableString)
            and not isinstance(node, PreformattedString)
            and _TOKEN_RE.search(node)
        ):
            found.append(node)
    return found


def feed_block(root: Tag, span: Span) -> list[Tag]:
    """The natural container of ``span``: its parts (one element, or a run of siblings)."""
    chain = {id(parent) for parent in span.first.parents}
    common = next((p for p in span.last.parents if id(p) in chain), root)
    parts = _children_between(common, span)
    if len(parts) > 1:
        return parts
    run_text = _text_length(common)
    container = common
    for _ in range(CONTAINER_LEVELS):
        parent = container.parent
        if container is root or parent is None:
            break
        if _text_length(parent) > CONTAINER_GROWTH * run_text or _beside_other(container):
            break
        container = parent
    return [container]


#: Siblings that may be taken in when the container grows: the notes' own lines.
_GROWN_OVER = frozenset({"p", "ul", "ol", "li", "br", "span", "a", "em", "strong", "b", "i"})


def _beside_other(container: Tag) -> bool:
    """Whether a sibling with text is another component (a date line, a title block): the
    container must not grow over it."""
    parent = container.parent
    if parent is None:
        return False
    return any(
        sibling is not container
        and (sibling.name not in _GROWN_OVER or sibling.get("class"))
        and _text_length(sibling) > 0
        for sibling in child_tags(parent)
    )


def _children_between(common: Tag, span: Span) -> list[Tag]:
    """The element children of ``common`` from the one holding the span's start to its end."""
    children = child_tags(common)
    holders = [id(p) for p in span.first.parents]
    enders = [id(p) for p in span.last.parents]
    first = next((i for i, c in enumerate(children) if id(c) in holders), None)
    last = next((i for i, c in enumerate(children) if id(c) in enders), None)
    if first is None or last is None or last < first:
        return [common]
    outside = sum(_text_length(c) for c in children[:first] + children[last + 1 :])
    if outside <= (CONTAINER_GROWTH - 1) * _text_length(common):
        return [common]
    return children[first : last + 1]


def _text_length(tag: Tag) -> int:
    return len(collapse(tag.get_text()))


def is_teaser(page_text: str, reference: list[str]) -> bool:
    """Whether the page's notes are the start of a longer reference (a cut-off teaser): much
    shorter and mostly its words, or holding a line that is its opening words cut short."""
    page_tokens = tokens(page_text)
    if not page_tokens:
        return False
    if len(reference) >= TEASER_RATIO * len(page_tokens):
        wanted = Counter(reference)
        inside = sum(min(count, wanted[token]) for token, count in Counter(page_tokens).items())
        if inside >= 0.6 * len(page_tokens):
            return True
    seen = set(page_tokens)
    if sum(token in seen for token in reference) >= 0.8 * len(reference):
        return False  # the page holds the reference: a line of it is its first paragraph
    return any(
        _cut_opening(tokens(line), reference) and not _whole_sentences(line)
        for line in page_text.splitlines()
    )


def _whole_sentences(line: str) -> bool:
    """Whether ``line`` ends as a sentence does, not cut short ("…", "...", mid-word): a
    standfirst that is the reference's first sentence, not a teaser of it."""
    end = line.rstrip()
    return end[-1:] in ".!?。！？" and not end.endswith("...")


def _cut_opening(line: list[str], reference: list[str]) -> bool:
    """Whether ``line`` is the reference's opening words, cut well before its end."""
    size = len(line)
    if size < MIN_CUT_TOKENS or size > CUT_SHARE * len(reference):
        return False
    opening = Counter(reference[: size + 2])
    same = sum(min(count, opening[token]) for token, count in Counter(line).items())
    return same >= 0.9 * size
