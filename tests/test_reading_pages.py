"""The archive reads like an archive on every page (issue #28): the root, the podcasts as cards,
a podcast's page, the episodes table's few columns, the canned queries as pages.

The archive is built by the real pipeline on a loopback site: the PyTorch fixture (two
transcript formats per episode) and a hostile podcast of 60 episodes whose channel title,
description and episode titles carry the XSS payloads of ``test_archive_face``. A real
``podarchive serve`` in headless Chromium checks the DOM and takes a screenshot of each page
type (kept under the test's ``tmp_path``).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from loopback import LoopbackSite, serve_pytorch
from test_archive_face import EVIL_NOTES, RAN, _dom, _live_attacks, _screenshot
from test_serve import CHROMIUM, PODCAST, QUERIES, RUN_SETTINGS, _serving, get, rows, sql

from podarchive.read.schedule_files import FeedSchedule
from podarchive.store import Archive
from podarchive.update.run import update_feeds
from podarchive.web.reading import (
    EPISODE_COLUMNS,
    PAGE_SIZE,
    default_columns,
    excerpt,
    health,
    query_columns,
    sentences,
)

pytest.importorskip("datasette.app", reason="datasette is not installed")
pytest.importorskip("nh3", reason="nh3 is not installed")

EVIL_TITLE = "Evil <script>alert(1)</script> Radio"
EPISODES = 60


def _evil_feed(base: str) -> str:
    items = "".join(
        f"<item><guid>e{i}</guid><title>Part {i} &lt;img src=x onerror=alert({i})&gt;</title>"
        f"<pubDate>Mon, {1 + i % 28:02d} {['Jan', 'Feb', 'Mar'][i % 3]} {2000 + i} 10:00:00 +0000"
        f"</pubDate><itunes:duration>{60 * i}</itunes:duration>"
        f"<description>First line of part {i}.\nSecond line.</description></item>"
        for i in range(EPISODES)
    )
    return f"""<?xml version="1.0" encoding="utf-8"?>
