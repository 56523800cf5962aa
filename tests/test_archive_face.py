"""``podarchive serve`` reads like an archive (issue #14): what a user sees.

The archive is built by the real pipeline on a loopback site from two feeds: the PyTorch fixture
(pages, transcripts, chapters) and a hostile one whose show notes, episode page, title and
links carry XSS payloads (``<script>``, ``<img onerror>``, ``javascript:`` links, ``<style>``,
``<svg onload>``, ``<details ontoggle>``…), with an undated episode and two episodes whose
order by relevance is not their order by date. Each payload that ran would write ``XSS-RAN``
into the page; the marker is spelled in two parts in the payloads, so it is in the page only
if a payload ran.

The in-process client checks the HTML Datasette serves; a real ``podarchive serve`` loaded in
headless Chromium checks the DOM after scripts ran (``--dump-dom``) and takes screenshots of
the database page, the episodes table, an episode's page and a search (kept under the test's
``tmp_path``).
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Iterator
from html.parser import HTMLParser
from pathlib import Path

import httpx
import pytest
from loopback import LoopbackSite, serve_pytorch
from test_serve import CHROMIUM, PODCAST, RUN_SETTINGS, _chromium, _serving, get, rows, sql

from podarchive.read.schedule_files import FeedSchedule
from podarchive.store import Archive
from podarchive.update.run import update_feeds
from podarchive.web.plugin import (
    NOTE_ATTRIBUTES,
    NOTE_SCHEMES,
    NOTE_TAGS,
    arrange,
    hms,
    json_cell_html,
    sanitise_notes,
    unique_facets,
)
from podarchive.web.serve import TEMPLATES, make_datasette, metadata_for

pytest.importorskip("datasette.app", reason="datasette is not installed")
pytest.importorskip("nh3", reason="nh3 is not installed")

RAN = "XSS-RAN"  # what a payload that ran writes into the page
HOSTILE = "Hostile <b>Notes</b> Hour"


def _ran(n: int) -> str:
    """JavaScript that writes ``XSS-RAN-n`` into the page, without spelling the marker."""
    return f"document.body.append('XSS'+'-RAN-{n}')"


EVIL_NOTES = (
    "<p>Hi <b>listeners</b>, <script>" + _ran(1) + "</script>"
    '<img src="x" onerror="' + _ran(2) + '"> a '
    '<a href="javascript:' + _ran(3) + '">javascript link</a>, '
    '<a href="JaVaScRiPt:' + _ran(4) + '">another</a>, '
    '<a href="https://example.com/ok" onclick="' + _ran(5) + '">a fine link</a> and '
    '<a href="/notes/relative">a relative one</a>.</p>'
    "<style>body { display: none }</style>"
    '<svg onload="' + _ran(6) + '"><text>svg</text></svg>'
    '<details open ontoggle="' + _ran(7) + '"><summary>More</summary>hidden</details>'
    '<iframe srcdoc="<script>' + _ran(8) + '</script>"></iframe>'
    '<p style="background: url(javascript:alert(1))">Styled paragraph.</p>'
    "<math><mtext><table><mglyph><style><img src=x onerror=" + _ran(9).replace(" ", "")
    + "></style></mglyph></table></mtext></math>"
    "<p>Bye.</p>"
)  # fmt: skip
EVIL_PAGE = (
    "<!doctype html><html><head><title>Evil episode</title>"
    "<script>" + _ran(10) + "</script></head><body><main><article>"
    "<p>The page's own notes about this evil episode, long enough to be the notes of the page:"
    ' <img src="x" onerror="' + _ran(11) + '"> and <a href="javascript:' + _ran(12) + '">a'
    ' javascript link</a> and <a href="/page/relative">a relative link</a>.</p>'
    "<p>Second paragraph <script>" + _ran(13) + "</script> with more words.</p>"
    "</article></main></body></html>"
)
RELEVANT_OLD = "Quaternions, quaternions, quaternions"
RELEVANT_NEW = "Listener mail"


def _hostile_feed(base: str) -> str:
    filler = " ".join(f"word{i}" for i in range(300))
    return f"""<?xml version="1.0" encoding="utf-8"?>
