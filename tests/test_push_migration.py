"""Migration v18 (issue #29): ``push_subscriptions`` on an archive of the previous version
(the v14 fixture brought to 17 by migrations 15 to 17 alone): every row stays, the table is
there and the schema is a fresh archive's."""

from __future__ import annotations

import shutil
import sqlite3
from contextlib import closing
from pathlib import Path

import pytest
from archive_rows import every_row, schema

from podarchive.rules.push import Subscription
from podarchive.store import SCHEMA_VERSION, Archive, check_archive
from podarchive.store import base as store_base
from podarchive.store.schema import MIGRATIONS, _push_subscriptions_v18

V14 = Path(__file__).parent / "fixtures" / "archives" / "v14.sqlite"


def test_a_v17_archive_gets_the_table_keeping_every_row(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert _push_subscriptions_v18 in MIGRATIONS
    version = MIGRATIONS.index(_push_subscriptions_v18)  # the version it upgrades from
    path = tmp_path / "archive.db"
    shutil.copy(V14, path)
    with monkeypatch.context() as m:
        m.setattr(store_base, "MIGRATIONS", store_base.MIGRATIONS[:version])
        m.setattr(store_base, "SCHEMA_VERSION", version)
        with Archive(path) as old:
            assert old.schema_version == version
    with closing(sqlite3.connect(path)) as conn:
        before = every_row(conn)
        schema_before = schema(conn)
    with Archive(path) as archive, Archive(tmp_path / "fresh.db") as fresh:
        assert archive.schema_version == fresh.schema_version == SCHEMA_VERSION
        assert schema(archive.db.conn) == schema(fresh.db.conn)
        after = every_row(archive.db.conn)
        added = set(schema(archive.db.conn)) - set(schema_before)
        sub = Subscription("https://f/", "https://h/", "https://f/", "s" * 64, "tok")
        archive.save_push_subscription(sub)
        archive.save_push_subscription(Subscription(**{**_as_dict(sub), "state": "live"}))
        assert archive.push_subscriptions() == [Subscription(**{**_as_dict(sub), "state": "live"})]
    assert {k: v for k, v in after.items() if k in before} == before
    assert ("table", "push_subscriptions") in added
    _, problems = check_archive(path)
    assert problems == []


def _as_dict(sub: Subscription) -> dict[str, object]:
    import dataclasses

    return dataclasses.asdict(sub)


def test_serve_never_shows_a_subscription_s_secret_or_callback(tmp_path: Path) -> None:
    """The secret a hub signs with, and the callback's token, read as NULL in every served
    page and query (a reader's own SQL too); the rest of the row is there."""
    import asyncio

    from podarchive.web.serve import make_datasette

    path = tmp_path / "archive.db"
    sub = Subscription("https://f/", "https://h/", "https://f/", "s3cr3t" * 10, "tok-abc")
    with Archive(path) as archive:
        archive.save_push_subscription(sub)

    async def fetch(url: str) -> str:
        response = await make_datasette(path).client.get(url)
        assert response.status_code == 200, response.text[:500]
        return str(response.text)

    table = asyncio.run(fetch("/archive/push_subscriptions.json?_shape=array"))
    sql = asyncio.run(
        fetch("/archive.json?_shape=array&sql=select+hub,+secret,+callback+from+push_subscriptions")
    )
    joined = asyncio.run(
        fetch("/archive.json?_shape=array&sql=select+upper(secret)+||+callback+as+x+"
              "from+push_subscriptions")
    )  # fmt: skip
    for text in (table, sql, joined):
        assert "s3cr3t" not in text.lower()
        assert "tok-abc" not in text.lower()
    assert '"hub": "https://h/"' in sql
