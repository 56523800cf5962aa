"""Tests for podarchive.read.parse (feedparser adapter) and podarchive.read.podcast_ns (lxml pass)."""

from __future__ import annotations

import builtins
import contextlib
import dataclasses
import json
import os
import socket
import time
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from podarchive.core.errors import NotAFeed, ParseError
from podarchive.core.types import Enclosure, ParsedFeed
from podarchive.read import parse as parse_module
from podarchive.read import podcast_ns
from podarchive.read.feed_fields import parse_duration
from podarchive.read.parse import parse_feed

TESTS = Path(__file__).resolve().parent
GOLDEN = TESTS / "golden" / "parse"
PYTORCH = TESTS / "fixtures" / "pytorch"
REGEN = os.environ.get("PODARCHIVE_REGEN_GOLDEN") == "1"

ITUNES = 'xmlns:itunes="http://www.itunes.com/dtds/podcast-1.0.dtd"'


def rss(items: str = "", channel: str = "", ns: str = ITUNES) -> bytes:
    return (
        f'<?xml version="1.0" encoding="utf-8"?><rss version="2.0" {ns}><channel>'
        f"<title>T</title>{channel}{items}</channel></rss>"
    ).encode()


def as_json(feed: ParsedFeed) -> str:
    return json.dumps(dataclasses.asdict(feed), indent=2, ensure_ascii=False, sort_keys=True) + "\n"


def check_golden(name: str, body: bytes, **kwargs: Any) -> ParsedFeed:
    feed = parse_feed(body, **kwargs)
    path = GOLDEN / f"{name}.json"
    if REGEN or not path.exists():
        path.write_text(as_json(feed), encoding="utf-8")
        if not REGEN:
            pytest.fail(f"wrote missing golden file {path.name}; check it and re-run")
    assert as_json(feed) == path.read_text(encoding="utf-8")
    return feed


# --- golden files --------------------------------------------------------------------


@pytest.mark.parametrize("source", sorted(GOLDEN.glob("*.xml")), ids=lambda p: p.stem)
def test_golden(source: Path) -> None:
    check_golden(source.stem, source.read_bytes(), url=f"https://example.com/{source.name}")


def test_golden_rss_full_highlights() -> None:
    feed = parse_feed((GOLDEN / "rss_full.xml").read_bytes())
    ch = feed.channel
    assert ch.description == "The channel description."
    assert ch.author == "Jane Host"
    assert (ch.owner_name, ch.owner_email) == ("Owner Name", "owner@example.com")
    assert ch.image == "https://example.com/itunes-art.jpg"
    assert ch.categories == ("Technology", "Technology > Software How-To", "Education")
    assert ch.explicit is True  # "true": feedparser alone says None
    assert (ch.type, ch.locked, ch.podcast_guid) == (
        "serial",
        True,
        "917393e3-1b1e-5cef-ace4-edaa54e1f810",
    )
    assert [f.text for f in ch.funding] == ["Support us!", "Patreon"]
    assert ch.new_feed_url == "https://new.example.com/feed.xml"
    assert ch.updated == "2022-06-06T13:05:12Z"
    first, second = feed.episodes
    assert first.guid == "ep-0002"
    assert first.published == "2022-06-07T13:30:00Z"
    assert first.notes_html is not None
    assert "<script>alert(1)</script>" in first.notes_html
    assert 'href="/relative/link"' in first.notes_html  # not rewritten
    assert first.summary == "The episode's itunes summary."
    assert (first.duration, first.season, first.number) == (3723, 2, 12)
    assert (first.episode_type, first.explicit) == ("full", False)
    assert first.enclosure == Enclosure("https://cdn.example.com/ep2.mp3", "audio/mpeg", 12345678)
    assert [t.url for t in first.transcripts] == [
        "https://example.com/ep2.vtt",
        "https://example.com/ep2.srt",
    ]
    assert first.transcripts[0].rel == "captions"
    assert [p.name for p in first.persons] == ["Jane Host", "Guest Person"]
    assert first.chapters[0].type == "application/json+chapters"
    assert (second.season, second.number, second.explicit) == (1, 1, False)
    assert second.link == "https://example.com/show/1"  # permalink guid
    assert second.notes_html == "Plain description only."
    assert second.summary is None
    assert second.enclosure is not None
    assert second.enclosure.length is None


