"""``podarchive serve``: Datasette with the packaged metadata, its canned queries, a browser.

Archives are built by the real pipeline from the PyTorch fixture on a loopback server (with
its transcripts and chapters files); the history archive is updated from an edited feed (a
retitled episode, a new channel description, two episodes dropped) and then from a failing
one; the revised archive's transcript, chapters file and Podlove chapters change between two
runs; the namespace archive holds two hand-written Podcasting 2.0 shows (fixtures/namespace)
sharing guests, with podrolls, soundbites, an alternate enclosure and live items.
"""

from __future__ import annotations

import asyncio
import json
import re
import shutil
import socket
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st
from loopback import LoopbackSite, Reply, serve_pytorch

from podarchive.cli import cli
from podarchive.core.settings import Settings
from podarchive.read.schedule_files import FeedSchedule
from podarchive.read.transcript_formats import format_timestamp, media_link
from podarchive.store import Archive
from podarchive.update.run import update_feeds
from podarchive.web.serve import SETTINGS, check_archive, make_datasette, metadata_for
from podarchive.web.shard_search import fts_phrases

pytest.importorskip("datasette.app", reason="datasette is not installed")

RUN_SETTINGS = Settings(
    connect_timeout=2, read_timeout=2, deadline=10, allow_private_hosts=True, host_gap=0,
    retry_base=0.01, retries=0,
)  # fmt: skip
PODCAST = "PyTorch Developer Podcast"
METADATA = metadata_for()
QUERIES = METADATA["databases"]["archive"]["queries"]


def run(
    db: Path, url: str, *, pages: bool = True, name: str = PODCAST, recheck: bool = False
) -> None:
    with Archive(db) as archive:
        update_feeds(
            archive,
            [FeedSchedule(url=url, name=name, pages=pages)],
            settings=RUN_SETTINGS,
            recheck_pages=recheck,
        )


def get(db: Path, path: str, *, status: int = 200) -> httpx.Response:
    async def fetch() -> httpx.Response:
        response: httpx.Response = await make_datasette(db).client.get(path)
        return response

    response = asyncio.run(fetch())
    assert response.status_code == status, response.text[:2000]
    return response


def rows(db: Path, path: str) -> list[dict[str, Any]]:
    sep = "&" if "?" in path else "?"
    result: list[dict[str, Any]] = get(db, f"{path}{sep}_shape=array").json()
    return result


def facets(db: Path, path: str) -> dict[str, list[tuple[Any, int]]]:
    """A table page's facets: column → [(value, count)], as Datasette orders them."""
    results = get(db, path).json()["facet_results"]
    return {k: [(r["value"], r["count"]) for r in v["results"]] for k, v in results.items()}


def sql(db: Path, query: str, *params: Any) -> list[tuple[Any, ...]]:
    conn = sqlite3.connect(db)
    try:
        return conn.execute(query, params).fetchall()
    finally:
        conn.close()


