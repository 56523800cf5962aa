"""The Beautiful Soup adapter: parsing markup with lxml, and small helpers over the tree.

Every walk here is iterative (bs4's ``descendants`` follows ``next_element``), so deeply
nested pages cannot exhaust the recursion limit.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from bs4 import BeautifulSoup
from bs4.element import Tag
from bs4.exceptions import ParserRejectedMarkup
from bs4.filter import SoupStrainer

from podarchive.extract.decode import valid

_XML_DECLARATION_RE = re.compile(r"\s*<\?xml[^>]*>")


def parse(
    markup: str, strainer: SoupStrainer | None = None, *, huge_tree: bool = False
) -> BeautifulSoup | None:
    """``markup`` parsed by lxml, or None if there is nothing to parse."""
    if "<" not in markup:  # also keeps bs4's MarkupResemblesLocatorWarning away
        return None
    if "<?xml" in markup:  # a plain find first: the expression tries a match at every offset
        markup = _XML_DECLARATION_RE.sub("", markup, count=1)  # avoids XMLParsedAsHTMLWarning
    try:
        data = markup.encode("utf-8")  # bytes parse faster
    except UnicodeEncodeError:  # lone surrogates
        data = valid(markup).encode("utf-8")
    try:
        return BeautifulSoup(
            data, "lxml", from_encoding="utf-8", parse_only=strainer, huge_tree=huge_tree
        )
    except ParserRejectedMarkup:
        return None


def tags(root: Tag, *names: str) -> Iterator[Tag]:
    """The elements under ``root`` in document order (only ``names``, if given); iterative."""
    wanted = frozenset(names)
    for node in root.descendants:  # follows next_element: no recursion, no per-tag lists
        if isinstance(node, Tag) and (not wanted or node.name in wanted):
            yield node


def child_tags(tag: Tag) -> list[Tag]:
    """The element children of ``tag``."""
    return [child for child in tag.contents if isinstance(child, Tag)]


def attr(tag: Tag, name: str) -> str:
    """An attribute's value as one string (multi-valued ones space-joined), ``""`` if absent."""
    value = tag.get(name)
    if value is None:
        return ""
    return value if isinstance(value, str) else " ".join(value)


def classes(tag: Tag) -> list[str]:
    """The classes of ``tag``."""
    return attr(tag, "class").split()


def collapse(text: str) -> str:
    """``text`` with each run of whitespace as one space, stripped."""
    return " ".join(text.split())