<rss version="2.0" xmlns:content="http://purl.org/rss/1.0/modules/content/"
  xmlns:itunes="http://www.itunes.com/dtds/podcast-1.0.dtd">
<channel><title>Hostile &lt;b&gt;Notes&lt;/b&gt; Hour</title><link>{base}/</link>
<description>x</description>
<item><guid>evil-1</guid><title>Evil &lt;i&gt;episode&lt;/i&gt;</title>
<link>{base}/evil/ep1</link>
<pubDate>Mon, 30 May 2022 13:00:00 +0000</pubDate><itunes:duration>3725</itunes:duration>
<enclosure url="javascript:alert(1)" type="audio/mpeg" length="10"/>
<content:encoded><![CDATA[{EVIL_NOTES}]]></content:encoded></item>
<item><guid>undated-1</guid><title>Undated bonus</title>
<description>No date on this one.</description></item>
<item><guid>old-1</guid><title>{RELEVANT_OLD}</title>
<pubDate>Wed, 01 Jan 2020 12:00:00 +0000</pubDate>
<description>All about quaternions.</description></item>
<item><guid>new-1</guid><title>{RELEVANT_NEW}</title>
<pubDate>Sun, 01 Jan 2023 12:00:00 +0000</pubDate>
<description>{filler} quaternions {filler}</description></item>
</channel></rss>"""


@pytest.fixture(scope="module")
def face(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The PyTorch fixture and the hostile feed, archived by one run (pages fetched)."""
    db = tmp_path_factory.mktemp("face") / "archive.db"
    with LoopbackSite() as site:
        site.serve("/evil/feed.xml", _hostile_feed(site.url("")))
        site.serve("/evil/ep1", EVIL_PAGE, content_type="text/html; charset=utf-8")
        schedules = [
            FeedSchedule(url=serve_pytorch(site), name=PODCAST),
            FeedSchedule(url=site.url("/evil/feed.xml"), name="Hostile"),
        ]
        with Archive(db) as archive:
            report = update_feeds(archive, schedules, settings=RUN_SETTINGS)
    assert [f.error for f in report.feeds] == [None, None]
    notes, page_notes = sql(
        db, "SELECT notes_html, page_notes_html FROM episodes WHERE guid = 'evil-1'"
    )[0]
    assert "<script>" in notes
    assert "onerror" in notes
    assert page_notes
    assert "relative link" in page_notes
    return db


def _id(db: Path, guid: str) -> int:
    return int(sql(db, "SELECT id FROM episodes WHERE guid = ?", guid)[0][0])


def _strides(db: Path) -> int:
    return int(sql(db, "SELECT id FROM episodes WHERE title = 'Strides'")[0][0])


# what makes HTML safe ---------------------------------------------------------------------


