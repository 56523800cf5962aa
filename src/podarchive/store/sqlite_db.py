"""The archive's connection as the store's statements use it, without importing sqlite-utils.

:class:`ArchiveDb` is sqlite-utils' ``Database`` as far as the store's own code needs it:
:meth:`~ArchiveDb.execute` and :meth:`~ArchiveDb.atomic` with sqlite-utils 4's transaction
rules (a write outside a transaction is committed at once; nested blocks are savepoints),
and ``conn``. Anything else (the migrations' table API, a test's ``db["feeds"]``) goes to a
real ``sqlite_utils.Database`` over the same connection, made on first use (:attr:`full`):
importing sqlite-utils (pluggy, dateutil, click, its CREATE TABLE parser) for an archive that
migrates once per schema version cost a no-change run of 100 feeds 22 % of its CPU (#30).
"""

from __future__ import annotations

import secrets
import sqlite3
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import sqlite_utils

#: Statements that end or open a transaction themselves: never committed by :meth:`execute`.
_TRANSACTION_CONTROL = frozenset({"BEGIN", "COMMIT", "END", "ROLLBACK", "SAVEPOINT", "RELEASE"})


class ArchiveDb:
    """sqlite-utils' ``Database`` over ``conn`` for the store's statements (see the module)."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn
        self._full: sqlite_utils.Database | None = None
        self.execute("PRAGMA recursive_triggers=on;")  # as sqlite-utils' Database does

    @property
    def full(self) -> sqlite_utils.Database:
        """sqlite-utils' ``Database`` over the same connection, without its plugins (an
        archive uses none; looking them up reads every installed package's entry points)."""
        if self._full is None:
            import sqlite_utils

            self._full = sqlite_utils.Database(
                self.conn, recursive_triggers=False, execute_plugins=False
            )
        return self._full

    def execute(
        self, sql: str, parameters: Sequence[Any] | dict[str, Any] | None = None
    ) -> sqlite3.Cursor:
        """``sqlite_utils.Database.execute``: a statement that opened a transaction by itself
        (a write outside :meth:`atomic`) is committed; one that failed is rolled back."""
        was_in_transaction = self.conn.in_transaction
        try:
            if parameters is not None:
                cursor = self.conn.execute(sql, parameters)
            else:
                cursor = self.conn.execute(sql)
        except Exception:
            if not was_in_transaction and self.conn.in_transaction:
                self.conn.execute("ROLLBACK")
            raise
        if (
            not was_in_transaction
            and self.conn.in_transaction
            and cursor.description is None
            and first_keyword(sql) not in _TRANSACTION_CONTROL
        ):
            self.conn.execute("COMMIT")
        return cursor

    @contextmanager
    def atomic(self) -> Iterator[ArchiveDb]:
        """``sqlite_utils.Database.atomic``: a transaction, or a savepoint inside one."""
        if self.conn.in_transaction:
            savepoint = f"sqlite_utils_{secrets.token_hex(16)}"
            self.conn.execute(f"SAVEPOINT {savepoint};")
            try:
                yield self
            except BaseException:
                if self.conn.in_transaction:  # a RAISE(ROLLBACK) may have ended it all
                    self.conn.execute(f"ROLLBACK TO SAVEPOINT {savepoint};")
                    self.conn.execute(f"RELEASE SAVEPOINT {savepoint};")
                raise
            else:
                self.conn.execute(f"RELEASE SAVEPOINT {savepoint};")
        else:
            self.conn.execute("BEGIN")
            try:
                yield self
            except BaseException:
                self.rollback()
                raise
            else:
                try:
                    self.conn.execute("COMMIT")
                except BaseException:
                    self.rollback()
                    raise

    def rollback(self) -> None:
        if self.conn.in_transaction:
            self.conn.execute("ROLLBACK")

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        return getattr(self.full, name)

    def __getitem__(self, table: str) -> Any:
        return self.full[table]


def first_keyword(sql: str) -> str:
    """The statement's first keyword, upper-cased, past whitespace, ``;``, a BOM and
    comments (sqlite-utils' ``_first_keyword``); empty when there is none."""
    i, n = 0, len(sql)
    while i < n:
        if sql[i].isspace() or sql[i] in (";", "\ufeff"):
            i += 1
        elif sql.startswith("--", i):
            newline = sql.find("\n", i)
            if newline == -1:
                return ""
            i = newline + 1
        elif sql.startswith("/*", i):
            end = sql.find("*/", i + 2)
            if end == -1:
                return ""
            i = end + 2
        else:
            break
    j = i
    while j < n and (sql[j].isalpha() or sql[j] == "_"):
        j += 1
    return sql[i:j].upper()
