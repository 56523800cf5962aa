"""Transcript bytes → time-coded segments: SRT, WebVTT, Podcasting 2.0 JSON, HTML, plain text.

Pure: bytes in, values out, no I/O. :func:`parse_transcript` is the API; it raises only
:class:`~podarchive.core.errors.TranscriptError`, and only for a body with nothing to read (empty,
binary, or declared/sniffed JSON that is not JSON). Everything else malformed is read as far
as it goes and reported in ``ParsedTranscript.warnings``: one line per kind of problem, with
its count and at most :data:`~.transcript_cues.MAX_EXAMPLES` examples, so a broken 2-hour
file gives a handful of lines, not thousands. The readers are :mod:`~.transcript_cues` (SRT,
WebVTT) and :mod:`~.transcript_markup` (JSON, HTML, plain text).

**Format.** The declared media type (the ``type`` attribute of ``podcast:transcript`` or the
Content-Type) first, then the URL's extension, then the bytes: ``WEBVTT`` → vtt, a ``-->``
timing line → srt, ``{``/``[`` → json, ``<html``/``<p``/``<cite`` → html, else plain text. A
body declared as plain text or as an unknown type that sniffs as another format is parsed as
that format (with a warning); a declared format that yields no segment while the bytes sniff as
another is parsed again as that one (with a warning).

**Decoding.** A byte-order mark (UTF-8, UTF-16, UTF-32) wins; then the Content-Type charset;
else UTF-8. When the charset is absent or UTF-8 and the body is not valid UTF-8, it is decoded
as windows-1252 if it has more bad UTF-8 sequences than well-formed non-ASCII characters (a
Latin-1/cp1252 file with no label, or mislabelled UTF-8), with a warning; otherwise UTF-8 with
U+FFFD for each bad sequence, with a warning counting them. An unknown charset falls back to
the same rule. UTF-16 without a BOM is recognised by its NUL pattern.

**Times** are seconds (float, rounded to the millisecond). A cue whose timing line does not
parse keeps its text with ``start = end = None``; an end before its start becomes None;
overlapping cues are kept as they are. Every pattern is anchored or uses negated classes and
long tokens are refused before any regex sees them, so the work is linear in the body.
"""

from __future__ import annotations

import codecs
import math
import re

from podarchive.core.errors import TranscriptError
from podarchive.core.mediatype import WINDOWS_1252_LABELS, decode_counting, parse_content_type
from podarchive.core.types import ParsedTranscript, TranscriptSegment
from podarchive.read.transcript_cues import Warnings, parse_srt, parse_vtt
from podarchive.read.transcript_markup import parse_html, parse_json, parse_text

__all__ = [
    "FORMATS",
    "MEDIA_TYPES",
    "format_timestamp",
    "media_link",
    "parse_transcript",
]

#: Media types of the Podcasting 2.0 ``podcast:transcript`` list (and common variants).
MEDIA_TYPES: dict[str, str] = {
    "application/x-subrip": "srt",
    "application/srt": "srt",
    "text/srt": "srt",
    "text/x-srt": "srt",
    "application/x-srt": "srt",
    "text/vtt": "vtt",
    "text/webvtt": "vtt",
    "application/json": "json",
    "text/json": "json",
    "application/transcript+json": "json",
    "text/html": "html",
    "application/xhtml+xml": "html",
    "text/plain": "text",
}
FORMATS = ("srt", "vtt", "json", "html", "text")
_EXTENSIONS = {"srt": "srt", "vtt": "vtt", "json": "json", "html": "html", "htm": "html"}
_EXTENSIONS["txt"] = "text"
#: Types that say nothing about the format: the bytes decide.
_GENERIC_TYPES = frozenset({"", "application/octet-stream", "binary/octet-stream"})

_BOMS = (
    (codecs.BOM_UTF32_LE, "utf-32-le"),  # before UTF-16 LE: it starts with the same bytes
    (codecs.BOM_UTF32_BE, "utf-32-be"),
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)
#: Control bytes that never occur in text (NUL..BS, SO..US except ESC, DEL is allowed).
_CONTROL_BYTES = bytes([*range(0x09), *range(0x0E, 0x1B), *range(0x1C, 0x20)])
_BINARY_SAMPLE = 65536

