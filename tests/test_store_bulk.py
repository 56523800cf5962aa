"""``Archive.deferred_link_indexes``: a big first ingest builds the links' lookup indexes once.

The archive it leaves has the same rows and the same ``sqlite_master`` (names and SQL) as
one written with the indexes in place; lookups by URL and domain answer the same meanwhile;
the indexes come back when the run fails, and after a crash by the next opening to write.
"""

from __future__ import annotations

import sqlite3
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest
from test_store_streaming import bodies, every_row

from podarchive.store import Archive, FeedSave
from podarchive.store.schema import LOOKUP_INDEXES

BY_URL = "SELECT episode_id, position FROM links WHERE normalized_url = ? ORDER BY 1, 2"
BY_DOMAIN = "SELECT count(*) FROM links WHERE domain = ?"


def master(path: Path) -> set[tuple[str, str, str | None]]:
    with closing(sqlite3.connect(path)) as conn:
        return set(conn.execute("SELECT type, name, sql FROM sqlite_master"))


def save_bodies(archive: Archive, seen: list[Any] | None = None) -> None:
    feed = archive.ensure_feed("https://ex.example/feed", "Show", "2026-12-01T00:00:00Z")
    for day, (writes, listed) in enumerate(bodies(), start=1):
        archive.save_feed(FeedSave(
            feed.id, {"title": "Show"}, writes, status=200, etag=None, last_modified=None,
            content_hash=f"h{day}", now=f"2026-12-0{day}T09:00:00Z", records=(),
            also_listed=listed,
        ))  # fmt: skip
        if seen is not None:
            seen.append(
                (
                    archive.db.execute(BY_URL, ["https://ex.example/7"]).fetchall(),
                    archive.db.execute(BY_DOMAIN, ["ex.example"]).fetchone(),
                )
            )


def test_a_deferred_ingest_leaves_the_archive_a_plain_one_leaves(tmp_path: Path) -> None:
    plain, deferred = tmp_path / "plain.db", tmp_path / "deferred.db"
    plain_answers: list[Any] = []
    deferred_answers: list[Any] = []
    with Archive(plain) as archive:
        save_bodies(archive, plain_answers)
    with Archive(deferred) as archive:
        with archive.deferred_link_indexes():
            names = {n for (n,) in archive.db.execute("SELECT name FROM sqlite_master")}
            assert not names & set(LOOKUP_INDEXES)
            save_bodies(archive, deferred_answers)
        names = {n for (n,) in archive.db.execute("SELECT name FROM sqlite_master")}
        assert set(LOOKUP_INDEXES) <= names
    assert deferred_answers == plain_answers  # lookups meanwhile: slower, not wrong
    assert every_row(deferred) == every_row(plain)
    assert master(deferred) == master(plain)


def test_the_indexes_come_back_when_the_run_fails(tmp_path: Path) -> None:
    path = tmp_path / "a.db"
    with Archive(path) as archive, pytest.raises(RuntimeError), archive.deferred_link_indexes():
        raise RuntimeError("a bug in the run")
    assert master(path) == master(_fresh(tmp_path))


def test_after_a_crash_the_next_opening_to_write_builds_them(tmp_path: Path) -> None:
    path = tmp_path / "a.db"
    with Archive(path) as archive:
        save_bodies(archive)
    with closing(sqlite3.connect(path)) as conn:  # as a run killed inside the block leaves it
        for name in LOOKUP_INDEXES:
            conn.execute(f"DROP INDEX {name}")
        conn.commit()
    with Archive(path) as archive:
        plan = archive.db.execute(f"EXPLAIN QUERY PLAN {BY_URL}", ["x"]).fetchall()
        assert "idx_links_normalized_url" in str(plan)
    assert master(path) == master(_fresh(tmp_path))


def _fresh(tmp_path: Path) -> Path:
    path = tmp_path / "fresh.db"
    Archive(path).close()
    return path
