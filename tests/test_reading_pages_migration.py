"""Migration v16 (issue #28): the indexes the pages read by, on an archive of the previous
version (the v14 fixture brought to 15 by migration 15 alone) and of an earlier one
(``tests/fixtures/archives/v13.sqlite``, migrated through every later migration): every row
stays, the indexes are there and the schema is a fresh archive's."""

from __future__ import annotations

import shutil
import sqlite3
from contextlib import closing
from pathlib import Path

import pytest
from archive_rows import every_row, schema

from podarchive.store import SCHEMA_VERSION, Archive, check_archive
from podarchive.store import base as store_base
from podarchive.store.migrations_reading import READING_INDEXES
from podarchive.store.schema import MIGRATIONS, _reading_indexes_v16

V13 = Path(__file__).parent / "fixtures" / "archives" / "v13.sqlite"
V14 = V13.with_name("v14.sqlite")


def _indexes(conn: sqlite3.Connection) -> set[str]:
    return {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'index'")}


def test_the_reading_indexes_come_last_and_keep_every_row(tmp_path: Path) -> None:
    assert MIGRATIONS[15] is _reading_indexes_v16  # v16; later ones (#28's v17) add tables
    path = tmp_path / "archive.db"
    shutil.copy(V13, path)
    with closing(sqlite3.connect(path)) as conn:
        before = every_row(conn)
        assert not _indexes(conn) & {name for name, _ in READING_INDEXES}
    with Archive(path) as archive, Archive(tmp_path / "fresh.db") as fresh:
        assert archive.schema_version == fresh.schema_version == SCHEMA_VERSION
        assert schema(archive.db.conn) == schema(fresh.db.conn)
        after = every_row(archive.db.conn)
        assert {name for name, _ in READING_INDEXES} <= _indexes(archive.db.conn)
    assert {k: v for k, v in after.items() if k in before} == before
    _, problems = check_archive(path)
    assert problems == []


def test_a_podcast_page_reads_its_episodes_by_the_index(tmp_path: Path) -> None:
    path = tmp_path / "archive.db"
    shutil.copy(V13, path)
    with Archive(path):
        pass
    from podarchive.web.reading import EPISODES_SQL

    with closing(sqlite3.connect(path)) as conn:
        plan = " ".join(
            str(r[-1])
            for r in conn.execute(
                f"EXPLAIN QUERY PLAN {EPISODES_SQL}", {"id": 1, "limit": 51, "offset": 0}
            )
        )
    assert "idx_episodes_feed_published" in plan
    assert "TEMP B-TREE" not in plan  # newest first is the index's order, backwards


def test_a_v15_archive_gets_the_indexes_keeping_every_row(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An archive written at schema 15 (the v14 fixture with its captures tables), opened by
    this version: migration 16 only adds indexes; not a row changes."""
    path = tmp_path / "archive.db"
    shutil.copy(V14, path)
    with monkeypatch.context() as m:
        m.setattr(store_base, "MIGRATIONS", store_base.MIGRATIONS[:15])
        m.setattr(store_base, "SCHEMA_VERSION", 15)
        with Archive(path) as v15:
            assert v15.schema_version == 15
    monkeypatch.setattr(store_base, "MIGRATIONS", store_base.MIGRATIONS[:16])  # 16 alone
    monkeypatch.setattr(store_base, "SCHEMA_VERSION", 16)
    with closing(sqlite3.connect(path)) as conn:
        before = every_row(conn)
        schema_before = schema(conn)
    monkeypatch.setattr(store_base, "MIGRATIONS", store_base.MIGRATIONS[:16])  # 16 alone
    monkeypatch.setattr(store_base, "SCHEMA_VERSION", 16)
    with Archive(path) as archive, Archive(tmp_path / "fresh.db") as fresh:
        assert archive.schema_version == fresh.schema_version == 16
        assert schema(archive.db.conn) == schema(fresh.db.conn)
        after = every_row(archive.db.conn)
        added = set(schema(archive.db.conn)) - set(schema_before)
    assert after == before
    assert {kind for kind, _ in added} == {"index"}
    assert {name for _, name in added} == {name for name, _ in READING_INDEXES}
