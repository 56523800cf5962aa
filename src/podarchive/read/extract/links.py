"""Links in HTML: the document's base URL, hrefs made absolute, and :func:`extract_links`."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import replace
from urllib.parse import urlsplit

from bs4 import BeautifulSoup
from bs4.element import NavigableString, Tag
from bs4.filter import SoupStrainer

from podarchive.core.types import Link
from podarchive.core.urls import domain_of, http_link, is_http_url, join_url
from podarchive.read.extract.lines import is_app_link
from podarchive.read.extract.soup import attr, collapse, parse, tags

_BASE_TAG_RE = re.compile(r"<base", re.I)


def extract_links(html: str, base_url: str | None) -> tuple[Link, ...]:
    """Every http(s) ``<a href>`` in document order, made absolute.

    Relative hrefs resolve against the fragment's ``<base href>``, else ``base_url``; links that
    end up without an http(s) scheme (``mailto:``, ``javascript:``, relative without a base) and
    in-page ``#…`` links are skipped. Positions count the kept links from 0.
    """
    soup = parse(html, SoupStrainer(["a", "base"]))
    if soup is None:
        return ()
    return links_in(soup, base_of(soup, base_url))


def links_in(root: Tag, base_url: str | None) -> tuple[Link, ...]:
    """The :class:`Link` of every http(s) ``<a href>`` under ``root``, positions from 0."""
    return links_of(anchors_of(tags(root, "a")), base_url)


#: What a link is made of before any base URL: the ``href`` as written and the anchor's text.
Anchor = tuple[str, str]


def anchors_of(anchors: Iterable[Tag]) -> tuple[Anchor, ...]:
    """The href and the whitespace-collapsed text of each anchor, in order."""
    return tuple((attr(anchor, "href"), _anchor_text(anchor)) for anchor in anchors)


def links_of(anchors: Iterable[Anchor], base_url: str | None) -> tuple[Link, ...]:
    """The :class:`Link` of every anchor whose href resolves to http(s), positions from 0."""
    links: list[Link] = []
    for href, text in anchors:
        if (parts := http_link(base_url, href)) is not None:
            links.append(Link(len(links), *parts, text))
    return tuple(links)


def _anchor_text(anchor: Tag) -> str:
    """``collapse(anchor.get_text())``, without the walk for an anchor of one plain string."""
    contents = anchor.contents
    if len(contents) == 1 and type(contents[0]) is NavigableString:  # the usual anchor
        return collapse(contents[0])
    return collapse(anchor.get_text())


def has_base_tag(text: str) -> bool:
    """Whether markup may hold a ``<base>`` (else its base URL is the one it came with)."""
    return "<?xml" in text or _BASE_TAG_RE.search(text) is not None  # parse() cuts "<?xml …>"


def page_base(soup: BeautifulSoup, text: str, url: str) -> str | None:
    """:func:`base_of` a page, without walking the tree when its markup has no ``<base``."""
    return base_of(soup, url) if has_base_tag(text) else url


def base_of(soup: BeautifulSoup, base_url: str | None) -> str | None:
    """The document's ``<base href>`` resolved against ``base_url``, else ``base_url``."""
    href = base_href_of(soup)
    return base_url if href is None else resolved_base(href, base_url)


def base_href_of(soup: BeautifulSoup) -> str | None:
    """The first ``<base href>``'s value, stripped; None if there is none or it is empty."""
    base = next((tag for tag in tags(soup, "base") if tag.has_attr("href")), None)
    href = attr(base, "href").strip() if base is not None else ""
    return href or None


def resolved_base(href: str, base_url: str | None) -> str | None:
    """A ``<base href>`` (non-empty, stripped) resolved against ``base_url``."""
    return _join(base_url, href) or base_url


def absolute_href(href: str, base_url: str | None) -> str | None:
    """The absolute http(s) URL an href points to, or None for links that are skipped."""
    absolute = _resolved_href(href, base_url)
    return absolute if absolute is not None and is_http_url(absolute) else None


def _resolved_href(href: str, base_url: str | None) -> str | None:
    """``href`` resolved against ``base_url`` (any scheme); None for empty and ``#…`` hrefs."""
    href = href.strip()
    if not href or href.startswith("#"):
        return None
    return _join(base_url, href)


def _join(base_url: str | None, href: str) -> str | None:
    try:
        return join_url(base_url, href) if base_url else href
    except ValueError:  # e.g. a malformed IPv6 host
        return None


#: Path segments of a site's tag and category pages: taxonomy, never a notes link.
TAXONOMY_SEGMENTS = frozenset(
    {"tag", "tags", "category", "categories", "topic", "topics", "schlagwort", "kategorie"}
    | {"etiqueta", "categoria", "etichetta", "thema", "themen", "label", "labels"}
)
#: Path segments of a site's pages about people: its presenters', producers' and authors'.
PROFILE_SEGMENTS = frozenset(
    {"people", "person", "persons", "profile", "profiles", "author", "authors", "personnes"}
    | {"personen", "presenters", "presenter", "staff", "contributor", "contributors", "team", "by"}
)


def without_badges(links: tuple[Link, ...], base_url: str | None) -> tuple[Link, ...]:
    """``links`` less the page's own site's tag and category pages and image-only badges of
    podcast apps (renumbered)."""
    own = domain_of(base_url or "")
    kept = [
        link
        for link in links
        if not (own and link.domain == own and has_segment(link.url, TAXONOMY_SEGMENTS))
        and not _is_badge_link(link)
        and not SHARE_URL_RE.search(link.url)
    ]
    if len(kept) == len(links):
        return links
    return tuple(replace(link, position=i) for i, link in enumerate(kept))


#: Share intents: a button's link, never the notes'.
SHARE_URL_RE = re.compile(
    r"facebook\.com/sharer|twitter\.com/intent|x\.com/intent|api\.whatsapp\.com/send"
    r"|wa\.me/\?|linkedin\.com/share|reddit\.com/submit|pinterest\.\w+/pin/create"
    r"|bsky\.app/intent|t\.me/share|mastodonshare|toot\.kytta",
    re.I,
)
#: A badge's text: a podcast app's name or a subscribe label ("Listen on Apple Podcasts").
BADGE_TEXT_RE = re.compile(
    r"((listen|subscribe|follow)( on| via| in| to)? )?(apple( podcasts)?|itunes|spotify"
    r"|google( podcasts)?|overcast|pocket ?casts|castbox|castro|podcast addict|player ?fm"
    r"|stitcher|iheart(radio)?|tunein|deezer|amazon( music)?|audible|youtube( music)?|rss"
    r"|rss feed|feed|podchaser|radiopublic|goodpods|fountain|podverse|podcast index)",
    re.I,
)


def _is_badge_link(link: Link) -> bool:
    """A link to a podcast app or the feed whose text is nothing or the app's name (an image
    badge, "Apple Podcasts", "Subscribe via RSS")."""
    if not is_app_link(link.url):
        return False
    return not link.text or BADGE_TEXT_RE.fullmatch(link.text.strip()) is not None


def has_segment(url: str, segments: frozenset[str]) -> bool:
    """Whether a directory of ``url``'s path (not its last part) is one of ``segments``."""
    path = urlsplit(url).path.lower()
    return any(part in segments for part in path.split("/")[:-1] if part)
