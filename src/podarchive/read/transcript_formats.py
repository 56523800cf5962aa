"""Transcript bytes → time-coded segments: SRT, WebVTT, Podcasting 2.0 JSON, HTML, plain text.

Pure: bytes in, values out, no I/O. :func:`parse_transcript` is the API; it raises only
:class:`~podarchive.core.errors.TranscriptError`, and only for a body with nothing to read (empty,
binary, or declared/sniffed JSON that is not JSON). Everything else malformed is read as far
as it goes and reported in ``ParsedTranscript.warnings``: one line per kind of problem, with
its count and at most :data:`MAX_EXAMPLES` examples, so a broken 2-hour file gives a handful
of lines, not thousands.

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
import html
import json
import math
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from podarchive.core.errors import TranscriptError
from podarchive.core.mediatype import WINDOWS_1252_LABELS, decode_counting, parse_content_type
from podarchive.core.types import ParsedTranscript, TranscriptSegment

__all__ = [
    "FORMATS",
    "MAX_EXAMPLES",
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
MAX_EXAMPLES = 5

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
_MAX_TIMESTAMP = 32  # characters: anything longer is not a timestamp

_TIMESTAMP_RE = re.compile(r"(?:(\d{1,9}):)?(\d{1,2}):(\d{1,2})(?:[,.](\d{1,9}))?")
_SECONDS_RE = re.compile(r"\d{1,12}(?:\.\d{1,9})?")
_VOICE_RE = re.compile(r"<v(?:\.[^\s<>]*)?[ \t]+([^<>]*)>", re.IGNORECASE)
_TAG_RE = re.compile(r"<[^<>]*>")
_SRT_TAG_RE = re.compile(r"</?(?:i|b|u|s|font|v)(?:[\s.][^<>]*)?>|\{\\[^{}]*\}", re.IGNORECASE)
_HTML_TOKEN_RE = re.compile(r"<(/?)(cite|time|p|script|style|br)\b[^<>]*>", re.IGNORECASE)
#: Beautiful Soup costs ≈ 40 µs a tag: a page with more tags than this (a real 2-hour HTML
#: transcript has ≈ 10,000) is read by stripping tags instead, so 5 MB of tags take seconds.
_SOUP_MAX_TAGS = 50_000
_SRT_SNIFF_RE = re.compile(r"\d{1,2}:\d{1,2}:\d{1,2}[,.]\d{1,3}[ \t]*$")
_HTML_SNIFF = ("<!doctype html", "<html", "<body", "<p>", "<p ", "<cite", "<time", "<div")


# --- warnings --------------------------------------------------------------------------------


@dataclass(slots=True)
class _Warnings:
    """Problems by kind, each with a count and at most :data:`MAX_EXAMPLES` examples."""

    counts: dict[str, int] = field(default_factory=dict)
    examples: dict[str, list[str]] = field(default_factory=dict)

    def add(self, kind: str, example: str | None = None, count: int = 1) -> None:
        self.counts[kind] = self.counts.get(kind, 0) + count
        shown = self.examples.setdefault(kind, [])
        if example is not None and len(shown) < MAX_EXAMPLES:
            shown.append(example if len(example) <= 60 else example[:57] + "...")

    def merge(self, other: _Warnings) -> None:
        for kind, count in other.counts.items():
            for example in other.examples[kind]:
                self.add(kind, example, count=0)
            self.counts[kind] = self.counts.get(kind, 0) + count
            self.examples.setdefault(kind, [])

    def lines(self) -> tuple[str, ...]:
        out = []
        for kind, count in self.counts.items():
            shown = self.examples[kind]
            line = f"{kind}: {count}" if count > 1 or shown else kind
            if shown:
                line += " (e.g. " + ", ".join(repr(e) for e in shown) + ")"
            out.append(line)
        return tuple(out)


# --- the API ----------------------------------------------------------------------------------


def parse_transcript(
    body: bytes, content_type: str | None, url: str | None = None
) -> ParsedTranscript:
    """The segments of one transcript body, in document order, and what went wrong reading it.

    ``content_type`` is the ``type`` attribute or the HTTP Content-Type (parameters allowed);
    ``url`` only lends its extension when the type says nothing. Raises
    :class:`TranscriptError` for an empty or binary body (and JSON that does not parse).
    """
    warnings = _Warnings()
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
    text: str, candidates: list[str], warnings: _Warnings
) -> tuple[str, list[TranscriptSegment]]:
    """The first format that yields segments (else the first that parses, with none)."""
    fallback: tuple[str, list[TranscriptSegment], _Warnings] | None = None
    error: TranscriptError | None = None
    for fmt in candidates:
        tried = _Warnings()
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


def _decode(body: bytes, charset: str | None, warnings: _Warnings) -> str:
    if not body:
        raise TranscriptError("empty transcript")
    for bom, encoding in _BOMS:
        if body.startswith(bom):
            return _replacing(body[len(bom) :], encoding, warnings)
    if charset is not None and not _is_utf8_label(charset):
        try:
            codec = codecs.lookup(charset)
        except LookupError:
            warnings.add("unknown charset, decoded as UTF-8", charset)
        else:
            if codec.name in ("utf-16", "utf-32", "utf-16-le", "utf-16-be"):
                return _replacing(body, codec.name, warnings)
            if charset in WINDOWS_1252_LABELS:
                codec = codecs.lookup("cp1252")  # what these labels mean on the web
            _refuse_binary(body)
            return _replacing(body, codec.name, warnings)
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


def _is_utf8_label(charset: str) -> bool:
    return charset.replace("_", "-") in ("utf-8", "utf8", "unicode-1-1-utf-8")


def _replacing(data: bytes, encoding: str, warnings: _Warnings) -> str:
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


def _timestamp(token: str) -> float | None:
    """``01:02:03,456``, ``01:02:03.456``, ``02:03.456`` (no hours), ``2:03`` → seconds."""
    if len(token) > _MAX_TIMESTAMP:
        return None
    match = _TIMESTAMP_RE.fullmatch(token)
    if match is None:
        return None
    hours, minutes, secs, fraction = match.groups()
    if int(minutes) > 59 or int(secs) > 59:
        return None
    value = int(hours or 0) * 3600 + int(minutes) * 60 + int(secs)
    return round(value + (float("0." + fraction) if fraction else 0.0), 3)


def _timing(line: str) -> tuple[float, float | None] | None:
    """The start and end of a ``start --> end [settings]`` line; None when the start is bad.

    A bad end alone gives (start, None)."""
    left, _, right = line.partition("-->")
    start = _timestamp(left.strip())
    if start is None:
        return None
    end_token = right.split(None, 1)[0] if right.strip() else ""
    return start, _timestamp(end_token)


# --- SRT and WebVTT ---------------------------------------------------------------------------


@dataclass(slots=True)
class _Cue:
    start: float | None
    end: float | None
    lines: list[str]
    block_start: int  # index in lines of the first line after the last blank line
    blank_seen: bool = False  # a blank line since the timing line


def _cue_blocks(text: str, vtt: bool, warnings: _Warnings) -> Iterator[_Cue]:
    """Cues by their timing lines: a line with ``-->`` starts a cue, blank lines separate.

    A one-line block just before a timing line is the cue's number or identifier, so missing
    numbers, missing blank lines and text with blank lines inside all read sensibly.
    """
    lines = text.splitlines()
    index = 0
    if vtt and lines and lines[0].lstrip("\ufeff").startswith("WEBVTT"):
        # the header block: WEBVTT and anything up to the first blank line
        while index < len(lines) and lines[index].strip():
            index += 1
    current: _Cue | None = None
    skipping = False  # inside a NOTE, STYLE or REGION block
    after_blank = True
    for line in lines[index:]:
        stripped = line.strip()
        if not stripped:
            skipping = False
            after_blank = True
            if current is not None:
                current.block_start = len(current.lines)
                current.blank_seen = True
            continue
        if skipping:
            continue
        if vtt and after_blank and stripped.split(None, 1)[0] in ("NOTE", "STYLE", "REGION"):
            skipping = True
            after_blank = False
            continue
        after_blank = False
        if "-->" in stripped:
            if current is not None:
                if _ends_with_identifier(current):
                    del current.lines[-1]  # the next cue's number or identifier
                yield current
            timing = _timing(stripped)
            if timing is None:
                warnings.add("bad timing line, cue kept without times", stripped)
                current = _Cue(None, None, [], 0)
            else:
                start, end = timing
                if end is None:
                    warnings.add("bad end time, cue kept without an end", stripped)
                elif end < start:
                    warnings.add("end before start, end dropped", stripped)
                    end = None
                current = _Cue(start, end, [], 0)
            continue
        if current is None:
            if not (stripped.isdigit() or vtt):
                warnings.add("text before the first cue, dropped", stripped)
            continue
        current.lines.append(stripped)
    if current is not None:
        yield current


def _ends_with_identifier(cue: _Cue) -> bool:
    """The cue's last line is the next cue's number/identifier: alone after a blank line, or
    a number right before the timing line when the cue has no blank line at all (blank
    lines missing between cues)."""
    lines = cue.lines
    if cue.blank_seen:
        return cue.block_start == len(lines) - 1
    return len(lines) > 1 and lines[-1].isdigit()


def _parse_srt(text: str, warnings: _Warnings) -> list[TranscriptSegment]:
    segments = []
    for cue in _cue_blocks(text, vtt=False, warnings=warnings):
        body = "\n".join(_SRT_TAG_RE.sub("", line).strip() for line in cue.lines).strip()
        if body:
            segments.append(TranscriptSegment(cue.start, cue.end, None, body))
        else:
            warnings.add("empty cue, dropped")
    return segments


def _parse_vtt(text: str, warnings: _Warnings) -> list[TranscriptSegment]:
    segments: list[TranscriptSegment] = []
    for cue in _cue_blocks(text, vtt=True, warnings=warnings):
        voiced = list(_voices("\n".join(cue.lines)))
        if not voiced:
            warnings.add("empty cue, dropped")
        for speaker, body in voiced:
            segments.append(TranscriptSegment(cue.start, cue.end, speaker, body))
    return segments


def _voices(payload: str) -> Iterator[tuple[str | None, str]]:
    """A cue payload as (speaker, text) runs: a ``<v Name>`` span starts each speaker's run."""
    parts = _VOICE_RE.split(payload)
    runs: list[tuple[str | None, str]] = [(None, parts[0])]
    runs += [(_clean_speaker(parts[i]), parts[i + 1]) for i in range(1, len(parts) - 1, 2)]
    merged: list[tuple[str | None, str]] = []
    for speaker, raw in runs:
        body = _vtt_text(raw)
        if not body:
            continue
        if merged and merged[-1][0] == speaker:
            merged[-1] = (speaker, merged[-1][1] + "\n" + body)
        else:
            merged.append((speaker, body))
    # text before the first voice span in a cue that has one belongs to nobody in particular
    yield from merged


