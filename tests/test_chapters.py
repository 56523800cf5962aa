"""Tests for podarchive.read.chapter_formats: goldens in tests/golden/chapters, malformed bodies, hypothesis."""

from __future__ import annotations

import contextlib
import json
import math
import os
from dataclasses import asdict
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from lxml import etree

from podarchive.core.errors import ChaptersError, ParseError, PodarchiveError
from podarchive.core.types import Chapter, ParsedChapters
from podarchive.read import chapter_formats as chapters
from podarchive.read.chapter_formats import (
    MAX_EXAMPLES,
    SimpleChapter,
    parse_chapters_json,
    parse_simple_chapters,
    parse_time,
)

GOLDEN = Path(__file__).parent / "golden" / "chapters"
REGEN = os.environ.get("PODARCHIVE_REGEN_GOLDEN") == "1"
BASE = "https://cdn.example.com/chapters/ep42.json"
FEED = "https://podlove.example.org/feed.xml"
PSC = "http://podlove.org/simple-chapters"


def record(parsed: ParsedChapters) -> dict[str, Any]:
    return {
        "format": parsed.format,
        "version": parsed.version,
        "skipped": parsed.skipped,
        "warnings": list(parsed.warnings),
        "chapters": [asdict(c) for c in parsed.chapters],
    }


def check_golden(name: str, parsed: ParsedChapters) -> None:
    path = GOLDEN / f"{name}.expected.json"
    rec = record(parsed)
    if REGEN:
        path.write_text(json.dumps(rec, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    assert path.exists(), f"missing golden {path}; run with PODARCHIVE_REGEN_GOLDEN=1"
    assert rec == json.loads(path.read_text(encoding="utf-8"))


def simple_chapters_of(body: bytes) -> list[SimpleChapter]:
    """What podcast_ns would hand over: each psc:chapter's (start, title, href, image)."""
    parser = etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False)
    root = etree.fromstring(body, parser)
    return [
        (el.get("start"), el.get("title"), el.get("href"), el.get("image"))
        for el in root.iter(f"{{{PSC}}}chapter")
    ]


# --- goldens -------------------------------------------------------------------------------


def test_golden_full() -> None:
    parsed = parse_chapters_json((GOLDEN / "full.json").read_bytes(), BASE)
    check_golden("full", parsed)
    by_title = {c.title: c for c in parsed.chapters}
    assert parsed.version == "1.2.0"
    assert parsed.skipped == 0
    assert parsed.warnings == ()
    assert by_title["Intro"].image == "https://cdn.example.com/art/ep42/intro.jpg"
    # a silent (toc: false) chapter does not end the chapter it sits in, but is ended by the next
    silent = by_title["Diagram: a transposed view"]
    assert not silent.toc
    assert silent.end == 720.25
    assert silent.image == "https://cdn.example.com/chapters/art/ep42/transpose.png"
    assert by_title["What is a stride?"].end == 720.25
    assert by_title["Views versus copies"].url == "https://cdn.example.com/notes/42#views"
    assert by_title["Listener questions"].url is None  # javascript: is not kept
    assert by_title["Listener questions"].end == 2710.5
    assert by_title["Outro"].end == 2795


def test_golden_missing_ends() -> None:
    parsed = parse_chapters_json((GOLDEN / "missing-ends.json").read_bytes(), BASE)
    check_golden("missing-ends", parsed)
    assert [c.start for c in parsed.chapters] == [0, 95.5, 630, 1260, 1500, 1620]
    assert [c.end for c in parsed.chapters] == [95.5, 630, 1260, 1620, 1620, None]
    assert parsed.skipped == 4
    (warning,) = parsed.warnings
    assert warning.startswith("skipped 4 bad chapter entries: #5 bad startTime")


def test_golden_podlove() -> None:
    entries = simple_chapters_of((GOLDEN / "podlove.xml").read_bytes())
    parsed = parse_simple_chapters(entries, FEED)
    check_golden("podlove", parsed)
    assert [c.start for c in parsed.chapters] == [0, 102.5, 727, 3723, 4000.25]
    assert [c.end for c in parsed.chapters] == [102.5, 727, 3723, 4000.25, None]
    assert parsed.chapters[1].title == "Begrüßung & Feedback"
    assert parsed.chapters[2].url == "https://podlove.example.org/fs123/#hardware"
    assert parsed.chapters[2].image == "https://podlove.example.org/img/hardware.jpg"
    assert parsed.skipped == 1
    assert parsed.warnings == ('skipped 1 bad chapter entry: #6 bad start "later"',)


# --- times ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "seconds"),
    [
        (0, 0.0),
        (1.5, 1.5),
        ("1.5", 1.5),
        (" 42 ", 42.0),
        (".5", 0.5),
        ("1e2", 100.0),
        ("01:02", 62.0),
        ("90:00", 5400.0),  # MM:SS: minutes may run past an hour
        ("1:02:03.5", 3723.5),
        ("00:00:00.000", 0.0),
        ("100:00:00", 360000.0),
        (True, None),
        (False, None),
        (None, None),
        ([], None),
        ({"s": 1}, None),
        (-1, None),
        ("-1", None),
        ("nan", None),
        ("inf", None),
        (math.inf, None),
        (1e300, None),
        (10**400, None),
        ("00:60", None),
        ("1:60:00", None),
        ("1::2", None),
        ("", None),
        ("12:34:56:78", None),
        ("9" * 50, None),
    ],
)
def test_parse_time(value: object, seconds: float | None) -> None:
    assert parse_time(value) == seconds


