"""WebSub subscriptions (#29): the ``push_subscriptions`` table (migration v18:
:mod:`.migrations_push`) and the notifications kept as evidence, ``push_notices``
(migration v22: :mod:`.migrations_push_notices`).

One row per feed (its schedule URL) whose body names a hub and a ``rel="self"`` topic: the
hub, the topic, the secret the hub signs notifications with, the callback token, the lease,
the state, and the last notification. The daemon writes it; ``status`` reads it.

A notification's body is never taken as the feed; it is kept as evidence (:class:`PushNotice`),
at most :data:`NOTICE_BODY_CAP` bytes of it (its size and sha256 are the whole body's), the
last :data:`NOTICES_KEPT` per feed.
"""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Sequence
from dataclasses import dataclass

from podarchive.rules.push import Subscription

from .base import Connection

PUSH_COLUMNS = tuple(f.name for f in dataclasses.fields(Subscription))
NOTICE_BODY_CAP = 64 * 1024  # bytes of a notification's body kept (the endpoint takes 1 MiB)
NOTICES_KEPT = 20  # notifications kept per feed: the oldest go


@dataclass(frozen=True, slots=True)
class PushNotice:
    """One content notification a hub POSTed to a known callback: evidence, not the feed."""

    feed_url: str
    received_at: str  # ISO, UTC
    topic: str
    signature_valid: bool
    content_type: str | None
    size: int  # the whole body's
    sha256: str  # the whole body's
    body: bytes  # its first NOTICE_BODY_CAP bytes

    @classmethod
    def of(
        cls,
        feed_url: str,
        topic: str,
        body: bytes,
        *,
        received_at: str,
        signature_valid: bool,
        content_type: str | None,
    ) -> PushNotice:
        return cls(
            feed_url=feed_url,
            received_at=received_at,
            topic=topic,
            signature_valid=signature_valid,
            content_type=(content_type or None) and content_type[:200],
            size=len(body),
            sha256=hashlib.sha256(body).hexdigest(),
            body=body[:NOTICE_BODY_CAP],
        )


NOTICE_COLUMNS = tuple(f.name for f in dataclasses.fields(PushNotice))


class PushMixin(Connection):
    """Read and write the WebSub subscriptions and notifications."""

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

    def push_notices(self, feed_url: str) -> list[PushNotice]:
        """The feed's notifications kept, oldest first; none before schema 22."""
        if not self.db.table("push_notices").exists():
            return []
        rows = self.db.execute(
            f"SELECT {', '.join(NOTICE_COLUMNS)} FROM push_notices WHERE feed_url = ? ORDER BY id",
            [feed_url],
        )
        return [
            PushNotice(url, at, topic, bool(valid), kind, size, sha, bytes(body))
            for url, at, topic, valid, kind, size, sha, body in rows
        ]

    def save_push_notices(self, notices: Sequence[PushNotice], keep: int = NOTICES_KEPT) -> None:
        """Add ``notices``; each of their feeds keeps only its last ``keep``."""
        if not notices:
            return
        marks = ", ".join("?" for _ in NOTICE_COLUMNS)
        with self.transaction():
            for notice in notices:
                self.db.execute(
                    f"INSERT INTO push_notices ({', '.join(NOTICE_COLUMNS)}) VALUES ({marks})",
                    list(dataclasses.astuple(notice)),
                )
            for url in sorted({n.feed_url for n in notices}):
                self.db.execute(
                    "DELETE FROM push_notices WHERE feed_url = ? AND id NOT IN (SELECT id "
                    "FROM push_notices WHERE feed_url = ? ORDER BY id DESC LIMIT ?)",
                    [url, url, keep],
                )
