"""The archive opens in a bare ``datasette archive.db``: tables, foreign keys, search."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from loopback import LoopbackSite

from podarchive.core.settings import Settings
from podarchive.read.schedule_files import FeedSchedule
from podarchive.store import Archive
from podarchive.update.run import update_feeds

datasette_app = pytest.importorskip("datasette.app", reason="datasette is not installed")


def get_json(db: Path, path: str) -> Any:
    async def fetch() -> Any:
        ds = datasette_app.Datasette([str(db)])
        response = await ds.client.get(path)
        assert response.status_code == 200, response.text
        return response.json()

    return asyncio.run(fetch())


@pytest.fixture
def archive_db(tmp_path: Path, pytorch_feed: str) -> Path:
    db = tmp_path / "archive.db"
    with Archive(db) as archive:
        update_feeds(
            archive,
            [FeedSchedule(url=pytorch_feed, name="PyTorch Developer Podcast")],
            settings=Settings(allow_private_hosts=True, host_gap=0),
        )
    return db


def test_datasette_lists_the_archive_tables(archive_db: Path) -> None:
    tables = {t["name"]: t for t in get_json(archive_db, "/archive.json")["tables"]}
    assert {"feeds", "episodes", "links", "fetches"} <= set(tables)
    assert tables["episodes"]["count"] == 9
    assert tables["episodes"]["fts_table"] == "episodes_fts"


def test_datasette_searches_episodes(archive_db: Path) -> None:
    rows = get_json(archive_db, "/archive/episodes.json?_search=strides&_shape=array")
    assert [r["title"] for r in rows] == ["Strides"]


def test_datasette_searches_transcripts_and_chapters(archive_db: Path) -> None:
    tables = {t["name"]: t for t in get_json(archive_db, "/archive.json")["tables"]}
    assert tables["transcript_segments"]["fts_table"] == "transcript_segments_fts"
    assert tables["chapters"]["fts_table"] == "chapters_fts"
    segments = get_json(
        archive_db, "/archive/transcript_segments.json?_search=listening&_shape=array"
    )
    assert {(r["start"], r["text"]) for r in segments} == {
        (3725.9, "That is all for today; thanks for listening.")
    }
    assert len(segments) == 2  # the episode's VTT and SRT
    chapters = get_json(archive_db, "/archive/chapters.json?_search=wrap&_shape=array&_labels=on")
    assert [(c["title"], c["episode_id"]["label"]) for c in chapters] == [
        ("Wrap-up", "Weak references")
    ]


def test_datasette_follows_foreign_keys(archive_db: Path) -> None:
    rows = get_json(archive_db, "/archive/links.json?_shape=array&_labels=on&domain=github.com")
    titles = {
        e["id"]: e["title"] for e in get_json(archive_db, "/archive/episodes.json?_shape=array")
    }
    assert rows
    for row in rows:
        assert row["episode_id"]["label"] == titles[row["episode_id"]["value"]]


#: Derived tables (#28): the per-domain link summary that triggers keep, keyed by what it counts.
DERIVED = {"link_domains", "link_domain_feeds"}


def test_datasette_sees_every_foreign_key(archive_db: Path) -> None:
    tables = {t["name"]: t for t in get_json(archive_db, "/archive.json")["tables"]}
    outgoing = {
        (name, fk["column"]): fk["other_table"]
        for name, table in tables.items()
        for fk in table["foreign_keys"]["outgoing"]
    }
    assert {
        ("episodes", "feed_id"): "feeds",
        ("links", "episode_id"): "episodes",
        ("links", "revision_id"): "episode_revisions",
        ("fetches", "feed_id"): "feeds",
        ("fetches", "episode_id"): "episodes",
        ("episode_revisions", "episode_id"): "episodes",
        ("feed_revisions", "feed_id"): "feeds",
        ("snapshots", "feed_id"): "feeds",
        ("feed_bodies", "feed_id"): "feeds",
        ("feed_bodies", "snapshot_id"): "snapshots",
        ("feed_moves", "feed_id"): "feeds",
        ("feed_redirects", "feed_id"): "feeds",
        ("episodes", "page_document_id"): "documents",
        ("page_bodies", "episode_id"): "episodes",
        ("page_bodies", "document_id"): "documents",
        ("transcripts", "episode_id"): "episodes",
        ("transcripts", "document_id"): "documents",
        ("transcript_revisions", "transcript_id"): "transcripts",
        ("transcript_revisions", "document_id"): "documents",
        ("transcript_segments", "transcript_id"): "transcripts",
        ("transcript_segments", "episode_id"): "episodes",
        ("transcript_segments", "revision_id"): "transcript_revisions",
        ("chapter_files", "episode_id"): "episodes",
        ("chapter_files", "document_id"): "documents",
        ("chapter_revisions", "chapter_file_id"): "chapter_files",
        ("chapter_revisions", "document_id"): "documents",
        ("chapters", "episode_id"): "episodes",
        ("chapters", "chapter_file_id"): "chapter_files",
        ("chapters", "revision_id"): "chapter_revisions",
        ("tags", "feed_id"): "feeds",
        ("tags", "episode_id"): "episodes",
        ("tags", "parent_id"): "tags",
    }.items() <= outgoing.items()
    # every *_id column of every table is a declared foreign key, so Datasette links it (but
    # the link summary's, #28: a derived count kept by triggers, keyed by what it counts)
    for name, table in tables.items():
        for column in table["columns"]:
            if column.endswith("_id") and not table["hidden"] and name not in DERIVED:
                assert (name, column) in outgoing, (name, column)
    # the FTS indexes and their shadow tables are hidden; the archive's own tables are not
    fts = ("episodes_fts", "transcript_segments_fts", "chapters_fts")
    hidden = {name for name, table in tables.items() if table["hidden"]}
    assert hidden == {name for name in tables if name.startswith(fts)}
    assert hidden >= {f"{index}{shadow}" for index in fts for shadow in ("", "_data", "_idx")}


def test_datasette_shows_identity_and_title_first(archive_db: Path) -> None:
    tables = {t["name"]: t for t in get_json(archive_db, "/archive.json")["tables"]}
    for name, table in tables.items():
        if not table["hidden"] and name not in DERIVED:
            natural = {
                "hosts": "host",
                "media_payloads": "sha256",
                "push_subscriptions": "feed_url",
            }
            assert table["primary_keys"] == [natural.get(name, "id")], name
            assert table["columns"][0] == natural.get(name, "id"), name
    episodes = tables["episodes"]["columns"]
    assert episodes[:2] == ["id", "feed_id"]
    assert episodes.index("title") < 5 < episodes.index("notes_html")
    assert tables["feeds"]["columns"][:4] == ["id", "url", "name", "title"]


def test_bare_datasette_labels_episodes_with_their_feed(archive_db: Path) -> None:
    rows = get_json(archive_db, "/archive/episodes.json?_shape=array&_labels=on&title=Strides")
    assert rows[0]["feed_id"]["label"] == "PyTorch Developer Podcast"


def test_bare_datasette_escapes_show_notes(tmp_path: Path, site: LoopbackSite) -> None:
    evil = "<p>Hi <script>alert(1)</script><img src=x onerror=alert(2)> there</p>"
    site.serve(
        "/evil.xml",
        '<?xml version="1.0"?><rss version="2.0" '
        'xmlns:content="http://purl.org/rss/1.0/modules/content/"><channel><title>Evil</title>'
        "<item><guid>e1</guid><title>Evil episode</title>"
        f"<content:encoded><![CDATA[{evil}]]></content:encoded></item></channel></rss>",
    )
    db = tmp_path / "archive.db"
    with Archive(db) as archive:
        update_feeds(
            archive,
            [FeedSchedule(url=site.url("/evil.xml"), pages=False)],
            settings=Settings(host_gap=0),
        )

    async def pages() -> list[str]:
        ds = datasette_app.Datasette([str(db)])
        return [(await ds.client.get(p)).text for p in ("/archive/episodes", "/archive/episodes/1")]

    for html in asyncio.run(pages()):
        assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
        assert "<script>alert(1)</script>" not in html
        assert "<img src=x onerror" not in html


TAG_VIEWS = {
    "persons", "soundbites", "alternate_enclosures", "alternate_enclosure_sources",
    "value_recipients", "remote_items", "podroll", "live_items", "locations",
}  # fmt: skip


def test_bare_datasette_shows_the_tags_and_their_views(archive_db: Path) -> None:
    listing = get_json(archive_db, "/archive.json")
    assert {v["name"] for v in listing["views"]} == TAG_VIEWS
    for view in TAG_VIEWS:  # each answers, even where the feed has none of its tags
        get_json(archive_db, f"/archive/{view}.json")
    # the fixture's podcast:person tags: Edward Yang hosts, one guest in each of 4 episodes
    persons = get_json(archive_db, "/archive/persons.json?_shape=array&role=guest")
    assert len({p["episode_id"] for p in persons}) == len(persons) == 4
    tags = get_json(archive_db, "/archive/tags.json?_shape=array&name=person&_labels=on")
    assert {t["feed_id"]["label"] for t in tags} == {"PyTorch Developer Podcast"}
    assert len(tags) == len(get_json(archive_db, "/archive/persons.json?_shape=array"))
