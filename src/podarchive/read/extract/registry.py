"""The extractors :func:`extract_page` tries, in order, and :func:`extract_page` itself.

A host's own extractor is a module with ``applies(text, url)`` and ``notes(page)`` (see
:class:`~podarchive.read.extract.page.Extractor`), listed in :data:`EXTRACTORS` before ``generic``.
"""

from __future__ import annotations

from podarchive.core.errors import ExtractError
from podarchive.core.types import PageNotes
from podarchive.read.extract import generic, simplecast
from podarchive.read.extract.decode import decode_page
from podarchive.read.extract.page import Extractor, Page

#: Tried in this order; the first notes found win. ``generic`` applies to every page.
EXTRACTORS: tuple[Extractor, ...] = (simplecast, generic)


def extract_page(
    html: bytes | str,
    url: str,
    *,
    content_type: str | None = None,
    feed_notes: str | None = None,
) -> PageNotes:
    """The show notes of an episode page fetched from ``url``.

    ``feed_notes``: the episode's description in its feed (HTML or text), when known; the
    page block that carries it is then the notes (``method="feed-match"``). Raises
    :class:`ExtractError` with a one-line reason ("not HTML …", "no show notes found").
    """
    page = Page(decode_page(html, content_type), url, feed_notes)
    for extractor in EXTRACTORS:
        if extractor.applies(page.text, url):
            notes = extractor.notes(page)
            if notes is not None:
                return notes
    raise ExtractError("no show notes found")
