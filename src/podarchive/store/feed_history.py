"""A feed's feed-derived state as data (``reparse``), and the item-hash reader for workers.

:meth:`~FeedHistoryMixin.export_history` and :meth:`~FeedHistoryMixin.import_history` move
one feed's metadata, episodes, feed revisions and feed links out and back in by episode key;
:class:`KnownItems` answers item hash → key on its own read-only connection.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from podarchive.core.types import FeedHistory, Row, SaveStats
from podarchive.rules.history import FEED_TRACKED

from .archive_path import storage_error
from .base import Connection
from .episodes import REVISION_COLUMNS
from .schema import EPISODE_COLUMNS, FEED_META_COLUMNS

HISTORY_EPISODE_COLUMNS = (
    *EPISODE_COLUMNS, "row_hash", "first_seen_at", "version_seen_at",
    "removed_from_feed_at", "unlisted_at",
)  # fmt: skip


class KnownItems:
    """Item hash → episode key of a feed, read on its own connection (worker threads).

    Since schema 7 the read is answered by ``idx_episodes_feed_bookkeeping`` alone.
    """

    def __init__(self, path: Path) -> None:
        self._path = path
        uri = Path(path).resolve().as_uri() + "?mode=ro"
        self._conn = sqlite3.connect(uri, uri=True, check_same_thread=False, timeout=30)
        self._lock = threading.Lock()

    def __call__(self, feed_id: int) -> dict[str, str]:
        """Nothing is known for a feed whose last body had warnings: any item may be the cause."""
        with self._lock:
            try:
                warned = self._conn.execute(
                    "SELECT warnings FROM feeds WHERE id = ?", [feed_id]
                ).fetchone()
                if warned is None or warned[0]:
                    return {}
                rows = self._conn.execute(
                    "SELECT item_hash, key FROM episodes WHERE feed_id = ? "
                    "AND item_hash IS NOT NULL",
                    [feed_id],
                ).fetchall()
            except sqlite3.Error as e:
                raise storage_error(self._path, e) from e
        return {str(h): str(k) for h, k in rows}

    def close(self) -> None:
        with self._lock:
            self._conn.close()


class FeedHistoryMixin(Connection):
    """Export and import of one feed's history; :class:`KnownItems` for worker threads."""

    if TYPE_CHECKING:  # what it uses of the other mixins (Archive combines them)
        # EpisodeFilesMixin
        def _sync_files(self, episode_id: int, row: Row, now: str, *, new: bool) -> None: ...
        # TagsMixin
        def _export_tags(self, feed_id: int) -> list[Row]: ...
        def _import_tags(self, feed_id: int, ids: dict[str, int], rows: Sequence[Row]) -> None: ...

    def known_items(self) -> KnownItems | None:
        """A thread-safe reader of item hashes for worker threads; None for ``:memory:``."""
        if str(self.path) in ("", ":memory:"):
            return None
        return KnownItems(self.path)

    def export_history(self, feed_id: int) -> FeedHistory:
        """The feed-derived state of one feed, by episode key (what ``reparse`` rebuilds)."""
        meta = self.db.execute(
            f"SELECT {', '.join(FEED_META_COLUMNS)}, meta_seen_at FROM feeds WHERE id = ?",
            [feed_id],
        ).fetchone()
        feed_revisions = self._rows(
            f"SELECT seen_from, seen_until, changed, {', '.join(FEED_TRACKED)} FROM feed_revisions "
            "WHERE feed_id = ? ORDER BY seen_until, id",
            feed_id,
        )
        episodes = self._rows(
            f"SELECT key, {', '.join(HISTORY_EPISODE_COLUMNS)} FROM episodes WHERE feed_id = ? "
            "ORDER BY id",
            feed_id,
        )
        revisions = self._rows(
            "SELECT e.key, r.id AS revision, r.seen_from, r.seen_until, r.changed, "
            f"{', '.join('r.' + c for c in REVISION_COLUMNS)} FROM episode_revisions r "
            "JOIN episodes e ON e.id = r.episode_id WHERE e.feed_id = ? AND r.source = 'feed' "
            "ORDER BY r.seen_until, r.id",
            feed_id,
        )
        links = self._rows(
            "SELECT e.key, l.revision_id AS revision, l.position, l.url, l.normalized_url, "
            "l.domain, l.text FROM links l JOIN episodes e ON e.id = l.episode_id "
            "WHERE e.feed_id = ? AND l.source = 'feed' ORDER BY l.id",
            feed_id,
        )
        columns = (*FEED_META_COLUMNS, "meta_seen_at")
        return FeedHistory(
            dict(zip(columns, meta, strict=True)),
            feed_revisions,
            episodes,
            revisions,
            links,
            self._export_tags(feed_id),
        )

    def import_history(self, feed_id: int, history: FeedHistory) -> SaveStats:
        """Replace one feed's feed-derived state with ``history``, in one transaction.

        Page notes, page links and page revisions stay as they are; episodes the history
        does not know are kept untouched (nothing is ever lost).
        """
        with self.transaction():
            meta = history.meta
            self.db.execute(
                f"UPDATE feeds SET {', '.join(f'{c} = :{c}' for c in meta)} WHERE id = :id",
                {**meta, "id": feed_id},
            )
            self.db.execute("DELETE FROM feed_revisions WHERE feed_id = ?", [feed_id])
            for rev in history.feed_revisions:
                self.db.execute(
                    f"INSERT INTO feed_revisions (feed_id, {', '.join(rev)}) VALUES "
                    f"(:feed_id, {', '.join(':' + c for c in rev)})",
                    {**rev, "feed_id": feed_id},
                )
            ids, stats = self._import_episodes(feed_id, history.episodes)
            revision_ids = self._import_revisions(ids, history.revisions)
            self._import_links(ids, revision_ids, history.links)
            every_episode = dict(
                self.db.execute("SELECT key, id FROM episodes WHERE feed_id = ?", [feed_id])
            )
            self._import_tags(feed_id, every_episode, history.tags)
        return stats

    def _import_episodes(
        self, feed_id: int, episodes: Sequence[Row]
    ) -> tuple[dict[str, int], SaveStats]:
        ids: dict[str, int] = {}
        new = changed = unchanged = 0
        for row in episodes:
            found = self.db.execute(
                "SELECT id, row_hash FROM episodes WHERE feed_id = ? AND key = ?",
                [feed_id, row["key"]],
            ).fetchone()
            values = {c: row[c] for c in HISTORY_EPISODE_COLUMNS}
            if found is None:
                cursor = self.db.execute(
                    f"INSERT INTO episodes (feed_id, key, {', '.join(values)}, page_status) "
                    f"VALUES (:feed_id, :key, {', '.join(':' + c for c in values)}, "
                    "CASE WHEN :page_url IS NULL THEN NULL ELSE 'pending' END)",
                    {**values, "feed_id": feed_id, "key": row["key"]},
                )
                assert cursor.lastrowid is not None
                ids[row["key"]] = cursor.lastrowid
                new += 1
                self._sync_files(cursor.lastrowid, values, _seen(values), new=True)
                continue
            ids[row["key"]] = found[0]
            changed, unchanged = (
                (changed + 1, unchanged)
                if found[1] != row["row_hash"]
                else (changed, unchanged + 1)
            )
            self.db.execute(
                f"UPDATE episodes SET {', '.join(f'{c} = :{c}' for c in values)} WHERE id = :id",
                {**values, "id": found[0]},
            )
            self._sync_files(found[0], values, _seen(values), new=False)
        return ids, SaveStats(new=new, changed=changed, unchanged=unchanged)

    def _import_revisions(self, ids: Mapping[str, int], revisions: Sequence[Row]) -> dict[int, int]:
        """Replace the feed revisions of these episodes; returns old revision id → new id.

        The page notes an earlier revision recorded come along from the revision it replaces
        (snapshots hold only the feed side).
        """
        marks = ", ".join("?" * len(ids)) or "NULL"
        old = {
            (r["episode_id"], r["seen_until"]): r
            for r in self._rows(
                "SELECT episode_id, seen_until, id, page_notes_html, page_notes_text "
                f"FROM episode_revisions WHERE source = 'feed' AND episode_id IN ({marks})",
                *ids.values(),
            )
        }
        if old:
            old_marks = ", ".join("?" * len(old))
            old_ids = [r["id"] for r in old.values()]
            self.db.execute(f"DELETE FROM links WHERE revision_id IN ({old_marks})", old_ids)
            self.db.execute(f"DELETE FROM episode_revisions WHERE id IN ({old_marks})", old_ids)
        mapping: dict[int, int] = {}
        for rev in revisions:
            episode_id = ids[rev["key"]]
            kept = old.get((episode_id, rev["seen_until"]), {})
            values = {c: rev[c] for c in ("seen_from", "seen_until", "changed", *REVISION_COLUMNS)}
            values["page_notes_html"] = kept.get("page_notes_html", values["page_notes_html"])
            values["page_notes_text"] = kept.get("page_notes_text", values["page_notes_text"])
            cursor = self.db.execute(
                f"INSERT INTO episode_revisions (episode_id, source, {', '.join(values)}) "
                f"VALUES (:episode_id, 'feed', {', '.join(':' + c for c in values)})",
                {**values, "episode_id": episode_id},
            )
            assert cursor.lastrowid is not None
            mapping[rev["revision"]] = cursor.lastrowid
        return mapping

    def _import_links(
        self, ids: Mapping[str, int], revision_ids: Mapping[int, int], links: Sequence[Row]
    ) -> None:
        for episode_id in ids.values():
            self.db.execute(
                "DELETE FROM links WHERE episode_id = ? AND source = 'feed' "
                "AND revision_id IS NULL",
                [episode_id],
            )
        self.db.conn.executemany(
            "INSERT INTO links (episode_id, source, position, url, normalized_url, domain, text, "
            "revision_id) VALUES (?, 'feed', ?, ?, ?, ?, ?, ?)",
            [
                (ids[li["key"]], li["position"], li["url"], li["normalized_url"], li["domain"],
                 li["text"], revision_ids.get(li["revision"]) if li["revision"] else None)
                for li in links
            ],
        )  # fmt: skip


def _seen(values: Row) -> str:
    """When the episode's current version was first seen: when its files were first listed."""
    return str(values.get("version_seen_at") or values.get("first_seen_at") or "")
