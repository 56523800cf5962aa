"""A feed body cut at its items, as raw bytes: what the item cache (#7) and snapshot deltas
stand on.

:func:`split_items` makes a byte-level cut (``bytes.find``, no tree) into the skeleton and
the items, and hashes each item in its feed's context; :class:`FeedSplit` holds the cut and
rebuilds documents of chosen items. The one tree it needs, to be sure the skeleton is
well-formed, comes from :func:`podarchive.read.podcast_ns.well_formed` (the lxml adapter).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from dataclasses import dataclass

from podarchive.read.podcast_ns import well_formed

_TAG_END = b" \t\r\n>/"
_ASCII_BOMLESS = (b"\xfe\xff", b"\xff\xfe", b"\x00")


@dataclass(frozen=True, slots=True)
class FeedSplit:
    """A feed body cut into its skeleton (channel part) and its items, as raw bytes.

    ``body == head + middle + tail`` where ``middle = body[start:end]`` holds every item,
    separated by whitespace only. ``hashes[i]`` identifies item ``i``'s bytes *in this
    feed's context* (prolog and root/channel start tags, the URL and charset it came with),
    so an item only counts as known when feedparser would read it the same way.
    """

    body: bytes
    start: int
    end: int
    spans: tuple[tuple[int, int], ...]
    hashes: tuple[str, ...]
    prefix: bytes  # the context digest every hash starts from

    def region_hashes(self, most: int) -> list[tuple[int, str]]:
        """(start offset, hash) of the items region from item k to the end, k < ``most``.

        Region 0 is the whole items region. A body that only prepends items to an earlier
        body (a new episode on top) has a region whose hash is the earlier body's region 0.
        Region k hashes the prefix, then item k's digest, the whitespace after it, item
        k+1's digest, and so on to the last digest.
        """
        pieces: list[bytes] = []
        previous = self.spans[0][0] if self.spans else 0
        for (a, b), digest in zip(self.spans, self.hashes, strict=True):
            if pieces:
                pieces.append(self.body[previous:a])
            pieces.append(digest.encode())
            previous = b
        return [
            (self.spans[k][0], hashlib.sha256(self.prefix + b"".join(pieces[2 * k :])).hexdigest())
            for k in range(min(most, len(self.spans)))
        ]

    @property
    def head(self) -> bytes:
        return self.body[: self.start]

    @property
    def tail(self) -> bytes:
        return self.body[self.end :]

    def document(self, indexes: Iterable[int]) -> bytes:
        """The skeleton with only the items at ``indexes`` (document order kept)."""
        parts = [self.head]
        parts.extend(self.body[a:b] + b"\n" for a, b in (self.spans[i] for i in indexes))
        parts.append(self.tail)
        return b"".join(parts)


def split_items(body: bytes, context: str = "") -> FeedSplit | None:
    """Split an RSS (``<item>``) or Atom (``<entry>``) body into skeleton and items.

    A byte-level cut (``bytes.find``, no tree), accepted only when it is unambiguous: an
    ASCII-compatible encoding, unprefixed item tags neither nested nor self-closing, only
    whitespace between items, none in the skeleton, and a skeleton that lxml's strict,
    hardened parser reads as well-formed XML. Anything else gives None: parse it all.
    """
    if not body or body.startswith(_ASCII_BOMLESS) or b"\x00" in body[:64]:
        return None
    tag = b"item" if body.find(b"<item") >= 0 else b"entry"
    spans = _item_spans(body, tag)
    if not spans:
        return None
    start, end = spans[0][0], spans[-1][1]
    head, tail = body[:start], body[end:]
    if b"<" + tag in tail or b":" + tag in head or b":" + tag in tail:
        return None
    if not well_formed(head + tail):
        return None
    prefix = hashlib.sha256(context.encode("utf-8", "replace") + b"\0" + _context(head)).digest()
    hashes = tuple(_item_hash(prefix, body, a, b) for a, b in spans)
    return FeedSplit(body, start, end, tuple(spans), hashes, prefix)


def _item_spans(body: bytes, tag: bytes) -> list[tuple[int, int]] | None:
    """(start, end) of every item, in order; None when the body cannot be cut at its items."""
    opening = b"<" + tag
    spans: list[tuple[int, int]] = []
    pos = body.find(opening)
    while pos >= 0:
        end = _item_end(body, tag, pos)
        if end < 0:
            return None
        if spans and body[spans[-1][1] : pos].strip():
            return None  # something other than whitespace between two items
        spans.append((pos, end))
        pos = body.find(opening, end)
    return spans


def _item_end(body: bytes, tag: bytes, pos: int) -> int:
    """Where the item opened at ``pos`` ends (after its end tag's ``>``); -1 when it cannot be
    cut there: another tag that starts alike, self-closing, unclosed or nested."""
    opening, closing = b"<" + tag, b"</" + tag
    after = body[pos + len(opening) : pos + len(opening) + 1]
    if not after or after not in _TAG_END:
        return -1  # <items>, <itemized>…: not worth telling apart here
    gt = body.find(b">", pos)
    close = _close_of(body, tag, pos)  # -1 also when nested or an item start in its text
    if gt < 0 or close < 0 or body[gt - 1 : gt] == b"/":
        return -1
    stop = body.find(b">", close)
    if stop < 0 or body[close + len(closing) : stop].strip():
        return -1
    return stop + 1


def _close_of(body: bytes, tag: bytes, pos: int) -> int:
    """Where the item opened at ``pos`` closes (its ``</tag``), in one pass over the item.

    -1 when it never closes, or when another ``<tag`` comes first (a nested item, or an
    item start inside the item's text): either way the body cannot be cut at items.
    """
    at = pos + 2  # the name of a later opening starts at pos + 2 or after; so does a closing's
    while (at := body.find(tag, at)) >= 0:
        if body[at - 1 : at] == b"<":
            return -1
        if body[at - 2 : at] == b"</":
            return at - 2
        at += 1
    return -1


def _item_hash(prefix: bytes, body: bytes, start: int, end: int) -> str:
    digest = hashlib.sha256(prefix)
    digest.update(memoryview(body)[start:end])
    return digest.hexdigest()


def _context(head: bytes) -> bytes:
    """The skeleton bytes that change how an item reads: prolog, root and channel start tags."""
    channel = head.find(b"<channel")
    cut = head.find(b">", channel) if channel >= 0 else -1
    if cut < 0:
        root = 0
        while (root := head.find(b"<", root)) >= 0 and head[root + 1 : root + 2] in (b"?", b"!"):
            root += 1
        cut = head.find(b">", root) if root >= 0 else len(head)
    return head[: cut + 1]
