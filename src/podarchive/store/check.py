"""``podarchive check``: integrity, foreign keys and the FTS5 indexes, changing nothing."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from podarchive.core.errors import StorageError

from .archive_path import BUSY_TIMEOUT, check_file

CHECK_LIMIT = 20  # problems listed per check


@dataclass(frozen=True, slots=True)
class Problem:
    """One line of what ``podarchive check`` found: which check, and what it said."""

    check: str  # "integrity_check", "foreign_key_check", or an FTS table's name
    text: str


def check_rows(rows: Iterable[tuple[Any, ...]]) -> list[str]:
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
            problems += [Problem("integrity_check", line) for line in check_rows(rows)]
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
