"""SRT and WebVTT cues as segments, the timestamps all transcript formats read, a warning tally.

:func:`~.transcript_formats.parse_transcript` decodes and sniffs the body and picks the
reader; the SRT and WebVTT readers are here, the JSON, HTML and plain-text ones in
:mod:`~.transcript_markup`. Each reader adds its problems to a :class:`Warnings` tally.
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterator
from dataclasses import dataclass, field

from podarchive.core.types import TranscriptSegment

MAX_EXAMPLES = 5
MAX_TIMESTAMP = 32  # characters: anything longer is not a timestamp
_TIMESTAMP_RE = re.compile(r"(?:(\d{1,9}):)?(\d{1,2}):(\d{1,2})(?:[,.](\d{1,9}))?")
_VOICE_RE = re.compile(r"<v(?:\.[^\s<>]*)?[ \t]+([^<>]*)>", re.IGNORECASE)
TAG_RE = re.compile(r"<[^<>]*>")
_SRT_TAG_RE = re.compile(r"</?(?:i|b|u|s|font|v)(?:[\s.][^<>]*)?>|\{\\[^{}]*\}", re.IGNORECASE)


@dataclass(slots=True)
class Warnings:
    """Problems by kind, each with a count and at most :data:`MAX_EXAMPLES` examples."""

    counts: dict[str, int] = field(default_factory=dict)
    examples: dict[str, list[str]] = field(default_factory=dict)

    def add(self, kind: str, example: str | None = None, count: int = 1) -> None:
        self.counts[kind] = self.counts.get(kind, 0) + count
        shown = self.examples.setdefault(kind, [])
        if example is not None and len(shown) < MAX_EXAMPLES:
            shown.append(example if len(example) <= 60 else example[:57] + "...")

    def merge(self, other: Warnings) -> None:
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


def timestamp(token: str) -> float | None:
    """``01:02:03,456``, ``01:02:03.456``, ``02:03.456`` (no hours), ``2:03`` → seconds."""
    if len(token) > MAX_TIMESTAMP:
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
    start = timestamp(left.strip())
    if start is None:
        return None
    end_token = right.split(None, 1)[0] if right.strip() else ""
    return start, timestamp(end_token)


@dataclass(slots=True)
class _Cue:
    start: float | None
    end: float | None
    lines: list[str]
    block_start: int  # index in lines of the first line after the last blank line
    blank_seen: bool = False  # a blank line since the timing line


def _cue_blocks(text: str, vtt: bool, warnings: Warnings) -> Iterator[_Cue]:
    """Cues by their timing lines: a line with ``-->`` starts a cue, blank lines separate.

    A one-line block just before a timing line is the cue's number or identifier, so missing
    numbers, missing blank lines and text with blank lines inside all read sensibly.
    """
    lines = text.splitlines()
    current: _Cue | None = None
    skipping = False  # inside a NOTE, STYLE or REGION block
    after_blank = True
    for line in lines[_header_end(lines, vtt) :]:
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
        if vtt and after_blank and stripped.split(None, 1)[0] in _VTT_BLOCKS:
            skipping = True
            after_blank = False
            continue
        after_blank = False
        if "-->" in stripped:
            if current is not None:
                yield _without_identifier(current)
            current = _new_cue(stripped, warnings)
        elif current is not None:
            current.lines.append(stripped)
        elif not (stripped.isdigit() or vtt):
            warnings.add("text before the first cue, dropped", stripped)
    if current is not None:
        yield current


_VTT_BLOCKS = ("NOTE", "STYLE", "REGION")


def _header_end(lines: list[str], vtt: bool) -> int:
    """Where the cues start: after a WebVTT file's header block (WEBVTT up to a blank line)."""
    index = 0
    if vtt and lines and lines[0].lstrip("\ufeff").startswith("WEBVTT"):
        while index < len(lines) and lines[index].strip():
            index += 1
    return index


def _new_cue(line: str, warnings: Warnings) -> _Cue:
    """The cue a timing line starts; a bad start keeps no times, a bad end no end."""
    timing = _timing(line)
    if timing is None:
        warnings.add("bad timing line, cue kept without times", line)
        return _Cue(None, None, [], 0)
    start, end = timing
    if end is None:
        warnings.add("bad end time, cue kept without an end", line)
    elif end < start:
        warnings.add("end before start, end dropped", line)
        end = None
    return _Cue(start, end, [], 0)


def _without_identifier(cue: _Cue) -> _Cue:
    """The cue without its last line when that is the next cue's number or identifier."""
    if _ends_with_identifier(cue):
        del cue.lines[-1]
    return cue


def _ends_with_identifier(cue: _Cue) -> bool:
    """The cue's last line is the next cue's number/identifier: alone after a blank line, or
    a number right before the timing line when the cue has no blank line at all (blank
    lines missing between cues)."""
    lines = cue.lines
    if cue.blank_seen:
        return cue.block_start == len(lines) - 1
    return len(lines) > 1 and lines[-1].isdigit()


def parse_srt(text: str, warnings: Warnings) -> list[TranscriptSegment]:
    segments = []
    for cue in _cue_blocks(text, vtt=False, warnings=warnings):
        body = "\n".join(_SRT_TAG_RE.sub("", line).strip() for line in cue.lines).strip()
        if body:
            segments.append(TranscriptSegment(cue.start, cue.end, None, body))
        else:
            warnings.add("empty cue, dropped")
    return segments


def parse_vtt(text: str, warnings: Warnings) -> list[TranscriptSegment]:
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
        raw = TAG_RE.sub("", raw)
    if "&" in raw:
        raw = html.unescape(raw).replace("\xa0", " ")
    lines = (line.strip() for line in raw.split("\n"))
    return "\n".join(line for line in lines if line)
