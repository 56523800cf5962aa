"""Issue #17: one bad character, byte or date must cost only itself, never the feed.

* an XML character reference to a character XML forbids (a lone surrogate, NUL, U+FFFE,
  beyond U+10FFFF) becomes U+FFFD, with one warning that counts them;
* a byte sequence invalid in the declared encoding becomes U+FFFD and the rest of the feed
  is decoded as declared; when the publisher fixes the byte, no revision is written;
* a date whose year is not a plain year in 1..9999 is stored as NULL, with a warning;
* warnings stay small however many items repeat a key or carry a bad date.
"""

from __future__ import annotations

import json
import sqlite3
import time
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from loopback import FIXTURES, LoopbackSite

from podarchive.core.identity import dedupe
from podarchive.core.settings import Settings
from podarchive.core.types import Episode
from podarchive.read import feed_encoding
from podarchive.read import parse as parse_module
from podarchive.read.extract import extract_page, html_to_text
from podarchive.read.parse import parse_feed
from podarchive.read.schedule_files import FeedSchedule
from podarchive.rules.history import changed_feed_fields, changed_fields
from podarchive.store import Archive
from podarchive.update.run import RunReport, update_feeds

SETTINGS = Settings(
    connect_timeout=2, read_timeout=2, deadline=10, host_gap=0, allow_private_hosts=True
)
PYTORCH = (FIXTURES / "pytorch" / "feed.xml").read_bytes()
GOLDEN = Path(__file__).resolve().parent / "golden" / "parse"
EXPECTED = json.loads((FIXTURES / "pytorch" / "expected.json").read_text(encoding="utf-8"))
PYTORCH_TITLES = [e["title"] for e in EXPECTED["episodes"]]
FFFD = "\ufffd"
WIDE_TITLES = [f"Épisode {i} — café “{i}” 日本語 🎧" for i in range(1, 22)]


def synthetic(
    titles: list[str] = WIDE_TITLES,
    declaration: str = ' encoding="utf-8"',
    channel: str = "Synthetic ünïcode",
) -> str:
    items = "".join(
        f"<item><title>{t}</title><guid>g{i}</guid>"
        f"<pubDate>Mon, {i:02d} Jun 2022 10:00:00 GMT</pubDate></item>"
        for i, t in enumerate(titles, 1)
    )
    return (
        f'<?xml version="1.0"{declaration}?><rss version="2.0"><channel>'
        f"<title>{channel}</title>{items}</channel></rss>"
    )


def titles_of(body: bytes, **kwargs: Any) -> list[str | None]:
    return [e.title for e in parse_feed(body, **kwargs).episodes]


def with_title(body: bytes, title: str, new: bytes) -> bytes:
    old = f"<title>{title}</title>".encode()
    assert body.count(old) == 1
    return body.replace(old, b"<title>" + new + b"</title>")


def run(db: Path, *feeds: FeedSchedule) -> RunReport:
    with Archive(db) as archive:
        return update_feeds(archive, feeds, settings=SETTINGS)


def query(db: Path, sql: str, *params: Any) -> list[tuple[Any, ...]]:
    conn = sqlite3.connect(db)
    try:
        return conn.execute(sql, params).fetchall()
    finally:
        conn.close()


# --- 1. character references to characters XML forbids ----------------------------------

FORBIDDEN_REFS = [
    ("&#xD800;", "a lone surrogate"),
    ("&#55296;", "a lone surrogate"),
    ("&#xd800;", "a lone surrogate"),
    ("&#xDFFF;", "a lone surrogate"),
    ("&#x0000DBFF;", "a lone surrogate"),
    ("&#0;", "a control character"),
    ("&#x1;", "a control character"),
    ("&#x1F;", "a control character"),
    ("&#xFFFE;", "a noncharacter"),
    ("&#65535;", "a noncharacter"),
    ("&#x110000;", "beyond U+10FFFF"),
    ("&#99999999999;", "beyond U+10FFFF"),
]


