"""Extension elements captured losslessly as Tag records (#13), and the feed documents without them.

:mod:`~.podcast_ns` captures each scope's (the channel's, one item's) extension elements here;
one that holds feed vocabulary (a ``podcast:liveItem``'s ``<title>``, ``<link>``, ``<item>``…)
would mislead feedparser, so the scope is also written as a document without it, for
feedparser to read again (:mod:`podarchive.read.parse`).
"""

from __future__ import annotations

import copy
import functools
from dataclasses import dataclass, field

from lxml import etree

from podarchive.core.types import Tag
from podarchive.read.chapter_formats import MAX_CHAPTERS
from podarchive.read.feed_names import ITEM_NAMES, ITEM_NAMESPACES, is_extension, is_item, split_tag

# Captured elements per scope (the channel, one item); the rest are cut, with a warning.
# Twice MAX_CHAPTERS: a psc:chapters with as many chapters as are read is kept whole.
MAX_TAGS = 2 * MAX_CHAPTERS


@dataclass(slots=True)
class ScanContext:
    """What one scan shares between its scopes."""

    root: etree._Element
    encoding: str  # the body's, for the documents feedparser reads again
    nested: set[etree._Element] = field(default_factory=set)  # items in extensions


@dataclass(frozen=True, slots=True)
class Captured:
    tags: tuple[Tag, ...] = ()
    cut: bool = False
    # the scope's extension elements that hold feed vocabulary (RSS, Atom, itunes…)
    mislead: tuple[etree._Element, ...] = ()


def capture(scope: etree._Element, context: ScanContext | None = None) -> Captured:
    """The scope's extension children with their whole subtrees, as flattened Tag records.

    Document order; ``parent`` indexes the same tuple, ``position`` counts among the parent's
    children. One pass over each captured subtree (no recursion: depth is no cost); after
    MAX_TAGS records the pass goes on only to find feed vocabulary and nested items.
    """
    tags: list[Tag] = []
    mislead: list[etree._Element] = []
    cut = False
    top = 0
    for child in scope:
        kind, local = split_tag(child.tag)
        if not local or not is_extension(kind):
            continue
        misleads, child_cut, top = _capture_subtree(child, top, tags, context)
        cut = cut or child_cut
        if misleads:
            mislead.append(child)
    return Captured(tuple(tags), cut, tuple(mislead))


def _capture_subtree(
    child: etree._Element, top: int, tags: list[Tag], context: ScanContext | None
) -> tuple[bool, bool, int]:
    """Append the records of one extension child's subtree to ``tags``, MAX_TAGS at most.

    ``top`` counts the scope's captured children so far. Returns whether the subtree holds
    feed vocabulary, whether MAX_TAGS cut it, and the new ``top``.
    """
    misleads = cut = False
    counts: dict[int, int] = {}  # captured children so far, by parent index
    stack: list[tuple[etree._Element, int | None]] = [(child, None)]
    while stack:
        el, parent = stack.pop()
        if el is not child and _is_vocabulary(el, context):
            misleads = True
        if len(tags) >= MAX_TAGS:
            cut = True
            stack.extend((c, None) for c in reversed(el) if isinstance(c.tag, str))
            continue
        if parent is None:
            position, top = top, top + 1
        else:
            position = counts.get(parent, 0)
            counts[parent] = position + 1
        index = len(tags)
        tags.append(_tag(el, parent, position))
        stack.extend((c, index) for c in reversed(el) if isinstance(c.tag, str))
    return misleads, cut, top


def _is_vocabulary(el: etree._Element, context: ScanContext | None) -> bool:
    """Whether ``el`` (inside an extension element) is feed vocabulary, not an extension.

    An ``<item>``/``<entry>`` among it is noted in ``context.nested``: it is no episode.
    """
    kind, local = split_tag(el.tag)
    if is_extension(kind):
        return False
    if context is not None and local in ITEM_NAMES and kind in ITEM_NAMESPACES:
        context.nested.add(el)
    return True


@functools.lru_cache(maxsize=1024)
def _qualified(tag: str) -> tuple[str, str]:
    """(namespace URI as written, local name); an undeclared prefix (left in the tag by
    lxml's recovery) is the namespace, as ``namespaces.label`` expects."""
    if tag.startswith("{"):
        uri, _, local = tag[1:].partition("}")
        return uri, local
    prefix, colon, local = tag.partition(":")
    return (prefix, local) if colon else ("", tag)


def _tag(el: etree._Element, parent: int | None, position: int) -> Tag:
    namespace, name = _qualified(el.tag)
    return Tag(
        namespace=namespace,
        name=name,
        attributes=tuple(el.attrib.items()),
        text=_own_text(el),
        parent=parent,
        position=position,
    )


def _own_text(el: etree._Element) -> str | None:
    """The element's text and its children's tails (not their text), stripped; None if empty.

    An entity reference left unresolved counts as written (``&name;``).
    """
    if not len(el):
        text = el.text
    else:
        pieces = [el.text or ""]
        for child in el:
            if not isinstance(child.tag, str):
                pieces.append(child.text or "")
            pieces.append(child.tail or "")
        text = "".join(pieces)
    if text is None:
        return None
    return text.strip() or None


def channel_document(
    channel: etree._Element, mislead: tuple[etree._Element, ...], context: ScanContext | None
) -> bytes | None:
    """The feed without items and without ``mislead``: what feedparser should read the
    channel from. None when nothing misleads (feedparser's first reading stands)."""
    if not mislead or context is None:
        return None
    drop = set(mislead)
    root = context.root
    try:
        top = _shallow(root)
        if channel is root:
            _append_kept(top, root, drop)
        else:
            for child in root:
                if child is channel:
                    _append_kept(_sub(top, channel), channel, drop)
                elif not is_item(child):
                    top.append(copy.deepcopy(child))
        return serialize(top, context.encoding)
    except (etree.LxmlError, ValueError, TypeError):  # odd recovered names: keep the first reading
        return None


def item_document(
    item: etree._Element, mislead: tuple[etree._Element, ...], context: ScanContext | None
) -> bytes | None:
    """The item alone inside its ancestors' start tags, without ``mislead``; None when
    nothing misleads."""
    if not mislead or context is None:
        return None
    try:
        ancestors = list(item.iterancestors())
        ancestors.reverse()
        if not ancestors:
            return None
        top = parent = _shallow(ancestors[0])
        for ancestor in ancestors[1:]:
            parent = _sub(parent, ancestor)
        _append_kept(_sub(parent, item), item, set(mislead))
        return serialize(top, context.encoding)
    except (etree.LxmlError, ValueError, TypeError):
        return None


def _shallow(el: etree._Element) -> etree._Element:
    """A copy of the element's start tag: name, attributes and namespaces; no content."""
    return etree.Element(el.tag, dict(el.attrib), nsmap=el.nsmap)


def _sub(parent: etree._Element, el: etree._Element) -> etree._Element:
    copied = _shallow(el)
    parent.append(copied)
    return copied


def _append_kept(target: etree._Element, source: etree._Element, drop: set[etree._Element]) -> None:
    """Deep copies of ``source``'s children but items and ``drop``, after its text."""
    target.text = source.text
    for child in source:
        if child not in drop and not is_item(child):
            target.append(copy.deepcopy(child))


def serialize(root: etree._Element, encoding: str) -> bytes:
    """The document in the body's encoding (said in its declaration), else in UTF-8."""
    try:
        return bytes(etree.tostring(root, encoding=encoding, xml_declaration=True))
    except (LookupError, ValueError, etree.LxmlError):
        return bytes(etree.tostring(root, encoding="utf-8", xml_declaration=True))
