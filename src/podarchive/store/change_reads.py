"""The archive's history read as change rows (#28), and an archived podcast read whole for
republishing: read-only queries over the tables that already keep it, no schema change.

Each change row is a plain dict with ``kind`` (a kind of :mod:`podarchive.rules.changes`, or
``episode-revision``), ``at``, the feed (``feed_id``, ``feed_url``, ``podcast``), the
episode when there is one (``episode_id``, ``episode_key``, ``episode_title``, ``link``),
``table`` and ``rowid`` (the row that records it), ``extra`` (what tells two changes of one
thing at one time apart) and ``detail`` (a sentence); revisions add their old values
(``old_…``) and the values that followed (``new_…``: the next revision's, else the current
row's).
"""

from __future__ import annotations

import zlib
from typing import Any

from podarchive.core.types import Row

from .base import Connection

_FEED = "f.id AS feed_id, f.url AS feed_url, coalesce(f.name, f.title, f.url) AS podcast"
_EPISODE = "e.id AS episode_id, e.key AS episode_key, e.title AS episode_title, e.link AS link"
#: a new episode under the title it came with (its first revision kept it, if it changed since)
_FIRST = (
    "e.id AS episode_id, e.key AS episode_key, coalesce((SELECT r.title FROM episode_revisions r "
    "WHERE r.episode_id = e.id ORDER BY r.id LIMIT 1), e.title) AS episode_title, e.link AS link"
)
_REVISED = (
    "guid", "title", "published", "duration", "enclosure_url", "enclosure_type",
    "enclosure_length", "notes_text", "page_notes_text",
)  # fmt: skip
_FEED_REVISED = ("title", "author", "image", "description")


def _scope(
    at: str, feed_id: int | None, since: str | None, row: tuple[str, int] | None, table: str | None
) -> tuple[str, list[Any]]:
    """The WHERE conditions every change query shares."""
    where: list[str] = [f"{at} IS NOT NULL"]
    args: list[Any] = []
    if feed_id is not None:
        where.append("f.id = ?")
        args.append(feed_id)
    if since is not None:
        where.append(f"{at} >= ?")
        args.append(since)
    if row is not None:  # one revision's row: the other queries find nothing
        where.append(f"{table}.id = ?" if row[0] == table else "0")
        args.extend([row[1]] if row[0] == table else [])
    return " AND ".join(where), args


