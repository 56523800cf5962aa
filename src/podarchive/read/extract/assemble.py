"""Notes put together: from the chosen block's parts, from the feed's match, or from a longer
structured description the page only shows the start of.
"""

from __future__ import annotations

import html as html_lib
import re
from collections.abc import Iterator
from collections.abc import Set as AbstractSet
from dataclasses import replace

from bs4.element import NavigableString, Tag

from podarchive.core.types import PageNotes, PageTranscriptSegment
from podarchive.core.urls import domain_of
from podarchive.read.extract.boilerplate import names_notes, names_others
from podarchive.read.extract.edges import has_chapters, trim_head, trim_tail, unlink_credits
from podarchive.read.extract.guided import (
    feed_block,
    find_span,
    is_teaser,
    reference_tokens,
    tokens,
    weighted_length,
)
from podarchive.read.extract.lines import opens_notes_section, opens_tail
from podarchive.read.extract.links import (
    extract_links,
    links_in,
    without_badges,
)
from podarchive.read.extract.markup import inner_html
from podarchive.read.extract.soup import HEADING_TAGS, collapse, first_child_with_text
from podarchive.read.extract.structured import Described
from podarchive.read.extract.text import html_to_text, text_of
from podarchive.read.extract.trim import (
    POST_FURNITURE_RE,
    RELATED_HEADING_RE,
    cut_post_furniture,
    drop_furniture_lines,
    split_siblings,
)

#: Feed notes with fewer tokens than this are a summary: they confirm the page's block.
SUMMARY_TOKENS = 60
#: Feed notes of fewer tokens than this are too few to find their block by: a heading or a
#: title alone would match them.
MIN_REFERENCE_TOKENS = 8
_LABELS = {
    "app-state": "app state",
    "json-ld": "JSON-LD",
    "open-graph": "og:description",
    "feed-match": "feed's notes",
}
Transcript = tuple[PageTranscriptSegment, ...] | None


def tidied(parts: list[Tag], own_domain: str = "") -> list[Tag]:
    """``parts`` with their furniture lines dropped and the post furniture cut from the last;
    ``own_domain``: the page's site (its other pages' cards go)."""
    for part in parts:
        drop_furniture_lines(part, own_domain)
    cut_post_furniture(parts[-1])
    return parts


def notes_of(
    parts: list[Tag],
    base_url: str | None,
    name: str,
    *,
    transcript: Transcript = None,
    method: str | None = None,
    evidence: str | None = None,
    confidence: float = 0.5,
) -> PageNotes:
    """The notes that ``parts`` (one block, or the siblings of a split one) hold."""
    for part in parts:
        unlink_credits(part, base_url)
    if len(parts) == 1:
        block = parts[0]
        html, text, links = inner_html(block).strip(), text_of(block), links_in(block, base_url)
    else:
        html = "".join(inner_html(part).strip() for part in parts)
        text = "\n\n".join(filter(None, (text_of(part) for part in parts)))
        found = [link for part in parts for link in links_in(part, base_url)]
        links = tuple(replace(link, position=i) for i, link in enumerate(found))
    links = without_badges(links, base_url)
    if evidence is None:
        evidence = "main block" if len(parts) == 1 else f"main block split in {len(parts)}"
    return PageNotes(
        html,
        text,
        links,
        name,
        method=method or name,
        evidence=evidence,
        confidence=confidence,
        transcript=transcript,
    )