@pytest.mark.parametrize(("ref", "kind"), FORBIDDEN_REFS, ids=[r for r, _ in FORBIDDEN_REFS])
def test_forbidden_reference_costs_only_its_character(ref: str, kind: str) -> None:
    title = PYTORCH_TITLES[4]
    body = with_title(PYTORCH, title, f"{title} {ref} end".encode())
    feed = parse_feed(body)
    assert [e.title for e in feed.episodes] == [
        f"{title} {FFFD} end" if t == title else t for t in PYTORCH_TITLES
    ]
    assert feed.warnings == (f"replaced 1 invalid character reference ({kind}) with U+FFFD",)
    clean = parse_feed(with_title(PYTORCH, title, f"{title} &#xFFFD; end".encode()))
    assert feed.episodes == clean.episodes
    assert feed.channel == clean.channel


def test_many_forbidden_references_give_one_counted_warning() -> None:
    refs = "&#xD800;&#xDC00;" * 500 + "&#0;&#x110000;"
    body = with_title(PYTORCH, PYTORCH_TITLES[0], refs.encode())
    feed = parse_feed(body)
    assert feed.episodes[0].title == FFFD * 1002
    assert feed.warnings == (
        "replaced 1,002 invalid character references (1,000 lone surrogates,"
        " 1 control character, 1 beyond U+10FFFF) with U+FFFD",
    )


def test_references_everywhere_in_an_item() -> None:
    body = (
        b'<?xml version="1.0"?><rss version="2.0" xmlns:podcast="https://podcastindex.org/'
        b'namespace/1.0"><channel><title>T&#xD800;</title><item><guid>g&#xDC00;</guid>'
        b"<title>a</title><description>&lt;p&gt;n&#xD800;&lt;/p&gt;</description>"
        b'<enclosure url="https://x/a&#xD800;.mp3" type="audio/mpeg"/>'
        b"<podcast:person>P&#xD800;</podcast:person></item></channel></rss>"
    )
    feed = parse_feed(body)
    (episode,) = feed.episodes
    assert feed.channel.title == f"T{FFFD}"
    assert episode.guid == f"g{FFFD}"
    assert episode.notes_html == f"<p>n{FFFD}</p>"
    assert episode.enclosure is not None
    assert episode.enclosure.url == f"https://x/a{FFFD}.mp3"
    assert [p.name for p in episode.persons] == [f"P{FFFD}"]
    assert feed.warnings == (
        "replaced 5 invalid character references (5 lone surrogates) with U+FFFD",
    )


def test_references_in_cdata_and_comments_are_text_and_left_alone() -> None:
    body = (
        b'<?xml version="1.0"?><rss version="2.0"><channel><title>T</title><item><guid>g</guid>'
        b"<!-- &#xD800; --><title>a &#xD800;</title>"
        b"<description><![CDATA[<p>&#xD800; &#0;</p>]]></description></item></channel></rss>"
    )
    feed = parse_feed(body)
    assert feed.episodes[0].notes_html == "<p>&#xD800; &#0;</p>"  # raw HTML, as written
    assert feed.episodes[0].title == f"a {FFFD}"
    assert len(feed.warnings) == 1


def test_valid_references_are_untouched() -> None:
    refs = "&#x9;&#10;&#xD;&#x20;&#xD7FF;&#xE000;&#xFFFD;&#x10000;&#x10FFFF;&#1114111;&#39;"
    body = with_title(PYTORCH, PYTORCH_TITLES[0], refs.encode())
    feed = parse_feed(body)
    assert feed.warnings == ()
    assert feed.episodes[0].title == "\ud7ff\ue000\ufffd\U00010000\U0010ffff\U0010ffff'"


def _forbidden(code: int) -> bool:
    allowed = (
        code in (0x9, 0xA, 0xD)
        or 0x20 <= code <= 0xD7FF
        or 0xE000 <= code <= 0xFFFD
        or 0x10000 <= code <= 0x10FFFF
    )
    return not allowed


