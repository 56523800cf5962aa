"""Episodes from the feed: guarded upserts, revisions, absence marks and links.

Episodes are upserted guarded by a row hash (:func:`row_hash`): an unchanged episode is
never rewritten, which keeps re-runs cheap and the FTS index from growing. A tracked change
first keeps the earlier values as a revision; an episode the feed stops listing is marked
removed or no longer listed (``history.absence``). The FTS sync trigger re-indexes an
episode's text only on an UPDATE that sets an indexed column (schema 6, issue #7).
"""

from __future__ import annotations

import hashlib
import json
import operator
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from itertools import islice
from typing import TYPE_CHECKING, Any

from podarchive.core.types import EpisodeWrite, Link, Row, SaveStats, Tag
from podarchive.rules.history import TRACKED, changed_fields

from .base import Connection
from .schema import EPISODE_COLUMNS

if TYPE_CHECKING:  # the planner is imported by the first save that writes episodes (#30)
    from podarchive.rules.episode_plan import Keep, Step

REVISION_COLUMNS = (
    "guid", "title", "published", "duration", "enclosure_url", "enclosure_type",
    "enclosure_length", "notes_html", "notes_text", "page_notes_html", "page_notes_text",
)  # fmt: skip
STORED_TRACKED = tuple(dict.fromkeys(c for cols in TRACKED.values() for c in cols))
# what every save reads for each of the feed's episodes: all of it in idx_episodes_feed_bookkeeping
BOOKKEEPING_COLUMNS = (
    "id", "key", "row_hash", "item_hash", "removed_from_feed_at", "unlisted_at", "published",
)  # fmt: skip
# read from the rows only for the episodes being rewritten or matched under a new guid
WIDE_TRACKED = tuple(c for c in STORED_TRACKED if c not in BOOKKEEPING_COLUMNS)
CHURN_COLUMNS = tuple(c for c in WIDE_TRACKED if c != "notes_html")  # fingerprints need these
READ_CHUNK = 500  # ids per ``IN (…)``: under SQLite's 999 variables of old builds
WINDOW = 256  # episodes of a save read, hashed and written together (a bounded part of a feed)
INSERTED_COLUMNS = (
    "feed_id", "key", *EPISODE_COLUMNS, "page_status", "first_seen_at", "version_seen_at",
    "row_hash", "item_hash", "unlisted_at", "archive_url",
)  # fmt: skip
INSERT_EPISODE = (
    f"INSERT INTO episodes ({', '.join(INSERTED_COLUMNS)}) "
    f"VALUES ({', '.join('?' * len(INSERTED_COLUMNS))})"
)
INSERT_NEW_EPISODE = (
    f"INSERT INTO episodes (id, {', '.join(INSERTED_COLUMNS)}) "
    f"VALUES (?, {', '.join('?' * len(INSERTED_COLUMNS))})"
)
INSERT_LINK = (
    "INSERT INTO links (episode_id, source, position, url, normalized_url, domain, text) "
    "VALUES (?, ?, ?, ?, ?, ?, ?)"
)


def row_hash(row: Mapping[str, Any], links: Sequence[Link] = ()) -> str:
    """Stored with each episode and compared on the next run: its value must never change."""
    payload = _HASH_JSON.encode([sorted(row.items()), [_link_values(li) for li in links]])
    return hashlib.sha1(payload.encode("utf-8")).hexdigest()


_HASH_JSON = json.JSONEncoder(check_circular=False)  # json.dumps's output, a little faster


# (position, url, normalized_url, domain, text): json.dumps writes the tuple as a list
_link_values: Callable[[Link], tuple[Any, ...]] = operator.attrgetter(
    "position", "url", "normalized_url", "domain", "text"
)


def _windows(episodes: Iterable[EpisodeWrite]) -> Iterator[list[EpisodeWrite]]:
    """``episodes`` in lists of at most :data:`WINDOW`, consumed as they are needed."""
    items = iter(episodes)
    while window := list(islice(items, WINDOW)):
        yield window