def test_golden_guids() -> None:
    feed = parse_feed((GOLDEN / "guids.xml").read_bytes())
    assert [e.guid for e in feed.episodes] == [None, None, "dup", "dup", "12345", None]
    assert [e.link for e in feed.episodes] == [
        "https://guids.example.com/a",
        None,
        None,
        None,
        None,
        None,
    ]
    assert feed.episodes[0].enclosure == Enclosure("https://guids.example.com/a.mp3", "audio/mpeg")
    assert feed.episodes[1].enclosure == Enclosure("https://guids.example.com/b.mp3")
    assert [e.explicit for e in feed.episodes[2:4]] == [True, None]


def test_golden_atom() -> None:
    feed = parse_feed((GOLDEN / "atom.xml").read_bytes())
    assert feed.version == "atom10"
    assert feed.channel.podcast_guid == "a1b2c3"  # http:// namespace variant
    one, two = feed.episodes
    assert one.enclosure == Enclosure("https://atom.example.com/1.ogg", "audio/ogg", 4096)
    assert one.updated == "2023-01-02T09:00:00Z"
    assert one.notes_html == "<p>Atom <em>content</em></p>"
    assert one.summary == "Atom summary."
    assert one.duration == 3600
    assert two.guid is None
    assert two.published is None
    assert two.notes_html is not None
    assert "XHTML" in two.notes_html


def test_golden_cp1252() -> None:
    feed = parse_feed((GOLDEN / "cp1252.xml").read_bytes())
    assert feed.channel.title == "Café “Quotes” – Show"
    assert feed.channel.description == "Naïve € price …"
    assert feed.episodes[0].title == "Épisode ™ one"


def test_golden_bozo_is_readable_with_warning() -> None:
    feed = parse_feed((GOLDEN / "bozo.xml").read_bytes())
    assert len(feed.warnings) == 1
    assert feed.warnings[0].startswith("malformed XML, recovered")
    assert feed.episodes[0].guid == "bozo-1"
    assert feed.episodes[0].duration is None
    assert feed.episodes[0].transcripts[0].url == "https://bozo.example.com/1.vtt"


# --- the PyTorch fixture -------------------------------------------------------------

needs_pytorch = pytest.mark.skipif(
    not (PYTORCH / "feed.xml").exists() or not (PYTORCH / "expected.json").exists(),
    reason="tests/fixtures/pytorch not generated yet",
)


@needs_pytorch
def test_pytorch_golden() -> None:
    check_golden("pytorch", (PYTORCH / "feed.xml").read_bytes())


@needs_pytorch
def test_pytorch_matches_expected() -> None:
    expected = json.loads((PYTORCH / "expected.json").read_text(encoding="utf-8"))
    feed = parse_feed((PYTORCH / "feed.xml").read_bytes(), url=expected["feed"]["url"])
    want = expected["feed"]
    ch = feed.channel
    assert (ch.title, ch.link, ch.language) == (want["title"], want["link"], want["language"])
    assert (ch.author, ch.image, ch.explicit) == (want["author"], want["image"], want["explicit"])
    assert (ch.owner_name, ch.owner_email) == (want["owner"]["name"], want["owner"]["email"])
    assert ch.categories == tuple(c.replace("/", " > ") for c in want["categories"])
    assert (ch.type, ch.podcast_guid) == (want["type"], want["podcast_guid"])
    assert ch.description == want["description"]
    assert len(feed.episodes) == want["episode_count"] == len(expected["episodes"])
    for got, exp in zip(feed.episodes, expected["episodes"], strict=True):
        assert got.guid == exp["guid"]
        assert got.title == exp["title"]
        assert got.link == exp["link"]
        assert got.published == exp["published"]
        assert got.duration == exp["duration_seconds"]
        assert (got.season, got.number) == (exp["season"], exp["number"])
        assert got.enclosure == Enclosure(**exp["enclosure"])
        if "transcripts" in exp:
            assert [(t.url, t.type) for t in got.transcripts] == [
                (t["url"], t.get("type")) for t in exp["transcripts"]
            ]
        if exp.get("chapters_url"):
            assert [c.url for c in got.chapters] == [exp["chapters_url"]]