def test_reference_pattern_matches_exactly_the_forbidden_characters() -> None:
    pattern = feed_encoding._FORBIDDEN_REF
    codes = [*range(0x10100), *range(0x10FF00, 0x110100), 0x1000000, 10**7, 10**12]
    for code in codes:
        forbidden = _forbidden(code)
        for ref in (
            f"&#{code};",
            f"&#x{code:x};",
            f"&#x{code:X};",
            f"&#00{code};",
            f"&#x0{code:x};",
        ):
            assert (pattern.fullmatch(ref.encode()) is not None) is forbidden, ref
    for code in range(0xD700, 0xE100):  # decimal surrogates and neighbours, again
        assert (pattern.fullmatch(f"&#{code};".encode()) is not None) is _forbidden(code)


def test_surrogates_in_utf16_references_and_code_units() -> None:
    text = synthetic(["a &#xD800; b", "c", "d"], ' encoding="utf-16"')
    feed = parse_feed(text.encode("utf-16"))
    assert [e.title for e in feed.episodes] == [f"a {FFFD} b", "c", "d"]
    assert feed.warnings == (
        "replaced 1 invalid character reference (a lone surrogate) with U+FFFD",
    )
    raw = synthetic(["a \ud800 b", "c", "d"], ' encoding="utf-16"').encode(
        "utf-16", "surrogatepass"
    )
    feed = parse_feed(raw)
    assert [e.title for e in feed.episodes] == [f"a {FFFD} b", "c", "d"]
    assert feed.warnings == ("replaced 1 invalid utf-16le byte sequence with U+FFFD",)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.sampled_from(range(len(PYTORCH_TITLES))),
    st.one_of(
        st.integers(0xD800, 0xDFFF),
        st.sampled_from([*range(0x9), 0xB, 0xC, *range(0xE, 0x20), 0xFFFE, 0xFFFF]),
        st.integers(0x110000, 10**30),
    ),
    st.booleans(),
)
def test_any_forbidden_reference_leaves_every_other_title_unchanged(
    index: int, code: int, hexadecimal: bool
) -> None:
    ref = f"&#x{code:X};" if hexadecimal else f"&#{code};"
    title = PYTORCH_TITLES[index]
    feed = parse_feed(with_title(PYTORCH, title, f"{ref}{title}".encode()))
    assert [e.title for e in feed.episodes] == [
        FFFD + t if i == index else t for i, t in enumerate(PYTORCH_TITLES)
    ]
    assert len(feed.warnings) == 1


def test_valid_bodies_take_the_fast_path_untouched() -> None:
    goldens = [p for p in GOLDEN.glob("*.xml") if p.name != "decoding_attacks.xml"]
    for body in [PYTORCH, synthetic().encode(), *(p.read_bytes() for p in goldens)]:
        headers = parse_module._feedparser_headers(None, None, body)
        readable, same_headers, repairs = feed_encoding.readable(body, headers)
        assert (readable, same_headers, repairs) == (body, headers, ())
        assert readable is body


# --- surrogates in show notes and on episode pages ---------------------------------------

PAGE_TEXT = "Show notes that are long enough to count as notes, with a bad reference: "


def test_page_with_a_surrogate_reference_gives_u_fffd() -> None:
    page = f"<html><body><article><p>{PAGE_TEXT}&#xD800; &#55296;.</p></article></body></html>"
    notes = extract_page(page.encode(), "https://example.com/p", content_type="text/html")
    assert notes.text == f"{PAGE_TEXT}{FFFD} {FFFD}."


def test_next_data_json_with_a_lone_surrogate_gives_u_fffd() -> None:
    data = (
        '{"props":{"pageProps":{"episode":{"long_description":"<p>'
        + PAGE_TEXT
        + '\\ud800 <a href=\\"https://x.example/\\udc00\\">l\\ud800</a></p>"}}}}'
    )
    page = (
        '<html><body><script id="__NEXT_DATA__" type="application/json">'
        f"{data}</script></body></html>"
    )
    notes = extract_page(page.encode(), "https://x.simplecast.com/e", content_type="text/html")
    for value in (notes.html, notes.text, *(link.text for link in notes.links)):
        value.encode("utf-8")  # no lone surrogate left: SQLite would refuse it
    assert notes.text == f"{PAGE_TEXT}{FFFD} l{FFFD}"
    assert notes.html.startswith(f"<p>{PAGE_TEXT}{FFFD} ")


