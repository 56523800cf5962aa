"""The archive's first eight migrations (schema 1 to 8) and the frozen lists and SQL they use.

Frozen: each creates exactly what it did when it was written (``schema.MIGRATIONS`` runs them
in order, then the later ones in ``schema``). The live column lists are derived in
``schema`` from the ``V1_…`` lists here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import sqlite_utils


V1_FEED_META_COLUMNS = (
    "title",
    "link",
    "description",
    "author",
    "owner_name",
    "owner_email",
    "image",
    "language",
    "categories",
    "explicit",
    "type",
    "podcast_guid",
    "locked",
    "funding",
    "new_feed_url",
    "updated",
)  # fmt: skip  -- frozen: migration 1 creates exactly these
V1_EPISODE_COLUMNS = (
    "guid",
    "title",
    "published",
    "updated",
    "duration",
    "season",
    "number",
    "episode_type",
    "explicit",
    "link",
    "summary",
    "notes_html",
    "notes_text",
    "image",
    "enclosure_url",
    "enclosure_type",
    "enclosure_length",
    "transcripts",
    "chapters",
    "persons",
    "page_url",
)  # fmt: skip  -- frozen: migration 1 creates exactly these


def _create_v1(db: sqlite_utils.Database) -> None:
    db.table("feeds").create(
        {
            "id": int, "url": str, "name": str,
            **dict.fromkeys(V1_FEED_META_COLUMNS, str),
            "explicit": int, "locked": int,
            "etag": str, "last_modified": str, "content_hash": str,
            "last_fetched_at": str, "last_success_at": str, "last_status": int,
            "last_error": str, "error_count": int, "first_seen_at": str,
        },
        pk="id",
        not_null={"url"},
        defaults={"error_count": 0},
    )  # fmt: skip
    db.table("feeds").create_index(["url"], unique=True)
    db.table("episodes").create(
        {
            "id": int, "feed_id": int, "key": str,
            **dict.fromkeys(V1_EPISODE_COLUMNS, str),
            "duration": int, "season": int, "number": int, "explicit": int,
            "enclosure_length": int,
            "page_status": str, "page_error": str, "page_extractor": str,
            "page_notes_html": str, "page_notes_text": str, "page_fetched_at": str,
            "page_attempts": int, "page_etag": str, "page_last_modified": str,
            "first_seen_at": str, "row_hash": str,
        },
        pk="id",
        not_null={"feed_id", "key"},
        foreign_keys=[("feed_id", "feeds", "id")],
        defaults={"page_attempts": 0},
    )  # fmt: skip
    db.table("episodes").create_index(["feed_id", "key"], unique=True)
    db.table("episodes").create_index(["published"])
    db.table("episodes").create_index(["page_status"])
    db.table("links").create(
        {
            "id": int, "episode_id": int, "source": str, "position": int,
            "url": str, "normalized_url": str, "domain": str, "text": str,
        },
        pk="id",
        not_null={"episode_id", "source", "position", "url"},
        foreign_keys=[("episode_id", "episodes", "id")],
    )  # fmt: skip
    db.table("links").create_index(["episode_id", "source", "position"], unique=True)
    db.table("links").create_index(["domain"])
    db.table("links").create_index(["normalized_url"])
    db.table("fetches").create(
        {
            "id": int, "feed_id": int, "episode_id": int, "kind": str, "url": str,
            "started_at": str, "ms": int, "status": int, "bytes": int, "error": str,
        },
        pk="id",
        not_null={"kind", "url", "started_at"},
        foreign_keys=[("feed_id", "feeds", "id"), ("episode_id", "episodes", "id")],
    )  # fmt: skip
    db.table("fetches").create_index(["feed_id", "started_at"])
    db.table("fetches").create_index(["episode_id"])
    db.table("episodes").enable_fts(
        ["title", "summary", "notes_text", "page_notes_text"],
        fts_version="FTS5",
        create_triggers=True,
        tokenize="porter",
    )


def _polite_fetching_v2(db: sqlite_utils.Database) -> None:
    """Issue #3: due times, back-off, Retry-After per host, permanent moves, 410 Gone."""
    feeds = db.table("feeds")
    for name, kind in (
        ("fetch_url", str), ("gone_at", str), ("not_before", str), ("next_due_at", str),
        ("last_error_at", str), ("warnings", str),
        ("ttl", int), ("update_period", str), ("update_frequency", int),
    ):  # fmt: skip
        feeds.add_column(name, kind)
    db.table("hosts").create(
        {"host": str, "not_before": str, "reason": str, "updated_at": str}, pk="host"
    )
    db.table("feed_redirects").create(
        {"id": int, "feed_id": int, "status": int, "target": str, "seen_at": str},
        pk="id",
        not_null={"feed_id", "target", "seen_at"},
        foreign_keys=[("feed_id", "feeds", "id")],
    )
    db.table("feed_redirects").create_index(["feed_id", "seen_at"])
    db.table("feed_moves").create(
        {"id": int, "feed_id": int, "old_url": str, "new_url": str, "reason": str, "moved_at": str},
        pk="id",
        not_null={"feed_id", "new_url", "moved_at"},
        foreign_keys=[("feed_id", "feeds", "id")],
    )
    db.table("feed_moves").create_index(["feed_id"])


