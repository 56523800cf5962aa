"""Extension elements of channels and items, losslessly (#13): the ``tags`` table.

One row per element (``podcast:*``, ``psc:*``, ``media:*``… and everything nested in one),
with its namespace (``ns``: a short label, ``namespace``: the URI as written), local name,
attributes (a JSON object, in document order), own text, parent row and position. A scope
(the channel, or one episode) whose elements change keeps the earlier rows: they get
``seen_until``; the current ones have none. The typed views (``persons``, ``soundbites``,
``podroll``…, schema 9) read the current rows.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from podarchive.core.namespaces import label
from podarchive.core.types import Row, Tag

from .base import Connection

TAG_COLUMNS = ("position", "namespace", "name", "attributes", "text")
INSERT_TAG = (
    "INSERT INTO tags (feed_id, episode_id, parent_id, position, ns, namespace, name, "
    "attributes, text, seen_from, seen_until) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
)


def attributes_json(tag: Tag) -> str | None:
    """The attributes as a JSON object in document order (None when there are none)."""
    return json.dumps(dict(tag.attributes), ensure_ascii=False) if tag.attributes else None


class TagsMixin(Connection):
    """The ``tags`` rows of a feed, written inside the caller's transaction."""

    def _sync_tags(
        self,
        feed_id: int,
        episode_id: int | None,
        tags: Sequence[Tag],
        now: str,
        *,
        new: bool = False,
    ) -> bool:
        """Make the scope's current tags ``tags``; changed ones are kept with ``seen_until``.

        ``new``: the episode was just inserted (it has no tags to compare). True when anything
        was written.
        """
        if new:
            self._insert_tags(feed_id, episode_id, tags, now)
            return bool(tags)
        current = self.db.execute(
            "SELECT id, parent_id, position, namespace, name, attributes, text FROM tags "
            "WHERE feed_id = ? AND episode_id IS ? AND seen_until IS NULL ORDER BY id",
            [feed_id, episode_id],
        ).fetchall()
        index = {row[0]: i for i, row in enumerate(current)}
        stored = [
            (index.get(parent) if parent is not None else None, *rest)
            for _, parent, *rest in current
        ]
        wanted = [
            (t.parent, t.position, t.namespace, t.name, attributes_json(t), t.text) for t in tags
        ]
        if stored == wanted:
            return False
        if current:
            self.db.execute(
                "UPDATE tags SET seen_until = ? WHERE feed_id = ? AND episode_id IS ? "
                "AND seen_until IS NULL",
                [now, feed_id, episode_id],
            )
        self._insert_tags(feed_id, episode_id, tags, now)
        return True

    def _insert_tags_of(
        self, feed_id: int, scopes: Sequence[tuple[int | None, Sequence[Tag]]], now: str
    ) -> None:
        """The tags of several scopes (episode id, its tags), in their order: one statement
        when no tag has a parent (no row needs another's id)."""
        if any(tag.parent is not None for _, tags in scopes for tag in tags):
            for episode_id, tags in scopes:
                self._insert_tags(feed_id, episode_id, tags, now)
            return
        self.db.conn.executemany(
            INSERT_TAG,
            ((feed_id, episode_id, None, tag.position, label(tag.namespace), tag.namespace,
              tag.name, attributes_json(tag), tag.text, now, None)
             for episode_id, tags in scopes for tag in tags),
        )  # fmt: skip

    def _insert_tags(
        self, feed_id: int, episode_id: int | None, tags: Sequence[Tag], now: str
    ) -> None:
        if all(tag.parent is None for tag in tags):
            self._insert_tags_of(feed_id, [(episode_id, tags)], now)
            return
        ids: list[int] = []
        for tag in tags:
            parent = ids[tag.parent] if tag.parent is not None and tag.parent < len(ids) else None
            cursor = self.db.conn.execute(
                INSERT_TAG,
                [feed_id, episode_id, parent, tag.position, label(tag.namespace), tag.namespace,
                 tag.name, attributes_json(tag), tag.text, now, None],
            )  # fmt: skip
            assert cursor.lastrowid is not None
            ids.append(cursor.lastrowid)

    def _export_tags(self, feed_id: int) -> list[Row]:
        """Every tag row of the feed (all versions), keyed by episode key, parents by index."""
        rows = self.db.execute(
            "SELECT t.id, e.key, t.parent_id, t.position, t.namespace, t.name, t.attributes, "
            "t.text, t.seen_from, t.seen_until FROM tags t LEFT JOIN episodes e "
            "ON e.id = t.episode_id WHERE t.feed_id = ? ORDER BY t.id",
            [feed_id],
        ).fetchall()
        index = {row[0]: i for i, row in enumerate(rows)}
        return [
            {
                "key": key, "parent": index.get(parent) if parent is not None else None,
                "position": position, "namespace": namespace, "name": name,
                "attributes": attributes, "text": text, "seen_from": seen_from,
                "seen_until": seen_until,
            }
            for _, key, parent, position, namespace, name, attributes, text, seen_from,
            seen_until in rows
        ]  # fmt: skip

    def _import_tags(self, feed_id: int, ids: dict[str, int], rows: Sequence[Row]) -> None:
        """Replace the feed's tags (every version) with exported ``rows``; ``ids``: key → id."""
        self.db.execute("DELETE FROM tags WHERE feed_id = ?", [feed_id])
        new_ids: list[int | None] = []
        for row in rows:
            key = row["key"]
            episode_id = ids.get(key) if key is not None else None
            if key is not None and episode_id is None:
                new_ids.append(None)  # an episode the archive does not have: not imported
                continue
            parent = row["parent"]
            cursor = self.db.conn.execute(
                INSERT_TAG,
                [feed_id, episode_id, new_ids[parent] if parent is not None else None,
                 row["position"], label(row["namespace"]), row["namespace"], row["name"],
                 row["attributes"], row["text"], row["seen_from"], row["seen_until"]],
            )  # fmt: skip
            new_ids.append(cursor.lastrowid)
