"""Migration v19 (issue #28): the change feed's time indexes, on an archive of the previous
version (the v14 fixture brought to 18 by migrations 15 to 18 alone): every row stays, only
the indexes are added, the schema is a fresh archive's; and each history table's time-ordered
read (the change feed's page bound) goes by an index, never through the whole table."""

from __future__ import annotations

import re
import shutil
import sqlite3
from contextlib import closing
from pathlib import Path

import pytest
from archive_rows import every_row, schema

from podarchive.store import Archive, check_archive
from podarchive.store import base as store_base
from podarchive.store.change_reads import SOURCES, times_sql
from podarchive.store.migrations_changes import CHANGE_INDEXES, _change_indexes_v19
from podarchive.store.schema import MIGRATIONS

V14 = Path(__file__).parent / "fixtures" / "archives" / "v14.sqlite"
NOW = "2027-01-01T00:00:00Z"
SINCE = "2026-01-01T00:00:00Z"


def test_the_change_indexes_are_migration_19() -> None:
    assert MIGRATIONS[18] is _change_indexes_v19


def test_a_v18_archive_gets_the_indexes_keeping_every_row(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "archive.db"
    shutil.copy(V14, path)
    with monkeypatch.context() as m:
        m.setattr(store_base, "MIGRATIONS", store_base.MIGRATIONS[:18])
        m.setattr(store_base, "SCHEMA_VERSION", 18)
        with Archive(path) as v18:
            assert v18.schema_version == 18
    with closing(sqlite3.connect(path)) as conn:
        before = every_row(conn)
        schema_before = schema(conn)
    monkeypatch.setattr(store_base, "MIGRATIONS", store_base.MIGRATIONS[:19])  # 19 alone
    monkeypatch.setattr(store_base, "SCHEMA_VERSION", 19)
    with Archive(path) as archive, Archive(tmp_path / "fresh.db") as fresh:
        assert archive.schema_version == fresh.schema_version == 19
        assert schema(archive.db.conn) == schema(fresh.db.conn)
        after = every_row(archive.db.conn)
        added = set(schema(archive.db.conn)) - set(schema_before)
    assert after == before
    assert {kind for kind, _ in added} == {"index"}
    assert {name for _, name in added} == {name for name, _ in CHANGE_INDEXES}
    assert check_archive(path)[1] == []


@pytest.mark.parametrize("newest_first", [True, False])
def test_each_history_table_is_read_in_time_order_by_an_index(
    tmp_path: Path, newest_first: bool
) -> None:
    """The page bound's read of each source (the whole archive's latest page, or the page after
    a cursor) walks its time index in order: no scan, no sort. Feeds and feed moves, a row or
    so a podcast, are read whole."""
    path = tmp_path / "archive.db"
    shutil.copy(V14, path)
    with Archive(path):
        pass
    indexes = {name for name, _ in CHANGE_INDEXES} | {"idx_episode_revisions_seen_until"}
    with closing(sqlite3.connect(path)) as conn:
        for source in SOURCES:
            sql, args = times_sql(source, None, (("<", NOW), (">=", SINCE)), newest_first)
            plan = [str(r[-1]) for r in conn.execute(f"EXPLAIN QUERY PLAN {sql}", [*args, 100])]
            if source.at.startswith(("f.", "feed_moves.")):
                continue
            walk = re.match(r"SEARCH \w+ USING INDEX (\w+)", plan[0])
            assert walk is not None, (source.at, plan)
            assert walk[1] in indexes, (source.at, plan)
            assert not any("TEMP B-TREE" in step for step in plan), (source.at, plan)
