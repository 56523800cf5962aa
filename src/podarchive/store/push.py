"""WebSub subscriptions (#29): the ``push_subscriptions`` table (migration v17:
:mod:`.migrations_push`).

One row per feed (its schedule URL) whose body names a hub and a ``rel="self"`` topic: the
hub, the topic, the secret the hub signs notifications with, the callback token, the lease,
the state, and the last notification. The daemon writes it; ``status`` reads it.
"""

from __future__ import annotations

import dataclasses

from podarchive.rules.push import Subscription

from .base import Connection

PUSH_COLUMNS = tuple(f.name for f in dataclasses.fields(Subscription))


class PushMixin(Connection):
    """Read and write the WebSub subscriptions."""

    def push_subscriptions(self) -> list[Subscription]:
        """Every subscription, by feed URL; none in an archive older than schema 17."""
        if not self.db.table("push_subscriptions").exists():
            return []
        rows = self.db.execute(
            f"SELECT {', '.join(PUSH_COLUMNS)} FROM push_subscriptions ORDER BY feed_url"
        )
        return [Subscription(*row) for row in rows]

    def save_push_subscription(self, sub: Subscription) -> None:
        values = dataclasses.astuple(sub)
        marks = ", ".join("?" for _ in PUSH_COLUMNS)
        with self.transaction():
            self.db.execute(
                f"INSERT OR REPLACE INTO push_subscriptions ({', '.join(PUSH_COLUMNS)}) "
                f"VALUES ({marks})",
                list(values),
            )
