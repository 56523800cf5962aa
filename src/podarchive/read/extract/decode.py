"""Page bytes to page text: media type, charset, byte-order marks and lone surrogates.

No HTML parsing happens here; :func:`decode_page` only refuses what is plainly not HTML.
"""

from __future__ import annotations

import re

from podarchive.core.errors import ExtractError
from podarchive.core.mediatype import WINDOWS_1252_LABELS, parse_content_type

#: Media types accepted as HTML; a missing or octet-stream type is sniffed instead.
HTML_MEDIA_TYPES = frozenset({"text/html", "application/xhtml+xml"})
SNIFFED_MEDIA_TYPES = frozenset({"", "application/octet-stream"})

_FEED_ROOT_RE = re.compile(
    r"\s*(?:<\?[^>]*>\s*|<!--.*?-->\s*|<!DOCTYPE[^>]*>\s*)*<(?:rss|feed|rdf:RDF)[\s>]", re.I | re.S
)
_SURROGATE_RE = re.compile("[\ud800-\udfff]")
_META_CHARSET_RE = re.compile(rb"<meta[^>]+charset\s*=\s*[\"']?\s*([A-Za-z0-9_.:-]+)", re.I)
_BOMS = (
    (b"\xef\xbb\xbf", "utf-8"),
    (b"\xff\xfe", "utf-16-le"),
    (b"\xfe\xff", "utf-16-be"),
)


def decode_page(body: bytes | str, content_type: str | None) -> str:
    """The text of a page with markup, else :class:`ExtractError` ("not HTML: …")."""
    media_type, charset = parse_content_type(content_type)
    if media_type not in HTML_MEDIA_TYPES | SNIFFED_MEDIA_TYPES:
        raise ExtractError(f"not HTML: {media_type}")
    text = valid(body if isinstance(body, str) else _decode_bytes(body, charset))
    text = text.removeprefix("\ufeff")
    if "<" not in text:
        raise ExtractError("not HTML: no markup")
    if _FEED_ROOT_RE.match(text[:4096]):
        raise ExtractError("not HTML: looks like a feed")
    return text


def valid(text: str) -> str:
    """``text`` with each lone surrogate (which SQLite refuses to store) as U+FFFD."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return _SURROGATE_RE.sub("\ufffd", text)
    return text


def _decode_bytes(body: bytes, charset: str | None) -> str:
    """Decode by BOM, then the header charset, then ``<meta charset>``, else UTF-8."""
    for bom, encoding in _BOMS:
        if body.startswith(bom):
            return body[len(bom) :].decode(encoding, "replace")
    if charset is None:
        match = _META_CHARSET_RE.search(body[:4096])
        charset = match[1].decode("ascii") if match else None
    try:
        return body.decode(_usable_encoding(charset), "replace")
    except LookupError:  # an unknown charset, or a codec that is not a text encoding
        return body.decode("utf-8", "replace")


def _usable_encoding(charset: str | None) -> str:
    """The codec for a declared charset, following the WHATWG aliases (UTF-8 if none)."""
    if not charset:
        return "utf-8"
    label = charset.strip().lower()
    if label in WINDOWS_1252_LABELS:
        return "cp1252"
    if label.startswith("utf-16"):  # a readable meta tag cannot truly mean UTF-16
        return "utf-8"
    return label
