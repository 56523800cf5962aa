"""The v13 fixture and migration 14 (issue #26) on it: the media ledger's tables.

`tests/fixtures/archives/v13.sqlite` was made by the script in tests/fixtures/README.md (the
v11 history) against the schema-13 code. Migration 14 (``_media_ledger_v14``) only adds
tables and their indexes (``media_payloads``, ``media_fetches``, ``episode_media``,
``fixity_events``, ``media_state``): every row of every table stays as it was, and the
migrated archive's schema is a fresh one's.
"""

from __future__ import annotations

import shutil
import sqlite3
from contextlib import closing
from pathlib import Path

import pytest
from archive_rows import every_row, schema

from podarchive.store import APPLICATION_ID, Archive, check_archive
from podarchive.store import base as store_base

V13 = Path(__file__).parent / "fixtures" / "archives" / "v13.sqlite"
MEDIA_TABLES = {"media_payloads", "media_fetches", "episode_media", "fixity_events", "media_state"}


def test_the_fixture_is_what_its_readme_says() -> None:
    with closing(sqlite3.connect(f"file:{V13}?mode=ro", uri=True)) as conn:
        assert conn.execute("PRAGMA user_version").fetchone() == (13,)
        assert conn.execute("PRAGMA application_id").fetchone() == (APPLICATION_ID,)
        assert conn.execute("PRAGMA journal_mode").fetchone() == ("delete",)
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        assert not tables & MEDIA_TABLES
        columns = [r[1] for r in conn.execute("PRAGMA table_info(episodes)")]
        assert "page_method" in columns  # schema 13's

        def count(sql: str) -> int:
            return int(conn.execute(sql).fetchone()[0])

        assert count("SELECT count(*) FROM feeds") == 2
        assert count("SELECT count(*) FROM episodes") == 9
        assert count("SELECT count(*) FROM episodes WHERE enclosure_url IS NOT NULL") == 9
        assert count("SELECT count(*) FROM episode_revisions") > 0
        assert count("SELECT count(*) FROM transcript_segments WHERE revision_id IS NOT NULL") > 0


def test_a_v13_archive_migrates_to_14_keeping_every_row(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Migration 14 alone: later migrations may change rows and schema, so it stops at 14."""
    monkeypatch.setattr(store_base, "MIGRATIONS", store_base.MIGRATIONS[:14])
    monkeypatch.setattr(store_base, "SCHEMA_VERSION", 14)
    path = tmp_path / "archive.db"
    shutil.copy(V13, path)
    with closing(sqlite3.connect(path)) as conn:
        before = every_row(conn)
        schema_before = schema(conn)
    with Archive(path) as archive, Archive(tmp_path / "fresh.db") as fresh:
        assert archive.schema_version == fresh.schema_version == 14
        assert schema(archive.db.conn) == schema(fresh.db.conn)
        after = every_row(archive.db.conn)
        schema_after = schema(archive.db.conn)
    assert after == before | dict.fromkeys(MEDIA_TABLES, [])  # every row, the new tables empty
    assert {k: v for k, v in schema_after.items() if k in schema_before} == schema_before
    added = {name for kind, name in set(schema_after) - set(schema_before) if kind == "table"}
    assert added == MEDIA_TABLES
    tables, problems = check_archive(path)
    assert problems == []
    assert set(tables) == {"episodes_fts", "transcript_segments_fts", "chapters_fts"}


def test_a_migrated_archive_takes_media_rows(tmp_path: Path) -> None:
    path = tmp_path / "archive.db"
    shutil.copy(V13, path)
    sha = "ab" * 32
    with Archive(path) as archive:
        feed_id = archive.feeds()[0][0]
        (task, *_) = archive.media_due(feed_id, "2026-12-05T00:00:00Z")
        archive.record_payload(sha, 5, "audio/mpeg", ".mp3", "2026-12-05T00:00:00Z")
        assert (
            archive.add_media_version(task.episode_id, task.url, sha, "2026-12-05T00:00:00Z") == 1
        )
        due = archive.media_due(feed_id, "2026-12-05T00:00:00Z")
        assert task.episode_id not in [t.episode_id for t in due]
    _, problems = check_archive(path)
    assert problems == []


def test_a_v11_archive_migrates_through_to_the_media_ledger_keeping_every_row(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The issue's own words: a v11 archive (two releases back) upgraded to 14 in one open
    keeps every row it had (migrations 12 and 13 only add columns and tables), has the
    ledger's tables empty, passes check, and takes media rows."""
    monkeypatch.setattr(store_base, "MIGRATIONS", store_base.MIGRATIONS[:14])
    monkeypatch.setattr(store_base, "SCHEMA_VERSION", 14)
    path = tmp_path / "archive.db"
    shutil.copy(V13.with_name("v11.sqlite"), path)
    with closing(sqlite3.connect(path)) as conn:
        before = every_row(conn)
    with Archive(path) as archive:
        assert archive.schema_version == 14
        after = every_row(archive.db.conn)
        for table, table_rows in before.items():  # a column added later ends each row
            assert [row[: len(old)] for row, old in zip(after[table], table_rows, strict=True)] == (
                table_rows
            ), table
        assert all(after[t] == [] for t in MEDIA_TABLES)
        feed_id = archive.feeds()[0][0]
        (task, *_) = archive.media_due(feed_id, "2026-12-05T00:00:00Z")
        archive.record_payload("cd" * 32, 5, "audio/mpeg", ".mp3", "2026-12-05T00:00:00Z")
        assert archive.add_media_version(task.episode_id, task.url, "cd" * 32, "2026-12-05") == 1
    _, problems = check_archive(path)
    assert problems == []
