"""The archive's tables as each schema version left them, and the numbered migrations.

Every change to the schema is a migration appended to :data:`MIGRATIONS`; the schema
version (``PRAGMA user_version``) is how many have run. A migration uses only frozen
column lists (``V1_…``, or the literal columns it adds): the live lists
(:data:`EPISODE_COLUMNS`, :data:`FEED_META_COLUMNS`) are derived from them, so a fresh
archive (every migration in order) and a migrated one end with the same tables.

A new episode field from the feed: append it to :data:`EPISODE_COLUMNS`, add a migration
that adds the column, and test that migration on an archive of the previous version
(``tests/test_schema_recipe.py`` proves the recipe on a scratch copy of this module). Put the
field in the episode's row (``rows.episode_row``) only when the item has it: rows stored before
hash the same, so the first run after the upgrade does not rewrite every episode.

Migrations 1 to 8 live in :mod:`.migrations_early` (imported here, run in the same order).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from .migrations_changes import _change_indexes_v19
from .migrations_compact import _compact_v23
from .migrations_disk import _disk_v24
from .migrations_early import (
    BOOKKEEPING_INDEX,
    FILE_STATE_COLUMNS,
    FILES_DUE,
    FTS_UPDATE_TRIGGER,
    PAGE_RECHECK,
    PAGES_DUE,
    PAGES_DUE_INDEX,
    V1_EPISODE_COLUMNS,
    V1_FEED_META_COLUMNS,
    _archive_around_v8,
    _backfill_v4,
    _covering_indexes_v7,
    _create_v1,
    _fts_text_updates_v6,
    _history_v3,
    _item_hashes_v5,
    _polite_fetching_v2,
)
from .migrations_images import _image_files_v17
from .migrations_links import LINK_URL_INDEX, LINK_URL_INDEX_SQL, _links_v20
from .migrations_podping import _podping_v21
from .migrations_push import _push_subscriptions_v18
from .migrations_push_notices import _push_notices_v22
from .migrations_reading import _reading_indexes_v16
from .tag_views import TAG_VIEWS

if TYPE_CHECKING:
    import sqlite_utils

__all__ = [  # the frozen names of migrations 1 to 8, read here by the rest of the store
    "BOOKKEEPING_INDEX",
    "EPISODE_COLUMNS",
    "FEED_META_COLUMNS",
    "FILES_DUE",
    "FILE_STATE_COLUMNS",
    "FTS_UPDATE_TRIGGER",
    "LOOKUP_INDEXES",
    "MEDIA_DUE_STATE",
    "MIGRATIONS",
    "PAGES_DUE",
    "PAGES_DUE_INDEX",
    "PAGE_RECHECK",
    "PARTIAL_INDEXES",
    "SCHEMA_VERSION",
    "V1_EPISODE_COLUMNS",
    "V1_FEED_META_COLUMNS",
    "Migration",
]

# The live lists, what the feed writes today: frozen v1 + the columns later migrations add.
FEED_META_COLUMNS = (*V1_FEED_META_COLUMNS, "ttl", "update_period", "update_frequency")  # v2
EPISODE_COLUMNS = (*V1_EPISODE_COLUMNS, "simple_chapters")  # v8; a new field: append, migrate


def _every_tag_v9(db: sqlite_utils.Database) -> None:
    """Issue #13: every extension element of channels and items, losslessly, in ``tags``
    (revised by ``seen_until``), and typed views over it. Filled from the stored feed
    snapshots on the archive's first write after the upgrade (``reparse.fill_tags``)."""
    db.table("tags").create(
        {
            "id": int, "feed_id": int, "episode_id": int, "parent_id": int, "position": int,
            "ns": str, "namespace": str, "name": str, "attributes": str, "text": str,
            "seen_from": str, "seen_until": str,
        },
        pk="id",
        not_null={"feed_id", "position", "ns", "namespace", "name", "seen_from"},
        foreign_keys=[
            ("feed_id", "feeds", "id"), ("episode_id", "episodes", "id"),
            ("parent_id", "tags", "id"),
        ],
    )  # fmt: skip
    db.execute(
        "CREATE INDEX idx_tags_current ON tags (feed_id, episode_id, id) WHERE seen_until IS NULL"
    )
    db.table("tags").create_index(["ns", "name"])
    db.table("tags").create_index(["parent_id"])
    db.table("tags").create_index(["episode_id"])
    db.execute("ALTER TABLE feeds ADD COLUMN tags_filled_at TEXT")
    for name, sql in TAG_VIEWS.items():
        db.execute(f"CREATE VIEW {name} AS {sql}")


def _fetch_settings_v10(db: sqlite_utils.Database) -> None:
    """Issue #14: the schedule settings a feed's pages and files were last fetched with
    (``allow_private_hosts``, ``user_agent``, ``pages``…, as JSON): when they change, the
    pages and files that failed are due at once instead of after their back-off."""
    db.execute("ALTER TABLE feeds ADD COLUMN fetch_settings TEXT")


