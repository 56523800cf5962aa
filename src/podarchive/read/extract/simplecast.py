"""The Simplecast extractor: show notes from Next.js ``__NEXT_DATA__``, else "Show notes".

It applies on ``*.simplecast.com``, on pages that embed the Simplecast player and on any page
with Next.js data, whose ``props.pageProps.episode`` may hold the notes as HTML
(``long_description``, else ``description``). Without them, the element after a "Show notes"
heading (or ``.episode-description``) is the notes, on Simplecast pages only.
"""

from __future__ import annotations

import json
import re

from bs4 import BeautifulSoup
from bs4.element import Tag
from bs4.filter import SoupStrainer

from podarchive.core.types import PageNotes
from podarchive.core.urls import domain_of
from podarchive.read.extract.decode import valid
from podarchive.read.extract.links import base_of, has_base_tag, links_in
from podarchive.read.extract.markup import inner_html
from podarchive.read.extract.page import Page
from podarchive.read.extract.soup import HEADING_TAGS, classes, collapse, parse, tags
from podarchive.read.extract.text import INVISIBLE_TAGS, notes_text_and_links, text_of

NAME = "simplecast"

_NEXT_DATA_ID = "__NEXT_DATA__"
_SIMPLECAST_HOST = "simplecast.com"
_SIMPLECAST_PLAYER = "player.simplecast.com"
_SHOW_NOTES_HEADINGS = frozenset({"show notes", "shownotes", "episode notes"})
_NOTES_FIELDS = ("long_description", "shownotes", "description")


def applies(text: str, url: str) -> bool:
    """Whether the page is on Simplecast, embeds its player or carries Next.js data."""
    return _on_simplecast(text, url) or _NEXT_DATA_ID in text


def notes(page: Page) -> PageNotes | None:
    """The JSON's notes (from a scripts-only parse when they are there), else the section's."""
    text = page.text
    if _NEXT_DATA_ID in text and '"episode"' in text:  # worth a scripts-only parse first
        found = _next_data_notes(text, page.url)
        if found is not None and "<" not in found.html and _shown_longer(page, found.text):
            return None  # a plain summary in the JSON, the full notes in the page: generic's
        if found is not None:
            return found
    if not _on_simplecast(text, page.url):
        return None  # another Next.js site: its notes field may have any name (generic's)
    return _simplecast_notes(page.soup, _next_data_episode(page.soup), page.base_url)


#: The opening words of a plain JSON description looked for in the page's text.
OPENING_WORDS = 12


def _shown_longer(page: Page, summary: str) -> bool:
    """Whether the page's visible text opens like ``summary`` and goes on for longer: the JSON
    has a summary, the page the notes."""
    body = page.soup.body
    if body is None:
        return False
    shown = " ".join(body.get_text(" ").split())
    opening = " ".join(summary.split()[:OPENING_WORDS])
    start = shown.find(opening)
    if start < 0:
        return False
    return len(shown) - start > 2 * len(summary)


def _on_simplecast(text: str, url: str) -> bool:
    """Whether the page is on simplecast.com or embeds its player (else only its JSON tells)."""
    host = domain_of(url)
    on_simplecast = host == _SIMPLECAST_HOST or host.endswith("." + _SIMPLECAST_HOST)
    return on_simplecast or _SIMPLECAST_PLAYER in text


def _next_data_notes(text: str, url: str) -> PageNotes | None:
    """The notes in a page's ``__NEXT_DATA__`` JSON, read from the markup without a parse
    (a script's text runs to the first ``</script``, as in HTML); the page is parsed for its
    ``<base>`` only where it has one. None sends the page down the full path (no JSON notes,
    or notes without text)."""
    match = _NEXT_DATA_RE.search(text)
    episode = None if match is None else _episode_in(match.group(1))
    if episode is None:
        return None
    notes_html = _first_text_field(episode, *_NOTES_FIELDS)
    if notes_html is None:
        return None
    base: str | None = url
    if has_base_tag(text):
        soup = parse(text, SoupStrainer("base"), huge_tree=True)
        base = base_of(soup, url) if soup is not None else url
    return _notes_from_fragment(notes_html, base)


