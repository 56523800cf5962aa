"""Links in HTML: the document's base URL, hrefs made absolute, and :func:`extract_links`."""

from __future__ import annotations

import re

from bs4 import BeautifulSoup
from bs4.element import Tag
from bs4.filter import SoupStrainer

from podarchive.extract.soup import attr, collapse, parse, tags
from podarchive.types import Link
from podarchive.urls import http_link_parts, is_http_url, join_url

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
    links: list[Link] = []
    for anchor in tags(root, "a"):
        absolute = _resolved_href(attr(anchor, "href"), base_url)
        if absolute is None or (parts := http_link_parts(absolute)) is None:
            continue
        normalized, domain = parts
        text = collapse(anchor.get_text())
        links.append(Link(len(links), absolute, normalized, domain, text))
    return tuple(links)


def page_base(soup: BeautifulSoup, text: str, url: str) -> str | None:
    """:func:`base_of` a page, without walking the tree when its markup has no ``<base``."""
    if "<?xml" not in text and _BASE_TAG_RE.search(text) is None:  # parse() cuts "<?xml …>"
        return url
    return base_of(soup, url)


def base_of(soup: BeautifulSoup, base_url: str | None) -> str | None:
    """The document's ``<base href>`` resolved against ``base_url``, else ``base_url``."""
    base = next((tag for tag in tags(soup, "base") if tag.has_attr("href")), None)
    href = attr(base, "href").strip() if base is not None else ""
    if not href:
        return base_url
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
