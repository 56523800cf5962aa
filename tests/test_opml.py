"""OPML (#14): parsing and rendering (pure), the import's schedule file, and the ``import``
and ``export`` commands (CliRunner, real subprocesses, loopback fetches only)."""

from __future__ import annotations

import dataclasses
import re
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from click.testing import CliRunner
from commands import invoke
from hypothesis import given
from hypothesis import strategies as st
from loopback import FIXTURES, LoopbackSite
from test_cli import podarchive

from podarchive.cli import cli
from podarchive.core.errors import OpmlError, ScheduleError
from podarchive.read.opml import (
    MAX_DEPTH,
    MAX_OPML_BYTES,
    PODARCHIVE_NS,
    ImportSorter,
    OpmlFeed,
    parse_opml,
    render_opml,
    url_key,
)
from podarchive.read.schedule_files import (
    FeedSchedule,
    add_schedule,
    add_schedules,
    load_schedule_file,
    load_schedules,
    render_schedule,
)

OPML = FIXTURES / "opml"
NOW = datetime(2026, 12, 2, 12, 0, 5, tzinfo=UTC)
PYTORCH = "https://feeds.simplecast.com/OB5FkIl8"
CAFE = "https://example.org/caf%C3%A9/feed.xml?a=1&b=2"
ODD_NAME = 'Tom & Jerry\'s "Show" <live>'


def opml(*outlines: str, version: str = "2.0") -> bytes:
    body = "\n".join(outlines)
    return (
        f'<?xml version="1.0" encoding="UTF-8"?>\n<opml version="{version}">\n'
        f"<head><title>t</title></head>\n<body>\n{body}\n</body>\n</opml>\n"
    ).encode()


def scheduled(directory: Path) -> list[tuple[str, str | None]]:
    return [(f.url, f.name) for f in load_schedules(directory)]


# parsing -------------------------------------------------------------------------------------


def test_parse_a_podcast_app_export() -> None:
    feeds = parse_opml((OPML / "subscriptions.opml").read_bytes())
    assert feeds == [
        OpmlFeed(PYTORCH, "PyTorch Developer Podcast", ("Tech",)),
        OpmlFeed("https://talkpython.fm/episodes/rss", "Talk Python To Me", ("Tech", "Languages")),
        OpmlFeed(CAFE, "Café & Code — «Ü»", ("Tech", "Languages")),
        OpmlFeed("https://feeds.example.com/the-daily", "The Daily", ("News",)),
        OpmlFeed(PYTORCH, "PyTorch again", ("News",)),
        OpmlFeed("itpc://old.example.com/feed", "Old iTunes link", ("News",)),
        OpmlFeed("https://no-name.example.com/rss", None, ()),
    ]
    assert [f.line for f in feeds] == [13, 15, 16, 20, 21, 22, 25]


def test_parse_opml_1_0_in_latin_1_without_types() -> None:
    assert parse_opml((OPML / "opml1.opml").read_bytes()) == [
        OpmlFeed("http://radio.example.de/feed.rss", "Radio Café"),
        OpmlFeed("http://strasse.example.de/podcast", "Straße"),
    ]


@pytest.mark.parametrize("attribute", ["xmlUrl", "xmlurl", "xmlURL", "XMLURL", "XmlUrl"])
def test_every_spelling_of_xmlurl(attribute: str) -> None:
    body = opml(f'<outline type="rss" text="A" {attribute}="https://a.example/feed"/>')
    assert parse_opml(body) == [OpmlFeed("https://a.example/feed", "A")]


def test_feed_types_and_other_outlines() -> None:
    body = opml(
        '<outline type="rss" text="rss" xmlUrl="https://a.example/1"/>',
        '<outline type=" RSS " text="RSS" xmlUrl="https://a.example/2"/>',
        '<outline type="atom" text="atom" xmlUrl="https://a.example/3"/>',
        '<outline text="no type" xmlUrl="https://a.example/4"/>',
        '<outline type="link" text="link" xmlUrl="https://a.example/5" url="https://a.example/"/>',
        '<outline type="include" text="include" url="https://a.example/more.opml"/>',
        '<outline type="rss" text="empty" xmlUrl="  "/>',
        '<outline type="rss" text="namespaced" xmlns:x="urn:x" x:xmlUrl="https://a.example/6"/>',
        "<notAnOutline xmlUrl='https://a.example/7'/>",
    )
    assert [f.url for f in parse_opml(body)] == [f"https://a.example/{n}" for n in range(1, 5)]


