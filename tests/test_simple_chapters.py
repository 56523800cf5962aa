"""Podlove Simple Chapters in the feed: podcast_ns reads them, parse turns them into chapters.

The golden feeds are tests/golden/parse/psc_chapters.xml and psc_all_bad.xml (compared whole
by test_parse.py's test_golden); here are their highlights, the scan, the warnings and the row.
"""

from __future__ import annotations

import json
from pathlib import Path

import feedparser
import pytest

from podarchive.core.types import Chapter, Episode
from podarchive.read import podcast_ns
from podarchive.read.chapter_formats import MAX_CHAPTERS
from podarchive.read.parse import parse_feed
from podarchive.read.rows import episode_row

GOLDEN = Path(__file__).resolve().parent / "golden" / "parse"
PSC = "http://podlove.org/simple-chapters"


def feed(items: str, ns: str = f'xmlns:psc="{PSC}"') -> bytes:
    return (
        f'<?xml version="1.0" encoding="utf-8"?><rss version="2.0" {ns}><channel>'
        f"<title>T</title><link>https://show.example.com/</link>{items}</channel></rss>"
    ).encode()


def item(chapters: str, title: str = "Ep", link: str = "", guid: str = "g") -> str:
    link_tag = f"<link>{link}</link>" if link else ""
    return (
        f"<item><title>{title}</title>{link_tag}<guid>{guid}</guid>"
        f"<psc:chapters>{chapters}</psc:chapters></item>"
    )


def golden(name: str) -> bytes:
    return (GOLDEN / f"{name}.xml").read_bytes()


# --- the golden feeds ----------------------------------------------------------------------


def test_golden_psc_chapters() -> None:
    parsed = parse_feed(golden("psc_chapters"), url="https://example.com/psc_chapters.xml")
    first, second, third = parsed.episodes
    # NPT starts become seconds; the bad one ("soon") is skipped; ends are the next starts
    assert [c.start for c in first.simple_chapters] == [0, 62.5, 727, 3723]
    assert [c.end for c in first.simple_chapters] == [62.5, 727, 3723, None]
    assert [c.title for c in first.simple_chapters] == [
        "Intro",
        "Begrüßung & Feedback",
        "Neue Hardware",
        "Ausklang",
    ]
    # relative href/image resolve against the episode's link; javascript: is dropped
    assert first.simple_chapters[1].url == "https://podlove.example.org/pc001/feedback#top"
    assert first.simple_chapters[2].url == "https://podlove.example.org/hardware/"
    assert first.simple_chapters[2].image == "https://podlove.example.org/pc001/img/hardware.jpg"
    assert first.simple_chapters[3].url is None
    assert first.simple_chapters[3].image == "https://cdn.example.org/outro.png"
    # no link: against the feed's URL; out-of-order starts are sorted
    assert second.link is None
    assert [(c.start, c.end, c.title) for c in second.simple_chapters] == [
        (0, 90, "First"),
        (90, None, "Second"),
    ]
    assert second.simple_chapters[1].url == "https://example.com/pc002/notes.html"
    assert third.simple_chapters == ()
    assert parsed.warnings == (
        "psc:chapters of item 1 'PC001 Chapters with a page': "
        'skipped 1 bad chapter entry: #4 bad start "soon"',
    )


def test_golden_psc_all_bad_parses_with_one_warning() -> None:
    parsed = parse_feed(golden("psc_all_bad"), url="https://example.com/psc_all_bad.xml")
    assert [e.title for e in parsed.episodes] == ["Broken chapters", "Fine episode"]
    assert all(e.simple_chapters == () for e in parsed.episodes)
    (warning,) = parsed.warnings
    assert warning.startswith(
        "psc:chapters of item 1 'Broken chapters': no usable chapter: "
        "skipped 3 bad chapter entries: #1 has no start; "
    )
    assert "\n" not in warning


def test_chapter_without_start_does_not_crash_feedparser() -> None:
    # feedparser 6 raises TypeError out of parse() for a psc:chapter without start;
    # parse.py guards it, so the feed (and its other chapters) still read
    body = feed(item('<psc:chapter title="x"/><psc:chapter start="5" title="y"/>'))
    assert isinstance(feedparser.parse(body), dict)
    parsed = parse_feed(body)
    (episode,) = parsed.episodes
    assert [(c.start, c.title) for c in episode.simple_chapters] == [(5, "y")]
    assert parsed.warnings == (
        "psc:chapters of item 1 'Ep': skipped 1 bad chapter entry: #1 has no start",
    )


# --- the scan -------------------------------------------------------------------------------


def test_scan_reads_raw_attributes_in_document_order() -> None:
    body = feed(
        item(
            '<psc:chapter start=" 00:00:10 " title="B" href="b" image="i.png"/>'
            '<psc:chapter start="0" title=""/>'
            "<other/>"
            '<psc:chapter start="1:00"><psc:chapter start="nested"/></psc:chapter>'
        )
        + '<item><title>Second</title><psc:chapters><psc:chapter start="1"/></psc:chapters>'
        '<psc:chapters><psc:chapter start="2"/></psc:chapters></item>'
    )
    first, second = podcast_ns.scan(body).items
    assert first.simple_chapters == (
        ("00:00:10", "B", "b", "i.png"),
        ("0", None, None, None),
        ("1:00", None, None, None),
    )
    assert second.simple_chapters == (("1", None, None, None), ("2", None, None, None))


