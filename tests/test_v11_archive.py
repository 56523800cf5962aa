"""The v11 fixture and migration 12 (issue #23) on it: ``fetches.warning``, every row kept.

`tests/fixtures/archives/v11.sqlite` was made by the script in tests/fixtures/README.md (the
v10 history) against the schema-11 code. Migration 12 (``_fetch_warnings_v12``) adds the
column ``warning`` to ``fetches`` (NULL on every row written before: no fetch then said it
lost episodes) and a partial index of the rows that have one; nothing else changes. The
upgraded archive then records a lossy body's warning, and ``status`` shows it.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
from contextlib import closing
from pathlib import Path

import pytest
from archive_rows import every_row, schema
from click.testing import CliRunner
from loopback import LoopbackSite
from test_kept_items import LOSSY, LOST

from podarchive.cli import cli
from podarchive.store import APPLICATION_ID, Archive, check_archive
from podarchive.store import base as store_base

V11 = Path(__file__).parent / "fixtures" / "archives" / "v11.sqlite"
WARNING_INDEX = (
    "CREATE INDEX idx_fetches_warning ON fetches (feed_id, started_at) WHERE warning IS NOT NULL"
)


def copy_v11(tmp_path: Path) -> Path:
    path = tmp_path / "archive.db"
    shutil.copy(V11, path)
    return path


def test_the_fixture_is_what_its_readme_says() -> None:
    with closing(sqlite3.connect(f"file:{V11}?mode=ro", uri=True)) as conn:
        assert conn.execute("PRAGMA user_version").fetchone() == (11,)
        assert conn.execute("PRAGMA application_id").fetchone() == (APPLICATION_ID,)
        assert conn.execute("PRAGMA journal_mode").fetchone() == ("delete",)
        columns = [r[1] for r in conn.execute("PRAGMA table_info(fetches)")]
        assert "warning" not in columns

        def count(sql: str) -> int:
            return int(conn.execute(sql).fetchone()[0])

        assert count("SELECT count(*) FROM feeds") == 2
        assert count("SELECT count(*) FROM episodes") == 9
        assert count("SELECT count(*) FROM fetches WHERE kind = 'feed'") >= 5
        assert count("SELECT count(*) FROM fetches WHERE error IS NOT NULL") > 0
        assert count("SELECT count(*) FROM episode_revisions") > 0


def test_a_v11_archive_migrates_to_12_keeping_every_row(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Migration 12 alone: later migrations may change rows and schema, so it stops at 12."""
    monkeypatch.setattr(store_base, "MIGRATIONS", store_base.MIGRATIONS[:12])
    monkeypatch.setattr(store_base, "SCHEMA_VERSION", 12)
    path = copy_v11(tmp_path)
    with closing(sqlite3.connect(path)) as conn:
        before = every_row(conn)
        schema_before = schema(conn)
    with Archive(path) as archive, Archive(tmp_path / "fresh.db") as fresh:
        assert archive.schema_version == fresh.schema_version == 12
        assert schema(archive.db.conn) == schema(fresh.db.conn)
        after = every_row(archive.db.conn)
        schema_after = schema(archive.db.conn)
    # every row kept, each fetch with no warning; the FTS shadow tables too
    assert after == before | {"fetches": [(*row, None) for row in before["fetches"]]}
    changed = {k for k in schema_after if schema_before.get(k) != schema_after[k]}
    assert changed == {("table", "fetches"), ("index", "idx_fetches_warning")}
    assert schema_after[("index", "idx_fetches_warning")] == WARNING_INDEX
    tables, problems = check_archive(path)
    assert problems == []
    assert set(tables) == {"episodes_fts", "transcript_segments_fts", "chapters_fts"}


def test_the_upgraded_archive_records_a_lossy_body_and_status_shows_it(
    tmp_path: Path, site: LoopbackSite
) -> None:
    path = copy_v11(tmp_path)
    runner = CliRunner()
    doc = json.loads(runner.invoke(cli, ["status", "--json", "--db", str(path)]).stdout)
    assert [f["kept_fewer"] for f in doc["feeds"]] == [None, None]  # read through a migration
    site.serve("/lossy.xml", LOSSY)
    url = site.url("/lossy.xml")
    result = runner.invoke(cli, ["run", url, "--db", str(path), "--allow-private-hosts"])
    assert (result.exit_code, result.stderr) == (0, f"podarchive: {url}: warning: {LOST}\n")
    with closing(sqlite3.connect(path)) as conn:
        assert conn.execute("PRAGMA user_version").fetchone() == (store_base.SCHEMA_VERSION,)
        rows = conn.execute("SELECT url, warning FROM fetches WHERE warning IS NOT NULL")
        assert rows.fetchall() == [(url, LOST)]
        plan = conn.execute(
            "EXPLAIN QUERY PLAN SELECT warning FROM fetches WHERE feed_id = 3 "
            "AND warning IS NOT NULL ORDER BY started_at DESC, id DESC LIMIT 1"
        ).fetchall()
        assert "idx_fetches_warning" in " ".join(str(r[-1]) for r in plan)
    doc = json.loads(runner.invoke(cli, ["status", "--json", "--db", str(path)]).stdout)
    assert {f["title"]: f["kept_fewer"] for f in doc["feeds"]} == {
        None: None,  # the feed that answers HTTP 500
        "PyTorch Developer Podcast": None,
        "Lossy Show": LOST,
    }
