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
from typing import Any

from podarchive.core.types import EpisodeWrite, Link, Row, SaveStats
from podarchive.rules.history import TRACKED, ChurnIndex, absence, changed_fields

from .episode_files import EpisodeFilesMixin
from .schema import EPISODE_COLUMNS
from .tags import TagsMixin

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


def _rewritten(
    stored: Mapping[str, Row], episodes: Sequence[EpisodeWrite], digests: Sequence[str]
) -> list[Row]:
    """The stored rows of the episodes whose row hash changed."""
    return [
        previous
        for e, digest in zip(episodes, digests, strict=True)
        if (previous := stored.get(e.key)) is not None and previous["row_hash"] != digest
    ]


class EpisodesMixin(EpisodeFilesMixin, TagsMixin):
    """The episode rows of a feed, written inside the caller's transaction."""

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
        light = tuple(c for c in WIDE_TRACKED if c != "notes_html")  # the big one: lazily
        columns = (*BOOKKEEPING_COLUMNS, *light)
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

    def _upsert_episodes(
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
        :data:`WINDOW`; only their keys and publish dates are kept once written).

        The feed's episodes are read from their bookkeeping index; the wide tracked columns
        only of the episodes that are rewritten or may be one under a new guid (issue #7).
        A new key is written at once unless a stored episode not listed so far may be the
        same episode under a new guid (only the rest of the body can tell): from that one
        on, the writes wait for the end of the body (#15).
        """
        stored = self._stored_episodes(feed_id, tracked=False)
        skipped = [k for k in dict.fromkeys(also_listed) if k in stored]
        # stored episodes listed neither by also_listed nor so far: those the body does not
        # list are among them (all of them, once the body is read)
        listed_before = set(skipped)
        unseen = {k: v for k, v in stored.items() if k not in listed_before}
        seen: set[str] = set()
        dates: list[str | None] = []
        stats = [0, 0, 0]  # new, changed, unchanged
        churn: ChurnIndex | None = None  # over ``unseen``, once a new key arrives
        waiting: list[tuple[EpisodeWrite, str]] | None = None  # from a possible churn on
        for window in _windows(episodes):
            digests = [row_hash(e.row, e.links) for e in window]
            for episode in window:
                seen.add(episode.key)
                dates.append(episode.row.get("published"))
                if unseen.pop(episode.key, None) is not None and churn is not None:
                    churn.discard(episode.key)
            if waiting is not None:
                waiting.extend(zip(window, digests, strict=True))
                continue
            self._read_columns(_rewritten(stored, window, digests), WIDE_TRACKED)
            fresh: list[tuple[EpisodeWrite, str]] = []  # new episodes in a row: written together
            for at, (episode, digest) in enumerate(zip(window, digests, strict=True)):
                previous = stored.get(episode.key)
                if previous is None and unseen:
                    if churn is None:
                        self._read_columns(unseen.values(), CHURN_COLUMNS)
                        churn = ChurnIndex(unseen)
                    if churn.find(episode.row) is not None:
                        waiting = list(zip(window[at:], digests[at:], strict=True))
                        break
                if previous is None:
                    fresh.append((episode, digest))
                    continue
                self._insert_new(feed_id, fresh, now, stats)  # first: ids in the same order
                self._save_episode(feed_id, episode, digest, previous, now, stats)
            self._insert_new(feed_id, fresh, now, stats)
        skipped = [k for k in skipped if k not in seen]
        if waiting:  # ``unseen`` is now what the body does not list
            self._read_columns(
                _rewritten(stored, [e for e, _ in waiting], [d for _, d in waiting]),
                WIDE_TRACKED,
            )
            for episode, digest in waiting:
                previous = stored.get(episode.key)
                if previous is None and unseen:
                    assert churn is not None
                    if (churned := churn.find(episode.row)) is not None:
                        churn.discard(churned)
                        previous = unseen.pop(churned)
                        stored.pop(churned)
                        self.db.execute(
                            "UPDATE episodes SET key = ? WHERE id = ?",
                            [episode.key, previous["id"]],
                        )
                self._save_episode(feed_id, episode, digest, previous, now, stats)
        if mark_absent:
            dates.extend(stored[k]["published"] for k in skipped)
            self._mark_absent(unseen, dates, now, complete)
        self._clear_absence(stored, seen.union(skipped))
        return SaveStats(new=stats[0], changed=stats[1], unchanged=stats[2] + len(skipped))

    def _save_episode(
        self,
        feed_id: int,
        episode: EpisodeWrite,
        digest: str,
        previous: Row | None,
        now: str,
        stats: list[int],
    ) -> None:
        """Insert a new episode, rewrite a changed one, leave an unchanged one alone."""
        if previous is None:
            episode_id = self._insert_episode(feed_id, episode, digest, now)
            stats[0] += 1
        elif previous["row_hash"] == digest:
            stats[2] += 1
            if self._renew_item_hash(previous, episode.item_hash):
                # the raw item changed, not its row: its extension elements may have
                self._sync_tags(feed_id, int(previous["id"]), episode.tags, now)
            return
        else:
            episode_id = self._rewrite_episode(episode, digest, now, previous)
            stats[1] += 1
        self._written(feed_id, episode_id, episode, now, new=previous is None)

    def _insert_new(
        self, feed_id: int, fresh: list[tuple[EpisodeWrite, str]], now: str, stats: list[int]
    ) -> None:
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
        stats[0] += len(fresh)
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

    def _renew_item_hash(self, previous: Row, item_hash: str | None) -> bool:
        """An unchanged episode's raw item may still differ (another context, a migration).

        True when the raw item differs or is unknown: what only its bytes say (its ``tags``)
        may have changed.
        """
        if item_hash is None:
            return True
        if previous["item_hash"] != item_hash:
            self.db.execute(
                "UPDATE episodes SET item_hash = ? WHERE id = ?", [item_hash, previous["id"]]
            )
            return True
        return False

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

    def _mark_absent(
        self, absent: Mapping[str, Row], dates: Sequence[str | None], now: str, complete: bool
    ) -> None:
        for row in absent.values():
            if row["removed_from_feed_at"] or row["unlisted_at"]:
                continue
            if row["key"].startswith("page:"):
                continue  # found on the site (backfill --site), never listed by the feed
            column = (
                "removed_from_feed_at"
                if absence(row["published"], dates, complete) == "removed"
                else "unlisted_at"
            )
            self.db.execute(f"UPDATE episodes SET {column} = ? WHERE id = ?", [now, row["id"]])

    def _clear_absence(self, stored: Mapping[str, Row], listed: set[str]) -> None:
        for key, row in stored.items():
            if key in listed and (row["removed_from_feed_at"] or row["unlisted_at"]):
                self.db.execute(
                    "UPDATE episodes SET removed_from_feed_at = NULL, unlisted_at = NULL "
                    "WHERE id = ?",
                    [row["id"]],
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
