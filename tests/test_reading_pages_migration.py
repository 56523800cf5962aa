"""Migration v16 (issue #28): the indexes the pages read by, on an archive of an earlier
version (``tests/fixtures/archives/v13.sqlite``, migrated through every later migration):
every row stays, the indexes are there and the schema is a fresh archive's."""

from __future__ import annotations

import shutil
import sqlite3
from contextlib import closing
from pathlib import Path

from archive_rows import every_row, schema

from podarchive.store import SCHEMA_VERSION, Archive, check_archive
from podarchive.store.migrations_reading import READING_INDEXES
from podarchive.store.schema import MIGRATIONS, _reading_indexes_v16

V13 = Path(__file__).parent / "fixtures" / "archives" / "v13.sqlite"


def _indexes(conn: sqlite3.Connection) -> set[str]:
    return {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'index'")}


def test_the_reading_indexes_come_last_and_keep_every_row(tmp_path: Path) -> None:
    assert MIGRATIONS[-1] is _reading_indexes_v16
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
