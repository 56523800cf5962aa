"""Migration v17 (issue #28): the images' ledger (``image_files``, ``image_fetches``,
``image_state``) on an archive of the previous version: the v14 fixture
(``tests/fixtures/archives/v14.sqlite``) brought to 16 by migrations 15 and 16 alone, then
opened by this version. Only tables and indexes are added; every row stays; the schema is a
fresh archive's; the migrated archive takes image rows and moves them with their feed."""

from __future__ import annotations

import shutil
import sqlite3
from contextlib import closing
from pathlib import Path

import pytest
from archive_rows import every_row, schema

from podarchive.store import Archive, MediaState, check_archive
from podarchive.store import base as store_base
from podarchive.store.migrations_images import _image_files_v17
from podarchive.store.schema import MIGRATIONS, SCHEMA_VERSION

V14 = Path(__file__).parent / "fixtures" / "archives" / "v14.sqlite"
IMAGE_TABLES = {"image_files", "image_fetches", "image_state"}
NOW = "2026-12-06T12:00:00Z"


def v16_archive(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "archive.db"
    shutil.copy(V14, path)
    with monkeypatch.context() as m:
        m.setattr(store_base, "MIGRATIONS", store_base.MIGRATIONS[:16])
        m.setattr(store_base, "SCHEMA_VERSION", 16)
        with Archive(path) as v16:
            assert v16.schema_version == 16
    return path


def test_a_v16_archive_gets_the_image_tables_keeping_every_row(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert MIGRATIONS[16] is _image_files_v17
    path = v16_archive(tmp_path, monkeypatch)
    with closing(sqlite3.connect(path)) as conn:
        before = every_row(conn)
        schema_before = schema(conn)
    monkeypatch.setattr(store_base, "MIGRATIONS", store_base.MIGRATIONS[:17])  # 17 alone
    monkeypatch.setattr(store_base, "SCHEMA_VERSION", 17)
    with Archive(path) as archive, Archive(tmp_path / "fresh.db") as fresh:
        assert archive.schema_version == fresh.schema_version == 17
        assert schema(archive.db.conn) == schema(fresh.db.conn)
        after = every_row(archive.db.conn)
        schema_after = schema(archive.db.conn)
    assert after == before | dict.fromkeys(IMAGE_TABLES, [])
    assert {k: v for k, v in schema_after.items() if k in schema_before} == schema_before
    added = {name for kind, name in set(schema_after) - set(schema_before) if kind == "table"}
    assert added == IMAGE_TABLES
    _, problems = check_archive(path)
    assert problems == []


def test_a_migrated_archive_takes_image_rows(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = v16_archive(tmp_path, monkeypatch)
    sha, other = "ab" * 32, "cd" * 32
    with Archive(path) as archive:
        assert archive.schema_version == SCHEMA_VERSION
        feed_id = archive.feeds()[0][0]
        url = "https://example.com/art.png"
        archive.db.execute("UPDATE feeds SET image = ? WHERE id = ?", [url, feed_id])
        (task,) = archive.images_due(feed_id, NOW)
        assert (task.url, task.source, task.stored) == (url, "image", False)
        for digest in (sha, other):
            archive.record_payload(digest, 5, "image/png", ".png", NOW)
        assert archive.add_image_version(feed_id, url, sha, NOW) == 1
        assert archive.add_image_version(feed_id, url, other, NOW) == 2  # changed bytes
        assert archive.add_image_version(feed_id, url, sha, NOW) == 1  # seen before
        archive.record_image_fetch(feed_id, url, outcome="stored", now=NOW, sha256=other)
        archive.set_image_state(feed_id, url, MediaState(next_check_at="2026-12-07"), NOW)
        assert archive.images_due(feed_id, NOW) == []  # stored, its re-check not yet due
        assert [t.url for t in archive.images_due(feed_id, NOW, recheck=True)] == [url]
        assert [v["version"] for v in archive.image_versions(feed_id, url)] == [1, 2]
        assert archive.drop_image_version(feed_id, url, sha) == 0  # no one else uses it
        queued = {row["sha256"] for row in archive.audit_queue()}
        assert other in queued  # an image's payload is audited too
        assert sha not in queued  # a dropped version's is not