_SRT_SNIFF_RE = re.compile(r"\d{1,2}:\d{1,2}:\d{1,2}[,.]\d{1,3}[ \t]*$")
_HTML_SNIFF = ("<!doctype html", "<html", "<body", "<p>", "<p ", "<cite", "<time", "<div")


# --- warnings --------------------------------------------------------------------------------


# --- the API ----------------------------------------------------------------------------------


def parse_transcript(
    body: bytes, content_type: str | None, url: str | None = None
) -> ParsedTranscript:
    """The segments of one transcript body, in document order, and what went wrong reading it.

    ``content_type`` is the ``type`` attribute or the HTTP Content-Type (parameters allowed);
    ``url`` only lends its extension when the type says nothing. Raises
    :class:`TranscriptError` for an empty or binary body (and JSON that does not parse).
    """
    warnings = Warnings()
    media_type, charset = parse_content_type(content_type)
    charset = charset.lower() if charset else None
    text = _decode(body, charset, warnings)
    if not text.strip():
        raise TranscriptError("empty transcript")
    declared = MEDIA_TYPES.get(media_type)
    if declared is None and media_type not in _GENERIC_TYPES:
        warnings.add("unknown transcript type, format taken from the body", media_type)
    if declared is None:
        declared = _format_from_url(url)
    sniffed = _sniff(text)
    order = [declared, sniffed]
    if declared in (None, "text") or sniffed in ("vtt", "srt", "json"):
        order = [sniffed, declared]  # the bytes are surer than the label
    candidates = [f for i, f in enumerate(order) if f is not None and f not in order[:i]]
    fmt, segments = _first_readable(text, candidates, warnings)
    if declared is not None and fmt != declared:
        warnings.add(f"declared {media_type or declared}, read as {fmt}")
    if not segments:
        warnings.add("no segment")
    return ParsedTranscript(fmt, tuple(segments), warnings.lines())


def _first_readable(
    text: str, candidates: list[str], warnings: Warnings
) -> tuple[str, list[TranscriptSegment]]:
    """The first format that yields segments (else the first that parses, with none)."""
    fallback: tuple[str, list[TranscriptSegment], Warnings] | None = None
    error: TranscriptError | None = None
    for fmt in candidates:
        tried = Warnings()
        try:
            segments = _PARSERS[fmt](text, tried)
        except TranscriptError as e:
            error = error or e
            continue
        if segments:
            warnings.merge(tried)
            return fmt, segments
        fallback = fallback or (fmt, segments, tried)
    if fallback is None:
        assert error is not None
        raise error
    warnings.merge(fallback[2])
    return fallback[0], fallback[1]


def format_timestamp(seconds: float) -> str:
    """``h:mm:ss`` of a time in seconds (fractions dropped): 3725.9 → ``1:02:05``.

    Raises ``ValueError`` for a negative or non-finite time.
    """
    if not math.isfinite(seconds) or seconds < 0:
        raise ValueError(f"not a time: {seconds!r}")
    whole = int(seconds)
    return f"{whole // 3600}:{whole % 3600 // 60:02d}:{whole % 60:02d}"


def media_link(enclosure_url: str, seconds: float) -> str:
    """The enclosure at a time (a W3C Media Fragment): ``…/ep.mp3#t=125`` (whole seconds).

    An existing fragment is replaced. Raises ``ValueError`` for a negative or non-finite time.
    """
    if not math.isfinite(seconds) or seconds < 0:
        raise ValueError(f"not a time: {seconds!r}")
    return f"{enclosure_url.partition('#')[0]}#t={int(seconds)}"


# --- decoding ---------------------------------------------------------------------------------


def _format_from_url(url: str | None) -> str | None:
    if not url:
        return None
    path = url.partition("#")[0].partition("?")[0]
    last = path.rpartition("/")[2]
    return _EXTENSIONS.get(last.rpartition(".")[2].lower()) if "." in last else None