# --- JSON: tolerated and refused -----------------------------------------------------------


def one(body: str | bytes, base: str | None = BASE) -> ParsedChapters:
    return parse_chapters_json(body.encode() if isinstance(body, str) else body, base)


def test_empty_chapter_list_is_no_chapters() -> None:
    assert one('{"version": "1.2.0", "chapters": []}').chapters == ()


def test_bare_list_is_read() -> None:
    parsed = one('[{"startTime": 5, "title": "Five"}, {"startTime": 1}]')
    assert [(c.start, c.end, c.title) for c in parsed.chapters] == [
        (1, 5, None),
        (5, None, "Five"),
    ]
    assert parsed.version is None


def test_utf16_with_bom() -> None:
    body = '{"chapters": [{"startTime": 0, "title": "Grüße"}]}'.encode("utf-16")
    assert one(body).chapters[0].title == "Grüße"


def test_windows_1252_body_is_read_with_a_warning() -> None:
    parsed = one(b'{"chapters": [{"startTime": 0, "title": "Caf\xe9"}]}')
    assert parsed.chapters[0].title == "Café"
    assert parsed.warnings == ("chapters are not UTF-8: read as windows-1252",)


def test_text_is_cleaned() -> None:
    body = r'{"chapters": [{"startTime": 0, "title": "  a\n\tb \ud800c "}, {"startTime": 1, "title": 7}]}'
    titles = [c.title for c in one(body).chapters]
    assert titles == ["a b ?c", "7"]
    assert all(t is not None and t.encode("utf-8") for t in titles)


def test_odd_fields_are_ignored_not_fatal() -> None:
    body = json.dumps(
        {
            "chapters": [
                {"startTime": 3, "title": ["x"], "url": 5, "img": {"a": 1}, "endTime": "soon"},
                {"startTime": 9, "title": "", "toc": "false", "url": " "},
            ]
        }
    )
    first, second = one(body).chapters
    assert first == Chapter(start=3, end=None, title=None, url=None, image=None)  # 9 is silent
    assert second == Chapter(start=9, end=None, title=None, url=None, image=None, toc=False)


def test_relative_urls_without_a_base_are_dropped() -> None:
    body = '{"chapters": [{"startTime": 0, "url": "/a", "img": "https://x.example/i.png"}]}'
    (chapter,) = one(body, None).chapters
    assert (chapter.url, chapter.image) == (None, "https://x.example/i.png")


def test_warning_quotes_at_most_five_examples() -> None:
    bad = [{"startTime": f"bad{i}"} for i in range(8)]
    parsed = one(json.dumps({"chapters": [*bad, {"startTime": 1}]}))
    assert parsed.skipped == 8
    (warning,) = parsed.warnings
    assert warning.startswith("skipped 8 bad chapter entries:")
    assert warning.count("#") == MAX_EXAMPLES


