"""Raw feed bodies: kept once, compressed, as deltas of an earlier body's items (issue #7).

``snapshots`` holds each distinct body, ``feed_bodies`` when a feed served it; a body whose
items region an earlier snapshot holds stores only its skeleton and points at that one.
"""

from __future__ import annotations

import zlib

from podarchive.core.types import Snapshot

from .base import Connection

MAX_DELTA_DEPTH = 16  # snapshot deltas chain at most this deep; then a full body again


class SnapshotsMixin(Connection):
    """Keeps raw bodies and gives back their exact bytes (``reparse``, ``backfill``)."""

    def _keep_snapshot(self, feed_id: int, digest: str, snapshot: Snapshot, now: str) -> None:
        """Keep a body once; one whose items region an earlier snapshot holds, as a delta.

        A body that differs from a kept one only outside its items (a new lastBuildDate)
        stores just its skeleton, compressed, and points at that snapshot for the items:
        the cost no longer grows with the feed (issue #7). :meth:`feed_observations`
        rebuilds the exact bytes.
        """
        if self.db.execute("SELECT 1 FROM snapshots WHERE hash = ?", [digest]).fetchone():
            base = None
        else:
            body, start, end = snapshot.body, snapshot.items_from, snapshot.items_to
            base = cut = None
            for region_start, region_hash in snapshot.regions:
                base = self.db.execute(
                    "SELECT id, coalesce(depth, 0) FROM snapshots WHERE items_hash = ? "
                    "AND coalesce(depth, 0) < ? ORDER BY id DESC LIMIT 1",
                    [region_hash, MAX_DELTA_DEPTH],
                ).fetchone()
                if base is not None:
                    cut = region_start
                    break
            if base is not None and cut is not None and end is not None:
                stored = body[:cut] + body[end:]
            else:
                stored, base, cut = body, None, None
            self.db.execute(
                "INSERT INTO snapshots (feed_id, hash, first_fetched_at, url, content_type, size, "
                "body, items_hash, items_from, items_to, items_cut, base_id, depth) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [feed_id, digest, now, snapshot.url, snapshot.content_type, len(body),
                 zlib.compress(stored, 6), snapshot.items_hash, start, end, cut,
                 base[0] if base else None, base[1] + 1 if base else None],
            )  # fmt: skip
        self.db.execute(
            "INSERT INTO feed_bodies (feed_id, snapshot_id, seen_at) "
            "SELECT ?, id, ? FROM snapshots WHERE hash = ?",
            [feed_id, now, digest],
        )

    def snapshot_body(self, snapshot_id: int) -> bytes:
        """The exact bytes of a kept body (a delta is rebuilt from the snapshot it points at)."""
        body, cut, base = self.db.execute(
            "SELECT body, items_cut, base_id FROM snapshots WHERE id = ?", [snapshot_id]
        ).fetchone()
        data = zlib.decompress(body)
        if base is None:
            return data
        start, end = self.db.execute(
            "SELECT items_from, items_to FROM snapshots WHERE id = ?", [base]
        ).fetchone()
        return data[:cut] + self.snapshot_body(base)[start:end] + data[cut:]

    def feed_observations(self, feed_id: int) -> list[tuple[str, bytes, str, str | None]]:
        """Every distinct body the feed was parsed from, in order: (seen_at, body, url, type)."""
        rows = self.db.execute(
            "SELECT b.seen_at, s.id, s.url, s.content_type FROM feed_bodies b "
            "JOIN snapshots s ON s.id = b.snapshot_id WHERE b.feed_id = ? ORDER BY b.seen_at, b.id",
            [feed_id],
        ).fetchall()
        return [(at, self.snapshot_body(sid), url, kind) for at, sid, url, kind in rows]

    def latest_feed_body(self, feed_id: int) -> tuple[bytes, str, str | None] | None:
        """The last subscription-document body parsed for the feed: (body, url, content type)."""
        kind = "AND b.kind = 'feed' " if self.has_backfill_records else ""
        row = self.db.execute(
            "SELECT s.id, s.url, s.content_type FROM feed_bodies b JOIN snapshots s "
            f"ON s.id = b.snapshot_id WHERE b.feed_id = ? {kind}ORDER BY b.seen_at DESC, b.id DESC "
            "LIMIT 1",
            [feed_id],
        ).fetchone()
        return (self.snapshot_body(row[0]), row[1], row[2]) if row else None

    def replay_observations(self, feed_id: int) -> list[tuple[str, bytes, str, str | None, str]]:
        """Like :meth:`feed_observations`, with each body's kind (``feed`` or ``archive``)."""
        kind = "b.kind" if self.has_backfill_records else "'feed'"
        rows = self.db.execute(
            f"SELECT b.seen_at, s.id, s.url, s.content_type, {kind} FROM feed_bodies b "
            "JOIN snapshots s ON s.id = b.snapshot_id WHERE b.feed_id = ? ORDER BY b.seen_at, b.id",
            [feed_id],
        ).fetchall()
        # a delta keeps only the skeleton: rebuilt whole (replaying it alone read no item)
        return [(at, self.snapshot_body(sid), url, ct, k) for at, sid, url, ct, k in rows]
