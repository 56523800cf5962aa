"""Tests for podarchive.read.transcript_formats: goldens per format, edge cases, malformed bodies, properties."""

from __future__ import annotations

import contextlib
import json
import os
import time
from dataclasses import asdict
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from podarchive.core.errors import ParseError, TranscriptError
from podarchive.core.types import ParsedTranscript, TranscriptSegment
from podarchive.read.transcript_cues import MAX_EXAMPLES
from podarchive.read.transcript_formats import format_timestamp, media_link, parse_transcript

GOLDEN = Path(__file__).parent / "golden" / "transcripts"
TYPES = {
    ".srt": "application/x-subrip",
    ".vtt": "text/vtt",
    ".json": "application/json",
    ".html": "text/html; charset=utf-8",
    ".txt": "text/plain",
}


def seg(
    start: float | None, end: float | None, text: str, speaker: str | None = None
) -> TranscriptSegment:
    return TranscriptSegment(start, end, speaker, text)


def record(parsed: ParsedTranscript) -> dict[str, Any]:
    return {
        "format": parsed.format,
        "segments": [asdict(s) for s in parsed.segments],
        "warnings": list(parsed.warnings),
    }


# --- goldens ----------------------------------------------------------------------------------


GOLDEN_INPUTS = sorted(p.name for p in GOLDEN.iterdir() if not p.name.endswith(".expected.json"))


def expected_path(name: str) -> Path:
    return GOLDEN / f"{name}.expected.json"


