"""What a migration test compares before and after: every row, and the schema."""

from __future__ import annotations

import sqlite3
from typing import Any


def every_row(conn: sqlite3.Connection) -> dict[str, list[tuple[Any, ...]]]:
    """Every row of every table (FTS shadow tables too), in a stable order."""
    tables = [
        name
        for (name,) in conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE '%_fts'"
        )
    ]
    return {t: sorted(conn.execute(f"SELECT * FROM [{t}]").fetchall(), key=repr) for t in tables}


def schema(conn: sqlite3.Connection) -> dict[tuple[str, str], str | None]:
    """Every object of the schema: (type, name) → its SQL."""
    return {(t, n): sql for t, n, sql in conn.execute("SELECT type, name, sql FROM sqlite_master")}
