"""The edges of a main block: the episode's header above the notes and the show's furniture
below them, which an ``<article>`` or ``<main>`` holds along with the notes.

* :func:`page_names` — the words of the page's names (``<title>``, ``og:title``,
  ``og:site_name``, the headline), read before the furniture goes.
* :func:`trim_head` — leading lines that are the episode's header, never its notes: headings,
  the headline or show name again, a meta line (date, duration, "Episode 14", "S2E3"), a
  figure and its caption, a line of links (platform badges, a category).
* :func:`trim_tail` — trailing sections that are the show's, not the episode's: "About
  <the show>", the people ("Creators & Guests", "Mitwirkende"), other episodes ("Recent
  episodes", "More from …"), and lines of the site's own links ("View transcript", "All
  episodes").

Both stop at the first line that is not furniture, and leave at least half of the block's
text: the notes are never trimmed for a look-alike.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from collections.abc import Set as AbstractSet
from typing import TypeGuard

from bs4 import BeautifulSoup
from bs4.element import NavigableString, PreformattedString, Tag

from podarchive.core.urls import domain_of, join_url
from podarchive.read.extract.boilerplate import naming
from podarchive.read.extract.lines import (
    ACTION_RE,
    AIRED_ON_RE,
    BADGES_RE,
    CHIP_WORDS,
    EPISODE_DATELINE_RE,
    FOLLOW_BOX_RE,
    LISTEN_LEAD_RE,
    MAX_BADGE_CHARS,
    MAX_BADGES,
    MEDIA_PATH_RE,
    PICTURE_CREDIT_RE,
    PRINT_LINE_RE,
    TAIL_HEADING_RE,
    TAIL_LINK_RE,
    is_app_link,
    is_meta_line,
    opens_tail,
)
from podarchive.read.extract.links import PROFILE_SEGMENTS, has_segment
from podarchive.read.extract.soup import HEADING_TAGS, attr, child_tags, collapse, tags
from podarchive.read.extract.trim import has_linked_heading

_WORD_RE = re.compile(r"\w+")
_HEADINGS = HEADING_TAGS
#: Lines looked at as a whole, never stepped into.
_LEAVES = frozenset({"p", "a", "li", "dt", "dd", "tr", "td", "th", *_HEADINGS})
#: Lists and tables: the notes' own, never header or tail lines.
_LISTS = frozenset({"ul", "ol", "dl", "table", "tbody", "thead"})
#: Elements that may be a heading in all but name, and the inline ones they may hold.
_LINE_HEADINGS = ("p", "div", "span", "strong", "b")
_INLINE = frozenset({"span", "strong", "b", "em", "i", "small", "br"})
#: A byline: "By A & B", "Von A und B", a few names.
BYLINE_RE = re.compile(r"(by|von|por|par|di|door|av)\s+[^.!?:]{2,80}", re.I)
#: Such a heading line is at most this long.
MAX_LINE_HEADING_CHARS = 60
#: A header line is at most this long.
MAX_HEADER_CHARS = 120
#: At most this share of the block's text goes as its header or its tail.
MAX_TRIMMED_SHARE = 0.5
#: An image block's caption and credit hold at most this many characters.
MAX_FIGURE_CHARS = 400
#: Text outside the marked parts of a picture (its caption, its credit) is at most this long.
MAX_UNMARKED_CHARS = 40
FIGURE_CLASS_RE = re.compile(r"image|img|photo|picture|caption|credit|figure|media", re.I)
#: A line whose links hold at least this share of its text is a line of links.
LINK_LINE_SHARE = 0.7


def words(text: str) -> set[str]:
    return set(_WORD_RE.findall(text.lower()))


def page_names(soup: BeautifulSoup) -> frozenset[str]:
    """The words of the page's ``<title>``, ``og:title``, ``og:site_name`` and first ``<h1>``."""
    found: set[str] = set()
    head = soup.head if soup.head is not None else soup  # meta tags and the title live there
    title = head.find("title")
    if isinstance(title, Tag):
        found |= words(title.get_text())
    for meta in tags(head, "meta"):
        if attr(meta, "property").lower() in ("og:title", "og:site_name"):
            found |= words(attr(meta, "content"))
    headline = next(tags(soup, "h1"), None)  # the walker is cheaper than bs4's find
    if headline is not None:
        found |= words(headline.get_text())
    return frozenset(found)


def trim_head(block: Tag, names: AbstractSet[str], keep: frozenset[int] = frozenset()) -> None:
    """Remove the header lines that open ``block`` (see the module docstring); never one
    holding a text node of ``keep`` (ids: the feed's text found on the page)."""
    budget = MAX_TRIMMED_SHARE * _length(block)
    spared = _sparing(lambda tag: _is_header_line(tag, names), keep)
    _trim(block, lambda tag: _is_picture(tag) or spared(tag), budget, first=True)