@pytest.mark.parametrize("name", GOLDEN_INPUTS)
def test_golden(name: str) -> None:
    path = GOLDEN / name
    parsed = parse_transcript(path.read_bytes(), TYPES[path.suffix], f"https://x.test/{name}")
    got = record(parsed)
    target = expected_path(name)
    if os.environ.get("PODARCHIVE_REGEN_GOLDEN"):
        target.write_text(json.dumps(got, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    assert target.exists(), f"missing golden {target}; run with PODARCHIVE_REGEN_GOLDEN=1"
    assert got == json.loads(target.read_text(encoding="utf-8"))


def test_goldens_cover_every_format() -> None:
    formats = {
        json.loads(p.read_text(encoding="utf-8"))["format"] for p in GOLDEN.glob("*.expected.json")
    }
    assert formats == {"srt", "vtt", "json", "html", "text"}


def test_golden_speakers_and_multiline() -> None:
    vtt = parse_transcript((GOLDEN / "episode.vtt").read_bytes(), "text/vtt")
    assert vtt.segments[0] == seg(
        0.0, 3.2, "Welcome back to Signal Path,\nthe show about radio & antennas.", "Host"
    )
    assert [s.speaker for s in vtt.segments] == [
        "Host", "Host", "Ana Ruiz", "Host", "Ana Ruiz", None
    ]  # fmt: skip
    assert vtt.segments[-1].start == 3723.004
    srt = parse_transcript((GOLDEN / "episode.srt").read_bytes(), "application/x-subrip")
    assert srt.segments[0].text == (
        "Welcome back to Signal Path,\nthe show about radio engineering."
    )
    assert len(srt.segments) == 5
    assert srt.warnings == ()


# --- SRT --------------------------------------------------------------------------------------


def srt(text: str) -> ParsedTranscript:
    return parse_transcript(text.encode(), "application/x-subrip")


def test_srt_missing_numbers_and_blank_lines() -> None:
    parsed = srt(
        "00:00:01,000 --> 00:00:02,000\nOne\n"
        "2\n00:00:02,000 --> 00:00:03,000\nTwo\n"
        "00:00:03,000 --> 00:00:04,000\nThree\n"
    )
    assert [s.text for s in parsed.segments] == ["One", "Two", "Three"]


def test_srt_numbers_in_text_are_kept() -> None:
    parsed = srt(
        "1\n00:00:01,000 --> 00:00:02,000\nThe answer is\n42\n\n"
        "00:00:02,000 --> 00:00:03,000\nNext\n\n"
        "3\n00:00:03,000 --> 00:00:04,000\n7\n"
    )
    assert [s.text for s in parsed.segments] == ["The answer is\n42", "Next", "7"]


def test_srt_blank_line_inside_a_cue_keeps_the_text() -> None:
    parsed = srt(
        "1\n00:00:01,000 --> 00:00:02,000\nHello\n\nworld\n\n2\n00:00:03,000 --> 00:00:04,000\nx\n"
    )
    assert [s.text for s in parsed.segments] == ["Hello\nworld", "x"]


def test_srt_bad_timestamps_keep_the_text_with_one_counted_warning() -> None:
    cues = "".join(f"{i}\n00:61:00,000 --> 00:62:00,000\nbad {i}\n\n" for i in range(1, 101))
    parsed = srt(cues + "101\n00:00:01,000 --> 00:00:02,000\ngood\n")
    assert len(parsed.segments) == 101
    assert all(s.start is None and s.end is None for s in parsed.segments[:100])
    assert parsed.segments[-1] == seg(1.0, 2.0, "good")
    assert len(parsed.warnings) == 1
    warning = parsed.warnings[0]
    assert warning.startswith("bad timing line, cue kept without times: 100 (e.g.")
    assert warning.count("00:61:00,000") == MAX_EXAMPLES


def test_srt_end_before_start_and_overlaps() -> None:
    parsed = srt(
        "1\n00:00:05,000 --> 00:00:04,000\nbackwards\n\n"
        "2\n00:00:01,000 --> 00:00:09,000\nlong\n\n"
        "3\n00:00:02,000 --> 00:00:03,000\noverlapping\n\n"
        "4\n00:00:03,000 --> later\nno end\n"
    )
    assert parsed.segments == (
        seg(5.0, None, "backwards"),
        seg(1.0, 9.0, "long"),
        seg(2.0, 3.0, "overlapping"),
        seg(3.0, None, "no end"),
    )
    assert any(w.startswith("end before start") for w in parsed.warnings)
    assert any(w.startswith("bad end time") for w in parsed.warnings)


def test_srt_dot_short_fraction_and_tags() -> None:
    parsed = srt("1\n0:00:01.5 --> 0:00:02.25\n<b>bold</b> <font color='red'>red</font>\n")
    assert parsed.segments == (seg(1.5, 2.25, "bold red"),)


def test_srt_empty_cue_dropped() -> None:
    parsed = srt("1\n00:00:01,000 --> 00:00:02,000\n\n2\n00:00:02,000 --> 00:00:03,000\nx\n")
    assert parsed.segments == (seg(2.0, 3.0, "x"),)


# --- WebVTT -----------------------------------------------------------------------------------


def vtt(text: str) -> ParsedTranscript:
    return parse_transcript(text.encode(), "text/vtt")


def test_vtt_blocks_skipped_and_identifiers_dropped() -> None:
    parsed = vtt(
        "WEBVTT\n\nREGION\nid:fred\nwidth:40%\n\nNOTE one line\n\n"
        "STYLE\n::cue { color: red }\n\ncue-1\n00:01.000 --> 00:02.000 region:fred\nHi\n"
    )
    assert parsed.segments == (seg(1.0, 2.0, "Hi"),)


def test_vtt_voices_split_a_cue_and_tags_go() -> None:
    parsed = vtt(
        "WEBVTT\n\n00:01.000 --> 00:02.000\n"
        "intro <v Bob>Hi <b>there</b></v> <v Ann>&lt;hello&gt;</v>\n<v Ann>again</v>\n"
    )
    assert parsed.segments == (
        seg(1.0, 2.0, "intro", None),
        seg(1.0, 2.0, "Hi there", "Bob"),
        seg(1.0, 2.0, "<hello>\nagain", "Ann"),
    )


def test_vtt_without_header_still_reads_its_first_cue() -> None:
    parsed = vtt("00:01.000 --> 00:02.000\nfirst\n\n00:02.000 --> 00:03.000\nsecond\n")
    assert [s.text for s in parsed.segments] == ["first", "second"]


def test_vtt_header_only_has_no_segment() -> None:
    parsed = vtt("WEBVTT\n\nNOTE nothing yet\n")
    assert parsed.segments == ()
    assert "no segment" in parsed.warnings


# --- JSON -------------------------------------------------------------------------------------


def js(data: Any) -> ParsedTranscript:
    return parse_transcript(json.dumps(data).encode(), "application/json")


def test_json_tolerates_strings_missing_end_and_junk() -> None:
    parsed = js(
        {
            "version": "1.0.0",
            "segments": [
                {"speaker": " A ", "startTime": "1.5", "endTime": "00:00:03.000", "body": "x"},
                {"startTime": 4, "body": " y "},
                {"startTime": True, "endTime": -1, "body": "z"},
                {"startTime": 5, "endTime": 4, "body": "w"},
                {"startTime": 6},
                "not an object",
            ],
        }
    )
    assert parsed.segments == (
        seg(1.5, 3.0, "x", "A"),
        seg(4.0, None, "y"),
        seg(None, None, "z"),
        seg(5.0, None, "w"),
    )
    assert len(parsed.warnings) == 5


def test_json_segments_not_a_list_is_a_warning() -> None:
    parsed = js({"version": "1.0.0", "segments": {"body": "x"}})
    assert parsed.segments == ()
    assert parsed.warnings[0].startswith("JSON segments is not a list")


def test_json_root_list_and_huge_or_odd_numbers() -> None:
    body = b'[{"startTime": 1e400, "body": "a"}, {"startTime": NaN, "body": "b"}, {"startTime": 1, "body": "c"}]'
    parsed = parse_transcript(body, "application/json")
    assert [(s.start, s.text) for s in parsed.segments] == [(None, "a"), (None, "b"), (1.0, "c")]


@pytest.mark.parametrize("body", [b"{not json", b"[" * 100_000, b'{"a": 1' + b"0" * 5000 + b"}"])
def test_json_that_is_not_json_raises_transcript_error(body: bytes) -> None:
    with pytest.raises(TranscriptError):
        parse_transcript(body, "application/json")


# --- HTML and plain text ----------------------------------------------------------------------


def test_html_convention_speaker_carries_time_does_not() -> None:
    parsed = parse_transcript((GOLDEN / "episode.html").read_bytes(), "text/html")
    assert parsed.segments[1:3] == (
        seg(7.0, None, "Thanks for having me.", "Ana Ruiz"),
        seg(None, None, "It\u2019s good to be here.", "Ana Ruiz"),
    )
    assert parsed.segments[-1].text == "That wraps it up.\nSee you next time."
    assert all("not text" not in s.text for s in parsed.segments)


def test_html_without_the_convention_is_one_segment() -> None:
    body = (
        b"<html><body><h1>Transcript</h1><p>Hello &amp; bye</p><script>x()</script></body></html>"
    )
    parsed = parse_transcript(body, "text/html")
    assert parsed.segments == (seg(None, None, "Transcript\n\nHello & bye"),)


def test_html_unclosed_paragraphs_and_bad_time() -> None:
    body = b"<cite>A</cite><time>soon</time><p>one<p>two"
    parsed = parse_transcript(body, "text/html")
    assert parsed.segments == (seg(None, None, "one", "A"), seg(None, None, "two", "A"))
    assert parsed.warnings[0].startswith("bad <time>")


def test_plain_text_paragraphs() -> None:
    parsed = parse_transcript(b"one\r\ntwo\r\n\r\n\r\n  three  \n", "text/plain")
    assert parsed.segments == (seg(None, None, "one\ntwo"), seg(None, None, "three"))
    assert parsed.format == "text"
    assert parsed.warnings == ()


# --- detection --------------------------------------------------------------------------------

SRT_BODY = b"1\n00:00:01,000 --> 00:00:02,000\nHello\n"
VTT_BODY = b"WEBVTT\n\n00:01.000 --> 00:02.000\n<v A>Hello</v>\n"
JSON_BODY = b'{"version": "1.0.0", "segments": [{"startTime": 1, "body": "Hello"}]}'
HTML_BODY = b"<html><body><cite>A</cite><time>0:01</time><p>Hello</p></body></html>"


@pytest.mark.parametrize(
    ("body", "content_type", "fmt"),
    [
        (SRT_BODY, "text/plain", "srt"),
        (SRT_BODY, "text/vtt", "srt"),
        (SRT_BODY, "application/json", "srt"),
        (SRT_BODY, None, "srt"),
        (VTT_BODY, "application/x-subrip", "vtt"),
        (VTT_BODY, "application/octet-stream", "vtt"),
        (VTT_BODY, "text/html", "vtt"),
        (JSON_BODY, "text/plain", "json"),
        (JSON_BODY, "application/x-subrip", "json"),
        (HTML_BODY, "text/plain", "html"),
        (HTML_BODY, None, "html"),
        (b"just words", "application/x-unknown", "text"),
    ],
)
def test_mislabelled_bodies_still_parse(body: bytes, content_type: str | None, fmt: str) -> None:
    parsed = parse_transcript(body, content_type)
    assert parsed.format == fmt
    assert [s.text for s in parsed.segments] == [
        "just words" if fmt == "text" else "Hello"
    ]  # fmt: skip
    if content_type not in (None, "application/octet-stream"):
        assert parsed.warnings, "a mislabelled body says so"


def test_unknown_type_is_a_warning() -> None:
    parsed = parse_transcript(b"words", "application/x-unknown")
    assert parsed.warnings[0].startswith("unknown transcript type")


def test_url_extension_when_the_type_says_nothing() -> None:
    body = b"00:01.000 --> 00:02.000\nHello\n"  # headerless VTT: sniffs as plain text
    assert parse_transcript(body, None, "https://x.test/t.vtt?x=1").format == "vtt"
    assert parse_transcript(body, None).format == "text"


def test_a_json_looking_text_file_falls_back_to_text() -> None:
    parsed = parse_transcript(b"{curly} opening words", "text/plain")
    assert parsed.format == "text"
    assert parsed.segments[0].text == "{curly} opening words"


# --- decoding ---------------------------------------------------------------------------------


def test_latin1_without_a_label_is_windows_1252() -> None:
    parsed = parse_transcript((GOLDEN / "latin1.srt").read_bytes(), "application/srt")
    assert parsed.segments[0].text == "Café crème, naïve façade."
    assert parsed.segments[1].text == "\u201cQuoted\u201d \u2013 dashed."
    assert parsed.warnings == ("not UTF-8, decoded as windows-1252",)


def test_declared_charset_is_used() -> None:
    body = "1\n00:00:01,000 --> 00:00:02,000\nCafé\n".encode("iso-8859-1")
    parsed = parse_transcript(body, "application/x-subrip; charset=ISO-8859-1")
    assert parsed.segments[0].text == "Café"
    assert parsed.warnings == ()
    koi8 = "Привет\n".encode("koi8-r")
    assert parse_transcript(koi8, "text/plain; charset=koi8-r").segments[0].text == "Привет"


def test_mostly_utf8_with_stray_bytes_counts_replacements() -> None:
    body = "naïve café résumé ".encode() * 3 + b"\xff\xfe\x80 end"
    parsed = parse_transcript(body, "text/plain")
    assert parsed.segments[0].text.count("\ufffd") == 3
    assert parsed.warnings == ("invalid UTF-8 byte sequences replaced: 3",)


@pytest.mark.parametrize("encoding", ["utf-16", "utf-32", "utf-8-sig"])
def test_byte_order_marks(encoding: str) -> None:
    body = "WEBVTT\n\n00:01.000 --> 00:02.000\nnaïve\n".encode(encoding)
    parsed = parse_transcript(body, "text/vtt; charset=iso-8859-1")  # the BOM wins
    assert parsed.segments == (seg(1.0, 2.0, "naïve"),)
    assert parsed.warnings == ()


@pytest.mark.parametrize("encoding", ["utf-16-le", "utf-16-be"])
def test_utf16_without_bom(encoding: str) -> None:
    body = "1\n00:00:01,000 --> 00:00:02,000\nnaïve text\n".encode(encoding)
    parsed = parse_transcript(body, "application/x-subrip")
    assert parsed.segments == (seg(1.0, 2.0, "naïve text"),)


def test_unknown_charset_falls_back() -> None:
    parsed = parse_transcript("héllo".encode(), "text/plain; charset=x-nonsense")
    assert parsed.segments[0].text == "héllo"
    assert parsed.warnings[0].startswith("unknown charset")


# --- unusable bodies --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "body",
    [
        b"",
        b"  \r\n\t\n",
        b"\xef\xbb\xbf",
        b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)) * 4,
        bytes(range(256)) * 64,
        b"ID3\x04\x00\x00\x00\x00\x00\x00" + b"\xff\xfb\x90\x00" * 1000,
    ],
)
def test_unusable_bodies_raise_transcript_error(body: bytes) -> None:
    with pytest.raises(TranscriptError) as info:
        parse_transcript(body, "text/vtt")
    assert isinstance(info.value, ParseError)


