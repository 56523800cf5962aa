"""What is at an archive's path, read without changing a byte, and the one-line errors.

Nothing is written to a file before it is known to be an archive (:func:`check_file` reads
its header and schema): another program's database, a file that is not SQLite and an
archive from a newer podarchive are refused untouched (issue #17). An archive is a file
with ``PRAGMA application_id`` :data:`APPLICATION_ID` (every archive since issue #17; older
ones have none) whose tables have at least the columns of its schema version's tables (what
the migrations up to that version make, :func:`archive_tables`); a user's own extra tables
and columns are fine. An empty database (no table, no view) becomes an archive (issue #23).
"""

from __future__ import annotations

import sqlite3
import threading
from collections import Counter
from collections.abc import Mapping, Sequence
from contextlib import closing
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING

from podarchive.core.errors import ArchiveDamaged, NotAnArchive, SchemaTooNew, StorageError

from .frozen_tables import FROZEN_TABLES
from .schema import MIGRATIONS, SCHEMA_VERSION
from .sqlite_db import ArchiveDb

if TYPE_CHECKING:
    pass

APPLICATION_ID = 0x506F4461  # "PoDa": PRAGMA application_id of every archive since issue #17
SQLITE_MAGIC = b"SQLite format 3\x00"
BUSY_TIMEOUT = 30.0  # seconds a statement waits for another connection's lock
_CORRUPT = frozenset({sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB})

# The archive files this process has open (a Connection each). POSIX drops every lock a
# process holds on a file when the process closes *any* descriptor of it, so opening an open
# archive with Python (to read its header) would take away its connections' locks, and
# another process could then, say, switch its journal mode under them; an ``immutable``
# read would ignore a write in progress. An open archive is inspected through SQLite alone.
_OPEN_HERE: Counter[str] = Counter()
_OPEN_LOCK = threading.Lock()


def opened_here(path: Path, change: int) -> None:
    """Count a connection to ``path`` opened (+1) or closed (-1) in this process."""
    key = str(path.resolve())
    with _OPEN_LOCK:
        _OPEN_HERE[key] += change
        if _OPEN_HERE[key] <= 0:
            del _OPEN_HERE[key]


def is_open_here(path: Path) -> bool:
    with _OPEN_LOCK:
        return str(path.resolve()) in _OPEN_HERE


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

    kind: str  # "new" (no file, 0 bytes, an empty database), "archive", "foreign", "not_sqlite"
    version: int = 0
    application_id: int = 0
    tables: tuple[str, ...] = ()
    why: str = ""  # for "foreign": what shows it is not an archive


def inspect_file(path: Path) -> FileInfo:
    """Read the header and schema; never writes, never leaves a -wal or -shm file.

    Without a WAL file the database is opened ``immutable`` (no locks, no side files);
    with one, even empty (another connection is using it), ``mode=ro`` reads through it. An archive
    this process has open is read through SQLite alone (``mode=ro``; see :data:`_OPEN_HERE`).
    """
    if is_open_here(path):
        return _inspect(path, "mode=ro")
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
    # a -wal file, even empty, means another connection has the archive open and may write
    # (and checkpoint into the main file) at any moment: ``immutable`` would read its pages
    # mid-write ("file is not a database"); ``mode=ro`` reads through its WAL and locks
    wal = Path(f"{path}-wal")
    return _inspect(path, "mode=ro" if wal.exists() else "immutable=1")


def _inspect(path: Path, mode: str) -> FileInfo:
    try:
        uri = f"{path.resolve().as_uri()}?{mode}"
        with closing(sqlite3.connect(uri, uri=True, timeout=BUSY_TIMEOUT)) as conn:
            return _read(conn)
    except sqlite3.Error as e:
        raise storage_error(path, e, "cannot open archive") from e


def _read(conn: sqlite3.Connection) -> FileInfo:
    version = int(conn.execute("PRAGMA user_version").fetchone()[0])
    app = int(conn.execute("PRAGMA application_id").fetchone()[0])
    objects = conn.execute(
        "SELECT type, name FROM sqlite_master WHERE type IN ('table', 'view') "
        "AND name NOT LIKE 'sqlite_%' ORDER BY rowid"
    ).fetchall()
    tables = tuple(str(name) for kind, name in objects if kind == "table")
    if app == 0 and version == 0 and not objects:
        return FileInfo("new")  # an empty SQLite database
    views = tuple(str(name) for kind, name in objects if kind == "view")
    why = _not_an_archive(conn, version, app, tables, views)
    return FileInfo("foreign" if why else "archive", version, app, tables, why)


