"""Migration 7 (issue #7): the per-feed reads of a changed poll come from covering indexes.

The v6 fixture was written by the schema-v6 code (tests/fixtures/README.md). After the
migration, the item-hash map (``KnownItems``), the save's read of the feed's episodes
(``Archive._stored_episodes``) and ``Archive.pages_to_fetch`` never read an episode row.
"""

from __future__ import annotations

import dataclasses
import re
import shutil
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from podarchive.read.jobs import read_feed
from podarchive.store import (
    BOOKKEEPING_INDEX,
    FEED_META_COLUMNS,
    PAGES_DUE,
    PAGES_DUE_INDEX,
    SCHEMA_VERSION,
    Archive,
    EpisodeWrite,
    FeedSave,
    KnownItems,
)
from podarchive.store import base as store_base

ARCHIVES = Path(__file__).parent / "fixtures" / "archives"
NEW_INDEXES = {"idx_episodes_feed_bookkeeping": BOOKKEEPING_INDEX,
               "idx_episodes_feed_pages_due": PAGES_DUE_INDEX}  # fmt: skip
NOW = "2026-12-05T09:00:00Z"


def copy(tmp_path: Path, name: str) -> Path:
    path = tmp_path / "archive.db"
    shutil.copy(ARCHIVES / name, path)
    return path


def every_row(conn: sqlite3.Connection) -> dict[str, list[tuple[Any, ...]]]:
    """Every row of every table, FTS shadow tables included, in a stable order."""
    tables = [
        r[0]
        for r in conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name != 'episodes_fts'"
        )
    ]
    return {t: sorted(conn.execute(f"SELECT * FROM [{t}]").fetchall(), key=repr) for t in tables}


def schema(conn: sqlite3.Connection) -> dict[tuple[str, str], str | None]:
    rows = conn.execute("SELECT type, name, sql FROM sqlite_master").fetchall()
    return {(kind, name): sql for kind, name, sql in rows}


def integrity_check(conn: sqlite3.Connection) -> None:
    assert conn.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
    conn.execute("INSERT INTO episodes_fts(episodes_fts) VALUES('integrity-check')")


def traced(conn: sqlite3.Connection, call: Callable[[], Any]) -> tuple[Any, list[str]]:
    """What ``call`` returns and the SELECTs on ``episodes`` it ran on ``conn`` (expanded)."""
    statements: list[str] = []
    conn.set_trace_callback(statements.append)
    try:
        result = call()
    finally:
        conn.set_trace_callback(None)
    return result, [s for s in statements if re.match(r"SELECT .* FROM episodes\b", s)]


def plan(conn: sqlite3.Connection, sql: str, feed_id: int) -> list[str]:
    """The plan of a traced statement, with its feed id bound again as a parameter."""
    unbound = sql.replace(f"feed_id = {feed_id}", "feed_id = ?")
    assert unbound != sql
    return [row[3] for row in conn.execute("EXPLAIN QUERY PLAN " + unbound, [feed_id])]


def feed_id(archive: Archive) -> int:
    found: int = archive.db.execute(
        "SELECT id FROM feeds WHERE name = 'PyTorch Developer Podcast'"
    ).fetchone()[0]
    return found


