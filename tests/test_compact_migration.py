"""Migration v23 (issue #30): the link summary's tables as ``WITHOUT ROWID`` tables, on an
archive of the previous version (the v14 fixture brought to 22 by migrations 15 to 22 alone,
with links of several domains added). Every row of every table stays; every canned query
(links, search, the rest) answers the same before and after; the schema is a fresh archive's;
the summary follows the links' changes after the upgrade; the tables take fewer pages."""

from __future__ import annotations

import shutil
import sqlite3
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest
from archive_rows import every_row, schema

from podarchive.store import Archive, check_archive
from podarchive.store import base as store_base
from podarchive.store.migrations_compact import COMPACT_TABLES, _compact_v23
from podarchive.store.migrations_links import LINK_SUMMARY_TABLES, REBUILD_LINK_SUMMARY
from podarchive.store.schema import MIGRATIONS
from podarchive.web.serve import metadata_for

V14 = Path(__file__).parent / "fixtures" / "archives" / "v14.sqlite"
DOMAINS = ("github.com", "gist.github.com", "example.org", "www.example.org")
PARAMS = {
    "q": ["episode", "revised", "notes", "nothing-here"],
    "target": ["github.com", "example.org", "https://github.com/", "https://gist", "x"],
}


def v22_archive(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "archive.db"
    shutil.copy(V14, path)
    with monkeypatch.context() as m:
        m.setattr(store_base, "MIGRATIONS", store_base.MIGRATIONS[:22])
        m.setattr(store_base, "SCHEMA_VERSION", 22)
        with Archive(path) as v22:
            assert v22.schema_version == 22
            _links(v22.db.conn)
    return path


def _links(conn: sqlite3.Connection) -> None:
    """Links of several domains and URLs (repeated, written and normalized) on each episode."""
    episodes = [e for (e,) in conn.execute("SELECT id FROM episodes")]
    rows = [
        (e, f"https://{d.upper()}/{k}?utm_source=x", f"https://{d}/{k}", d, f"link {k}")
        for e in episodes
        for d in DOMAINS
        for k in range(3)
    ]
    with conn:
        conn.executemany(
            "INSERT INTO links (episode_id, source, position, url, normalized_url, domain, text) "
            "VALUES (?, 'feed', (SELECT count(*) FROM links), ?, ?, ?, ?)",
            rows,
        )


def answers(conn: sqlite3.Connection) -> dict[str, list[Any]]:
    """What every canned query answers, for each of a few values of its parameters."""
    out: dict[str, list[Any]] = {}
    for name, query in metadata_for()["databases"]["archive"]["queries"].items():
        sql = query["sql"]
        asked = [p for p in PARAMS if f":{p}" in sql]
        values = PARAMS[asked[0]] if asked else [None]
        out[name] = [conn.execute(sql, {asked[0]: v} if asked else {}).fetchall() for v in values]
    return out


def pages(conn: sqlite3.Connection, tables: tuple[str, ...]) -> int:
    """Pages of ``tables`` and of their keys' indexes, from ``dbstat``."""
    names = [*tables, *(f"sqlite_autoindex_{t}_1" for t in tables)]
    marks = ",".join("?" * len(names))
    row = conn.execute(f"SELECT count(*) FROM dbstat WHERE name IN ({marks})", names).fetchone()
    return int(row[0])


def test_a_v22_archive_keeps_every_row_and_answer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert MIGRATIONS[22] is _compact_v23
    assert set(LINK_SUMMARY_TABLES) <= set(COMPACT_TABLES)
    path = v22_archive(tmp_path, monkeypatch)
    with closing(sqlite3.connect(path)) as conn:
        before, asked = every_row(conn), answers(conn)
        schema_before = schema(conn)
        pages_before = pages(conn, tuple(COMPACT_TABLES))
    assert before["link_domains"]
    assert any(v != [[]] for v in asked.values())
    monkeypatch.setattr(store_base, "MIGRATIONS", store_base.MIGRATIONS[:23])  # 23 alone
    monkeypatch.setattr(store_base, "SCHEMA_VERSION", 23)
    with Archive(path) as archive, Archive(tmp_path / "fresh.db") as fresh:
        assert archive.schema_version == fresh.schema_version == 23
        assert schema(archive.db.conn) == schema(fresh.db.conn)
        assert every_row(archive.db.conn) == before
        assert answers(archive.db.conn) == asked
        assert pages(archive.db.conn, tuple(COMPACT_TABLES)) < pages_before
        after = schema(archive.db.conn)
    gone = set(schema_before) - set(after)
    assert gone == {("index", f"sqlite_autoindex_{t}_1") for t in COMPACT_TABLES}
    for table in COMPACT_TABLES:
        assert "WITHOUT ROWID" in str(after[("table", table)])
    _, problems = check_archive(path)
    assert problems == []


def test_the_summary_follows_the_links_after_the_upgrade(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The triggers write the compact tables: after links are added, moved into a revision
    and deleted, the summary is what it is when rebuilt from the links."""
    path = v22_archive(tmp_path, monkeypatch)
    with Archive(path) as archive:
        conn = archive.db.conn
        _links(conn)
        with conn:
            conn.execute("UPDATE links SET url = url || '#x' WHERE domain = 'github.com'")
            conn.execute("DELETE FROM links WHERE domain = 'example.org' AND text = 'link 0'")
            conn.execute("UPDATE links SET revision_id = NULL WHERE domain = 'gist.github.com'")
        kept = {t: every_row(conn)[t] for t in LINK_SUMMARY_TABLES}
        with conn:
            for sql in REBUILD_LINK_SUMMARY:
                conn.execute(sql)
        assert {t: every_row(conn)[t] for t in LINK_SUMMARY_TABLES} == kept