def _decode(body: bytes, charset: str | None, warnings: Warnings) -> str:
    if not body:
        raise TranscriptError("empty transcript")
    for bom, encoding in _BOMS:
        if body.startswith(bom):
            return _replacing(body[len(bom) :], encoding, warnings)
    if charset is not None and not _is_utf8_label(charset):
        declared = _decode_declared(body, charset, warnings)
        if declared is not None:
            return declared
    utf16 = _utf16_without_bom(body)
    if utf16:
        warnings.add(f"no byte-order mark, decoded as {utf16}")
        return _replacing(body, utf16, warnings)
    _refuse_binary(body)
    text, bad = decode_counting(body, "utf-8")
    if not bad:
        return text
    good = sum(1 for ch in text if ch > "\x7f" and ch != "\ufffd")
    if bad > good:
        warnings.add("not UTF-8, decoded as windows-1252")
        return _replacing(body, "cp1252", warnings)
    warnings.add("invalid UTF-8 byte sequences replaced", count=bad)
    return text


def _decode_declared(body: bytes, charset: str, warnings: Warnings) -> str | None:
    """``body`` in a declared charset other than UTF-8; None (and a warning) if it is unknown."""
    try:
        codec = codecs.lookup(charset)
    except LookupError:
        warnings.add("unknown charset, decoded as UTF-8", charset)
        return None
    if codec.name in ("utf-16", "utf-32", "utf-16-le", "utf-16-be"):
        return _replacing(body, codec.name, warnings)
    if charset in WINDOWS_1252_LABELS:
        codec = codecs.lookup("cp1252")  # what these labels mean on the web
    _refuse_binary(body)
    return _replacing(body, codec.name, warnings)


def _is_utf8_label(charset: str) -> bool:
    return charset.replace("_", "-") in ("utf-8", "utf8", "unicode-1-1-utf-8")


def _replacing(data: bytes, encoding: str, warnings: Warnings) -> str:
    """``data`` decoded with U+FFFD for each bad sequence, counted in one warning."""
    text, bad = decode_counting(data, encoding)
    if bad:
        warnings.add(f"invalid {encoding} byte sequences replaced", count=bad)
    return text


def _utf16_without_bom(body: bytes) -> str | None:
    """UTF-16 text without a BOM: ASCII-range text has a NUL in every other byte."""
    sample = body[:4096]
    half = len(sample) // 2
    if half < 4:
        return None
    even, odd = sample[0::2].count(0), sample[1::2].count(0)
    if odd > 0.9 * half and even < 0.05 * half:
        return "utf-16-le"
    if even > 0.9 * half and odd < 0.05 * half:
        return "utf-16-be"
    return None


def _refuse_binary(body: bytes) -> None:
    """A NUL or more than 1% control bytes in the first 64 KiB: not a transcript."""
    sample = body[:_BINARY_SAMPLE]
    if b"\x00" in sample:
        raise TranscriptError("binary body, not a transcript")
    controls = len(sample) - len(sample.translate(None, _CONTROL_BYTES))
    if controls > max(2, len(sample) // 100):
        raise TranscriptError("binary body, not a transcript")


# --- sniffing ---------------------------------------------------------------------------------


def _sniff(text: str) -> str:
    head = text[:4096].lstrip("\ufeff \t\r\n")
    if head.startswith("WEBVTT"):
        return "vtt"
    if head[:1] in ("{", "["):
        return "json"
    lower = head[:1024].lower()
    if lower.startswith("<") and any(marker in lower for marker in _HTML_SNIFF):
        return "html"
    arrow = head.find("-->")
    while arrow != -1:
        if _SRT_SNIFF_RE.search(head[max(0, arrow - 20) : arrow]):
            return "srt"
        arrow = head.find("-->", arrow + 3)
    return "text"


# --- timestamps -------------------------------------------------------------------------------


# --- SRT and WebVTT ---------------------------------------------------------------------------


# --- JSON -------------------------------------------------------------------------------------


# --- HTML and plain text ----------------------------------------------------------------------


_PARSERS = {
    "srt": parse_srt,
    "vtt": parse_vtt,
    "json": parse_json,
    "html": parse_html,
    "text": parse_text,
}
