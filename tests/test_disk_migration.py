"""Migration v24 (issue #30): ``link_domain_urls`` dropped, on an archive of the previous
version (the v14 fixture brought to 23 by migrations 15 to 23 alone, with links of several
domains added). Every other row stays; every canned query answers the same; the schema is a
fresh archive's; and the triggers, now reading the links' indexes, keep ``link_domains``
exactly what a rebuild from the links gives, through any sequence of link changes."""

from __future__ import annotations

import shutil
import sqlite3
from contextlib import closing
from pathlib import Path

import pytest
from archive_rows import every_row, schema
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_compact_migration import V14, _links, answers

from podarchive.store import Archive, check_archive
from podarchive.store import base as store_base
from podarchive.store.migrations_disk import _disk_v24
from podarchive.store.migrations_links import LINK_SUMMARY_TABLES, REBUILD_LINK_SUMMARY
from podarchive.store.schema import MIGRATIONS


def v23_archive(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "archive.db"
    shutil.copy(V14, path)
    with monkeypatch.context() as m:
        m.setattr(store_base, "MIGRATIONS", store_base.MIGRATIONS[:23])
        m.setattr(store_base, "SCHEMA_VERSION", 23)
        with Archive(path) as v23:
            assert v23.schema_version == 23
            _links(v23.db.conn)
    return path


def summary(conn: sqlite3.Connection) -> dict[str, list[tuple[object, ...]]]:
    return {
        t: sorted(conn.execute(f"SELECT * FROM {t}").fetchall())  # noqa: S608
        for t in LINK_SUMMARY_TABLES
    }


def rebuilt(conn: sqlite3.Connection) -> dict[str, list[tuple[object, ...]]]:
    """The summary a rebuild from the links gives (in a savepoint rolled back)."""
    conn.execute("SAVEPOINT rebuild")
    try:
        for sql in REBUILD_LINK_SUMMARY:
            conn.execute(sql)
        return summary(conn)
    finally:
        conn.execute("ROLLBACK TO rebuild")
        conn.execute("RELEASE rebuild")


def test_a_v23_archive_keeps_every_other_row_and_answer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert MIGRATIONS[23] is _disk_v24
    path = v23_archive(tmp_path, monkeypatch)
    with closing(sqlite3.connect(path)) as conn:
        before, asked = every_row(conn), answers(conn)
        schema_before = schema(conn)
    assert before["link_domains"]
    with Archive(path) as archive, Archive(tmp_path / "fresh.db") as fresh:
        assert archive.schema_version == fresh.schema_version == 24
        assert schema(archive.db.conn) == schema(fresh.db.conn)
        after = every_row(archive.db.conn)
        assert after == {t: rows for t, rows in before.items() if t != "link_domain_urls"}
        assert answers(archive.db.conn) == asked
        assert summary(archive.db.conn) == rebuilt(archive.db.conn)
        gone = set(schema_before) - set(schema(archive.db.conn))
    assert gone == {("table", "link_domain_urls")}
    _, problems = check_archive(path)
    assert problems == []


DOMAINS = ("a.example", "b.example")
URLS = tuple(f"https://{d}/{k}" for d in DOMAINS for k in range(3))
#: one link: episode index, URL index, whether normalized (else NULL), written variant, revised
LINK = st.tuples(
    st.integers(0, 2), st.integers(0, len(URLS) - 1), st.booleans(), st.booleans(), st.booleans()
)
CHANGE = st.tuples(st.sampled_from(("url", "normalized", "revision", "delete")), st.integers())


@pytest.fixture(scope="module")
def archive_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("disk") / "archive.db"
    shutil.copy(V14, path)
    with Archive(path) as archive:
        assert archive.schema_version == 24
    return path


def _insert(
    conn: sqlite3.Connection, episodes: list[int], revision: int, links: list[tuple]
) -> None:
    for e, u, normalized, written, revised in links:
        url = URLS[u]
        conn.execute(
            "INSERT INTO links (episode_id, source, position, url, normalized_url, domain, "
            "revision_id) VALUES (?, 'feed', (SELECT count(*) FROM links), ?, ?, ?, ?)",
            [
                episodes[e % len(episodes)],
                url + "#x" if written else url,
                url if normalized or written else None,
                url.split("/")[2],
                revision if revised else None,
            ],
        )


def _change(conn: sqlite3.Connection, revision: int, change: tuple[str, int]) -> None:
    kind, pick = change
    ids = [i for (i,) in conn.execute("SELECT id FROM links ORDER BY id")]
    if not ids:
        return
    link = ids[pick % len(ids)]
    url = URLS[pick % len(URLS)]
    if kind == "url":
        conn.execute(
            "UPDATE links SET url = ?, normalized_url = ?, domain = ? WHERE id = ?",
            [url, None, url.split("/")[2], link],
        )
    elif kind == "normalized":
        conn.execute("UPDATE links SET normalized_url = url WHERE id = ?", [link])
    elif kind == "revision":
        conn.execute(
            "UPDATE links SET revision_id = CASE WHEN revision_id IS NULL THEN ? END WHERE id = ?",
            [revision, link],
        )
    else:
        conn.execute("DELETE FROM links WHERE id = ?", [link])


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(links=st.lists(LINK, max_size=12), changes=st.lists(CHANGE, max_size=8))
def test_the_triggers_count_what_a_rebuild_counts(
    archive_path: Path, links: list[tuple], changes: list[tuple[str, int]]
) -> None:
    with closing(sqlite3.connect(archive_path, isolation_level=None)) as conn:
        conn.execute("PRAGMA foreign_keys = OFF")
        conn.execute("BEGIN")
        try:
            episodes = [e for (e,) in conn.execute("SELECT id FROM episodes ORDER BY id")][:3]
            revision = conn.execute("SELECT max(id) FROM episode_revisions").fetchone()[0]
            conn.execute("DELETE FROM links")
            assert summary(conn) == {t: [] for t in LINK_SUMMARY_TABLES}
            _insert(conn, episodes, revision, links)
            assert summary(conn) == rebuilt(conn)
            for change in changes:
                _change(conn, revision, change)
                assert summary(conn) == rebuilt(conn)
        finally:
            conn.execute("ROLLBACK")
