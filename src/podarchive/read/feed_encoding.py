"""Feed bytes as feedparser and lxml can read them: decoded as declared, costing only the bad.

Issue #17: one bad byte or character costs that character, never the feed. The body is
decoded as declared: its BOM, else the HTTP charset, else the XML declaration, else UTF-8
(RFC 7303). :func:`readable` then gives back

* a body that decodes strictly and holds no forbidden character reference untouched (the
  fast path: a strict decode, skipped for ASCII, and one search);
* otherwise, each reference to a character XML forbids (a lone surrogate, a C0 control but
  tab/LF/CR, U+FFFE, U+FFFF, beyond U+10FFFF) as U+FFFD, except in CDATA and comments; each
  byte sequence invalid in the declared encoding as one U+FFFD, the rest decoded as declared
  and re-encoded as UTF-8 (the header and the XML declaration saying so), unless the label is
  plainly wrong (no BOM, more than 3 bad sequences and more of them than non-ASCII characters
  that decoded well: feedparser's fallbacks then read it, as before);
* and one counted warning per kind of repair.

Pure: stdlib only. :mod:`podarchive.read.parse` is its one user.
"""

from __future__ import annotations

import codecs
import functools
import re
from collections.abc import Mapping, Sequence
from typing import AnyStr

from podarchive.core.mediatype import decode_counting

_BOMS = (
    (b"\x00\x00\xfe\xff", "utf-32be"),
    (b"\xff\xfe\x00\x00", "utf-32le"),
    (b"\xef\xbb\xbf", "utf-8"),
    (b"\xfe\xff", "utf-16be"),
    (b"\xff\xfe", "utf-16le"),
)


def bom_charset(body: bytes) -> str | None:
    """The encoding a byte-order mark at the start of ``body`` names, if there is one."""
    return next((charset for bom, charset in _BOMS if body.startswith(bom)), None)


_CHARSET = re.compile(r"""charset\s*=\s*["']?([^"';\s]+)""", re.IGNORECASE)


def xml_content_type(content_type: str) -> str:
    """``application/xml``, keeping only the header's charset (RFC 7303 order).

    Servers label feeds with every media type there is (``text/plain``,
    ``application/octet-stream``, ``text/xml`` without a charset, which feedparser would
    read as US-ASCII). The body decides whether it is a feed; the header only ever
    contributes its charset, which outranks the XML declaration but not a BOM.
    """
    match = _CHARSET.search(content_type)
    return f"application/xml; charset={match.group(1)}" if match else "application/xml"


# --- decoding ------------------------------------------------------------------------------

# A character reference to a character XML forbids: C0 controls but tab, LF and CR; lone
# surrogates; U+FFFE, U+FFFF; beyond U+10FFFF. Leading zeros allowed; nothing else matches.
_FORBIDDEN_REF_SOURCE = (
    r"&#(?:[xX]0*(?:[0-8bBcCeEfF]|1[0-9a-fA-F]|[dD][89a-fA-F][0-9a-fA-F]{2}|[fF]{3}[eEfF]"
    r"|(?:1[1-9a-fA-F]|[2-9a-fA-F][0-9a-fA-F])[0-9a-fA-F]{4}|[1-9a-fA-F][0-9a-fA-F]{6,})"
    r"|0*(?:[0-8]|1[124-9]|2[0-9]|3[01]"
    r"|5(?:5(?:29[6-9]|[3-9][0-9]{2})|6[0-9]{3}|7(?:[0-2][0-9]{2}|3[0-3][0-9]|34[0-3]))"
    r"|6553[45]|111411[2-9]|11141[2-9][0-9]|1114[2-9][0-9]{2}|111[5-9][0-9]{3}"
    r"|11[2-9][0-9]{4}|1[2-9][0-9]{5}|[2-9][0-9]{6}|[1-9][0-9]{7,}));"
)
_FORBIDDEN_REF = re.compile(_FORBIDDEN_REF_SOURCE.encode())
_FORBIDDEN_REF_TEXT = re.compile(_FORBIDDEN_REF_SOURCE)
# CDATA sections and comments are text: a reference in them is not one, and stays as is.
_SKIPPED = r"<!\[CDATA\[.*?\]\]>|<!--.*?-->|"
_REF_OR_SKIPPED = re.compile(f"{_SKIPPED}({_FORBIDDEN_REF_SOURCE})".encode(), re.S)
_REF_OR_SKIPPED_TEXT = re.compile(f"{_SKIPPED}({_FORBIDDEN_REF_SOURCE})", re.S)
_SURROGATE = re.compile("[\ud800-\udfff]")
_XML_PI_ENCODING = re.compile(rb"""^<\?.*encoding=['"](.*?)['"].*\?>""")  # feedparser's
_DECLARED_ENCODING = re.compile(r"""\A(\s*<\?xml\s[^>]*?encoding\s*=\s*)(["'])[^"'>]*\2""")
_WIDE_MARKERS = (
    (b"\x00\x00\x00<", "utf-32be"),
    (b"<\x00\x00\x00", "utf-32le"),
    (b"\x00<\x00?", "utf-16be"),
    (b"<\x00?\x00", "utf-16le"),
    (b"Lo\xa7\x94", "cp037"),
)
# Decoders that can return lone surrogates from bytes they accept.
_SURROGATE_DECODERS = frozenset(
    {"utf-7", "unicode-escape", "raw-unicode-escape", "punycode", "idna"}
)
_REF_KINDS = (  # (one, as counted, plural)
    ("a lone surrogate", "lone surrogate", "lone surrogates"),
    ("a control character", "control character", "control characters"),
    ("a noncharacter", "noncharacter", "noncharacters"),
    ("beyond U+10FFFF", "beyond U+10FFFF", "beyond U+10FFFF"),
)
FFFD = "\ufffd"
_FEW_BAD = 3  # bad sequences always taken for stray bytes, however few decode well