# --- properties -------------------------------------------------------------------------------

CONTENT_TYPES = st.sampled_from(
    [None, "text/vtt", "application/x-subrip", "application/json", "text/html", "text/plain"]
    + ["application/octet-stream", "text/plain; charset=utf-16", "text/vtt; charset=bogus"]
)
PIECES = st.sampled_from(
    ["WEBVTT", "-->", "\n", "\r\n", " ", "00:00:01,000", "01:02.5", "<v A>", "</v>", "<", ">"]
    + ["{", "}", "[", "]", '"segments"', '"body"', ":", ",", "&amp;", "<p>", "<cite>", "<time>"]
    + ["NOTE", "\ufeff", "\x00", "9" * 40, "é", "\ud800"]
)


@settings(max_examples=300, deadline=None)
@given(body=st.binary(max_size=2000), content_type=CONTENT_TYPES)
def test_arbitrary_bytes_never_raise_anything_else(body: bytes, content_type: str | None) -> None:
    try:
        parsed = parse_transcript(body, content_type)
    except TranscriptError:
        return
    assert parsed.format in ("srt", "vtt", "json", "html", "text")
    assert len(parsed.warnings) <= 12


@settings(max_examples=300, deadline=None)
@given(parts=st.lists(PIECES, max_size=60), content_type=CONTENT_TYPES)
def test_near_miss_documents_never_raise_anything_else(
    parts: list[str], content_type: str | None
) -> None:
    body = "".join(parts).encode("utf-8", "surrogatepass")
    try:
        parsed = parse_transcript(body, content_type)
    except TranscriptError:
        return
    for segment in parsed.segments:
        assert segment.text.strip() == segment.text
        assert segment.text
        assert segment.start is None or segment.start >= 0
        if segment.start is not None and segment.end is not None:
            assert segment.end >= segment.start


