"""The connection every mixin of :class:`~podarchive.store.Archive` shares.

Opening (a file is checked before anything is written to it), migrating, transactions,
upkeep (WAL checkpoint, quick_check), and :func:`storage_errors`, which makes every public
method of the composed facade raise :class:`StorageError` (:class:`ArchiveDamaged` on
corruption), never sqlite3's.
"""

from __future__ import annotations

import contextlib
import inspect
import json
import sqlite3
from collections.abc import Callable, Collection, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from functools import wraps
from pathlib import Path
from typing import Any, Self, TypeVar

from podarchive.core.clock import iso, utcnow
from podarchive.core.errors import ArchiveDamaged, ArchiveMissing, StorageError
from podarchive.core.types import Row

from .archive_path import (
    APPLICATION_ID,
    BUSY_TIMEOUT,
    check_file,
    database,
    opened_here,
    storage_error,
    too_new,
)
from .check import CHECK_LIMIT, check_rows, fts_tables
from .migrations_links import (
    LINK_SUMMARY_TRIGGERS,
    LINK_URL_INDEX,
    REBUILD_LINK_SUMMARY,
    _links_v20,
)
from .schema import LOOKUP_INDEXES, MIGRATIONS, SCHEMA_VERSION

LINK_SUMMARY_SCHEMA = MIGRATIONS.index(_links_v20) + 1  # the first version with the summary

CHECKPOINT_WAIT_MS = 200  # what a checkpoint waits for readers, at most
WAL_SIZE_LIMIT = 4 << 20  # PRAGMA journal_size_limit: a WAL readers kept is cut back to this
QUICK_CHECK_EVERY = timedelta(days=1)


T = TypeVar("T")


def _translated(method: Callable[..., T]) -> Callable[..., T]:
    @wraps(method)
    def wrapper(owner: Any, *args: Any, **kwargs: Any) -> T:
        try:
            return method(owner, *args, **kwargs)
        except sqlite3.Error as e:
            raise storage_error(getattr(owner, "path", "archive"), e) from e

    return wrapper


def storage_errors(cls: type[T]) -> type[T]:
    """Every public method and property of ``cls``, inherited ones included, raises
    StorageError, never sqlite3's. Decorates the facade: the wrappers are set on ``cls``
    (the mixins it is made of stay as they are).
    """
    names = {name for klass in cls.__mro__[:-1] for name in vars(klass)}  # not object's
    for name in sorted(names):
        if name.startswith("_"):
            continue
        member = inspect.getattr_static(cls, name)
        if isinstance(member, property) and member.fget is not None:
            setattr(cls, name, property(_translated(member.fget)))
        elif isinstance(member, classmethod):
            setattr(cls, name, classmethod(_translated(member.__func__)))
        elif inspect.isfunction(member):
            setattr(cls, name, _translated(member))
    return cls