# --- refusals ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("body", "error", "message"),
    [
        (b"", ParseError, "empty body"),
        (b" \n\t ", ParseError, "empty body"),
        (b"<!DOCTYPE html><html><head><title>Hi</title></head><body>x</body></html>", NotAFeed,
         "not a feed: got an HTML page"),
        (b"<html><body/></html>", NotAFeed, "not a feed: got an HTML page"),
        (b'<?xml version="1.0"?><rxx><channel><title>x</title></channel></rxx>', ParseError,
         "not a feed: unknown root element <rxx>"),
        (b'<foo xmlns="http://example.com/"/>', ParseError,
         "not a feed: unknown root element <foo>"),
        (b'<baz:foo xmlns:baz="http://example.com/"/>', ParseError,
         "not a feed: unknown root element <foo>"),
        (b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n1 0 obj", ParseError, "not a feed: got a PDF document"),
        (b'{"version": "https://jsonfeed.org/version/1.1", "items": []}', ParseError,
         "not a feed: got JSON (JSON Feed is not supported)"),
        (b"\x1f\x8b\x08\x00\x00\x00\x00\x00", ParseError,
         "not a feed: got gzip-compressed bytes (Content-Encoding not undone)"),
        (b"\x00\x01\xff garbage <<<", ParseError, "malformed XML: not well-formed (invalid token)"),
    ],
)  # fmt: skip
def test_refusals(body: bytes, error: type[ParseError], message: str) -> None:
    with pytest.raises(error) as info:
        parse_feed(body)
    assert type(info.value) is error
    assert str(info.value) == message


def test_truncated_feed_with_entries_is_kept_with_warning() -> None:
    body = b'<?xml version="1.0"?><rss version="2.0"><channel><title>T</title><item><title>A'
    feed = parse_feed(body)
    assert len(feed.episodes) == 1  # feedparser drops the unclosed <title>
    assert feed.warnings
    assert feed.warnings[0].startswith("malformed XML, recovered")


def test_empty_channel_is_a_feed() -> None:
    feed = parse_feed(b'<rss version="2.0"><channel></channel></rss>')
    assert feed.episodes == ()
    assert feed.version == "rss20"
    assert feed.warnings == ()


def test_feedparser_crash_becomes_parse_error(monkeypatch: pytest.MonkeyPatch) -> None:
    def boom(*_: Any, **__: Any) -> None:
        raise RecursionError("deep\nnesting")

    monkeypatch.setattr(parse_module.feedparser, "parse", boom)
    with pytest.raises(ParseError, match=r"^feedparser failed: RecursionError: deep nesting$"):
        parse_feed(rss())


# --- safety: no I/O, no entity expansion ------------------------------------------------

BILLION_LAUGHS = b"""<?xml version="1.0"?>
<!DOCTYPE rss [
 <!ENTITY lol "lol">
 <!ENTITY lol1 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">
 <!ENTITY lol2 "&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;">
 <!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">
 <!ENTITY lol4 "&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;">
 <!ENTITY lol5 "&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;">
 <!ENTITY lol6 "&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;">
 <!ENTITY lol7 "&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;">
 <!ENTITY lol8 "&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;">
 <!ENTITY lol9 "&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;">
]>
<rss version="2.0" xmlns:podcast="https://podcastindex.org/namespace/1.0"><channel>
<title>&lol9;</title><podcast:guid>&lol9;</podcast:guid>
<item><title>&lol9;</title><guid>&lol9;</guid><podcast:person>&lol9;</podcast:person></item>
</channel></rss>"""

XXE = b"""<?xml version="1.0"?>
<!DOCTYPE rss [<!ENTITY xxe SYSTEM "file:///etc/passwd">]>
<rss version="2.0" xmlns:podcast="https://podcastindex.org/namespace/1.0"><channel>
<title>x&xxe;</title><podcast:guid>g&xxe;</podcast:guid><description>&xxe;</description>
<item><title>t&xxe;</title><guid>i&xxe;</guid><podcast:person>p&xxe;</podcast:person></item>
</channel></rss>"""