WORDS = st.text(
    alphabet=st.characters(
        whitelist_categories=("L", "N"), whitelist_characters=" .,!?'-:é", max_codepoint=0x2FF
    ),
    min_size=1,
    max_size=30,
).map(lambda s: " ".join(s.split()))
LINES = st.lists(WORDS.filter(lambda s: s and "-->" not in s), min_size=1, max_size=3)
CUES = st.lists(
    st.tuples(st.integers(0, 20_000_000), st.integers(0, 600_000), LINES), min_size=1, max_size=30
)


def _srt_time(ms: int, sep: str = ",") -> str:
    return (
        f"{ms // 3_600_000:02d}:{ms // 60_000 % 60:02d}:{ms // 1000 % 60:02d}{sep}{ms % 1000:03d}"
    )


@settings(max_examples=200, deadline=None)
@given(cues=CUES, numbered=st.booleans(), crlf=st.booleans())
def test_well_formed_srt_round_trips(
    cues: list[tuple[int, int, list[str]]], numbered: bool, crlf: bool
) -> None:
    blocks = [
        (f"{i}\n" if numbered else "")
        + f"{_srt_time(start)} --> {_srt_time(start + length)}\n"
        + "\n".join(lines)
        for i, (start, length, lines) in enumerate(cues, 1)
    ]
    text = "\n\n".join(blocks) + "\n"
    parsed = parse_transcript(
        text.replace("\n", "\r\n" if crlf else "\n").encode(), "application/x-subrip"
    )
    assert parsed.warnings == ()
    assert parsed.segments == tuple(
        seg(start / 1000, (start + length) / 1000, "\n".join(lines))
        for start, length, lines in cues
    )


