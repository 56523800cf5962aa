"""``podarchive compact`` (#30): an archive's free pages given back to the disk.

Under the archive's lock and its daemon's (a run or a daemon holding either: refused, the file
untouched), :func:`~podarchive.store.compact_file.compact_file` writes a compact copy beside the
archive, checks it and renames it over the archive. The sizes before and after count the
database with its ``-wal`` and ``-shm`` files, as a user's disk sees them.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from podarchive.runtime.lock import archive_lock, daemon_lock
from podarchive.store.compact_file import compact_file

MB = 1_000_000


@dataclass(frozen=True)
class Compacted:
    db: Path
    before: int  # bytes: the database, its -wal and -shm
    after: int


def file_bytes(db: Path) -> int:
    """The database and its side files, as a user's disk sees them."""
    paths = (db, Path(f"{db}-wal"), Path(f"{db}-shm"))
    return sum(p.stat().st_size for p in paths if p.exists())


def compact(db: Path) -> Compacted:
    """Compact the archive at ``db`` (see the module's docstring); held by another run or a
    daemon: :class:`~podarchive.core.errors.ArchiveLocked`, nothing done."""
    with daemon_lock(db).acquire(), archive_lock(db).acquire():
        before = file_bytes(db)
        compact_file(db)
        return Compacted(db, before, file_bytes(db))


def compacted_line(report: Compacted) -> str:
    saved = report.before - report.after
    return (
        f"{report.db}: {report.before / MB:.1f} MB -> {report.after / MB:.1f} MB "
        f"({saved / MB:.1f} MB given back)"
    )
