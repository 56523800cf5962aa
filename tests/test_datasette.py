"""The archive opens in a bare ``datasette archive.db``: tables, foreign keys, search."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from podarchive.config import FeedSchedule
from podarchive.pipeline import update_feeds
from podarchive.settings import Settings
from podarchive.store import Archive

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


def test_datasette_follows_foreign_keys(archive_db: Path) -> None:
    rows = get_json(archive_db, "/archive/links.json?_shape=array&_labels=on&domain=github.com")
    titles = {
        e["id"]: e["title"] for e in get_json(archive_db, "/archive/episodes.json?_shape=array")
    }
    assert rows
    for row in rows:
        assert row["episode_id"]["label"] == titles[row["episode_id"]["value"]]