def _clean_speaker(raw: str) -> str | None:
    return html.unescape(raw).strip() or None


def _vtt_text(raw: str) -> str:
    """Cue text without tags, entities decoded (no-break spaces as spaces), lines stripped."""
    if "<" in raw:
        raw = _TAG_RE.sub("", raw)
    if "&" in raw:
        raw = html.unescape(raw).replace("\xa0", " ")
    lines = (line.strip() for line in raw.split("\n"))
    return "\n".join(line for line in lines if line)


# --- JSON -------------------------------------------------------------------------------------


def _parse_json(text: str, warnings: _Warnings) -> list[TranscriptSegment]:
    try:
        data = json.loads(text)
    except (ValueError, RecursionError) as e:
        raise TranscriptError(f"not a JSON transcript: {str(e)[:80]}") from None
    if isinstance(data, dict):
        items = data.get("segments")
        version = data.get("version")
        if version is not None and not str(version).startswith("1"):
            warnings.add("unknown JSON transcript version", str(version))
    else:
        items = data
        warnings.add("JSON transcript is not an object, read as a list of segments")
    if not isinstance(items, list):
        warnings.add("JSON segments is not a list, no segment read")
        return []
    segments = []
    for item in items:
        if not isinstance(item, dict):
            warnings.add("JSON segment is not an object, skipped", repr(item)[:40])
            continue
        body = item.get("body")
        if not isinstance(body, str) or not body.strip():
            warnings.add("JSON segment without a body, skipped")
            continue
        start = _json_time(item.get("startTime"), "startTime", warnings)
        end = _json_time(item.get("endTime"), "endTime", warnings)
        if start is not None and end is not None and end < start:
            warnings.add("end before start, end dropped", f"{start} > {end}")
            end = None
        speaker = item.get("speaker")
        speaker = speaker.strip() or None if isinstance(speaker, str) else None
        segments.append(TranscriptSegment(start, end, speaker, body.strip()))
    return segments