def test_the_name_is_the_title_else_the_text_on_one_line() -> None:
    body = opml(
        '<outline type="rss" text="Text" title="Title" xmlUrl="https://a.example/1"/>',
        '<outline type="rss" text="Text" title=" " xmlUrl="https://a.example/2"/>',
        '<outline type="rss" text=" Two&#10;lines\t here " xmlUrl="https://a.example/3"/>',
        '<outline type="rss" text="https://a.example/4" xmlUrl="https://a.example/4"/>',
        '<outline type="rss" xmlUrl="https://a.example/5"/>',
    )
    assert [f.title for f in parse_opml(body)] == ["Title", "Text", "Two lines here", None, None]


def test_deep_categories_are_walked_without_recursion() -> None:
    depth = 200  # libxml2's own limit without huge_tree is 256
    inner = '<outline type="rss" text="deep" xmlUrl="https://deep.example/feed"/>'
    body = opml(
        "".join(f'<outline text="c{i}">' for i in range(depth)) + inner + "</outline>" * depth
    )
    (feed,) = parse_opml(body)
    assert feed.category == tuple(f"c{i}" for i in range(depth))


def test_a_utf16_file_and_an_opml_namespace() -> None:
    text = (
        '<opml xmlns="urn:x"><body><outline text="Ü" xmlUrl="https://u.example/f"/></body></opml>'
    )
    assert parse_opml(text.encode("utf-16")) == [OpmlFeed("https://u.example/f", "Ü")]


BAD = [
    pytest.param(b"", "empty file", id="empty"),
    pytest.param(b" \n\t ", "empty file", id="blank"),
    pytest.param(b"name,url\nA,https://a.example/\n", "not XML: Start tag expected", id="csv"),
    pytest.param(b"<opml><body><outline", "not XML: ", id="truncated"),
    pytest.param(
        b'<opml><body><outline text="A" xmlUrl="https://a.example/?a=1&b=2"/></body></opml>',
        "not XML: EntityRef: expecting ';'",
        id="bare-ampersand",
    ),
    pytest.param(
        b"<html><body><p>hi</p></body></html>",
        "not OPML: the document is <html>, not <opml>",
        id="html",
    ),
    pytest.param(
        b"<rss version='2.0'><channel><title>x</title></channel></rss>",
        "not OPML but a feed (<rss>); schedule it with podarchive add",
        id="feed",
    ),
    pytest.param(b"<opml version='2.0'><head/></opml>", "not OPML: no <body>", id="no-body"),
    pytest.param(
        b"<opml version='2.0'><body><outline text='Folder'><outline text='x'/></outline>"
        b"</body></opml>",
        "no feeds in it (no <outline> with an xmlUrl)",
        id="no-feeds",
    ),
    pytest.param(
        b'<!DOCTYPE opml [<!ENTITY n "Name">]><opml><body>'
        b'<outline text="&n;" xmlUrl="https://a.example/"/></body></opml>',
        "declares XML entities (<!ENTITY>); no OPML needs them, refusing it",
        id="internal-entity",
    ),
    pytest.param(
        b'<!DOCTYPE opml [<!ENTITY x SYSTEM "file:///etc/hostname">]><opml><body>'
        b'<outline xmlUrl="https://a.example/">&x;</outline></body></opml>',
        "declares XML entities (<!ENTITY>); no OPML needs them, refusing it",
        id="external-entity",
    ),
    pytest.param(
        b'<!DOCTYPE opml [<!ENTITY x SYSTEM "file:///etc/hostname">]><opml><body>'
        b'<outline text="&x;" xmlUrl="https://a.example/"/></body></opml>',
        "not XML: Attribute references external entity 'x'",
        id="external-entity-in-attribute",
    ),
    pytest.param(
        b'<?xml version="1.0" encoding="klingon"?><opml/>',
        "not XML: Unsupported encoding: klingon",
        id="unknown-encoding",
    ),
]


@pytest.mark.parametrize(("body", "reason"), BAD)
def test_bad_opml_is_one_opml_error(body: bytes, reason: str) -> None:
    with pytest.raises(OpmlError) as caught:
        parse_opml(body)
    message = str(caught.value)
    assert message.startswith(reason)
    assert "\n" not in message


def test_billion_laughs_is_refused_at_once() -> None:
    entities = '<!ENTITY l0 "lollollollol">' + "".join(
        f'<!ENTITY l{i} "{f"&l{i - 1};" * 10}">' for i in range(1, 10)
    )
    body = f'<!DOCTYPE opml [{entities}]><opml><body><outline text="&l9;" xmlUrl="https://a.example/"/></body></opml>'
    start = time.monotonic()
    with pytest.raises(OpmlError, match="^not XML: "):
        parse_opml(body.encode())
    assert time.monotonic() - start < 1


