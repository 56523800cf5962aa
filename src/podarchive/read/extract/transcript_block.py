"""A transcript shown on an episode page: found, cut out of the page, read into segments.

A transcript is an element whose class or id says so (``transcript``, ``transkript``, …) with
at least :data:`MIN_TRANSCRIPT_CHARS` of text; or what follows a heading that says so
("Transcript", "Episode Transcript:", "Transkript"); or a run of at least
:data:`MIN_SPEAKER_TURNS` sibling paragraphs that open with a speaker's name ("Matt: …") or a
time code ("[00:12:03] …"). It is never the notes: :func:`cut_transcript` removes it from the
tree, so the notes extractors never see it.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from bs4.element import NavigableString, Tag

from podarchive.core.types import PageTranscriptSegment
from podarchive.read.extract.soup import attr, child_tags, collapse, tags
from podarchive.read.extract.text import text_of

#: A transcript holds at least this many characters.
MIN_TRANSCRIPT_CHARS = 400
#: Sibling paragraphs that open with a speaker or a time code, for a transcript without a name.
MIN_SPEAKER_TURNS = 8
#: Time-coded paragraphs without speakers are a transcript only when at least this share of
#: them is too long for a chapter title; else they are the notes' chapter list.
MIN_LONG_SHARE = 0.5
_WORD_RE = re.compile(r"transcri\w*|transkri\w*|transcripci\w*|mitschrift|abschrift|wortlaut")
_STEMS = ("transcri", "transkri", "mitschrift", "abschrift", "wortlaut")
_WORD_RE_ANY = re.compile(_WORD_RE.pattern, re.I)
_HEADING_TAGS = frozenset(
    {"h1", "h2", "h3", "h4", "h5", "h6", "p", "div", "strong", "b", "summary", "span", "dt"}
)
_TIME_RE = re.compile(r"^\[?\(?((?:\d{1,2}:)?\d{1,2}:\d{2})(?:[.,]\d+)?\)?\]?\s*[-–:]?\s*")
_SPEAKER_RE = re.compile(r"^([A-ZÀ-Þ][\w.'’-]*(?: [A-ZÀ-Þ0-9][\w.'’-]*){0,3})\s?:\s+\S")
_SEGMENT_TAGS = ("p", "li", "dd", "tr")


def cut_transcript(root: Tag, page_text: str) -> tuple[PageTranscriptSegment, ...] | None:
    """Remove the page's transcript from ``root`` and return it as segments, else None.

    ``page_text``, the page's markup in lower case, spares the walks for a name where no word
    says one.
    """
    named = any(stem in page_text for stem in _STEMS)
    parts = (named and (_named(root) or _after_heading(root))) or _speaker_run(root)
    if not parts:
        return None
    segments = [segment for part in parts for segment in _segments(part)]
    for part in parts:
        part.extract()
    return tuple(segments) or None


def _says_transcript(text: str) -> bool:
    return _WORD_RE.search(text.lower()) is not None


def _named(root: Tag) -> list[Tag]:
    """The outermost element whose class or id names a transcript, if it holds enough text."""
    for tag in tags(root):
        attrs = tag.attrs
        if "class" not in attrs and "id" not in attrs:
            continue
        named = _says_transcript(attr(tag, "class") + " " + attr(tag, "id"))
        if named and len(collapse(tag.get_text())) >= MIN_TRANSCRIPT_CHARS:
            return [tag]
    return []


def _after_heading(root: Tag) -> list[Tag]:
    """A short heading that says "transcript" (not a link) and the siblings after it."""
    for string in root.descendants:
        if type(string) is not NavigableString or not _WORD_RE_ANY.search(string):
            continue
        heading = _heading_of(string)
        if heading is None:
            continue
        tag, text = heading
        top = _heading_line(tag, text, root)
        following = [top, *(s for s in top.next_siblings if isinstance(s, Tag))]
        if sum(len(collapse(s.get_text())) for s in following) >= MIN_TRANSCRIPT_CHARS + len(text):
            return following
    return []


def _heading_of(string: NavigableString) -> tuple[Tag, str] | None:
    """The element of ``string`` and its text, when that is a short heading and no link."""
    tag = string.parent
    if not isinstance(tag, Tag) or tag.name not in _HEADING_TAGS:
        return None
    text = collapse(tag.get_text())
    if len(text) > 60 or tag.find("a") is not None or tag.find_parent("a") is not None:
        return None
    return tag, text


def _heading_line(tag: Tag, text: str, root: Tag) -> Tag:
    """The outermost element up to three levels above ``tag`` that holds nothing else: a
    ``<strong>`` alone in its ``<p>`` makes the ``<p>`` the heading."""
    top = tag
    for _ in range(3):
        parent = top.parent
        if parent is None or parent is root or len(child_tags(parent)) != 1:
            break
        if len(collapse(parent.get_text())) > len(text):
            break
        top = parent
    return top


class _Turns(NamedTuple):
    """Per parent (by ``id``): its paragraphs that are turns, those with a time code, the
    parent itself and the speakers named (``""`` for none)."""

    counts: dict[int, int]
    timed: dict[int, int]
    parents: dict[int, Tag]
    speakers: dict[int, set[str]]


def _speaker_run(root: Tag) -> list[Tag]:
    """A parent's paragraphs from the first of :data:`MIN_SPEAKER_TURNS` speaker turns on."""
    turns = _count_turns(root)
    counts = turns.counts
    best = max(counts, key=lambda key: counts[key], default=None)
    if best is None or not _is_run(turns, best):
        return []
    children = child_tags(turns.parents[best])
    first = next(
        i for i, c in enumerate(children) if c.name == "p" and _turn(collapse(c.get_text()))
    )
    if first and children[first - 1].name in ("h1", "h2", "h3", "h4", "h5", "h6"):
        first -= 1  # the transcript's own heading
    return children[first:]