def trim_tail(
    block: Tag, names: AbstractSet[str], own_domain: str, keep: frozenset[int] = frozenset()
) -> None:
    """Remove the show's sections and site links that close ``block``; never a text node of
    ``keep``."""
    budget = MAX_TRIMMED_SHARE * _length(block)
    _trim_tail_sections(block, names, budget, keep, own_domain)
    budget = MAX_TRIMMED_SHARE * _length(block)
    spared = _sparing(lambda tag: _is_tail_link_line(tag, names, own_domain), keep)
    _trim(block, lambda tag: _is_picture(tag) or spared(tag), budget, first=False)


def _sparing(doomed: Callable[[Tag], bool], keep: frozenset[int]) -> Callable[[Tag], bool]:
    """``doomed``, but never for an element that holds a text node of ``keep``."""
    if not keep:
        return doomed
    return lambda tag: doomed(tag) and not _holds(tag, keep)


def _holds(tag: Tag, keep: frozenset[int]) -> bool:
    return any(id(string) in keep for string in tag.strings)


def _trim(block: Tag, doomed: Callable[[Tag], bool], budget: float, *, first: bool) -> None:
    """Extract ``block``'s first (or last) lines while ``doomed`` says so, descending into a
    wrapper that holds several lines (and dropping it once emptied), within ``budget``
    characters."""
    stack = [block]
    spent = 0.0
    for _ in range(500):
        node = stack[-1]
        edge = _edge_child(node, first=first)
        if edge is None:
            if node is block:
                return
            stack.pop()
            node.extract()  # a wrapper left with no text
            continue
        if isinstance(edge, NavigableString):
            return  # bare text at the edge: a line of the notes
        if doomed(edge):
            size = 0 if edge.name == "h1" else _length(edge)  # the headline is never notes
            if spent + size > budget:
                return
            spent += size
            edge.extract()
            continue
        if edge.name in _LEAVES or edge.name in _LISTS or not child_tags(edge):
            return  # a line that stays, or a list: the notes' own
        stack.append(edge)  # a wrapper: look at its lines


def _edge_child(node: Tag, *, first: bool) -> Tag | NavigableString | None:
    """The first (or last) child of ``node`` with text; an empty element and a comment are
    skipped (a CMS marks where each block ends: ``<!-- END CLASS="STORYTITLE" -->``)."""
    children = list(node.children)
    for child in children if first else reversed(children):
        if isinstance(child, Tag):
            if collapse(child.get_text()):
                return child
        elif _is_text(child) and collapse(child):
            return child
    return None


def _is_text(node: object) -> TypeGuard[NavigableString]:
    """Whether ``node`` is text of the page (not a comment, a doctype, CDATA)."""
    return isinstance(node, NavigableString) and not isinstance(node, PreformattedString)


#: Lines of a list or a table: the notes' own, never a header line.
_ITEM_TAGS = frozenset({"li", "dt", "dd", "tr", "td", "th"})
#: Whole header lines: a byline, "Aired on …", "Follow …", an episode's dateline.
_HEADER_LINE_RES = (BYLINE_RE, AIRED_ON_RE, FOLLOW_BOX_RE, EPISODE_DATELINE_RE)


def _is_header_line(tag: Tag, names: AbstractSet[str]) -> bool:
    """Whether ``tag``, a line at the block's start, is the episode's header (a list of badges,
    a ``<time>``, a picture, a heading, or a short line :func:`_says_header` tells)."""
    if tag.name in ("ul", "ol"):
        return _is_badge_list(tag)
    if tag.name in _LISTS or tag.name in _ITEM_TAGS:
        return False
    text = collapse(tag.get_text())
    if tag.name == "time" or _is_picture(tag):
        return True
    if tag.name in _HEADINGS or (tag.name == "a" and tag.find(_HEADINGS) is not None):
        return len(text) <= MAX_HEADER_CHARS * 2  # a heading, or one that links (the show's)
    if len(text) > MAX_HEADER_CHARS or _has_blocks(tag):
        return False
    return _says_header(tag, text, names)


def _says_header(tag: Tag, text: str, names: AbstractSet[str]) -> bool:
    """Whether a short line without blocks is the episode's header: the headline or the
    show's name again, a line of links, badges, a byline, a dateline or a meta line."""
    return (
        words(text) <= names
        or _link_share(tag, text) >= LINK_LINE_SHARE
        or _is_badge_line(tag, text)
        or any(pattern.fullmatch(text) for pattern in _HEADER_LINE_RES)
        or is_meta_line(text)
    )


