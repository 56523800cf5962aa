"""Page furniture for the generic extractor to remove: navigation, headers, footers, sidebars.

Furniture is a boilerplate tag, an ARIA landmark that is never the notes, or an element whose
class or id names furniture ("site-nav", "sidebar", "share-buttons", …).
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from bs4.element import Tag

from podarchive.read.extract.guided import find_span
from podarchive.read.extract.platforms import platform_furniture
from podarchive.read.extract.soup import HEADING_TAGS, attr, child_tags, collapse

#: Page furniture the generic extractor removes before it looks for the notes.
BOILERPLATE_TAGS = frozenset(
    {"script", "style", "noscript", "template", "nav", "header", "footer", "aside", "form"}
    | {"iframe", "svg", "button", "select", "textarea", "dialog"}
    | {"audio", "video", "object", "embed"}  # players: their fallback text is never notes
)
#: Boilerplate tags kept when they hold the page's content: an ASP.NET page's one ``<form>``,
#: and a ``<noscript>`` holding the ``<article>`` a script-less reader gets (SoundCloud).
KEPT_WITH_CONTENT = frozenset({"form", "noscript"})
#: A section's header and footer: boilerplate but inside a page's main block, on a retry.
SECTION_TAGS = frozenset({"header", "footer"})
#: ARIA landmarks that are never the notes.
BOILERPLATE_ROLES = frozenset(
    {"navigation", "banner", "contentinfo", "complementary", "search", "menu", "menubar", "dialog"}
)
#: A word of a class or id (split on "-", "_") that marks page furniture.
BOILERPLATE_WORD_RE = re.compile(
    r"\w*nav|navigation|\w*menu|sidebar|comments?|share|sharing|sharedaddy|social|footer"
    r"|cookies?|consent|gdpr|breadcrumbs?|crumbs|related|pagination|pager|prevnext|popup"
    r"|modal|newsletter|subscribe|subscription|abo|abonnement|widgets?|skip|\w*player"
    r"|promos?|promotions?|ads?|adverts?|advertisements?|adsbygoogle|tags|tagcloud|byline"
    r"|commentlist|discussion|disqus\w*|respond|authors?|author\w*box|dateline"
    r"|contributions?|donate|donations?|submeta|keywords|carousel|disclaimer"
)
#: Elements inside a line of text, and the words that mark a box but not such a part of a line.
INLINE_TAGS = frozenset({"span", "a", "em", "strong", "i", "b", "small", "cite"})
CREDIT_WORDS = frozenset({"author", "authors"})
#: An inline style that hides an element.
HIDDEN_STYLE_RE = re.compile(r"display\s*:\s*none|visibility\s*:\s*hidden", re.I)
#: A class or id token (lower case) that names an episode's notes: a word of it, split on
#: "-" and "_", is one of :data:`NOTES_WORDS`, or it contains one of :data:`NOTES_PHRASES`.
NOTES_WORDS = frozenset({"notes", "shownotes", "description", "summary"})
NOTES_PHRASES: tuple[str, ...] = ("entry-content", "entry_content", "post-content", "post_content")
NOTES_PHRASES += ("article-body", "episode-desc", "episode_desc")
_NOTES_HINT_RE = re.compile("|".join([*sorted(NOTES_WORDS), *NOTES_PHRASES]))
#: Class prefixes that describe a state or a place, not a component ("has-sidebar",
#: "no-comments", "after-story-ad-1": the text that comes after an ad).
STATE_CLASS_PREFIXES = ("has-", "no-", "with-", "without-", "after-", "before-")
#: Class prefixes of page builders whose every block is a "widget" (Elementor): that word of
#: theirs is layout, not furniture ("elementor-widget-share-buttons" still says "share").
LAYOUT_PREFIXES = ("elementor-", "et_pb_", "wp-block-")
LAYOUT_WORDS = frozenset({"widget", "widgets", "container", "module"})
#: An element named for the notes protects its wrappers when it has this much text.
NAMED_LANDMARK_CHARS = 300
#: Never removed as boilerplate, whatever their class says.
PROTECTED_TAGS = frozenset({"html", "body", "article", "main"})


def remove_boilerplate(
    body: Tag, reference: list[str] | None = None, *, inner_sections: bool = False
) -> None:
    """Extract page furniture: boilerplate tags, ARIA landmarks and class/id-marked elements.

    An element that contains an ``<article>`` or ``<main>`` is never removed for its class or
    role, and a ``<form>`` holding most of the page (ASP.NET style) is kept. Given the tokens
    of a ``reference`` (the feed's notes, a full structured description), a hidden or
    class-marked element that holds it is kept when nothing else on the page does: the page's
    own words for the notes outweigh a class name ("content-modal__wrapper").
    ``inner_sections``: a ``<header>`` or ``<footer>`` inside a ``<main>`` or ``<article>``
    is kept but for its class.
    """
    doomed, unwrapped = _furniture(body, inner_sections)
    doomed = _without_page_forms(body, doomed)
    spared: list[Tag] = []
    if reference:
        kept = _sparing_reference(body, doomed, reference)
        spared = [tag for tag in doomed if tag not in kept]
        doomed = kept
    for tag in doomed:
        tag.extract()
    for tag in unwrapped:
        tag.unwrap()  # kept for the article it holds: what a reader without scripts sees
    for tag in spared:  # kept for the notes it holds: its own furniture still goes
        remove_boilerplate(tag, reference, inner_sections=inner_sections)


def _furniture(body: Tag, inner_sections: bool) -> tuple[list[Tag], list[Tag]]:
    """The outermost elements under ``body`` to remove, and the ``<noscript>`` elements kept
    to unwrap. A hidden full text's teaser goes in its stead (the full text is unhidden)."""
    doomed: list[Tag] = []
    unwrapped: list[Tag] = []
    stack = child_tags(body)[::-1]
    while stack:
        tag = stack.pop()
        teaser = _teaser_of(tag) if is_hidden(tag) else None
        if teaser is not None:
            doomed.append(teaser)  # "… Read more": the hidden full text is the one to keep
            _unhide(tag)
        if teaser is None and _is_boilerplate(tag, inner_sections):
            doomed.append(tag)
        else:
            if tag.name == "noscript":
                unwrapped.append(tag)
            stack += [child for child in reversed(tag.contents) if isinstance(child, Tag)]
    return doomed, unwrapped


def _without_page_forms(body: Tag, doomed: list[Tag]) -> list[Tag]:
    """``doomed`` less a ``<form>`` that holds over half the page's text (ASP.NET style)."""
    forms = [tag for tag in doomed if tag.name == "form"]
    if not forms:
        return doomed
    half_page = len(collapse(body.get_text())) / 2
    return [tag for tag in doomed if tag not in forms or len(tag.get_text()) <= half_page]


def _sparing_reference(body: Tag, doomed: list[Tag], reference: list[str]) -> list[Tag]:
    """``doomed`` less the hidden or class-marked elements that hold the page's only copy of
    the ``reference`` (those are unhidden)."""
    gone = {id(tag) for tag in doomed}
    if find_span(body, reference, skip=gone) is not None:
        return doomed  # the reference survives elsewhere: the furniture may go
    span = find_span(body, reference)
    if span is None:
        return doomed
    holders = {id(p) for p in span.first.parents} | {id(p) for p in span.last.parents}
    spared = [
        tag
        for tag in doomed
        if id(tag) in holders and tag.name not in BOILERPLATE_TAGS and tag.name != "form"
    ]
    for tag in spared:
        _unhide(tag)
    return [tag for tag in doomed if tag not in spared]


#: A teaser is at most this share of the hidden full text it opens.
TEASER_SHARE = 0.8
_TOKEN_RE = re.compile(r"\w+")
_EXPANDER_WORDS = frozenset({"read", "more", "show", "see", "leer", "más", "mehr", "lesen", "lire"})
_EXPANDER_WORDS |= {"la", "suite", "plus", "ver", "weiterlesen", "expand", "all"}
_EXPANDER_WORDS |= {"full", "description", "synopsis", "anzeigen", "afficher", "mostrar"}
#: A short text a hidden long one replaces, beside an expander, has at least this many words.
MIN_SHORT_TOKENS = 5
_CONTROL_TAGS = frozenset({"button", "a", "span", "label"})


def _teaser_of(hidden: Tag) -> Tag | None:
    """The visible sibling just before ``hidden`` that is the opening of its text cut short
    ("… Read more"), when ``hidden`` is the full text an expander shows; else None."""
    before = hidden.find_previous_sibling()
    while isinstance(before, Tag) and not collapse(before.get_text()):
        before = before.find_previous_sibling()
    if not isinstance(before, Tag) or is_hidden(before):
        return None
    shown = _TOKEN_RE.findall(before.get_text().lower())
    while shown and shown[-1] in _EXPANDER_WORDS:
        shown.pop()
    full = _TOKEN_RE.findall(hidden.get_text().lower())
    if len(shown) < MIN_SHORT_TOKENS or len(shown) > TEASER_SHARE * len(full):
        return None
    if _has_expander(hidden) and before.name not in HEADING_TAGS:
        return before  # a short text, a long hidden one and "Show more" between them
    if len(shown) < 8:
        return None
    opening = set(full[: len(shown) + 5])
    return before if sum(token in opening for token in shown) >= 0.9 * len(shown) else None


def _has_expander(hidden: Tag) -> bool:
    """Whether a control next to ``hidden`` only says "Show more" (or "Read more", …)."""
    for sibling in (hidden.find_next_sibling(), hidden.find_previous_sibling()):
        if isinstance(sibling, Tag) and sibling.name in _CONTROL_TAGS:
            words = _TOKEN_RE.findall(sibling.get_text().lower())
            if words and all(word in _EXPANDER_WORDS for word in words):
                return True
    return False


def _unhide(tag: Tag) -> None:
    for name in ("hidden", "aria-hidden", "style"):
        tag.attrs.pop(name, None)


def _is_boilerplate(tag: Tag, inner_sections: bool = False) -> bool:
    """Whether to remove ``tag``."""
    if tag.name in SECTION_TAGS and (inner_sections or names_notes(tag)):
        if tag.find_parent(("main", "article")) is None:
            return True
        # a section's own header or footer (one named for the notes, or on a retry): judged
        # by its class below
    elif tag.name in BOILERPLATE_TAGS:
        return tag.name not in KEPT_WITH_CONTENT or not _holds_landmark(tag)
    if tag.name in PROTECTED_TAGS:
        return False
    if is_hidden(tag):
        return True
    if not _is_marked_boilerplate(tag) and platform_furniture(tag) is None:
        return False
    if names_notes(tag):
        return False  # "elementor-widget-theme-post-content": a page builder's notes widget
    return not _holds_landmark(tag)


def is_hidden(tag: Tag) -> bool:
    """Whether ``tag`` is hidden: ``hidden``, ``aria-hidden="true"`` or a hiding style."""
    attrs = tag.attrs
    if "hidden" in attrs or attrs.get("aria-hidden") == "true":
        return True
    style = attrs.get("style")
    return isinstance(style, str) and HIDDEN_STYLE_RE.search(style) is not None


def _is_marked_boilerplate(tag: Tag) -> bool:
    """Whether the role, a class or the id of ``tag`` names page furniture."""
    attrs = tag.attrs
    if "role" not in attrs and not _is_named(tag):
        return False
    if attr(tag, "role").strip().lower() in BOILERPLATE_ROLES:
        return True
    if tag.name not in INLINE_TAGS:
        return any(BOILERPLATE_WORD_RE.fullmatch(word) for word in _class_and_id_words(tag))
    marked = {word for word in _class_and_id_words(tag) if BOILERPLATE_WORD_RE.fullmatch(word)}
    return bool(marked - CREDIT_WORDS)  # a book's authors in a line of the notes stay


def _holds_landmark(tag: Tag) -> bool:
    """Whether ``tag`` has an ``<article>``, a ``<main>`` or an element named for the notes
    (with text enough not to be a card's summary) inside it: a page's wrapper
    ("share-container") is never furniture. Asked only of tags about to go, which are small
    but for such wrappers."""
    summaries = 0
    for node in tag.descendants:
        if isinstance(node, Tag) and _is_landmark(node):
            if not names_summary(node):
                return True
            summaries += 1
    return summaries == 1  # several summaries: other episodes' cards in a sidebar


def _is_landmark(tag: Tag) -> bool:
    if tag.name in ("article", "main"):
        return True
    return names_notes(tag) and len(collapse(tag.get_text())) >= NAMED_LANDMARK_CHARS


def names_notes(tag: Tag) -> bool:
    """Whether a class or the id of ``tag`` says it holds the notes ("show-notes", …)."""
    if not _is_named(tag):
        return False
    joined = naming(tag)
    if _NOTES_HINT_RE.search(joined) is None:
        return False  # the cheap look: no notes word in it at all
    for token in joined.split():
        if any(phrase in token for phrase in NOTES_PHRASES):
            return True
        if not NOTES_WORDS.isdisjoint(re.split(r"[-_]+", token)):
            return True
    return False


#: Class or id words of a description that is not the episode's: the site's, the show's.
OTHERS_WORDS = frozenset({"site", "blog", "channel", "show", "podcast", "series", "author"})


#: Class or id words of a summary: a lead that may stand beside the full notes.
SUMMARY_WORDS = frozenset({"summary", "excerpt", "teaser", "dek", "lede", "intro", "subtitle"})


def names_summary(tag: Tag) -> bool:
    """Whether a class or the id of ``tag`` says it is a summary ("episode-summary")."""
    return not SUMMARY_WORDS.isdisjoint(_class_and_id_words(tag))


def names_others(tag: Tag) -> bool:
    """Whether a class or the id of ``tag`` says it is the site's, the show's or an author's
    ("show-description", "site-summary")."""
    words = set(_class_and_id_words(tag))
    return "notes" not in words and not OTHERS_WORDS.isdisjoint(words)  # "show-notes" is ours


#: Attributes that name a component where classes are hashes ("sc-egiyK", "css-1x2y3z"):
#: read like a class ("post-content", "episodeDescription").
COMPONENT_ATTRS = ("data-testid", "data-test", "data-tag", "data-component")
_NAMING_ATTRS = frozenset({"class", "id", *COMPONENT_ATTRS})
_CAMEL_RE = re.compile(r"(?<=[a-z])(?=[A-Z])")


def _is_named(tag: Tag) -> bool:
    return not _NAMING_ATTRS.isdisjoint(tag.attrs)


def naming(tag: Tag) -> str:
    """The names ``tag`` gives itself, lower case: its classes, its id and its component
    attributes, camel-case names split ("episodeDescription" → "episode-description")."""
    attrs = tag.attrs
    joined = attr(tag, "class") + " " + attr(tag, "id")
    if not joined.islower():
        joined = _CAMEL_RE.sub("-", joined)  # "PromoNewsletter", "ArticlePage-authorInfo"
    if len(attrs) > 1 or (attrs and "class" not in attrs and "id" not in attrs):
        for name in COMPONENT_ATTRS:
            value = attrs.get(name)
            if isinstance(value, str):
                joined += " " + _CAMEL_RE.sub("-", value)
    return joined.lower()


def _class_and_id_words(tag: Tag) -> Iterator[str]:
    for token in naming(tag).split():
        if token.startswith(STATE_CLASS_PREFIXES):
            continue
        layout = token.startswith(LAYOUT_PREFIXES)
        for word in re.split(r"[-_]+", token):
            if word and not (layout and word in LAYOUT_WORDS):
                yield word