#: (table the change lives in, its time column, the query's FROM and columns). ``{W}``: the
#: WHERE conditions of :func:`_scope`.
_SIMPLE: dict[str, tuple[str, str, str]] = {
    "podcast-added": (
        "feeds",
        "f.first_seen_at",
        f"SELECT NULL AS [table], f.id AS rowid, f.first_seen_at AS at, {_FEED}, "
        "NULL AS extra, NULL AS detail FROM feeds f WHERE {W}",
    ),
    "episode-added": (
        "episodes",
        "e.first_seen_at",
        f"SELECT NULL AS [table], e.id AS rowid, e.first_seen_at AS at, {_FEED}, {_FIRST}, "
        "NULL AS extra, 'Published ' || e.published || '.' AS detail "
        "FROM episodes e JOIN feeds f ON f.id = e.feed_id WHERE {W}",
    ),
    "episode-removed": (
        "episodes",
        "e.removed_from_feed_at",
        f"SELECT NULL AS [table], e.id AS rowid, e.removed_from_feed_at AS at, {_FEED}, "
        f"{_EPISODE}, NULL AS extra, 'The feed no longer lists it; the archive keeps it.' "
        "AS detail FROM episodes e JOIN feeds f ON f.id = e.feed_id WHERE {W}",
    ),
    "episode-unlisted": (
        "episodes",
        "e.unlisted_at",
        f"SELECT NULL AS [table], e.id AS rowid, e.unlisted_at AS at, {_FEED}, {_EPISODE}, "
        "NULL AS extra, 'It scrolled off the feed (older than every episode it lists).' "
        "AS detail FROM episodes e JOIN feeds f ON f.id = e.feed_id WHERE {W}",
    ),
    "page-changed": (
        "page_bodies",
        "page_bodies.seen_at",
        f"SELECT NULL AS [table], page_bodies.id AS rowid, page_bodies.seen_at AS at, {_FEED}, "
        f"{_EPISODE}, d.hash AS extra, 'The page served other bytes (' || d.size || "
        "' bytes, SHA-256 ' || d.hash || ').' AS detail FROM page_bodies "
        "JOIN documents d ON d.id = page_bodies.document_id "
        "JOIN episodes e ON e.id = page_bodies.episode_id JOIN feeds f ON f.id = e.feed_id "
        "WHERE {W} AND EXISTS (SELECT 1 FROM page_bodies p WHERE p.episode_id = "
        "page_bodies.episode_id AND (p.seen_at, p.id) < (page_bodies.seen_at, page_bodies.id)) "
        "AND NOT EXISTS (SELECT 1 FROM episode_revisions r WHERE r.episode_id = e.id AND "
        "r.source = 'page' AND r.seen_until = page_bodies.seen_at)",
    ),
    "transcript-revised": (
        "transcript_revisions",
        "transcript_revisions.seen_until",
        f"SELECT NULL AS [table], transcript_revisions.id AS rowid, "
        f"transcript_revisions.seen_until AS at, {_FEED}, {_EPISODE}, t.url AS extra, "
        "t.url || ': ' || coalesce(transcript_revisions.items, 0) || ' passages before, ' || "
        "coalesce(t.items, 0) || ' now.' AS detail FROM transcript_revisions "
        "JOIN transcripts t ON t.id = transcript_revisions.transcript_id "
        "JOIN episodes e ON e.id = transcript_revisions.episode_id "
        "JOIN feeds f ON f.id = e.feed_id WHERE {W}",
    ),
    "chapters-revised": (
        "chapter_revisions",
        "chapter_revisions.seen_until",
        f"SELECT NULL AS [table], chapter_revisions.id AS rowid, "
        f"chapter_revisions.seen_until AS at, {_FEED}, {_EPISODE}, "
        "coalesce(c.url, chapter_revisions.format) AS extra, "
        "coalesce(c.url, 'the feed''s chapters') || ': ' || "
        "coalesce(chapter_revisions.items, 0) || ' chapters before.' AS detail "
        "FROM chapter_revisions LEFT JOIN chapter_files c ON c.id = "
        "chapter_revisions.chapter_file_id JOIN episodes e ON e.id = chapter_revisions.episode_id "
        "JOIN feeds f ON f.id = e.feed_id WHERE {W}",
    ),
    "media-changed": (
        "episode_media",
        "episode_media.first_seen_at",
        f"SELECT NULL AS [table], episode_media.id AS rowid, episode_media.first_seen_at AS at, "
        f"{_FEED}, {_EPISODE}, episode_media.sha256 AS extra, episode_media.url || "
        "' served other bytes: version ' || episode_media.version || ' (SHA-256 ' || "
        "episode_media.sha256 || ').' AS detail FROM episode_media "
        "JOIN episodes e ON e.id = episode_media.episode_id JOIN feeds f ON f.id = e.feed_id "
        "WHERE {W} AND episode_media.version > 1",
    ),
    "feed-moved": (
        "feed_moves",
        "feed_moves.moved_at",
        f"SELECT NULL AS [table], feed_moves.id AS rowid, feed_moves.moved_at AS at, {_FEED}, "
        "feed_moves.new_url AS extra, 'From ' || coalesce(feed_moves.old_url, f.url) || ' to ' || "
        "feed_moves.new_url || ' (' || coalesce(feed_moves.reason, 'moved') || ').' AS detail "
        "FROM feed_moves JOIN feeds f ON f.id = feed_moves.feed_id WHERE {W}",
    ),
    "feed-gone": (
        "feeds",
        "f.gone_at",
        f"SELECT NULL AS [table], f.id AS rowid, f.gone_at AS at, {_FEED}, NULL AS extra, "
        "'The server says the feed is gone for good (HTTP 410); the archive keeps it.' "
        "AS detail FROM feeds f WHERE {W}",
    ),
}


def _next_or_current(
    alias: str, table: str, parent: str, current: str, columns: tuple[str, ...]
) -> str:
    """``new_…`` columns: the revision after ``alias``'s (same parent), else the current row."""
    nxt = (
        f"(SELECT min(n.id) FROM {table} n WHERE n.{parent} = {alias}.{parent} "
        f"AND n.id > {alias}.id)"
    )
    return ", ".join(
        f"CASE WHEN {nxt} IS NULL THEN {current}.{c} ELSE "
        f"(SELECT n.{c} FROM {table} n WHERE n.id = {nxt}) END AS new_{c}"
        for c in columns
    )


_EPISODE_REVISIONS = (
    f"SELECT 'episode-revision' AS kind, episode_revisions.id AS rowid, "
    f"episode_revisions.seen_until AS at, {_FEED}, {_EPISODE}, episode_revisions.source, "
    "episode_revisions.changed, "
    + ", ".join(f"episode_revisions.{c} AS old_{c}" for c in _REVISED)
    + ", "
    + _next_or_current("episode_revisions", "episode_revisions", "episode_id", "e", _REVISED)
    + " FROM episode_revisions JOIN episodes e ON e.id = episode_revisions.episode_id "
    "JOIN feeds f ON f.id = e.feed_id WHERE {W}"
)
_FEED_REVISIONS = (
    f"SELECT 'podcast-edited' AS kind, feed_revisions.id AS rowid, "
    f"feed_revisions.seen_until AS at, {_FEED}, feed_revisions.changed, "
    + ", ".join(f"feed_revisions.{c} AS old_{c}" for c in _FEED_REVISED)
    + ", "
    + _next_or_current("feed_revisions", "feed_revisions", "feed_id", "f", _FEED_REVISED)
    + " FROM feed_revisions JOIN feeds f ON f.id = feed_revisions.feed_id WHERE {W}"
)


