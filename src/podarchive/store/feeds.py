"""Feeds: their rows and fetch state, a parsed feed's save, permanent moves and host blocks.

Writes for one feed happen in one transaction, so a crash never leaves half a feed.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import KW_ONLY, dataclass
from typing import TYPE_CHECKING, Any

from podarchive.core.types import (
    MOVED_BY_CONTENT,
    CaptureKind,
    EpisodeWrite,
    Exchange,
    FeedState,
    FetchRecord,
    Row,
    SaveStats,
    Snapshot,
    Tag,
)
from podarchive.rules.history import FEED_TRACKED, changed_feed_fields

from .base import Connection
from .feed_reads import STATE_SELECT, state_of
from .schema import FEED_META_COLUMNS


@dataclass(frozen=True, slots=True)
class FeedSave:
    """One parsed feed to store (:meth:`FeedsMixin.save_feed`), as one record.

    ``episodes`` may be any iterable (a generator too): it is consumed once, in order, a
    window at a time, and only the keys and dates of the episodes written are kept.
    ``also_listed`` are keys of episodes the body lists but that were not parsed because
    their raw items are known unchanged (issue #7): they count as listed, not absent.
    ``mark_absent`` false: a malformed body is no evidence of removal. ``channel_tags`` are
    the channel's extension elements (#13).
    """

    feed_id: int
    meta: Row
    episodes: Iterable[EpisodeWrite]
    _: KW_ONLY
    status: int
    etag: str | None
    last_modified: str | None
    content_hash: str
    now: str
    records: Iterable[FetchRecord]
    complete: bool = False
    mark_absent: bool = True
    snapshot: Snapshot | None = None
    also_listed: Collection[str] = ()
    channel_tags: Sequence[Tag] = ()


@dataclass(frozen=True, slots=True)
class UnchangedPoll:
    """An unchanged poll (a 304, or the body kept last) to store (:meth:`FeedsMixin.
    store_unchanged`): its fetch state with when it is next due, its fetch log, its
    captures (#27) and, when ``clear_redirects``, the end of its redirect sightings."""

    feed_id: int
    _: KW_ONLY
    status: int
    etag: str | None
    last_modified: str | None
    now: str
    records: Sequence[FetchRecord]
    next_due_at: str | None
    not_before: str | None
    exchanges: Sequence[Exchange] = ()
    body_sha256: str | None = None  # a 200 with the body kept last: its SHA-256 and size
    body_size: int | None = None
    clear_redirects: bool = True


def _json(values: Sequence[Any]) -> str | None:
    return json.dumps(list(values), ensure_ascii=False) if values else None


class FeedsMixin(Connection):
    """A feed's row, its polls' outcomes, where it is fetched from and the hosts' requests."""

    if TYPE_CHECKING:  # what it uses of the other mixins (Archive combines them)
        # FeedReadsMixin
        def feed_state(self, url: str) -> FeedState | None: ...
        # EpisodesMixin
        def _apply_episode_plan(
            self,
            feed_id: int,
            episodes: Iterable[EpisodeWrite],
            now: str,
            *,
            complete: bool,
            mark_absent: bool,
            also_listed: Collection[str] = (),
        ) -> SaveStats: ...
        # FetchLogMixin
        def _log(
            self,
            records: Iterable[FetchRecord],
            *,
            feed_id: int | None,
            episode_id: int | None = None,
        ) -> None: ...
        # CapturesMixin
        def _insert_captures(
            self,
            exchanges: Sequence[Exchange],
            kind: CaptureKind,
            feed_id: int | None,
            episode_id: int | None,
            body_sha256: str | None,
            body_size: int | None,
        ) -> list[int]: ...
        # SnapshotsMixin
        def _keep_snapshot(
            self, feed_id: int, digest: str, snapshot: Snapshot, now: str
        ) -> None: ...
        # TagsMixin
        def _sync_tags(
            self,
            feed_id: int,
            episode_id: int | None,
            tags: Sequence[Tag],
            now: str,
            *,
            new: bool = False,
        ) -> bool: ...

    def ensure_feed(self, url: str, name: str | None, now: str) -> FeedState:
        """The feed's stored state, adding a row for a feed seen for the first time."""
        row = self.db.execute(f"{STATE_SELECT} WHERE url = ?", [MOVED_BY_CONTENT, url]).fetchone()
        if row is not None and (name is None or row[-1] == name):
            return state_of(row)  # one read, nothing to write: no transaction on every run (#30)
        with self.transaction():
            self.db.execute(
                "INSERT INTO feeds (url, name, first_seen_at, tags_filled_at) VALUES (?, ?, ?, ?) "
                "ON CONFLICT(url) DO UPDATE SET name = excluded.name "
                "WHERE excluded.name IS NOT NULL AND feeds.name IS NOT excluded.name",
                [url, name, now, now],
            )
        state = self.feed_state(url)
        assert state is not None
        return state

    def named_states(self, urls: Collection[str]) -> dict[str, tuple[FeedState, str | None]]:
        """The state and name of each of ``urls`` archived, in one statement: a run's feeds
        read together, not one by one (#30); :meth:`ensure_feed` adds those missing."""
        rows = self.db.execute(
            f"{STATE_SELECT} WHERE url IN (SELECT value FROM json_each(?))",
            [MOVED_BY_CONTENT, json.dumps(list(urls))],
        )
        return {str(row[1]): (state_of(row), row[-1]) for row in rows}

    def feeds_without_tags(self) -> list[tuple[int, str, str | None]]:
        """(id, url, name) of the feeds archived before schema 9 whose tags are not filled."""
        rows = self.db.execute(
            "SELECT id, url, name FROM feeds WHERE tags_filled_at IS NULL ORDER BY id"
        )
        return [(int(i), str(u), n) for i, u, n in rows]

    def mark_tags_filled(self, feed_id: int, now: str) -> None:
        with self.transaction():
            self.db.execute("UPDATE feeds SET tags_filled_at = ? WHERE id = ?", [now, feed_id])

    def set_schedule_state(
        self, feed_id: int, *, next_due_at: str | None, not_before: str | None = None
    ) -> None:
        with self.transaction():
            self.db.execute(
                "UPDATE feeds SET next_due_at = ?, not_before = ? WHERE id = ?",
                [next_due_at, not_before, feed_id],
            )

    def set_warnings(self, feed_id: int, warnings: Sequence[str]) -> None:
        with self.transaction():
            self.db.execute(
                "UPDATE feeds SET warnings = ? WHERE id = ? AND warnings IS NOT ?",
                [_json(warnings), feed_id, _json(warnings)],
            )

    # polls --------------------------------------------------------------------------------

    def record_feed_unchanged(
        self,
        feed_id: int,
        *,
        status: int,
        etag: str | None,
        last_modified: str | None,
        now: str,
        records: Iterable[FetchRecord],
    ) -> None:
        """A 304 or an identical body: no parse, no episode writes; only the fetch state."""
        with self.transaction():
            self._update_fetch_state(feed_id, status, etag, last_modified, None, now)
            self._log(records, feed_id=feed_id)

    def store_unchanged(self, poll: UnchangedPoll) -> None:
        """An unchanged poll in one transaction of few statements (#30): one UPDATE of the
        feed (fetch state and schedule), its fetch log, its captures; the redirect
        sightings are deleted only when there may be some."""
        with self.transaction():
            self.db.execute(
                "UPDATE feeds SET last_fetched_at = :now, last_success_at = :now, "
                "last_status = :status, last_error = NULL, error_count = 0, gone_at = NULL, "
                "etag = coalesce(:etag, etag), last_modified = coalesce(:lm, last_modified), "
                "next_due_at = :due, not_before = :not_before WHERE id = :id",
                {"now": poll.now, "status": poll.status, "etag": poll.etag,
                 "lm": poll.last_modified, "due": poll.next_due_at,
                 "not_before": poll.not_before, "id": poll.feed_id},
            )  # fmt: skip
            self._log(poll.records, feed_id=poll.feed_id)
            self._insert_captures(
                poll.exchanges, "feed", poll.feed_id, None, poll.body_sha256, poll.body_size
            )
            if poll.clear_redirects:
                self.db.execute("DELETE FROM feed_redirects WHERE feed_id = ?", [poll.feed_id])

    def record_feed_error(
        self,
        feed_id: int,
        error: str,
        status: int | None,
        now: str,
        records: Iterable[FetchRecord],
        *,
        gone: bool = False,
    ) -> None:
        """A failed poll: the error state counts up; a 410 marks the feed gone."""
        with self.transaction():
            self.db.execute(
                "UPDATE feeds SET last_fetched_at = :now, last_status = :status, "
                "last_error = :error, last_error_at = :now, error_count = error_count + 1, "
                "gone_at = CASE WHEN :gone THEN coalesce(gone_at, :now) ELSE gone_at END "
                "WHERE id = :id",
                {"now": now, "status": status, "error": error, "gone": gone, "id": feed_id},
            )
            self._log(records, feed_id=feed_id)

    def save_feed(self, save: FeedSave) -> SaveStats:
        """Store one parsed feed in one transaction. Unchanged episodes are not touched.

        Tracked changes become revisions, absent episodes are marked removed or no longer
        listed (unless ``save.mark_absent`` is false: a malformed body is no evidence of
        removal), and ``save.snapshot`` (the raw body) is kept, compressed and deduplicated.
        ``save.episodes`` is consumed once, in order, a window at a time (:class:`FeedSave`).
        """
        feed_id, now = save.feed_id, save.now
        with self.transaction():
            self._update_meta(feed_id, save.meta, now)
            self._sync_tags(feed_id, None, save.channel_tags, now)
            stats = self._apply_episode_plan(
                feed_id, save.episodes, now, complete=save.complete,
                mark_absent=save.mark_absent, also_listed=save.also_listed,
            )  # fmt: skip
            self._update_fetch_state(
                feed_id, save.status, save.etag, save.last_modified, save.content_hash, now
            )
            if save.snapshot is not None:
                self._keep_snapshot(feed_id, save.content_hash, save.snapshot, now)
            self._log(save.records, feed_id=feed_id)
        return stats

    def _update_meta(self, feed_id: int, meta: Row, now: str) -> None:
        old = self.db.execute(
            f"SELECT meta_seen_at, {', '.join(FEED_TRACKED)} FROM feeds WHERE id = ?", [feed_id]
        ).fetchone()
        seen_from, previous = old[0], dict(zip(FEED_TRACKED, old[1:], strict=True))
        changed = changed_feed_fields(previous, meta) if seen_from else []
        if changed:
            marks = ", ".join("?" * len(FEED_TRACKED))
            self.db.execute(
                "INSERT INTO feed_revisions (feed_id, seen_from, seen_until, changed, "
                f"{', '.join(FEED_TRACKED)}) VALUES (?, ?, ?, ?, {marks})",
                [feed_id, seen_from, now, ",".join(changed), *previous.values()],
            )
        assignments = ", ".join(f"{c} = :{c}" for c in FEED_META_COLUMNS)
        differs = " OR ".join(f"{c} IS NOT :{c}" for c in FEED_META_COLUMNS)
        values = {c: meta.get(c) for c in FEED_META_COLUMNS}
        self.db.execute(
            f"UPDATE feeds SET {assignments}, meta_seen_at = CASE WHEN :renew OR meta_seen_at "
            f"IS NULL THEN :now ELSE meta_seen_at END WHERE id = :id AND ({differs})",
            {**values, "id": feed_id, "now": now, "renew": bool(changed)},
        )

    def _update_fetch_state(
        self,
        feed_id: int,
        status: int,
        etag: str | None,
        last_modified: str | None,
        content_hash: str | None,
        now: str,
    ) -> None:
        self.db.execute(
            "UPDATE feeds SET last_fetched_at = :now, last_success_at = :now, "
            "last_status = :status, last_error = NULL, error_count = 0, gone_at = NULL, "
            "etag = coalesce(:etag, etag), last_modified = coalesce(:lm, last_modified), "
            "content_hash = coalesce(:hash, content_hash) WHERE id = :id",
            {"now": now, "status": status, "etag": etag, "lm": last_modified,
             "hash": content_hash, "id": feed_id},
        )  # fmt: skip

    # moves --------------------------------------------------------------------------------

    def record_redirect(self, feed_id: int, status: int, target: str, now: str) -> None:
        with self.transaction():
            self.db.execute(
                "INSERT INTO feed_redirects (feed_id, status, target, seen_at) VALUES (?, ?, ?, ?)",
                [feed_id, status, target, now],
            )

    def clear_redirects(self, feed_id: int) -> None:
        with self.transaction():
            self.db.execute("DELETE FROM feed_redirects WHERE feed_id = ?", [feed_id])

    def redirect_sightings(self, feed_id: int) -> list[tuple[str, str]]:
        """``(target, seen_at)`` of the permanent redirects seen since the last clean poll."""
        rows = self.db.execute(
            "SELECT target, seen_at FROM feed_redirects WHERE feed_id = ? ORDER BY seen_at, id",
            [feed_id],
        ).fetchall()
        return [(str(t), str(at)) for t, at in rows]

    def move_feed(self, feed_id: int, old_url: str, new_url: str, reason: str, now: str) -> None:
        """Fetch the feed from ``new_url`` from now on, keeping the history of its URLs."""
        with self.transaction():
            self.db.execute(
                "INSERT INTO feed_moves (feed_id, old_url, new_url, reason, moved_at) "
                "VALUES (?, ?, ?, ?, ?)",
                [feed_id, old_url, new_url, reason, now],
            )
            self.db.execute(
                "UPDATE feeds SET fetch_url = ?, etag = NULL, last_modified = NULL WHERE id = ?",
                [new_url, feed_id],
            )
            self.db.execute("DELETE FROM feed_redirects WHERE feed_id = ?", [feed_id])

    # hosts --------------------------------------------------------------------------------

    def host_blocks(self, now: str) -> dict[str, str]:
        """Hosts that asked (Retry-After) not to be asked again before a time still to come."""
        rows = self.db.execute(
            "SELECT host, not_before FROM hosts WHERE not_before > ?", [now]
        ).fetchall()
        return {str(h): str(t) for h, t in rows}

    def save_host_blocks(self, blocks: Mapping[str, str], now: str) -> None:
        if not blocks:
            return  # no empty transaction at the end of every run (#30)
        with self.transaction():
            for host, until in blocks.items():
                self.db.execute(
                    "INSERT INTO hosts (host, not_before, reason, updated_at) "
                    "VALUES (?, ?, 'Retry-After', ?) ON CONFLICT(host) DO UPDATE SET "
                    "not_before = excluded.not_before, updated_at = excluded.updated_at "
                    "WHERE hosts.not_before IS NOT excluded.not_before",
                    [host, until, now],
                )
