"""The Beautiful Soup adapter: parsing markup with lxml, and small helpers over the tree.

Every walk here is iterative (bs4's ``descendants`` follows ``next_element``), so deeply
nested pages cannot exhaust the recursion limit.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping

from bs4 import BeautifulSoup
from bs4.builder._lxml import LXMLTreeBuilder
from bs4.element import Tag
from bs4.exceptions import ParserRejectedMarkup
from bs4.filter import SoupStrainer

from podarchive.read.extract.decode import valid

_XML_DECLARATION_RE = re.compile(r"\s*<\?xml[^>]*>")
_NO_NAMESPACES: Mapping[str, str] = {}


#: The heading elements, most important first.
HEADING_TAGS = ("h1", "h2", "h3", "h4", "h5", "h6")


def parse(
    markup: str,
    strainer: SoupStrainer | None = None,
    *,
    huge_tree: bool = False,
    lean: bool = False,
) -> BeautifulSoup | None:
    """``markup`` parsed by lxml, or None if there is nothing to parse.

    ``lean``: for callers that read no ``class`` (or other space-separated) attribute as a
    list: bs4 leaves every attribute value the string it is, a step less per tag (6% of
    the tree build of a feed's notes), and :class:`_LeanBuilder` hands lxml's events on
    (another 15–20%). The tree is the same otherwise (``tests/test_extract.py``).
    """
    if "<" not in markup:  # also keeps bs4's MarkupResemblesLocatorWarning away
        return None
    if "<?xml" in markup:  # a plain find first: the expression tries a match at every offset
        markup = _XML_DECLARATION_RE.sub("", markup, count=1)  # avoids XMLParsedAsHTMLWarning
    try:
        data = markup.encode("utf-8")  # bytes parse faster
    except UnicodeEncodeError:  # lone surrogates
        data = valid(markup).encode("utf-8")
    try:
        if lean:
            builder = _LeanBuilder(huge_tree=huge_tree, multi_valued_attributes=None)
            return BeautifulSoup(data, builder=builder, from_encoding="utf-8", parse_only=strainer)
        return BeautifulSoup(
            data, "lxml", from_encoding="utf-8", parse_only=strainer, huge_tree=huge_tree
        )
    except ParserRejectedMarkup:
        return None


class _LeanBuilder(LXMLTreeBuilder):
    """bs4's lxml HTML tree builder, with the namespace work skipped where there is none.

    bs4's ``start`` copies every tag's attributes twice and looks for namespaces in each
    name, for lxml's XML parser; lxml's HTML parser reports no namespace (no nsmap, no
    ``{uri}name``), and then the same tag is made with one copy. Anything with a namespace
    goes through bs4's own code.
    """

    def start(
        self,
        tag: str | bytes,
        attrib: dict[str | bytes, str | bytes],
        nsmap: Mapping[str, str] = _NO_NAMESPACES,
    ) -> None:
        soup = self.soup
        if nsmap or soup is None or len(self.nsmaps) > 1 or type(tag) is not str or tag[:1] == "{":
            super().start(tag, attrib, dict(nsmap))
            return
        attrs = self.attribute_dict_class()
        for key, value in attrib.items():
            if type(key) is not str or key[:1] == "{" or type(value) is not str:
                super().start(tag, attrib, dict(nsmap))  # a namespaced attribute: bs4's way
                return
            attrs[key] = value
        soup.handle_starttag(tag, None, None, attrs, namespaces=self.active_namespace_prefixes[-1])

    def end(self, tag: str | bytes) -> None:
        soup = self.soup
        if soup is None or len(self.nsmaps) > 1 or not isinstance(tag, str) or tag[:1] == "{":
            super().end(tag)
            return
        soup.endData()
        soup.handle_endtag(tag, None)


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


def first_child_with_text(tag: Tag) -> Tag | None:
    """The first element child of ``tag`` that has text, if any."""
    return next((child for child in child_tags(tag) if collapse(child.get_text())), None)


def classes(tag: Tag) -> list[str]:
    """The classes of ``tag``."""
    return attr(tag, "class").split()


def collapse(text: str) -> str:
    """``text`` with each run of whitespace as one space, stripped."""
    return " ".join(text.split())