def test_str_input_with_lone_surrogates_is_cleaned() -> None:
    assert html_to_text("<p>a \ud800 b</p>") == f"a {FFFD} b"
    notes = extract_page(
        f"<html><body><article><p>{PAGE_TEXT}\udfff</p></article></body></html>",
        "https://example.com/p",
    )
    assert notes.text == PAGE_TEXT + FFFD


def test_surrogate_feed_and_page_store_end_to_end(tmp_path: Path, site: LoopbackSite) -> None:
    page = f"<html><body><article><p>{PAGE_TEXT}&#xD800;</p></article></body></html>"
    site.serve("/ep/1", page, content_type="text/html; charset=utf-8")
    items = "".join(
        f"<item><title>t{i}{'&#xD800;' if i == 2 else ''}</title><guid>g{i}</guid>"
        f"<link>{site.url(f'/ep/{i}')}</link></item>"
        for i in range(1, 10)
    )
    site.serve("/f.xml", f'<rss version="2.0"><channel><title>T</title>{items}</channel></rss>')
    db = tmp_path / "a.db"
    (feed,) = run(db, FeedSchedule(url=site.url("/f.xml"))).feeds
    assert feed.ok, feed.error
    assert feed.stats.new == 9
    assert query(db, "SELECT title FROM episodes WHERE guid = 'g2'") == [(f"t2{FFFD}",)]
    assert query(db, "SELECT page_notes_text FROM episodes WHERE guid = 'g1'") == [
        (PAGE_TEXT + FFFD,)
    ]
    ((warnings,),) = query(db, "SELECT warnings FROM feeds")
    assert json.loads(warnings) == [
        "replaced 1 invalid character reference (a lone surrogate) with U+FFFD"
    ]


# --- 2. bytes invalid in the declared encoding -------------------------------------------


def test_one_invalid_byte_in_pytorch_costs_one_character() -> None:
    title = PYTORCH_TITLES[3]
    body = with_title(PYTORCH, title, title.encode() + b" \xff")
    feed = parse_feed(body)
    assert [e.title for e in feed.episodes] == [
        f"{title} {FFFD}" if t == title else t for t in PYTORCH_TITLES
    ]
    assert feed.warnings == ("replaced 1 invalid utf-8 byte sequence with U+FFFD",)
    clean = parse_feed(PYTORCH)
    assert feed.channel == clean.channel
    assert [e for e in feed.episodes if e.title != f"{title} {FFFD}"] == [
        e for e in clean.episodes if e.title != title
    ]


def test_one_invalid_byte_in_a_wide_feed_costs_one_character() -> None:
    body = synthetic().encode().replace("Épisode 7 ".encode(), "Épisode 7 ".encode() + b"\xff")
    feed = parse_feed(body, headers={"Content-Type": "application/rss+xml; charset=utf-8"})
    assert [e.title for e in feed.episodes] == [
        t.replace("Épisode 7 ", f"Épisode 7 {FFFD}") for t in WIDE_TITLES
    ]
    assert feed.channel.title == "Synthetic ünïcode"
    assert feed.warnings == ("replaced 1 invalid utf-8 byte sequence with U+FFFD",)


def test_invalid_sequences_are_counted_once_each() -> None:
    bad = b"\xff \xc3 \xe2\x82 \xed\xa0\x80 \xf0\x9f\x8e"  # lone, truncated, surrogate, cut
    body = synthetic().encode().replace(b"<title>Synthetic", b"<title>" + bad + b" Synthetic")
    feed = parse_feed(body)
    replaced = bad.decode("utf-8", "replace")
    assert feed.channel.title == f"{replaced} Synthetic ünïcode"
    assert [e.title for e in feed.episodes] == WIDE_TITLES
    count = replaced.count(FFFD)
    assert count == 7  # maximal subparts: the encoded surrogate is three
    assert feed.warnings == (f"replaced {count} invalid utf-8 byte sequences with U+FFFD",)