<rss version="2.0" xmlns:itunes="http://www.itunes.com/dtds/podcast-1.0.dtd">
<channel><title>Evil &lt;script&gt;alert(1)&lt;/script&gt; Radio</title><link>{base}/</link>
<itunes:author>Mallory</itunes:author>
<itunes:image href="javascript:alert(2)"/>
<description><![CDATA[{EVIL_NOTES}]]></description>
{items}
</channel></rss>"""


@pytest.fixture(scope="module")
def shelf(tmp_path_factory: pytest.TempPathFactory) -> Path:
    db = tmp_path_factory.mktemp("shelf") / "archive.db"
    with LoopbackSite() as site:
        site.serve("/evil/feed.xml", _evil_feed(site.url("")))
        schedules = [
            FeedSchedule(url=serve_pytorch(site), name=PODCAST),
            FeedSchedule(url=site.url("/evil/feed.xml"), name="Evil", pages=False),
        ]
        with Archive(db) as archive:
            report = update_feeds(archive, schedules, settings=RUN_SETTINGS)
    assert [f.error for f in report.feeds] == [None, None]
    return db


def _feed(db: Path, name: str) -> int:
    return int(sql(db, "SELECT id FROM feeds WHERE name = ?", name)[0][0])


# plain functions ---------------------------------------------------------------------------


def test_excerpt_is_the_first_line_cut_at_a_word() -> None:
    assert excerpt("<p>Hello <b>there</b></p>\nSecond") == "Hello there"
    assert excerpt("\n\n  one   two  \nthree") == "one two"
    assert excerpt(None) == excerpt("") == ""
    long = excerpt("word " * 100, 30)
    assert long.endswith("…")
    assert len(long) <= 31
    assert "wor…" not in long


def test_default_columns_unless_asked_for_others() -> None:
    names = ["id", "notes_html", *EPISODE_COLUMNS, "guid"]
    assert default_columns(names, {}) == list(EPISODE_COLUMNS)
    for asked in ({"_wide": "1"}, {"_col": "guid"}, {"_nocol": "guid"}):
        assert default_columns(names, asked) == names
    assert default_columns(names, {"_col": "title"}) == list(EPISODE_COLUMNS)
    assert len(EPISODE_COLUMNS) <= 8


def test_query_columns_leave_ids_to_the_json() -> None:
    columns = ["podcast", "episode", "start", "media_link", "episode_id", "feed_id", "id"]
    assert query_columns(columns) == [(0, "podcast"), (1, "episode"), (2, "start")]
    assert query_columns(["episode", "media_link"]) == [(0, "episode"), (1, "media_link")]
    assert sentences("One. Two. Three") == ("One.", "Two. Three")
    assert sentences("Only one") == ("Only one", "")


def test_health_in_words() -> None:
    assert health({"gone_at": "2024-01-01"})["state"] == "gone"
    failing = health({"error_count": 3, "failing_since": "2024-02-02T00:00:00Z"})
    assert failing == {
        "state": "failing",
        "says": "Failing since 2024-02-02T00:00:00Z (3 failed polls in a row)",
    }
    assert health({})["state"] == "never"
    assert health({"last_success_at": "x", "last_fetched_at": "y"})["state"] == "ok"


# the pages, in process ----------------------------------------------------------------------


def test_podcast_page_is_headed_by_its_title_and_lists_its_episodes(shelf: Path) -> None:
    feed = _feed(shelf, PODCAST)
    page = get(shelf, f"/archive/feeds/{feed}").text
    assert re.search(rf"<h1>{PODCAST}</h1>", page)
    assert f"<title>{PODCAST}</title>" in page
    assert "feeds: " not in page
    assert "backfill_walks" not in page
    assert "by Edward Yang, Team PyTorch" in page
    assert 'class="podcast-art"' in page  # the artwork's URL (no media kept here)
    titles = re.findall(r'<a class="episode-title" href="/archive/episodes/\d+">([^<]+)</a>', page)
    want = sql(shelf, "SELECT title FROM episodes WHERE feed_id = ? ORDER BY published DESC", feed)
    assert titles == [t for (t,) in want]
    assert '<span class="episode-duration">0:19:48</span>' in page
    assert "9 episodes" in page
    assert "Fetched fine" in page
    assert f'href="/archive/episodes?feed_id={feed}"' in page
    # the search is scoped to the podcast, best matches first
    found = get(shelf, f"/archive/feeds/{feed}?q=strides").text
    assert re.findall(r'class="episode-title"[^>]*>([^<]+)<', found) == ["Strides"]
    assert "«" in found
    other = get(shelf, f"/archive/feeds/{_feed(shelf, 'Evil')}?q=strides").text
    assert "No episode of this podcast matches." in other
    # its JSON stays Datasette's row
    assert rows(shelf, f"/archive/feeds/{feed}.json")[0]["title"] == PODCAST
    get(shelf, "/archive/feeds/999999", status=404)


def test_podcast_page_pages_newest_first(shelf: Path) -> None:
    evil = _feed(shelf, "Evil")
    first = get(shelf, f"/archive/feeds/{evil}").text
    second = get(shelf, f"/archive/feeds/{evil}?page=2").text
    dates = [re.findall(r'<time datetime="([^"]+)"', p) for p in (first, second)]
    assert len(dates[0]) == PAGE_SIZE
    assert len(dates[1]) == EPISODES - PAGE_SIZE
    assert dates[0] + dates[1] == sorted(dates[0] + dates[1], reverse=True)
    assert 'rel="next" href="/archive/feeds/' in first
    assert "page=2" in first
    assert 'rel="next"' not in second
    assert 'rel="prev"' in second
    assert (
        get(shelf, f"/archive/feeds/{evil}?page=x").text.count('class="episode-title"') == PAGE_SIZE
    )


def test_hostile_podcast_page_runs_nothing(shelf: Path) -> None:
    evil = _feed(shelf, "Evil")
    for path in (f"/archive/feeds/{evil}", "/archive/feeds", "/", f"/archive/feeds/{evil}?q=part"):
        page = get(shelf, path).text
        assert _live_attacks(page) == [], path
        assert RAN not in page, path
        assert "<script>alert" not in page, path
        assert "javascript:" not in page.lower(), path
    page = get(shelf, f"/archive/feeds/{evil}").text
    assert "<h1>Evil &lt;script&gt;alert(1)&lt;/script&gt; Radio</h1>" in page
    assert "Hi <b>listeners</b>" in page  # the description, sanitised HTML
    assert "Part 59 &lt;img src=x onerror=alert(59)&gt;" in page


def test_podcasts_page_shows_cards(shelf: Path) -> None:
    page = get(shelf, "/archive/feeds").text
    cards = re.findall(r'<h2><a href="(/archive/feeds/\d+)">([^<]+)</a></h2>', page)
    assert [title for _, title in cards] == [
        "Evil &lt;script&gt;alert(1)&lt;/script&gt; Radio",
        PODCAST,
    ]
    assert "60 episodes" in page
    assert "9 episodes" in page
    assert 'href="/archive/feeds?_view=table"' in page
    table = get(shelf, "/archive/feeds?_view=table").text
    assert 'class="podcast-card' not in table
    assert 'class="rows-and-columns"' in table


def test_episodes_table_opens_with_few_columns(shelf: Path) -> None:
    page = get(shelf, "/archive/episodes").text
    columns = re.findall(r'<th [^>]*data-column="(\w+)"', page)
    assert columns == list(EPISODE_COLUMNS)
    assert "_wide=1" in page
    assert "CREATE TABLE" not in page
    assert '<div class="facet-info' in page
    for empty in re.findall(r'<span class="facet-info-total">(\d+)</span>', page):
        assert int(empty) > 0
    assert "_facet_suggest" not in page
    assert "Suggested facets" not in page
    wide = get(shelf, "/archive/episodes?_wide=1").text
    assert len(re.findall(r'<th [^>]*data-column="(\w+)"', wide)) > 30
    assert "CREATE TABLE" in get(shelf, "/archive/episodes?_schema=1").text
    assert '<time datetime="2022-05-30T13:00:00Z">2022-05-30</time>' in page


def test_query_pages_read_like_pages(shelf: Path) -> None:
    for name, query in QUERIES.items():
        params = (
            "?q=strides"
            if ":q" in query["sql"]
            else "?target=github.com"
            if ":target" in query["sql"]
            else ""
        )
        page = get(shelf, f"/archive/{name}{params}").text
        title = re.search(r"<title>([^<]*)</title>", page)
        assert title, name
        assert title.group(1).startswith(query["title"]), name
        assert "select" not in title.group(1).lower(), name
        assert "Custom SQL query" not in page, name
        assert "Run SQL" not in page, name
        assert re.search(rf"<h1>{re.escape(query['title'])}", page), name
        assert "<summary>The SQL</summary>" in page, name
        for head in re.findall(r'<th class="col-([\w-]+)" scope="col">', page):
            assert not head.endswith("_id"), (name, head)
    page = get(shelf, "/archive/search_transcripts?q=strides").text
    assert re.search(r'<td class="col-episode"><a href="/archive/episodes/\d+">Strides</a>', page)
    assert re.search(r'<td class="col-start"><a href="[^"]*#t=\d+">0:00:\d\d</a></td>', page)


def test_one_row_per_passage_across_transcript_formats(shelf: Path) -> None:
    formats = sql(shelf, "SELECT count(DISTINCT format) FROM transcripts WHERE status = 'ok'")
    assert formats[0][0] >= 2  # the fixture's episodes have VTT and SRT copies
    found = rows(shelf, "/archive/search_transcripts.json?q=strides")
    assert found
    moments = [(r["episode_id"], r["start"]) for r in found]
    assert len(moments) == len(set(moments))
    assert len({r["transcript_id"] for r in found}) == 1


def test_archive_page_lists_queries_and_tables_without_counting_them(shelf: Path) -> None:
    page = get(shelf, "/archive").text
    assert "<h1>Podcast archive</h1>" in page
    assert 'action="/archive/search_episodes"' in page
    assert page.index('href="/archive/feeds">Podcasts</a>') < page.index(
        'href="/archive/episodes">Episodes</a>'
    )
    assert "<p>2 rows</p>" in page
    assert "<p>69 rows</p>" in page
    assert 'href="/archive/guests"' in page
    assert "Custom SQL query" in page
    sql_page = get(shelf, "/archive?sql=select+count(*)+as+n+from+feeds").text
    assert '<td class="col-n">2</td>' in sql_page  # ?sql= is Datasette's query page


def test_root_page_opens_with_podcasts_episodes_search_and_health(shelf: Path) -> None:
    page = get(shelf, "/").text
    start = page.index('class="archive-start"')
    assert page.index('href="/archive/feeds"', start) < page.index('href="/archive/episodes"')
    assert 'action="/archive/search_episodes"' in page
    assert '<input id="archive-q-archive" type="search" name="q"' in page
    assert re.search(r"<strong>2</strong> podcasts", page)
    assert re.search(r"<strong>69</strong> episodes", page)
    assert "transcript_segments</a>" not in page


# a real server, a real browser -----------------------------------------------------------


@pytest.mark.slow
@pytest.mark.skipif(CHROMIUM is None, reason="no chromium installed (.ci/run installs it)")
def test_headless_chromium_reads_an_archive(shelf: Path, tmp_path: Path) -> None:
    feed = _feed(shelf, PODCAST)
    strides = sql(shelf, "SELECT id FROM episodes WHERE title = 'Strides'")[0][0]
    with _serving(shelf) as base:
        pages = {
            "root": f"{base}/",
            "podcasts": f"{base}/archive/feeds",
            "podcast": f"{base}/archive/feeds/{feed}",
            "hostile-podcast": f"{base}/archive/feeds/{_feed(shelf, 'Evil')}",
            "episodes": f"{base}/archive/episodes",
            "episode": f"{base}/archive/episodes/{strides}",
        }
        for name, query in QUERIES.items():
            q = (
                "?q=strides"
                if ":q" in query["sql"]
                else "?target=github.com"
                if ":target" in query["sql"]
                else ""
            )
            pages[f"query-{name}"] = f"{base}/archive/{name}{q}"
        for name, url in pages.items():
            _screenshot(tmp_path, name, url)
        doms = {name: _dom(tmp_path, url) for name, url in pages.items()}
    podcast = doms["podcast"]
    assert re.search(rf"<h1>{PODCAST}</h1>", podcast)
    assert len(re.findall(r'class="episode-title"', podcast)) == 9
    assert len(re.findall(r"<th [^>]*data-column=", doms["episodes"])) <= 8
    for name, dom in doms.items():
        title = re.search(r"<title>([^<]*)</title>", dom)
        assert title, name
        assert "select" not in title.group(1).lower(), name
        assert RAN not in dom, name
        assert _live_attacks(dom) == [], name
    transcripts = doms["query-search_transcripts"]
    passages = re.findall(r'<td class="col-passage">(.*?)</td>', transcripts)
    assert passages
    assert len(passages) == len(set(passages))
    assert re.search(r"<h1>Podcasts</h1>", doms["podcasts"])
    assert "podcast-card" in doms["podcasts"]