def test_a_huge_file_is_refused_before_parsing() -> None:
    with pytest.raises(OpmlError, match="^over 20 MiB"):
        parse_opml(b" " * (MAX_OPML_BYTES + 1))


# rendering -----------------------------------------------------------------------------------


def test_render_is_opml_2_as_podcast_apps_read_it() -> None:
    feeds = [
        OpmlFeed(PYTORCH, "PyTorch Developer Podcast"),
        OpmlFeed(CAFE, ODD_NAME, options=(("cron", "0 * * * *"),)),
        OpmlFeed("https://no-name.example.com/rss"),
    ]
    assert render_opml(feeds, "podarchive feeds", NOW) == (OPML / "export.opml").read_bytes()


def test_render_nests_categories_and_replaces_what_xml_cannot_hold() -> None:
    feeds = [
        OpmlFeed("https://a.example/1", "One", ("Tech", "Python")),
        OpmlFeed("https://a.example/2", "Bell\x07 and\x00 NUL", ("Tech",)),
        OpmlFeed("https://a.example/3", "Three", ("Tech", "Python")),
    ]
    body = render_opml(feeds, "t\x01", NOW)
    text = body.decode("utf-8")
    assert "<title>t\ufffd</title>" in text
    assert 'text="Bell\ufffd and\ufffd NUL"' in text
    assert text.count('<outline text="Python" title="Python">') == 1
    assert parse_opml(body) == [
        feeds[0],
        feeds[2],
        OpmlFeed(feeds[1].url, "Bell\ufffd and\ufffd NUL", ("Tech",)),
    ]


_xml_char = st.characters(blacklist_categories=("Cs", "Cc"), blacklist_characters="\ufffe\uffff")
_name = st.text(_xml_char, min_size=1, max_size=30).map(lambda s: " ".join(s.split())).filter(bool)
_url = st.builds(
    "https://{}.example/{}".format,
    st.text("abcdefghijklmnopqrstuvwxyz0123456789-", min_size=1, max_size=12),
    st.text(_xml_char, max_size=20).map(lambda s: "".join(s.split())),
)
_feed = st.builds(OpmlFeed, _url, st.none() | _name, st.lists(_name, max_size=3).map(tuple)).filter(
    lambda f: f.title != f.url
)


@given(st.lists(_feed, min_size=1, max_size=8))
def test_render_then_parse_gives_the_same_feeds(feeds: list[OpmlFeed]) -> None:
    back = parse_opml(render_opml(feeds, "t", NOW))
    assert sorted(back, key=repr) == sorted(feeds, key=repr)  # grouped by category
    flat = [OpmlFeed(f.url, f.title) for f in feeds]
    assert parse_opml(render_opml(flat, "t", NOW)) == flat  # without categories: in order


# sorting an import ---------------------------------------------------------------------------


def test_the_sorter_finds_scheduled_duplicate_and_non_http_feeds() -> None:
    sorter = ImportSorter({"https://old.example/feed": "schedules/old.toml"})
    feeds = [
        OpmlFeed("https://new.example/feed", "New", line=3),
        OpmlFeed("HTTPS://NEW.example/feed", "Again", line=4),
        OpmlFeed("https://Old.Example/feed", "Old", line=5),
        OpmlFeed("https://old.example/feed", "Old twice", line=6),
        OpmlFeed("feed://x.example/rss", "Feed scheme", line=7),
        OpmlFeed("http://[::1/rss", "Broken", line=8),
        OpmlFeed("https://new.example/FEED", None, line=9),  # the path is case-sensitive
    ]
    assert [sorter.sort(f).line for f in feeds] == [
        "scheduled: https://new.example/feed (New)",
        "duplicate: HTTPS://NEW.example/feed (line 4; first on line 3)",
        "already scheduled: https://Old.Example/feed (in schedules/old.toml)",
        "duplicate: https://old.example/feed (line 6; first on line 5)",
        "skipped: feed://x.example/rss (line 7: not an http(s) URL)",
        "skipped: http://[::1/rss (line 8: not an http(s) URL)",
        "scheduled: https://new.example/FEED",
    ]
    assert url_key("HTTPS://Host.Example:8080/A?B#C") == "https://host.example:8080/A?B#C"


# the import's schedule file ------------------------------------------------------------------


