"""Migration 15 (#27, captures and header sets) on archives written before it.

``tests/fixtures/archives/v14.sqlite`` was written by schema 14's code (git ``64c413c``) with
the three runs of tests/captures_site.py (tests/fixtures/README.md). Migration 15 only adds
tables: every row stays, and every body stored before comes out of ``uncaptured_bodies``
with what is known of how it was fetched, its SHA-256 that of the exact stored bytes. The
older fixtures (v11, v13) open and migrate the same way.
"""

from __future__ import annotations

import hashlib
import shutil
import sqlite3
from contextlib import closing
from pathlib import Path

import pytest
from archive_rows import every_row, schema

from podarchive.core.types import Exchange
from podarchive.store import APPLICATION_ID, SCHEMA_VERSION, Archive, check_archive
from podarchive.store import base as store_base

ARCHIVES = Path(__file__).parent / "fixtures" / "archives"
V14 = ARCHIVES / "v14.sqlite"
NEW_TABLES = {"captures", "header_sets"}


def test_the_fixture_is_what_its_readme_says() -> None:
    assert V14.stat().st_size < 200_000
    with closing(sqlite3.connect(f"file:{V14}?mode=ro", uri=True)) as conn:
        assert conn.execute("PRAGMA user_version").fetchone() == (14,)
        assert conn.execute("PRAGMA application_id").fetchone() == (APPLICATION_ID,)
        assert conn.execute("PRAGMA journal_mode").fetchone() == ("delete",)
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        assert not tables & NEW_TABLES
        counts = {
            t: conn.execute(f"SELECT count(*) FROM {t}").fetchone()[0]
            for t in ("feeds", "episodes", "snapshots", "documents", "media_payloads")
        }
        assert counts == {
            "feeds": 1, "episodes": 2, "snapshots": 2, "documents": 6, "media_payloads": 2
        }  # fmt: skip


def test_a_v14_archive_migrates_keeping_every_row(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Migration 15 alone: later migrations may change the schema, so it stops at 15."""
    monkeypatch.setattr(store_base, "MIGRATIONS", store_base.MIGRATIONS[:15])
    monkeypatch.setattr(store_base, "SCHEMA_VERSION", 15)
    path = tmp_path / "archive.db"
    shutil.copy(V14, path)
    with closing(sqlite3.connect(path)) as conn:
        before = every_row(conn)
    with Archive(path) as archive, Archive(tmp_path / "fresh.db") as fresh:
        assert archive.schema_version == fresh.schema_version == 15
        assert schema(archive.db.conn) == schema(fresh.db.conn)
        after = every_row(archive.db.conn)
        assert set(after) == set(before) | NEW_TABLES
        assert {t: after[t] for t in before} == before
        assert after["captures"] == after["header_sets"] == []
        assert list(archive.captures()) == []
    assert check_archive(path)[1] == []


def test_every_old_body_comes_out_uncaptured_with_what_is_known(tmp_path: Path) -> None:
    path = tmp_path / "archive.db"
    shutil.copy(V14, path)
    with Archive(path) as archive:
        bodies = list(archive.uncaptured_bodies())
        kinds = sorted(b.kind for b in bodies)
        assert kinds == [
            "chapters", "chapters", "feed", "feed", "media", "media", "page", "page",
            "transcript", "transcript",
        ]  # fmt: skip
        assert [b.fetched_at for b in bodies] == sorted(b.fetched_at for b in bodies)
        for body in bodies:
            assert body.feed_id == 1
            assert body.url.startswith("http://127.0.0.1:")
            if body.kind == "media":
                (sha,) = archive.db.execute(
                    "SELECT sha256 FROM media_payloads WHERE sha256 = ?", [body.body_ref[1]]
                ).fetchone()
                assert body.sha256 == sha
                assert body.media_ext == ".mp3"
                assert dict(body.headers)["etag"].startswith('"mp3-')
                assert dict(body.headers)["content-type"] == "audio/mpeg"
                continue
            data = archive.capture_body(body.body_ref)
            assert hashlib.sha256(data).hexdigest() == body.sha256
            assert len(data) == body.size
            assert dict(body.headers)["content-type"] == body.content_type
            if body.kind != "feed":
                assert body.episode_id is not None
        feeds = [dict(b.headers) for b in bodies if b.kind == "feed"]
        assert [h.get("etag") for h in feeds] == [None, '"feed-v2"']  # the current one's
        pages = [dict(b.headers) for b in bodies if b.kind == "page"]
        assert sorted(h["etag"] for h in pages) == ['"page-1"', '"page-2"']
        assert list(archive.uncaptured_bodies(feed_ids=[2])) == []
        assert len(list(archive.uncaptured_bodies(since="2026-12-02T00:00:00Z"))) == 1


def test_an_old_body_fetched_again_gets_its_capture_and_leaves_the_list(tmp_path: Path) -> None:
    path = tmp_path / "archive.db"
    shutil.copy(V14, path)
    with Archive(path) as archive:
        page = next(b for b in archive.uncaptured_bodies() if b.kind == "page")
        exchange = Exchange(
            "GET", page.url, (("Host", "127.0.0.1"),), "HTTP/1.1", 200, "OK",
            (("Content-Type", "text/html"),), "127.0.0.1", "2026-12-04T09:00:00Z",
        )  # fmt: skip
        archive.record_captures(
            [exchange], kind="page", feed_id=page.feed_id, episode_id=page.episode_id,
            body_sha256=page.sha256, body_size=page.size,
        )  # fmt: skip
        (capture,) = archive.captures()
        assert capture.body_ref == page.body_ref
        assert page not in list(archive.uncaptured_bodies())
        assert len(list(archive.uncaptured_bodies())) == 9


@pytest.mark.parametrize("version", ["v11", "v13"])
def test_older_fixtures_open_and_every_body_is_uncaptured(tmp_path: Path, version: str) -> None:
    path = tmp_path / "archive.db"
    shutil.copy(ARCHIVES / f"{version}.sqlite", path)
    with closing(sqlite3.connect(path)) as conn:
        before = every_row(conn)
    with Archive(path) as archive:
        assert archive.schema_version == SCHEMA_VERSION
        after = every_row(archive.db.conn)  # later migrations may add columns: count rows
        assert {t: len(after[t]) for t in before} == {t: len(rows) for t, rows in before.items()}
        bodies = list(archive.uncaptured_bodies())
        assert len(bodies) == len(before["snapshots"]) + len(before["documents"])
        for body in bodies:
            data = archive.capture_body(body.body_ref)
            assert hashlib.sha256(data).hexdigest() == body.sha256


def test_an_old_archive_is_read_without_a_write(tmp_path: Path) -> None:
    """``open_to_read`` (status, the web layer) brings a copy in memory up to date; the file
    itself is not touched (the next command that writes migrates it)."""
    path = tmp_path / "archive.db"
    shutil.copy(V14, path)
    data = path.read_bytes()
    with Archive.open_to_read(path) as reader:
        assert reader.schema_version == SCHEMA_VERSION
        assert reader.count("captures") == 0
        assert [s["url"] for s in reader.feed_statuses()] == [
            r[0] for r in sqlite3.connect(V14).execute("SELECT url FROM feeds")
        ]
    assert path.read_bytes() == data
    assert sorted(p.name for p in tmp_path.iterdir()) == ["archive.db"]