# Frozen: migration 11 makes exactly these partial. Every row of a first ingest has no
# revision_id (current rows) and most tags no parent, so a full index on them held one entry
# per row (NULL and the rowid) that no query reads: every lookup of these columns is an
# equality or IN (a revision's rows, a tag's children, the foreign-key checks), which implies
# IS NOT NULL, so SQLite uses the partial index for it (tests/test_v10_archive.py).
PARTIAL_INDEXES = {
    "idx_links_revision_id": ("links", "revision_id"),
    "idx_transcript_segments_revision_id": ("transcript_segments", "revision_id"),
    "idx_chapters_revision_id": ("chapters", "revision_id"),
    "idx_tags_parent_id": ("tags", "parent_id"),
}


def _lean_indexes_v11(db: sqlite_utils.Database) -> None:
    """Issue #15: the indexes on ``revision_id`` and ``tags.parent_id`` hold only the rows
    that have one (at a first ingest of 30,000 episodes, 10 MB less and one index entry
    fewer per link written)."""
    for name, (table, column) in PARTIAL_INDEXES.items():
        db.execute(f"DROP INDEX IF EXISTS {name}")
        db.execute(f"CREATE INDEX {name} ON {table} ({column}) WHERE {column} IS NOT NULL")


def _fetch_warnings_v12(db: sqlite_utils.Database) -> None:
    """Issue #23: a feed fetch whose body gave fewer episodes than feedparser read items says
    so and why (``fetches.warning``); ``status`` reads each feed's latest one through a
    partial index holding only the rows that have one."""
    db.table("fetches").add_column("warning", str)
    db.execute(
        "CREATE INDEX idx_fetches_warning ON fetches (feed_id, started_at) "
        "WHERE warning IS NOT NULL"
    )


def _page_methods_v13(db: sqlite_utils.Database) -> None:
    """Issue #24: how each page's notes were found (``page_method``: "feed-match", "json-ld",
    "open-graph", "app-state", "simplecast", "generic"), the evidence and a confidence (0..1);
    NULL for the pages read before, until ``reparse``. A transcript shown on the page is a
    ``transcripts`` row of ``format`` "page" (no column needed)."""
    episodes = db.table("episodes")
    episodes.add_column("page_method", str)
    episodes.add_column("page_evidence", str)
    episodes.add_column("page_confidence", float)


# Issue #26: the media ledger. ``media_payloads`` holds each stored payload once, under the
# SHA-256 that names its file in the media folder; the other tables refer to it.
MEDIA_DUE_STATE = "next_check_at IS NOT NULL"


def _media_ledger_v14(db: sqlite_utils.Database) -> None:
    """Issue #26: the episodes' media, byte-exact: stored payloads (``media_payloads``), every
    fetch of an enclosure (``media_fetches``), each episode's versions (``episode_media``),
    fixity audits (``fixity_events``) and the per-enclosure download state (``media_state``:
    the partial file to resume, validators, the next re-check, failures)."""
    db.table("media_payloads").create(
        {
            "sha256": str, "size": int, "content_type": str, "ext": str,
            "first_seen_at": str, "last_seen_at": str, "last_audit_at": str, "last_audit": str,
        },
        pk="sha256",
        not_null={"size", "first_seen_at", "last_seen_at"},
    )  # fmt: skip
    db.table("media_payloads").create_index(["last_audit_at"])
    db.table("media_fetches").create(
        {
            "id": int, "episode_id": int, "url": str, "final_url": str, "status": int,
            "etag": str, "last_modified": str, "headers": str, "fetched_at": str,
            "bytes": int, "sha256": str, "outcome": str, "error": str,
        },
        pk="id",
        not_null={"episode_id", "url", "fetched_at", "outcome"},
        foreign_keys=[("episode_id", "episodes", "id"), ("sha256", "media_payloads", "sha256")],
        defaults={"bytes": 0},
    )  # fmt: skip
    db.table("media_fetches").create_index(["episode_id", "fetched_at"])
    db.execute(
        "CREATE INDEX idx_media_fetches_sha256 ON media_fetches (sha256) WHERE sha256 IS NOT NULL"
    )
    db.table("episode_media").create(
        {
            "id": int, "episode_id": int, "url": str, "sha256": str, "version": int,
            "first_seen_at": str, "last_seen_at": str,
        },
        pk="id",
        not_null={"episode_id", "url", "sha256", "version", "first_seen_at", "last_seen_at"},
        foreign_keys=[("episode_id", "episodes", "id"), ("sha256", "media_payloads", "sha256")],
    )  # fmt: skip
    db.table("episode_media").create_index(["episode_id", "url", "sha256"], unique=True)
    db.table("episode_media").create_index(["sha256"])
    db.table("fixity_events").create(
        {
            "id": int, "sha256": str, "checked_at": str, "expected": str, "found": str,
            "outcome": str,
        },
        pk="id",
        not_null={"sha256", "checked_at", "expected", "outcome"},
        foreign_keys=[("sha256", "media_payloads", "sha256")],
    )  # fmt: skip
    db.table("fixity_events").create_index(["sha256", "checked_at"])
    db.table("fixity_events").create_index(["checked_at"])
    db.table("media_state").create(
        {
            "id": int, "episode_id": int, "url": str, "partial_key": str, "validator": str,
            "partial_bytes": int, "etag": str, "last_modified": str, "next_check_at": str,
            "checks": int, "error_count": int, "last_error": str, "updated_at": str,
        },
        pk="id",
        not_null={"episode_id", "url", "partial_bytes", "checks", "error_count"},
        foreign_keys=[("episode_id", "episodes", "id")],
        defaults={"partial_bytes": 0, "checks": 0, "error_count": 0},
    )  # fmt: skip
    db.table("media_state").create_index(["episode_id", "url"], unique=True)
    db.execute(
        f"CREATE INDEX idx_media_state_due ON media_state (next_check_at) WHERE {MEDIA_DUE_STATE}"
    )