def test_add_schedules_writes_one_new_file_and_never_overwrites(tmp_path: Path) -> None:
    directory = tmp_path / "schedules"
    feeds = [
        FeedSchedule("https://a.example/feed", "A", allow_private_hosts=True),
        FeedSchedule("https://b.example/feed", every=None, cron="0 * * * *", pages=False),
    ]
    first = add_schedules(directory, feeds, "import-My Subs!")
    assert first == directory / "import-my-subs.toml"
    assert first.read_text() == (
        '[[feed]]\nurl = "https://a.example/feed"\nname = "A"\nevery = "1h"\npages = true\n'
        "allow_private_hosts = true\n\n"
        '[[feed]]\nurl = "https://b.example/feed"\ncron = "0 * * * *"\npages = false\n'
    )
    assert load_schedule_file(first) == [
        FeedSchedule("https://a.example/feed", "A", allow_private_hosts=True, source=str(first)),
        FeedSchedule("https://b.example/feed", None, None, "0 * * * *", False, source=str(first)),
    ]
    second = add_schedules(directory, [FeedSchedule("https://c.example/feed")], "import-my-subs")
    third = add_schedules(directory, [FeedSchedule("https://d.example/feed")], "import-my-subs")
    assert (second.name, third.name) == ("import-my-subs-2.toml", "import-my-subs-3.toml")
    with pytest.raises(ScheduleError, match="https://c.example/feed is already scheduled"):
        add_schedules(directory, [FeedSchedule("https://c.example/feed")], "import-x")
    assert sorted(p.name for p in directory.iterdir()) == [
        "import-my-subs-2.toml",
        "import-my-subs-3.toml",
        "import-my-subs.toml",
    ]


def test_names_outside_the_basic_plane_survive_the_schedule_file(tmp_path: Path) -> None:
    """Tag characters (a flag emoji) are not printable: escaped as \\U0000xxxx, not \\uxxxx."""
    name = "\U0001f3f4\U000e0067\U000e0062\U000e0073\U000e0063\U000e0074\U000e007f Pod \U0001f399"
    feed = FeedSchedule("https://s.example/feed", name)
    assert "\\U000e0067" in render_schedule(feed)
    path = add_schedule(tmp_path, feed)
    assert load_schedules(tmp_path)[0].name == name
    assert path.exists()


# podarchive import ---------------------------------------------------------------------------


def test_import_without_check_schedules_every_new_feed(tmp_path: Path) -> None:
    schedules = tmp_path / "schedules"
    source = OPML / "subscriptions.opml"
    code, out, err = invoke("import", str(source), "--no-check", "--schedules", str(schedules))
    path = schedules / "import-subscriptions.toml"
    assert (code, err) == (0, "")
    assert out.splitlines() == [
        f"scheduled: {PYTORCH} (PyTorch Developer Podcast)",
        "scheduled: https://talkpython.fm/episodes/rss (Talk Python To Me)",
        f"scheduled: {CAFE} (Café & Code — «Ü»)",
        "scheduled: https://feeds.example.com/the-daily (The Daily)",
        f"duplicate: {PYTORCH} (line 21; first on line 13)",
        "skipped: itpc://old.example.com/feed (line 22: not an http(s) URL)",
        "scheduled: https://no-name.example.com/rss",
        f"{source}: 5 scheduled in {path}, 0 already scheduled, 1 duplicate, 0 failed, 1 skipped",
    ]
    assert scheduled(schedules) == [
        (PYTORCH, "PyTorch Developer Podcast"),
        ("https://talkpython.fm/episodes/rss", "Talk Python To Me"),
        (CAFE, "Café & Code — «Ü»"),
        ("https://feeds.example.com/the-daily", "The Daily"),
        ("https://no-name.example.com/rss", None),
    ]
    assert all(f.every == timedelta(hours=1) and f.pages for f in load_schedules(schedules))