def _is_badge_line(tag: Tag, text: str) -> bool:
    """A line of badges ("Listen on Apple Podcasts") that links."""
    return BADGES_RE.match(text) is not None and (tag.name == "a" or tag.find("a") is not None)


def _is_picture(tag: Tag) -> bool:
    """A figure: an image with its caption and credit, whatever the element (a short text, an
    ``<img>``, and a class that says image, photo, caption or credit). Never the notes, even
    where a caption shares their words."""
    if tag.name in ("figure", "figcaption", "picture", "img"):
        return True
    if tag.find(("img", "picture")) is None or _length(tag) > MAX_FIGURE_CHARS:
        return False
    if _is_marked_figure(tag):
        return True
    marked = [t for t in tags(tag) if _is_marked_figure(t)]
    if not marked:
        return False
    inside = sum(_length(t) for t in marked if not any(_is_marked_figure(p) for p in t.parents))
    return _length(tag) - inside <= MAX_UNMARKED_CHARS  # nothing but the picture's own text


def _is_marked_figure(tag: Tag) -> bool:
    return bool(tag.attrs.get("class")) and FIGURE_CLASS_RE.search(attr(tag, "class")) is not None


def _has_blocks(tag: Tag) -> bool:
    return tag.find(("p", "ul", "ol", "li", "blockquote", "table", *_HEADINGS)) is not None


def _is_badge_list(tag: Tag) -> bool:
    """A short list of short items that are each a badge: a link to a podcast app or to the
    feed ("Apple Podcasts", "Spotify", "RSS"), a link within the page ("Jump to transcript"),
    or a person's card (an avatar and a name); never a list of the notes' own links."""
    items = [item for item in tags(tag, "li") if collapse(item.get_text())]
    if not items or len(items) > MAX_BADGES:
        return False
    return all(_is_badge(item) for item in items)


def _is_badge(item: Tag) -> bool:
    text = collapse(item.get_text())
    if len(text) > MAX_BADGE_CHARS:
        return False
    link = item.find_parent("a") or item.find("a")  # <a><li>…</li></a> too
    if not isinstance(link, Tag):
        return False
    if item.find(("img", "picture", "svg")) is not None:
        return True  # an avatar or a logo and a name
    href = attr(link, "href").strip()
    if href.startswith("#") or is_app_link(href) or MEDIA_PATH_RE.search(href.split("?")[0]):
        return True
    if href.startswith("/") and len(_WORD_RE.findall(text)) <= CHIP_WORDS:
        return True  # a category chip: a word or two linking within the site
    return BADGES_RE.match(text) is not None or ACTION_RE.fullmatch(text) is not None


def _link_share(tag: Tag, text: str) -> float:
    if not text:
        return 0.0
    if tag.name == "a":
        return 1.0
    inside = sum(len(collapse(a.get_text())) for a in tags(tag, "a"))
    return inside / len(text)


def _trim_tail_sections(
    block: Tag, names: AbstractSet[str], budget: float, keep: frozenset[int], own_domain: str
) -> None:
    """Cut from the last heading that opens a show's section (and all after it), at any depth
    under ``block``, while what is cut stays within ``budget``. A short line alone in its
    element ("Listen on", "More episodes") is a heading too, where a page builder uses none."""
    for heading in reversed(list(tags(block, *_HEADINGS, *_LINE_HEADINGS))):
        text = collapse(heading.get_text())
        if heading.name in _LINE_HEADINGS:
            if not _is_heading_line(heading, text) or not (
                TAIL_HEADING_RE.fullmatch(text) or LISTEN_LEAD_RE.fullmatch(text)
            ):
                continue  # a line heading opens a section by its words alone, never "About X"
        elif not (opens_tail(text, names) or _opens_people_box(heading, text, block)):
            continue
        after = _following_in(block, heading)
        if has_chapters(after):
            continue  # "Topics" over time-coded lines: the episode's chapters, notes
        size = _length(heading) + sum(_length(tag) for tag in after)
        over = size > budget and not _only_own_links(after, own_domain)  # an archive list
        if over or any(_holds(tag, keep) for tag in [heading, *after]):
            return
        for tag in [heading, *after]:
            tag.extract()


#: Headings of a box of the episode's people, and the class words of such a box.
PEOPLE_HEADING_RE = re.compile(
    r"((featured )?(guests?|gäste?|invités?|invitados?|ospiti|people|participants)"
    r"|(the |das |el |l')?(team|équipe|equipo|crew|credits))\s*:?",
    re.I,
)
PEOPLE_BOX_WORDS = frozenset({"guest", "guests", "people", "participants", "persons"})
PEOPLE_BOX_WORDS |= {"credits", "team", "crew"}


