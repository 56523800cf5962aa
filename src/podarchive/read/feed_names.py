"""Namespace URIs and tag-name kinds of the lxml feed scan: which elements are feed vocabulary.

:func:`split_tag` gives an lxml tag's kind (PODCAST, ITUNES, PSC, or the lower-cased
namespace URI) and local name; :mod:`~.podcast_ns` reads the mapped kinds, and
:mod:`~.extension_tags` keeps every other kind as Tag records.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from lxml import etree

PODCAST_NAMESPACES = frozenset(
    {
        "https://podcastindex.org/namespace/1.0",
        "http://podcastindex.org/namespace/1.0",
        "https://github.com/podcastindex-org/podcast-namespace/blob/main/docs/1.0.md",
    }
)
ITUNES_NAMESPACES = frozenset(
    {
        "http://www.itunes.com/dtds/podcast-1.0.dtd",
        "https://www.itunes.com/dtds/podcast-1.0.dtd",
    }
)
# Podlove Simple Chapters (psc:chapters): the spec's URI, and https / a trailing slash tolerated.
PSC_NAMESPACES = frozenset(
    {
        "http://podlove.org/simple-chapters",
        "https://podlove.org/simple-chapters",
        "http://podlove.org/simple-chapters/",
        "https://podlove.org/simple-chapters/",
    }
)
ATOM_NAMESPACES = frozenset(
    {"http://www.w3.org/2005/atom", "http://www.w3.org/2005/atom/", "http://purl.org/atom/ns#"}
)
# Where <item>/<entry> may live: no namespace (RSS 0.9x/2.0), RSS 1.0, RSS 0.90, Atom.
ITEM_NAMESPACES = ATOM_NAMESPACES | {
    "",
    "http://purl.org/rss/1.0/",
    "http://my.netscape.com/rdf/simple/0.9/",
}
CONTENT_NAMESPACE = "http://purl.org/rss/1.0/modules/content/"
RSS_TEXT_NAMESPACES = frozenset(
    {"", "http://purl.org/rss/1.0/", "http://my.netscape.com/rdf/simple/0.9/"}
)
RDF_NAMESPACE = "http://www.w3.org/1999/02/22-rdf-syntax-ns#"
RDF_ABOUT = f"{{{RDF_NAMESPACE}}}about"
ITEM_NAMES = frozenset({"item", "entry"})
# Undeclared prefixes (``<podcast:locked>`` with no xmlns) arrive from lxml's recovery as a
# literal "prefix:name" tag; these well-known prefixes are accepted in that case only.
KNOWN_PREFIXES = {"podcast": "podcast", "itunes": "itunes", "psc": "psc"}
PODCAST = "podcast"
PSC = "psc"
FEED_HISTORY = "http://purl.org/syndication/history/1.0"  # RFC 5005
ITUNES = "itunes"
OTHER = ""
# What feedparser maps fully into its own fields (#13): RSS and Atom under every namespace URI
# it reads as the format's own, itunes, content, Dublin Core and syndication, and their
# prefixes when undeclared (feedparser's loose parser goes by the prefix). Everything else is
# an extension, kept as Tag records. Kinds as split_tag gives them (URIs lower-cased).
DC_NAMESPACE = "http://purl.org/dc/elements/1.1/"
SY_NAMESPACE = "http://purl.org/rss/1.0/modules/syndication/"
MAPPED_KINDS = ITEM_NAMESPACES | {
    ITUNES,
    CONTENT_NAMESPACE,
    DC_NAMESPACE,
    SY_NAMESPACE,
    "http://backend.userland.com/rss",
    "http://blogs.law.harvard.edu/tech/rss",
    "http://purl.org/rss/1.0/modules/rss091#",
    "http://purl.org/echo/",
    "http://purl.org/pie/",
    "http://example.com/newformat#",
    "http://example.com/necho",
    "uri/of/echo/namespace#",
    "?atom",
    "?content",
    "?dc",
    "?sy",
}


@functools.lru_cache(maxsize=1024)  # a feed repeats a few dozen tag names thousands of times
def split_tag(tag: object) -> tuple[str, str]:
    """(kind, local name) of a tag: PODCAST, ITUNES, PSC, or the lower-cased other URI."""
    if not isinstance(tag, str):
        return OTHER, ""
    if tag.startswith("{"):
        uri, _, local = tag[1:].partition("}")
        uri = uri.lower()
        if uri in PODCAST_NAMESPACES:
            return PODCAST, local
        if uri in ITUNES_NAMESPACES:
            return ITUNES, local
        if uri in PSC_NAMESPACES:
            return PSC, local
        return uri, local
    prefix, colon, local = tag.partition(":")
    if colon:
        return KNOWN_PREFIXES.get(prefix.lower(), "?" + prefix), local
    return OTHER, tag


def is_extension(kind: str) -> bool:
    """Whether elements of this kind (see split_tag) are extensions, kept as Tag records."""
    return kind not in MAPPED_KINDS


def is_item(el: etree._Element) -> bool:
    kind, local = split_tag(el.tag)
    return local in ITEM_NAMES and kind in ITEM_NAMESPACES