def test_a_feed_mostly_in_another_encoding_is_read_as_before() -> None:
    """Latin-1 labelled UTF-8 is a wrong label, not a few bad bytes: feedparser's fallback."""
    titles = ["Notícias", "São Paulo", "Último", "Açaí"]
    body = synthetic(titles, channel="Canal").encode("latin-1")
    feed = parse_feed(body)
    assert [e.title for e in feed.episodes] == titles
    assert feed.warnings == (
        "feed problem: document declared as utf-8, but parsed as windows-1252",
    )
    few = synthetic(titles[:3], channel="Canal").encode("latin-1")  # three: taken as stray bytes
    assert [e.title for e in parse_feed(few).episodes] == [
        "Not\ufffdcias",
        "S\ufffdo Paulo",
        "\ufffdltimo",
    ]


@pytest.mark.parametrize(
    ("declared", "headers"),
    [
        (' encoding="shift_jis"', None),
        ("", {"Content-Type": "text/xml; charset=shift_jis"}),
        (' encoding="iso-8859-1"', {"Content-Type": "text/xml; charset=shift_jis"}),
    ],
)
def test_other_declared_encodings_are_kept(declared: str, headers: dict[str, str] | None) -> None:
    titles = ["日本語のタイトル", "二番目", "三番目"]
    body = (
        synthetic(titles, declared, channel="チャンネル")
        .encode("shift_jis")
        .replace("二番目".encode("shift_jis"), "二番目".encode("shift_jis") + b"\x80")
    )
    feed = parse_feed(body, headers=headers)
    assert [e.title for e in feed.episodes] == [titles[0], f"二番目{FFFD}", titles[2]]
    assert feed.warnings == ("replaced 1 invalid shift_jis byte sequence with U+FFFD",)


def test_a_bom_decides_even_when_bytes_are_bad() -> None:
    body = b"\xef\xbb\xbf" + synthetic(["é", "b"], ' encoding="windows-1252"').encode()
    feed = parse_feed(body.replace("<title>é".encode(), b"<title>\xff\xc3\xa9"))
    assert [e.title for e in feed.episodes] == [f"{FFFD}é", "b"]
    assert feed.warnings == ("replaced 1 invalid utf-8 byte sequence with U+FFFD",)


@st.composite
def one_bad_byte(draw: st.DrawFn) -> tuple[bytes, int, int, bytes]:
    """A feed (PyTorch or the wide synthetic one), a title, and a byte invalid there."""
    body, titles = draw(
        st.sampled_from([(PYTORCH, PYTORCH_TITLES), (synthetic().encode(), WIDE_TITLES)])
    )
    index = draw(st.integers(0, len(titles) - 1))
    encoded = titles[index].encode()
    cut = draw(st.integers(0, len(encoded)))
    while 0 < cut < len(encoded) and 0x80 <= encoded[cut] < 0xC0:
        cut -= 1  # between two characters
    bad = draw(st.sampled_from([b"\x80", b"\xbf", b"\xc0", b"\xc3", b"\xe2\x82", b"\xf5", b"\xff"]))
    return body, index, cut, bad


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(one_bad_byte())
def test_any_single_invalid_byte_leaves_every_other_title_unchanged(
    case: tuple[bytes, int, int, bytes],
) -> None:
    body, index, cut, bad = case
    clean = parse_feed(body)
    title = clean.episodes[index].title
    assert title is not None
    encoded = title.encode()
    broken = with_title(body, title, encoded[:cut] + bad + encoded[cut:])
    feed = parse_feed(broken)
    expected = (encoded[:cut] + bad + encoded[cut:]).decode("utf-8", "replace").strip()
    assert [e.title for e in feed.episodes] == [
        expected if i == index else e.title for i, e in enumerate(clean.episodes)
    ]
    assert feed.channel == clean.channel
    assert len(feed.warnings) == 1


