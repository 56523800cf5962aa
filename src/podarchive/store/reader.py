"""The archive opened to read only: what ``podarchive status`` and the web layer read.

:class:`ArchiveReader` has the read-only queries (:class:`~.counts.StatusMixin`,
:class:`~.feed_reads.FeedReadsMixin`, :class:`~.media.MediaReadsMixin`) and none of the
writer's methods.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Self

from podarchive.core.errors import StorageError

from .archive_path import BUSY_TIMEOUT, check_file, database, opened_here
from .base import Connection, storage_errors
from .change_reads import ChangeReadsMixin
from .counts import StatusMixin
from .feed_reads import FeedReadsMixin
from .media import MediaReadsMixin
from .podping import PodpingMixin
from .push import PushMixin
from .schema import SCHEMA_VERSION


@storage_errors
class ArchiveReader(
    FeedReadsMixin,
    StatusMixin,
    MediaReadsMixin,
    ChangeReadsMixin,
    PushMixin,
    PodpingMixin,
    Connection,
):
    """An archive file opened with :meth:`open_to_read`; every public method raises
    :class:`StorageError`, never a sqlite3 error."""

    @classmethod
    def open_to_read(cls, path: Path | str) -> Self:
        """The archive at ``path`` for someone who may only read it (``podarchive status``).

        Nothing is written: not the archive, not a ``-wal``, ``-shm`` or lock file beside
        it, so a read-only file, or one in a directory the reader cannot write, opens. While
        a writer has it open (its ``-wal`` and ``-shm`` exist) it is read through them
        (``mode=ro``); otherwise as ``immutable`` (SQLite cannot read a WAL archive read-only
        without a ``-shm`` file it may create). An archive of an older schema is read
        through a copy in memory brought up to date: the file itself is upgraded by the
        next command that writes.
        """
        path = Path(path)
        if check_file(path).kind == "new":
            raise StorageError(f"no archive at {path}")
        live = Path(f"{path}-wal").exists() and Path(f"{path}-shm").exists()
        uri = f"{path.resolve().as_uri()}?{'mode=ro' if live else 'immutable=1'}"
        conn = sqlite3.connect(uri, uri=True, timeout=BUSY_TIMEOUT)
        archive = cls.__new__(cls)
        archive.path = path
        archive._file = path if live else None  # a mode=ro reader holds locks: see base
        if live:
            opened_here(path, +1)
        archive.db = database(conn)
        try:
            conn.execute("PRAGMA query_only = 1")
            if archive.schema_version < SCHEMA_VERSION:
                memory = sqlite3.connect(":memory:")
                conn.backup(memory)
                conn.close()
                archive.db = database(memory)
                archive.migrate()
        except BaseException:
            archive.close()
            raise
        return archive