def _all_text(value: object) -> str:
    return json.dumps(dataclasses.asdict(value) if dataclasses.is_dataclass(value) else value)  # type: ignore[arg-type]


def test_billion_laughs_does_not_expand() -> None:
    start = time.perf_counter()
    scanned = podcast_ns.scan(BILLION_LAUGHS)
    assert "lollol" not in _all_text(scanned)
    try:
        feed = parse_feed(BILLION_LAUGHS)
    except ParseError:
        pass
    else:
        assert "lollollol" not in as_json(feed)
    assert time.perf_counter() - start < 5


def test_external_entity_is_not_read(monkeypatch: pytest.MonkeyPatch) -> None:
    real_open = builtins.open

    def guarded_open(file: Any, *args: Any, **kwargs: Any) -> Any:
        assert "passwd" not in str(file), "tried to read the external entity"
        return real_open(file, *args, **kwargs)

    monkeypatch.setattr(builtins, "open", guarded_open)
    scanned = podcast_ns.scan(XXE)
    feed = parse_feed(XXE)
    for text in (_all_text(scanned), as_json(feed)):
        assert "root:" not in text
    assert scanned.items
    assert scanned.items[0].guid == "i&xxe;"


class AttemptedIO(BaseException):
    """The I/O guard's stop: not an Exception, so parse_feed's catch-all cannot swallow it."""


