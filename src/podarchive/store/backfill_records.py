"""Backfill records (issue #6): walks, archive documents, and episodes found on the site.

An archive page's episodes never mark anything absent; a site episode (``page:`` key) is
one the feed never listed, its page pending.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from podarchive.core.types import EpisodeWrite, FetchRecord, PageTask, Row, SaveStats, Snapshot
from podarchive.rules.history import ChurnIndex

from .base import Connection
from .episodes import row_hash
from .schema import PAGES_DUE

# a failed document keeps its earlier links and keys (``:failed``)
UPSERT_BACKFILL_PAGE = (
    "INSERT INTO backfill_pages (feed_id, url, kind, walk_id, fetched_at, status, "
    "error, since, etag, last_modified, links, episode_keys, episodes) VALUES "
    "(:feed_id, :url, :kind, :walk, :now, :status, :error, :since, :etag, :lm, "
    ":links, :keys, :n) ON CONFLICT(feed_id, url) DO UPDATE SET "
    "kind = excluded.kind, walk_id = excluded.walk_id, "
    "fetched_at = excluded.fetched_at, status = excluded.status, "
    "error = excluded.error, since = excluded.since, "
    "etag = coalesce(excluded.etag, etag), "
    "last_modified = coalesce(excluded.last_modified, last_modified), "
    "links = CASE WHEN :failed THEN links ELSE excluded.links END, "
    "episode_keys = CASE WHEN :failed THEN episode_keys "
    "ELSE excluded.episode_keys END, "
    "episodes = CASE WHEN :failed THEN episodes ELSE excluded.episodes END"
)


class BackfillMixin(Connection):
    """What ``podarchive backfill`` reads and records."""

    if TYPE_CHECKING:  # what it uses of the other mixins (Archive combines them)
        # EpisodesMixin
        def _insert_episode(
            self,
            feed_id: int,
            episode: EpisodeWrite,
            digest: str,
            now: str,
            *,
            unlisted_at: str | None = None,
            archive_url: str | None = None,
        ) -> int: ...
        def _rewrite_episode(
            self, episode: EpisodeWrite, digest: str, now: str, previous: Row
        ) -> int: ...
        def _stored_episodes(self, feed_id: int, *, tracked: bool = True) -> dict[str, Row]: ...
        def _written(
            self, feed_id: int, episode_id: int, episode: EpisodeWrite, now: str, *, new: bool
        ) -> None: ...
        # FetchLogMixin
        def _log(
            self,
            records: Iterable[FetchRecord],
            *,
            feed_id: int | None,
            episode_id: int | None = None,
        ) -> None: ...
        # SnapshotsMixin
        def _keep_snapshot(
            self, feed_id: int, digest: str, snapshot: Snapshot, now: str
        ) -> None: ...

    def open_walk(self, feed_id: int) -> int | None:
        """The feed's unfinished backfill walk, if one was interrupted."""
        if not self.has_backfill_records:
            return None
        row = self.db.execute(
            "SELECT id FROM backfill_walks WHERE feed_id = ? AND finished_at IS NULL "
            "ORDER BY id DESC LIMIT 1",
            [feed_id],
        ).fetchone()
        return int(row[0]) if row else None

    def start_walk(self, feed_id: int, now: str) -> int:
        with self.transaction():
            cursor = self.db.execute(
                "INSERT INTO backfill_walks (feed_id, started_at) VALUES (?, ?)", [feed_id, now]
            )
        assert cursor.lastrowid is not None
        return cursor.lastrowid

    def finish_walk(self, walk_id: int, now: str) -> None:
        with self.transaction():
            self.db.execute(
                "UPDATE backfill_walks SET finished_at = ? WHERE id = ?", [now, walk_id]
            )

    def backfill_page(self, feed_id: int, url: str) -> Row | None:
        """What an earlier backfill recorded about one archive, paged-feed or site document."""
        if not self.has_backfill_records:
            return None
        rows = self._rows(
            "SELECT url, kind, walk_id, fetched_at, status, error, since, etag, last_modified, "
            "links, episode_keys, episodes FROM backfill_pages WHERE feed_id = ? AND url = ?",
            feed_id,
            url,
        )
        if not rows:
            return None
        row = rows[0]
        row["links"] = [tuple(x) for x in json.loads(row["links"] or "[]")]
        row["episode_keys"] = json.loads(row["episode_keys"] or "[]")
        return row

    def record_backfill_page(
        self,
        feed_id: int,
        walk_id: int,
        url: str,
        *,
        kind: str,
        status: str,
        now: str,
        records: Iterable[FetchRecord] = (),
        error: str | None = None,
        since: str | None = None,
        etag: str | None = None,
        last_modified: str | None = None,
        links: Sequence[tuple[str, str]] = (),
        keys: Sequence[str] = (),
        episodes: Sequence[EpisodeWrite] = (),
        seen: frozenset[str] = frozenset(),
        snapshot: Snapshot | None = None,
    ) -> SaveStats:
        """Store one fetched archive document and its episodes in one transaction.

        ``episodes`` go through :meth:`save_archive_episodes`; the feed's metadata and fetch
        state are not touched. A failed document keeps its earlier links and keys.
        """
        stats = SaveStats()
        with self.transaction():
            if episodes:
                stats = self.save_archive_episodes(
                    feed_id, episodes, seen=seen, now=now, source=url
                )
            if snapshot is not None:
                digest = hashlib.sha256(snapshot.body).hexdigest()
                self._keep_snapshot(feed_id, digest, snapshot, now)
                self.db.execute(
                    "UPDATE feed_bodies SET kind = 'archive' WHERE id = last_insert_rowid()"
                )
            failed = status == "failed"
            self.db.execute(
                UPSERT_BACKFILL_PAGE,
                {"feed_id": feed_id, "url": url, "kind": kind, "walk": walk_id, "now": now,
                 "status": status, "error": error, "since": since, "etag": etag,
                 "lm": last_modified, "links": json.dumps([list(x) for x in links]),
                 "keys": json.dumps(list(keys)), "n": len(keys), "failed": failed},
            )  # fmt: skip
            self._log(records, feed_id=feed_id)
        return stats

    def save_archive_episodes(
        self,
        feed_id: int,
        episodes: Sequence[EpisodeWrite],
        *,
        seen: frozenset[str],
        now: str,
        source: str | None = None,
    ) -> SaveStats:
        """Upsert the episodes of an archive page: never marks anything absent.

        An episode in ``seen`` (listed by the subscription document or a newer page of the
        same walk) is left alone: the newer document's version wins. A new episode that is an
        archived one under an older guid (same media file, or title + date + duration) is
        the older version of that episode and is not added. A new episode is stored as not
        listed by the feed (``unlisted_at``), with ``archive_url`` saying where it was found.
        """
        stored = self._stored_episodes(feed_id)
        churn = ChurnIndex(stored)
        new = changed = unchanged = 0
        with self.transaction():
            for episode in episodes:
                previous = stored.get(episode.key)
                if episode.key in seen or (
                    previous is None and churn.find(episode.row) is not None
                ):
                    unchanged += 1
                    continue
                digest = row_hash(episode.row, episode.links)
                if previous is None:
                    episode_id = self._insert_episode(
                        feed_id, episode, digest, now, unlisted_at=now, archive_url=source
                    )
                    stored[episode.key] = {"id": episode_id, "row_hash": digest, **episode.row}
                    churn.add(episode.key, episode.row)
                    new += 1
                elif previous["row_hash"] == digest:
                    unchanged += 1
                    continue
                else:
                    episode_id = self._rewrite_episode(episode, digest, now, previous)
                    changed += 1
                self._written(feed_id, episode_id, episode, now, new=previous is None)
        return SaveStats(new=new, changed=changed, unchanged=unchanged)

    # site episodes ------------------------------------------------------------------------

    def page_index(self, feed_id: int) -> list[tuple[int, str, str | None, str | None]]:
        """(id, key, page_url, link) of the feed's episodes, to match pages found on the site."""
        rows = self.db.execute(
            "SELECT id, key, page_url, link FROM episodes WHERE feed_id = ? ORDER BY id", [feed_id]
        ).fetchall()
        return [(int(i), str(k), p, li) for i, k, p, li in rows]

    def add_site_episode(self, feed_id: int, key: str, url: str, now: str) -> bool:
        """An episode found on the podcast's site but not in its feed; its page is pending."""
        with self.transaction():
            cursor = self.db.execute(
                "INSERT INTO episodes (feed_id, key, link, page_url, page_status, first_seen_at, "
                "version_seen_at, found_on_site_at) VALUES (?, ?, ?, ?, 'pending', ?, ?, ?) "
                "ON CONFLICT(feed_id, key) DO NOTHING",
                [feed_id, key, url, url, now, now, now],
            )
        return cursor.rowcount > 0

    def set_site_episode_title(self, episode_id: int, title: str) -> None:
        """A site episode's title comes from its page (it has no feed item)."""
        with self.transaction():
            self.db.execute(
                "UPDATE episodes SET title = ? WHERE id = ? AND title IS NULL "
                "AND found_on_site_at IS NOT NULL",
                [title, episode_id],
            )

    def backfill_page_tasks(self, feed_id: int, since: str | None) -> list[tuple[PageTask, str]]:
        """:meth:`pages_to_fetch` with each task's episode key, published on/after ``since``."""
        rows = self.db.execute(
            "SELECT id, feed_id, page_url, page_etag, page_last_modified, key, notes_html "
            "FROM episodes "
            f"WHERE feed_id = ? AND {PAGES_DUE} "
            "AND (? IS NULL OR published IS NULL OR published >= ?) ORDER BY id",
            [feed_id, since, since],
        ).fetchall()
        return [
            (PageTask(row[0], row[1], row[2], row[3], row[4], feed_notes=row[6]), str(row[5]))
            for row in rows
        ]
