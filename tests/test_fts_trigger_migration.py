"""Migration 6 (issue #7): the FTS update trigger fires only when an indexed column is set.

The v5 fixture was written by the schema-v5 code (tests/fixtures/README.md); before the
migration its ``episodes_au`` trigger re-indexed an episode on an UPDATE of any column.
"""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from podarchive.store import FTS_UPDATE_TRIGGER, SCHEMA_VERSION, Archive
from podarchive.store.schema import PARTIAL_INDEXES

ARCHIVES = Path(__file__).parent / "fixtures" / "archives"
SHADOW = ("episodes_fts_data", "episodes_fts_idx", "episodes_fts_docsize", "episodes_fts_config")
SEARCH = "SELECT rowid FROM episodes_fts WHERE episodes_fts MATCH ? ORDER BY rowid"
# what later migrations add or change (7: covering indexes; 11: partial indexes), left out of
# the v5 → v6 comparison
LATER = {
    ("index", "idx_episodes_feed_bookkeeping"),
    ("index", "idx_episodes_feed_pages_due"),
    *(("index", name) for name in PARTIAL_INDEXES),
    ("index", "idx_fetches_warning"),
}


def copy(tmp_path: Path, name: str) -> Path:
    path = tmp_path / "archive.db"
    shutil.copy(ARCHIVES / name, path)
    return path


def rows(conn: sqlite3.Connection, table: str) -> list[tuple[Any, ...]]:
    """In a stable order (some FTS shadow tables are WITHOUT ROWID)."""
    return sorted(conn.execute(f"SELECT * FROM [{table}]").fetchall(), key=repr)


def every_row(
    conn: sqlite3.Connection, like: dict[str, list[str]] | None = None
) -> dict[str, list[tuple[Any, ...]]]:
    """Every row of every table, FTS shadow tables included (not the virtual table itself);
    with ``like``, only those tables and columns (what later migrations add is left out).
    """
    tables = like or {
        r[0]: [c[1] for c in conn.execute(f"PRAGMA table_info([{r[0]}])")]
        for r in conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name != 'episodes_fts'"
        )
    }
    return {
        t: sorted(conn.execute(f"SELECT {', '.join(f'[{c}]' for c in cols)} FROM [{t}]"), key=repr)
        for t, cols in tables.items()
    }


def columns(conn: sqlite3.Connection) -> dict[str, list[str]]:
    names = conn.execute(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name != 'episodes_fts'"
    )
    return {n: [c[1] for c in conn.execute(f"PRAGMA table_info([{n}])")] for (n,) in names}


def schema(conn: sqlite3.Connection) -> dict[tuple[str, str], str | None]:
    rows = conn.execute("SELECT type, name, sql FROM sqlite_master").fetchall()
    return {(kind, name): sql for kind, name, sql in rows}


def index_state(conn: sqlite3.Connection) -> dict[str, list[tuple[Any, ...]]]:
    return {t: rows(conn, t) for t in SHADOW}


def integrity_check(conn: sqlite3.Connection) -> None:
    conn.execute("INSERT INTO episodes_fts(episodes_fts) VALUES('integrity-check')")
    assert conn.execute("PRAGMA integrity_check").fetchall() == [("ok",)]


def test_v5_archive_migrates_to_v6_keeping_every_row_and_its_index(tmp_path: Path) -> None:
    path = copy(tmp_path, "v5.sqlite")
    conn = sqlite3.connect(path)
    assert conn.execute("PRAGMA user_version").fetchone() == (5,)
    rows_before, schema_before, columns_before = every_row(conn), schema(conn), columns(conn)
    hits_before = conn.execute(SEARCH, ["pytorch"]).fetchall()
    old_trigger = schema_before[("trigger", "episodes_au")]
    conn.close()
    assert old_trigger is not None
    assert 'AFTER UPDATE ON "episodes"' in old_trigger
    assert len(hits_before) >= 5
    assert all(rows_before[t] for t in ("episodes", "links", "episode_revisions", "snapshots"))

    with Archive(path) as archive:
        assert archive.schema_version == SCHEMA_VERSION >= 6
        assert archive.db["episodes"].detect_fts() == "episodes_fts"

    conn = sqlite3.connect(path)
    assert conn.execute("PRAGMA user_version").fetchone() == (SCHEMA_VERSION,)
    # FTS shadow tables too: the index is untouched
    assert every_row(conn, columns_before) == rows_before
    schema_after = schema(conn)
    assert set(schema_after) >= LATER
    # what later migrations add (7: covering indexes; 8: new tables, columns and triggers)
    schema_after = {k: v for k, v in schema_after.items() if k not in LATER and k in schema_before}
    schema_before = {k: v for k, v in schema_before.items() if k not in LATER}  # 11 changed
    for table in ("episodes", "feeds", "fetches"):  # columns added by migrations 8, 9, 12
        schema_after[("table", table)] = schema_before[("table", table)]
    new_trigger = schema_after.pop(("trigger", "episodes_au"))
    schema_before.pop(("trigger", "episodes_au"))
    assert schema_after == schema_before  # only the trigger changed
    assert new_trigger == FTS_UPDATE_TRIGGER
    # the same body as sqlite-utils wrote: only the event clause differs
    assert new_trigger.split(" BEGIN", 1)[1] == old_trigger.split(" BEGIN", 1)[1]
    assert conn.execute(SEARCH, ["pytorch"]).fetchall() == hits_before
    integrity_check(conn)
    conn.close()