def test_v6_archive_migrates_to_v7_keeping_every_row(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Migration 7 alone: later migrations may change rows and schema, so it stops at 7."""
    monkeypatch.setattr(store_base, "MIGRATIONS", store_base.MIGRATIONS[:7])
    monkeypatch.setattr(store_base, "SCHEMA_VERSION", 7)
    path = copy(tmp_path, "v6.sqlite")
    conn = sqlite3.connect(path)
    assert conn.execute("PRAGMA user_version").fetchone() == (6,)
    rows_before, schema_before = every_row(conn), schema(conn)
    conn.close()
    episodes = rows_before["episodes"]
    assert len(episodes) == 9
    assert all(rows_before[t] for t in ("links", "episode_revisions", "snapshots", "fetches"))
    assert not set(NEW_INDEXES) & {name for _, name in schema_before}

    with Archive(path) as archive:
        assert archive.schema_version == 7

    conn = sqlite3.connect(path)
    assert conn.execute("PRAGMA user_version").fetchone() == (7,)
    assert every_row(conn) == rows_before  # FTS shadow tables too
    schema_after = schema(conn)
    added = {name: sql for (kind, name), sql in schema_after.items() if kind == "index"}
    for name, sql in NEW_INDEXES.items():
        assert added[name] == sql
        del schema_after[("index", name)]
    assert schema_after == schema_before  # nothing else changed
    integrity_check(conn)
    conn.close()


def test_the_three_reads_use_covering_indexes(tmp_path: Path) -> None:
    path = copy(tmp_path, "v6.sqlite")
    with Archive(path) as archive:
        feed = feed_id(archive)
        conn = archive.db.conn
        known = KnownItems(path)
        try:
            items, reads = traced(known._conn, lambda: known(feed))
        finally:
            known.close()
        assert len(items) == 9  # every episode has an item hash
        (sql,) = reads
        assert plan(conn, sql, feed) == [
            "SEARCH episodes USING COVERING INDEX idx_episodes_feed_bookkeeping (feed_id=?)"
        ]

        stored, reads = traced(conn, lambda: archive._stored_episodes(feed, tracked=False))
        assert len(stored) == 9
        assert list(stored) == sorted(stored)
        (sql,) = reads
        assert plan(conn, sql, feed) == [
            "SEARCH episodes USING COVERING INDEX idx_episodes_feed_bookkeeping (feed_id=?)"
        ]

        tasks, reads = traced(conn, lambda: archive.pages_to_fetch(feed))
        assert [t.status for t in tasks] == ["failed"]  # the page that 404s
        (sql,) = reads
        assert plan(conn, sql, feed) == [
            "SEARCH episodes USING COVERING INDEX idx_episodes_feed_pages_due (feed_id=?)"
        ]  # no temporary B-tree for ORDER BY id either


def meta(archive: Archive, feed: int) -> dict[str, Any]:
    """The feed's stored metadata, to save again unchanged."""
    values = archive.db.execute(
        f"SELECT {', '.join(FEED_META_COLUMNS)} FROM feeds WHERE id = ?", [feed]
    ).fetchone()
    return dict(zip(FEED_META_COLUMNS, values, strict=True))


def current_writes(archive: Archive, feed: int) -> list[EpisodeWrite]:
    latest = archive.latest_feed_body(feed)
    assert latest is not None
    body, url, _ = latest
    return list(read_feed(body, None, url).writes)


def test_a_save_reads_wide_columns_only_of_rewritten_and_unlisted_episodes(
    tmp_path: Path,
) -> None:
    """One new and one edited episode, the rest known: the rows read are those two's."""
    path = copy(tmp_path, "v6.sqlite")
    with Archive(path) as archive:
        feed = feed_id(archive)
        ids = dict(archive.db.execute("SELECT key, id FROM episodes").fetchall())
        marked = {
            r[0]
            for r in archive.db.execute(
                "SELECT id FROM episodes WHERE removed_from_feed_at IS NOT NULL "
                "OR unlisted_at IS NOT NULL"
            )
        }
        assert len(marked) == 2  # one removed, one no longer listed: the unlisted ones
        writes = current_writes(archive, feed)
        assert len(writes) == 7
        edited = dataclasses.replace(writes[1], row={**writes[1].row, "title": "Strides (3)"})
        new = EpisodeWrite(
            key="guid:brand-new",
            row={**writes[0].row, "guid": "brand-new", "title": "Brand new",
                 "enclosure_url": "https://example.com/brand-new.mp3"},
            links=(),
        )  # fmt: skip
        listed = [writes[0].key, *(w.key for w in writes[2:])]

        def save() -> Any:
            return archive.save_feed(FeedSave(
                feed, meta(archive, feed), [new, edited], status=200, etag=None, last_modified=None,
                content_hash="x", now=NOW, records=(), also_listed=listed,
            ))  # fmt: skip

        stats, reads = traced(archive.db.conn, save)
        assert (stats.new, stats.changed, stats.unchanged) == (1, 1, 6)
        bookkeeping, *by_id = reads
        assert plan(archive.db.conn, bookkeeping, feed) == [
            "SEARCH episodes USING COVERING INDEX idx_episodes_feed_bookkeeping (feed_id=?)"
        ]
        read_ids = {}
        for sql in by_id:
            found = re.fullmatch(r"SELECT (.*) FROM episodes WHERE id IN \(([\d, ]+)\)", sql)
            assert found, sql
            read_ids[frozenset(int(i) for i in found[2].split(", "))] = found[1]
        assert read_ids == {
            frozenset({ids[edited.key]}): "id, guid, title, duration, enclosure_url, "
            "enclosure_type, enclosure_length, notes_html",
            frozenset(marked): "id, guid, title, duration, enclosure_url, enclosure_type, "
            "enclosure_length",  # fingerprints, for a new key that may be an old episode
        }
        revision = archive.db.execute(
            "SELECT title, changed FROM episode_revisions WHERE seen_until = ?", [NOW]
        ).fetchall()
        assert revision == [("Strides (revised)", "title")]
        integrity_check(archive.db.conn)


def test_a_save_with_nothing_new_reads_no_episode_row(tmp_path: Path) -> None:
    """An edited episode and nothing new: the unlisted ones' fingerprints are not needed."""
    path = copy(tmp_path, "v6.sqlite")
    with Archive(path) as archive:
        feed = feed_id(archive)
        writes = current_writes(archive, feed)

        def save() -> Any:
            return archive.save_feed(FeedSave(
                feed, meta(archive, feed), writes[2:], status=200, etag=None, last_modified=None,
                content_hash="x", now=NOW, records=(), also_listed=[w.key for w in writes[:2]],
            ))  # fmt: skip

        stats, reads = traced(archive.db.conn, save)
        assert (stats.new, stats.changed, stats.unchanged) == (0, 0, 7)
        assert len(reads) == 1  # the bookkeeping index only


def due_rows(conn: sqlite3.Connection, feed: int) -> list[tuple[Any, ...]]:
    """pages_to_fetch's rows read from the table itself, no index."""
    return conn.execute(
        "SELECT id, feed_id, page_url, page_etag, page_last_modified, page_status, "
        f"page_attempts, page_fetched_at FROM episodes NOT INDEXED WHERE feed_id = ? AND "
        f"{PAGES_DUE} ORDER BY id",
        [feed],
    ).fetchall()


def test_the_indexes_follow_the_rows(tmp_path: Path) -> None:
    """Page outcomes move episodes in and out of the partial index; reads match the table."""
    path = copy(tmp_path, "v6.sqlite")
    with Archive(path) as archive:
        feed = feed_id(archive)
        conn = archive.db.conn

        def check() -> None:
            tasks = archive.pages_to_fetch(feed)
            assert [tuple(dataclasses.astuple(t))[:8] for t in tasks] == due_rows(conn, feed)
            known = KnownItems(path)
            try:
                assert known(feed) == dict(
                    conn.execute(
                        "SELECT item_hash, key FROM episodes NOT INDEXED WHERE feed_id = ? "
                        "AND item_hash IS NOT NULL",
                        [feed],
                    ).fetchall()
                )
            finally:
                known.close()
            integrity_check(conn)

        check()
        (task,) = archive.pages_to_fetch(feed)
        archive.record_page(task, status="empty", now=NOW, records=(), error="no notes")
        check()
        archive.record_page(task, status="ok", now=NOW, records=(), notes_html="<p>n</p>",
                            notes_text="n", etag='"p1"')  # fmt: skip
        check()
        assert archive.pages_to_fetch(feed) == []
        conn.execute("UPDATE episodes SET page_status = 'pending', item_hash = NULL WHERE id = 1")
        conn.commit()
        check()
        assert [t.episode_id for t in archive.pages_to_fetch(feed)] == [1]


@pytest.mark.parametrize("fixture", ["v1.sqlite", "v3.sqlite", "v5.sqlite", "v6.sqlite"])
def test_fresh_and_migrated_archives_end_with_the_same_indexes(
    tmp_path: Path, fixture: str
) -> None:
    path = copy(tmp_path, fixture)
    with Archive(path) as migrated, Archive(tmp_path / "fresh.db") as fresh:
        assert migrated.schema_version == fresh.schema_version == SCHEMA_VERSION
        indexes = "SELECT name, sql FROM sqlite_master WHERE type = 'index' ORDER BY name"
        got = migrated.db.execute(indexes).fetchall()
        assert got == fresh.db.execute(indexes).fetchall()
        assert {name: sql for name, sql in got if name in NEW_INDEXES} == NEW_INDEXES
        integrity_check(migrated.db.conn)


def test_a_v6_archive_has_the_schema_of_a_fresh_one_after_migrating(tmp_path: Path) -> None:
    path = copy(tmp_path, "v6.sqlite")
    with Archive(path) as migrated, Archive(tmp_path / "fresh.db") as fresh:
        assert schema(migrated.db.conn) == schema(fresh.db.conn)