def from_feed(
    body: Tag,
    feed_notes: str,
    base_url: str | None,
    transcript: Transcript,
    method: str = "feed-match",
    names: AbstractSet[str] = frozenset(),
) -> PageNotes | None:
    """The page block that carries the feed's notes, its natural container; None if none does.

    A feed summary (fewer than :data:`SUMMARY_TOKENS` tokens) is the start of the notes: the
    block goes on over the siblings that continue it (:func:`continuation`).
    """
    reference = reference_tokens(feed_notes)
    if len(reference) < MIN_REFERENCE_TOKENS:
        return None  # a few words match a heading anywhere: no evidence of the notes' block
    span = find_span(body, reference)
    if span is None or _in_heading(span.first, span.last):
        return None  # a heading that says the summary is a subtitle, not the notes' block
    parts = feed_block(body, span)
    more: list[Tag] = []
    if len(reference) < SUMMARY_TOKENS or _one_paragraph(parts):
        more = continuation(parts, names)  # a summary, or the notes' first paragraph only
        if not more and len(parts) == 1:
            more = _same_boxes_after(parts[0], names)
    more += named_boxes_after((more or parts)[-1])
    if not more:
        more = sections_after(parts[-1], names)  # full notes, their links in sections after
    parts = [*parts, *more]
    parts = tidied(parts, domain_of(base_url or ""))
    trim_head(parts[0], names, span.inside)
    trim_tail(parts[-1], names, domain_of(base_url or ""), span.inside)
    label = _LABELS.get(method, method)
    evidence = f"page block holds {span.coverage:.0%} of the {label}"
    if more:
        evidence += f", and {len(more)} more element{'s' if len(more) > 1 else ''} after it"
    found = notes_of(
        parts,
        base_url,
        "generic",
        transcript=transcript,
        method=method,
        evidence=evidence,
        confidence=round(0.6 + 0.4 * span.coverage * span.hits / max(span.size, 1), 2),
    )
    if is_teaser(found.text, reference):
        return _from_reference(found, feed_notes, base_url, method, label)
    return found


#: Elements that go on with the notes after a summary's block.
CONTINUING_TAGS = frozenset({"p", "ul", "ol", "dl", "blockquote", "pre", "table", "figure"})
_HEADINGS = ("h2", "h3", "h4", "h5", "h6")


def _one_paragraph(parts: list[Tag]) -> bool:
    """Whether the feed's block is one paragraph: the feed may hold only the notes' first."""
    return len(parts) == 1 and parts[0].name == "p"


def continuation(parts: list[Tag], names: AbstractSet[str] = frozenset()) -> list[Tag]:
    """The siblings after ``parts`` that continue them, when the block is a run of paragraphs
    in a larger container: every sibling with text (an emptied player skipped) up to the first
    that opens the post's furniture ("Tags:", "Related episodes", …)."""
    last = parts[-1]
    if last.name not in CONTINUING_TAGS and last.name not in _HEADINGS:
        return []  # the block is its own container: what follows is something else
    more: list[Tag] = []
    siblings = last.find_next_siblings()
    for index, sibling in enumerate(siblings):
        text = collapse(sibling.get_text())
        if not text:
            continue
        if opens_furniture(sibling, text, names) and not has_chapters(siblings[index:]):
            break  # but "Topics" over time-coded lines are the episode's chapters
        more.append(sibling)
    while more and more[-1].name in _HEADINGS:
        more.pop()  # a heading with nothing of the notes after it
    return more


#: First classes too common to say two boxes hold the same thing.
GENERIC_CLASSES = frozenset(
    {"section", "card", "row", "col", "block", "container", "box", "wrapper", "content", "panel"}
)


def _same_boxes_after(block: Tag, names: AbstractSet[str]) -> list[Tag]:
    """The boxes after ``block`` of its element and its (specific) first class, up to one that
    opens the post's furniture: the notes a summary opens, split in boxes."""
    run = split_siblings(block)
    first = (block.get("class") or [""])[0]
    if block not in run or not first or first.lower() in GENERIC_CLASSES:
        return []
    more: list[Tag] = []
    for box in run[run.index(block) + 1 :]:
        if opens_furniture(box, collapse(box.get_text()), names):
            break
        more.append(box)
    return more


def named_boxes_after(last: Tag) -> list[Tag]:
    """The boxes after the notes' box that, like it, are named for the notes: the notes in
    boxes ("episode-description", then "episode-shownotes" with the links and chapters).

    ``last`` is the notes' last part: the box itself, or what ends it. Empty siblings (an
    emptied player) are skipped; the first other box with text ends the run."""
    box = _box_ended_by(last)
    if box is None:
        return []
    more: list[Tag] = []
    for sibling in box.find_next_siblings():
        if not collapse(sibling.get_text()):
            continue
        if not names_notes(sibling) or names_others(sibling):
            break
        more.append(sibling)
    return more