def test_bookkeeping_updates_no_longer_touch_the_index(tmp_path: Path) -> None:
    path = copy(tmp_path, "v5.sqlite")
    Archive(path).close()
    conn = sqlite3.connect(path, isolation_level=None)  # autocommit: each UPDATE is final
    episode_id = conn.execute(SEARCH, ["strides"]).fetchone()[0]
    index = index_state(conn)
    for update in (
        "UPDATE episodes SET page_status = 'failed' WHERE id = ?",
        "UPDATE episodes SET page_attempts = page_attempts + 1, page_error = 'HTTP 404' "
        "WHERE id = ?",
        "UPDATE episodes SET item_hash = 'x' WHERE id = ?",
        "UPDATE episodes SET unlisted_at = '2026-12-04T09:00:00Z' WHERE id = ?",
        "UPDATE episodes SET removed_from_feed_at = '2026-12-04T09:00:00Z' WHERE id = ?",
        "UPDATE episodes SET key = 'guid:another' WHERE id = ?",
    ):
        assert conn.execute(update, [episode_id]).rowcount == 1
        assert index_state(conn) == index, update
    assert conn.execute(SEARCH, ["zyzzyva"]).fetchall() == []

    conn.execute(
        "UPDATE episodes SET notes_text = notes_text || ' Zyzzyva.' WHERE id = ?", [episode_id]
    )
    assert index_state(conn) != index
    assert conn.execute(SEARCH, ["zyzzyva"]).fetchall() == [(episode_id,)]
    assert conn.execute(SEARCH, ["strides"]).fetchall() == [(episode_id,)]
    assert conn.execute(SEARCH, ["revised"]).fetchall() == [(episode_id,)]  # only its title
    conn.execute("UPDATE episodes SET title = 'Strides again' WHERE id = ?", [episode_id])
    assert conn.execute(SEARCH, ["revised"]).fetchall() == []
    assert conn.execute(SEARCH, ["again"]).fetchall() == [(episode_id,)]
    integrity_check(conn)
    conn.close()


def test_the_v5_trigger_did_reindex_on_bookkeeping_updates(tmp_path: Path) -> None:
    """The control for the test above: its index comparison sees a re-index."""
    path = copy(tmp_path, "v5.sqlite")
    conn = sqlite3.connect(path, isolation_level=None)
    index = index_state(conn)
    conn.execute("UPDATE episodes SET page_status = 'failed' WHERE id = 1")
    assert index_state(conn) != index
    conn.close()


def test_a_failed_page_fetch_leaves_the_index_alone(tmp_path: Path) -> None:
    path = copy(tmp_path, "v5.sqlite")
    with Archive(path) as archive:
        feed_id = archive.db.execute("SELECT id FROM feeds WHERE name IS NOT NULL").fetchone()[0]
        (task,) = archive.pages_to_fetch(feed_id)  # the page that 404s
        index = index_state(archive.db.conn)
        archive.record_page(
            task, status="failed", now="2026-12-04T09:00:00Z", records=(), error="HTTP 404"
        )
        assert index_state(archive.db.conn) == index
        assert archive.db.execute(
            "SELECT page_status, page_attempts FROM episodes WHERE id = ?", [task.episode_id]
        ).fetchone() == ("failed", task.attempts + 1)


@pytest.mark.parametrize("fixture", ["v1.sqlite", "v3.sqlite", "v5.sqlite"])
def test_fresh_and_migrated_archives_end_with_the_same_trigger(
    tmp_path: Path, fixture: str
) -> None:
    path = copy(tmp_path, fixture)
    with Archive(path) as migrated, Archive(tmp_path / "fresh.db") as fresh:
        assert migrated.schema_version == fresh.schema_version == SCHEMA_VERSION
        triggers = "SELECT name, sql FROM sqlite_master WHERE type = 'trigger' ORDER BY name"
        got = migrated.db.execute(triggers).fetchall()
        assert got == fresh.db.execute(triggers).fetchall()
        names = [name for name, _ in got if name.startswith("episodes_")]
        assert names == ["episodes_ad", "episodes_ai", "episodes_au"]
        assert dict(got)["episodes_au"] == FTS_UPDATE_TRIGGER
        for archive in (migrated, fresh):
            assert archive.db["episodes"].detect_fts() == "episodes_fts"
            assert {t.name for t in archive.db["episodes"].triggers} >= {"episodes_au"}
        integrity_check(migrated.db.conn)


def test_a_v5_archive_has_the_schema_of_a_fresh_one_after_migrating(tmp_path: Path) -> None:
    path = copy(tmp_path, "v5.sqlite")
    with Archive(path) as migrated, Archive(tmp_path / "fresh.db") as fresh:
        assert schema(migrated.db.conn) == schema(fresh.db.conn)


def test_datasette_still_detects_the_fts_table(tmp_path: Path) -> None:
    utils = pytest.importorskip("datasette.utils", reason="datasette is not installed")
    path = copy(tmp_path, "v5.sqlite")
    Archive(path).close()
    conn = sqlite3.connect(path)
    assert utils.detect_fts(conn, "episodes") == "episodes_fts"
    conn.close()
