"""The archive's history read as change rows (#28), and an archived podcast read whole for
republishing: read-only queries over the tables that already keep it.

Each kind of change is read from its table by its time column (:data:`SOURCES`), so a page of
the feed reads only the rows it can show: :meth:`ChangeReadsMixin.change_bound` finds the
time of the last change a page holds (each table's first times by its index, ``ORDER BY …
LIMIT``; migration v17 adds the indexes, :mod:`.migrations_changes`), then
:meth:`ChangeReadsMixin.change_rows` reads the changes between that time and the reader's.

Each change row is a plain dict with ``kind`` (a kind of :mod:`podarchive.rules.changes`, or
``episode-revision``), ``at``, the feed (``feed_id``, ``feed_url``, ``podcast``), the
episode when there is one (``episode_id``, ``episode_key``, ``episode_title``, ``link``),
``table`` and ``rowid`` (the row that records it), ``extra`` (what tells two changes of one
thing at one time apart) and ``detail`` (a sentence); revisions add their old values
(``old_…``) and the values that followed (``new_…``: the next revision's, else the current
row's).
"""

from __future__ import annotations

import re
import zlib
from collections.abc import Collection, Mapping
from dataclasses import dataclass
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


#: (table the change lives in, its time column, the query). ``{W}``: the WHERE conditions of
#: :func:`_where`.
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


def _main_from(sql: str) -> int:
    """Where the main ``FROM`` of ``sql`` starts: the first outside parentheses and quotes."""
    depth, quoted = 0, False
    for i, char in enumerate(sql):
        if char == "'":
            quoted = not quoted
        elif not quoted and char in "()":
            depth += 1 if char == "(" else -1
        elif not quoted and depth == 0 and sql.startswith(" FROM ", i):
            return i
    raise ValueError(f"no FROM in {sql!r}")


#: The columns that name a change and order it (:func:`podarchive.rules.changes.row_change_id`).
KEY_COLUMNS = ("kind", "rowid", "at", "feed_url", "episode_key", "extra", "source", "changed")


@dataclass(frozen=True, slots=True)
class _Source:
    """One query of change rows: the kind its rows have (``name``; :attr:`kind` when the
    query does not say it), the revision table whose rows it reads (a revision's page), its
    time column, its columns and its ``FROM … WHERE {W} …``."""

    name: str
    kind: str | None
    table: str | None
    at: str
    columns: str
    body: str

    @classmethod
    def of(cls, name: str, table: str | None, at: str, sql: str) -> _Source:
        split = _main_from(sql)
        columns = sql[:split].removeprefix("SELECT ")
        kind = None if "AS kind," in columns else name
        return cls(name, kind, table, at, columns, sql[split:])

    def query(self, where: str) -> str:
        """Every column of the rows within ``where`` (the kind too)."""
        kind = f"'{self.kind}' AS kind, " if self.kind else ""
        return f"SELECT {kind}{self.columns}{self.body.replace('{W}', where)}"

    @property
    def keys(self) -> str:
        """The :data:`KEY_COLUMNS` of :meth:`query`'s rows (NULL for those it has not)."""
        return ", ".join(
            name if name == "kind" or re.search(rf"(?:\bAS |\.){name}(?:,|$)", self.columns)
            else f"NULL AS {name}"
            for name in KEY_COLUMNS
        )  # fmt: skip


SOURCES = (
    *(_Source.of(kind, None, at, sql) for kind, (_, at, sql) in _SIMPLE.items()),
    _Source.of(
        "episode-revision", "episode_revisions", "episode_revisions.seen_until", _EPISODE_REVISIONS
    ),
    _Source.of("podcast-edited", "feed_revisions", "feed_revisions.seen_until", _FEED_REVISIONS),
)
#: A bound on a change's time: (operator, time), e.g. (">=", since), ("<", now).
Bound = tuple[str, str]
_OPERATORS = frozenset({"<", "<=", ">", ">="})