def _not_an_archive(
    conn: sqlite3.Connection, version: int, app: int, tables: Sequence[str], views: Sequence[str]
) -> str:
    """What shows the file is not an archive; empty for an archive (or a newer one)."""
    if app == APPLICATION_ID and version > SCHEMA_VERSION:
        return ""  # a newer podarchive's: refused as such
    # a version unknown here, or none: every podarchive that wrote one wrote the id too
    known = app == APPLICATION_ID or (app == 0 and 0 < version <= SCHEMA_VERSION)
    expected = archive_tables(version) if known and version <= SCHEMA_VERSION else {}
    if not known or (expected and not set(expected) & set(tables)):
        return _contents(tables, views) or f"user_version {version}"
    for table, columns in expected.items():
        if table not in tables:
            return f"not the tables of a schema-{version} archive: no {table} table"
        missing = sorted(columns - _columns(conn, table))  # columns of one's own are fine
        if missing:
            shown = ", ".join(missing[:4]) + (", …" if len(missing) > 4 else "")
            return f"not the tables of a schema-{version} archive: {table} has no {shown}"
    return ""


def _contents(tables: Sequence[str], views: Sequence[str]) -> str:
    for kind, names in (("tables", tables), ("views", views)):
        if names:
            return f"it has {kind}: " + ", ".join(names[:8]) + (", …" if len(names) > 8 else "")
    return ""


def _columns(conn: sqlite3.Connection, table: str) -> frozenset[str]:
    """The table's column names; none for a virtual table of a module SQLite lacks here."""
    try:
        rows = conn.execute("SELECT name FROM pragma_table_info(?)", [table]).fetchall()
    except sqlite3.OperationalError:
        return frozenset()
    return frozenset(str(name) for (name,) in rows)


def database(conn: sqlite3.Connection) -> ArchiveDb:
    """The archive's statements over ``conn`` (sqlite-utils loads only if asked, #30)."""
    return ArchiveDb(conn)


def archive_tables(version: int) -> Mapping[str, frozenset[str]]:
    """The tables of an archive of schema ``version`` and their columns: what migrations 1 to
    ``version`` make of an empty database. Full-text indexes' shadow tables are SQLite's own
    and left out (the FTS5 tables themselves are in). Frozen for the versions of
    :data:`~.frozen_tables.FROZEN_TABLES`, else made in memory (once a process)."""
    frozen = FROZEN_TABLES.get(version)
    return frozen if frozen is not None else migrated_tables(version)


@cache
def migrated_tables(version: int) -> Mapping[str, frozenset[str]]:
    """:func:`archive_tables` made by running migrations 1 to ``version`` in memory."""
    with closing(sqlite3.connect(":memory:")) as conn:
        db = database(conn).full
        for migration in MIGRATIONS[:version]:
            migration(db)
        rows = conn.execute(
            "SELECT name, sql FROM sqlite_master WHERE type = 'table' "
            "AND name NOT LIKE 'sqlite_%' ORDER BY rowid"
        ).fetchall()
        virtual = [name for name, sql in rows if sql.upper().startswith("CREATE VIRTUAL")]
        names = [n for n, _ in rows if not any(n.startswith(f"{v}_") for v in virtual)]
        return {name: _columns(conn, name) for name in names}


def refusal(path: Path, info: FileInfo) -> StorageError | None:
    """Why the file at ``path`` must not be opened as an archive, if it must not."""
    if info.kind == "not_sqlite":
        reason = "not an SQLite database"
    elif info.kind == "foreign":
        reason = info.why
    elif info.kind == "archive" and info.version > SCHEMA_VERSION:
        return too_new(path, info.version)
    else:
        return None
    return NotAnArchive(f"{path} is not a podarchive archive ({reason}); refusing to change it")


def too_new(path: Path | str, version: int) -> SchemaTooNew:
    """The refusal of an archive written by a newer podarchive."""
    return SchemaTooNew(
        f"{path} has schema version {version}; this podarchive knows up to "
        f"{SCHEMA_VERSION}: upgrade podarchive"
    )


def check_file(path: Path) -> FileInfo:
    """:func:`inspect_file`, raising what :func:`refusal` says (the file stays untouched)."""
    info = inspect_file(path)
    refused = refusal(path, info)
    if refused is not None:
        raise refused
    return info