def test_a_fixed_byte_is_no_revision_end_to_end(tmp_path: Path, site: LoopbackSite) -> None:
    """Issue #17: the publisher fixes a byte; no revision, the corrected title, nothing else."""
    good = synthetic().encode()
    broken = good.replace("café “7”".encode(), b"caf\xe9 \xe2\x80\x9c7\xe2\x80\x9d")  # latin-1 é
    site.serve("/f.xml", broken, content_type="application/rss+xml; charset=utf-8")
    url, db = site.url("/f.xml"), tmp_path / "a.db"
    (first,) = run(db, FeedSchedule(url=url, pages=False)).feeds
    assert first.ok, first.error
    stored = dict(query(db, "SELECT guid, title FROM episodes"))
    assert len(stored) == 21
    assert stored == {
        f"g{i}": t.replace("café “7”", f"caf{FFFD} “7”") for i, t in enumerate(WIDE_TITLES, 1)
    }
    assert query(db, "SELECT title FROM feeds") == [("Synthetic ünïcode",)]
    assert first.warnings == ("replaced 1 invalid utf-8 byte sequence with U+FFFD",)

    site.serve("/f.xml", good, content_type="application/rss+xml; charset=utf-8")
    (second,) = run(db, FeedSchedule(url=url, pages=False)).feeds
    assert second.ok, second.error
    assert (second.stats.new, second.stats.changed, second.stats.unchanged) == (0, 1, 20)
    assert query(db, "SELECT count(*) FROM episode_revisions") == [(0,)]
    assert dict(query(db, "SELECT guid, title FROM episodes")) == {
        f"g{i}": t for i, t in enumerate(WIDE_TITLES, 1)
    }
    assert query(db, "SELECT warnings FROM feeds") == [(None,)]


def test_pytorch_with_a_bad_byte_end_to_end(tmp_path: Path, site: LoopbackSite) -> None:
    title = PYTORCH_TITLES[2]
    site.serve("/p.xml", with_title(PYTORCH, title, title.encode() + b"\xff"))
    url, db = site.url("/p.xml"), tmp_path / "a.db"
    (first,) = run(db, FeedSchedule(url=url, pages=False)).feeds
    assert first.ok, first.error
    assert sorted(t for (t,) in query(db, "SELECT title FROM episodes")) == sorted(
        t + FFFD if t == title else t for t in PYTORCH_TITLES
    )
    site.serve("/p.xml", PYTORCH)
    (second,) = run(db, FeedSchedule(url=url, pages=False)).feeds
    assert (second.stats.new, second.stats.changed, second.stats.unchanged) == (0, 1, 8)
    assert query(db, "SELECT count(*) FROM episode_revisions") == [(0,)]
    assert sorted(t for (t,) in query(db, "SELECT title FROM episodes")) == sorted(PYTORCH_TITLES)


# --- what is a revision ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("old", "new", "changed"),
    [
        (f"caf{FFFD}", "café", []),
        (f"caf{FFFD} ok", "caf ok", []),  # the stray byte removed
        (f"{FFFD}{FFFD} x", "日本 x", []),
        (f"a{FFFD}b{FFFD}c", "a…b’c", []),
        (f"caf{FFFD}", "cafe!", []),
        ("café", f"caf{FFFD}", ["title"]),  # the reverse loses text: kept as a revision
        (f"caf{FFFD}", "tea", ["title"]),
        (f"caf{FFFD} ok", "café not ok", ["title"]),
        (f"caf{FFFD}", "café au lait", ["title"]),  # more than the replaced bytes can hold
        (f"a{FFFD}", None, ["title"]),
    ],
)
def test_replacement_characters_filled_in_are_no_revision(
    old: str, new: str | None, changed: list[str]
) -> None:
    assert changed_fields({"title": old}, {"title": new}) == changed
    assert changed_feed_fields({"title": old}, {"title": new}) == changed


