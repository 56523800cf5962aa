"""What is at an archive's path, read without changing a byte, and the one-line errors.

Nothing is written to a file before it is known to be an archive (:func:`check_file` reads
its header and tables): another program's database, a file that is not SQLite and an
archive from a newer podarchive are refused untouched (issue #17). Archives carry
``PRAGMA application_id`` :data:`APPLICATION_ID`; older ones are recognised by their tables.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path

from podarchive.errors import ArchiveDamaged, NotAnArchive, SchemaTooNew, StorageError

from .schema import SCHEMA_VERSION

APPLICATION_ID = 0x506F4461  # "PoDa": PRAGMA application_id of every archive since issue #17
SQLITE_MAGIC = b"SQLite format 3\x00"
BUSY_TIMEOUT = 30.0  # seconds a statement waits for another connection's lock
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
