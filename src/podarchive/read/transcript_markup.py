"""Podcasting 2.0 JSON, HTML and plain-text transcripts as segments.

Readers for :func:`~.transcript_formats.parse_transcript`; timestamps and the
:class:`~.transcript_cues.Warnings` tally come from :mod:`~.transcript_cues`.
"""

from __future__ import annotations

import html
import json
import math
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from podarchive.core.errors import TranscriptError
from podarchive.core.types import TranscriptSegment
from podarchive.read.transcript_cues import MAX_TIMESTAMP, TAG_RE, Warnings, timestamp

_SECONDS_RE = re.compile(r"\d{1,12}(?:\.\d{1,9})?")
_HTML_TOKEN_RE = re.compile(r"<(/?)(cite|time|p|script|style|br)\b[^<>]*>", re.IGNORECASE)
#: Beautiful Soup costs ≈ 40 µs a tag: a page with more tags than this (a real 2-hour HTML
#: transcript has ≈ 10,000) is read by stripping tags instead, so 5 MB of tags take seconds.
_SOUP_MAX_TAGS = 50_000


def parse_json(text: str, warnings: Warnings) -> list[TranscriptSegment]:
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


def _json_time(value: Any, key: str, warnings: Warnings) -> float | None:
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
        if len(token) <= MAX_TIMESTAMP and _SECONDS_RE.fullmatch(token):
            seconds = float(token)
        else:
            seconds = timestamp(token)
    if seconds is None or not math.isfinite(seconds) or seconds < 0:
        warnings.add(f"bad {key}, kept without it", repr(value)[:40])
        return None
    return round(seconds, 3)


def parse_html(text: str, warnings: Warnings) -> list[TranscriptSegment]:
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


def _html_convention(text: str, warnings: Warnings) -> list[TranscriptSegment]:
    """Segments from ``<cite>`` (speaker, carried on), ``<time>`` (the next ``<p>``'s start) and
    ``<p>`` (the text); empty when the page has neither ``<cite>`` nor ``<time>``.

    A tokenizer over the few tags that matter (linear: negated classes only); other tags are
    stripped from the text, script and style skipped."""
    reader = _ConventionReader(warnings)
    position = 0
    for match in _HTML_TOKEN_RE.finditer(text):
        between = text[position : match.start()]
        position = match.end()
        reader.token(match.group(1) == "/", match.group(2).lower(), between)
    if reader.open_tag == "p":
        reader.buffer.append(text[position:])
        reader.flush_paragraph()
    return reader.segments if reader.seen_marker else []


@dataclass(slots=True)
class _ConventionReader:
    """The state of :func:`_html_convention`'s pass: the segments so far and the open tag."""

    warnings: Warnings
    segments: list[TranscriptSegment] = field(default_factory=list)
    speaker: str | None = None
    start: float | None = None
    seen_marker: bool = False
    open_tag: str | None = None  # the cite, time, p, script or style whose text we are in
    buffer: list[str] = field(default_factory=list)

    def token(self, closing: bool, name: str, between: str) -> None:
        """Read one of the tags that matter, ``between`` being the text before it."""
        if self.open_tag in ("script", "style"):
            if closing and name == self.open_tag:
                self.open_tag = None
            return
        if self.open_tag is not None:
            self.buffer.append(between)
        if name == "br":
            self.buffer.append("\n")
        elif not closing:
            if self.open_tag == "p":  # an unclosed <p> ends where the next element starts
                self.flush_paragraph()
            self.open_tag, self.buffer = name, []
        elif name == self.open_tag:
            self._close(name)

    def _close(self, name: str) -> None:
        content = _html_text(self.buffer)
        if name == "cite":
            self.seen_marker = True
            self.speaker = content.rstrip(":").strip() or None
        elif name == "time":
            self.seen_marker = True
            self.start = timestamp(content) if content else None
            if self.start is None:
                self.warnings.add("bad <time>, paragraph kept without a start", content)
        elif name == "p":
            self.flush_paragraph()
        self.open_tag, self.buffer = None, []

    def flush_paragraph(self) -> None:
        body = _html_text(self.buffer)
        if body:
            self.segments.append(TranscriptSegment(self.start, None, self.speaker, body))
        self.start = None


def _html_text(buffer: Iterable[str]) -> str:
    raw = html.unescape(TAG_RE.sub("", "".join(buffer))).replace("\xa0", " ")
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


def parse_text(text: str, warnings: Warnings) -> list[TranscriptSegment]:
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