def test_replacement_comparison_is_not_exponential() -> None:
    old = f"a{FFFD}" * 2000
    start = time.perf_counter()
    for new in ("a" * 8000 + "b", "a" * 10_000, "ab" * 2000 + "c", "x"):
        changed_fields({"notes_html": old}, {"notes_html": new})
    assert time.perf_counter() - start < 1
    assert changed_fields({"notes_html": old}, {"notes_html": "x"}) == ["notes"]
    assert changed_fields({"notes_html": old[:200]}, {"notes_html": "ab" * 100}) == []


# --- 3. dates ----------------------------------------------------------------------------


def dated(*dates: str) -> bytes:
    items = "".join(
        f"<item><guid>g{i}</guid><title>t{i}</title><pubDate>{d}</pubDate></item>"
        for i, d in enumerate(dates, 1)
    )
    return f'<rss version="2.0"><channel><title>T</title>{items}</channel></rss>'.encode()


@pytest.mark.parametrize(
    "date",
    [
        "-0001-01-01",
        "-0001-01-01T00:00:00Z",
        "12345678901234567890-01-01",
        "99999999999999999999-01-01T00:00:00Z",
        "99999-01-01",
        "10000-01-01",
        "Mon, 06 Jun -1 13:00:00 GMT",
        "Mon, 06 Jun 0 13:00:00 GMT",
        "0000-01-01",
    ],
)
def test_unreadable_year_gives_null_and_a_warning(date: str) -> None:
    feed = parse_feed(dated("Mon, 06 Jun 2022 13:00:00 GMT", "2022-06-07", date))
    assert [e.published for e in feed.episodes] == [
        "2022-06-06T13:00:00Z",
        "2022-06-07T00:00:00Z",
        None,
    ]
    assert feed.warnings == (f"unreadable date {date!r} in item 3",)


@pytest.mark.parametrize(
    ("date", "iso"),
    [
        ("Mon, 06 Jun 2022 13:00:00 GMT", "2022-06-06T13:00:00Z"),
        ("Sat, 01 Jan 2022 00:30:00 +0100", "2021-12-31T23:30:00Z"),
        ("Fri, 31 Dec 2021 23:30:00 -0100", "2022-01-01T00:30:00Z"),
        ("Thu, 01 Jan 04 19:48:21 GMT", "2004-01-01T19:48:21Z"),
        ("Mon, 06 Jun 99 13:00:00 GMT", "1999-06-06T13:00:00Z"),
        ("2022-06-06T13:00:00+00:00", "2022-06-06T13:00:00Z"),
        ("2003-12-31T10:14:55.000Z", "2003-12-31T10:14:55Z"),
        ("20220606", "2022-06-06T00:00:00Z"),
        ("0001-01-01", "0001-01-01T00:00:00Z"),
        ("Mon, 06 Jun 9999 13:00:00 GMT", "9999-06-06T13:00:00Z"),
        ("2022", "2022-01-01T00:00:00Z"),
    ],
)
def test_readable_dates_are_unchanged(date: str, iso: str) -> None:
    feed = parse_feed(dated(date))
    assert feed.episodes[0].published == iso
    assert feed.warnings == ()


def test_unreadable_updated_and_channel_dates() -> None:
    body = (
        b'<feed xmlns="http://www.w3.org/2005/Atom"><title>T</title>'
        b"<updated>-0001-01-01T00:00:00Z</updated><entry><id>1</id>"
        b"<published>2022-01-01T00:00:00Z</published><updated>99999-01-01T00:00:00Z</updated>"
        b"</entry></feed>"
    )
    feed = parse_feed(body)
    assert feed.channel.updated is None
    assert (feed.episodes[0].published, feed.episodes[0].updated) == ("2022-01-01T00:00:00Z", None)
    assert feed.warnings == (
        "2 unreadable dates: '-0001-01-01T00:00:00Z' in the channel,"
        " '99999-01-01T00:00:00Z' in item 1",
    )


def test_many_unreadable_dates_give_one_small_warning() -> None:
    feed = parse_feed(dated(*["-0001-01-01"] * 3000))
    assert all(e.published is None for e in feed.episodes)
    (warning,) = feed.warnings
    assert warning.startswith("3,000 unreadable dates, e.g. '-0001-01-01' in item 1, ")
    assert len(warning) < 1000


