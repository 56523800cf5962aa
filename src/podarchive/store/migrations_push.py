"""Migration v18 (issue #29): the ``push_subscriptions`` table of WebSub subscriptions.

One row per feed (its schedule URL) whose body names a hub and a ``rel="self"`` topic: the
hub, the topic, the secret the hub signs notifications with, the callback token, the lease,
the state and the last notification (:mod:`.push`). No other table changes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import sqlite_utils


_CREATE = """CREATE TABLE push_subscriptions (
  feed_url TEXT PRIMARY KEY,
  hub TEXT NOT NULL,
  topic TEXT NOT NULL,
  secret TEXT NOT NULL,
  callback TEXT NOT NULL UNIQUE,
  state TEXT NOT NULL,
  lease_seconds INTEGER,
  lease_until TEXT,
  renew_at TEXT,
  asked_at TEXT,
  last_notified_at TEXT,
  notifications INTEGER NOT NULL DEFAULT 0,
  last_error TEXT
)"""


def _push_subscriptions_v18(db: sqlite_utils.Database) -> None:
    """Issue #29: the ``push_subscriptions`` table (no other change)."""
    db.execute(_CREATE)
