"""Feed encodings and identity edge cases, through the pipeline on a loopback server.

Each feed is served with a chosen Content-Type and run through ``update_feeds`` into a real
archive; the stored channel title, episode title and notes (HTML, text and link text) must
be the Unicode the publisher wrote. The rules (RFC 7303): a BOM beats the HTTP charset,
which beats the XML declaration; without any, XML is UTF-8. The media type itself
(``text/plain``, ``application/octet-stream``, ``text/html``, ``text/xml`` without charset)
never decides how the body is decoded.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from loopback import LoopbackSite

from podarchive.core.settings import Settings
from podarchive.read.schedule_files import FeedSchedule
from podarchive.store import Archive
from podarchive.update.run import RunReport, update_feeds

SETTINGS = Settings(connect_timeout=2, read_timeout=2, deadline=10, host_gap=0)

LATIN1 = "Café naïve Ærøskøbing, Straße ½ ±"
CP1252 = "“Curly” ‘quotes’ – €5 — Café…"
WIDE = "Ünïcødé ✓ 日本語 🎧 «ok»"


def feed_xml(text: str, declaration: str | None) -> str:
    """An RSS feed whose channel title, item title and notes all carry ``text``."""
    decl = "" if declaration is None else f'<?xml version="1.0"{declaration}?>\n'
    notes = f'&lt;p&gt;{text} &lt;a href="https://example.com/x"&gt;{text}&lt;/a&gt;&lt;/p&gt;'
    return (
        f'{decl}<rss version="2.0"><channel><title>{text}</title>'
        "<link>https://example.com/</link>"
        f"<item><title>{text}</title><guid>ep-1</guid><description>{notes}</description>"
        '<enclosure url="https://example.com/1.mp3" type="audio/mpeg" length="1"/>'
        "</item></channel></rss>"
    )


def enc(declared: str) -> str:
    return f' encoding="{declared}"'


@dataclass(frozen=True)
class Case:
    id: str
    text: str
    body: bytes
    content_type: str


CASES = [
    # (a) charset only in the HTTP Content-Type
    Case("latin1-header-only", LATIN1, feed_xml(LATIN1, "").encode("latin-1"),
         "application/rss+xml; charset=ISO-8859-1"),
    Case("cp1252-header-only", CP1252, feed_xml(CP1252, "").encode("cp1252"),
         "text/xml; charset=windows-1252"),
    Case("utf16le-header-only-no-bom", WIDE, feed_xml(WIDE, None).encode("utf-16-le"),
         "application/xml; charset=utf-16le"),
    # (b) only in the XML declaration
    Case("latin1-declaration-only", LATIN1, feed_xml(LATIN1, enc("ISO-8859-1")).encode("latin-1"),
         "application/rss+xml"),
    Case("cp1252-declaration-only", CP1252, feed_xml(CP1252, enc("windows-1252")).encode("cp1252"),
         "application/rss+xml"),
    # (c) both, agreeing
    Case("latin1-both", LATIN1, feed_xml(LATIN1, enc("iso-8859-1")).encode("latin-1"),
         "application/rss+xml; charset=iso-8859-1"),
    Case("cp1252-both", CP1252, feed_xml(CP1252, enc("windows-1252")).encode("cp1252"),
         'text/xml; charset="windows-1252"'),
    # (d) disagreeing: the header wins over the declaration...
    Case("header-utf8-beats-declared-latin1", WIDE,
         feed_xml(WIDE, enc("ISO-8859-1")).encode("utf-8"), "application/xml; charset=utf-8"),
    Case("header-latin1-beats-declared-utf8", LATIN1,
         feed_xml(LATIN1, enc("utf-8")).encode("latin-1"), "text/xml; charset=iso-8859-1"),
    Case("header-cp1252-beats-declared-latin1", CP1252,
         feed_xml(CP1252, enc("iso-8859-1")).encode("cp1252"), "text/xml; charset=windows-1252"),
    # ... and a BOM wins over both
    Case("utf8-bom-beats-header-cp1252", WIDE,
         b"\xef\xbb\xbf" + feed_xml(WIDE, enc("windows-1252")).encode("utf-8"),
         "application/rss+xml; charset=windows-1252"),
    Case("utf16le-bom-beats-header-latin1", WIDE,
         feed_xml(WIDE, enc("utf-16")).encode("utf-16"),  # Python writes LE with a BOM
         "application/rss+xml; charset=iso-8859-1"),
    # BOMs on their own
    Case("utf16le-bom", WIDE, b"\xff\xfe" + feed_xml(WIDE, enc("utf-16")).encode("utf-16-le"),
         "application/rss+xml"),
    Case("utf16be-bom", WIDE, b"\xfe\xff" + feed_xml(WIDE, enc("utf-16")).encode("utf-16-be"),
         "application/rss+xml"),
    Case("utf16be-bom-no-declaration", WIDE,
         b"\xfe\xff" + feed_xml(WIDE, None).encode("utf-16-be"), "application/rss+xml"),
    Case("utf8-bom", WIDE, b"\xef\xbb\xbf" + feed_xml(WIDE, "").encode("utf-8"),
         "application/rss+xml"),
    Case("utf8-bom-no-declaration", WIDE, b"\xef\xbb\xbf" + feed_xml(WIDE, None).encode("utf-8"),
         "application/rss+xml"),
    # UTF-8 with nothing saying so
    Case("utf8-no-declaration", WIDE, feed_xml(WIDE, None).encode("utf-8"), "application/rss+xml"),
    Case("utf8-declaration-without-encoding", WIDE, feed_xml(WIDE, "").encode("utf-8"),
         "application/rss+xml"),
    # (e) wrong or missing media types
    Case("text-plain", WIDE, feed_xml(WIDE, enc("utf-8")).encode("utf-8"), "text/plain"),
    Case("text-plain-latin1-declared", LATIN1,
         feed_xml(LATIN1, enc("iso-8859-1")).encode("latin-1"), "text/plain"),
    Case("octet-stream", WIDE, feed_xml(WIDE, None).encode("utf-8"), "application/octet-stream"),
    Case("text-html-for-rss", WIDE, feed_xml(WIDE, enc("utf-8")).encode("utf-8"), "text/html"),
    Case("text-html-charset-for-rss", CP1252, feed_xml(CP1252, None).encode("cp1252"),
         "text/html; charset=windows-1252"),
    Case("text-xml-no-charset-utf8-body", WIDE, feed_xml(WIDE, None).encode("utf-8"), "text/xml"),
    Case("text-xml-no-charset-utf8-declared", WIDE, feed_xml(WIDE, "").encode("utf-8"),
         "text/xml"),
    Case("empty-content-type", WIDE, feed_xml(WIDE, None).encode("utf-8"), ""),
]  # fmt: skip


def run(db: Path, *feeds: FeedSchedule) -> RunReport:
    with Archive(db) as archive:
        return update_feeds(archive, feeds, settings=SETTINGS)


def query(db: Path, sql: str, *params: Any) -> list[tuple[Any, ...]]:
    conn = sqlite3.connect(db)
    try:
        return conn.execute(sql, params).fetchall()
    finally:
        conn.close()


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_stored_text_is_the_right_unicode(tmp_path: Path, site: LoopbackSite, case: Case) -> None:
    if case.content_type:
        site.serve("/feed.xml", case.body, content_type=case.content_type)
    else:  # no Content-Type header at all
        site.handle(
            "/feed.xml",
            lambda h: h.wfile.write(
                f"HTTP/1.1 200 OK\r\nContent-Length: {len(case.body)}\r\n\r\n".encode() + case.body
            ),
        )
    db = tmp_path / "a.db"
    report = run(db, FeedSchedule(url=site.url("/feed.xml"), pages=False))
    (feed,) = report.feeds
    assert feed.ok, feed.error
    assert query(db, "SELECT title FROM feeds") == [(case.text,)]
    ((title, notes_html, notes_text),) = query(
        db, "SELECT title, notes_html, notes_text FROM episodes"
    )
    assert title == case.text
    assert notes_html == f'<p>{case.text} <a href="https://example.com/x">{case.text}</a></p>'
    assert notes_text == f"{case.text} {case.text}"
    assert query(db, "SELECT url, text FROM links") == [("https://example.com/x", case.text)]


def test_undecodable_bytes_never_break_the_run(tmp_path: Path, site: LoopbackSite) -> None:
    """Bytes invalid in the declared encoding: archived with what could be read, or refused."""
    body = feed_xml("ok \udcff", enc("utf-8")).encode("utf-8", "surrogateescape")
    site.serve("/bad.xml", body.replace(b"<guid>", b"\xff\xfe\xc3<guid>"))
    site.serve("/ascii.xml", feed_xml(LATIN1, enc("us-ascii")).encode("latin-1"))
    db = tmp_path / "a.db"
    report = run(
        db,
        FeedSchedule(url=site.url("/bad.xml"), pages=False),
        FeedSchedule(url=site.url("/ascii.xml"), pages=False),
    )
    for feed in report.feeds:
        assert feed.ok or (feed.error and "\n" not in feed.error)
    assert query(db, "SELECT count(*) FROM feeds WHERE last_error IS NULL") == [(2,)]
    for (text,) in query(db, "SELECT title FROM episodes"):
        assert "\udcff" not in text  # valid Unicode only: no lone surrogates reach SQLite


# --- dates and identity ----------------------------------------------------------------------


def item(title: str, *, guid: str | None = None, link: str | None = None,
         enclosure: str | None = None, date: str | None = None) -> str:  # fmt: skip
    parts = [f"<title>{title}</title>"]
    if guid is not None:
        parts.append(f"<guid>{guid}</guid>")
    if link is not None:
        parts.append(f"<link>{link}</link>")
    if enclosure is not None:
        parts.append(f'<enclosure url="{enclosure}" type="audio/mpeg" length="1"/>')
    if date is not None:
        parts.append(f"<pubDate>{date}</pubDate>")
    return f"<item>{''.join(parts)}</item>"


def rss(*items: str) -> str:
    return (
        '<?xml version="1.0" encoding="utf-8"?><rss version="2.0"><channel><title>T</title>'
        f"{''.join(items)}</channel></rss>"
    )


def test_malformed_dates_give_null_published_and_keep_the_episode(
    tmp_path: Path, site: LoopbackSite
) -> None:
    dates = {
        "garbage": "garbage",
        "empty": "",
        "impossible": "Mon, 32 Foo 2021 25:61:00 +0000",
        "year-zero": "Sat, 01 Jan 0000 00:00:00 GMT",
        "good": "Mon, 06 Jun 2022 13:00:00 +0000",
    }
    items = [item(name, guid=f"g-{name}", date=value) for name, value in dates.items()]
    site.serve("/dates.xml", rss(*items))
    db = tmp_path / "a.db"
    (feed,) = run(db, FeedSchedule(url=site.url("/dates.xml"), pages=False)).feeds
    assert feed.ok, feed.error
    stored = dict(query(db, "SELECT title, published FROM episodes"))
    assert stored == {name: None for name in dates} | {"good": "2022-06-06T13:00:00Z"}


def test_identity_falls_back_when_there_is_no_guid(tmp_path: Path, site: LoopbackSite) -> None:
    site.serve(
        "/noguid.xml",
        rss(
            item("By enclosure", enclosure="https://dts.podtrac.com/redirect.mp3/cdn.example.com/e1.mp3?cb=123"),
            item("By link", link="https://Example.com/episodes/2#top"),
            item("By title and date", date="Tue, 07 Jun 2022 10:00:00 GMT"),
            item("By title only"),
            item("Has all", guid="the-guid", link="https://example.com/4", enclosure="https://example.com/4.mp3"),
        ),
    )  # fmt: skip
    db = tmp_path / "a.db"
    url = site.url("/noguid.xml")
    (feed,) = run(db, FeedSchedule(url=url, pages=False)).feeds
    assert feed.ok, feed.error
    keys = dict(query(db, "SELECT title, key FROM episodes"))
    assert keys["By enclosure"].startswith("enclosure:")
    assert "podtrac" not in keys["By enclosure"]
    assert keys["By enclosure"].endswith("cdn.example.com/e1.mp3")  # cache buster gone
    assert keys["By link"] == "link:https://example.com/episodes/2"
    assert keys["By title and date"] == "title:By title and date|2022-06-07T10:00:00Z"
    assert keys["By title only"] == "title:By title only|"
    assert keys["Has all"] == "guid:the-guid"
    # the same body again, re-fetched as a changed one: the same keys, no new episodes
    site.routes["/noguid.xml"].body += b"\n"  # type: ignore[union-attr]
    (again,) = run(db, FeedSchedule(url=url, pages=False)).feeds
    assert (again.stats.new, again.stats.unchanged) == (0, 5)


def test_duplicate_guids_give_one_episode_and_a_warning(tmp_path: Path, site: LoopbackSite) -> None:
    site.serve(
        "/dups.xml",
        rss(
            item("First copy", guid="dup", date="Tue, 07 Jun 2022 10:00:00 GMT"),
            item("Other", guid="other"),
            item("Second copy", guid="dup", date="Mon, 06 Jun 2022 10:00:00 GMT"),
        ),
    )
    db = tmp_path / "a.db"
    (feed,) = run(db, FeedSchedule(url=site.url("/dups.xml"), pages=False)).feeds
    assert feed.ok, feed.error
    assert query(db, "SELECT key, title FROM episodes ORDER BY id") == [
        ("guid:dup", "First copy"),
        ("guid:other", "Other"),
    ]
    assert feed.stats.new == 2
    assert [w for w in feed.warnings if "duplicate" in w] == [
        "1 duplicate episode key (kept the first): item 3 repeats item 1: guid:dup"
    ]