class _Tags(HTMLParser):
    """Every start tag of a document with its attributes, and the text of its scripts."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, list[tuple[str, str | None]]]] = []
        self.scripts: list[str] = []
        self._in_script = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, attrs))
        self._in_script = tag == "script"

    def handle_endtag(self, tag: str) -> None:
        self._in_script = False

    def handle_data(self, data: str) -> None:
        if self._in_script:
            self.scripts.append(data)


def _tags(html: str) -> _Tags:
    parser = _Tags()
    parser.feed(html)
    parser.close()
    return parser


def _live_attacks(html: str) -> list[str]:
    """What in ``html`` could run: an event handler, a javascript:/data: URL, a script
    element with a payload in it, an iframe, object or embed."""
    parsed = _tags(html)
    found = []
    for tag, attrs in parsed.tags:
        if tag in ("iframe", "object", "embed"):
            found.append(tag)
        for name, value in attrs:
            if name.startswith("on"):
                found.append(f"{tag} {name}")
            url = re.sub(r"[\s\x00-\x1f]", "", value or "").lower()
            if name == "srcdoc" or (
                name in ("href", "src", "action", "formaction", "data", "xlink:href")
                and url.startswith(("javascript:", "vbscript:", "data:"))
            ):
                found.append(f"{tag} {name}={value}")
    found += [s for s in parsed.scripts if "XSS" in s or "alert" in s]
    return found


ATTACKS = [
    "<script>alert(1)</script>",
    "<img src=x onerror=alert(1)>",
    '<a href="javascript:alert(1)">x</a>',
    '<a href="JaVaScRiPt:alert(1)">x</a>',
    '<a href=" javascript:alert(1)">x</a>',
    '<a href="java&#x09;script:alert(1)">x</a>',
    '<a href="&#106;avascript:alert(1)">x</a>',
    '<a href="vbscript:msgbox(1)">x</a>',
    '<a href="data:text/html,&lt;script&gt;alert(1)&lt;/script&gt;">x</a>',
    "<style>*{display:none}</style>",
    '<p style="background:url(javascript:alert(1))">x</p>',
    "<svg onload=alert(1)>",
    "<svg><script>alert(1)</script></svg>",
    '<iframe src="javascript:alert(1)"></iframe>',
    '<iframe srcdoc="<script>alert(1)</script>"></iframe>',
    "<body onload=alert(1)>",
    "<details open ontoggle=alert(1)>",
    '<form action="javascript:alert(1)"><button>go</button></form>',
    "<input autofocus onfocus=alert(1)>",
    "<video><source onerror=alert(1)></video>",
    "<math><mtext><table><mglyph><style><img src=x onerror=alert(1)>",
    '<noscript><p title="</noscript><img src=x onerror=alert(1)>">',
    "<!--<img src=x onerror=alert(1)>-->",
    '<base href="javascript:alert(1)//">',
    '<meta http-equiv="refresh" content="0;url=javascript:alert(1)">',
    "<object data=javascript:alert(1)></object>",
    "<embed src=javascript:alert(1)>",
    "<template><script>alert(1)</script></template>",
    "<scr<script>ipt>alert(1)</script>",
    '<a href="https://ok.example/" onmouseover="alert(1)">x</a>',
    "<img src=x onerror=alert(1)//",
    '<div id="x" class="evil" data-x="1">x</div>',
    '<a href="\x01javascript:alert(1)">x</a>',
    '<a href="//evil.example/x">x</a>',
    '<a href="java\nscript:alert(1)">x</a>',
    '<a href="https:alert(1)">x</a>',
]


@pytest.mark.parametrize("attack", ATTACKS)
def test_sanitised_notes_keep_nothing_that_runs(attack: str) -> None:
    clean = sanitise_notes(f"<p>before</p>{attack}<p>after</p>", "https://example.com/ep/1")
    assert _live_attacks(clean) == [], clean
    for tag, attrs in _tags(clean).tags:
        assert tag in NOTE_TAGS, clean
        for name, value in attrs:
            assert name in NOTE_ATTRIBUTES.get(tag, set()) | {"rel"}, clean
            if name == "href":
                assert (value or "").partition(":")[0] in NOTE_SCHEMES, clean
    assert "<style" not in clean
    assert "display:none" not in clean
    assert clean.startswith("<p>before</p>")  # (an unclosed <style> takes the rest with it)


def test_sanitised_notes_keep_the_text_and_links() -> None:
    notes = (
        '<p>Read <a href="https://example.com/a?b=1&amp;c=2">this</a>, <a href="/rel">that</a>,'
        ' <a href="#top">the top</a> and <a href="mailto:host@example.com">write</a>.</p>'
        "<ul><li><b>bold</b> <em>em</em></li></ul><img src=https://tracker.example/p.gif>"
    )
    clean = sanitise_notes(notes, "https://example.com/episodes/1")
    assert clean == (
        '<p>Read <a href="https://example.com/a?b=1&amp;c=2" rel="noopener noreferrer nofollow">'
        'this</a>, <a href="https://example.com/rel" rel="noopener noreferrer nofollow">that</a>,'
        ' <a rel="noopener noreferrer nofollow">the top</a> and'
        ' <a href="mailto:host@example.com" rel="noopener noreferrer nofollow">write</a>.</p>'
        "<ul><li><b>bold</b> <em>em</em></li></ul>"
    )  # no image: it would be a request to a third party
    # without an http(s) base, a relative link has nowhere to go
    assert 'href="/rel"' not in sanitise_notes(notes, "javascript:alert(1)")
    assert "href" not in sanitise_notes('<a href="/rel">x</a>')
    assert sanitise_notes(None) == sanitise_notes("") == ""


def test_durations_json_and_column_order() -> None:
    assert [hms(v) for v in (0, 59.9, 1188, "3725", 36000)] == [
        "0:00:00", "0:00:59", "0:19:48", "1:02:05", "10:00:00",
    ]  # fmt: skip
    assert [hms(v) for v in (None, -1, "x", float("nan"), float("inf"), True, b"1")] == [None] * 7
    html = json_cell_html('[{"url": "https://x.example/a/t.vtt?x=<b>", "type": "text/vtt"}]')
    assert html == (
        '<ul class="archive-json"><li><a href="https://x.example/a/t.vtt?x=&lt;b&gt;">t.vtt</a>'
        " · text/vtt</li></ul>"
    )
    assert json_cell_html('["<script>alert(1)</script>"]') == (
        '<ul class="archive-json"><li>&lt;script&gt;alert(1)&lt;/script&gt;</li></ul>'
    )
    assert json_cell_html('{"href": "javascript:alert(1)"}') == (
        '<ul class="archive-json"><li>javascript:alert(1)</li></ul>'
    )
    for value in ("plain", "[", "[]", None, 3):
        assert json_cell_html(value) is None, value
    assert arrange(["id", "a", "title", "b", "key"], ["title", "gone"], ["key", "id"]) == [
        "title", "a", "b", "key", "id",
    ]  # fmt: skip
    twice = [{"name": "domain", "type": "column"}, {"name": "domain", "type": "column"}]
    assert unique_facets([*twice, {"name": "domain", "type": "date"}]) == [
        twice[0],
        {"name": "domain", "type": "date"},
    ]


def test_templates_and_plugin_config_are_package_data() -> None:
    names = {p.name for p in TEMPLATES.iterdir()}
    assert {"base.html", "database.html", "table.html", "_table.html", "row.html"} <= names
    assert "_facet_results.html" in names
    config = metadata_for()["plugins"]["podarchive"]
    assert config["labels"] == {"feed_id": "podcast", "episode_id": "episode"}
    assert config["column_order"]["episodes"]["first"][:4] == [
        "title", "feed_id", "published", "duration",
    ]  # fmt: skip


# the pages --------------------------------------------------------------------------------

INTERNAL = (
    "backfill_pages", "backfill_walks", "hosts", "snapshots", "feed_bodies", "documents",
    "page_bodies", "feed_redirects", "episodes_fts", "episodes_fts_data",
)  # fmt: skip
READ = (
    "feeds", "episodes", "links", "transcripts", "transcript_segments", "chapters",
    "episode_revisions", "feed_revisions", "fetches", "feed_moves", "tags",
)  # fmt: skip


def test_database_page_lists_what_a_researcher_reads(face: Path) -> None:
    page = get(face, "/archive").text
    listed = re.findall(r'<div class="db-table">\s*<h3><a href="/archive/(\w+)">([^<]*)</a>', page)
    names = [name for name, _ in listed]
    assert names[:3] == ["feeds", "episodes", "links"]  # the archive's order, not a-z
    assert dict(listed)["feeds"] == "Podcasts"
    assert set(READ) <= set(names)
    assert not set(INTERNAL) & set(names)
    assert "select * from backfill_pages" not in page
    assert "select title, published, duration from episodes" in page
    # a search box that ranks episodes
    assert '<form class="archive-search" action="/archive/search_episodes"' in page
    hidden = {t["name"] for t in get(face, "/archive.json").json()["tables"] if t["hidden"]}
    assert set(INTERNAL) <= hidden
    assert not set(READ) & hidden
    shown = get(face, "/archive?_show_hidden=1").text  # still one click away
    assert '<a href="/archive/snapshots">Feed snapshots</a>' in shown


def test_episodes_table_opens_with_title_podcast_published_duration(face: Path) -> None:
    page = get(face, "/archive/episodes?_wide=1").text  # every column (#28: a click away)
    columns = re.findall(r'<th [^>]*data-column="(\w+)"', page)
    assert columns[:4] == ["title", "feed_id", "published", "duration"]
    assert columns[-1] == "id"
    assert re.search(r'data-column="feed_id"[^>]*>\s*<a [^>]*>podcast</a>', page)
    strides = _strides(face)
    assert (
        f'<td class="col-title type-str"><a href="/archive/episodes/{strides}">Strides</a></td>'
        in page
    )
    assert '<td class="col-duration type-int">0:19:48</td>' in page
    assert '<td class="col-duration type-int">1:02:05</td>' in page  # the hostile one
    # long text is cut to three lines, not rows hundreds of pixels tall
    assert '<td class="col-notes_html type-str"><div class="archive-clamp">' in page
    assert '<td class="col-notes_text type-str"><div class="archive-line">' in page  # a line
    # JSON columns are lists, links to the files
    assert '<ul class="archive-json"><li><a href="http://127.0.0.1:' in page
    assert ">transcript.vtt</a> · text/vtt · en</li>" in page
    # the values stay as stored in JSON and CSV
    (row,) = rows(face, "/archive/episodes.json?title=Strides")
    assert row["duration"] == 1188


def test_facets_say_what_they_are_and_come_once(face: Path) -> None:
    page = get(face, "/archive/episodes").text
    headings = re.findall(r'<p class="facet-info-name">\s*<strong>(\w+)', page)
    assert "podcast" in headings
    assert "feed_id" not in headings
    assert re.search(
        r'<a href="[^"]*feed_id=\d+[^"]*">Hostile &lt;b&gt;Notes&lt;/b&gt; Hour</a>', page
    )
    links = get(face, "/archive/links?_facet=domain").text
    assert len(re.findall(r'<div class="facet-info [^"]*-domain"', links)) == 1
    assert len(re.findall(r'<div class="facet-info ', links)) == 2  # domain and source
    fetches = get(face, "/archive/fetches").text
    assert re.search(r"<th [^>]*>\s*<a [^>]*>episode</a>", fetches)  # not episode_id


def test_episode_page_reads_like_an_episode(face: Path) -> None:
    strides = _strides(face)
    page = get(face, f"/archive/episodes/{strides}").text
    assert "<title>Strides · PyTorch Developer Podcast</title>" in page
    assert re.search(r"<h1>Strides</h1>", page)
    assert "episodes: " not in page  # Datasette's own heading
    feed_id = sql(face, "SELECT feed_id FROM episodes WHERE id = ?", strides)[0][0]
    assert f'<a class="episode-podcast" href="/archive/feeds/{feed_id}">{PODCAST}</a>' in page
    assert '<time class="episode-date" datetime="2022-05-30T13:00:00Z">2022-05-30</time>' in page
    assert '<span class="episode-duration">0:19:48</span>' in page
    # the notes as HTML, whole, their link live and marked
    assert (
        '<a href="https://github.com/pytorch/pytorch/issues/78050" rel="noopener noreferrer '
        'nofollow">an RFC about stride-agnostic operator semantics</a>' in page
    )
    assert "&lt;p&gt;" not in page
    assert "&lt;a href" not in page
    assert "how do you handle them properly when writing kernels" in page.lower()
    # links, chapters, transcript
    assert '<section id="links">' in page
    assert "github.com" in page
    assert re.search(r'<td class="archive-time"><a href="[^"]*#t=12">0:00:12</a></td>', page)
    assert "What a stride is" in page
    assert "Today we are talking about strides, the secret of views." in page
    assert '<td class="archive-speaker">Edward Yang</td>' in page
    # every other field, labelled
    assert "<dt>podcast</dt>" in page
    assert "<dt>enclosure_url</dt>" in page


def test_hostile_episode_page_runs_nothing(face: Path) -> None:
    evil = _id(face, "evil-1")
    page = get(face, f"/archive/episodes/{evil}").text
    assert _live_attacks(page) == []
    assert RAN not in page
    assert "XSS'+'-RAN" not in page  # not even as text: scripts go with their content
    assert "display: none" not in page
    assert "<h1>Evil &lt;i&gt;episode&lt;/i&gt;</h1>" in page  # a title is text
    assert "Hostile &lt;b&gt;Notes&lt;/b&gt; Hour</a>" in page
    # what is left of the notes reads as HTML
    assert "Hi <b>listeners</b>" in page
    assert (
        '<a href="https://example.com/ok" rel="noopener noreferrer nofollow">a fine link</a>'
        in page
    )
    base = sql(face, "SELECT link FROM episodes WHERE id = ?", evil)[0][0]
    origin = base.rsplit("/evil/", 1)[0]
    assert f'<a href="{origin}/notes/relative" rel="noopener noreferrer nofollow">' in page
    assert "<p>Styled paragraph.</p>" in page
    # the page's notes too
    assert '<section id="page-notes">' in page
    assert f'<a href="{origin}/page/relative" rel="noopener noreferrer nofollow">' in page
    # the enclosure's javascript: URL is no link
    assert "Listen</a>" not in page


@pytest.mark.parametrize(
    "path",
    [
        "/archive/episodes",
        "/archive/episodes?_search=listeners",
        "/archive/search_episodes?q=listeners",
        "/archive/search_notes?q=listeners",
        "/archive/links",
        "/archive?sql=select+notes_html,+page_notes_html+from+episodes",
    ],
)
def test_other_pages_show_hostile_notes_escaped(face: Path, path: str) -> None:
    page = get(face, path).text
    assert _live_attacks(page) == []
    assert RAN not in page


def test_search_ranks_by_relevance_with_a_passage(face: Path) -> None:
    found = rows(face, "/archive/search_episodes.json?q=quaternions")
    assert [r["episode"] for r in found] == [RELEVANT_OLD, RELEVANT_NEW]  # best first
    assert found[0]["passage"].count("«quaternions»") >= 1
    assert found[1]["published"] > found[0]["published"]
    # the table's search box filters, newest first, and points to the ranked search
    table = rows(face, "/archive/episodes.json?_search=quaternions&_col=title")
    assert [r["title"] for r in table] == [RELEVANT_NEW, RELEVANT_OLD]
    page = get(face, "/archive/episodes?_search=quaternions").text
    assert '<a href="/archive/search_episodes?q=quaternions">' in page
    (strides,) = rows(face, "/archive/search_episodes.json?q=strides")
    assert (strides["podcast"], strides["duration"]) == (PODCAST, "0:19:48")
    html = get(face, "/archive/search_episodes?q=strides").text
    assert (
        f'<td class="col-episode"><a href="/archive/episodes/{strides["episode_id"]}">Strides</a></td>'
        in html
    )
    assert (
        f'<td class="col-podcast"><a href="/archive/feeds/{strides["feed_id"]}">{PODCAST}</a></td>'
        in html
    )


def test_queries_count_undated_episodes_and_one_row_per_linking_episode(face: Path) -> None:
    years = rows(face, "/archive/episodes_by_year.json")
    hostile = [(r["year"], r["episodes"]) for r in years if r["podcast"] == HOSTILE]
    assert hostile == [("2023", 1), ("2022", 1), ("2020", 1), ("undated", 1)]
    assert sum(r["episodes"] for r in years) == sql(face, "SELECT count(*) FROM episodes")[0][0]
    assert years[-1]["year"] == "undated"
    linking = rows(face, "/archive/episodes_linking_to.json?target=wikipedia.org")
    assert [(r["episode"], r["sources"], r["links"]) for r in linking] == [
        ("All about NVIDIA GPUs", "feed, page", 1),
        ("Tensor subclasses and Liskov substitution principle", "feed, page", 1),
    ]
    assert len({r["episode_id"] for r in linking}) == len(linking)


def test_a_bare_datasette_in_the_same_process_is_left_alone(face: Path) -> None:
    """The plugin acts only for the servers make_datasette builds."""
    from datasette.app import Datasette

    make_datasette(face)  # registers the plugin in this process
    strides = _strides(face)

    async def fetch() -> list[str]:
        bare = Datasette([str(face)])
        return [
            (await bare.client.get(p)).text
            for p in ("/archive/episodes?title=Strides", f"/archive/episodes/{strides}")
        ]

    table, row = asyncio.run(fetch())
    assert '<td class="col-duration type-int">1188</td>' in table
    assert f"episodes: {strides}" in row
    assert "<h1>Strides</h1>" not in row
    assert "episode-duration" not in row


# a real server, a real browser -----------------------------------------------------------


@pytest.fixture
def face_server(face: Path) -> Iterator[str]:
    with _serving(face) as base:
        yield base


def _dom(tmp_path: Path, url: str) -> str:
    result = _chromium(tmp_path, "--virtual-time-budget=3000", "--dump-dom", url)
    assert result.returncode == 0, result.stderr.decode()[-2000:]
    return result.stdout.decode()


def _screenshot(tmp_path: Path, name: str, url: str) -> Path:
    shot = tmp_path / "screenshots" / f"{name}.png"
    shot.parent.mkdir(exist_ok=True)
    result = _chromium(tmp_path, f"--screenshot={shot}", "--window-size=1280,1400", url)
    assert result.returncode == 0, result.stderr.decode()[-2000:]
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n", name
    assert shot.stat().st_size > 20_000, name  # a rendered page, not a blank one
    return shot


@pytest.mark.slow
@pytest.mark.skipif(CHROMIUM is None, reason="no chromium installed (.ci/run installs it)")
def test_headless_chromium_sees_an_archive(face: Path, face_server: str, tmp_path: Path) -> None:
    strides, evil = _strides(face), _id(face, "evil-1")
    pages = {
        "database": f"{face_server}/archive",
        "episodes": f"{face_server}/archive/episodes",
        "episode": f"{face_server}/archive/episodes/{strides}",
        "search": f"{face_server}/archive/search_episodes?q=quaternions",
        "hostile": f"{face_server}/archive/episodes/{evil}",
    }
    shots = {name: _screenshot(tmp_path, name, url) for name, url in pages.items()}
    assert sorted(p.name for p in (tmp_path / "screenshots").iterdir()) == sorted(
        f"{name}.png" for name in pages
    )
    assert all(shot.is_relative_to(tmp_path) for shot in shots.values())

    database = _dom(tmp_path, pages["database"])
    assert re.search(r"<h1[^>]*>Podcast archive</h1>", database)
    for name in INTERNAL:
        assert f'href="/archive/{name}"' not in database, name
    assert 'href="/archive/episodes">Episodes</a>' in database

    episodes = _dom(tmp_path, pages["episodes"])
    heads = re.findall(r'<th [^>]*data-column="(\w+)"', episodes)
    assert heads[:4] == ["title", "feed_id", "published", "duration"]
    assert "0:19:48" in episodes

    episode = _dom(tmp_path, pages["episode"])
    assert re.search(r"<h1>Strides</h1>", episode)
    assert "&lt;p&gt;" not in episode
    assert "&lt;a " not in episode
    assert '<span class="episode-duration">0:19:48</span>' in episode
    assert "an RFC about stride-agnostic operator semantics</a>" in episode

    search = _dom(tmp_path, pages["search"])
    assert re.search(r"<h1[^>]*>Search episodes</h1>", search)
    order = [search.index(f">{title}</a>") for title in (RELEVANT_OLD, RELEVANT_NEW)]
    assert order == sorted(order)  # the best match first, though older
    assert "«quaternions»" in search

    hostile = _dom(tmp_path, pages["hostile"])
    assert RAN not in hostile  # no payload ran (each would have written the marker)
    assert _live_attacks(hostile) == []
    assert "onerror" not in hostile
    assert "ontoggle" not in hostile
    assert "onload" not in hostile
    assert re.search(r"<h1>Evil &lt;i&gt;episode&lt;/i&gt;</h1>", hostile)
    assert "Hi <b>listeners</b>" in hostile
    # the server is still answering (nothing in a page broke it)
    assert httpx.get(pages["hostile"], timeout=5).status_code == 200