class ChangeReadsMixin(Connection):
    """The archive's changes (as rows for :func:`podarchive.rules.changes.to_changes`) and a
    podcast read whole (``podarchive republish``)."""

    def _dicts(self, sql: str, args: list[Any]) -> list[Row]:
        cursor = self.db.execute(sql, args)
        names = [d[0] for d in cursor.description]
        return [dict(zip(names, values, strict=True)) for values in cursor.fetchall()]

    def change_rows(
        self,
        feed_id: int | None = None,
        since: str | None = None,
        row: tuple[str, int] | None = None,
    ) -> list[Row]:
        """Every change of the archive (of one feed; from ``since`` on), or the one recorded
        by ``row`` (table, row id: a revision's page)."""
        found: list[Row] = []
        for kind, (_, at, sql) in _SIMPLE.items():
            where, args = _scope(at, feed_id, since, row, None)
            found.extend({**r, "kind": kind} for r in self._dicts(sql.replace("{W}", where), args))
        for table, sql in (
            ("episode_revisions", _EPISODE_REVISIONS),
            ("feed_revisions", _FEED_REVISIONS),
        ):
            where, args = _scope(f"{table}.seen_until", feed_id, since, row, table)
            found.extend(self._dicts(sql.replace("{W}", where), args))
        return found

    def podcast_feed_id(self, name: str) -> int | None:
        """The id of the feed ``name`` names: its configured or current URL, its name or title
        (the first of those, by id), or its id as text."""
        for sql in (
            "SELECT id FROM feeds WHERE url = ? OR fetch_url = ? ORDER BY id",
            "SELECT id FROM feeds WHERE name = ? OR title = ? ORDER BY id",
        ):
            found = self.db.execute(sql, [name, name]).fetchone()
            if found is not None:
                return int(found[0])
        if name.isdigit():
            found = self.db.execute("SELECT id FROM feeds WHERE id = ?", [int(name)]).fetchone()
            return None if found is None else int(found[0])
        return None

    def podcast_rows(self, feed_id: int) -> tuple[Row, list[Row]] | None:
        """A feed's row and every episode it ever had (oldest first), each with its latest
        stored media payload for its current enclosure (``media_sha256``, ``media_ext``,
        ``media_size``, ``media_type``) and its transcripts and chapters files (lists of
        dicts: ``url``, ``type``…, ``document_hash``, ``document_type``)."""
        feeds = self._dicts("SELECT * FROM feeds WHERE id = ?", [feed_id])
        if not feeds:
            return None
        episodes = self._dicts(
            "SELECT e.*, m.sha256 AS media_sha256, p.ext AS media_ext, p.size AS media_size, "
            "p.content_type AS media_type FROM episodes e LEFT JOIN episode_media m ON m.id = "
            "(SELECT x.id FROM episode_media x WHERE x.episode_id = e.id AND x.url = "
            "e.enclosure_url ORDER BY x.version DESC LIMIT 1) LEFT JOIN media_payloads p ON "
            "p.sha256 = m.sha256 WHERE e.feed_id = ? "
            "ORDER BY coalesce(e.published, e.first_seen_at), e.id",
            [feed_id],
        )
        for table, key in (("transcripts", "transcript_files"), ("chapter_files", "chapter_files")):
            files = self._dicts(
                f"SELECT t.*, d.hash AS document_hash, d.content_type AS document_type "
                f"FROM {table} t JOIN episodes e ON e.id = t.episode_id LEFT JOIN documents d "
                "ON d.id = t.document_id WHERE e.feed_id = ? ORDER BY t.episode_id, t.position",
                [feed_id],
            )
            by_episode: dict[int, list[Row]] = {}
            for file in files:
                by_episode.setdefault(int(file["episode_id"]), []).append(file)
            for episode in episodes:
                episode[key] = by_episode.get(int(episode["id"]), [])
        return feeds[0], episodes

    def document_by_hash(self, digest: str) -> tuple[bytes, str | None] | None:
        """An archived transcript or chapters body by its SHA-256: (bytes, content type)."""
        found = self.db.execute(
            "SELECT body, content_type FROM documents WHERE hash = ? AND kind != 'page'", [digest]
        ).fetchone()
        return None if found is None else (zlib.decompress(found[0]), found[1])