def _json_time(value: Any, key: str, warnings: _Warnings) -> float | None:
    if value is None:
        return None
    seconds: float | None = None
    if isinstance(value, bool):
        seconds = None
    elif isinstance(value, int | float):
        try:
            seconds = float(value)
        except OverflowError:
            seconds = None
    elif isinstance(value, str):
        token = value.strip()
        if len(token) <= _MAX_TIMESTAMP and _SECONDS_RE.fullmatch(token):
            seconds = float(token)
        else:
            seconds = _timestamp(token)
    if seconds is None or not math.isfinite(seconds) or seconds < 0:
        warnings.add(f"bad {key}, kept without it", repr(value)[:40])
        return None
    return round(seconds, 3)


# --- HTML and plain text ----------------------------------------------------------------------


def _parse_html(text: str, warnings: _Warnings) -> list[TranscriptSegment]:
    """The Podcasting 2.0 convention (``<cite>``, ``<time>``, ``<p>``), else the page's text."""
    segments = _html_convention(text, warnings)
    if segments:
        return segments
    if text.count("<") > _SOUP_MAX_TAGS:
        warnings.add(f"over {_SOUP_MAX_TAGS} tags, text taken by stripping tags")
        body = _html_text([_without_scripts(text)])
    else:
        from podarchive.read.extract import html_to_text  # bs4 is extract's library

        body = html_to_text(text)
    return [TranscriptSegment(None, None, None, body)] if body else []