@settings(max_examples=200, deadline=None)
@given(cues=CUES, speakers=st.lists(st.sampled_from(["Ann", "Bob Ruiz", None]), min_size=30))
def test_well_formed_vtt_round_trips(
    cues: list[tuple[int, int, list[str]]], speakers: list[str | None]
) -> None:
    def stamp(ms: int) -> str:
        return _srt_time(ms, ".") if ms >= 3_600_000 else _srt_time(ms, ".")[3:]

    blocks = ["WEBVTT - generated\n", "NOTE\nskip me\n"]
    for i, ((start, length, lines), speaker) in enumerate(zip(cues, speakers, strict=False)):
        payload = "\n".join(lines)
        if speaker:
            payload = f"<v {speaker}>{payload}</v>"
        blocks.append(f"c{i}\n{stamp(start)} --> {stamp(start + length)} align:start\n{payload}\n")
    parsed = parse_transcript("\n".join(blocks).encode(), "text/vtt")
    assert parsed.warnings == ()
    assert parsed.segments == tuple(
        seg(start / 1000, (start + length) / 1000, "\n".join(lines), speaker)
        for (start, length, lines), speaker in zip(cues, speakers, strict=False)
    )


# --- size and speed ---------------------------------------------------------------------------

TWO_HOURS = 2_000  # segments in a 2-hour transcript (one every 3.6 s)