def _opens_people_box(heading: Tag, text: str, block: Tag) -> bool:
    """Whether ``heading`` ("Guests") opens a box of its own whose class says it lists people
    ("segment-guests"): a component after the notes. A "Guests" heading in the notes' own
    flow is theirs."""
    box = heading.parent
    if box is None or box is block or PEOPLE_HEADING_RE.fullmatch(text) is None:
        return False
    if _edge_child(box, first=True) is not heading:
        return False
    found = {w for token in naming(box).split() for w in re.split(r"[-_]+", token)}
    return not PEOPLE_BOX_WORDS.isdisjoint(found)


#: A line that opens with a time code: a chapter ("(02:41) – The funnel", "12:30 Intro").
CHAPTER_LINE_RE = re.compile(r"[(\[]?\d{1,2}:\d{2}(:\d{2})?[)\]]?\s*[-–—:|]?\s*\w")


def has_chapters(section: list[Tag]) -> bool:
    """Whether two or more lines of ``section`` open with a time code."""
    lines = 0
    for tag in section:
        for line in [tag, *tags(tag, "li", "p")]:
            if line.name in ("li", "p") and CHAPTER_LINE_RE.match(collapse(line.get_text())):
                lines += 1
                if lines >= 2:
                    return True
    return False


def _is_heading_line(tag: Tag, text: str) -> bool:
    """A short line that is the whole text of its element, with no element inside but inline
    ones: what a page builder writes for a heading."""
    if not text or len(text) > MAX_LINE_HEADING_CHARS or tag.find("a") is not None:
        return False
    if not all(child.name in _INLINE for child in child_tags(tag)):
        return False
    parent = tag.parent
    return tag.name in ("p", "div") or (parent is not None and collapse(parent.get_text()) == text)


def _following_in(block: Tag, start: Tag) -> list[Tag]:
    """The elements after ``start`` in document order that are under ``block``: the
    following siblings of ``start`` and of each of its ancestors below ``block``."""
    found: list[Tag] = []
    node: Tag | None = start
    while node is not None and node is not block:
        found += [sibling for sibling in node.find_next_siblings() if isinstance(sibling, Tag)]
        parent = node.parent
        node = parent if isinstance(parent, Tag) else None
    return found


def _is_card_list(tag: Tag) -> bool:
    """A list whose every item is a card: a heading that is, or holds, a link (other
    episodes, other articles)."""
    items = [item for item in tag.find_all("li", recursive=False) if collapse(item.get_text())]
    return bool(items) and all(has_linked_heading(item, _HEADINGS) for item in items)


#: The title repeated under the notes has at least this many words (a one-word line, "Thanks",
#: may share a word with it by chance).
MIN_TITLE_WORDS = 3


def _is_tail_link_line(tag: Tag, names: AbstractSet[str], own_domain: str) -> bool:
    """Whether ``tag``, a line at the block's end, is the site's (a list of badges or cards, a
    "Print" line, or a short line of the site's or of links back to the show)."""
    text = collapse(tag.get_text())
    if tag.name in ("ul", "ol"):
        return _is_badge_list(tag) or _is_card_list(tag)
    if not text or _has_blocks(tag) or tag.name in _LISTS:
        return False
    if PRINT_LINE_RE.match(text) and len(text) <= 2 * MAX_HEADER_CHARS:
        return True
    if len(text) > MAX_HEADER_CHARS:
        return False
    return _is_site_line(tag, text, names, own_domain) or _links_back_to_show(
        tag, text, names, own_domain
    )


def _is_site_line(tag: Tag, text: str, names: AbstractSet[str], own_domain: str) -> bool:
    """Whether a short line under the notes is the site's: a link of its own ("View
    transcript", "Listen on"), the lead picture's credit, the episode's title again, a counter
    of likes or plays, the post's tag chips."""
    return (
        TAIL_LINK_RE.fullmatch(text) is not None
        or LISTEN_LEAD_RE.fullmatch(text) is not None
        or PICTURE_CREDIT_RE.match(text) is not None  # under the article's body
        or _is_title_again(text, names)
        or _is_counter(text)
        or _is_chip_line(tag, text, own_domain)
    )


def _is_title_again(text: str, names: AbstractSet[str]) -> bool:
    """The episode's title again, under the notes (a line of a few words, all the title's)."""
    return len(words(text)) >= MIN_TITLE_WORDS and words(text) <= names