def test_import_leaves_out_feeds_already_scheduled(tmp_path: Path) -> None:
    add_schedule(tmp_path, FeedSchedule(PYTORCH, "Mine"))
    (tmp_path / "import-subscriptions.toml").write_text(
        '[[feed]]\nurl = "https://talkpython.fm/episodes/rss"\n'
    )
    source = OPML / "subscriptions.opml"
    code, out, _ = invoke("import", str(source), "--no-check", "--schedules", str(tmp_path))
    assert code == 0
    lines = out.splitlines()
    assert lines[:2] == [
        f"already scheduled: {PYTORCH} (in {tmp_path / 'mine.toml'})",
        "already scheduled: https://talkpython.fm/episodes/rss "
        f"(in {tmp_path / 'import-subscriptions.toml'})",
    ]
    path = tmp_path / "import-subscriptions-2.toml"  # the first name was taken
    assert lines[-1] == (
        f"{source}: 3 scheduled in {path}, 2 already scheduled, 1 duplicate, 0 failed, 1 skipped"
    )
    assert [f.url for f in load_schedule_file(path)] == [
        CAFE,
        "https://feeds.example.com/the-daily",
        "https://no-name.example.com/rss",
    ]
    code, out, _ = invoke("import", str(source), "--no-check", "--schedules", str(tmp_path))
    assert code == 0
    assert out.splitlines()[-1] == (
        f"{source}: 0 scheduled, 5 already scheduled, 1 duplicate, 0 failed, 1 skipped"
    )
    assert len(list(tmp_path.glob("*.toml"))) == 3  # nothing new: no new file


def test_import_options_go_into_every_entry(tmp_path: Path) -> None:
    source = tmp_path / "two.opml"
    source.write_bytes(
        opml(
            '<outline text="A" xmlUrl="https://a.example/feed"/>',
            '<outline text="B" xmlUrl="https://b.example/feed"/>',
        )
    )
    args = ["import", str(source), "--no-check", "--schedules", str(tmp_path / "s")]
    code, _, _ = invoke(*args, "--cron", "0 6 * * *", "--no-pages", "--allow-private-hosts")
    assert code == 0
    feeds = load_schedules(tmp_path / "s")
    assert [(f.cron, f.every, f.pages, f.allow_private_hosts) for f in feeds] == [
        ("0 6 * * *", None, False, True)
    ] * 2
    code, _, _ = invoke(*args[:-1], str(tmp_path / "t"), "--every", "30m")
    assert code == 0
    assert [f.every for f in load_schedules(tmp_path / "t")] == [timedelta(minutes=30)] * 2


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (["--every", "30m", "--cron", "0 * * * *"], "give --every or --cron, not both"),
        (["--every", "10s"], "--every: 10s is under the 60 s floor"),
        (["--every", "often"], "--every: bad interval 'often'"),
        (["--cron", "every day"], "--cron: "),
    ],
)
def test_import_bad_options_exit_2(tmp_path: Path, options: list[str], message: str) -> None:
    source = OPML / "subscriptions.opml"
    code, out, err = invoke("import", str(source), "--schedules", str(tmp_path), *options)
    assert code == 2
    assert message in err
    assert out == ""
    assert not list(tmp_path.iterdir())


@pytest.mark.parametrize(("body", "reason"), BAD)
def test_import_bad_opml_exits_2_in_one_line(tmp_path: Path, body: bytes, reason: str) -> None:
    source = tmp_path / "subs.opml"
    source.write_bytes(body)
    code, out, err = invoke("import", str(source), "--schedules", str(tmp_path / "s"))
    assert (code, out) == (2, "")
    assert err.startswith(f"podarchive: {source}: {reason}")
    assert err.count("\n") == 1
    assert not (tmp_path / "s").exists()


def test_import_missing_file_exits_2_in_one_line(tmp_path: Path) -> None:
    code, out, err = invoke("import", str(tmp_path / "nope.opml"), "--schedules", str(tmp_path))
    assert (code, out) == (2, "")
    assert err == f"podarchive: {tmp_path / 'nope.opml'}: cannot read: No such file or directory\n"


def test_import_a_bad_schedule_file_exits_2(tmp_path: Path) -> None:
    (tmp_path / "bad.toml").write_text("[[feed]]\nurl = 'ftp://x'\n")
    source = OPML / "subscriptions.opml"
    code, _, err = invoke("import", str(source), "--no-check", "--schedules", str(tmp_path))
    assert code == 2
    assert err.startswith(f"podarchive: error: {tmp_path / 'bad.toml'}: feed[0].url: ")


def _checked_site(site: LoopbackSite, pytorch_feed: str, tmp_path: Path) -> Path:
    site.serve(
        "/show",
        f'<html><head><link rel="alternate" type="application/rss+xml" href="{pytorch_feed}">'
        "</head><body><h1>The show</h1></body></html>",
        content_type="text/html",
    )
    site.serve("/other.xml", "<rss version='2.0'><channel><title>Other</title></channel></rss>")
    site.serve("/page", "<html><body><p>No feed here</p></body></html>", content_type="text/html")
    source = tmp_path / "checked.opml"
    source.write_bytes(
        opml(
            f'<outline type="rss" text="PyTorch" xmlUrl="{pytorch_feed}"/>',
            f'<outline type="rss" text="The show page" xmlUrl="{site.url("/show")}"/>',
            f'<outline type="rss" text="Gone" xmlUrl="{site.url("/gone")}"/>',
            f'<outline type="rss" xmlUrl="{site.url("/other.xml")}"/>',
            f'<outline type="rss" text="A page" xmlUrl="{site.url("/page")}"/>',
        )
    )
    return source