def _history_v3(db: sqlite_utils.Database) -> None:
    """Issue #4: revisions of episodes and feeds, removed episodes, raw feed snapshots."""
    episodes = db.table("episodes")
    for name in ("removed_from_feed_at", "unlisted_at", "version_seen_at", "page_version_seen_at"):
        episodes.add_column(name, str)
    db.execute("UPDATE episodes SET version_seen_at = first_seen_at")
    db.execute("UPDATE episodes SET page_version_seen_at = page_fetched_at")
    db.table("feeds").add_column("meta_seen_at", str)
    db.execute("UPDATE feeds SET meta_seen_at = first_seen_at WHERE title IS NOT NULL")
    db.table("episode_revisions").create(
        {
            "id": int, "episode_id": int, "source": str, "seen_from": str, "seen_until": str,
            "changed": str, "guid": str, "title": str, "published": str, "duration": int,
            "enclosure_url": str, "enclosure_type": str, "enclosure_length": int,
            "notes_html": str, "notes_text": str, "page_notes_html": str, "page_notes_text": str,
        },
        pk="id",
        not_null={"episode_id", "source", "seen_until"},
        foreign_keys=[("episode_id", "episodes", "id")],
    )  # fmt: skip
    db.table("episode_revisions").create_index(["episode_id", "seen_until"])
    db.table("episode_revisions").create_index(["seen_until"])
    db.table("feed_revisions").create(
        {
            "id": int, "feed_id": int, "seen_from": str, "seen_until": str, "changed": str,
            "title": str, "author": str, "image": str, "description": str,
        },
        pk="id",
        not_null={"feed_id", "seen_until"},
        foreign_keys=[("feed_id", "feeds", "id")],
    )  # fmt: skip
    db.table("feed_revisions").create_index(["feed_id", "seen_until"])
    db.table("links").add_column("revision_id", int, fk="episode_revisions", fk_col="id")
    db.execute("DROP INDEX IF EXISTS idx_links_episode_id_source_position")
    db.execute(
        "CREATE UNIQUE INDEX idx_links_current ON links (episode_id, source, position) "
        "WHERE revision_id IS NULL"
    )
    db.table("links").create_index(["revision_id"])
    db.table("snapshots").create(
        {
            "id": int, "feed_id": int, "hash": str, "first_fetched_at": str, "url": str,
            "content_type": str, "size": int, "body": bytes,
        },
        pk="id",
        not_null={"feed_id", "hash", "first_fetched_at", "body"},
        foreign_keys=[("feed_id", "feeds", "id")],
    )  # fmt: skip
    db.table("snapshots").create_index(["hash"], unique=True)
    db.table("feed_bodies").create(
        {"id": int, "feed_id": int, "snapshot_id": int, "seen_at": str},
        pk="id",
        not_null={"feed_id", "snapshot_id", "seen_at"},
        foreign_keys=[("feed_id", "feeds", "id"), ("snapshot_id", "snapshots", "id")],
    )
    db.table("feed_bodies").create_index(["feed_id", "seen_at"])


