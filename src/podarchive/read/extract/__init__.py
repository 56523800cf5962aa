"""Show notes and links from HTML: the only package that uses Beautiful Soup. Pure functions.

* :func:`extract_links` — every http(s) ``<a href>`` of a fragment, absolute, in document order.
* :func:`html_to_text` — plain text of a fragment, one line per block.
* :func:`extract_page` — the show notes of an episode page: the first extractor in
  ``registry.EXTRACTORS`` (``simplecast``, then ``generic``) that finds them; given the feed's
  notes (``feed_notes=``), the page block that carries them. The result says how
  (``method``, ``evidence``, ``confidence``) and holds the page's own transcript, kept out of
  the notes (``transcript``).
* :func:`discover_feeds`, :func:`page_title`, :func:`page_links`, :func:`sitemap_entries` —
  what a site tells about itself (``site``).

Modules: ``decode`` (bytes → text), ``soup`` (the bs4 adapter), ``links``, ``text``,
``markup`` (inner HTML), ``page`` (what an extractor gets), ``simplecast``, ``generic`` and
``boilerplate``, ``platforms`` (platform furniture), ``transcript`` (on-page transcripts),
``trim`` (tidying the chosen block), ``lead`` (the lead paragraph it left out), ``edges``
(the episode's header and the show's sections around the notes) and ``lines`` (what a line
says, by its text), ``structured`` (JSON-LD, Open Graph, app state), ``guided`` (the block
that carries a reference text), ``assemble`` (notes from parts or a reference), ``registry``,
``site``. Only ``extract_page`` raises, and only :class:`~podarchive.core.errors.ExtractError`.
Every walk over the tree is iterative, so deeply
nested pages cannot exhaust the recursion limit.
"""

from __future__ import annotations

from podarchive.read.extract.boilerplate import (
    BOILERPLATE_ROLES,
    BOILERPLATE_TAGS,
    BOILERPLATE_WORD_RE,
    PROTECTED_TAGS,
    STATE_CLASS_PREFIXES,
)
from podarchive.read.extract.decode import HTML_MEDIA_TYPES, SNIFFED_MEDIA_TYPES
from podarchive.read.extract.generic import BLOCK_TAGS, MIN_NOTES_CHARS, SCORED_PARAGRAPH_TAGS
from podarchive.read.extract.links import extract_links
from podarchive.read.extract.registry import extract_page
from podarchive.read.extract.site import (
    FEED_LINK_TYPES,
    discover_feeds,
    page_links,
    page_title,
    sitemap_entries,
)
from podarchive.read.extract.soup import HEADING_TAGS
from podarchive.read.extract.text import (
    INVISIBLE_TAGS,
    LINE_TAGS,
    PARAGRAPH_TAGS,
    html_to_text,
    notes_text_and_links,
)

__all__ = [
    "BLOCK_TAGS",
    "BOILERPLATE_ROLES",
    "BOILERPLATE_TAGS",
    "BOILERPLATE_WORD_RE",
    "FEED_LINK_TYPES",
    "HEADING_TAGS",
    "HTML_MEDIA_TYPES",
    "INVISIBLE_TAGS",
    "LINE_TAGS",
    "MIN_NOTES_CHARS",
    "PARAGRAPH_TAGS",
    "PROTECTED_TAGS",
    "SCORED_PARAGRAPH_TAGS",
    "SNIFFED_MEDIA_TYPES",
    "STATE_CLASS_PREFIXES",
    "discover_feeds",
    "extract_links",
    "extract_page",
    "html_to_text",
    "notes_text_and_links",
    "page_links",
    "page_title",
    "sitemap_entries",
]
