"""The v10 fixture and migration 11 (issue #15) on it: partial indexes, every row kept.

`tests/fixtures/archives/v10.sqlite` was made by the script in tests/fixtures/README.md (the
v6 history, with a nested extension element and every transcript and chapters file revised
on the second run) against the schema-10 code. Migration 11 (``_lean_indexes_v11``) makes
the indexes on ``links``, ``transcript_segments`` and ``chapters``'s ``revision_id`` and on
``tags.parent_id`` partial (``WHERE … IS NOT NULL``): nothing else changes, no row is lost,
and every query of those columns (a revision's rows, a tag's children, the typed tag views,
the foreign-key checks when a revision is deleted) still uses its index.
"""

from __future__ import annotations

import shutil
import sqlite3
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest
from archive_rows import every_row, schema

from podarchive.store import APPLICATION_ID, Archive, FeedSave, check_archive
from podarchive.store import base as store_base
from podarchive.store.schema import PARTIAL_INDEXES

V10 = Path(__file__).parent / "fixtures" / "archives" / "v10.sqlite"
NOW = "2026-12-05T09:00:00Z"

# every query of an indexed column, with the index it must use
QUERIES = [
    ("SELECT * FROM links WHERE revision_id = ?", [1], "idx_links_revision_id"),
    ("DELETE FROM links WHERE revision_id IN (?, ?)", [1, 2], "idx_links_revision_id"),
    ("SELECT count(*) FROM links WHERE revision_id = ?", [1], "idx_links_revision_id"),
    (
        "SELECT * FROM transcript_segments WHERE revision_id = ?",
        [1],
        "idx_transcript_segments_revision_id",
    ),
    (
        "DELETE FROM transcript_segments WHERE revision_id IN (?)",
        [1],
        "idx_transcript_segments_revision_id",
    ),
    ("SELECT * FROM chapters WHERE revision_id = ?", [1], "idx_chapters_revision_id"),
    ("DELETE FROM chapters WHERE revision_id IN (?)", [1], "idx_chapters_revision_id"),
    ("SELECT * FROM tags WHERE parent_id = ?", [1], "idx_tags_parent_id"),
    ("SELECT * FROM alternate_enclosures", [], "idx_tags_parent_id"),  # a typed view
]


def copy_v10(tmp_path: Path) -> Path:
    path = tmp_path / "archive.db"
    shutil.copy(V10, path)
    return path


def plan(conn: sqlite3.Connection, sql: str, params: list[Any]) -> str:
    return " / ".join(row[-1] for row in conn.execute(f"EXPLAIN QUERY PLAN {sql}", params))


def test_the_fixture_is_what_its_readme_says() -> None:
    with closing(sqlite3.connect(f"file:{V10}?mode=ro", uri=True)) as conn:
        assert conn.execute("PRAGMA user_version").fetchone() == (10,)
        assert conn.execute("PRAGMA application_id").fetchone() == (APPLICATION_ID,)
        assert conn.execute("PRAGMA journal_mode").fetchone() == ("delete",)

        def count(sql: str) -> int:
            return int(conn.execute(sql).fetchone()[0])

        assert count("SELECT count(*) FROM feeds") == 2
        assert count("SELECT count(*) FROM episodes") == 9
        # rows the partial indexes hold (with a revision or a parent) and rows they leave out
        for table in ("links", "transcript_segments", "chapters"):
            assert count(f"SELECT count(*) FROM {table} WHERE revision_id IS NOT NULL") > 0
            assert count(f"SELECT count(*) FROM {table} WHERE revision_id IS NULL") > 0
        assert count("SELECT count(*) FROM tags WHERE parent_id IS NOT NULL") > 0
        assert count("SELECT count(*) FROM tags WHERE parent_id IS NULL") > 0
        # schema 10's indexes: full, one entry per row
        sqls = schema(conn)
        for name in PARTIAL_INDEXES:
            assert "WHERE" not in str(sqls[("index", name)]), name