@pytest.mark.parametrize(
    ("ns", "tag"),
    [
        (f'xmlns:psc="{PSC}"', "psc:"),
        ('xmlns:chapters="https://podlove.org/simple-chapters/"', "chapters:"),
        (f'xmlns="{PSC}"', ""),  # the default namespace, on psc:chapters itself
    ],
)
def test_scan_by_namespace_uri(ns: str, tag: str) -> None:
    body = (
        '<rss version="2.0"><channel><title>T</title><item><title>E</title>'
        f'<{tag}chapters {ns}><{tag}chapter start="3" title="t"/></{tag}chapters></item>'
        "</channel></rss>"
    ).encode()
    (scanned,) = podcast_ns.scan(body).items
    assert scanned.simple_chapters == (("3", "t", None, None),)


def test_scan_ignores_other_namespaces_and_stray_chapters() -> None:
    body = feed(
        '<item xmlns:x="https://example.com/not-psc"><title>E</title>'
        '<x:chapters><x:chapter start="1"/></x:chapters>'
        '<psc:chapter start="2"/></item>'
    )
    (scanned,) = podcast_ns.scan(body).items
    assert scanned.simple_chapters == ()


def test_scan_of_undeclared_psc_prefix() -> None:
    body = feed(item('<psc:chapter start="7" title="t"/>'), ns="")
    (scanned,) = podcast_ns.scan(body).items
    assert scanned.simple_chapters == (("7", "t", None, None),)


def test_scan_stops_one_over_the_cap_and_parse_says_so() -> None:
    many = "".join(f'<psc:chapter start="{i}"/>' for i in range(MAX_CHAPTERS + 50))
    body = feed(item(many))
    (scanned,) = podcast_ns.scan(body).items
    assert len(scanned.simple_chapters) == MAX_CHAPTERS + 1
    parsed = parse_feed(body)
    assert len(parsed.episodes[0].simple_chapters) == MAX_CHAPTERS
    assert parsed.warnings == (
        f"psc:chapters of item 1 'Ep': read only the first {MAX_CHAPTERS} chapters",
    )


# --- parse ---------------------------------------------------------------------------------


def test_no_url_and_no_link_keeps_only_absolute_urls() -> None:
    body = feed(item('<psc:chapter start="0" href="rel" image="https://cdn.example.com/a.png"/>'))
    (episode,) = parse_feed(body).episodes
    assert episode.simple_chapters == (
        Chapter(0, None, None, None, "https://cdn.example.com/a.png"),
    )


def test_non_http_link_falls_back_to_the_feed_url() -> None:
    body = feed(item('<psc:chapter start="0" href="notes"/>', link="ftp://files.example.com/x/"))
    (episode,) = parse_feed(body, url="https://feeds.example.com/show/rss").episodes
    assert episode.simple_chapters[0].url == "https://feeds.example.com/show/notes"


def test_warning_names_the_guid_when_there_is_no_title() -> None:
    body = feed(
        '<item><guid>guid-42</guid><psc:chapters><psc:chapter start="x"/></psc:chapters></item>'
        '<item><psc:chapters><psc:chapter start="y"/></psc:chapters></item>'
    )
    parsed = parse_feed(body)
    assert [e.guid for e in parsed.episodes] == ["guid-42", None]
    assert parsed.warnings == (
        "psc:chapters of item 1 'guid-42': no usable chapter: "
        'skipped 1 bad chapter entry: #1 bad start "x"',
        'psc:chapters of item 2: no usable chapter: skipped 1 bad chapter entry: #1 bad start "y"',
    )


def test_many_bad_episodes_give_a_few_lines_and_a_count() -> None:
    body = feed(
        "".join(item('<psc:chapter start="bad"/>', f"E{i}", guid=f"g{i}") for i in range(12))
    )
    parsed = parse_feed(body)
    assert len(parsed.episodes) == 12
    assert len(parsed.warnings) == 6
    assert [w.split(":")[1] for w in parsed.warnings[:5]] == [
        f"chapters of item {i} 'E{i - 1}'" for i in range(1, 6)
    ]
    assert parsed.warnings[5] == "psc:chapters of 7 more items had bad entries too"


def test_long_titles_keep_the_warning_on_one_short_line() -> None:
    title = "T" * 500
    bad = "".join(f'<psc:chapter start="{"9" * 30}:{i}"/>' for i in range(8))
    (warning,) = parse_feed(feed(item(bad, title=title))).warnings
    assert "\n" not in warning
    assert len(warning) <= 400
    assert f"'{'T' * 39}…'" in warning


# --- the row -------------------------------------------------------------------------------


def test_episode_row_holds_simple_chapters_as_json() -> None:
    # no key without chapters: a row stored before schema 8 keeps its hash (NULL either way)
    assert "simple_chapters" not in episode_row(Episode(guid="g"))
    chapter = Chapter(start=62.5, end=90.0, title="Begrüßung", url="https://x.example/a")
    row = episode_row(Episode(guid="g", simple_chapters=(chapter,)))
    assert json.loads(row["simple_chapters"]) == [
        {
            "start": 62.5,
            "end": 90.0,
            "title": "Begrüßung",
            "url": "https://x.example/a",
            "image": None,
            "toc": True,
        }
    ]
    assert "Begrüßung" in row["simple_chapters"]  # not \\u-escaped, as the other lists