def test_too_many_chapters_are_cut(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(chapters, "MAX_CHAPTERS", 3)
    parsed = one(json.dumps({"chapters": [{"startTime": i} for i in range(10)]}))
    assert len(parsed.chapters) == 3
    assert parsed.warnings == ("read only the first 3 chapters",)


@pytest.mark.parametrize(
    ("body", "reason"),
    [
        (b"", "empty"),
        (b" \n\t", "empty"),
        (b"<html><body>Not found</body></html>", "not JSON"),
        (b'{"chapters": [', "not JSON"),
        (b"[" * 100_000, "not JSON"),
        (b"1" * 5000, "not JSON"),
        (b'"chapters"', "a str, not an object"),
        (b"1e999", "a float, not an object"),
        (b"null", "a NoneType, not an object"),
        (b'{"version": "1.2.0"}', 'no "chapters" list'),
        (b'{"chapters": {"startTime": 0}}', 'no "chapters" list'),
        (b'{"chapters": [{"title": "x"}, 5]}', "no usable chapter: skipped 2"),
        (b"\xff\xfe\x00\xd8", "not JSON"),
    ],
)
def test_unusable_bodies_raise(body: bytes, reason: str) -> None:
    with pytest.raises(ChaptersError, match=reason) as caught:
        parse_chapters_json(body, BASE)
    assert isinstance(caught.value, ParseError)
    assert isinstance(caught.value, PodarchiveError)
    assert "\n" not in str(caught.value)


# --- Podlove -------------------------------------------------------------------------------


def test_simple_chapters_empty_and_all_bad() -> None:
    assert parse_simple_chapters([]).chapters == ()
    with pytest.raises(ChaptersError, match="no usable chapter"):
        parse_simple_chapters([(None, "t", None, None), ("x", None, None, None)])


def test_simple_chapters_sort_and_fill() -> None:
    parsed = parse_simple_chapters(
        [("00:10", "B", None, None), ("0", "A", "https://a.example/", None)]
    )
    assert parsed.format == "psc"
    assert parsed.chapters == (
        Chapter(start=0, end=10, title="A", url="https://a.example/"),
        Chapter(start=10, end=None, title="B"),
    )


# --- properties ----------------------------------------------------------------------------


@given(st.binary(max_size=300))
def test_arbitrary_bytes_raise_only_chapters_error(body: bytes) -> None:
    with contextlib.suppress(ChaptersError):
        parse_chapters_json(body, BASE)


KEYS = st.sampled_from(["startTime", "endTime", "title", "url", "img", "toc", "chapters"])
SCALARS = st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=12)
JSONISH = st.recursive(
    SCALARS,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(KEYS | st.text(max_size=4), inner),
    max_leaves=20,
)


@given(st.dictionaries(KEYS, JSONISH, max_size=4) | st.lists(JSONISH, max_size=4), st.text())
def test_arbitrary_json_raises_only_chapters_error(document: object, base: str) -> None:
    body = json.dumps(document, allow_nan=True).encode("utf-8", "surrogatepass")
    try:
        parsed = parse_chapters_json(body, base)
    except ChaptersError:
        return
    for chapter in parsed.chapters:
        for url in (chapter.url, chapter.image):
            assert url is None or url.startswith(("http://", "https://"))


TIME = st.floats(0, 10**6, allow_nan=False) | st.integers(0, 10**6)
CHAPTER = st.fixed_dictionaries(
    {"startTime": TIME | TIME.map(str)},
    optional={"endTime": TIME, "title": st.text(max_size=20), "toc": st.booleans()},
)


@given(st.lists(CHAPTER, max_size=30))
def test_valid_chapters_are_sorted_and_ends_consistent(entries: list[dict[str, Any]]) -> None:
    parsed = parse_chapters_json(json.dumps({"chapters": entries}).encode(), BASE)
    got = parsed.chapters
    assert len(got) == len(entries)
    assert parsed.skipped == 0
    starts = [c.start for c in got]
    assert starts == sorted(starts)
    for i, chapter in enumerate(got):
        assert chapter.end is None or chapter.end >= chapter.start
        later = [c for c in got[i + 1 :] if c.toc or not chapter.toc]
        if chapter.end is None:
            assert not later  # only the last chapter (of its kind) may stay open
        elif later and chapter.end not in [c.start for c in later]:
            assert chapter.end >= chapter.start  # an explicit endTime, kept as given


@given(st.lists(st.tuples(TIME.map(str), st.text(max_size=10)), max_size=20))
def test_simple_chapters_ends_are_next_starts(pairs: list[tuple[str, str]]) -> None:
    parsed = parse_simple_chapters([(start, title, None, None) for start, title in pairs])
    starts = [c.start for c in parsed.chapters]
    assert starts == sorted(starts)
    assert [c.end for c in parsed.chapters] == [*starts[1:], None][: len(starts)]