@pytest.fixture(scope="module")
def archive(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The PyTorch fixture archived once: 9 episodes, their pages and links; two episodes'
    transcripts (VTT and SRT each) and chapters files."""
    db = tmp_path_factory.mktemp("serve") / "archive.db"
    with LoopbackSite() as site:
        run(db, serve_pytorch(site))
    return db


def _drop_item(feed: bytes, title: str) -> bytes:
    pattern = (
        rb"\s*<item>(?:(?!</item>).)*?<title>" + re.escape(title.encode()) + rb"</title>.*?</item>"
    )
    dropped, n = re.subn(pattern, b"", feed, count=1, flags=re.S)
    assert n == 1, title
    return dropped


@pytest.fixture(scope="module")
def history(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Three runs: the fixture; then edited (retitled, new description, two dropped); a 404."""
    db = tmp_path_factory.mktemp("history") / "archive.db"
    with LoopbackSite() as site:
        url = serve_pytorch(site)
        run(db, url)
        reply = site.routes["/pytorch/feed.xml"]
        assert isinstance(reply, Reply)
        feed = reply.body.replace(b"<title>Weak references</title>", b"<title>Weak refs</title>")
        feed = feed.replace(
            b"<description><![CDATA[The PyTorch Developer Podcast is",
            b"<description><![CDATA[Now: the PyTorch Developer Podcast is",
            1,
        )
        feed = _drop_item(feed, "Strides")  # from the middle: removed
        feed = _drop_item(feed, "Tensor subclasses and Liskov substitution principle")  # oldest
        reply.body, reply.etag = feed, '"feed-v2"'
        time.sleep(1.1)  # timestamps have whole seconds: the edit is seen later
        run(db, url)
        time.sleep(1.1)
        site.serve("/pytorch/feed.xml", b"gone for now", status=404)
        run(db, url)
    return db


# the packaged metadata ------------------------------------------------------------------


def test_metadata_is_package_data_and_renders_no_html() -> None:
    text = json.dumps(METADATA)
    assert "description_html" not in text  # every description is escaped text
    assert set(METADATA["plugins"]) == {"podarchive"}  # podarchive's own plugin, no other
    assert set(QUERIES) == {
        "search_episodes", "search_notes", "search_transcripts", "search_chapters",
        "most_linked_domains", "episodes_linking_to", "what_changed", "removed_episodes",
        "failing_feeds", "episodes_by_year", "guests", "podroll_graph", "soundbite_links",
    }  # fmt: skip
    assert next(iter(QUERIES)) == "search_episodes"  # listed first


def test_metadata_follows_the_database_name() -> None:
    renamed = metadata_for("podcasts")
    assert set(renamed["databases"]) == {"podcasts"}
    assert renamed["databases"]["podcasts"] == METADATA["databases"]["archive"]


def test_metadata_names_only_tables_and_columns_of_the_schema(tmp_path: Path) -> None:
    db = tmp_path / "archive.db"
    Archive(db).close()
    columns = {
        table: {row[1] for row in sql(db, f"PRAGMA table_info([{table}])")}
        for (table,) in sql(db, "SELECT name FROM sqlite_master WHERE type IN ('table', 'view')")
    }
    for table, meta in METADATA["databases"]["archive"]["tables"].items():
        assert table in columns, table
        named = set(meta.get("columns", {})) | set(meta.get("units", {}))
        named |= {f for f in meta.get("facets", []) if isinstance(f, str)}
        named |= {meta[k] for k in ("label_column", "sort_desc", "fts_pk") if k in meta}
        assert named <= columns[table], (table, named - columns[table])
    # the plugin's configuration names columns of the schema too
    config = METADATA["plugins"]["podarchive"]
    for key in ("durations", "json_columns"):
        for table, names in config[key].items():
            assert set(names) <= columns[table], (key, table)
    for table, order in config["column_order"].items():
        assert set(order["first"]) | set(order["last"]) <= columns[table], table
        assert not set(order["first"]) & set(order["last"]), table
    assert {"feed_id", "episode_id"} == set(config["labels"])
    conn = sqlite3.connect(db)
    try:
        for name, query in QUERIES.items():  # each runs on an empty archive with blank params
            params = dict.fromkeys(re.findall(r":(\w+)", query["sql"]), "")
            assert conn.execute(query["sql"], params).fetchall() == [], name
    finally:
        conn.close()


def test_check_archive_refuses_missing_and_foreign_files(tmp_path: Path) -> None:
    from podarchive.web.serve import NotAnArchive

    with pytest.raises(NotAnArchive, match="no archive at"):
        check_archive(tmp_path / "missing.db")
    (tmp_path / "notes.txt").write_text("not sqlite")
    with pytest.raises(NotAnArchive, match="not a podarchive archive"):
        check_archive(tmp_path / "notes.txt")
    sqlite3.connect(tmp_path / "other.db").execute("CREATE TABLE t (x)").connection.close()
    with pytest.raises(NotAnArchive, match=r"not a podarchive archive \(it has tables: t\); not"):
        check_archive(tmp_path / "other.db")


# tables, search, facets, labels ---------------------------------------------------------


def test_settings_raise_the_facet_time_limit(archive: Path) -> None:
    settings = get(archive, "/-/settings.json").json()
    assert settings["facet_time_limit_ms"] == SETTINGS["facet_time_limit_ms"] == 1000
    assert settings["sql_time_limit_ms"] == 3000


#: The archive's machinery: hidden from the database page (still one click away).
INTERNAL = {
    "feed_redirects", "snapshots", "feed_bodies", "documents", "page_bodies", "hosts",
    "backfill_walks", "backfill_pages", "media_state", "captures", "header_sets",
    "image_state", "push_subscriptions", "podping_cursor", "push_notices",
    "link_domains", "link_domain_feeds",
}  # fmt: skip


def test_tables_have_titles_descriptions_and_hidden_internals(archive: Path) -> None:
    index = get(archive, "/").text
    assert "<h1>podarchive</h1>" in index
    tables = {t["name"]: t for t in get(archive, "/archive.json").json()["tables"]}
    assert {
        "feeds", "episodes", "links", "episode_revisions", "feed_revisions", "fetches",
        "feed_moves", "transcripts", "transcript_revisions", "transcript_segments",
        "chapter_files", "chapter_revisions", "chapters", "tags",
        "media_payloads", "media_fetches", "episode_media", "fixity_events",
        "image_files", "image_fetches",
    } == {name for name, t in tables.items() if not t["hidden"]}  # fmt: skip
    fts = ("episodes_fts", "transcript_segments_fts", "chapters_fts")
    assert {name for name, t in tables.items() if t["hidden"]} == {
        *INTERNAL,
        *(name for name in tables if name.startswith(fts)),
    }
    assert {name for name in tables if name.startswith(fts)} >= set(fts)
    page = get(archive, "/archive/episodes").text
    assert "<h1>Episodes</h1>" in page
    assert "shown escaped" in page  # its description
    assert "<h1>Podcasts</h1>" in get(archive, "/archive/feeds").text
    for table, title in TITLES.items():
        assert f"<h1>{title}</h1>" in get(archive, f"/archive/{table}").text, table


TITLES = {
    "transcripts": "Transcripts",
    "transcript_segments": "Transcript segments",
    "transcript_revisions": "Transcript revisions",
    "chapter_files": "Chapters files",
    "chapters": "Chapters",
    "chapter_revisions": "Chapter revisions",
    "documents": "Raw documents",
    "page_bodies": "Episode page bodies seen",
}


def test_search_episodes(archive: Path) -> None:
    assert [r["title"] for r in rows(archive, "/archive/episodes.json?_search=strides")] == [
        "Strides"
    ]
    # page notes are searched too: the episode page's words, stemmed by porter
    found = rows(archive, "/archive/episodes.json?_search=liskov&_col=title")
    assert [r["title"] for r in found] == ["Tensor subclasses and Liskov substitution principle"]


@settings(max_examples=300, deadline=None)
@given(
    st.text(alphabet=st.sampled_from("\"' ()*:^+-\t\n\x00\u3000aZ9") | st.characters(codec="utf-8"))
)
def test_a_table_search_always_parses(text: str) -> None:
    conn = sqlite3.connect(":memory:")
    try:
        conn.execute("create virtual table t using fts5(title, notes, tokenize='porter')")
        conn.execute("insert into t values ('a tensor', 'its \"notes\"')")
        conn.execute("select * from t where t match ?", (fts_phrases(text),)).fetchall()
    finally:
        conn.close()
    assert fts_phrases('say "hello world" again') == '"say" "hello world" "again"'
    assert fts_phrases('"') == fts_phrases("  ") == '""'


def test_episodes_are_sorted_newest_first(archive: Path) -> None:
    published = [r["published"] for r in rows(archive, "/archive/episodes.json?_col=published")]
    assert len(published) == 9
    assert published == sorted(published, reverse=True)


def test_facets_by_feed_page_status_domain_and_kind(archive: Path) -> None:
    episodes = get(archive, "/archive/episodes.json?_labels=on").json()["facet_results"]
    assert {k: [(r["label"], r["count"]) for r in v["results"]] for k, v in episodes.items()} == {
        "feed_id": [(PODCAST, 9)],
        "page_status": [("ok", 9)],
        "episode_type": [("full", 9)],
        "season": [(1, 9)],
    }
    links = get(archive, "/archive/links.json").json()["facet_results"]
    want = sql(archive, "SELECT domain, count(*) FROM links GROUP BY 1 ORDER BY 2 DESC, 1")
    assert [(r["value"], r["count"]) for r in links["domain"]["results"]] == want
    assert {r["value"] for r in links["source"]["results"]} == {"feed", "page"}
    fetches = get(archive, "/archive/fetches.json").json()["facet_results"]
    kinds = {r["value"]: r["count"] for r in fetches["kind"]["results"]}
    assert kinds == {"feed": 1, "page": 9, "transcript": 4, "chapters": 2}
    assert [r["value"] for r in fetches["status"]["results"]] == [200]
    assert facets(archive, "/archive/transcripts.json") == {
        "status": [("ok", 4)],
        "format": [("srt", 2), ("vtt", 2)],
        "language": [("en", 4)],
        "rel": [("captions", 2)],
    }
    assert facets(archive, "/archive/chapter_files.json") == {
        "status": [("ok", 2)],
        "version": [("1.2.0", 2)],
    }
    assert facets(archive, "/archive/chapters.json") == {"source": [("json", 7)]}
    assert dict(facets(archive, "/archive/documents.json")["kind"]) == {
        "page": 9,
        "transcript": 4,
        "chapters": 2,
    }


def test_foreign_keys_show_titles(archive: Path) -> None:
    titles = dict(sql(archive, "SELECT id, title FROM episodes"))
    links = rows(archive, "/archive/links.json?_labels=on")
    assert links
    for link in links:
        assert link["episode_id"]["label"] == titles[link["episode_id"]["value"]]
    (episode,) = rows(archive, "/archive/episodes.json?_labels=on&title=Strides")
    assert episode["feed_id"]["label"] == PODCAST


def test_units_filter_and_render(archive: Path) -> None:
    data = get(archive, "/archive/episodes.json?enclosure_length__gt=18MB").json()
    big = sql(archive, "SELECT count(*) FROM episodes WHERE enclosure_length > 18000000")[0][0]
    assert 0 < len(data["rows"]) == big < 9
    assert data["units"] == {"enclosure_length": "B"}
    page = get(archive, "/archive/episodes?title=Strides&_wide=1").text  # every column
    assert "19.060705&nbsp;MB" in page


# the canned queries ---------------------------------------------------------------------


def test_search_notes(archive: Path) -> None:
    (hit,) = rows(archive, "/archive/search_notes.json?q=strides")
    assert (hit["podcast"], hit["episode"], hit["published"]) == (
        PODCAST,
        "Strides",
        "2022-05-30T13:00:00Z",
    )
    assert "«strides»" in hit["passage"]
    both = rows(archive, "/archive/search_notes.json?q=dispatcher+sherlock")
    assert [r["episode"] for r in both] == ["Dispatcher questions with Sherlock"]
    # any text is a valid search: punctuation and quotes are matched, not FTS5 syntax
    for q in ("torch.compile", 'say "hi', "xyzzy OR", "(", "tens*", ""):
        assert rows(archive, f"/archive/search_notes.json?q={q}") == [], q


def test_most_linked_domains(archive: Path) -> None:
    got = rows(archive, "/archive/most_linked_domains.json")
    pairs = sql(
        archive,
        "SELECT domain, episode_id, normalized_url FROM links WHERE revision_id IS NULL",
    )
    want: dict[str, tuple[set[Any], set[Any], set[Any]]] = {}
    for domain, episode, url in pairs:
        links, urls, episodes = want.setdefault(domain, (set(), set(), set()))
        links.add((episode, url))
        urls.add(url)
        episodes.add(episode)
    assert {r["domain"]: (r["links"], r["urls"], r["episodes"], r["podcasts"]) for r in got} == {
        d: (len(ls), len(us), len(es), 1) for d, (ls, us, es) in want.items()
    }
    assert got[0]["domain"] == "en.wikipedia.org"
    counts = [(r["links"], r["episodes"]) for r in got]
    assert counts == sorted(counts, reverse=True)


def test_episodes_linking_to_a_domain_or_url(archive: Path) -> None:
    """One row per episode: how many matching URLs, in which notes, the first of them."""

    def episodes(target: str) -> list[tuple[str, str, int]]:
        found = rows(archive, f"/archive/episodes_linking_to.json?target={target}")
        return [(r["episode"], r["sources"], r["links"]) for r in found]

    wikipedia = [
        ("All about NVIDIA GPUs", "feed, page", 1),
        ("Tensor subclasses and Liskov substitution principle", "feed, page", 1),
    ]
    assert episodes("en.wikipedia.org") == wikipedia
    assert episodes("wikipedia.org") == wikipedia  # subdomains count
    assert episodes("WWW.github.com") == [("Strides", "feed, page", 1)]
    (strides,) = rows(
        archive, "/archive/episodes_linking_to.json?target=https://github.com/pytorch/pytorch"
    )
    assert (strides["episode"], strides["sources"]) == ("Strides", "feed, page")
    assert strides["url"] == "https://github.com/pytorch/pytorch/issues/78050"  # the first
    assert strides["text"] == "an RFC about stride-agnostic operator semantics"
    assert episodes("https://en.wikipedia.org/wiki/Liskov") == wikipedia[1:]  # a URL prefix
    assert episodes("ikipedia.org") == []  # a domain, not a substring
    assert episodes("") == []
    # the page links to its episode
    page = get(archive, "/archive/episodes_linking_to?target=github.com").text
    assert (
        f'<td class="col-episode"><a href="/archive/episodes/{strides["episode_id"]}">Strides</a>'
        in page
    )


def test_episodes_by_year(archive: Path) -> None:
    got = rows(archive, "/archive/episodes_by_year.json")
    assert [(r["year"], r["podcast"], r["episodes"]) for r in got] == [
        ("2022", PODCAST, 7),
        ("2021", PODCAST, 2),
    ]
    hours = sql(archive, "SELECT round(sum(duration) / 3600.0, 1) FROM episodes")[0][0]
    assert sum(r["hours"] for r in got) == pytest.approx(hours, abs=0.1)


def test_nothing_changed_removed_or_failing_after_one_clean_run(archive: Path) -> None:
    for name in ("what_changed", "removed_episodes", "failing_feeds"):
        assert rows(archive, f"/archive/{name}.json") == [], name


def test_what_changed(history: Path) -> None:
    got = rows(history, "/archive/what_changed.json")
    by_what = {(r["what"], r["episode"]): r for r in got}
    retitled = by_what[("episode", "Weak refs")]
    assert retitled["podcast"] == PODCAST
    assert "title" in retitled["changed"].split(",")
    assert retitled["previous_title"] == "Weak references"
    stored = sql(
        history, "SELECT seen_until FROM episode_revisions WHERE title = 'Weak references'"
    )
    assert retitled["changed_at"] in {s for (s,) in stored}
    feed = by_what[("podcast", None)]
    assert feed["changed"] == "description"
    assert feed["previous_title"] is None  # the title did not change
    assert [r["changed_at"] for r in got] == sorted((r["changed_at"] for r in got), reverse=True)


def test_removed_episodes(history: Path) -> None:
    got = rows(history, "/archive/removed_episodes.json")
    assert sorted((r["episode"], r["status"]) for r in got) == [
        ("Strides", "removed from the feed"),
        ("Tensor subclasses and Liskov substitution principle", "no longer listed"),
    ]
    assert all(r["since"] and r["podcast"] == PODCAST for r in got)
    # nothing is deleted: the removed episodes are still searchable
    assert [r["title"] for r in rows(history, "/archive/episodes.json?_search=strides")] == [
        "Strides"
    ]


def test_failing_feeds(history: Path) -> None:
    (feed,) = rows(history, "/archive/failing_feeds.json")
    assert (feed["feed"], feed["failures"], feed["last_status"]) == (PODCAST, 1, 404)
    assert feed["last_error"].startswith("HTTP 404")
    last_fetch = sql(history, "SELECT max(started_at) FROM fetches WHERE kind = 'feed'")[0][0]
    assert feed["failing_since"] == last_fetch
    assert feed["last_success_at"] < feed["failing_since"]


def test_episode_pages_show_revisions_and_removal(history: Path) -> None:
    retitled = sql(history, "SELECT id FROM episodes WHERE title = 'Weak refs'")[0][0]
    page = get(history, f"/archive/episodes/{retitled}").text
    assert "<h1>Weak refs</h1>" in page
    assert '<section id="revisions">' in page
    assert "<td>Weak references</td>" in page  # its title then
    assert "Removed from the feed" not in page
    removed = sql(history, "SELECT id FROM episodes WHERE title = 'Strides'")[0][0]
    page = get(history, f"/archive/episodes/{removed}").text
    assert '<p class="archive-notice">Removed from the feed since ' in page
    oldest = "Tensor subclasses and Liskov substitution principle"
    unlisted = sql(history, "SELECT id FROM episodes WHERE title = ?", oldest)[0][0]
    page = get(history, f"/archive/episodes/{unlisted}").text
    assert '<p class="archive-notice">No longer listed by the feed since ' in page


def test_revisions_and_snapshots_tables(history: Path) -> None:
    revisions = rows(history, "/archive/episode_revisions.json?_labels=on")
    assert revisions
    assert {r["episode_id"]["label"] for r in revisions} >= {"Weak refs"}
    until = [r["seen_until"] for r in revisions]
    assert until == sorted(until, reverse=True)
    snapshots = get(history, "/archive/snapshots.json").json()
    assert len(snapshots["rows"]) == 2  # the fixture feed and its edit; the 404 is no feed
    assert snapshots["units"] == {"size": "B"}


# transcripts and chapters ---------------------------------------------------------------

WEAK_REFERENCES_MP3 = (
    "https://dts.podtrac.com/redirect.mp3/chtbl.com/track/G8F1C9/cdn.simplecast.com/audio/"
    "1d1058f2-d6fe-5af5-9e0c-2664015e2c15/episodes/868dda83-c5da-542b-ac52-ffc78bb346f2/audio/"
    "128/default.mp3?aid=rss_feed&feed=OB5FkIl8"
)


def test_search_transcripts(archive: Path) -> None:
    (hit,) = rows(archive, "/archive/search_transcripts.json?q=listening")
    assert (hit["podcast"], hit["episode"], hit["speaker"], hit["language"]) == (
        PODCAST,
        "Weak references",
        "Edward Yang",  # the VTT's voice: the SRT's copy of the passage is not shown
        "en",
    )
    assert hit["passage"] == "That is all for today; thanks for «listening»."
    assert hit["start"] == "1:02:05"  # 01:02:05.900
    assert hit["media_link"] == f"{WEAK_REFERENCES_MP3}#t=3725"
    # every word, stemmed; a passage of both episodes once per episode
    (hit,) = rows(archive, "/archive/search_transcripts.json?q=weakref+alive")
    assert (hit["episode"], hit["start"]) == ("Weak references", "0:00:14")
    hello = rows(archive, "/archive/search_transcripts.json?q=hello")
    assert sorted(r["episode"] for r in hello) == ["Strides", "Weak references"]
    for q in ("torch.compile", 'say "hi', "xyzzy OR", "(", "lis*", ""):
        assert rows(archive, f"/archive/search_transcripts.json?q={q}") == [], q


def test_search_transcripts_times_and_links_match_python(archive: Path) -> None:
    # the SQL's h:mm:ss and media fragment are podarchive.read.transcript_formats' format_timestamp and
    # media_link, for every passage of the archive (a speaker's name is searched too)
    found = rows(archive, "/archive/search_transcripts.json?q=edward+yang")
    stored = {
        segment: (start, enclosure)
        for segment, start, enclosure in sql(
            archive,
            "SELECT s.id, s.start, e.enclosure_url FROM transcript_segments s "
            "JOIN episodes e ON e.id = s.episode_id WHERE s.speaker IS NOT NULL",
        )
    }
    assert len(found) == len(stored) == 9  # the VTTs' passages; the SRTs' are their copies
    for hit in found:
        start, enclosure = stored[hit["segment_id"]]
        assert hit["start"] == format_timestamp(start)
        assert hit["media_link"] == media_link(enclosure, start)


def test_search_chapters(archive: Path) -> None:
    (hit,) = rows(archive, "/archive/search_chapters.json?q=wrap")
    assert (hit["podcast"], hit["episode"], hit["chapter"], hit["source"]) == (
        PODCAST,
        "Weak references",
        "Wrap-up",
        "json",
    )
    assert (hit["start"], hit["url"]) == ("1:02:05", None)
    assert hit["media_link"] == f"{WEAK_REFERENCES_MP3}#t=3725"
    intro = rows(archive, "/archive/search_chapters.json?q=introduction")
    assert sorted((r["episode"], r["start"]) for r in intro) == [
        ("Strides", "0:00:00"),
        ("Weak references", "0:00:00"),
    ]
    for q in ("torch.compile", 'say "hi', "wrap OR", "(", ""):
        assert rows(archive, f"/archive/search_chapters.json?q={q}") == [], q


def test_transcript_and_chapter_tables(archive: Path) -> None:
    metadata = get(archive, "/-/metadata.json").json()["databases"]["archive"]["tables"]
    assert {table: metadata[table]["title"] for table in TITLES} == TITLES
    segments = get(archive, "/archive/transcript_segments.json?_search=weakref&_labels=on")
    found = segments.json()["rows"]
    assert len(found) == 2  # the search box: the VTT's passage and the SRT's
    assert {r["transcript_id"]["label"].rpartition("/")[2] for r in found} == {
        "transcript.vtt",
        "transcript.srt",
    }
    (chapter,) = rows(archive, "/archive/chapters.json?_search=wrap&_labels=on")
    assert chapter["episode_id"]["label"] == "Weak references"
    assert chapter["chapter_file_id"]["label"].endswith("/chapters.json")
    documents = get(archive, "/archive/documents.json?kind=transcript").json()
    assert len(documents["rows"]) == 4
    assert documents["units"] == {"size": "B"}
    page = get(archive, "/archive/documents?kind=transcript").text
    assert "&lt;Binary:&nbsp;" in page  # the compressed body is a download link, not shown
    (body,) = rows(archive, "/archive/page_bodies.json?_labels=on&_size=1")
    assert body["document_id"]["label"].startswith("http://127.0.0.1:")


REVISED = "Revised Radio"
REVISED_FEED = """<?xml version="1.0" encoding="utf-8"?>
<rss version="2.0" xmlns:podcast="https://podcastindex.org/namespace/1.0"
  xmlns:psc="http://podlove.org/simple-chapters">
<channel><title>Revised Radio</title><link>http://127.0.0.1/</link><description>x</description>
<item><guid>rr-1</guid><title>Hypercomplex numbers</title>
<pubDate>Mon, 30 May 2022 13:00:00 +0000</pubDate>
<enclosure url="https://cdn.example.com/rr/ep1.mp3#t=5,10" type="audio/mpeg" length="1000"/>
<podcast:transcript url="BASE/rr/ep1.json" type="application/json" language="de"/>
<podcast:transcript url="BASE/rr/ep1.txt" type="text/plain" language="de"/>
<podcast:chapters url="BASE/rr/chapters.json" type="application/json+chapters"/>
<psc:chapters version="1.2"><psc:chapter start="00:00:00" title="Intro"/>
<psc:chapter start="01:02:05.900" title="PSC_TITLE"/></psc:chapters>
</item></channel></rss>"""
REVISED_MP3 = "https://cdn.example.com/rr/ep1.mp3"  # the feed's fragment (#t=5,10) is replaced


def _revised_files(passage: str, chapter: str) -> dict[str, str]:
    transcript = {
        "version": "1.0.0",
        "segments": [
            {"speaker": "Ada", "startTime": 0.5, "endTime": 4, "body": "Welcome to Revised Radio."},
            {"speaker": "Bob", "startTime": 3725.9, "endTime": 3731, "body": passage},
        ],
    }
    chapters = {
        "version": "1.2.0",
        "chapters": [
            {"startTime": 0, "title": "Intro"},
            {"startTime": 3725.9, "title": chapter, "url": "https://example.com/numbers"},
        ],
    }
    return {"/rr/ep1.json": json.dumps(transcript), "/rr/chapters.json": json.dumps(chapters)}


UNTIMED = "Sedenions lose even division.\n\nThat is a story for another day.\n"


@pytest.fixture(scope="module")
def revised(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A transcript, a chapters file and the item's Podlove chapters, each changed once."""
    db = tmp_path_factory.mktemp("revised") / "archive.db"
    with LoopbackSite() as site:
        feed = REVISED_FEED.replace("BASE", site.url(""))
        for version, (psc, passage, chapter) in enumerate(
            (
                ("Rotations in space", "Quaternions rotate things in 3D.", "Rotations"),
                ("Beyond quaternions", "Octonions are not even associative.", "Octonions"),
            )
        ):
            if version:
                time.sleep(1.1)  # timestamps have whole seconds: the change is seen later
            site.serve("/rr/feed.xml", feed.replace("PSC_TITLE", psc))
            for path, body in _revised_files(passage, chapter).items():
                site.serve(path, body, content_type="application/json")
            site.serve("/rr/ep1.txt", UNTIMED, content_type="text/plain; charset=utf-8")
            run(db, site.url("/rr/feed.xml"), pages=False, name=REVISED, recheck=True)
    return db


def test_searches_show_only_the_current_version(revised: Path) -> None:
    assert sql(revised, "SELECT count(*) FROM transcript_revisions") == [(1,)]
    assert sql(revised, "SELECT format, count(*) FROM chapter_revisions GROUP BY 1") == [
        ("json", 1),
        ("psc", 1),
    ]
    # the earlier passage is kept, and still in the full-text index, but not searched
    assert sql(
        revised,
        "SELECT s.revision_id IS NOT NULL, s.text FROM transcript_segments_fts f "
        "JOIN transcript_segments s ON s.id = f.rowid WHERE f.transcript_segments_fts MATCH ?",
        "rotate",
    ) == [(1, "Quaternions rotate things in 3D.")]
    assert rows(revised, "/archive/search_transcripts.json?q=rotate") == []
    (hit,) = rows(revised, "/archive/search_transcripts.json?q=octonions")
    assert (hit["podcast"], hit["episode"], hit["speaker"], hit["language"]) == (
        REVISED,
        "Hypercomplex numbers",
        "Bob",
        "de",
    )
    assert (hit["start"], hit["media_link"]) == ("1:02:05", f"{REVISED_MP3}#t=3725")
    assert hit["passage"] == "«Octonions» are not even associative."
    # chapters: of the file (json) and of the feed (psc); the earlier ones are not searched
    assert rows(revised, "/archive/search_chapters.json?q=rotations") == []
    found = rows(revised, "/archive/search_chapters.json?q=octonions")
    assert [(r["chapter"], r["source"], r["start"], r["url"], r["media_link"]) for r in found] == [
        ("Octonions", "json", "1:02:05", "https://example.com/numbers", f"{REVISED_MP3}#t=3725")
    ]
    (psc,) = rows(revised, "/archive/search_chapters.json?q=beyond")
    assert (psc["chapter"], psc["source"], psc["url"]) == ("Beyond quaternions", "psc", None)
    # the same chapter in the file and in the feed is shown once (the file's)
    (intro,) = rows(revised, "/archive/search_chapters.json?q=intro")
    assert (intro["source"], intro["start"], intro["media_link"]) == (
        "json",
        "0:00:00",
        f"{REVISED_MP3}#t=0",
    )
    # a transcript without times: no start, and the media as the feed gives it
    (untimed,) = rows(revised, "/archive/search_transcripts.json?q=sedenions")
    assert (untimed["passage"], untimed["start"], untimed["speaker"]) == (
        "«Sedenions» lose even division.",
        None,
        None,
    )
    assert untimed["media_link"] == f"{REVISED_MP3}#t=5,10"
    revisions = rows(revised, "/archive/chapter_revisions.json?_labels=on")
    assert {r["episode_id"]["label"] for r in revisions} == {"Hypercomplex numbers"}


# Podcasting 2.0 tags (#13) ----------------------------------------------------------------

NAMESPACE = Path(__file__).parent / "fixtures" / "namespace"
ENGINES, COMPILERS = "Analytical Engines", "Compiler Hour"
SHOWS = {"analytical-engines.xml": ENGINES, "compiler-hour.xml": COMPILERS}
BOTH = f"{ENGINES} · {COMPILERS}"


@pytest.fixture(scope="module")
def namespace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two hand-written shows (fixtures/namespace) archived by one run: guests on both, a
    podroll each (one naming the other by podcast:guid and an unknown feed, the other naming
    the first by feed URL), soundbites, an alternate enclosure, value, location, live items."""
    db = tmp_path_factory.mktemp("namespace") / "archive.db"
    with LoopbackSite() as site:
        feeds = []
        for name, title in SHOWS.items():
            body = (NAMESPACE / name).read_text("utf-8").replace("BASE", site.url(""))
            site.serve(f"/namespace/{name}", body)
            feeds.append(FeedSchedule(url=site.url(f"/namespace/{name}"), name=title, pages=False))
        with Archive(db) as archive:
            report = update_feeds(archive, feeds, settings=RUN_SETTINGS)
    assert [f.error for f in report.feeds] == [None, None]
    assert sql(db, "SELECT count(*) FROM episodes") == [(4,)]
    return db


def _ids(db: Path, table: str, column: str) -> dict[str, int]:
    return {key: id_ for id_, key in sql(db, f"SELECT id, {column} FROM {table}")}


def test_tag_tables_and_views_have_titles(namespace: Path) -> None:
    listing = get(namespace, "/archive.json").json()
    assert {v["name"] for v in listing["views"]} == set(TAG_TITLES) - {"tags"}
    metadata = get(namespace, "/-/metadata.json").json()["databases"]["archive"]["tables"]
    assert {name: metadata[name]["title"] for name in TAG_TITLES} == TAG_TITLES
    assert "<h1>Extension tags</h1>" in get(namespace, "/archive/tags").text
    for view, title in TAG_TITLES.items():
        if view != "tags":  # Datasette marks views as such
            page = get(namespace, f"/archive/{view}").text
            assert f"<h1>{title} (view)</h1>" in page, view
            assert "A view over the current rows of tags" in page, view  # the description
    # the soundbites view is not hidden by a query of its name: its query is soundbite_links
    assert "soundbites" not in QUERIES
    assert get(namespace, "/archive/soundbites.json").json()["columns"][:3] == [
        "id",
        "feed_id",
        "episode_id",
    ]


TAG_TITLES = {
    "tags": "Extension tags",
    "persons": "People",
    "soundbites": "Soundbites",
    "alternate_enclosures": "Alternate enclosures",
    "alternate_enclosure_sources": "Alternate enclosure sources",
    "value_recipients": "Value recipients",
    "remote_items": "Remote items",
    "podroll": "Podrolls",
    "live_items": "Live items",
    "locations": "Locations",
}


def test_tags_table_facets_and_labels(namespace: Path) -> None:
    found = facets(namespace, "/archive/tags.json")
    assert set(found) == {"ns", "name"}
    assert dict(found["ns"]) == {
        "podcast": 31,
        "": 6,  # the RSS title, guid and enclosure inside both podcast:liveItem
        "https://example.com/ns/loom": 1,  # a namespace nobody labelled: its URI
    }
    assert dict(found["name"])["person"] == 9
    # a nested element's parent is labelled with the parent's name
    sources = rows(namespace, "/archive/tags.json?name=source&_labels=on")
    assert [(r["parent_id"]["label"], r["episode_id"]["label"]) for r in sources] == [
        ("alternateEnclosure", "The first program"),
    ] * 2
    (pattern,) = rows(namespace, "/archive/tags.json?name=pattern&_labels=on")
    assert (pattern["feed_id"]["label"], pattern["episode_id"], pattern["text"]) == (
        ENGINES,
        None,
        "Jacquard",
    )
    assert json.loads(pattern["attributes"]) == {"cards": "24"}


def test_persons_view(namespace: Path) -> None:
    episodes = {v: k for k, v in _ids(namespace, "episodes", "title").items()}
    feeds = {v: k for k, v in _ids(namespace, "feeds", "title").items()}
    got = rows(namespace, "/archive/persons.json")
    assert [r["name"] for r in got] == sorted(r["name"] for r in got)  # sorted by name
    assert {
        (r["name"], r["role"], r["group"], feeds[r["feed_id"]], episodes.get(r["episode_id"]))
        for r in got
    } == {
        ("Ada Lovelace", "guest", "cast", COMPILERS, "Teaching machines English"),
        ("Ada Lovelace", "guest", "cast", ENGINES, "The first program"),
        ("Charles Babbage", "host", "cast", ENGINES, None),  # no role: the spec's host
        ("Charles Babbage", "host", "cast", ENGINES, "The first program"),
        ("Grace Hopper", "guest", "cast", ENGINES, "The difference engine"),
        ("Grace Hopper", "guest", "cast", COMPILERS, None),  # inside the live item
        ("Grace Hopper", "guest", "cast", COMPILERS, "Nanoseconds"),
        ("Grace Hopper", "guest", "cast", COMPILERS, "Teaching machines English"),
        ("Jean Sammet", "host", "cast", COMPILERS, "Teaching machines English"),
    }
    assert len(got) == 9
    ada = next(r for r in got if feeds[r["feed_id"]] == ENGINES and r["name"] == "Ada Lovelace")
    assert (ada["img"], ada["href"]) == ("https://example.com/ada.jpg", None)
    assert facets(namespace, "/archive/persons.json") == {
        "role": [("guest", 6), ("host", 3)],  # the spec's roles are case-insensitive
        "group": [("cast", 9)],
    }


def test_soundbites_alternate_enclosures_and_live_items(namespace: Path) -> None:
    episodes = _ids(namespace, "episodes", "title")
    soundbites = rows(namespace, "/archive/soundbites.json?_sort=start")
    assert [(r["title"], r["start"], r["duration"], r["episode_id"]) for r in soundbites] == [
        (None, 12.0, 8.25, episodes["The first program"]),
        ("Tables by machine", 73.0, 20.0, episodes["The difference engine"]),
        ("A nanosecond of wire", 600.0, 45.0, episodes["Nanoseconds"]),
        ("Note G, the first program", 3725.9, 30.5, episodes["The first program"]),
    ]
    (alternate,) = rows(namespace, "/archive/alternate_enclosures.json")
    assert {k: alternate[k] for k in ("type", "length", "bitrate", "lang", "title", "default")} == {
        "type": "audio/opus",
        "length": 900000,
        "bitrate": 96000.0,
        "lang": "en",
        "title": "Opus",
        "default": "false",
    }
    assert alternate["episode_id"] == episodes["The first program"]
    opus, ipfs = (
        "https://cdn.example.com/ae/ep1.opus",
        "ipfs://QmdwGqd3d2gFPGeJNLLCshdiPert45fMu84552Y4XHTy4y",
    )
    assert json.loads(alternate["sources"]) == [opus, ipfs]  # not the integrity child
    sources = rows(namespace, "/archive/alternate_enclosure_sources.json")
    assert [(r["alternate_enclosure_id"], r["uri"], r["content_type"]) for r in sources] == [
        (alternate["id"], opus, None),
        (alternate["id"], ipfs, "audio/ogg"),
    ]
    live = rows(namespace, "/archive/live_items.json")  # latest start first
    assert [
        (r["status"], r["start"], r["guid"], r["title"], r["enclosure_url"], r["became_episode_id"])
        for r in live
    ] == [
        ("live", "2026-12-01T18:00:00Z", "ae-live-1", "Live from the workshop",
         "https://stream.example.com/ae-live.mp3", None),
        ("ended", "2022-06-14T17:00:00Z", "ch-2", "Nanoseconds, live",
         "https://stream.example.com/ch-live.mp3", episodes["Nanoseconds"]),
    ]  # fmt: skip
    assert facets(namespace, "/archive/live_items.json") == {"status": [("ended", 1), ("live", 1)]}


def test_podroll_value_and_location_views(namespace: Path) -> None:
    feeds = _ids(namespace, "feeds", "title")
    engines_url = sql(namespace, "SELECT url FROM feeds WHERE title = ?", ENGINES)[0][0]
    podroll = rows(namespace, "/archive/podroll.json")
    assert sorted((r["feed_id"], r["feed_guid"], r["feed_url"], r["title"]) for r in podroll) == [
        (feeds[ENGINES], "00000000-dead-5eef-8000-000000000000",
         "https://unknown.example.com/feed.xml", "Nobody Archived This"),
        (feeds[ENGINES], "9c6d3a1e-7f2b-5d4c-8e0a-2b3c4d5e6f70", None, None),
        (feeds[COMPILERS], None, engines_url, None),
    ]  # fmt: skip
    remote = facets(namespace, "/archive/remote_items.json")
    assert remote == {"medium": [], "inside": [("podroll", 3)]}
    recipients = rows(namespace, "/archive/value_recipients.json")
    assert [
        (r["name"], r["split"], r["fee"], r["value_type"], r["method"]) for r in recipients
    ] == [
        ("Charles Babbage", 90.0, None, "lightning", "keysend"),
        ("Hosting", 10.0, "true", "lightning", "keysend"),
    ]
    (london,) = rows(namespace, "/archive/locations.json")
    assert (london["name"], london["geo"], london["rel"], london["country"]) == (
        "London",
        "geo:51.5074,-0.1278",
        "creator",
        "GB",
    )


def test_guests_across_podcasts(namespace: Path) -> None:
    everyone = [
        {"person": "Grace Hopper", "podcasts": 2, "episodes": 3, "podcast_titles": BOTH},
        {"person": "Ada Lovelace", "podcasts": 2, "episodes": 2, "podcast_titles": BOTH},
    ]  # the hosts (Charles Babbage, without a role; Jean Sammet) are not guests
    assert rows(namespace, "/archive/guests.json") == everyone
    assert rows(namespace, "/archive/guests.json?q=") == everyone  # an empty form: everyone
    assert rows(namespace, "/archive/guests.json?q=+") == everyone
    assert rows(namespace, "/archive/guests.json?q=ada") == everyone[1:]  # any part, any case
    assert rows(namespace, "/archive/guests.json?q=+HOPPER+") == everyone[:1]
    for q in ("babbage", "sammet", "%", "_", "zz"):
        assert rows(namespace, f"/archive/guests.json?q={q}") == [], q


def test_guests_of_one_podcast(archive: Path) -> None:
    got = rows(archive, "/archive/guests.json")
    assert sorted(r["person"] for r in got) == [
        "Eli Uriegas", "Horace He", "Natalia Gimelshein", "Sherlock Huang",
    ]  # fmt: skip
    assert {(r["podcasts"], r["episodes"], r["podcast_titles"]) for r in got} == {(1, 1, PODCAST)}
    for name in ("podroll_graph", "soundbite_links"):
        assert rows(archive, f"/archive/{name}.json") == [], name


def test_podroll_graph(namespace: Path) -> None:
    feeds = _ids(namespace, "feeds", "title")
    engines_url = sql(namespace, "SELECT url FROM feeds WHERE title = ?", ENGINES)[0][0]
    got = rows(namespace, "/archive/podroll_graph.json")
    assert [
        (r["podcast"], r["feed_guid"], r["feed_url"], r["archived_podcast"], r["archived_feed_id"])
        for r in got
    ] == [
        # by podcast:guid
        (ENGINES, "9c6d3a1e-7f2b-5d4c-8e0a-2b3c4d5e6f70", None, COMPILERS, feeds[COMPILERS]),
        # a podcast the archive does not have
        (ENGINES, "00000000-dead-5eef-8000-000000000000", "https://unknown.example.com/feed.xml",
         None, None),
        # by feed URL
        (COMPILERS, None, engines_url, ENGINES, feeds[ENGINES]),
    ]  # fmt: skip
    assert [r["title"] for r in got] == [None, "Nobody Archived This", None]
    assert {r["podcast"]: r["feed_id"] for r in got} == feeds


def test_soundbite_links(namespace: Path) -> None:
    got = rows(namespace, "/archive/soundbite_links.json")
    assert [(r["podcast"], r["episode"], r["title"], r["start"], r["duration"]) for r in got] == [
        (COMPILERS, "Nanoseconds", "A nanosecond of wire", "0:10:00", 45.0),
        (ENGINES, "The difference engine", "Tables by machine", "0:01:13", 20.0),
        (ENGINES, "The first program", None, "0:00:12", 8.25),
        (ENGINES, "The first program", "Note G, the first program", "1:02:05", 30.5),
    ]  # newest episodes first, then by start
    assert [r["media_link"] for r in got] == [
        "https://cdn.example.com/ch/ep2.mp3?source=feed#t=600",  # the feed's #t=2 is replaced
        "https://cdn.example.com/ae/ep2.mp3#t=73",
        "https://cdn.example.com/ae/ep1.mp3#t=12",
        "https://cdn.example.com/ae/ep1.mp3#t=3725",
    ]
    # the SQL's h:mm:ss and media fragment are podarchive.read.transcript_formats' functions
    stored = {
        tag: (start, enclosure)
        for tag, start, enclosure in sql(
            namespace,
            "SELECT s.id, s.start, e.enclosure_url FROM soundbites s "
            "JOIN episodes e ON e.id = s.episode_id",
        )
    }
    assert len(stored) == len(got)
    for hit in got:
        start, enclosure = stored[hit["tag_id"]]
        assert hit["start"] == format_timestamp(start)
        assert hit["media_link"] == media_link(enclosure, start)


# show notes are text: HTML never runs ---------------------------------------------------

EVIL = "<p>Hi <script>alert(1)</script><img src=x onerror=alert(2)> there</p>"
EVIL_FEED = f"""<?xml version="1.0" encoding="utf-8"?>
<rss version="2.0" xmlns:content="http://purl.org/rss/1.0/modules/content/">
<channel><title>Evil &lt;b&gt;podcast&lt;/b&gt;</title><link>http://127.0.0.1/</link>
<description>x</description>
<item><guid>evil-1</guid><title>Evil episode</title>
<pubDate>Mon, 30 May 2022 13:00:00 +0000</pubDate>
<content:encoded><![CDATA[{EVIL}]]></content:encoded></item>
</channel></rss>"""


@pytest.fixture(scope="module")
def evil(tmp_path_factory: pytest.TempPathFactory) -> Path:
    db = tmp_path_factory.mktemp("evil") / "archive.db"
    with LoopbackSite() as site:
        site.serve("/evil.xml", EVIL_FEED)
        run(db, site.url("/evil.xml"), pages=False)
    assert sql(db, "SELECT notes_html FROM episodes") == [(EVIL,)]  # kept as published
    return db


def _assert_escaped(html: str) -> None:
    assert "<script>alert(1)</script>" not in html
    assert "<img src=x onerror" not in html.lower()
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html


@pytest.mark.parametrize(
    "path",
    [
        "/archive/episodes?_wide=1",
        "/archive/episodes?_search=there&_wide=1",
        "/archive?sql=select+notes_html+from+episodes",
    ],
)
def test_show_notes_html_is_shown_escaped(evil: Path, path: str) -> None:
    html = get(evil, path).text
    _assert_escaped(html)
    if path == "/archive/episodes":  # the feed's label, from its title, is escaped too
        assert "Evil &lt;b&gt;podcast&lt;/b&gt;" in html


def test_episode_page_shows_show_notes_sanitised(evil: Path) -> None:
    """The one place notes are HTML: sanitised by nh3 (tests/test_archive_face.py has more)."""
    html = get(evil, "/archive/episodes/1").text
    assert '<div class="notes"><p>Hi  there</p></div>' in html
    assert "alert(" not in html
    assert "onerror" not in html
    assert "&lt;script&gt;" not in html  # neither run nor shown as source
    assert "Evil &lt;b&gt;podcast&lt;/b&gt;</a>" in html


def test_search_passages_are_text(evil: Path) -> None:
    (hit,) = rows(evil, "/archive/search_notes.json?q=there")
    assert "<" not in hit["passage"]
    assert "«there»" in hit["passage"]
    page = get(evil, "/archive/search_notes?q=there").text
    assert "<script>alert" not in page


# the command ----------------------------------------------------------------------------


def test_serve_refuses_a_missing_archive(tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["serve", "--db", str(tmp_path / "none.db")])
    assert result.exit_code == 1
    assert result.stderr.count("\n") == 1
    assert result.stderr.startswith("podarchive: no archive at ")


def test_serve_without_datasette_says_how_to_install_it(
    archive: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "datasette.app", None)  # import fails
    result = CliRunner().invoke(cli, ["serve", "--db", str(archive)])
    assert result.exit_code == 1
    assert result.stderr == (
        "podarchive: datasette is not installed: install the datasette extra: "
        "pip install -e '.[datasette]'\n"
    )


def test_serve_without_nh3_says_how_to_install_it(
    archive: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "nh3", None)  # import fails
    result = CliRunner().invoke(cli, ["serve", "--db", str(archive)])
    assert result.exit_code == 1
    assert result.stderr == (
        "podarchive: nh3 is not installed: install the datasette extra: "
        "pip install -e '.[datasette]'\n"
    )


def test_serve_on_a_port_in_use_is_one_line_and_exit_1(archive: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "podarchive",
                "serve",
                "--db",
                str(archive),
                "--port",
                str(port),
            ],
            capture_output=True,
            text=True,
            timeout=60,
        )
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr == (
        f"podarchive: cannot serve on 127.0.0.1:{port}: address already in use "
        "(another server has it: give --port)\n"
    )  # and never "serving … at URL" first


def test_a_lone_quote_in_a_search_box_is_quiet_and_answers(archive: Path) -> None:
    proc = subprocess.Popen(
        [sys.executable, "-m", "podarchive", "serve", "--db", str(archive), "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stderr is not None
        announced = proc.stderr.readline()  # written once the port is bound
        base = re.fullmatch(
            r"serving .* at (http://127\.0\.0\.1:\d+)/archive \(Ctrl-C stops\)\n", announced
        )
        assert base, announced
        with httpx.Client(base_url=base.group(1), timeout=30) as client:
            page = client.get("/archive/episodes", params={"_search": '"'})
            assert page.status_code == 200
            assert "0 rows where search matches" in page.text  # the table, no error
            for path, params in [
                ("/archive/search_episodes", {"q": '"'}),
                ("/archive/search_notes", {"q": '"'}),
                ("/archive/transcript_segments", {"_search": '"'}),
                ("/archive/episodes.json", {"_search": ' "" '}),
            ]:
                assert client.get(path, params=params).status_code == 200, path
            raw = client.get("/archive/episodes", params={"_search": "AND", "_searchmode": "raw"})
            assert raw.status_code == 400
            assert "Invalid search" in raw.text
            assert client.get("/archive/episodes/123456789").status_code == 404
    finally:
        proc.terminate()
        out, err = proc.communicate(timeout=30)
    assert out == ""
    assert "Traceback" not in err
    # only the raw search that FTS5 could not parse left a line: Datasette's one ERROR line
    (line,) = err.splitlines()
    assert line.startswith("ERROR: ")
    assert "fts5: syntax error" in line


# a real server and a real browser -------------------------------------------------------

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def server(archive: Path) -> Iterator[str]:
    """``podarchive serve`` as a subprocess on 127.0.0.1; its base URL."""
    with _serving(archive) as base:
        yield base


@pytest.fixture
def namespace_server(namespace: Path) -> Iterator[str]:
    with _serving(namespace) as base:
        yield base


@contextmanager
def _serving(archive: Path) -> Iterator[str]:
    port = _free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "podarchive", "serve", "--db", str(archive), "--port", str(port)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 20
        while True:
            assert proc.poll() is None, proc.communicate()[1].decode()
            try:
                if httpx.get(f"{base}/-/versions.json", timeout=1).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            assert time.monotonic() < deadline, "podarchive serve did not start in 20 s"
            time.sleep(0.1)
        yield base
    finally:
        proc.terminate()
        try:
            proc.communicate(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.communicate()


def _chromium(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[bytes]:
    assert CHROMIUM
    return subprocess.run(
        [
            CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu",
            "--disable-background-networking", "--disable-component-update", "--disable-sync",
            "--no-first-run", f"--user-data-dir={tmp_path / 'profile'}", *args,
        ],
        capture_output=True,
        timeout=60,
        check=False,
    )  # fmt: skip


@pytest.mark.slow
@pytest.mark.skipif(CHROMIUM is None, reason="no chromium installed (.ci/run installs it)")
def test_headless_chromium_finds_an_episode(archive: Path, server: str, tmp_path: Path) -> None:
    url = f"{server}/archive/episodes?_search=strides"
    dom = _chromium(tmp_path, "--dump-dom", url)
    assert dom.returncode == 0, dom.stderr.decode()[-2000:]
    html = dom.stdout.decode()
    strides = sql(archive, "SELECT id FROM episodes WHERE title = 'Strides'")[0][0]
    link = f'<a href="/archive/episodes/{strides}">Strides</a>'
    assert f'<td class="col-title type-str">{link}</td>' in html
    assert "1 row where search matches" in html
    shot = tmp_path / "s.png"
    result = _chromium(tmp_path, f"--screenshot={shot}", "--window-size=1280,900", url)
    assert result.returncode == 0, result.stderr.decode()[-2000:]
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert shot.stat().st_size > 10_000  # a rendered page, not a blank one


@pytest.mark.slow
@pytest.mark.skipif(CHROMIUM is None, reason="no chromium installed (.ci/run installs it)")
def test_headless_chromium_searches_transcripts(server: str, tmp_path: Path) -> None:
    dom = _chromium(tmp_path, "--dump-dom", f"{server}/archive/search_transcripts?q=listening")
    assert dom.returncode == 0, dom.stderr.decode()[-2000:]
    html = dom.stdout.decode()
    assert re.search(r"<h1[^>]*>Search transcripts</h1>", html)
    assert '<td class="col-passage">That is all for today; thanks for «listening».</td>' in html
    # the start is a link to the media at the passage's second (#28: media_link in the JSON)
    link = WEAK_REFERENCES_MP3.replace("&", "&amp;") + "#t=3725"
    assert f'<td class="col-start"><a href="{link}">1:02:05</a></td>' in html


@pytest.mark.slow
@pytest.mark.skipif(CHROMIUM is None, reason="no chromium installed (.ci/run installs it)")
def test_headless_chromium_shows_guests_podrolls_and_soundbites(
    namespace_server: str, tmp_path: Path
) -> None:
    def dom(path: str) -> str:
        result = _chromium(tmp_path, "--dump-dom", f"{namespace_server}/archive/{path}")
        assert result.returncode == 0, result.stderr.decode()[-2000:]
        return result.stdout.decode()

    guests = dom("guests")
    assert re.search(r"<h1[^>]*>Guests across podcasts</h1>", guests)
    for person in ("Grace Hopper", "Ada Lovelace"):
        assert f'<td class="col-person">{person}</td>' in guests
    assert f'<td class="col-podcast_titles">{BOTH}</td>' in guests
    assert "Babbage" not in guests  # a host
    one = dom("guests?q=lovelace")
    assert '<td class="col-person">Ada Lovelace</td>' in one
    assert "Grace Hopper" not in one
    podrolls = dom("podroll_graph")
    assert re.search(r"<h1[^>]*>Podroll graph</h1>", podrolls)
    assert f'<td class="col-archived_podcast">{COMPILERS}</td>' in podrolls
    assert f'<td class="col-archived_podcast">{ENGINES}</td>' in podrolls
    assert "https://unknown.example.com/feed.xml" in podrolls
    soundbites = dom("soundbite_links")
    assert re.search(r"<h1[^>]*>Soundbites to play</h1>", soundbites)
    assert '<td class="col-title">Note G, the first program</td>' in soundbites
    link = "https://cdn.example.com/ae/ep1.mp3#t=3725"
    assert f'<td class="col-start"><a href="{link}">1:02:05</a></td>' in soundbites
    enclosures = dom("alternate_enclosures")
    assert "audio/opus" in enclosures
    assert "https://cdn.example.com/ae/ep1.opus" in enclosures  # its sources, in order
    assert "ipfs://QmdwGqd3d2gFPGeJNLLCshdiPert45fMu84552Y4XHTy4y" in enclosures
