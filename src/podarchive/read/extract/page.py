"""What an extractor is given and what it offers: :class:`Page` and :class:`Extractor`."""

from __future__ import annotations

import functools
from typing import Protocol

from bs4 import BeautifulSoup

from podarchive.core.errors import ExtractError
from podarchive.core.types import PageNotes
from podarchive.read.extract.links import page_base
from podarchive.read.extract.soup import parse


class Page:
    """An episode page being extracted: its decoded text and URL, parsed when first asked.

    Every extractor sees the same tree, parsed once, including whatever an earlier extractor
    removed from it; the base URL is read before any extractor touches the tree.
    """

    def __init__(self, text: str, url: str, feed_notes: str | None = None) -> None:
        self.text = text
        self.url = url
        self.feed_notes = feed_notes.strip() if feed_notes else None  # the feed's description

    @functools.cached_property
    def lowered(self) -> str:
        """The page's text in lower case, for cheap looks before a walk of the tree."""
        return self.text.lower()

    @functools.cached_property
    def _tree(self) -> tuple[BeautifulSoup, str | None]:
        soup = parse(self.text, huge_tree=True)
        if soup is None:
            raise ExtractError("not HTML: the parser rejected the page")
        return soup, page_base(soup, self.text, self.url)

    @property
    def soup(self) -> BeautifulSoup:
        """The whole page parsed; :class:`ExtractError` if lxml rejects it."""
        return self._tree[0]

    @property
    def base_url(self) -> str | None:
        """What relative links resolve against: the page's ``<base href>``, else its URL."""
        return self._tree[1]


class Extractor(Protocol):
    """One way to find show notes. A module defining these two functions is one."""

    def applies(self, text: str, url: str) -> bool:
        """Whether to try it on the page with this text and URL: a cheap look, no parsing."""

    def notes(self, page: Page) -> PageNotes | None:
        """The page's show notes, or None to leave the page to the next extractor."""
