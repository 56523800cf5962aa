"""The v12 fixture and migration 13 (issue #24) on it: how each page's notes were found.

`tests/fixtures/archives/v12.sqlite` was made by the script in tests/fixtures/README.md (the
v11 history) against the schema-12 code. Migration 13 (``_page_methods_v13``) adds
``page_method``, ``page_evidence`` and ``page_confidence`` to ``episodes``: NULL on every row
written before, until ``reparse`` re-reads the kept page bodies, without the network, with
each episode's feed notes.
"""

from __future__ import annotations

import shutil
import sqlite3
from contextlib import closing
from pathlib import Path

import pytest
from archive_rows import every_row, schema
from commands import invoke, query

from podarchive.store import APPLICATION_ID, Archive, check_archive
from podarchive.store import base as store_base

V12 = Path(__file__).parent / "fixtures" / "archives" / "v12.sqlite"
NEW_COLUMNS = ("page_method", "page_evidence", "page_confidence")


def copy_v12(tmp_path: Path) -> Path:
    path = tmp_path / "archive.db"
    shutil.copy(V12, path)
    return path


def test_the_fixture_is_what_its_readme_says() -> None:
    with closing(sqlite3.connect(f"file:{V12}?mode=ro", uri=True)) as conn:
        assert conn.execute("PRAGMA user_version").fetchone() == (12,)
        assert conn.execute("PRAGMA application_id").fetchone() == (APPLICATION_ID,)
        assert conn.execute("PRAGMA journal_mode").fetchone() == ("delete",)
        columns = [r[1] for r in conn.execute("PRAGMA table_info(episodes)")]
        assert not set(NEW_COLUMNS) & set(columns)

        def count(sql: str) -> int:
            return int(conn.execute(sql).fetchone()[0])

        assert count("SELECT count(*) FROM feeds") == 2
        assert count("SELECT count(*) FROM episodes") == 9
        assert count("SELECT count(*) FROM episodes WHERE page_status = 'ok'") == 8
        assert count("SELECT count(DISTINCT episode_id) FROM page_bodies") == 8
        assert count("SELECT count(*) FROM transcript_segments WHERE revision_id IS NOT NULL") > 0


def test_a_v12_archive_migrates_to_13_keeping_every_row(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Migration 13 alone: later migrations may change rows and schema, so it stops at 13."""
    monkeypatch.setattr(store_base, "MIGRATIONS", store_base.MIGRATIONS[:13])
    monkeypatch.setattr(store_base, "SCHEMA_VERSION", 13)
    path = copy_v12(tmp_path)
    with closing(sqlite3.connect(path)) as conn:
        before = every_row(conn)
        schema_before = schema(conn)
    with Archive(path) as archive, Archive(tmp_path / "fresh.db") as fresh:
        assert archive.schema_version == fresh.schema_version == 13
        assert schema(archive.db.conn) == schema(fresh.db.conn)
        after = every_row(archive.db.conn)
        schema_after = schema(archive.db.conn)
    # every row kept, each page with no method, evidence nor confidence yet
    episodes = [(*row, None, None, None) for row in before["episodes"]]
    assert after == before | {"episodes": episodes}
    changed = {k for k in schema_after if schema_before.get(k) != schema_after[k]}
    assert changed == {("table", "episodes")}
    tables, problems = check_archive(path)
    assert problems == []
    assert set(tables) == {"episodes_fts", "transcript_segments_fts", "chapters_fts"}


def test_reparse_says_how_every_kept_page_was_read_without_the_network(tmp_path: Path) -> None:
    """No loopback site runs: the pages are re-read from their kept bodies."""
    path = copy_v12(tmp_path)
    notes = "SELECT id, page_notes_html, page_notes_text FROM episodes ORDER BY id"
    notes_before = query(path, notes)
    code, out, err = invoke("reparse", "--db", str(path))
    assert (code, err) == (0, "")
    assert "8 pages re-read (8 changed, 0 kept as they were)" in out  # each says how, now
    pages = query(
        path,
        "SELECT page_status, page_method, page_evidence, page_confidence FROM episodes "
        "WHERE page_url IS NOT NULL ORDER BY id",
    )
    ok = [p for p in pages if p[0] == "ok"]
    assert len(ok) == 8
    for _, method, evidence, confidence in ok:
        assert method
        assert evidence
        assert 0.0 <= confidence <= 1.0
    assert [p[1:] for p in pages if p[0] != "ok"] == [(None, None, None)]  # the page that 404s
    # the seed host's notes come out as they were stored
    assert query(path, notes) == notes_before
    # a second reparse re-reads the same: not one page changes
    again = "SELECT * FROM episodes ORDER BY id"
    before = query(path, again)
    code, out, _ = invoke("reparse", "--db", str(path))
    assert (code, "8 pages re-read (0 changed, 0 kept as they were)" in out) == (0, True)
    assert query(path, again) == before