def _is_counter(text: str) -> bool:
    """ "187 likes", "Este audio le gusta a: 187 usuarios"."""
    return COUNTER_RE.search(text) is not None and len(text) <= MAX_LINE_HEADING_CHARS


def _links_back_to_show(tag: Tag, text: str, names: AbstractSet[str], own_domain: str) -> bool:
    """A line of links to the site's own pages in the show's words ("Weather Desk", "All
    episodes")."""
    anchors = [tag] if tag.name == "a" else [a for a in tags(tag, "a") if attr(a, "href")]
    if not anchors or _link_share(tag, text) < LINK_LINE_SHARE or not words(text) <= names:
        return False
    return all(_is_own(attr(a, "href"), own_domain) for a in anchors)


#: A line that counts the post's likes, plays or comments.
COUNTER_RE = re.compile(
    r"\b\d[\d.,]*\s*(likes?|plays?|listens?|views?|comments?|usuarios|personas|me gusta"
    r"|reproducciones|escuchas|comentarios|kommentare|personen|wiedergaben|écoutes|j'aime)\b"
    r"|\b(le gusta a|gefällt|liked by|aiment)\b.{0,20}\d",
    re.I,
)


def _is_chip_line(tag: Tag, text: str, own_domain: str) -> bool:
    """Two or more short links to the site's own pages and nothing else: tag chips."""
    anchors = [a for a in tags(tag, "a") if attr(a, "href")]
    if len(anchors) < 2 or _link_share(tag, text) < 0.9:
        return False
    return all(
        _is_own(attr(a, "href"), own_domain)
        and len(_WORD_RE.findall(collapse(a.get_text()))) <= CHIP_WORDS
        for a in anchors
    )


#: Text outside the links of a list of the site's own pages is at most this share of it.
OWN_LINKS_SHARE = 0.1


def _only_own_links(section: list[Tag], own_domain: str) -> bool:
    """Whether ``section`` is nothing but links to the site's own pages (an archive of other
    episodes): it may go whatever its length."""
    anchors = [a for tag in section for a in tags(tag, "a")]
    if len(anchors) < 3 or not all(_is_own(attr(a, "href"), own_domain) for a in anchors):
        return False
    total = sum(_length(tag) for tag in section)
    inside = sum(len(collapse(a.get_text())) for a in anchors)
    return total - inside <= OWN_LINKS_SHARE * total


def _is_own(href: str, own_domain: str) -> bool:
    href = href.strip()
    if href.startswith("#"):
        return False  # an in-page anchor: a contents list, dropped elsewhere with its heading
    if not href.startswith(("http://", "https://", "//")):
        return True  # relative: the site's own page
    return bool(own_domain) and domain_of(href) == own_domain


def _length(tag: Tag) -> int:
    return len(collapse(tag.get_text()))


#: How a credits line opens ("Presented by …", "Producer", "L'équipe").
CREDITS_RE = re.compile(
    r"\W*((presented|produced|hosted|reported|edited|mixed|written)( and \w+)? by\b"
    r"|(presenters?|producers?|hosts?|reporters?|editors?|credits|crew|team|l'équipe|équipe"
    r"|production|réalisation|redaktion|moderation|sound engineer)\b)",
    re.I,
)
#: A credits heading or label ("Credits", "Presenter") is at most this long.
CREDITS_LABEL_CHARS = 30
#: How far up from a profile link a credits line or its heading is looked for.
CREDITS_LEVELS = 3


def unlink_credits(block: Tag, base_url: str | None) -> None:
    """Unwrap the links of a credits line to the site's own people pages ("Presented by <a
    href=/people/…>"): a byline, not a link of the notes; the names stay as text."""
    own = domain_of(base_url or "")
    if not base_url or not own:
        return
    for anchor in list(tags(block, "a")):
        href = join_url(base_url, attr(anchor, "href").strip())
        if domain_of(href) != own or not has_segment(href, PROFILE_SEGMENTS):
            continue
        if _in_credits(anchor, block):
            anchor.unwrap()


def _in_credits(anchor: Tag, block: Tag) -> bool:
    node = anchor
    for _ in range(CREDITS_LEVELS):
        parent = node.parent
        if parent is None or node is block:
            return False
        if CREDITS_RE.match(collapse(parent.get_text())[:60]):
            return True
        before = node.find_previous_sibling()
        label = collapse(before.get_text()) if isinstance(before, Tag) else ""
        if len(label) <= CREDITS_LABEL_CHARS and CREDITS_RE.match(label):
            return True  # under a "Credits" heading, or a "Presenter" <dt>
        node = parent
    return False
