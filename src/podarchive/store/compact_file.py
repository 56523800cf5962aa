"""(#30) An archive's free pages given back: a compact copy checked, then renamed over it.

SQLite keeps the pages a deletion frees inside the file for its next writes; only ``VACUUM``
gives them back, rewriting the whole file. :func:`compact_file` writes the compact copy beside
the archive (``VACUUM INTO``: the original is only read), checks it (``quick_check``, the same
schema version and ``application_id``), then renames it over the archive in one step: a failure
at any point before the rename leaves the original as it was, and removes the copy.

WAL: the original is first checkpointed and switched to a rollback journal, which SQLite does
only when no other connection has it open (else :class:`StorageError`, the original left in WAL
mode), and which leaves no ``-wal`` or ``-shm`` file whose frames or index could be applied to
the new file; the copy is switched to WAL before the rename. The caller holds the archive's
locks (:mod:`podarchive.tasks.compact`).
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
from contextlib import closing
from pathlib import Path

from podarchive.core.errors import StorageError

from .archive_path import check_file, storage_error


def compact_path(db: Path) -> Path:
    """Where the compact copy is written: beside the archive (same file system: the rename
    is atomic)."""
    return db.with_name(f"{db.name}.compact")


def _connect(path: Path) -> sqlite3.Connection:
    return sqlite3.connect(path, timeout=1.0, isolation_level=None)


def compact_file(db: Path) -> None:
    """Replace the archive at ``db`` by its compact copy (see the module's docstring)."""
    info = check_file(db)
    if info.kind != "archive":
        raise StorageError(f"no archive at {db}")
    copy = compact_path(db)
    if copy.is_file():
        copy.unlink()  # a copy an earlier compact left when its process was killed
    try:
        with closing(_connect(db)) as conn:
            wal = _rollback_journal(db, conn)
            renamed = False
            try:
                conn.execute("VACUUM INTO ?", [str(copy)])
                _check_copy(copy, info.version, info.application_id, wal=wal)
                with open(copy, "rb+") as f:
                    os.fsync(f.fileno())
                os.replace(copy, db)
                renamed = True
            finally:
                if wal and not renamed:  # the original back in WAL mode
                    conn.execute("PRAGMA journal_mode = WAL")
    except sqlite3.Error as e:
        raise storage_error(db, e, "cannot compact") from e
    except OSError as e:
        raise StorageError(f"cannot compact {db}: {e.strerror}: {e.filename}") from e
    finally:
        if copy.is_file():
            with contextlib.suppress(OSError):
                copy.unlink()


def _rollback_journal(db: Path, conn: sqlite3.Connection) -> bool:
    """Switch the archive to a rollback journal (its WAL checkpointed, ``-wal`` and ``-shm``
    gone); whether it was in WAL mode."""
    wal: bool = conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    try:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        mode = conn.execute("PRAGMA journal_mode = DELETE").fetchone()[0]
    except sqlite3.OperationalError as e:
        raise StorageError(f"{db} is open elsewhere (a server?): not compacting now") from e
    if mode != "delete":
        raise StorageError(f"{db} is open elsewhere (a server?): not compacting now")
    return wal


def _check_copy(copy: Path, version: int, application_id: int, *, wal: bool) -> None:
    with closing(_connect(copy)) as conn:
        ok = conn.execute("PRAGMA quick_check").fetchall()
        if ok != [("ok",)]:
            raise StorageError(f"the compact copy {copy} failed its check: {ok[0][0]}")
        if wal:
            conn.execute("PRAGMA journal_mode = WAL")
    info = check_file(copy)
    if (info.version, info.application_id) != (version, application_id):
        raise StorageError(f"the compact copy {copy} is not the archive's schema version")