def _html_convention(text: str, warnings: _Warnings) -> list[TranscriptSegment]:
    """Segments from ``<cite>`` (speaker, carried on), ``<time>`` (the next ``<p>``'s start) and
    ``<p>`` (the text); empty when the page has neither ``<cite>`` nor ``<time>``.

    A tokenizer over the few tags that matter (linear: negated classes only); other tags are
    stripped from the text, script and style skipped."""
    segments: list[TranscriptSegment] = []
    speaker: str | None = None
    start: float | None = None
    seen_marker = False
    open_tag: str | None = None  # the cite, time, p, script or style whose text we are in
    buffer: list[str] = []
    position = 0

    def flush_paragraph() -> None:
        nonlocal start
        body = _html_text(buffer)
        if body:
            segments.append(TranscriptSegment(start, None, speaker, body))
        start = None

    for match in _HTML_TOKEN_RE.finditer(text):
        closing, name = match.group(1) == "/", match.group(2).lower()
        between = text[position : match.start()]
        position = match.end()
        if open_tag in ("script", "style"):
            if closing and name == open_tag:
                open_tag = None
            continue
        if open_tag is not None:
            buffer.append(between)
        if name == "br":
            buffer.append("\n")
            continue
        if not closing:
            if open_tag == "p":  # an unclosed <p> ends where the next element starts
                flush_paragraph()
            open_tag, buffer = name, []
            continue
        if name != open_tag:
            continue
        content = _html_text(buffer)
        if name == "cite":
            seen_marker = True
            speaker = content.rstrip(":").strip() or None
        elif name == "time":
            seen_marker = True
            start = _timestamp(content) if content else None
            if start is None:
                warnings.add("bad <time>, paragraph kept without a start", content)
        elif name == "p":
            flush_paragraph()
        open_tag, buffer = None, []
    if open_tag == "p":
        buffer.append(text[position:])
        flush_paragraph()
    return segments if seen_marker else []


def _html_text(buffer: Iterable[str]) -> str:
    raw = html.unescape(_TAG_RE.sub("", "".join(buffer))).replace("\xa0", " ")
    lines = (" ".join(line.split()) for line in raw.split("\n"))
    return "\n".join(line for line in lines if line)


def _without_scripts(text: str) -> str:
    """``text`` without script and style elements (an unclosed one runs to the end); linear."""
    lower = text.lower()
    kept: list[str] = []
    position = 0
    while True:
        starts = [
            i for i in (lower.find("<script", position), lower.find("<style", position)) if i >= 0
        ]
        if not starts:
            break
        start = min(starts)
        kept.append(text[position:start])
        name = "</script" if lower.startswith("<script", start) else "</style"
        end = lower.find(name, start)
        if end < 0:
            return " ".join(kept)
        position = lower.find(">", end)
        position = len(text) if position < 0 else position + 1
        kept.append(" ")
    kept.append(text[position:])
    return "".join(kept)


def _parse_text(text: str, warnings: _Warnings) -> list[TranscriptSegment]:
    """Paragraphs (separated by blank lines) as segments without times."""
    segments = []
    paragraph: list[str] = []
    for line in [*text.splitlines(), ""]:
        stripped = line.strip()
        if stripped:
            paragraph.append(stripped)
        elif paragraph:
            segments.append(TranscriptSegment(None, None, None, "\n".join(paragraph)))
            paragraph = []
    return segments


_PARSERS = {
    "srt": _parse_srt,
    "vtt": _parse_vtt,
    "json": _parse_json,
    "html": _parse_html,
    "text": _parse_text,
}
