"""Migration v21 (issue #29): the ``podping_cursor`` table, where the daemon's podping
watcher keeps the last Hive block it processed (one row at most). No other table changes."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import sqlite_utils


_CREATE = """CREATE TABLE podping_cursor (
  id INTEGER PRIMARY KEY CHECK (id = 1),
  block INTEGER NOT NULL,
  block_time TEXT,
  updated_at TEXT NOT NULL
)"""


def _podping_v21(db: sqlite_utils.Database) -> None:
    """Issue #29: the ``podping_cursor`` table (no other change)."""
    db.execute(_CREATE)