def test_import_checks_each_new_feed_once(
    tmp_path: Path, site: LoopbackSite, pytorch_feed: str
) -> None:
    source = _checked_site(site, pytorch_feed, tmp_path)
    schedules = tmp_path / "schedules"
    code, out, err = invoke(
        "import", str(source), "--allow-private-hosts", "--schedules", str(schedules)
    )
    path = schedules / "import-checked.toml"
    assert code == 1  # a feed failed its check; the others are scheduled
    assert out.splitlines() == [
        f"scheduled: {pytorch_feed} (PyTorch)",
        f"found the feed {pytorch_feed} on {site.url('/show')}",
        f"duplicate: {pytorch_feed} (line 6; first on line 5)",
        f"scheduled: {site.url('/other.xml')} (Other)",  # named after the feed's title
        f"{source}: 2 scheduled in {path}, 0 already scheduled, 1 duplicate, 2 failed, 0 skipped",
    ]
    assert err.splitlines() == [
        f"podarchive: {site.url('/gone')}: HTTP 404 not found; not scheduled",
        f"podarchive: {site.url('/page')}: not a feed, and the page announces no working feed;"
        " not scheduled",
    ]
    feeds = load_schedules(schedules)
    assert [(f.url, f.name, f.allow_private_hosts) for f in feeds] == [
        (pytorch_feed, "PyTorch", True),
        (site.url("/other.xml"), "Other", True),
    ]
    hits = {path: site.hits(path) for path in ("/show", "/gone", "/other.xml", "/page")}
    assert hits == {"/show": 1, "/gone": 1, "/other.xml": 1, "/page": 1}
    assert site.hits("/pytorch/feed.xml") == 2  # its own check, and as the show page's feed


def test_import_check_keeps_feeds_found_on_pages_off_private_hosts(
    tmp_path: Path, site: LoopbackSite, pytorch_feed: str
) -> None:
    """Without --allow-private-hosts the feed a page announces is an untrusted URL."""
    source = _checked_site(site, pytorch_feed, tmp_path)
    code, _, err = invoke("import", str(source), "--schedules", str(tmp_path / "s"))
    assert code == 1
    assert f"podarchive: {site.url('/show')}: not a feed, and the page announces no working" in err
    assert "blocked: private address 127.0.0.1" in err
    assert not any(f.allow_private_hosts for f in load_schedules(tmp_path / "s"))


def test_import_writes_nothing_when_every_check_fails(tmp_path: Path, site: LoopbackSite) -> None:
    source = tmp_path / "gone.opml"
    source.write_bytes(opml(f'<outline text="Gone" xmlUrl="{site.url("/gone")}"/>'))
    code, out, err = invoke("import", str(source), "--schedules", str(tmp_path / "s"))
    assert code == 1
    assert out == f"{source}: 0 scheduled, 0 already scheduled, 0 duplicates, 1 failed, 0 skipped\n"
    assert err == f"podarchive: {site.url('/gone')}: HTTP 404 not found; not scheduled\n"
    assert not (tmp_path / "s").exists()


# podarchive export ---------------------------------------------------------------------------


def _three_feeds(directory: Path) -> None:
    """One schedule file: export keeps the files' order and each file's."""
    feeds = [
        FeedSchedule(PYTORCH, "PyTorch Developer Podcast"),
        FeedSchedule(CAFE, ODD_NAME, every=None, cron="0 * * * *"),
        FeedSchedule("https://no-name.example.com/rss"),
    ]
    add_schedules(directory, feeds, "mine")


def _fixed_date(body: bytes) -> bytes:
    date = rb"<dateCreated>[A-Z][a-z]{2}, \d\d [A-Z][a-z]{2} \d{4} \d\d:\d\d:\d\d GMT</dateCreated>"
    fixed, count = re.subn(date, b"<dateCreated>Wed, 02 Dec 2026 12:00:05 GMT</dateCreated>", body)
    assert count == 1
    return fixed


def test_export_prints_opml(tmp_path: Path) -> None:
    _three_feeds(tmp_path)
    result = CliRunner().invoke(cli, ["export", "--schedules", str(tmp_path)])
    assert (result.exit_code, result.stderr) == (0, "")
    assert _fixed_date(result.stdout_bytes) == (OPML / "export.opml").read_bytes()