def sections_after(last: Tag, names: AbstractSet[str] = frozenset()) -> list[Tag]:
    """The notes' own sections after their block (or the box it ends): siblings from one
    opened by a heading of the notes' sections ("Shownotes", "Links", "Kapitel") up to one
    opened by another heading ("Mitwirkende") or by the post's furniture."""
    more: list[Tag] = []
    for sibling in _end_of(last).find_next_siblings():
        text = collapse(sibling.get_text())
        if not text:
            continue
        heading = _opening_heading(sibling)
        if heading is not None and opens_notes_section(collapse(heading.get_text())):
            more.append(sibling)
            continue
        if heading is not None or not more or opens_furniture(sibling, text, names):
            break
        more.append(sibling)
    while more and more[-1].name in _HEADINGS:
        more.pop()
    return more


def _opening_heading(tag: Tag) -> Tag | None:
    """``tag`` if it is a heading, else its first child with text if that is one."""
    if tag.name in _HEADINGS:
        return tag
    first = first_child_with_text(tag)
    return first if first is not None and first.name in _HEADINGS else None


def _end_of(last: Tag) -> Tag:
    """``last``, or the outermost wrapper it ends, below a landmark."""
    chain = list(_ended_by(last))
    return chain[-1] if chain else last


def _box_ended_by(last: Tag) -> Tag | None:
    """The notes-named element that ``last`` is or ends (nothing with text after it inside)."""
    for node in _ended_by(last):
        if names_notes(node):
            return None if names_others(node) else node
    return None


def _ended_by(last: Tag) -> Iterator[Tag]:
    """``last``, then each wrapper it ends (nothing with text after it inside), up to a
    landmark: the chain ends at the first with text after it."""
    node: Tag | None = last
    while node is not None and node.name not in _LANDMARKS:
        yield node
        if any(collapse(sibling.get_text()) for sibling in node.find_next_siblings()):
            return
        node = node.parent


_LANDMARKS = frozenset({"body", "html", "main", "article"})


def opens_furniture(tag: Tag, text: str, names: AbstractSet[str] = frozenset()) -> bool:
    """Whether ``tag`` (whose text is ``text``) starts what comes after the notes."""
    if POST_FURNITURE_RE.match(text):
        return True
    heading = tag if tag.name in _HEADINGS else tag.find(_HEADINGS)
    if not isinstance(heading, Tag):
        return False
    said = collapse(heading.get_text())
    return bool(RELATED_HEADING_RE.fullmatch(said)) or opens_tail(said, names)


def _in_heading(first: Tag | NavigableString, last: Tag | NavigableString) -> bool:
    heading = first.find_parent(HEADING_TAGS)
    return heading is not None and any(parent is heading for parent in last.parents)