@pytest.fixture
def io_attempts(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every network or file call attempted while the test runs (each also stops the caller)."""
    attempts: list[str] = []

    def forbidden(name: str) -> Any:
        def guard(*args: Any, **_: Any) -> None:
            attempts.append(f"{name}{args!r}")
            raise AttemptedIO(name)

        return guard

    monkeypatch.setattr(socket, "socket", forbidden("socket.socket"))
    monkeypatch.setattr(socket, "create_connection", forbidden("socket.create_connection"))
    monkeypatch.setattr(parse_module.feedparser.http, "get", forbidden("feedparser.http.get"))
    monkeypatch.setattr(builtins, "open", forbidden("open"))
    return attempts


def parse_url_like_bodies() -> None:
    """parse_feed over bodies that are also a valid URL or path: feedparser must take them as data."""
    for body in (
        b"https://example.com/feed.xml",
        b"/etc/passwd",
        (GOLDEN / "rss_full.xml").read_bytes(),
    ):
        with contextlib.suppress(ParseError, AttemptedIO):  # the attempts list tells
            parse_feed(
                body, headers={"Content-Type": "application/rss+xml"}, url="https://example.com/f"
            )


def test_parse_feed_does_no_network_or_file_io(io_attempts: list[str]) -> None:
    parse_url_like_bodies()
    assert io_attempts == []


def test_the_io_guard_sees_a_file_read(
    io_attempts: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    real_parse = parse_module.feedparser.parse

    def reads_a_file(*args: Any, **kwargs: Any) -> Any:
        with open("/etc/hostname", "rb"):  # what a feedparser that opened its input would do
            return real_parse(*args, **kwargs)

    monkeypatch.setattr(parse_module.feedparser, "parse", reads_a_file)
    parse_url_like_bodies()
    assert io_attempts == ["open('/etc/hostname', 'rb')"] * 3


# --- feedparser quirks worked around ---------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "expected"),
    [("yes", True), ("true", True), ("Explicit", True), (" TRUE ", True), ("no", False),
     ("false", False), ("clean", False), ("maybe", None), ("", None)],
)  # fmt: skip
def test_explicit_from_raw_text(raw: str, expected: bool | None) -> None:
    body = rss(
        items=f"<item><guid>a</guid><itunes:explicit>{raw}</itunes:explicit></item>",
        channel=f"<itunes:explicit>{raw}</itunes:explicit>",
    )
    feed = parse_feed(body)
    assert feed.channel.explicit is expected
    assert feed.episodes[0].explicit is expected


@pytest.mark.parametrize(
    "uri",
    [
        "https://podcastindex.org/namespace/1.0",
        "http://podcastindex.org/namespace/1.0",
        "https://github.com/Podcastindex-org/podcast-namespace/blob/main/docs/1.0.md",
    ],
)
@pytest.mark.parametrize("prefix", ["podcast", "pc", "x"])
def test_podcast_namespace_by_uri_any_prefix(uri: str, prefix: str) -> None:
    body = rss(
        channel=f"<{prefix}:guid>G</{prefix}:guid><{prefix}:locked>no</{prefix}:locked>",
        items=(
            f'<item><guid>a</guid><{prefix}:transcript url="u1" type="text/vtt"/>'
            f'<{prefix}:transcript url="u2"/><{prefix}:chapters url="c"/>'
            f"<{prefix}:person>P</{prefix}:person><{prefix}:season>3</{prefix}:season></item>"
        ),
        ns=f'{ITUNES} xmlns:{prefix}="{uri}"',
    )
    feed = parse_feed(body)
    assert (feed.channel.podcast_guid, feed.channel.locked) == ("G", False)
    episode = feed.episodes[0]
    assert [t.url for t in episode.transcripts] == ["u1", "u2"]
    assert [c.url for c in episode.chapters] == ["c"]
    assert [p.name for p in episode.persons] == ["P"]
    assert episode.season == 3


def test_other_namespace_with_podcast_prefix_is_ignored() -> None:
    body = rss(
        items='<item><guid>a</guid><podcast:transcript url="u"/></item>',
        ns='xmlns:podcast="http://example.com/not-podcastindex"',
    )
    assert parse_feed(body).episodes[0].transcripts == ()


def test_guid_is_not_invented_and_link_not_copied_from_guid() -> None:
    body = rss(
        items=(
            "<item><title>a</title><link>https://x/a</link></item>"
            "<item><title>b</title><guid>abc-1</guid></item>"
            "<item><title>c</title><guid>https://x/c</guid></item>"
        )
    )
    episodes = parse_feed(body).episodes
    assert [e.guid for e in episodes] == [None, "abc-1", "https://x/c"]
    assert [e.link for e in episodes] == ["https://x/a", None, "https://x/c"]


def test_description_and_itunes_summary_in_either_order() -> None:
    body = rss(
        items=(
            "<item><guid>1</guid><itunes:summary>S1</itunes:summary><description>D1</description></item>"
            "<item><guid>2</guid><description>D2</description><itunes:summary>S2</itunes:summary></item>"
            '<item><guid>3</guid><description>D3</description><c:encoded xmlns:c="http://purl.org/rss/1.0/modules/content/">C3</c:encoded>'
            "<itunes:summary>S3</itunes:summary></item>"
        )
    )  # fmt: skip
    episodes = parse_feed(body).episodes
    assert [(e.notes_html, e.summary) for e in episodes] == [
        ("D1", "S1"),
        ("D2", "S2"),
        ("C3", "S3"),
    ]


def test_relative_links_resolved_against_url_only() -> None:
    body = rss(channel="<link>/show</link>", items="<item><guid>a</guid><link>ep/1</link></item>")
    feed = parse_feed(body, url="https://host.example/feeds/main.xml")
    assert feed.channel.link == "https://host.example/show"
    assert feed.episodes[0].link == "https://host.example/feeds/ep/1"
    assert parse_feed(body).channel.link == "/show"


def test_dates_are_utc_iso() -> None:
    body = rss(
        items="<item><guid>a</guid><pubDate>Mon, 06 Jun 2022 23:30:00 -0300</pubDate></item>"
    )
    assert parse_feed(body).episodes[0].published == "2022-06-07T02:30:00Z"


def test_no_deprecation_warning_for_missing_updated() -> None:
    # feedparser warns when `updated_parsed` falls back to `published_parsed`; we never ask it
    body = rss(items="<item><guid>a</guid><pubDate>Mon, 06 Jun 2022 13:00:00 GMT</pubDate></item>")
    assert parse_feed(body).episodes[0].updated is None


def test_enclosure_choice_and_length() -> None:
    body = rss(
        items=(
            '<item><guid>a</guid><enclosure url="https://x/a.jpg" type="image/jpeg" length="1"/>'
            '<enclosure url="https://x/a.pdf" type="application/pdf" length="2"/>'
            '<enclosure url="https://x/a.mp4" type="video/mp4" length="3"/></item>'
            '<item><guid>b</guid><enclosure url="https://x/b.jpg" type="image/jpeg"/></item>'
            '<item><guid>c</guid><enclosure url="https://x/c.bin"'
            ' type="application/octet-stream" length="-5"/></item>'
        )
    )  # fmt: skip
    episodes = parse_feed(body).episodes
    assert episodes[0].enclosure == Enclosure("https://x/a.mp4", "video/mp4", 3)
    assert episodes[1].enclosure is None
    assert episodes[2].enclosure == Enclosure("https://x/c.bin", "application/octet-stream", None)


def test_nested_categories_flattened() -> None:
    body = rss(
        channel=(
            '<itunes:category text="Arts"><itunes:category text="Design"/>'
            '<itunes:category text="Books"/></itunes:category><itunes:category text="Arts"/>'
        )
    )
    assert parse_feed(body).channel.categories == ("Arts", "Arts > Design", "Arts > Books")


def test_plain_categories_when_no_itunes_ones() -> None:
    body = rss(
        channel="<category>News</category><category>Tech</category><category>News</category>"
    )
    assert parse_feed(body).channel.categories == ("News", "Tech")


def test_undeclared_prefixes_still_scanned() -> None:
    body = b"""<rss><channel><title>T</title><podcast:locked>yes</podcast:locked>
    <item><title>E</title><itunes:explicit>true</itunes:explicit>
    <podcast:transcript url="https://x/t.txt" type="text/plain"/></item></channel></rss>"""
    feed = parse_feed(body)
    assert feed.channel.locked is True
    assert feed.episodes[0].explicit is True
    assert feed.episodes[0].transcripts[0].url == "https://x/t.txt"
    assert feed.warnings  # feedparser flagged the unbound prefix


# --- formats and encodings -------------------------------------------------------------


def test_rss10_rdf() -> None:
    body = b"""<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#"
    xmlns="http://purl.org/rss/1.0/"><channel rdf:about="https://x/"><title>R</title></channel>
    <item rdf:about="https://x/1"><title>A</title><link>https://x/1</link>
    <description>d</description></item></rdf:RDF>"""
    feed = parse_feed(body)
    assert feed.version == "rss10"
    assert [(e.guid, e.title, e.notes_html) for e in feed.episodes] == [("https://x/1", "A", "d")]


def test_rss091() -> None:
    body = rss(items="<item><title>A</title></item>").replace(b'"2.0"', b'"0.91"')
    feed = parse_feed(body)
    assert feed.version.startswith("rss09")
    assert feed.episodes[0].title == "A"


def test_atom03_enclosure() -> None:
    body = b"""<feed version="0.3" xmlns="http://purl.org/atom/ns#"><title>T</title>
    <entry><id>1</id><title>A</title><issued>2004-01-01T00:00:00Z</issued>
    <link rel="enclosure" href="https://x/a.mp3" type="audio/mpeg" length="12"/></entry></feed>"""
    feed = parse_feed(body)
    assert feed.version == "atom03"
    assert feed.episodes[0].enclosure == Enclosure("https://x/a.mp3", "audio/mpeg", 12)
    assert feed.episodes[0].published == "2004-01-01T00:00:00Z"
    assert feed.episodes[0].link is None  # feedparser copies the id "1" into link


def test_atom_namespace_with_trailing_slash() -> None:
    body = b"""<feed xmlns="http://www.w3.org/2005/Atom/"><title>Old Simplecast</title>
    <entry><id>e1</id><title>A</title><link href="https://x/a"/></entry></feed>"""
    feed = parse_feed(body)
    assert feed.channel.title == "Old Simplecast"
    assert [(e.guid, e.link) for e in feed.episodes] == [("e1", "https://x/a")]


def test_utf16_with_bom() -> None:
    text = (
        '<?xml version="1.0" encoding="utf-16"?><rss version="2.0"><channel>'
        "<title>Ünï</title><item><guid>ü</guid></item></channel></rss>"
    )
    feed = parse_feed(text.encode("utf-16"))
    assert feed.channel.title == "Ünï"
    assert feed.episodes[0].guid == "ü"


def test_iso_8859_1_from_header() -> None:
    body = "<rss version='2.0'><channel><title>Gr\u00fc\u00dfe</title></channel></rss>".encode(
        "latin-1"
    )
    feed = parse_feed(body, headers={"Content-Type": "application/rss+xml; charset=ISO-8859-1"})
    assert feed.channel.title == "Grüße"


def test_undeclared_utf8_with_url_only_is_utf8() -> None:
    # feedparser alone would assume ISO-8859-1 when headers lack a Content-Type
    body = "<rss version='2.0'><channel><title>naïve</title></channel></rss>".encode()
    assert parse_feed(body, url="https://x/feed").channel.title == "naïve"


def test_leading_whitespace_before_declaration() -> None:
    body = b"\n\n  " + rss(items="<item><guid>a</guid></item>")
    assert parse_feed(body).episodes[0].guid == "a"


# --- alignment ---------------------------------------------------------------------------


def test_align_by_guid_when_counts_differ() -> None:
    items = (podcast_ns.ItemScan(guid="b", season="2"), podcast_ns.ItemScan(guid="x"))
    entries: list[dict[str, Any]] = [{"id": "a"}, {"id": "b"}, {}]
    pairs = list(parse_module._align(entries, items))
    assert [scan for _, scan in pairs] == [None, items[0], None]


def test_scan_of_unparseable_body_is_empty() -> None:
    assert podcast_ns.scan(b"\x00\x01 not xml") == podcast_ns.PodcastScan()
    assert podcast_ns.scan(b"") == podcast_ns.PodcastScan()


# --- parse_duration -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "seconds"),
    [("3600", 3600), ("17:12", 1032), ("01:02:03", 3723), ("1:02:03.5", 3723), (" 45 ", 45),
     ("90:00", 5400), ("0", 0), ("12.75", 12), ("1:2:3", 3723), ("", None), ("abc", None),
     ("1:02:03:04", None), ("-5", None), ("1h2m", None), ("٣", None), (None, None), (":30", None)],
)  # fmt: skip
def test_parse_duration_examples(text: str | None, seconds: int | None) -> None:
    assert parse_duration(text) == seconds


@given(st.integers(0, 10_000), st.integers(0, 59), st.integers(0, 59), st.integers(0, 999))
def test_parse_duration_roundtrip(h: int, m: int, s: int, ms: int) -> None:
    total = h * 3600 + m * 60 + s
    assert parse_duration(f"{h}:{m:02d}:{s:02d}") == total
    assert parse_duration(f" {h:02d}:{m:02d}:{s:02d}.{ms:03d}\n") == total
    assert parse_duration(f"{h * 60 + m}:{s:02d}") == total
    assert parse_duration(str(total)) == total


@given(st.text(max_size=40))
def test_parse_duration_never_raises(text: str) -> None:
    result = parse_duration(text)
    assert result is None or result >= 0


# --- robustness properties ----------------------------------------------------------------

FIXTURE_BODIES = [p.read_bytes() for p in sorted(GOLDEN.glob("*.xml"))]


def _parse_or_refuse(body: bytes) -> None:
    message = None
    try:
        feed = parse_feed(body)
    except ParseError as e:
        message = str(e)
    if message is None:
        assert isinstance(feed, ParsedFeed)
    else:
        assert message
        assert "\n" not in message


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.binary(max_size=2000))
def test_random_bytes_only_parse_error(body: bytes) -> None:
    _parse_or_refuse(body)


@st.composite
def mutated_feed(draw: st.DrawFn) -> bytes:
    body = bytearray(draw(st.sampled_from(FIXTURE_BODIES)))
    for _ in range(draw(st.integers(1, 8))):
        pos = draw(st.integers(0, len(body)))
        op = draw(st.sampled_from(["delete", "insert", "truncate", "flip"]))
        if op == "delete":
            del body[pos : pos + draw(st.integers(1, 50))]
        elif op == "insert":
            body[pos:pos] = draw(
                st.sampled_from([b"<", b"&", b"]]>", b"<item>", b"\x00", b"\xff\xfe", b"<!--"])
            )
        elif op == "truncate":
            del body[pos:]
        elif body:
            body[min(pos, len(body) - 1)] ^= draw(st.integers(1, 255))
    return bytes(body)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mutated_feed())
def test_mutated_feeds_only_parse_error(body: bytes) -> None:
    _parse_or_refuse(body)