#: The Next.js data script, its text up to the first ``</script`` (where HTML ends it).
_NEXT_DATA_RE = re.compile(
    r"<script\b[^>]*\bid\s*=\s*[\"']?__NEXT_DATA__[\"']?[^>]*>(.*?)</script", re.S | re.I
)


def _simplecast_notes(
    soup: BeautifulSoup, episode: dict[str, object] | None, base_url: str | None
) -> PageNotes | None:
    """Notes from the ``__NEXT_DATA__`` ``episode``, else the "Show notes" section, else None."""
    if episode is not None:
        notes_html = _first_text_field(episode, *_NOTES_FIELDS)
        if notes_html is not None:
            return _notes_from_fragment(notes_html, base_url)
    section = _show_notes_section(soup)
    if section is None:
        return None
    for tag in list(tags(section, *INVISIBLE_TAGS)):
        tag.extract()
    text = text_of(section)
    if not text:
        return None
    html = inner_html(section).strip()
    links = links_in(section, base_url)
    evidence = '"Show notes" section'
    return PageNotes(html, text, links, NAME, method=NAME, evidence=evidence, confidence=0.8)


def _next_data_episode(soup: BeautifulSoup) -> dict[str, object] | None:
    """``props.pageProps.episode`` of the Next.js data script, if it is an object."""
    script = next((tag for tag in tags(soup, "script") if tag.get("id") == _NEXT_DATA_ID), None)
    return None if script is None else _episode_in(script.get_text())


def _episode_in(script: str) -> dict[str, object] | None:
    """``props.pageProps.episode`` of the Next.js data JSON, if it is an object."""
    try:
        data = json.loads(script)
    except (ValueError, RecursionError):  # malformed or absurdly nested JSON
        return None
    for key in ("props", "pageProps", "episode"):
        if not isinstance(data, dict):
            return None
        data = data.get(key)
    return data if isinstance(data, dict) else None


def _first_text_field(record: dict[str, object], *keys: str) -> str | None:
    for key in keys:
        value = record.get(key)
        if isinstance(value, str) and value.strip():
            return valid(value.strip())  # JSON's "\ud800" is a lone surrogate
    return None


def _notes_from_fragment(notes_html: str, base_url: str | None) -> PageNotes | None:
    text, links = notes_text_and_links(notes_html, base_url)  # one parse for both
    if not text:
        return None
    evidence = "__NEXT_DATA__ episode notes"
    return PageNotes(
        notes_html, text, links, NAME, method="app-state", evidence=evidence, confidence=0.9
    )


#: Elements of running text: notes written straight after their heading, not in a container.
_RUNNING_TAGS = frozenset({"p", "ul", "ol", "blockquote", "dl", "pre", "table", "figure"})


def _run_after(soup: BeautifulSoup, heading: Tag, following: Tag) -> Tag:
    """``following``, or, where the notes are paragraphs straight after the heading, all of
    them up to the next heading of the same rank or higher (or anything else), put in one
    ``<div>`` in their place."""
    if following.name not in _RUNNING_TAGS:
        return following
    rank = HEADING_TAGS.index(heading.name) if heading.name in HEADING_TAGS else 0
    run: list[Tag] = []
    for sibling in heading.find_next_siblings():
        if sibling.name in HEADING_TAGS and HEADING_TAGS.index(sibling.name) <= rank:
            break
        if sibling.name not in _RUNNING_TAGS and sibling.name not in HEADING_TAGS:
            break
        run.append(sibling)
    if len(run) == 1:
        return following
    wrapper = soup.new_tag("div")
    heading.insert_after(wrapper)
    for part in run:
        wrapper.append(part.extract())
    return wrapper


def _show_notes_section(soup: BeautifulSoup) -> Tag | None:
    """The element after a "Show notes" heading, else ``.episode-description``."""
    for heading in tags(soup, *HEADING_TAGS):
        if collapse(heading.get_text()).rstrip(":").casefold() in _SHOW_NOTES_HEADINGS:
            following = heading.find_next_sibling()
            if isinstance(following, Tag):
                return _run_after(soup, heading, following)
    return next((tag for tag in tags(soup) if "episode-description" in classes(tag)), None)