def readable(body: bytes, headers: dict[str, str]) -> tuple[bytes, dict[str, str], tuple[str, ...]]:
    """``body`` as feedparser and lxml can read it, its headers, and what was replaced.

    A body that decodes strictly in its declared encoding and holds no forbidden character
    reference is returned as is (the fast path: a strict decode and a search). Otherwise
    each bad byte sequence and each forbidden reference becomes U+FFFD; a body that did not
    decode is re-encoded as UTF-8 (its declaration and the header saying so).
    """
    charset = _declared_charset(body, headers)
    try:
        return _repaired(body, headers, charset)
    except (ValueError, LookupError):  # a codec that is no text encoding after all (idna…)
        return _without_forbidden_refs(body, headers)


def _repaired(
    body: bytes, headers: dict[str, str], charset: str
) -> tuple[bytes, dict[str, str], tuple[str, ...]]:
    kind = _codec_kind(charset)
    data = body[len(_bom_of(body)) :]
    if kind == "unknown" or (kind == "ascii" and data.isascii()):
        return _without_forbidden_refs(body, headers)
    try:
        text = data.decode(charset)
    except UnicodeDecodeError:
        decoded = _decoded(data, charset, trusted=len(data) < len(body))
        if decoded is None:  # not in the declared encoding at all: feedparser's fallbacks
            return _without_forbidden_refs(body, headers)
        return _as_utf8(*decoded, charset, headers)
    if (kind == "wide" and _FORBIDDEN_REF_TEXT.search(text)) or (
        _codec_name(charset) in _SURROGATE_DECODERS and _SURROGATE.search(text)
    ):
        return _as_utf8(*_SURROGATE.subn(FFFD, text), charset, headers)
    return (body, headers, ()) if kind == "wide" else _without_forbidden_refs(body, headers)


def _decoded(data: bytes, charset: str, trusted: bool) -> tuple[str, int] | None:
    """``data`` decoded with U+FFFD for each bad sequence, and how many there were.

    None when the declaration looks wrong rather than a few bytes: more than
    :data:`_FEW_BAD` bad sequences and fewer non-ASCII characters that decoded well (a
    Latin-1 feed labelled UTF-8). A byte-order mark is always believed.
    """
    text, bad = decode_counting(data, charset)
    good = len(text) - len(text.encode("ascii", "ignore")) - bad
    if not trusted and bad > max(good, _FEW_BAD):
        return None
    text, surrogates = _SURROGATE.subn(FFFD, text)
    return text, bad + surrogates


def _as_utf8(
    text: str, bad: int, charset: str, headers: dict[str, str]
) -> tuple[bytes, dict[str, str], tuple[str, ...]]:
    """Decoded ``text`` (``bad`` sequences replaced) as a UTF-8 body, refs replaced too."""
    text, counts = _replace_refs(text, _REF_OR_SKIPPED_TEXT, FFFD)
    text = _DECLARED_ENCODING.sub(r"\1\2utf-8\2", text, count=1)
    warnings = _ref_warnings(counts)
    if bad:
        sequences = _counted(bad, f"invalid {charset} byte sequence")
        warnings = (f"replaced {sequences} with U+FFFD", *warnings)
    utf8_headers = {**headers, "content-type": "application/xml; charset=utf-8"}
    return text.encode("utf-8"), utf8_headers, warnings