def _where(
    source: _Source, feed_id: int | None, bounds: tuple[Bound, ...]
) -> tuple[str, list[Any]]:
    """The WHERE conditions of one source's query: its time known and within ``bounds``, of
    one feed when ``feed_id`` is given."""
    at = _time(source, feed_id)
    where: list[str] = [f"{source.at} IS NOT NULL"]
    args: list[Any] = []
    if feed_id is not None:
        where.append("f.id = ?")
        args.append(feed_id)
    for operator, value in bounds:
        if operator not in _OPERATORS:
            raise ValueError(f"not a comparison: {operator!r}")
        where.append(f"{at} {operator} ?")
        args.append(value)
    return " AND ".join(where), args


def _time(source: _Source, feed_id: int | None) -> str:
    """The time column as the bounds and the order name it: for one feed, ``+column`` (no index
    of the time column: the feed's own rows are read by the feed's indexes, a podcast's few
    hundred or thousand, rather than every podcast's latest until the feed's come up)."""
    return source.at if feed_id is None else f"+{source.at}"


def times_sql(
    source: _Source, feed_id: int | None, bounds: tuple[Bound, ...], newest_first: bool
) -> tuple[str, list[Any]]:
    """The query of a source's first times within ``bounds`` (newest or oldest first), by its
    time column's index; its last parameter, the ``LIMIT``, is the caller's."""
    where, args = _where(source, feed_id, bounds)
    order = "DESC" if newest_first else "ASC"
    body = source.body.replace("{W}", where)
    return f"SELECT {source.at}{body} ORDER BY {_time(source, feed_id)} {order} LIMIT ?", args


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
        bounds: tuple[Bound, ...] = (),
        only: Mapping[str, Collection[int]] | None = None,
    ) -> list[Row]:
        """The archive's changes (of one feed) whose time is within ``bounds``, e.g.
        ``((">=", since), ("<", now))``, each source read by its time column's index; with
        ``only``, just the rows it names (row kind → row ids, as :meth:`change_keys` gave)."""
        found: list[Row] = []
        for source in SOURCES:
            where, args = _where(source, feed_id, bounds)
            sql = source.query(where)
            if only is not None:
                wanted = list(only.get(source.name, ()))
                if not wanted:
                    continue
                sql = f"SELECT * FROM ({sql}) WHERE rowid IN ({', '.join('?' * len(wanted))})"
                args.extend(wanted)
            found.extend(self._dicts(sql, args))
        return found

    def change_keys(self, feed_id: int | None, bounds: tuple[Bound, ...]) -> list[Row]:
        """What names and orders each change within ``bounds`` (:data:`KEY_COLUMNS`), its
        content not read: the changes of one busy second, thousands, are ordered from these
        before any is read whole (:class:`podarchive.rules.changes.ChangeKey`)."""
        found: list[Row] = []
        for source in SOURCES:
            where, args = _where(source, feed_id, bounds)
            found.extend(self._dicts(f"SELECT {source.keys} FROM ({source.query(where)})", args))
        return found

    def change_row(self, table: str, rowid: int) -> list[Row]:
        """The change recorded by row ``rowid`` of revision table ``table`` (its page): one
        row, or none."""
        found: list[Row] = []
        for source in SOURCES:
            if source.table == table:
                where, args = _where(source, None, ())
                sql = f"{source.query(where)} AND {table}.id = ?"
                found.extend(self._dicts(sql, [*args, rowid]))
        return found

    def change_bound(
        self,
        feed_id: int | None,
        bounds: tuple[Bound, ...],
        limit: int,
        newest_first: bool,
    ) -> str | None:
        """The time of the ``limit``-th change (of one feed) within ``bounds``, the newest
        first or the oldest first: the changes a page of ``limit`` can show lie between it and
        the bounds. None when fewer than ``limit`` changes are within them (all may show).

        Each source gives its first ``limit`` times by its time index (``ORDER BY … LIMIT``);
        once ``limit`` times are known, the next sources are read only up to the ``limit``-th
        of them, so a source with few changes is not read through."""
        times: list[str] = []
        found: str | None = None
        for source in SOURCES:
            within = bounds if found is None else (*bounds, (">=" if newest_first else "<=", found))
            sql, args = times_sql(source, feed_id, within, newest_first)
            times.extend(t for (t,) in self.db.execute(sql, [*args, limit]).fetchall())
            times = sorted(times, reverse=newest_first)[:limit]
            found = times[-1] if len(times) == limit else None
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