def test_export_to_a_file(tmp_path: Path) -> None:
    _three_feeds(tmp_path / "s")
    out_file = tmp_path / "feeds.opml"
    code, out, err = invoke("export", "-o", str(out_file), "--schedules", str(tmp_path / "s"))
    assert (code, out, err) == (0, f"exported 3 feeds to {out_file}\n", "")
    assert _fixed_date(out_file.read_bytes()) == (OPML / "export.opml").read_bytes()
    code, _, err = invoke(
        "export", "-o", str(tmp_path / "no" / "x.opml"), "--schedules", str(tmp_path / "s")
    )
    assert code == 1
    assert (
        err
        == f"podarchive: {tmp_path / 'no' / 'x.opml'}: cannot write: No such file or directory\n"
    )


def test_export_without_schedules_exits_2(tmp_path: Path) -> None:
    code, out, err = invoke("export", "--schedules", str(tmp_path / "none"))
    assert (code, out) == (2, "")
    assert err == f"podarchive: error: {tmp_path / 'none'}: no such schedules directory\n"


def test_export_then_import_gives_the_same_feeds(tmp_path: Path) -> None:
    """The round trip: every URL and name comes back unchanged."""
    mine = tmp_path / "mine"
    _three_feeds(mine)
    add_schedule(mine, FeedSchedule("http://x.example/a%20b/ü?q=<1>&r='2'", "Ünïcödé 🎙️ \U000e0067"))
    add_schedule(mine, FeedSchedule("https://y.example/feed", "https://y.example/other"))
    exported = tmp_path / "feeds.opml"
    assert invoke("export", "-o", str(exported), "--schedules", str(mine))[0] == 0
    fresh = tmp_path / "fresh"
    code, out, err = invoke("import", str(exported), "--no-check", "--schedules", str(fresh))
    assert (code, err) == (0, "")
    assert out.splitlines()[-1].endswith(
        ": 5 scheduled in "
        + str(fresh / "import-feeds.toml")
        + ", 0 already scheduled, 0 duplicates, 0 failed, 0 skipped"
    )
    assert sorted(scheduled(fresh)) == sorted(scheduled(mine))


EVERY_SETTING = [
    FeedSchedule("https://a.example/feed", "Defaults"),
    FeedSchedule("https://b.example/feed", None, every=timedelta(minutes=30), pages=False),
    FeedSchedule("https://c.example/feed", "Cron", every=None, cron="0 6 * * 1-5"),
    FeedSchedule(
        "https://d.example/feed",
        "Everything",
        every=timedelta(hours=1, minutes=30),
        user_agent='Mozilla/5.0 (X11) "quoted" & <odd>',
        allow_private_hosts=True,
        page_every=timedelta(days=2),
        transcripts=False,
        chapters=False,
    ),
]


def test_export_then_import_keeps_every_setting_of_every_feed(tmp_path: Path) -> None:
    """Issue #23: every FeedSchedule field survives export then import (podarchive:*)."""
    mine = tmp_path / "mine"
    add_schedules(mine, EVERY_SETTING, "mine")
    exported = tmp_path / "feeds.opml"
    assert invoke("export", "-o", str(exported), "--schedules", str(mine))[0] == 0
    assert b'podarchive:every="1h30m"' in exported.read_bytes()
    fresh = tmp_path / "fresh"
    code, _, err = invoke("import", str(exported), "--no-check", "--schedules", str(fresh))
    assert (code, err) == (0, "")
    assert [dataclasses.replace(f, source="") for f in load_schedules(fresh)] == EVERY_SETTING
    assert (fresh / "import-feeds.toml").read_text() == (mine / "mine.toml").read_text()


def test_import_options_win_over_the_files_settings(tmp_path: Path) -> None:
    source = tmp_path / "one.opml"
    source.write_bytes(
        opml(
            f'<outline xmlns:podarchive="{PODARCHIVE_NS}" text="A" xmlUrl="https://a.example/f" '
            'podarchive:every="30m" podarchive:pages="true" podarchive:user_agent="UA/1"/>'
        )
    )
    args = ["import", str(source), "--no-check", "--schedules", str(tmp_path / "s")]
    assert invoke(*args, "--cron", "0 6 * * *", "--no-pages")[0] == 0
    (feed,) = load_schedules(tmp_path / "s")
    assert (feed.every, feed.cron, feed.pages, feed.user_agent) == (
        None,
        "0 6 * * *",
        False,
        "UA/1",
    )


