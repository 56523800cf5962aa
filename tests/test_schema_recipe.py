"""The recipe for a new episode field, proved once on a scratch copy of the store (issue #11).

A new episode field from the feed takes: the parse field, the column in the live list
(``schema.EPISODE_COLUMNS``), one migration and its test, nothing else. Here the store
package is copied and exactly two edits are made to the copy's ``schema.py`` (the column
``example_field`` appended to the live list, and the next migration adding it); the EpisodeWrite
plays the parse field. A fresh archive opens (no duplicate column), an archive written by
the previous version migrates keeping every row, and the field is stored.
"""

from __future__ import annotations

import importlib
import shutil
import sqlite3
import sys
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

import podarchive.store
from podarchive.core.types import EpisodeWrite, FetchRecord
from podarchive.store import SCHEMA_VERSION, Archive, FeedSave, schema

NOW = "2026-12-02T12:00:00Z"
LATER = "2026-12-02T13:00:00Z"
SCRATCH = "scratch_store"

# the two edits of the recipe, as a maintainer would make them in schema.py
LIVE_LIST = (
    'EPISODE_COLUMNS = (*V1_EPISODE_COLUMNS, "simple_chapters")',
    'EPISODE_COLUMNS = (*V1_EPISODE_COLUMNS, "simple_chapters", "example_field")',
)
MIGRATION = '''

def _example_field_v21(db: sqlite_utils.Database) -> None:
    """The recipe: one new episode field from the feed."""
    db.table("episodes").add_column("example_field", str)


Migration = Callable'''
LAST_MIGRATION = (
    "    _disk_v24,  # v24 (#30: the link summary without a second copy of every URL)\n)"
)


def edit_once(text: str, old: str, new: str) -> str:
    assert text.count(old) == 1, f"the recipe's anchor {old!r} moved: update this test"
    return text.replace(old, new)


@pytest.fixture
def scratch(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[ModuleType]:
    """``podarchive.store`` with the recipe applied, imported as ``scratch_store``."""
    copy = tmp_path / "scratch" / SCRATCH
    shutil.copytree(
        Path(podarchive.store.__file__).parent, copy, ignore=shutil.ignore_patterns("__pycache__")
    )
    text = (copy / "schema.py").read_text(encoding="utf-8")
    text = edit_once(text, *LIVE_LIST)
    text = edit_once(text, "\n\nMigration = Callable", MIGRATION)
    text = edit_once(text, LAST_MIGRATION, f"{LAST_MIGRATION[:-2]}\n    _example_field_v21,\n)")
    (copy / "schema.py").write_text(text, encoding="utf-8")
    monkeypatch.syspath_prepend(str(copy.parent))
    try:
        yield importlib.import_module(SCRATCH)
    finally:
        for name in [n for n in sys.modules if n == SCRATCH or n.startswith(f"{SCRATCH}.")]:
            del sys.modules[name]


def episode(key: str, example: str | None = None) -> EpisodeWrite:
    row: dict[str, Any] = {"guid": key, "title": f"Title {key}", "notes_text": "notes"}
    if example is not None:
        row["example_field"] = example  # what the parse field would put there
    return EpisodeWrite(key=key, row=row, links=())


def save(archive: Any, episodes: list[EpisodeWrite], now: str = NOW) -> tuple[int, int, int]:
    feed = archive.ensure_feed("https://ex.example/feed", "Show", now)
    stats = archive.save_feed(
        FeedSave(
            feed.id,
            {"title": "Show"},
            episodes,
            status=200,
            etag=None,
            last_modified=None,
            content_hash=f"h-{now}",
            now=now,
            records=[FetchRecord("https://ex.example/feed", "feed", now, 5, 200, 10)],
        )
    )
    return stats.new, stats.changed, stats.unchanged


def rows(conn: sqlite3.Connection) -> dict[str, list[dict[str, Any]]]:
    conn.row_factory = sqlite3.Row
    tables = [
        r[0]
        for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
        if "_fts" not in r[0]  # FTS shadow tables: some have no rowid
    ]
    return {
        t: sorted((dict(r) for r in conn.execute(f"SELECT * FROM [{t}]")), key=repr)
        for t in tables  # some (the link summary's, #30) have no rowid
    }


def master(conn: sqlite3.Connection) -> list[tuple[str, str, str | None]]:
    query = "SELECT type, name, sql FROM sqlite_master ORDER BY type, name"
    return [tuple(r) for r in conn.execute(query)]


def test_a_fresh_archive_of_the_next_version_opens(scratch: ModuleType, tmp_path: Path) -> None:
    assert scratch.SCHEMA_VERSION == SCHEMA_VERSION + 1
    assert scratch.EPISODE_COLUMNS[-1] == "example_field"
    with scratch.Archive(tmp_path / "fresh.db") as archive:  # no "duplicate column name"
        assert archive.schema_version == scratch.SCHEMA_VERSION
        assert "example_field" in archive.db.table("episodes").columns_dict


def test_an_archive_of_the_previous_version_migrates_keeping_every_row(
    scratch: ModuleType, tmp_path: Path
) -> None:
    path = tmp_path / "archive.db"
    with Archive(path) as previous:  # the podarchive of today writes it
        assert save(previous, [episode("a"), episode("b")]) == (2, 0, 0)
    with closing(sqlite3.connect(path)) as conn:
        before = rows(conn)
    with scratch.Archive(path) as archive:
        assert archive.schema_version == scratch.SCHEMA_VERSION
    with scratch.Archive(tmp_path / "fresh.db"):
        pass
    with (
        closing(sqlite3.connect(path)) as conn,
        closing(sqlite3.connect(tmp_path / "fresh.db")) as fresh,
    ):
        after = rows(conn)
        assert master(conn) == master(fresh)  # migrated and fresh archives alike
    assert after.keys() == before.keys()
    for table, old in before.items():
        new = [{k: r[k] for k in o} for o, r in zip(old, after[table], strict=True)]
        assert new == old, table  # every row, every old value
    assert [r["example_field"] for r in after["episodes"]] == [None, None]


def test_an_episode_write_carrying_the_field_stores_it(scratch: ModuleType, tmp_path: Path) -> None:
    with scratch.Archive(tmp_path / "a.db") as archive:
        assert save(archive, [episode("a", "one"), episode("b")]) == (2, 0, 0)
        assert save(archive, [episode("a", "two"), episode("b")], LATER) == (0, 1, 1)
        stored = archive.db.execute("SELECT key, example_field FROM episodes ORDER BY key")
        assert stored.fetchall() == [("a", "two"), ("b", None)]
        history = archive.export_history(1)  # reparse carries it too
        assert [e["example_field"] for e in history.episodes] == ["two", None]


def test_no_migration_reads_a_live_column_list(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Migrations use frozen lists only: growing a live list changes no table they make."""
    monkeypatch.setattr(schema, "EPISODE_COLUMNS", (*schema.EPISODE_COLUMNS, "not_a_column"))
    monkeypatch.setattr(schema, "FEED_META_COLUMNS", (*schema.FEED_META_COLUMNS, "not_a_column"))
    with Archive(tmp_path / "a.db") as archive:
        every_sql = " ".join(sql or "" for _, _, sql in master(archive.db.conn))
    assert "not_a_column" not in every_sql