def more_notes(found: PageNotes, matched: PageNotes) -> bool:
    """Whether ``found`` holds sentences enough beyond ``matched`` to be longer notes than the
    feed's summary leads to (else ``matched`` is the notes and the rest of ``found`` furniture)."""
    seen = set(matched.text.splitlines())
    extra = 0
    for line in found.text.splitlines():
        size = weighted_length(line)
        if line not in seen and size >= MIN_SENTENCE_CHARS and SENTENCE_END_RE.search(line):
            extra += size
    return extra >= max(MORE_NOTES_CHARS, weighted_length(matched.text) // 2)


#: A line of at least this many characters with a sentence's end is prose.
MIN_SENTENCE_CHARS = 60
SENTENCE_END_RE = re.compile(r"[.!?。！？]")
#: ``found`` has longer notes than a summary's match with this many characters of prose more.
MORE_NOTES_CHARS = 200


def is_summary(feed_notes: str) -> bool:
    """Whether the feed's notes are too short to be more than a summary of the page's."""
    return len(reference_tokens(feed_notes)) < SUMMARY_TOKENS


def checked_against(
    found: PageNotes, described: Described, base_url: str | None, matched: PageNotes | None
) -> PageNotes:
    """``found`` checked against a reference: replaced by the reference when the page only shows
    its start, by ``matched`` (its block on the page) when ``found`` does not hold it."""
    reference = reference_tokens(described.text)
    if is_teaser(found.text, reference):
        label = _LABELS.get(described.method, described.method)
        return _from_reference(found, described.text, base_url, described.method, label)
    if described.method in ("app-state", "json-ld") and _no_prose(found.text, described.text):
        return from_description(described, base_url, found.transcript)  # a shell's meta line
    if _inside(found.text, reference):
        evidence = f"main block holds the {_LABELS.get(described.method, described.method)}"
        return replace(found, evidence=evidence, confidence=0.7)
    if matched is not None and described.method == "feed-match":
        return matched  # the feed's summary: its block on the page is the notes' start
    return replace(found, confidence=0.4)  # a structured summary is only evidence


def _no_prose(shown: str, described: str) -> bool:
    """Whether ``shown`` has no sentence of prose and is far shorter than ``described``: an
    app shell's date and duration line, not notes beside a structured description."""
    if any(
        weighted_length(line) >= MIN_SENTENCE_CHARS and SENTENCE_END_RE.search(line)
        for line in shown.splitlines()
    ):
        return False
    return 4 * weighted_length(shown) < weighted_length(described)


def from_description(
    described: Described, base_url: str | None, transcript: Transcript
) -> PageNotes:
    """The notes of a page that shows none in its body (a script-built page): its structured
    description, as HTML where it is HTML, else one paragraph a line."""
    html = _as_html(described.text)
    label = _LABELS.get(described.method, described.method)
    return PageNotes(
        html,
        html_to_text(html),
        tuple(extract_links(html, base_url)),
        "generic",
        method=described.method,
        evidence=f"the page's body shows no notes; notes from its {label}",
        confidence=0.6,
        transcript=transcript,
    )


#: A URL written out in a plain-text description, which its platform shows as a link.
_TEXT_URL_RE = re.compile(r"https?://[^\s<>\"']+[^\s<>\"'.,;:!?)\]]")


def _as_html(reference: str) -> str:
    """A structured description as HTML: as it is where it is HTML; else a paragraph a line,
    its written-out URLs made links (the platform shows them so: YouTube, Spotify)."""
    if "<" in reference:
        return reference
    paragraphs = [p for p in reference.split("\n") if p.strip()]
    return "".join(f"<p>{_linked(p.strip())}</p>" for p in paragraphs)


def _linked(line: str) -> str:
    out: list[str] = []
    last = 0
    for match in _TEXT_URL_RE.finditer(line):
        url = match.group(0)
        out.append(html_lib.escape(line[last : match.start()]))
        out.append(f'<a href="{html_lib.escape(url)}">{html_lib.escape(url)}</a>')
        last = match.end()
    out.append(html_lib.escape(line[last:]))
    return "".join(out)


def _inside(text: str, reference: list[str]) -> bool:
    """Whether the page block holds nearly all the reference's words."""
    found = set(tokens(text))
    return bool(reference) and sum(token in found for token in reference) >= 0.8 * len(reference)


def _from_reference(
    found: PageNotes, reference: str, base_url: str | None, method: str, label: str
) -> PageNotes:
    """The full reference as the notes; the page block's links whose text it names, added."""
    html = _as_html(reference)
    text = html_to_text(reference)
    links = list(extract_links(html, base_url))
    known = {link.normalized_url for link in links}
    wanted = set(tokens(text))
    own_domain = domain_of(base_url or "")
    for link in found.links:
        anchor = tokens(link.text)
        if link.normalized_url in known or link.domain == own_domain:
            continue  # the site's own links in a teaser block are its navigation
        if anchor and all(t in wanted for t in anchor):
            links.append(link)
            known.add(link.normalized_url)
    numbered = tuple(replace(link, position=i) for i, link in enumerate(links))
    return PageNotes(
        html,
        text,
        numbered,
        found.extractor,
        method=method,
        evidence=f"page shows a teaser of the {label}; notes from the {label}",
        confidence=0.8,
        transcript=found.transcript,
    )