def _backfill_v4(db: sqlite_utils.Database) -> None:
    """Issue #6: archive pages (paged feeds, RFC 5005 archives), episodes found on the site."""
    db.table("feed_bodies").add_column("kind", str, not_null_default="feed")
    episodes = db.table("episodes")
    episodes.add_column("found_on_site_at", str)
    episodes.add_column("archive_url", str)
    db.table("backfill_walks").create(
        {"id": int, "feed_id": int, "started_at": str, "finished_at": str},
        pk="id",
        not_null={"feed_id", "started_at"},
        foreign_keys=[("feed_id", "feeds", "id")],
    )
    db.table("backfill_walks").create_index(["feed_id"])
    db.table("backfill_pages").create(
        {
            "id": int, "feed_id": int, "url": str, "kind": str, "walk_id": int,
            "fetched_at": str, "status": str, "error": str, "since": str, "etag": str,
            "last_modified": str, "links": str, "episode_keys": str, "episodes": int,
        },
        pk="id",
        not_null={"feed_id", "url", "kind", "walk_id", "fetched_at", "status"},
        foreign_keys=[("feed_id", "feeds", "id"), ("walk_id", "backfill_walks", "id")],
    )  # fmt: skip
    db.table("backfill_pages").create_index(["feed_id", "url"], unique=True)


def _item_hashes_v5(db: sqlite_utils.Database) -> None:
    """Issue #7: per-episode raw item hashes; snapshots that share an earlier one's items."""
    db.table("episodes").add_column("item_hash", str)
    snapshots = db.table("snapshots")
    for name, kind in (
        ("items_hash", str), ("items_from", int), ("items_to", int), ("items_cut", int),
        ("depth", int),
    ):  # fmt: skip
        snapshots.add_column(name, kind)
    snapshots.add_column("base_id", int, fk="snapshots", fk_col="id")
    snapshots.create_index(["items_hash"])


# sqlite-utils' update trigger (enable_fts, create_triggers=True) fires on an UPDATE of any
# column and re-indexes the episode's whole text; this one, under the same name (so
# sqlite-utils and Datasette still see their FTS setup), only when an indexed column is set.
FTS_UPDATE_TRIGGER = """\
CREATE TRIGGER "episodes_au" AFTER UPDATE OF "title", "summary", "notes_text", "page_notes_text" ON "episodes" BEGIN
  INSERT INTO "episodes_fts" ("episodes_fts", rowid, "title", "summary", "notes_text", "page_notes_text") VALUES('delete', old.rowid, old."title", old."summary", old."notes_text", old."page_notes_text");
  INSERT INTO "episodes_fts" (rowid, "title", "summary", "notes_text", "page_notes_text") VALUES (new.rowid, new."title", new."summary", new."notes_text", new."page_notes_text");
END"""  # noqa: E501  -- sqlite-utils' body, kept byte for byte


def _fts_text_updates_v6(db: sqlite_utils.Database) -> None:
    """Issue #7: bookkeeping updates (page status, item hash, marks, keys) skip the FTS index.

    Only the update trigger changes; the index itself is not touched. An archive without the
    trigger (its FTS setup removed by hand) is left as it is.
    """
    if db.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'trigger' AND name = 'episodes_au'"
    ).fetchone():
        db.execute('DROP TRIGGER "episodes_au"')
        db.execute(FTS_UPDATE_TRIGGER)


# The per-feed reads of every changed poll, answered from an index instead of the wide rows
# (notes come before the bookkeeping columns, so reading those follows overflow pages).
# Frozen: migration 7 creates exactly these. ``id`` is the rowid, in every index entry.
BOOKKEEPING_INDEX = (
    "CREATE INDEX idx_episodes_feed_bookkeeping ON episodes "
    "(feed_id, key, row_hash, item_hash, removed_from_feed_at, unlisted_at, published)"
)  # KnownItems; Archive._stored_episodes
PAGES_DUE = "page_url IS NOT NULL AND page_status IN ('pending', 'failed', 'empty')"
PAGES_DUE_INDEX = (
    "CREATE INDEX idx_episodes_feed_pages_due ON episodes (feed_id, id, page_url, page_etag, "
    f"page_last_modified, page_status, page_attempts, page_fetched_at) WHERE {PAGES_DUE}"
)  # Archive.pages_to_fetch; partial: only the episodes whose page is still to fetch


def _covering_indexes_v7(db: sqlite_utils.Database) -> None:
    """Issue #7: a changed poll reads its feed's keys, hashes, marks and due pages from indexes.

    The partial index holds only the episodes whose page is due (a query uses it only when
    its WHERE clause repeats :data:`PAGES_DUE` word for word, literals and all).
    """
    db.execute(BOOKKEEPING_INDEX)
    db.execute(PAGES_DUE_INDEX)