def _captures_v15(db: sqlite_utils.Database) -> None:
    """Issue #27: provenance kept at capture. ``captures``: one row per HTTP exchange behind a
    stored body (redirect hops and 304s too): the request and the response head as sent and
    received, the remote address, when, the software; the body stays where it is stored
    (``snapshot_id``, ``document_id`` or ``payload_sha256``). ``header_sets``: each distinct
    header list once, under the SHA-256 (32 bytes) of its canonical JSON (:mod:`.captures`),
    the values that differ on every response (``Date``, request ids…) in the capture's
    ``response_values``, so a poll's answer usually reuses a stored set. One index for an
    export, by feed and time (an export of every feed sorts them)."""
    db.table("header_sets").create(
        {"id": int, "sha256": bytes, "headers": str},
        pk="id",
        not_null={"sha256", "headers"},
    )
    db.table("header_sets").create_index(["sha256"], unique=True)
    db.table("captures").create(
        {
            "id": int, "feed_id": int, "episode_id": int, "kind": str, "method": str,
            "url": str, "http_version": str, "status": int, "reason": str,
            "request_headers_id": int, "response_headers_id": int, "content_encoding": str,
            "remote_ip": str, "started_at": str, "body_sha256": str, "body_size": int,
            "snapshot_id": int, "document_id": int, "payload_sha256": str, "software": str,
            "response_values": str,
        },
        pk="id",
        not_null={"kind", "method", "url", "status", "started_at"},
        foreign_keys=[
            ("feed_id", "feeds", "id"), ("episode_id", "episodes", "id"),
            ("request_headers_id", "header_sets", "id"),
            ("response_headers_id", "header_sets", "id"),
            ("snapshot_id", "snapshots", "id"), ("document_id", "documents", "id"),
            ("payload_sha256", "media_payloads", "sha256"),
        ],
    )  # fmt: skip
    db.table("captures").create_index(["feed_id", "started_at"])
    for column in ("snapshot_id", "document_id", "payload_sha256"):
        db.execute(
            f"CREATE INDEX idx_captures_{column} ON captures ({column}) WHERE {column} IS NOT NULL"
        )


# The links' lookup indexes (by URL, by domain), as sqlite-utils created them (migration 1):
# no constraint, only lookups. A run that adds many links may drop them and build them again
# at its end (Archive.deferred_link_indexes): inserting 960,000 links in URL order at random
# dirties most of the index's pages every feed (#15). An archive opened to write gets back
# any that is missing (a crash in such a run).
LOOKUP_INDEXES = {
    "idx_links_normalized_url": (
        'CREATE INDEX "idx_links_normalized_url"\n    ON "links" ("normalized_url")'
    ),
    "idx_links_domain": 'CREATE INDEX "idx_links_domain"\n    ON "links" ("domain")',
    LINK_URL_INDEX: LINK_URL_INDEX_SQL,  # migration 17: URLs as written, when not normalized
}  # fmt: skip


Migration = Callable[["sqlite_utils.Database"], None]
MIGRATIONS: tuple[Migration, ...] = (
    _create_v1,
    _polite_fetching_v2,
    _history_v3,
    _backfill_v4,
    _item_hashes_v5,
    _fts_text_updates_v6,
    _covering_indexes_v7,
    _archive_around_v8,
    _every_tag_v9,
    _fetch_settings_v10,
    _lean_indexes_v11,
    _fetch_warnings_v12,
    _page_methods_v13,
    _media_ledger_v14,
    _captures_v15,
    _reading_indexes_v16,  # v16 (#28)
    _image_files_v17,  # v17 (#28: artwork)
    _push_subscriptions_v18,  # v18 (#29)
    _change_indexes_v19,  # v19 (#28: the change feed)
    _links_v20,  # v20 (#28: link queries)
    _podping_v21,  # v21 (#29: the podping cursor)
    _push_notices_v22,  # v22 (#29: notifications as evidence)
    _compact_v23,  # v23 (#30: less disk for the same content)
    _disk_v24,  # v24 (#30: the link summary without a second copy of every URL)
)  # MIGRATIONS[n - 1] brings n - 1 → n
SCHEMA_VERSION = len(MIGRATIONS)
