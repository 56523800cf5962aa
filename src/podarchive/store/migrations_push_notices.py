"""Migration v22 (issue #29): the ``push_notices`` table, WebSub notifications as evidence.

One row per content notification a hub POSTed to a known callback, signed or not: when it
came, the topic it was for, whether its ``X-Hub-Signature`` was valid, its content type, its
size and sha256, and its body up to :data:`~.push.NOTICE_BODY_CAP` bytes. Evidence only: the
feed is always polled, never taken from a notification. The last
:data:`~.push.NOTICES_KEPT` per feed are kept (:mod:`.push`). No other table changes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import sqlite_utils


_CREATE = """CREATE TABLE push_notices (
  id INTEGER PRIMARY KEY,
  feed_url TEXT NOT NULL,
  received_at TEXT NOT NULL,
  topic TEXT NOT NULL,
  signature_valid INTEGER NOT NULL,
  content_type TEXT,
  size INTEGER NOT NULL,
  sha256 TEXT NOT NULL,
  body BLOB NOT NULL
)"""
_INDEX = "CREATE INDEX idx_push_notices_feed ON push_notices (feed_url, id)"


def _push_notices_v22(db: sqlite_utils.Database) -> None:
    """Issue #29: the ``push_notices`` table and its per-feed index (no other change)."""
    db.execute(_CREATE)
    db.execute(_INDEX)