# Frozen: migration 8 creates exactly these. The fetch state of a transcript or chapters file.
FILE_STATE_COLUMNS = {
    "status": str, "error": str, "format": str, "items": int, "warnings": str,
    "document_id": int, "etag": str, "last_modified": str, "fetched_at": str,
    "attempts": int, "failures": int, "next_check_at": str, "version_seen_at": str,
    "first_seen_at": str, "unlisted_at": str,
}  # fmt: skip
FILES_DUE = "unlisted_at IS NULL AND next_check_at IS NOT NULL"
PAGE_RECHECK = "page_recheck_at IS NOT NULL"
# the FTS triggers of the segment and chapter indexes: an UPDATE that only moves rows to a
# revision (revision_id) does not touch the index (the same idea as schema 6's episodes_au)
_FTS_TABLES = {"transcript_segments": ("text", "speaker"), "chapters": ("title",)}


def _text_update_trigger(table: str, columns: tuple[str, ...]) -> str:
    cols = ", ".join(f'"{c}"' for c in columns)
    old = ", ".join(f'old."{c}"' for c in columns)
    new = ", ".join(f'new."{c}"' for c in columns)
    return (
        f'CREATE TRIGGER "{table}_au" AFTER UPDATE OF {cols} ON "{table}" BEGIN\n'
        f'  INSERT INTO "{table}_fts" ("{table}_fts", rowid, {cols}) '
        f"VALUES('delete', old.rowid, {old});\n"
        f'  INSERT INTO "{table}_fts" (rowid, {cols}) VALUES (new.rowid, {new});\nEND'
    )


def _seconds_since(stamp: str, since: str) -> str:
    return f"(julianday({stamp}) - julianday({since})) * 86400"


# the age rule of podarchive.rules.recheck for pages archived before schema 8 (without jitter):
# from the last fetch, daily under a week old, weekly under a month, then monthly
_AGE_AT_FETCH = _seconds_since("page_fetched_at", "coalesce(published, first_seen_at)")
_FIRST_RECHECK = (
    "strftime('%Y-%m-%dT%H:%M:%SZ', page_fetched_at, CASE "
    f"WHEN {_AGE_AT_FETCH} < 7 * 86400 THEN '+1 days' "
    f"WHEN {_AGE_AT_FETCH} < 30 * 86400 THEN '+7 days' ELSE '+30 days' END)"
)


def _archive_around_v8(db: sqlite_utils.Database) -> None:
    """Issue #12: raw page, transcript and chapters bodies; transcripts and chapters as rows;
    page re-checks; Podlove Simple Chapters from the feed.

    Archived pages get their first re-check from the age rule; every transcript and chapters
    file the episodes already list becomes a pending file, fetched by the next run.
    """
    db.table("documents").create(
        {
            "id": int, "hash": str, "kind": str, "url": str, "content_type": str,
            "size": int, "body": bytes, "first_fetched_at": str,
        },
        pk="id",
        not_null={"hash", "kind", "body", "first_fetched_at"},
    )  # fmt: skip
    db.table("documents").create_index(["hash"], unique=True)
    episodes = db.table("episodes")
    episodes.add_column("simple_chapters", str)
    # not add_column(fk=...): sqlite-utils would rebuild the table, and drop its FTS triggers
    db.execute("ALTER TABLE episodes ADD COLUMN page_document_id INTEGER REFERENCES documents(id)")
    episodes.add_column("page_failures", int, not_null_default=0)
    episodes.add_column("page_recheck_at", str)
    db.execute(
        f"UPDATE episodes SET page_recheck_at = {_FIRST_RECHECK} "
        "WHERE page_status = 'ok' AND page_fetched_at IS NOT NULL"
    )
    db.execute(
        "CREATE INDEX idx_episodes_feed_recheck ON episodes (feed_id, page_recheck_at) "
        f"WHERE {PAGE_RECHECK}"
    )
    db.table("page_bodies").create(
        {"id": int, "episode_id": int, "document_id": int, "seen_at": str},
        pk="id",
        not_null={"episode_id", "document_id", "seen_at"},
        foreign_keys=[("episode_id", "episodes", "id"), ("document_id", "documents", "id")],
    )
    db.table("page_bodies").create_index(["episode_id", "seen_at"])
    _create_files(db)
    _create_rows(db)
    _list_files(db)