def _inserted(
    feed_id: int,
    episode: EpisodeWrite,
    digest: str,
    now: str,
    unlisted_at: str | None = None,
    archive_url: str | None = None,
) -> list[Any]:
    """The values of :data:`INSERTED_COLUMNS` for a new episode."""
    row = episode.row
    return [feed_id, episode.key, *map(row.get, EPISODE_COLUMNS),
            "pending" if row.get("page_url") else None, now, now, digest, episode.item_hash,
            unlisted_at, archive_url]  # fmt: skip


class EpisodesMixin(Connection):
    """The episode rows of a feed, written inside the caller's transaction."""

    if TYPE_CHECKING:  # what it uses of the other mixins (Archive combines them)
        # EpisodeFilesMixin
        def _sync_files(self, episode_id: int, row: Row, now: str, *, new: bool) -> None: ...
        # TagsMixin
        def _insert_tags_of(
            self, feed_id: int, scopes: Sequence[tuple[int | None, Sequence[Tag]]], now: str
        ) -> None: ...
        def _sync_tags(
            self,
            feed_id: int,
            episode_id: int | None,
            tags: Sequence[Tag],
            now: str,
            *,
            new: bool = False,
        ) -> bool: ...

    def episode_keys(self, feed_id: int) -> set[str]:
        return {
            r[0] for r in self.db.execute("SELECT key FROM episodes WHERE feed_id = ?", [feed_id])
        }

    def _stored_episodes(self, feed_id: int, *, tracked: bool = True) -> dict[str, Row]:
        """The feed's episodes by key, in key order; without ``tracked`` only
        :data:`BOOKKEEPING_COLUMNS`, read from their index (cheap: no episode row is read).
        """
        if not tracked:
            sql = (
                f"SELECT {', '.join(BOOKKEEPING_COLUMNS)} FROM episodes WHERE feed_id = ? "
                "ORDER BY key"
            )
            return {row[1]: dict(zip(BOOKKEEPING_COLUMNS, row, strict=True))
                    for row in self.db.conn.execute(sql, [feed_id])}  # fmt: skip
        columns = (*BOOKKEEPING_COLUMNS, *CHURN_COLUMNS)  # notes_html, the big one: lazily
        rows = self.db.execute(
            f"SELECT {', '.join(columns)} FROM episodes WHERE feed_id = ? ORDER BY key", [feed_id]
        ).fetchall()
        return {row[1]: dict(zip(columns, row, strict=True)) for row in rows}

    def _read_columns(self, rows: Iterable[Row], columns: Sequence[str]) -> None:
        """Add ``columns`` of the episode rows to these stored episodes (dicts with an id)."""
        by_id = {row["id"]: row for row in rows}
        ids = list(by_id)
        for start in range(0, len(ids), READ_CHUNK):
            chunk = ids[start : start + READ_CHUNK]
            for values in self.db.conn.execute(
                f"SELECT id, {', '.join(columns)} FROM episodes "
                f"WHERE id IN ({', '.join('?' * len(chunk))})",
                chunk,
            ):
                by_id[values[0]].update(zip(columns, values[1:], strict=True))

    def _apply_episode_plan(
        self,
        feed_id: int,
        episodes: Iterable[EpisodeWrite],
        now: str,
        *,
        complete: bool,
        mark_absent: bool,
        also_listed: Collection[str] = (),
    ) -> SaveStats:
        """Write ``episodes`` (any iterable, consumed once, in order, in windows of
        :data:`WINDOW`; only their keys and publish dates are kept once written) as the
        :class:`~podarchive.rules.episode_plan.EpisodePlanner` decides.

        The feed's episodes are read from their bookkeeping index; the wide tracked columns
        only of the episodes that are rewritten or may be one under a new guid (issue #7).
        """
        from podarchive.rules.episode_plan import EpisodePlanner  # not on a 304's path (#30)

        stored = self._stored_episodes(feed_id, tracked=False)
        planner = EpisodePlanner(stored, also_listed, complete, mark_absent)
        for window in _windows(episodes):
            digests = [row_hash(e.row, e.links) for e in window]
            self._read_columns(planner.take(window, digests), CHURN_COLUMNS)
            self._apply_steps(feed_id, planner.steps(), now)
        ending = planner.finish()
        self._apply_steps(feed_id, ending.steps, now)
        for mark in ending.absent:
            self.db.execute(
                f"UPDATE episodes SET {mark.column} = ? WHERE id = ?", [now, mark.episode_id]
            )
        for episode_id in ending.listed_again:
            self.db.execute(
                "UPDATE episodes SET removed_from_feed_at = NULL, unlisted_at = NULL WHERE id = ?",
                [episode_id],
            )
        return ending.stats

    def _apply_steps(self, feed_id: int, steps: Sequence[Step], now: str) -> None:
        """Write the planned steps in order; new episodes in a row are inserted together."""
        from podarchive.rules.episode_plan import Insert, Keep, Rekey, Rewrite

        self._read_columns([s.previous for s in steps if isinstance(s, Rewrite)], WIDE_TRACKED)
        fresh: list[tuple[EpisodeWrite, str]] = []
        for step in steps:
            if isinstance(step, Insert):
                fresh.append((step.episode, step.digest))
                continue
            self._insert_new(feed_id, fresh, now)  # first: ids in the same order
            if isinstance(step, Rekey):
                self.db.execute(
                    "UPDATE episodes SET key = ? WHERE id = ?", [step.new_key, step.episode_id]
                )
            elif isinstance(step, Keep):
                self._keep(feed_id, step, now)
            else:
                episode_id = self._rewrite_episode(step.episode, step.digest, now, step.previous)
                self._written(feed_id, episode_id, step.episode, now, new=False)
        self._insert_new(feed_id, fresh, now)

    def _keep(self, feed_id: int, step: Keep, now: str) -> None:
        """An unchanged episode: its raw item's hash renewed, its tags synced, if planned."""
        episode_id = int(step.previous["id"])
        if step.item_hash is not None:
            self.db.execute(
                "UPDATE episodes SET item_hash = ? WHERE id = ?", [step.item_hash, episode_id]
            )
        if step.sync_tags:
            # the raw item changed, not its row: its extension elements may have
            self._sync_tags(feed_id, episode_id, step.episode.tags, now)

    def _insert_new(self, feed_id: int, fresh: list[tuple[EpisodeWrite, str]], now: str) -> None:
        """Insert new episodes (and empty ``fresh``) a statement per table, not per episode.

        Each table gets its rows in the order episode by episode would give them, with the
        same ids: SQLite gives a new row of a rowid table the largest id + 1, and so do we
        after the first.
        """
        if not fresh:
            return
        conn = self.db.conn
        first = self._insert_episode(feed_id, *fresh[0], now)  # SQLite picks the first id
        ids = range(first, first + len(fresh))
        conn.executemany(
            INSERT_NEW_EPISODE,
            ([episode_id, *_inserted(feed_id, episode, digest, now)]
             for episode_id, (episode, digest) in zip(ids[1:], fresh[1:], strict=True)),
        )  # fmt: skip
        conn.executemany(
            INSERT_LINK,
            ((episode_id, "feed", *_link_values(link))
             for episode_id, (episode, _) in zip(ids, fresh, strict=True)
             for link in episode.links),
        )  # fmt: skip
        for episode_id, (episode, _) in zip(ids, fresh, strict=True):
            self._sync_files(episode_id, episode.row, now, new=True)
        self._insert_tags_of(
            feed_id, [(i, e.tags) for i, (e, _) in zip(ids, fresh, strict=True)], now
        )
        fresh.clear()

    def _insert_episode(
        self,
        feed_id: int,
        episode: EpisodeWrite,
        digest: str,
        now: str,
        *,
        unlisted_at: str | None = None,
        archive_url: str | None = None,
    ) -> int:
        """A new episode, without its links."""
        cursor = self.db.conn.execute(
            INSERT_EPISODE, _inserted(feed_id, episode, digest, now, unlisted_at, archive_url)
        )
        episode_id = cursor.lastrowid
        assert episode_id is not None
        return episode_id

    def _written(
        self, feed_id: int, episode_id: int, episode: EpisodeWrite, now: str, *, new: bool
    ) -> None:
        """What follows an episode row the feed wrote: its feed links, the files it lists,
        its extension elements."""
        self._add_links(episode_id, "feed", episode.links)
        self._sync_files(episode_id, episode.row, now, new=new)
        self._sync_tags(feed_id, episode_id, episode.tags, now, new=new)

    def _rewrite_episode(self, episode: EpisodeWrite, digest: str, now: str, previous: Row) -> int:
        """Rewrite a changed episode and drop its current feed links (the caller adds the new)."""
        self._update_episode(episode, digest, now, previous)
        self._drop_links(previous["id"], "feed")
        return int(previous["id"])

    def _update_episode(self, episode: EpisodeWrite, digest: str, now: str, previous: Row) -> None:
        """Rewrite a changed episode; tracked changes first keep the earlier values."""
        values = {c: episode.row.get(c) for c in EPISODE_COLUMNS}
        if "notes_html" not in previous:
            previous = {
                **previous,
                "notes_html": self.db.execute(
                    "SELECT notes_html FROM episodes WHERE id = ?", [previous["id"]]
                ).fetchone()[0],
            }
        changed = changed_fields(previous, values)
        if changed:
            self._add_revision(previous["id"], "feed", changed, now)
        assignments = ", ".join(f"{c} = :{c}" for c in EPISODE_COLUMNS)
        # A changed episode gets its page looked at again (conditionally, when we have
        # validators); a page URL that changed starts from scratch.
        self.db.execute(
            f"UPDATE episodes SET {assignments}, row_hash = :hash, item_hash = :item_hash, "
            "version_seen_at = CASE WHEN :renew THEN :now ELSE version_seen_at END, "
            "page_status = CASE WHEN :page_url IS NULL THEN NULL ELSE 'pending' END, "
            "page_etag = CASE WHEN page_url IS :page_url THEN page_etag END, "
            "page_last_modified = CASE WHEN page_url IS :page_url THEN page_last_modified END "
            "WHERE id = :id",
            {**values, "hash": digest, "id": previous["id"], "now": now, "renew": bool(changed),
             "item_hash": episode.item_hash},
        )  # fmt: skip

    def _add_revision(self, episode_id: int, source: str, changed: Sequence[str], now: str) -> None:
        """Keep the episode's current tracked values (and its links of ``source``) as a revision."""
        seen_from = "page_version_seen_at" if source == "page" else "version_seen_at"
        cursor = self.db.execute(
            f"INSERT INTO episode_revisions (episode_id, source, seen_from, seen_until, changed, "
            f"{', '.join(REVISION_COLUMNS)}) SELECT id, ?, {seen_from}, ?, ?, "
            f"{', '.join(REVISION_COLUMNS)} FROM episodes WHERE id = ?",
            [source, now, ",".join(changed), episode_id],
        )
        self.db.execute(
            "UPDATE links SET revision_id = ? WHERE episode_id = ? AND source = ? "
            "AND revision_id IS NULL",
            [cursor.lastrowid, episode_id, source],
        )

    # links --------------------------------------------------------------------------------

    def _replace_links(self, episode_id: int, source: str, links: Sequence[Link]) -> None:
        """Replace the current links of ``source`` (those of earlier revisions stay)."""
        self._drop_links(episode_id, source)
        self._add_links(episode_id, source, links)

    def _drop_links(self, episode_id: int, source: str) -> None:
        self.db.execute(
            "DELETE FROM links WHERE episode_id = ? AND source = ? AND revision_id IS NULL",
            [episode_id, source],
        )

    def _add_links(self, episode_id: int, source: str, links: Sequence[Link]) -> None:
        """One executemany per episode: measured faster than one for the whole feed."""
        self.db.conn.executemany(
            INSERT_LINK, [(episode_id, source, *_link_values(link)) for link in links]
        )
