"""The v7 fixture: an archive written by the schema-v7 code, for the next migration's test.

`tests/fixtures/archives/v7.sqlite` was made by the script in tests/fixtures/README.md (the v6
one, asserting schema 7) run against the code of the commit that added it. Until a migration 8
exists, opening it must change no row and leave the schema a fresh archive has; once one
exists, these tests say what it must keep.
"""

from __future__ import annotations

import shutil
import sqlite3
from contextlib import closing
from pathlib import Path
from typing import Any

from podarchive.store import APPLICATION_ID, SCHEMA_VERSION, Archive

V7 = Path(__file__).parent / "fixtures" / "archives" / "v7.sqlite"


def every_row(conn: sqlite3.Connection) -> dict[str, list[tuple[Any, ...]]]:
    """Every row of every table (FTS shadow tables too), in a stable order."""
    tables = [
        name
        for (name,) in conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name != 'episodes_fts'"
        )
    ]
    return {t: sorted(conn.execute(f"SELECT * FROM [{t}]").fetchall(), key=repr) for t in tables}


def schema(conn: sqlite3.Connection) -> set[tuple[str, str, str | None]]:
    return set(conn.execute("SELECT type, name, sql FROM sqlite_master"))


def test_the_fixture_is_what_its_readme_says() -> None:
    with closing(sqlite3.connect(f"file:{V7}?mode=ro", uri=True)) as conn:
        assert conn.execute("PRAGMA user_version").fetchone() == (7,)
        assert conn.execute("PRAGMA application_id").fetchone() == (APPLICATION_ID,)
        assert conn.execute("PRAGMA journal_mode").fetchone() == ("delete",)
        counts = {t: n for t, n in ((t, len(r)) for t, r in every_row(conn).items())}
    assert counts["feeds"] == 2
    assert counts["episodes"] == 9
    assert counts["episode_revisions"] >= 1  # "Strides (revised)"
    assert counts["snapshots"] >= 3  # one of them a delta
    assert counts["links"] > 0
    assert counts["fetches"] > 0


def test_a_v7_archive_opens_keeping_every_row_with_a_fresh_archive_s_schema(
    tmp_path: Path,
) -> None:
    path = tmp_path / "archive.db"
    shutil.copy(V7, path)
    with closing(sqlite3.connect(path)) as conn:
        before = every_row(conn)
    with Archive(path) as archive, Archive(tmp_path / "fresh.db") as fresh:
        assert archive.schema_version == SCHEMA_VERSION
        assert schema(archive.db.conn) == schema(fresh.db.conn)
        rows_after = every_row(archive.db.conn)
        assert archive.db.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
    for table, rows in before.items():  # a later migration may add columns, never lose rows
        assert len(rows_after[table]) == len(rows), table
    if SCHEMA_VERSION == 7:
        assert rows_after == before