def test_a_v10_archive_opens_keeping_every_row_with_a_fresh_archive_s_schema(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Migration 11 alone: later migrations change the schema (12: ``fetches.warning``)."""
    monkeypatch.setattr(store_base, "MIGRATIONS", store_base.MIGRATIONS[:11])
    monkeypatch.setattr(store_base, "SCHEMA_VERSION", 11)
    path = copy_v10(tmp_path)
    with closing(sqlite3.connect(path)) as conn:
        before = every_row(conn)
        schema_before = schema(conn)
    with Archive(path) as archive, Archive(tmp_path / "fresh.db") as fresh:
        assert archive.schema_version == fresh.schema_version == 11
        assert schema(archive.db.conn) == schema(fresh.db.conn)
        after = every_row(archive.db.conn)
        schema_after = schema(archive.db.conn)
    assert after == before  # no row lost or changed, FTS shadow tables included
    changed = {k for k in schema_before if schema_before[k] != schema_after.get(k)}
    assert changed == {("index", name) for name in PARTIAL_INDEXES}
    for name, (table, column) in PARTIAL_INDEXES.items():
        assert schema_after[("index", name)] == (
            f"CREATE INDEX {name} ON {table} ({column}) WHERE {column} IS NOT NULL"
        )
    tables, problems = check_archive(path)
    assert problems == []
    assert set(tables) == {"episodes_fts", "transcript_segments_fts", "chapters_fts"}


def test_every_query_of_the_indexed_columns_still_uses_its_index(tmp_path: Path) -> None:
    path = copy_v10(tmp_path)
    with Archive(path) as archive:
        conn = archive.db.conn
        for sql, params, index in QUERIES:
            assert f"INDEX {index} " in plan(conn, sql, params) + " ", sql
        # and the indexes hold only the rows that have a value
        for name, (table, column) in PARTIAL_INDEXES.items():
            entries = conn.execute(f"SELECT count(*) FROM {table} INDEXED BY {name} "
                                   f"WHERE {column} IS NOT NULL").fetchone()  # fmt: skip
            values = conn.execute(f"SELECT count({column}) FROM {table}").fetchone()
            assert entries == values, name


@pytest.mark.parametrize(
    ("parent", "child"),
    [
        ("episode_revisions", "links"),
        ("transcript_revisions", "transcript_segments"),
        ("chapter_revisions", "chapters"),
    ],
)
def test_deleting_a_revision_checks_its_rows_through_the_index(
    tmp_path: Path, parent: str, child: str
) -> None:
    """The foreign-key check on a deleted revision looks its rows up, never scans the table:
    SQLite's VM steps stay the same with 20,000 current rows more in the child table."""
    path = copy_v10(tmp_path)
    with Archive(path) as archive:
        conn = archive.db.conn
        assert conn.execute("PRAGMA foreign_keys").fetchone() == (1,)

        def steps_to_delete_one() -> int:
            unused = conn.execute(
                f"SELECT max(id) FROM {parent} WHERE id NOT IN "
                f"(SELECT revision_id FROM {child} WHERE revision_id IS NOT NULL)"
            ).fetchone()[0]
            if unused is None:  # every revision has rows: add one that has none
                columns = [r[1] for r in conn.execute(f"PRAGMA table_info({parent})")]
                conn.execute(
                    f"INSERT INTO {parent} ({', '.join(columns[1:])}) SELECT "
                    f"{', '.join(columns[1:])} FROM {parent} LIMIT 1"
                )
                unused = conn.execute(f"SELECT max(id) FROM {parent}").fetchone()[0]
            counted = [0]

            def step() -> int:
                counted[0] += 1
                return 0

            conn.set_progress_handler(step, 1)
            try:
                conn.execute(f"DELETE FROM {parent} WHERE id = ?", [unused])
            finally:
                conn.set_progress_handler(None, 0)
            return counted[0]

        with archive.transaction():
            few = steps_to_delete_one()
            columns = [r[1] for r in conn.execute(f"PRAGMA table_info({child})")]
            some = conn.execute(f"SELECT * FROM {child} WHERE revision_id IS NULL LIMIT 1")
            row = dict(zip(columns, some.fetchone(), strict=True))
            keys = [c for c in columns if c not in ("id", "position")]
            conn.executemany(
                f"INSERT INTO {child} ({', '.join(keys)}, position) "
                f"VALUES ({', '.join('?' * len(keys))}, ?)",
                ([*(row[k] for k in keys), 10_000 + n] for n in range(20_000)),
            )
            many = steps_to_delete_one()
            conn.execute("ROLLBACK")  # the fixture copy stays as it was
            conn.execute("BEGIN")
    assert many < few + 50


def test_the_pipeline_writes_to_the_migrated_archive(tmp_path: Path) -> None:
    """A save after the upgrade: the feed saved again with a changed episode writes its
    revision and moves its links to it (found again through the partial index)."""
    path = copy_v10(tmp_path)
    with Archive(path) as archive:
        conn = archive.db.conn
        feed_id, key, links = conn.execute(
            "SELECT e.feed_id, e.key, count(*) FROM links l JOIN episodes e "
            "ON e.id = l.episode_id WHERE l.revision_id IS NULL AND l.source = 'feed' GROUP BY e.id "
            "ORDER BY e.id LIMIT 1"
        ).fetchone()
        revisions = conn.execute("SELECT count(*) FROM episode_revisions").fetchone()[0]
        writes = _writes(archive, feed_id, key)
        archive.save_feed(FeedSave(
            feed_id, {}, writes, status=200, etag=None, last_modified=None,
            content_hash="after-upgrade", now=NOW, records=(), mark_absent=False,
        ))  # fmt: skip
        (revision,) = conn.execute(
            "SELECT max(id) FROM episode_revisions"
        ).fetchone()  # the one just written
        assert revision == revisions + 1
        moved = conn.execute(
            "SELECT count(*) FROM links INDEXED BY idx_links_revision_id WHERE revision_id = ?",
            [revision],
        ).fetchone()
        assert moved == (links,)
    _, problems = check_archive(path)
    assert problems == []


def _writes(archive: Archive, feed_id: int, key: str) -> list[Any]:
    """The episode ``key`` as the feed would give it with its notes edited (links kept)."""
    from podarchive.core.types import EpisodeWrite, Link
    from podarchive.store.schema import EPISODE_COLUMNS

    row = archive.db.execute(
        f"SELECT {', '.join(EPISODE_COLUMNS)} FROM episodes WHERE feed_id = ? AND key = ?",
        [feed_id, key],
    ).fetchone()
    values = dict(zip(EPISODE_COLUMNS, row, strict=True))
    values["notes_html"] = (values["notes_html"] or "") + "<p>edited</p>"
    links = archive.db.execute(
        "SELECT position, url, normalized_url, domain, text FROM links l JOIN episodes e "
        "ON e.id = l.episode_id WHERE e.feed_id = ? AND e.key = ? AND l.source = 'feed' "
        "AND l.revision_id IS NULL ORDER BY position",
        [feed_id, key],
    ).fetchall()
    return [EpisodeWrite(key, values, tuple(Link(*link) for link in links))]
