"""Every schema change ships a migration, tested on an archive written by the previous version."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path
from typing import Any

from podarchive.core.settings import Settings
from podarchive.read.schedule_files import FeedSchedule
from podarchive.store import SCHEMA_VERSION, Archive
from podarchive.update.run import update_feeds

ARCHIVES = Path(__file__).parent / "fixtures" / "archives"


def table_rows(path: Path) -> dict[str, list[dict[str, Any]]]:
    conn = sqlite3.connect(path)
    conn.row_factory = sqlite3.Row
    try:
        tables = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
        return {
            # in a stable order without ORDER BY rowid: some tables have none (WITHOUT ROWID)
            t: sorted((dict(r) for r in conn.execute(f"SELECT * FROM [{t}]")), key=repr)
            for t in tables
            if "_fts" not in t
        }
    finally:
        conn.close()


def copy_v1(tmp_path: Path) -> Path:
    path = tmp_path / "archive.db"
    shutil.copy(ARCHIVES / "v1.sqlite", path)
    return path


def test_v1_archive_migrates_without_losing_a_row(tmp_path: Path) -> None:
    path = copy_v1(tmp_path)
    before = table_rows(path)
    assert sqlite3.connect(path).execute("PRAGMA user_version").fetchone()[0] == 1
    with Archive(path) as archive:
        assert archive.schema_version == SCHEMA_VERSION
    after = table_rows(path)
    for table, rows in before.items():
        assert len(after[table]) == len(rows), table
        for old, new in zip(rows, after[table], strict=True):
            assert {k: new[k] for k in old} == old  # every old value kept as it was
    assert {"hosts", "feed_redirects", "feed_moves"} <= set(after)
    assert after["feeds"][0]["fetch_url"] is None


def test_migrated_archive_keeps_search_and_takes_new_runs(
    tmp_path: Path, pytorch_feed: str
) -> None:
    path = copy_v1(tmp_path)
    with Archive(path) as archive:
        hits = archive.db.execute(
            "SELECT title FROM episodes_fts WHERE episodes_fts MATCH 'strides'"
        ).fetchall()
        assert hits == [("Strides",)]
        report = update_feeds(
            archive,
            [FeedSchedule(url=pytorch_feed, name="PyTorch Developer Podcast")],
            settings=Settings(allow_private_hosts=True, host_gap=0),
        )
        assert not report.failed
        # the v1 rows were for another port; this feed is new next to them
        assert archive.count("feeds") == 3
        assert archive.count("episodes") == 18


def test_migrating_twice_is_a_no_op(tmp_path: Path) -> None:
    path = copy_v1(tmp_path)
    Archive(path).close()
    once = table_rows(path)
    Archive(path).close()
    assert table_rows(path) == once


def test_v3_archive_migrates_to_v4_without_losing_a_row(tmp_path: Path) -> None:
    path = tmp_path / "archive.db"
    shutil.copy(ARCHIVES / "v3.sqlite", path)
    assert sqlite3.connect(path).execute("PRAGMA user_version").fetchone()[0] == 3
    before = table_rows(path)
    with Archive(path) as archive:
        assert archive.schema_version == SCHEMA_VERSION >= 4
    after = table_rows(path)
    for table, rows in before.items():
        assert len(after[table]) == len(rows), table
        for old, new in zip(rows, after[table], strict=True):
            assert {k: new[k] for k in old} == old
    assert {r["kind"] for r in after["feed_bodies"]} == {"feed"}
    assert {"backfill_walks", "backfill_pages"} <= set(after)
    assert all(r["found_on_site_at"] is None for r in after["episodes"])