def _count_turns(root: Tag) -> _Turns:
    """The :class:`_Turns` of the paragraphs under ``root``."""
    turns = _Turns({}, {}, {}, {})
    counts, timed = turns.counts, turns.timed
    for paragraph in tags(root, "p"):
        parent = paragraph.parent
        text = collapse(paragraph.get_text())
        if parent is not None and _TIME_RE.match(text):
            timed[id(parent)] = timed.get(id(parent), 0) + 1
        if parent is not None and _turn(text):
            counts[id(parent)] = counts.get(id(parent), 0) + 1
            turns.parents[id(parent)] = parent
            speaker = _SPEAKER_RE.match(text)
            turns.speakers.setdefault(id(parent), set()).add(speaker[1] if speaker else "")
    return turns


def _is_run(turns: _Turns, best: int) -> bool:
    """Whether the turns under the parent ``best`` are a transcript: enough of them, by
    speakers who come back, and not mostly short time-coded lines."""
    count, speakers = turns.counts[best], turns.speakers[best]
    if count < MIN_SPEAKER_TURNS:
        return False
    if len(speakers) * 2 > count:
        return False  # each name once or twice: credits ("Host: …", "Music: …"), not turns
    # mostly short time-coded lines: the notes' chapter list, a few long
    return not (speakers == {""} and count < MIN_LONG_SHARE * turns.timed.get(best, 0))


def _turn(text: str) -> bool:
    """A speaker's turn, or a time-coded line too long to be a chapter title."""
    if _SPEAKER_RE.match(text):
        return len(text) > 20
    return _TIME_RE.match(text) is not None and len(text) > 100


def _segments(part: Tag) -> list[PageTranscriptSegment]:
    """The part's lines: one per paragraph, with its time code and speaker where given."""
    blocks = [tag for tag in tags(part, *_SEGMENT_TAGS) if tag.find(_SEGMENT_TAGS) is None]
    if part.name in _SEGMENT_TAGS or not blocks:
        blocks = [part]
    segments: list[PageTranscriptSegment] = []
    for block in blocks:
        text = collapse(text_of(block))
        if not text or (len(text) <= 60 and _says_transcript(text)):
            continue  # empty, or the transcript's own heading
        start: float | None = None
        if match := _TIME_RE.match(text):
            start = _seconds(match[1])
            text = text[match.end() :]
        speaker = None
        if match := _SPEAKER_RE.match(text):
            speaker = match[1]
            text = text[len(speaker) :].lstrip(" :")
        if text:
            segments.append(PageTranscriptSegment(start, text, speaker))
    return segments


def _seconds(code: str) -> float:
    total = 0
    for part in code.split(":"):
        total = total * 60 + int(part)
    return float(total)