def two_hour(fmt: str) -> bytes:
    step = 3600_000 * 2 // TWO_HOURS
    line = "and so we kept talking about the antenna, the feed line and the ground plane"
    if fmt == "json":
        segments = [
            {"speaker": "Host", "startTime": i * step / 1000, "endTime": (i + 1) * step / 1000}
            | {"body": f"{line} {i}"}
            for i in range(TWO_HOURS)
        ]
        return json.dumps({"version": "1.0.0", "segments": segments}).encode()
    if fmt == "vtt":
        cues = [
            f"{_srt_time(i * step, '.')} --> {_srt_time((i + 1) * step, '.')}\n<v Host>{line}\n{i}</v>"
            for i in range(TWO_HOURS)
        ]
        return ("WEBVTT\n\n" + "\n\n".join(cues) + "\n").encode()
    cues = [
        f"{i + 1}\n{_srt_time(i * step)} --> {_srt_time((i + 1) * step)}\n{line}\n{i}"
        for i in range(TWO_HOURS)
    ]
    return ("\n\n".join(cues) + "\n").encode()


@pytest.mark.parametrize(
    ("fmt", "content_type"),
    [("srt", "application/x-subrip"), ("vtt", "text/vtt"), ("json", "application/json")],
)
def test_a_two_hour_transcript_parses_fast(fmt: str, content_type: str) -> None:
    body = two_hour(fmt)
    best = float("inf")
    for _ in range(3):
        began = time.perf_counter()
        parsed = parse_transcript(body, content_type)
        best = min(best, time.perf_counter() - began)
    assert len(parsed.segments) == TWO_HOURS
    assert parsed.warnings == ()
    assert parsed.segments[-1].start == pytest.approx(7196.4)
    assert best < 0.5, f"{fmt}: {best * 1000:.0f} ms"  # measured ≈ 10 ms; generous for CI


GARBAGE = [
    b"9" * 5_000_000,
    b"<" * 5_000_000,
    b"-->" * 1_700_000,
    b"00:00:01,000 " * 400_000,
    b"<v " * 1_700_000,
    b"<p><cite><time>" * 350_000,
    b"&" * 5_000_000,
    b"<script>" * 600_000,
    b"<cite>A</cite><p>" * 300_000,
]


@pytest.mark.parametrize("garbage", GARBAGE, ids=lambda g: repr(g[:12]))
@pytest.mark.parametrize("content_type", ["application/x-subrip", "text/vtt", "text/html", None])
def test_a_5_mb_garbage_line_is_linear(garbage: bytes, content_type: str | None) -> None:
    """Eight times the bytes cost about eight times the CPU (a quadratic parser: 64 times):
    a ratio of this process's CPU time, so a loaded machine slows both sides alike."""

    def cpu_of(body: bytes) -> float:
        began = time.process_time()
        with contextlib.suppress(TranscriptError):
            parse_transcript(body, content_type)
        return time.process_time() - began

    small = cpu_of(garbage[: len(garbage) // 8])
    assert cpu_of(garbage) < 24 * max(small, 0.005)


# --- helpers ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("seconds", "text"),
    [
        (0, "0:00:00"),
        (59.999, "0:00:59"),
        (61, "0:01:01"),
        (3725.9, "1:02:05"),
        (36000, "10:00:00"),
    ],
)
def test_format_timestamp(seconds: float, text: str) -> None:
    assert format_timestamp(seconds) == text


def test_media_link() -> None:
    assert media_link("https://cdn.test/ep.mp3", 125.9) == "https://cdn.test/ep.mp3#t=125"
    assert media_link("https://cdn.test/ep.mp3?x=1#t=3", 0) == "https://cdn.test/ep.mp3?x=1#t=0"


@pytest.mark.parametrize("bad", [-1.0, float("nan"), float("inf")])
def test_helpers_refuse_non_times(bad: float) -> None:
    with pytest.raises(ValueError, match="not a time"):
        format_timestamp(bad)
    with pytest.raises(ValueError, match="not a time"):
        media_link("https://cdn.test/ep.mp3", bad)
