"""The only sqlite-utils user: the archive's schema, migrations and writes.

The archive is the user's data. It carries a schema version (``PRAGMA user_version``)
and every change to the schema is a numbered migration in :data:`MIGRATIONS`, run in
order inside one transaction when an older archive is opened. An archive from a newer
podarchive is refused rather than guessed at.

Nothing is written to a file before it is known to be an archive (:func:`check_file` reads
its header and tables without changing a byte): another program's database, a file that is
not SQLite and an archive from a newer podarchive are refused untouched. Archives carry
``PRAGMA application_id`` :data:`APPLICATION_ID`; older ones are recognised by their tables.
Every sqlite3 error from an :class:`Archive` method becomes a :class:`StorageError`
(:class:`ArchiveDamaged` when SQLite reports corruption).

Writes for one feed happen in one transaction (``Database.atomic``), so a crash never
leaves half a feed. Episodes are upserted with raw SQL guarded by a row hash
(``ON CONFLICT … DO UPDATE … WHERE row_hash IS NOT excluded.row_hash``): an unchanged
episode is never rewritten, which keeps re-runs cheap and the FTS index from growing.
The FTS sync trigger re-indexes the episode's whole text on an UPDATE that sets an indexed
column (title, summary, notes_text, page_notes_text; any column before schema 6), so a
write of those touches an episode row once where it can (issue #7).
"""

from __future__ import annotations

import contextlib
import hashlib
import inspect
import json
import operator
import sqlite3
import threading
import zlib
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from contextlib import closing, contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from functools import wraps
from pathlib import Path
from typing import Any, TypeVar

import sqlite_utils

