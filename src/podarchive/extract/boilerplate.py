"""Page furniture for the generic extractor to remove: navigation, headers, footers, sidebars.

Furniture is a boilerplate tag, an ARIA landmark that is never the notes, or an element whose
class or id names furniture ("site-nav", "sidebar", "share-buttons", …).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterator

from bs4.element import Tag

from podarchive.extract.platforms import platform_furniture
from podarchive.extract.soup import attr, child_tags, collapse, tags

#: Page furniture the generic extractor removes before it looks for the notes.
BOILERPLATE_TAGS = frozenset(
    {"script", "style", "noscript", "template", "nav", "header", "footer", "aside", "form"}
    | {"iframe", "svg", "button", "select", "textarea", "dialog"}
    | {"audio", "video", "object", "embed"}  # players: their fallback text is never notes
)
#: ARIA landmarks that are never the notes.
BOILERPLATE_ROLES = frozenset(
    {"navigation", "banner", "contentinfo", "complementary", "search", "menu", "menubar", "dialog"}
)
#: A word of a class or id (split on "-", "_") that marks page furniture.
BOILERPLATE_WORD_RE = re.compile(
    r"\w*nav|navigation|\w*menu|sidebar|comments?|share|sharing|sharedaddy|social|footer"
    r"|cookies?|consent|gdpr|breadcrumbs?|crumbs|related|pagination|pager|prevnext|popup"
    r"|modal|newsletter|subscribe|widgets?|skip|\w*player"
    r"|promos?|promotions?|ads?|adverts?|advertisements?|adsbygoogle|tags|tagcloud|byline"
    r"|commentlist|discussion|disqus\w*|respond|authors?|author\w*box|dateline"
    r"|contributions?|donate|donations?|submeta|keywords"
)
#: An inline style that hides an element.
HIDDEN_STYLE_RE = re.compile(r"display\s*:\s*none|visibility\s*:\s*hidden", re.I)
#: A class or id token (lower case) that names an episode's notes: a word of it, split on
#: "-" and "_", is one of :data:`NOTES_WORDS`, or it contains one of :data:`NOTES_PHRASES`.
NOTES_WORDS = frozenset({"notes", "shownotes", "description", "summary"})
NOTES_PHRASES = ("entry-content", "entry_content", "post-content", "post_content")
#: Class prefixes that describe a state, not a component ("has-sidebar", "no-comments").
STATE_CLASS_PREFIXES = ("has-", "no-", "with-", "without-")
#: Never removed as boilerplate, whatever their class says.
PROTECTED_TAGS = frozenset({"html", "body", "article", "main"})


def remove_boilerplate(body: Tag) -> None:
    """Extract page furniture: boilerplate tags, ARIA landmarks and class/id-marked elements.

    An element that contains an ``<article>`` or ``<main>`` is never removed for its class or
    role, and a ``<form>`` holding most of the page (ASP.NET style) is kept.
    """
    protected = functools.cache(lambda: _landmark_ancestors(body))  # only if a tag asks
    doomed: list[Tag] = []
    stack = child_tags(body)[::-1]
    while stack:
        tag = stack.pop()
        if _is_boilerplate(tag, protected):
            doomed.append(tag)
        else:
            stack += [child for child in reversed(tag.contents) if isinstance(child, Tag)]
    forms = [tag for tag in doomed if tag.name == "form"]
    if forms:
        half_page = len(collapse(body.get_text())) / 2
        doomed = [tag for tag in doomed if tag not in forms or len(tag.get_text()) <= half_page]
    for tag in doomed:
        tag.extract()


def _is_boilerplate(tag: Tag, protected: Callable[[], set[int]]) -> bool:
    """Whether to remove ``tag``; ``protected()``: the ids of landmark ancestors."""
    if tag.name in BOILERPLATE_TAGS:
        return tag.name != "form" or id(tag) not in protected()
    if tag.name in PROTECTED_TAGS:
        return False
    if is_hidden(tag):
        return True
    if not _is_marked_boilerplate(tag) and platform_furniture(tag) is None:
        return False
    return id(tag) not in protected()


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
    if "role" not in attrs and "class" not in attrs and "id" not in attrs:
        return False
    return attr(tag, "role").strip().lower() in BOILERPLATE_ROLES or any(
        BOILERPLATE_WORD_RE.fullmatch(word) for word in _class_and_id_words(tag)
    )


def _landmark_ancestors(root: Tag) -> set[int]:
    """The ids of every element that has an ``<article>`` or ``<main>`` inside it."""
    ancestors: set[int] = set()
    for landmark in tags(root, "article", "main"):
        for parent in landmark.parents:
            if id(parent) in ancestors:
                break
            ancestors.add(id(parent))
    return ancestors


def names_notes(tag: Tag) -> bool:
    """Whether a class or the id of ``tag`` says it holds the notes ("show-notes", …)."""
    attrs = tag.attrs
    if "class" not in attrs and "id" not in attrs:
        return False
    for token in (attr(tag, "class") + " " + attr(tag, "id")).lower().split():
        if any(phrase in token for phrase in NOTES_PHRASES):
            return True
        if not NOTES_WORDS.isdisjoint(re.split(r"[-_]+", token)):
            return True
    return False


def _class_and_id_words(tag: Tag) -> Iterator[str]:
    for token in (attr(tag, "class") + " " + attr(tag, "id")).lower().split():
        if not token.startswith(STATE_CLASS_PREFIXES):
            yield from filter(None, re.split(r"[-_]+", token))