def _declared_charset(body: bytes, headers: Mapping[str, str]) -> str:
    """BOM (already in the header), HTTP charset, XML declaration, else UTF-8: feedparser's
    reading of what :func:`_feedparser_headers` gives it."""
    match = _CHARSET.search(headers.get("content-type", ""))
    charset = match.group(1) if match else _xml_encoding(body) or "utf-8"
    charset = charset.lower()
    return "gb18030" if charset == "gb2312" else charset


def _xml_encoding(body: bytes) -> str | None:
    """The XML declaration's encoding, read as feedparser reads it (UTF-16/32 sniffed)."""
    head = body[:1024]
    marker = next((enc for m, enc in _WIDE_MARKERS if head.startswith(m)), None)
    if marker:
        head = head.decode(marker, "ignore").encode("utf-8")
    match = _XML_PI_ENCODING.match(head)
    if match is None:
        return None
    declared = match.group(1).decode("utf-8", "replace").lower()
    if marker and declared.replace("_", "-") in ("utf-16", "utf16", "utf-32", "utf32"):
        return marker
    return declared


def _bom_of(body: bytes) -> bytes:
    return next((bom for bom, _ in _BOMS if body.startswith(bom)), b"")


@functools.lru_cache(maxsize=64)
def _codec_kind(charset: str) -> str:
    """``ascii`` when the codec writes ``&#…;`` and markup as ASCII does, ``wide`` when it
    does not (UTF-16, EBCDIC…), ``unknown`` when Python has no such text codec."""
    probe = "<![CDATA[]]><!-- -->&#x0123456789abcdefABCDEF;"
    try:
        return "ascii" if probe.encode(charset) == probe.encode("ascii") else "wide"
    except LookupError:
        return "unknown"
    except UnicodeError:
        return "wide"


@functools.lru_cache(maxsize=64)
def _codec_name(charset: str) -> str:
    return codecs.lookup(charset).name


def _without_forbidden_refs(
    body: bytes, headers: dict[str, str]
) -> tuple[bytes, dict[str, str], tuple[str, ...]]:
    """``body`` with each forbidden character reference (outside CDATA) as ``&#xFFFD;``."""
    if _FORBIDDEN_REF.search(body) is None:
        return body, headers, ()
    fixed, counts = _replace_refs(body, _REF_OR_SKIPPED, b"&#xFFFD;")
    return fixed, headers, _ref_warnings(counts)


def _replace_refs(
    data: AnyStr, pattern: re.Pattern[AnyStr], replacement: AnyStr
) -> tuple[AnyStr, list[int]]:
    """``data`` with the forbidden references ``pattern`` finds replaced; counts by kind."""
    counts = [0] * len(_REF_KINDS)

    def replace(match: re.Match[AnyStr]) -> AnyStr:
        ref = match.group(1)
        if ref is None:  # a CDATA section or a comment
            return match.group()
        counts[_ref_kind(ref.decode("ascii") if isinstance(ref, bytes) else ref)] += 1
        return replacement

    return pattern.sub(replace, data), counts


def _ref_kind(ref: str) -> int:
    """Index in :data:`_REF_KINDS` of a forbidden reference ``&#…;``."""
    digits = ref[2:-1].lstrip("xX0") if ref[2:3] in "xX" else ref[2:-1].lstrip("0")
    if len(digits) > 8:
        return 3
    code = int(digits or "0", 16 if ref[2:3] in "xX" else 10)
    if 0xD800 <= code <= 0xDFFF:
        return 0
    return 1 if code < 0x20 else 2 if code <= 0xFFFF else 3


def _ref_warnings(counts: Sequence[int]) -> tuple[str, ...]:
    total = sum(counts)
    if not total:
        return ()
    if total == 1:
        kinds = next(k[0] for k, n in zip(_REF_KINDS, counts, strict=True) if n)
    else:
        kinds = ", ".join(
            f"{n:,} {k[1] if n == 1 else k[2]}"
            for k, n in zip(_REF_KINDS, counts, strict=True)
            if n
        )
    return (f"replaced {_counted(total, 'invalid character reference')} ({kinds}) with U+FFFD",)


def _counted(count: int, noun: str) -> str:
    """``1 thing``, ``2,000 things``."""
    return f"{count:,} {noun}" if count == 1 else f"{count:,} {noun}s"