@pytest.mark.parametrize(
    ("attributes", "message"),
    [
        ('podarchive:every="often"', "line 6: podarchive:every: bad interval 'often'"),
        ('podarchive:every="10s"', "line 6: podarchive:every: 10s is under the 60 s floor"),
        ('podarchive:page_every="1m"', "line 6: podarchive:page_every: "),
        ('podarchive:cron="every day"', "line 6: podarchive:cron: "),
        ('podarchive:every="1h" podarchive:cron="0 * * * *"', "give either every or cron"),
        ('podarchive:pages="maybe"', "line 6: podarchive:pages: must be true or false"),
        ('podarchive:frobnicate="1"', "line 6: podarchive:frobnicate: unknown key"),
        ('podarchive:url="https://x.example/"', "line 6: podarchive:url: not a podarchive"),
    ],
)
def test_import_refuses_a_bad_setting_in_one_line(
    tmp_path: Path, attributes: str, message: str
) -> None:
    source = tmp_path / "bad.opml"
    source.write_bytes(
        opml(
            '<outline text="ok" xmlUrl="https://ok.example/feed"/>',
            f'<outline xmlns:podarchive="{PODARCHIVE_NS}" text="A" '
            f'xmlUrl="https://a.example/feed" {attributes}/>',
        )
    )
    code, out, err = invoke("import", str(source), "--schedules", str(tmp_path / "s"))
    assert (code, out) == (2, "")
    assert err.startswith(f"podarchive: error: {source}: ")
    assert message in err
    assert err.count("\n") == 1
    assert not (tmp_path / "s").exists()  # nothing fetched, nothing written


def _nested(depth: int) -> bytes:
    """A feed outline inside ``depth - 1`` category outlines."""
    inner = '<outline type="rss" text="deep" xmlUrl="https://deep.example/feed"/>'
    return opml('<outline text="c">' * (depth - 1) + inner + "</outline>" * (depth - 1))


def test_import_reads_outlines_254_deep_and_refuses_deeper_in_one_line(tmp_path: Path) -> None:
    """Issue #23: the README states the depth podarchive reads (libxml2's limit)."""
    source = tmp_path / "deep.opml"
    source.write_bytes(_nested(MAX_DEPTH))
    code, out, _ = invoke("import", str(source), "--no-check", "--schedules", str(tmp_path / "s"))
    assert code == 0
    assert out.startswith("scheduled: https://deep.example/feed (deep)\n")
    assert len(parse_opml(_nested(MAX_DEPTH))[0].category) == MAX_DEPTH - 1
    source.write_bytes(_nested(MAX_DEPTH + 1))
    code, out, err = invoke("import", str(source), "--schedules", str(tmp_path / "t"))
    assert (code, out) == (2, "")
    assert err == (
        f"podarchive: {source}: outlines nested more than 254 deep (line 5); "
        "podarchive reads OPML up to that depth\n"
    )


# real processes ------------------------------------------------------------------------------


def test_subprocess_import_then_run(tmp_path: Path, site: LoopbackSite, pytorch_feed: str) -> None:
    (tmp_path / "subs.opml").write_bytes(
        opml(f'<outline type="rss" xmlUrl="{pytorch_feed}"/>', version="1.0")
    )
    imported = podarchive("import", "subs.opml", cwd=tmp_path)
    assert (imported.returncode, imported.stderr) == (0, "")
    assert imported.stdout.splitlines() == [
        f"scheduled: {pytorch_feed} (PyTorch Developer Podcast)",
        "subs.opml: 1 scheduled in schedules/import-subs.toml, 0 already scheduled, "
        "0 duplicates, 0 failed, 0 skipped",
    ]
    run = podarchive("run", "--allow-private-hosts", cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    bad = podarchive("import", "schedules/import-subs.toml", cwd=tmp_path)
    assert (bad.returncode, bad.stdout) == (2, "")
    assert bad.stderr.startswith("podarchive: schedules/import-subs.toml: not XML: ")
    assert bad.stderr.count("\n") == 1


def test_subprocess_export(tmp_path: Path) -> None:
    _three_feeds(tmp_path / "schedules")
    exported = podarchive("export", cwd=tmp_path)
    assert (exported.returncode, exported.stderr) == (0, "")
    assert parse_opml(exported.stdout.encode("utf-8")) == [
        OpmlFeed(PYTORCH, "PyTorch Developer Podcast"),
        OpmlFeed(CAFE, ODD_NAME, options=(("cron", "0 * * * *"),)),
        OpmlFeed("https://no-name.example.com/rss"),
    ]
