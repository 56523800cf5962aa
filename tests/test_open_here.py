"""An archive this process has open is never opened with Python, which would drop its locks.

POSIX takes away every lock a process holds on a file when the process closes any
descriptor of it. A second connection opened in the same process (a cluster worker's media
thread, the daemon's push thread) or a check of the file (``check_file``, the daily check)
used to read the header with ``open()``: from then on the first connection held no lock,
and another process could switch the archive's journal mode under it.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from podarchive.store import Archive, check_file
from podarchive.store.archive_path import inspect_file, is_open_here

PROBE = (
    "import sqlite3, sys; c = sqlite3.connect(sys.argv[1], timeout=0)\n"
    "try:\n    print(c.execute('PRAGMA journal_mode=DELETE').fetchone()[0])\n"
    "except sqlite3.OperationalError as e:\n    print(e)\n"
)


def another_process_switches_the_journal(path: Path) -> str:
    return subprocess.run(
        [sys.executable, "-c", PROBE, str(path)], capture_output=True, text=True, check=True
    ).stdout.strip()


def test_the_locks_of_an_open_archive_survive_checks_and_a_second_connection(
    tmp_path: Path,
) -> None:
    path = tmp_path / "archive.db"
    with Archive(path) as first:
        first.feeds()
        assert is_open_here(path)
        assert another_process_switches_the_journal(path) == "database is locked"
        assert check_file(path).kind == "archive"  # read through SQLite alone
        assert inspect_file(path).version == first.schema_version
        with Archive(path) as second:  # a second connection, as a worker's media thread
            second.feeds()
        assert another_process_switches_the_journal(path) == "database is locked"
        with Archive.open_to_read(path) as reader:
            reader.feed_statuses()
        assert another_process_switches_the_journal(path) == "database is locked"
        assert is_open_here(path)
    assert not is_open_here(path)
    assert another_process_switches_the_journal(path) == "delete"  # closed: nothing holds it
