"""Migration 5 (issue #7) on an archive written by the previous schema (v3 fixture → latest)."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

from podarchive.store import SCHEMA_VERSION, Archive

ARCHIVES = Path(__file__).parent / "fixtures" / "archives"


def test_item_hash_columns_arrive_empty_and_old_snapshots_still_read(tmp_path: Path) -> None:
    path = tmp_path / "archive.db"
    shutil.copy(ARCHIVES / "v3.sqlite", path)
    conn = sqlite3.connect(path)
    episodes = conn.execute("SELECT count(*) FROM episodes").fetchone()[0]
    bodies = conn.execute("SELECT id, body FROM snapshots ORDER BY id").fetchall()
    conn.close()
    with Archive(path) as archive:
        assert archive.schema_version == SCHEMA_VERSION
        assert archive.count("episodes") == episodes
        assert archive.db.execute(
            "SELECT count(*) FROM episodes WHERE item_hash IS NOT NULL"
        ).fetchone() == (0,)
        columns = {c.name for c in archive.db.table("snapshots").columns}
        assert {"items_hash", "items_from", "items_to", "items_cut", "base_id", "depth"} <= columns
        import zlib

        for snapshot_id, body in bodies:
            assert archive.snapshot_body(snapshot_id) == zlib.decompress(body)
