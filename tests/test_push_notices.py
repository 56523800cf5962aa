"""Migration v22 (issue #29): ``push_notices``, WebSub notifications kept as evidence, on an
archive of the previous version (the v14 fixture brought to 21 by migrations 15 to 21 alone):
every row stays, the table is there, the schema is a fresh archive's; a body is kept to its
cap, with the whole body's size and sha256; only the last NOTICES_KEPT per feed stay."""

from __future__ import annotations

import hashlib
import shutil
import sqlite3
from contextlib import closing
from pathlib import Path

import pytest
from archive_rows import every_row, schema

from podarchive.store import Archive, check_archive
from podarchive.store import base as store_base
from podarchive.store.migrations_push_notices import _push_notices_v22
from podarchive.store.push import NOTICE_BODY_CAP, NOTICES_KEPT, PushNotice
from podarchive.store.schema import MIGRATIONS, SCHEMA_VERSION

V14 = Path(__file__).parent / "fixtures" / "archives" / "v14.sqlite"


def v21_archive(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "archive.db"
    shutil.copy(V14, path)
    with monkeypatch.context() as m:
        m.setattr(store_base, "MIGRATIONS", store_base.MIGRATIONS[:21])
        m.setattr(store_base, "SCHEMA_VERSION", 21)
        with Archive(path) as v21:
            assert v21.schema_version == 21
    return path


def test_a_v21_archive_gets_the_table_keeping_every_row(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert MIGRATIONS[21] is _push_notices_v22
    path = v21_archive(tmp_path, monkeypatch)
    with closing(sqlite3.connect(path)) as conn:
        before = every_row(conn)
        schema_before = schema(conn)
    monkeypatch.setattr(store_base, "MIGRATIONS", store_base.MIGRATIONS[:22])  # 22 alone
    monkeypatch.setattr(store_base, "SCHEMA_VERSION", 22)
    with Archive(path) as archive, Archive(tmp_path / "fresh.db") as fresh:
        assert archive.schema_version == fresh.schema_version == 22
        assert schema(archive.db.conn) == schema(fresh.db.conn)
        after = every_row(archive.db.conn)
        schema_after = schema(archive.db.conn)
    assert after == before | {"push_notices": []}
    assert {k: v for k, v in schema_after.items() if k in schema_before} == schema_before
    added = set(schema_after) - set(schema_before)
    assert added == {("table", "push_notices"), ("index", "idx_push_notices_feed")}
    _, problems = check_archive(path)
    assert problems == []


def notice(url: str, body: bytes, valid: bool = True) -> PushNotice:
    return PushNotice.of(
        url,
        url,
        body,
        received_at="2026-12-06T12:00:00Z",
        signature_valid=valid,
        content_type="application/rss+xml",
    )


def test_a_migrated_archive_keeps_the_last_notices_capped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = v21_archive(tmp_path, monkeypatch)
    big = b"<rss>" + b"x" * (NOTICE_BODY_CAP * 2)
    with Archive(path) as archive:
        assert archive.schema_version == SCHEMA_VERSION
        archive.save_push_notices([notice("https://a/", big, valid=False)])
        (kept,) = archive.push_notices("https://a/")
        assert kept.size == len(big)
        assert kept.sha256 == hashlib.sha256(big).hexdigest()
        assert kept.body == big[:NOTICE_BODY_CAP]
        assert kept.signature_valid is False
        assert kept.content_type == "application/rss+xml"
        for i in range(NOTICES_KEPT + 5):  # bounded: the oldest go
            archive.save_push_notices([notice("https://a/", b"%d" % i), notice("https://b/", b"b")])
        a = archive.push_notices("https://a/")
        assert [n.body for n in a] == [b"%d" % i for i in range(5, NOTICES_KEPT + 5)]
        assert len(archive.push_notices("https://b/")) == NOTICES_KEPT