from podarchive.errors import (
    ArchiveDamaged,
    ArchiveMissing,
    NotAnArchive,
    SchemaTooNew,
    StorageError,
)
from podarchive.history import (
    FEED_TRACKED,
    TRACKED,
    ChurnIndex,
    absence,
    changed_feed_fields,
    changed_fields,
)
from podarchive.types import (
    EpisodeWrite,
    FeedHistory,
    FeedState,
    FetchRecord,
    Link,
    PageTask,
    Row,
    SaveStats,
    Snapshot,
)

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
FEED_META_COLUMNS = (*V1_FEED_META_COLUMNS, "ttl", "update_period", "update_frequency")
EPISODE_COLUMNS = (
    "guid", "title", "published", "updated", "duration", "season", "number",
    "episode_type", "explicit", "link", "summary", "notes_html", "notes_text", "image",
    "enclosure_url", "enclosure_type", "enclosure_length", "transcripts", "chapters",
    "persons", "page_url",
)  # fmt: skip
REVISION_COLUMNS = (
    "guid", "title", "published", "duration", "enclosure_url", "enclosure_type",
    "enclosure_length", "notes_html", "notes_text", "page_notes_html", "page_notes_text",
)  # fmt: skip
HISTORY_EPISODE_COLUMNS = (
    *EPISODE_COLUMNS, "row_hash", "first_seen_at", "version_seen_at",
    "removed_from_feed_at", "unlisted_at",
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
INSERTED_COLUMNS = (
    "feed_id", "key", *EPISODE_COLUMNS, "page_status", "first_seen_at", "version_seen_at",
    "row_hash", "item_hash", "unlisted_at", "archive_url",
)  # fmt: skip
INSERT_EPISODE = (
    f"INSERT INTO episodes ({', '.join(INSERTED_COLUMNS)}) "
    f"VALUES ({', '.join('?' * len(INSERTED_COLUMNS))})"
)
INSERT_LINK = (
    "INSERT INTO links (episode_id, source, position, url, normalized_url, domain, text) "
    "VALUES (?, ?, ?, ?, ?, ?, ?)"
)


FEED_STATE_COLUMNS = (
    "id", "url", "etag", "last_modified", "content_hash", "error_count", "fetch_url",
    "gone_at", "not_before", "last_fetched_at", "ttl", "update_period", "update_frequency",
)  # fmt: skip


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
            **dict.fromkeys(EPISODE_COLUMNS, str),
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


MAX_DELTA_DEPTH = 16  # snapshot deltas chain at most this deep; then a full body again


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


Migration = Callable[[sqlite_utils.Database], None]
MIGRATIONS: tuple[Migration, ...] = (
    _create_v1,
    _polite_fetching_v2,
    _history_v3,
    _backfill_v4,
    _item_hashes_v5,
    _fts_text_updates_v6,
    _covering_indexes_v7,
)  # MIGRATIONS[n - 1] brings n - 1 → n
SCHEMA_VERSION = len(MIGRATIONS)


def _json(values: Sequence[Any]) -> str | None:
    return json.dumps(list(values), ensure_ascii=False) if values else None


def row_hash(row: Mapping[str, Any], links: Sequence[Link] = ()) -> str:
    """Stored with each episode and compared on the next run: its value must never change."""
    payload = _HASH_JSON.encode([sorted(row.items()), [_link_values(li) for li in links]])
    return hashlib.sha1(payload.encode("utf-8")).hexdigest()


_HASH_JSON = json.JSONEncoder(check_circular=False)  # json.dumps's output, a little faster


# (position, url, normalized_url, domain, text): json.dumps writes the tuple as a list
_link_values: Callable[[Link], tuple[Any, ...]] = operator.attrgetter(
    "position", "url", "normalized_url", "domain", "text"
)


# the file itself: what it is, errors, integrity (issue #17) -----------------------------

APPLICATION_ID = 0x506F4461  # "PoDa": PRAGMA application_id of every archive since issue #17
SQLITE_MAGIC = b"SQLite format 3\x00"
BUSY_TIMEOUT = 30.0  # seconds a statement waits for another connection's lock
CHECKPOINT_WAIT_MS = 200  # what a checkpoint waits for readers, at most
WAL_SIZE_LIMIT = 4 << 20  # PRAGMA journal_size_limit: a WAL readers kept is cut back to this
QUICK_CHECK_EVERY = timedelta(days=1)
CHECK_LIMIT = 20  # problems listed per check
# tables an archive of each schema version has for sure: recognises one without the
# application id (written before issue #17); a user's own extra tables are fine
_TABLES_SINCE = (
    (1, ("feeds", "episodes", "links", "fetches")),
    (2, ("hosts", "feed_redirects", "feed_moves")),
    (3, ("episode_revisions", "feed_revisions", "snapshots", "feed_bodies")),
    (4, ("backfill_walks", "backfill_pages")),
)
_CORRUPT = frozenset({sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB})


def storage_error(
    path: Path | str, e: sqlite3.Error, doing: str = "archive error in"
) -> StorageError:
    """The one-line StorageError for a sqlite3 error on the archive at ``path``."""
    code = getattr(e, "sqlite_errorcode", None)
    if isinstance(code, int) and code & 0xFF in _CORRUPT:
        return ArchiveDamaged(f"{path} is damaged ({e}); run 'podarchive check'")
    return StorageError(f"{doing} {path}: {e}")


@dataclass(frozen=True, slots=True)
class FileInfo:
    """What is at an archive's path, read without changing a byte of it."""

    kind: str  # "new" (no file, or 0 bytes), "archive", "foreign" or "not_sqlite"
    version: int = 0
    application_id: int = 0
    tables: tuple[str, ...] = ()


def inspect_file(path: Path) -> FileInfo:
    """Read the header and table names; never writes, never leaves a -wal or -shm file.

    Without a WAL file the database is opened ``immutable`` (no locks, no side files);
    with one (another connection is using it) ``mode=ro`` reads through that WAL.
    """
    try:
        with path.open("rb") as f:
            header = f.read(100)
    except FileNotFoundError:
        return FileInfo("new")
    except OSError as e:
        raise StorageError(f"cannot open archive {path}: {e.strerror}") from e
    if not header:
        return FileInfo("new")
    if len(header) < 100 or not header.startswith(SQLITE_MAGIC):
        return FileInfo("not_sqlite")
    wal = Path(f"{path}-wal")
    mode = "mode=ro" if wal.exists() and wal.stat().st_size else "immutable=1"
    try:
        uri = f"{path.resolve().as_uri()}?{mode}"
        with closing(sqlite3.connect(uri, uri=True, timeout=BUSY_TIMEOUT)) as conn:
            version = int(conn.execute("PRAGMA user_version").fetchone()[0])
            app = int(conn.execute("PRAGMA application_id").fetchone()[0])
            tables = tuple(
                str(r[0])
                for r in conn.execute(
                    "SELECT name FROM sqlite_master WHERE type = 'table' "
                    "AND name NOT LIKE 'sqlite_%' ORDER BY rowid"
                )
            )
    except sqlite3.Error as e:
        raise storage_error(path, e, "cannot open archive") from e
    return FileInfo(_kind(version, app, tables), version, app, tables)


def _kind(version: int, app: int, tables: Sequence[str]) -> str:
    if app == APPLICATION_ID:
        return "archive"
    if app == 0 and version == 0 and not tables:
        return "new"  # an empty SQLite database
    cap = min(version, SCHEMA_VERSION) if version <= SCHEMA_VERSION else 1
    needed = {t for since, names in _TABLES_SINCE if since <= cap for t in names}
    return "archive" if app == 0 and version > 0 and needed <= set(tables) else "foreign"


def refusal(path: Path, info: FileInfo) -> StorageError | None:
    """Why the file at ``path`` must not be opened as an archive, if it must not."""
    if info.kind == "not_sqlite":
        reason = "not an SQLite database"
    elif info.kind == "foreign":
        shown = ", ".join(info.tables[:8]) + (", …" if len(info.tables) > 8 else "")
        reason = f"it has tables: {shown}" if shown else f"user_version {info.version}"
    elif info.kind == "archive" and info.version > SCHEMA_VERSION:
        return SchemaTooNew(
            f"{path} has schema version {info.version}; this podarchive knows up to "
            f"{SCHEMA_VERSION}: upgrade podarchive"
        )
    else:
        return None
    return NotAnArchive(f"{path} is not a podarchive archive ({reason}); refusing to change it")


def check_file(path: Path) -> FileInfo:
    """:func:`inspect_file`, raising what :func:`refusal` says (the file stays untouched)."""
    info = inspect_file(path)
    refused = refusal(path, info)
    if refused is not None:
        raise refused
    return info


@dataclass(frozen=True, slots=True)
class Problem:
    """One line of what ``podarchive check`` found: which check, and what it said."""

    check: str  # "integrity_check", "foreign_key_check", or an FTS table's name
    text: str


def _check_rows(rows: Iterable[tuple[Any, ...]]) -> list[str]:
    """The lines of an integrity_check / quick_check result; none when it says ``ok``."""
    lines = [line for (text,) in rows for line in str(text).splitlines()]
    return [line for line in lines if line != "ok" and not line.startswith("*** in database")]


def fts_tables(conn: sqlite3.Connection) -> list[str]:
    rows = conn.execute(
        "SELECT name FROM sqlite_master WHERE type = 'table' "
        "AND sql LIKE 'CREATE VIRTUAL TABLE%USING FTS5%' ORDER BY name"
    )
    return [str(r[0]) for r in rows]


def check_archive(path: Path, *, limit: int = CHECK_LIMIT) -> tuple[list[str], list[Problem]]:
    """integrity_check, foreign_key_check and each FTS5 table's integrity-check, changing
    nothing: returns (the FTS tables checked, the problems found, at most ``limit`` each).
    """
    info = check_file(path)
    if info.kind == "new":
        raise StorageError(f"no archive at {path}")
    problems: list[Problem] = []
    # a read-write connection that writes nothing: an FTS5 integrity-check is an INSERT,
    # and a read-only connection would leave -wal/-shm files behind
    with closing(sqlite3.connect(path, timeout=BUSY_TIMEOUT, isolation_level=None)) as conn:
        try:
            rows = conn.execute(f"PRAGMA integrity_check({limit})").fetchall()
            problems += [Problem("integrity_check", line) for line in _check_rows(rows)]
            for table, rowid, parent, _ in conn.execute("PRAGMA foreign_key_check").fetchmany(
                limit
            ):
                text = f"{table} row {rowid} refers to a missing {parent} row"
                problems.append(Problem("foreign_key_check", text))
            tables = fts_tables(conn)
        except sqlite3.DatabaseError as e:
            return [], [*problems, Problem("integrity_check", f"stopped: {e}")]
        for table in tables:
            problems += _fts_problems(conn, table)
    return tables, problems


def _fts_problems(conn: sqlite3.Connection, table: str) -> list[Problem]:
    conn.execute("BEGIN")
    try:
        conn.execute(f"INSERT INTO [{table}] ([{table}], rank) VALUES ('integrity-check', 1)")
    except sqlite3.DatabaseError as e:
        return [Problem(table, str(e))]
    finally:
        conn.execute("ROLLBACK")
    return []


T = TypeVar("T")


def _translated(method: Callable[..., T]) -> Callable[..., T]:
    @wraps(method)
    def wrapper(owner: Any, *args: Any, **kwargs: Any) -> T:
        try:
            return method(owner, *args, **kwargs)
        except sqlite3.Error as e:
            raise storage_error(getattr(owner, "path", "archive"), e) from e

    return wrapper


def _storage_errors(cls: type[T]) -> type[T]:
    """Every public method and property of ``cls`` raises StorageError, never sqlite3's."""
    for name, member in list(vars(cls).items()):
        if name.startswith("_"):
            continue
        if isinstance(member, property) and member.fget is not None:
            setattr(cls, name, property(_translated(member.fget)))
        elif isinstance(member, classmethod):
            setattr(cls, name, classmethod(_translated(member.__func__)))
        elif inspect.isfunction(member):
            setattr(cls, name, _translated(member))
    return cls


@_storage_errors
class Archive:
    """An open archive file. Not thread-safe: the pipeline keeps it on one thread."""

    def __init__(self, path: Path | str, *, create: bool = True) -> None:
        """Open (or, with ``create``, start) the archive at ``path``, migrating it.

        A file that is not an archive, or is one of a newer schema, is refused before
        anything is written to it; without ``create`` a missing archive is
        :class:`ArchiveMissing`.
        """
        self.path = Path(path)
        target = str(self.path)
        if target not in ("", ":memory:"):
            if check_file(self.path).kind == "new" and not create:
                raise ArchiveMissing(
                    f"{self.path} is gone (deleted or moved away); not starting a new empty "
                    "archive in its place: put it back, or restart the daemon to start one"
                )
            if not create:
                target = self.path.resolve().as_uri() + "?mode=rw"  # never creates a file
        try:
            conn = sqlite3.connect(target, timeout=BUSY_TIMEOUT, uri=not create)
        except sqlite3.Error as e:
            raise storage_error(self.path, e, "cannot open archive") from e
        self.db = sqlite_utils.Database(conn)
        try:
            self.db.execute("PRAGMA journal_mode=WAL")
            self.db.execute(f"PRAGMA journal_size_limit={WAL_SIZE_LIMIT}")
            self.db.execute("PRAGMA synchronous=NORMAL")
            self.db.execute("PRAGMA foreign_keys=ON")
            self.migrate()
        except sqlite3.Error as e:
            conn.close()
            raise storage_error(self.path, e, "cannot open archive") from e
        except BaseException:
            conn.close()
            raise

    def close(self) -> None:
        self.db.conn.close()

    def __enter__(self) -> Archive:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # schema -------------------------------------------------------------------------------

    @property
    def schema_version(self) -> int:
        version: int = self.db.execute("PRAGMA user_version").fetchone()[0]
        return version

    def migrate(self) -> None:
        version = self.schema_version
        if version > SCHEMA_VERSION:
            raise SchemaTooNew(
                f"{self.path} has schema version {version}; this podarchive knows up to "
                f"{SCHEMA_VERSION}: upgrade podarchive"
            )
        for number in range(version, SCHEMA_VERSION):
            with self.db.atomic():
                MIGRATIONS[number](self.db)
                self.db.execute(f"PRAGMA user_version = {number + 1}")
        if self.application_id != APPLICATION_ID:
            # no schema change (no version bump): a header field older podarchives ignore
            with self.db.atomic():
                self.db.execute(f"PRAGMA application_id = {APPLICATION_ID}")

    @property
    def application_id(self) -> int:
        value: int = self.db.execute("PRAGMA application_id").fetchone()[0]
        return value

    @contextmanager
    def transaction(self) -> Iterator[None]:
        try:
            with self.db.atomic():
                yield
        except sqlite3.Error as e:
            raise storage_error(self.path, e, "archive write failed in") from e

    # upkeep (issue #17) -----------------------------------------------------------------

    def checkpoint(self) -> bool:
        """Copy the WAL into the archive and truncate it; False if a reader kept it.

        Waits at most :data:`CHECKPOINT_WAIT_MS` for readers. A WAL a reader kept is cut back
        to :data:`WAL_SIZE_LIMIT` by the first write after the readers let go.
        """
        self.db.execute(f"PRAGMA busy_timeout = {CHECKPOINT_WAIT_MS}")
        try:
            busy = self.db.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()[0]
        finally:
            self.db.execute(f"PRAGMA busy_timeout = {int(BUSY_TIMEOUT * 1000)}")
        return not busy

    def quick_check(self) -> list[str]:
        """``PRAGMA quick_check``'s problems (b-tree pages, records; not index contents)."""
        try:
            rows = self.db.execute(f"PRAGMA quick_check({CHECK_LIMIT})").fetchall()
        except sqlite3.DatabaseError as e:
            return [str(e)]
        return _check_rows(rows)

    def check_daily(self, now: datetime | None = None) -> None:
        """:meth:`quick_check` unless one passed within a day (the mtime of ``<db>.checked``).

        Raises :class:`ArchiveDamaged` on a problem; a damaged archive is checked again
        by every command that writes, until it is repaired.
        """
        now = now or datetime.now(UTC)
        marker = Path(f"{self.path}.checked")
        with contextlib.suppress(OSError):
            age = now - datetime.fromtimestamp(marker.stat().st_mtime, UTC)
            if timedelta(0) <= age < QUICK_CHECK_EVERY:
                return
        problems = self.quick_check()
        if problems:
            raise ArchiveDamaged(
                f"{self.path} is damaged (quick_check: {problems[0]}); run 'podarchive check'"
            )
        with contextlib.suppress(OSError):
            marker.write_text(f"quick_check ok at {now:%Y-%m-%dT%H:%M:%SZ}\n", encoding="utf-8")

    def rebuild_fts(self, table: str) -> None:
        """Rebuild an FTS5 index from its content table (``podarchive check --repair-fts``)."""
        if table not in fts_tables(self.db.conn):
            raise StorageError(f"{self.path} has no full-text table {table}")
        with self.transaction():
            self.db.execute(f"INSERT INTO [{table}] ([{table}]) VALUES ('rebuild')")

    # feeds --------------------------------------------------------------------------------

    def ensure_feed(self, url: str, name: str | None, now: str) -> FeedState:
        """The feed's stored state, adding a row for a feed seen for the first time."""
        known = self.db.execute("SELECT name FROM feeds WHERE url = ?", [url]).fetchone()
        if known is not None and (name is None or known[0] == name):
            state = self.feed_state(url)  # nothing to write: no transaction on every run
            assert state is not None
            return state
        with self.transaction():
            self.db.execute(
                "INSERT INTO feeds (url, name, first_seen_at) VALUES (?, ?, ?) "
                "ON CONFLICT(url) DO UPDATE SET name = excluded.name "
                "WHERE excluded.name IS NOT NULL AND feeds.name IS NOT excluded.name",
                [url, name, now],
            )
        state = self.feed_state(url)
        assert state is not None
        return state

    def feed_state(self, url: str) -> FeedState | None:
        row = self.db.execute(
            f"SELECT {', '.join(FEED_STATE_COLUMNS)} FROM feeds WHERE url = ?", [url]
        ).fetchone()
        return FeedState(*row) if row else None

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
        with self.transaction():
            for host, until in blocks.items():
                self.db.execute(
                    "INSERT INTO hosts (host, not_before, reason, updated_at) "
                    "VALUES (?, ?, 'Retry-After', ?) ON CONFLICT(host) DO UPDATE SET "
                    "not_before = excluded.not_before, updated_at = excluded.updated_at "
                    "WHERE hosts.not_before IS NOT excluded.not_before",
                    [host, until, now],
                )

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

    def save_feed(
        self,
        feed_id: int,
        meta: Row,
        episodes: Sequence[EpisodeWrite],
        *,
        status: int,
        etag: str | None,
        last_modified: str | None,
        content_hash: str,
        now: str,
        records: Iterable[FetchRecord],
        complete: bool = False,
        mark_absent: bool = True,
        snapshot: Snapshot | None = None,
        also_listed: Collection[str] = (),
    ) -> SaveStats:
        """Store one parsed feed in one transaction. Unchanged episodes are not touched.

        Tracked changes become revisions, absent episodes are marked removed or no longer
        listed (unless ``mark_absent`` is false: a malformed body is no evidence of removal),
        and ``snapshot`` (the raw body) is kept, compressed and deduplicated.
        ``also_listed`` are keys of episodes the body lists but that were not parsed because
        their raw items are known unchanged (issue #7): they count as listed, not absent.
        """
        with self.transaction():
            self._update_meta(feed_id, meta, now)
            stats = self._upsert_episodes(
                feed_id, episodes, now, complete=complete, mark_absent=mark_absent,
                also_listed=also_listed,
            )  # fmt: skip
            self._update_fetch_state(feed_id, status, etag, last_modified, content_hash, now)
            if snapshot is not None:
                self._keep_snapshot(feed_id, content_hash, snapshot, now)
            self._log(records, feed_id=feed_id)
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

    def _keep_snapshot(self, feed_id: int, digest: str, snapshot: Snapshot, now: str) -> None:
        """Keep a body once; one whose items region an earlier snapshot holds, as a delta.

        A body that differs from a kept one only outside its items (a new lastBuildDate)
        stores just its skeleton, compressed, and points at that snapshot for the items:
        the cost no longer grows with the feed (issue #7). :meth:`feed_observations`
        rebuilds the exact bytes.
        """
        if self.db.execute("SELECT 1 FROM snapshots WHERE hash = ?", [digest]).fetchone():
            base = None
        else:
            body, start, end = snapshot.body, snapshot.items_from, snapshot.items_to
            base = cut = None
            for region_start, region_hash in snapshot.regions:
                base = self.db.execute(
                    "SELECT id, coalesce(depth, 0) FROM snapshots WHERE items_hash = ? "
                    "AND coalesce(depth, 0) < ? ORDER BY id DESC LIMIT 1",
                    [region_hash, MAX_DELTA_DEPTH],
                ).fetchone()
                if base is not None:
                    cut = region_start
                    break
            if base is not None and cut is not None and end is not None:
                stored = body[:cut] + body[end:]
            else:
                stored, base, cut = body, None, None
            self.db.execute(
                "INSERT INTO snapshots (feed_id, hash, first_fetched_at, url, content_type, size, "
                "body, items_hash, items_from, items_to, items_cut, base_id, depth) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [feed_id, digest, now, snapshot.url, snapshot.content_type, len(body),
                 zlib.compress(stored, 6), snapshot.items_hash, start, end, cut,
                 base[0] if base else None, base[1] + 1 if base else None],
            )  # fmt: skip
        self.db.execute(
            "INSERT INTO feed_bodies (feed_id, snapshot_id, seen_at) "
            "SELECT ?, id, ? FROM snapshots WHERE hash = ?",
            [feed_id, now, digest],
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
        episodes: Sequence[EpisodeWrite],
        now: str,
        *,
        complete: bool,
        mark_absent: bool,
        also_listed: Collection[str] = (),
    ) -> SaveStats:
        """The feed's episodes are read from their bookkeeping index; the wide tracked columns
        only of the episodes that are rewritten or may be one under a new guid (issue #7).
        """
        stored = self._stored_episodes(feed_id, tracked=False)
        listed = {e.key for e in episodes}
        skipped = [k for k in dict.fromkeys(also_listed) if k not in listed and k in stored]
        listed.update(skipped)
        unlisted = {k: v for k, v in stored.items() if k not in listed}
        digests = [row_hash(e.row, e.links) for e in episodes]
        rewritten = {
            e.key: stored[e.key]
            for e, digest in zip(episodes, digests, strict=True)
            if e.key in stored and stored[e.key]["row_hash"] != digest
        }
        self._read_columns(rewritten.values(), WIDE_TRACKED)
        churn: ChurnIndex | None = None  # over the unlisted episodes, once a key is new
        new = changed = 0
        unchanged = len(skipped)
        for episode, digest in zip(episodes, digests, strict=True):
            previous = stored.get(episode.key)
            if previous is None and unlisted:
                if churn is None:
                    self._read_columns(unlisted.values(), CHURN_COLUMNS)
                    churn = ChurnIndex(unlisted)
                if (churned := churn.find(episode.row)) is not None:
                    churn.discard(churned)
                    previous = unlisted.pop(churned)
                    stored.pop(churned)
                    self.db.execute(
                        "UPDATE episodes SET key = ? WHERE id = ?", [episode.key, previous["id"]]
                    )
            if previous is None:
                episode_id = self._insert_episode(feed_id, episode, digest, now)
                new += 1
            elif previous["row_hash"] == digest:
                unchanged += 1
                self._renew_item_hash(previous, episode.item_hash)
                continue
            else:
                episode_id = self._rewrite_episode(episode, digest, now, previous)
                changed += 1
            self._add_links(episode_id, "feed", episode.links)
        if mark_absent:
            dates = [e.row.get("published") for e in episodes]
            dates.extend(stored[k]["published"] for k in skipped)
            self._mark_absent(unlisted, dates, now, complete)
        self._clear_absence(stored, listed)
        return SaveStats(new=new, changed=changed, unchanged=unchanged)

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
        row = episode.row
        cursor = self.db.conn.execute(
            INSERT_EPISODE,
            [feed_id, episode.key, *(row.get(c) for c in EPISODE_COLUMNS),
             "pending" if row.get("page_url") else None, now, now, digest, episode.item_hash,
             unlisted_at, archive_url],
        )  # fmt: skip
        episode_id = cursor.lastrowid
        assert episode_id is not None
        return episode_id

    def _renew_item_hash(self, previous: Row, item_hash: str | None) -> None:
        """An unchanged episode's raw item may still differ (another context, a migration)."""
        if item_hash is not None and previous["item_hash"] != item_hash:
            self.db.execute(
                "UPDATE episodes SET item_hash = ? WHERE id = ?", [item_hash, previous["id"]]
            )

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

    # snapshots and reparse ---------------------------------------------------------------

    def feed_observations(self, feed_id: int) -> list[tuple[str, bytes, str, str | None]]:
        """Every distinct body the feed was parsed from, in order: (seen_at, body, url, type)."""
        rows = self.db.execute(
            "SELECT b.seen_at, s.id, s.url, s.content_type FROM feed_bodies b "
            "JOIN snapshots s ON s.id = b.snapshot_id WHERE b.feed_id = ? ORDER BY b.seen_at, b.id",
            [feed_id],
        ).fetchall()
        return [(at, self.snapshot_body(sid), url, kind) for at, sid, url, kind in rows]

    def snapshot_body(self, snapshot_id: int) -> bytes:
        """The exact bytes of a kept body (a delta is rebuilt from the snapshot it points at)."""
        body, cut, base = self.db.execute(
            "SELECT body, items_cut, base_id FROM snapshots WHERE id = ?", [snapshot_id]
        ).fetchone()
        data = zlib.decompress(body)
        if base is None:
            return data
        start, end = self.db.execute(
            "SELECT items_from, items_to FROM snapshots WHERE id = ?", [base]
        ).fetchone()
        return data[:cut] + self.snapshot_body(base)[start:end] + data[cut:]

    def known_items(self) -> KnownItems | None:
        """A thread-safe reader of item hashes for worker threads; None for ``:memory:``."""
        if str(self.path) in ("", ":memory:"):
            return None
        return KnownItems(self.path)

    def feeds(self) -> list[tuple[int, str, str | None]]:
        """(id, url, name) of every feed in the archive."""
        return [tuple(r) for r in self.db.execute("SELECT id, url, name FROM feeds ORDER BY id")]

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
            dict(zip(columns, meta, strict=True)), feed_revisions, episodes, revisions, links
        )

    def _rows(self, sql: str, *params: Any) -> list[Row]:
        cursor = self.db.execute(sql, list(params))
        names = [d[0] for d in cursor.description]
        return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]

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

    # backfill (issue 6) ----

    @classmethod
    def open_read_only(cls, path: Path | str) -> Archive:
        """An existing archive opened for reading only (``backfill --dry-run``).

        Nothing is migrated or written; an archive of an older schema is read as far as it
        goes (it has no backfill records yet).
        """
        archive = cls.__new__(cls)
        archive.path = Path(path)
        if check_file(archive.path).kind == "new":
            raise StorageError(f"no archive at {archive.path}")
        # read-write but query_only: a mode=ro connection would leave -wal/-shm files
        conn = sqlite3.connect(archive.path, timeout=BUSY_TIMEOUT)
        try:
            conn.execute("PRAGMA query_only = 1")
        except sqlite3.Error as e:
            conn.close()
            raise storage_error(archive.path, e, "cannot open archive") from e
        archive.db = sqlite_utils.Database(conn)
        return archive

    @property
    def has_backfill_records(self) -> bool:
        return self.schema_version >= 4

    def latest_feed_body(self, feed_id: int) -> tuple[bytes, str, str | None] | None:
        """The last subscription-document body parsed for the feed: (body, url, content type)."""
        kind = "AND b.kind = 'feed' " if self.has_backfill_records else ""
        row = self.db.execute(
            "SELECT s.body, s.url, s.content_type FROM feed_bodies b JOIN snapshots s "
            f"ON s.id = b.snapshot_id WHERE b.feed_id = ? {kind}ORDER BY b.seen_at DESC, b.id DESC "
            "LIMIT 1",
            [feed_id],
        ).fetchone()
        return (zlib.decompress(row[0]), row[1], row[2]) if row else None

    def replay_observations(self, feed_id: int) -> list[tuple[str, bytes, str, str | None, str]]:
        """Like :meth:`feed_observations`, with each body's kind (``feed`` or ``archive``)."""
        kind = "b.kind" if self.has_backfill_records else "'feed'"
        rows = self.db.execute(
            f"SELECT b.seen_at, s.body, s.url, s.content_type, {kind} FROM feed_bodies b "
            "JOIN snapshots s ON s.id = b.snapshot_id WHERE b.feed_id = ? ORDER BY b.seen_at, b.id",
            [feed_id],
        ).fetchall()
        return [(at, zlib.decompress(body), url, ct, k) for at, body, url, ct, k in rows]

    def episode_keys(self, feed_id: int) -> set[str]:
        return {
            r[0] for r in self.db.execute("SELECT key FROM episodes WHERE feed_id = ?", [feed_id])
        }

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
                "episodes = CASE WHEN :failed THEN episodes ELSE excluded.episodes END",
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
                self._add_links(episode_id, "feed", episode.links)
        return SaveStats(new=new, changed=changed, unchanged=unchanged)

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
            "SELECT id, feed_id, page_url, page_etag, page_last_modified, key FROM episodes "
            f"WHERE feed_id = ? AND {PAGES_DUE} "
            "AND (? IS NULL OR published IS NULL OR published >= ?) ORDER BY id",
            [feed_id, since, since],
        ).fetchall()
        return [(PageTask(*row[:5]), str(row[5])) for row in rows]

    # pages --------------------------------------------------------------------------------

    def pages_to_fetch(self, feed_id: int) -> list[PageTask]:
        """Episode pages never fetched, or that failed or had no notes last time."""
        rows = self.db.execute(
            "SELECT id, feed_id, page_url, page_etag, page_last_modified, page_status, "
            f"page_attempts, page_fetched_at FROM episodes WHERE feed_id = ? AND {PAGES_DUE} "
            "ORDER BY id",
            [feed_id],
        ).fetchall()
        return [PageTask(*row) for row in rows]

    def record_page(
        self,
        task: PageTask,
        *,
        status: str,
        now: str,
        records: Iterable[FetchRecord],
        error: str | None = None,
        extractor: str | None = None,
        notes_html: str | None = None,
        notes_text: str | None = None,
        links: Sequence[Link] = (),
        etag: str | None = None,
        last_modified: str | None = None,
    ) -> None:
        """Store a page outcome: ``ok``, ``not_modified``, ``empty`` or ``failed``."""
        with self.transaction():
            if status == "not_modified":
                self.db.execute(
                    "UPDATE episodes SET page_status = 'ok', page_error = NULL, "
                    "page_fetched_at = ? WHERE id = ? AND page_notes_text IS NOT NULL",
                    [now, task.episode_id],
                )
            elif status == "ok":
                before = self.db.execute(
                    "SELECT page_notes_html FROM episodes WHERE id = ?", [task.episode_id]
                ).fetchone()
                renew = before is None or before[0] != notes_html
                if before is not None and before[0] is not None and renew:
                    self._add_revision(task.episode_id, "page", ["page_notes"], now)
                # one UPDATE: each one setting page_notes_text re-indexes the episode's text
                self.db.execute(
                    "UPDATE episodes SET page_status = 'ok', page_error = NULL, "
                    "page_extractor = ?, page_notes_html = ?, page_notes_text = ?, "
                    "page_fetched_at = ?, page_attempts = page_attempts + 1, "
                    "page_etag = ?, page_last_modified = ?, page_version_seen_at = "
                    "CASE WHEN ? THEN ? ELSE page_version_seen_at END WHERE id = ?",
                    [extractor, notes_html, notes_text, now, etag, last_modified, renew, now,
                     task.episode_id],
                )  # fmt: skip
                self._replace_links(task.episode_id, "page", links)
            else:
                self.db.execute(
                    "UPDATE episodes SET page_status = ?, page_error = ?, page_fetched_at = ?, "
                    "page_attempts = page_attempts + 1 WHERE id = ?",
                    [status, error, now, task.episode_id],
                )
            self._log(records, feed_id=task.feed_id, episode_id=task.episode_id)

    # fetch log ----------------------------------------------------------------------------

    def log_fetches(self, records: Iterable[FetchRecord], feed_id: int | None = None) -> None:
        with self.transaction():
            self._log(records, feed_id=feed_id)

    def _log(
        self, records: Iterable[FetchRecord], *, feed_id: int | None, episode_id: int | None = None
    ) -> None:
        self.db.conn.executemany(
            "INSERT INTO fetches (feed_id, episode_id, kind, url, started_at, ms, status, bytes, "
            "error) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [
                (feed_id, episode_id, r.kind, r.url, r.started_at, r.ms, r.status, r.bytes, r.error)
                for r in records
            ],
        )

    # reading ------------------------------------------------------------------------------

    def count(self, table: str) -> int:
        total: int = self.db.execute(f"SELECT count(*) FROM [{table}]").fetchone()[0]
        return total

    def dump(self, *, skip: Sequence[str] = ("fetches",)) -> dict[str, list[tuple[Any, ...]]]:
        """Every row of every table, ordered, for comparing archives in tests and tools."""
        out: dict[str, list[tuple[Any, ...]]] = {}
        for table in sorted(self.db.table_names()):
            if table in skip or table.startswith("episodes_fts"):
                continue
            out[table] = [tuple(r) for r in self.db.execute(f"SELECT * FROM [{table}] ORDER BY 1")]
        return out

    # status (issue 5) ----

    def feed_statuses(self) -> list[dict[str, Any]]:
        """One dict per feed for ``podarchive status``: its state, episode and page counts."""
        cursor = self.db.execute(
            "SELECT f.url, f.name, f.title, f.fetch_url, f.first_seen_at, f.last_fetched_at, "
            "f.last_success_at, f.last_status, f.last_error, f.last_error_at, f.error_count, "
            "f.next_due_at, f.gone_at, "
            "(SELECT count(*) FROM episodes e WHERE e.feed_id = f.id) AS episodes, "
            "(SELECT count(*) FROM episodes e WHERE e.feed_id = f.id "
            " AND e.page_status = 'pending') AS pages_pending, "
            "(SELECT count(*) FROM episodes e WHERE e.feed_id = f.id "
            " AND e.page_status = 'failed') AS pages_failed, "
            "(SELECT count(*) FROM episodes e WHERE e.feed_id = f.id "
            " AND e.page_status = 'empty') AS pages_empty "
            "FROM feeds f ORDER BY coalesce(f.name, f.title, f.url), f.id"
        )
        names = [d[0] for d in cursor.description]
        return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]