class Connection:
    """An open archive file. Not thread-safe: the pipeline keeps it on one thread."""

    _file: Path | None = None  # the file, counted as open in this process (archive_path)

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
        self._file = self.path if str(self.path) not in ("", ":memory:") else None
        if self._file is not None:
            opened_here(self._file, +1)  # from now on, nothing here opens it but SQLite
        self.db = database(conn)
        try:
            self.db.execute("PRAGMA journal_mode=WAL")
            self.db.execute(f"PRAGMA journal_size_limit={WAL_SIZE_LIMIT}")
            self.db.execute("PRAGMA synchronous=NORMAL")
            self.db.execute("PRAGMA foreign_keys=ON")
            self.migrate()
            self.restore_link_indexes()
        except sqlite3.Error as e:
            self.close()
            raise storage_error(self.path, e, "cannot open archive") from e
        except BaseException:
            self.close()
            raise

    def close(self) -> None:
        self.db.conn.close()
        if self._file is not None:
            opened_here(self._file, -1)
            self._file = None

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def schema_version(self) -> int:
        version: int = self.db.execute("PRAGMA user_version").fetchone()[0]
        return version

    def migrate(self) -> None:
        version = self.schema_version
        if version > SCHEMA_VERSION:
            raise too_new(self.path, version)
        for number in range(version, SCHEMA_VERSION):
            with self.db.atomic():
                MIGRATIONS[number](self.db.full)
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
    def deferred_link_indexes(self) -> Iterator[None]:
        """For a run that adds many links (a first ingest of many feeds): the links'
        lookup indexes (:data:`~.schema.LOOKUP_INDEXES`) are dropped for its duration and
        built again, sorted once, at its end (also when it fails; after a crash, by the next
        opening to write). Meanwhile lookups by URL or domain scan the table: slower, not
        wrong. At 30,000 episodes of 32 links each, the store's CPU per episode halves.
        """
        with self.transaction():
            for name in LOOKUP_INDEXES:
                self.db.execute(f"DROP INDEX IF EXISTS {name}")
            for name in LINK_SUMMARY_TRIGGERS:  # the summary: rebuilt once at the end
                self.db.execute(f"DROP TRIGGER IF EXISTS {name}")
        try:
            yield
        finally:
            self.restore_link_indexes()

    def ingest_counts(self, urls: Collection[str]) -> tuple[int, int]:
        """(how many of ``urls`` have no episode archived yet (a feed not in the archive
        included), how many feeds of the archive have one): what tells a big first ingest."""
        row = self.db.execute(
            "SELECT (SELECT count(*) FROM json_each(?) j WHERE NOT EXISTS (SELECT 1 FROM feeds f"
            " JOIN episodes e ON e.feed_id = f.id WHERE f.url = j.value)),"
            " (SELECT count(*) FROM feeds f WHERE EXISTS"
            " (SELECT 1 FROM episodes e WHERE e.feed_id = f.id))",
            [json.dumps(sorted(set(urls)))],
        ).fetchone()
        return int(row[0]), int(row[1])

    def restore_link_indexes(self) -> None:
        """Build the links' lookup indexes that are missing (none is: nothing written), and
        the per-domain summary with its triggers if they are (schema 20: and its URL index)."""
        present = {
            name
            for (name,) in self.db.execute(
                "SELECT name FROM sqlite_master WHERE type IN ('index', 'trigger') "
                "AND tbl_name = 'links'"
            )
        }
        summary = self.schema_version >= LINK_SUMMARY_SCHEMA  # the URL index came with it
        missing = [
            sql
            for name, sql in LOOKUP_INDEXES.items()
            if name not in present and (summary or name != LINK_URL_INDEX)
        ]
        if summary and set(LINK_SUMMARY_TRIGGERS) - present:
            drop = [f"DROP TRIGGER IF EXISTS {name}" for name in LINK_SUMMARY_TRIGGERS]
            missing += [*drop, *REBUILD_LINK_SUMMARY, *LINK_SUMMARY_TRIGGERS.values()]
        if missing and self.schema_version >= 1:
            with self.transaction():
                for sql in missing:
                    self.db.execute(sql)

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
        return check_rows(rows)

    def check_daily(self, now: datetime | None = None) -> None:
        """:meth:`quick_check` unless one passed within a day (the mtime of ``<db>.checked``).

        Raises :class:`ArchiveDamaged` on a problem; a damaged archive is checked again
        by every command that writes, until it is repaired.
        """
        now = now or utcnow()
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
            marker.write_text(f"quick_check ok at {iso(now)}\n", encoding="utf-8")

    def rebuild_fts(self, table: str) -> None:
        """Rebuild an FTS5 index from its content table (``podarchive check --repair-fts``)."""
        if table not in fts_tables(self.db.conn):
            raise StorageError(f"{self.path} has no full-text table {table}")
        with self.transaction():
            self.db.execute(f"INSERT INTO [{table}] ([{table}]) VALUES ('rebuild')")

    # reading ----------------------------------------------------------------------------

    @classmethod
    def open_read_only(cls, path: Path | str) -> Self:
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
        archive.db = database(conn)
        return archive

    @property
    def has_backfill_records(self) -> bool:
        return self.schema_version >= 4

    def _rows(self, sql: str, *params: Any) -> list[Row]:
        cursor = self.db.execute(sql, list(params))
        names = [d[0] for d in cursor.description]
        return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]


def json_objects(value: Any) -> list[dict[str, Any]]:
    """The objects of a JSON-list column (``transcripts``, ``simple_chapters``…); anything
    else in it (not JSON, not a list, other values) is skipped."""
    if not value:
        return []
    try:
        items = json.loads(value)
    except ValueError:
        return []
    return [item for item in items if isinstance(item, dict)] if isinstance(items, list) else []