def _create_files(db: sqlite_utils.Database) -> None:
    """``transcripts`` and ``chapter_files``: one row per file an episode lists; revisions."""
    for table, extra in (
        ("transcripts", {"type": str, "language": str, "rel": str}),
        ("chapter_files", {"type": str, "version": str}),
    ):
        db.table(table).create(
            {
                "id": int, "episode_id": int, "url": str, "position": int, **extra,
                **FILE_STATE_COLUMNS,
            },
            pk="id",
            not_null={"episode_id", "url", "status"},
            foreign_keys=[("episode_id", "episodes", "id"), ("document_id", "documents", "id")],
            defaults={"attempts": 0, "failures": 0},
        )  # fmt: skip
        db.table(table).create_index(["episode_id", "url"], unique=True)
        db.execute(f"CREATE INDEX idx_{table}_due ON {table} (next_check_at) WHERE {FILES_DUE}")
    for table, parent in (("transcript_revisions", "transcripts"), ("chapter_revisions", None)):
        parent_col = "transcript_id" if parent else "chapter_file_id"
        db.table(table).create(
            {
                "id": int, parent_col: int, "episode_id": int, "document_id": int,
                "format": str, "items": int, "seen_from": str, "seen_until": str,
            },
            pk="id",
            not_null={"episode_id", "seen_until"},
            foreign_keys=[
                (parent_col, parent or "chapter_files", "id"),
                ("episode_id", "episodes", "id"),
                ("document_id", "documents", "id"),
            ],
        )  # fmt: skip
        db.table(table).create_index(["episode_id", "seen_until"])


def _create_rows(db: sqlite_utils.Database) -> None:
    """``transcript_segments`` and ``chapters`` with their full-text indexes."""
    db.table("transcript_segments").create(
        {
            "id": int, "transcript_id": int, "episode_id": int, "revision_id": int,
            "position": int, "start": float, "end": float, "speaker": str, "text": str,
        },
        pk="id",
        not_null={"transcript_id", "episode_id", "position", "text"},
        foreign_keys=[
            ("transcript_id", "transcripts", "id"),
            ("episode_id", "episodes", "id"),
            ("revision_id", "transcript_revisions", "id"),
        ],
    )  # fmt: skip
    db.execute(
        "CREATE UNIQUE INDEX idx_transcript_segments_current ON transcript_segments "
        "(transcript_id, position) WHERE revision_id IS NULL"
    )
    db.table("transcript_segments").create_index(["episode_id", "start"])
    db.table("transcript_segments").create_index(["revision_id"])
    db.table("chapters").create(
        {
            "id": int, "episode_id": int, "chapter_file_id": int, "revision_id": int,
            "source": str, "position": int, "start": float, "end": float, "title": str,
            "url": str, "image": str, "toc": int,
        },
        pk="id",
        not_null={"episode_id", "source", "position", "start"},
        foreign_keys=[
            ("episode_id", "episodes", "id"),
            ("chapter_file_id", "chapter_files", "id"),
            ("revision_id", "chapter_revisions", "id"),
        ],
    )  # fmt: skip
    db.table("chapters").create_index(["episode_id", "start"])
    db.table("chapters").create_index(["chapter_file_id"])
    db.table("chapters").create_index(["revision_id"])
    for table, columns in _FTS_TABLES.items():
        db.table(table).enable_fts(
            list(columns), fts_version="FTS5", create_triggers=True, tokenize="porter"
        )
        db.execute(f'DROP TRIGGER "{table}_au"')
        db.execute(_text_update_trigger(table, columns))


def _list_files(db: sqlite_utils.Database) -> None:
    """Every transcript and chapters file the archived episodes list, as pending files."""
    for table, column, extra in (
        ("transcripts", "transcripts", ", type, language, rel"),
        ("chapter_files", "chapters", ", type"),
    ):
        values = ", ".join(f"json_extract(j.value, '$.{c.strip()}')" for c in extra.split(",")[1:])
        db.execute(
            f"INSERT OR IGNORE INTO {table} (episode_id, url, position{extra}, status, "
            "first_seen_at, next_check_at) "
            f"SELECT e.id, json_extract(j.value, '$.url'), j.key, {values}, 'pending', "
            "e.first_seen_at, e.first_seen_at "
            f"FROM episodes e, json_each(e.{column}) j "
            f"WHERE e.{column} IS NOT NULL AND json_valid(e.{column}) "
            f"AND json_type(e.{column}) = 'array' AND j.type = 'object' "
            "AND json_type(j.value, '$.url') = 'text' AND json_extract(j.value, '$.url') != ''"
        )
