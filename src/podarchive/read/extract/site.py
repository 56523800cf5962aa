"""What a web site tells about itself: feed autodiscovery, page titles, links and sitemaps.

Backfill and ``podarchive discover`` use these; none of them raises.
"""

from __future__ import annotations

import html as html_lib
import re

from bs4 import BeautifulSoup
from bs4.element import Tag
from bs4.filter import SoupStrainer

from podarchive.core.errors import ExtractError
from podarchive.core.urls import is_http_url
from podarchive.read.extract.decode import decode_page
from podarchive.read.extract.links import absolute_href, base_of
from podarchive.read.extract.soup import attr, collapse, parse, tags

FEED_LINK_TYPES = ("application/rss+xml", "application/atom+xml", "application/xml", "text/xml")

_SITEMAP_ENTRY_RE = re.compile(
    r"<(?:\w+:)?(url|sitemap)\b[^>]*>(.*?)</(?:\w+:)?\1\s*>", re.I | re.S
)
_SITEMAP_LOC_RE = re.compile(r"<(?:\w+:)?loc\b[^>]*>\s*(.*?)\s*</(?:\w+:)?loc\s*>", re.I | re.S)
_SITEMAP_LASTMOD_RE = re.compile(
    r"<(?:\w+:)?lastmod\b[^>]*>\s*(.*?)\s*</(?:\w+:)?lastmod\s*>", re.I | re.S
)
_CDATA_RE = re.compile(r"<!\[CDATA\[(.*?)\]\]>", re.S)


def discover_feeds(html: bytes | str, url: str, *, content_type: str | None = None) -> list[str]:
    """Feed URLs a web page announces with ``<link rel="alternate" type="…rss/atom…">``.

    Absolute, in document order, without duplicates. Never raises; a page that is not HTML
    announces nothing.
    """
    soup = _page_soup(html, content_type, "base", "link")
    if soup is None:
        return []
    base = base_of(soup, url)
    found: list[str] = []
    for tag in soup.find_all("link"):
        rels = attr(tag, "rel").lower().split()
        kind = attr(tag, "type").split(";")[0].strip().lower()
        if "alternate" in rels and kind in FEED_LINK_TYPES:
            absolute = absolute_href(attr(tag, "href"), base)
            if absolute and absolute not in found:
                found.append(absolute)
    return found


def page_title(html: bytes | str, *, content_type: str | None = None) -> str | None:
    """The title of a web page: its first ``<h1>``, else ``og:title``, else ``<title>``.

    Never raises; None when the page has none (or is not HTML).
    """
    soup = _page_soup(html, content_type, "h1", "meta", "title")
    if soup is None:
        return None
    found = list(tags(soup, "h1", "meta", "title"))
    for name in ("h1", "meta", "title"):
        for tag in found:
            if tag.name == name and (title := _title_in(tag)):
                return title
    return None


def page_links(
    html: bytes | str, url: str, *, content_type: str | None = None
) -> list[tuple[str, str]]:
    """``(rel, absolute URL)`` of every http(s) ``<a href>`` and ``<link href>`` of a page.

    ``rel`` is lower-cased and space-separated (``""`` when absent). Never raises.
    """
    soup = _page_soup(html, content_type, "a", "link", "base")
    if soup is None:
        return []
    base = base_of(soup, url)
    found: list[tuple[str, str]] = []
    for tag in tags(soup, "a", "link"):
        absolute = absolute_href(attr(tag, "href"), base)
        if absolute is not None:
            found.append((attr(tag, "rel").lower(), absolute))
    return found


def sitemap_entries(body: bytes | str) -> tuple[list[tuple[str, str | None]], list[str]]:
    """A sitemap's page entries ``(url, lastmod)`` and the child sitemaps of a sitemap index.

    Read with regular expressions, not an XML parser: a sitemap is a flat list of ``<loc>``
    elements, and this way no entity or DTD is ever expanded. Only http(s) URLs are kept.
    """
    text = body.decode("utf-8", "replace") if isinstance(body, bytes) else body
    pages: list[tuple[str, str | None]] = []
    children: list[str] = []
    for kind, inner in _SITEMAP_ENTRY_RE.findall(text):
        loc = _SITEMAP_LOC_RE.search(inner)
        if loc is None:
            continue
        url = html_lib.unescape(_CDATA_RE.sub(r"\1", loc[1])).strip()
        if not is_http_url(url):
            continue
        if kind.lower() == "sitemap":
            children.append(url)
        else:
            lastmod = _SITEMAP_LASTMOD_RE.search(inner)
            pages.append((url, lastmod[1].strip() if lastmod else None))
    return pages, children


def _page_soup(html: bytes | str, content_type: str | None, *names: str) -> BeautifulSoup | None:
    """The page parsed for the ``names`` elements only; None if it is not HTML."""
    try:
        text = decode_page(html, content_type)
    except ExtractError:
        return None
    return parse(text, SoupStrainer(list(names)))


def _title_in(tag: Tag) -> str:
    """The title an ``<h1>`` or ``<title>`` holds, or an ``og:title`` meta's content."""
    if tag.name != "meta":
        return collapse(tag.get_text())
    if attr(tag, "property").lower() != "og:title":
        return ""
    return collapse(attr(tag, "content"))