# --- 4. warnings stay small ------------------------------------------------------------


def test_ten_thousand_duplicates_give_one_small_warning() -> None:
    episodes = tuple(Episode(guid="same", title=str(i)) for i in range(10_000))
    kept, warnings = dedupe(episodes)
    assert [e.title for _, e in kept] == ["0"]
    (warning,) = warnings
    assert warning.startswith(
        "9,999 duplicate episode keys (kept the first of each), e.g. item 2 repeats item 1: guid:same"
    )
    assert len(warning) < 1000


def test_one_duplicate_warning() -> None:
    episodes = (Episode(guid="a"), Episode(guid="b"), Episode(guid="a"))
    assert dedupe(episodes)[1] == [
        "1 duplicate episode key (kept the first): item 3 repeats item 1: guid:a"
    ]


def test_long_keys_are_cut_in_the_warning() -> None:
    episodes = tuple(Episode(guid=f"{i % 7}" + "k" * 5000) for i in range(100))
    (warning,) = dedupe(episodes)[1]
    assert warning.startswith(
        "93 duplicate episode keys (kept the first of each), e.g. item 8 repeats item 1: guid:0kkk"
    )
    assert len(warning) < 1000


def test_stored_warnings_are_small_end_to_end(tmp_path: Path, site: LoopbackSite) -> None:
    items = "".join(
        f"<item><guid>dup</guid><title>t{i}&#xD800;</title>"
        f"<pubDate>-0001-01-0{i % 9 + 1}</pubDate></item>"
        for i in range(2000)
    )
    site.serve("/d.xml", f'<rss version="2.0"><channel><title>T</title>{items}</channel></rss>')
    db = tmp_path / "a.db"
    (feed,) = run(db, FeedSchedule(url=site.url("/d.xml"), pages=False)).feeds
    assert feed.ok, feed.error
    assert query(db, "SELECT count(*) FROM episodes") == [(1,)]
    ((warnings,),) = query(db, "SELECT warnings FROM feeds")
    assert len(warnings.encode()) < 3000
    assert [w.split(" ", 2)[:2] for w in json.loads(warnings)] == [
        ["replaced", "2,000"],
        ["2,000", "unreadable"],
        ["1,999", "duplicate"],
        ["kept", "1"],  # of the 2,000 items feedparser read (#23)
    ]


def test_repaired_feed_still_proves_removals(tmp_path: Path, site: LoopbackSite) -> None:
    """A repaired byte is no malformed XML: an episode left out of a complete feed is removed.

    Only a feed feedparser had to *recover* (items may be missing) is no evidence of removal;
    the decoding and date warnings of #17 must not switch that evidence off.
    """

    def complete(titles: list[str], bad: bool) -> bytes:
        fh = 'xmlns:fh="http://purl.org/syndication/history/1.0"'
        body = synthetic(titles).replace('<rss version="2.0">', f'<rss version="2.0" {fh}>')
        raw = body.replace("<channel>", "<channel><fh:complete/>").encode()
        return raw.replace("Épisode 1 ".encode(), b"\xc9pisode 1 ") if bad else raw

    url, db = site.url("/c.xml"), tmp_path / "a.db"
    site.serve("/c.xml", complete(WIDE_TITLES, bad=False), content_type="application/rss+xml")
    (first,) = run(db, FeedSchedule(url=url, pages=False)).feeds
    assert first.ok, first.error
    site.serve("/c.xml", complete(WIDE_TITLES[:-1], bad=True), content_type="application/rss+xml")
    (second,) = run(db, FeedSchedule(url=url, pages=False)).feeds
    assert second.ok, second.error
    assert second.warnings == ("replaced 1 invalid utf-8 byte sequence with U+FFFD",)
    removed = query(db, "SELECT guid FROM episodes WHERE removed_from_feed_at IS NOT NULL")
    assert removed == [("g21",)]
