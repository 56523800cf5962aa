"""Feeds moved between archives with their whole history (``podarchive reshard``, #16).

:func:`transplant` copies a chosen set of feeds from a source archive into a destination
archive of the same schema version: every row that belongs to them, in every table, in one
transaction of ``INSERT … SELECT`` statements over an attached, read-only source (never row
by row in Python). The source is never written: it is attached ``immutable`` (or ``mode=ro``
when a WAL holds part of it), so not a byte of its file changes.

Row ids collide between archives, so each table's ids are offset by the destination's
largest id, and every column that refers to that table (``PRAGMA foreign_key_list``) gets
the same offset. Which columns refer to which table is read from the schema, not listed
here; a column named ``…_id`` without a declared reference stops the copy (none exists at
schema 11: ``links.revision_id``, ``tags.parent_id``, ``*.document_id`` and the others are
all declared), and so does a table nobody decided about. No JSON column holds a row id
(``backfill_pages.episode_keys`` holds episode keys, ``links`` URLs).

What each table is, decided here:

- ``feeds``: the root: the feeds whose configured URL (``feeds.url``, the feed's identity)
  is asked for. A feed already in the destination is refused, never merged: two histories
  of one feed cannot be interleaved after the fact.
- Owned tables: every other table with a reference to ``feeds`` or ``episodes`` (episodes,
  links, fetches, revisions, tags, pages' bodies, transcripts and chapters files, their
  revisions, segments and chapters, backfill walks and pages, redirects, moves, feed
  bodies). A row goes with the feed it refers to (through its episode when it names no
  feed). Their ids are offset.
- Content-addressed tables: ``documents`` and ``snapshots`` hold each distinct body once
  (and ``header_sets`` each distinct header list of a capture, #27, mapped as documents are),
  under its SHA-256, shared by every feed that served it (a snapshot may also be the delta
  base of another feed's). The bodies the moved rows need are copied (a snapshot's delta
  bases with it), each once: a body the destination already holds under the same hash is
  the same bytes and is used as it is (taking the source's URL and time of first fetch
  when that fetch was the earlier one). A copied snapshot keeps its owning feed when that
  feed moves with it, else it is given the first moved feed that served it.
- ``hosts``: per-host politeness (a server's Retry-After, a back-off), which belongs to no
  feed and holds for every feed on that host, wherever it lives: merged whole into every
  destination; of two rows for one host, the one blocking longer (the later
  ``not_before``) stays, since forgetting a server's request to wait is the one mistake a
  polite fetcher must not make.
- ``media_payloads`` (#26): each stored media payload once, under the SHA-256 that names its
  file; other rows refer to it by that key, the same in every archive, so nothing is offset.
  The payloads the moved rows refer to are copied unless the destination has them, each with
  its ``fixity_events``. The files themselves never move (the folder is content-addressed).
- Full-text tables (FTS5 with external content): never copied; the content tables'
  triggers index every copied episode, segment and chapter as it is inserted, so the
  indexes end consistent (``podarchive check``).

With ``orphans``, the rows that belong to no feed of the source (a fetch logged without a
feed or episode, a document nothing refers to; a sound archive has none) are copied too:
``reshard`` gives them to the new layout's first shard, so nothing is lost.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Iterable, Iterator, Mapping
from contextlib import closing, contextmanager
from dataclasses import dataclass
from pathlib import Path

from podarchive.core.errors import StorageError

from .archive_path import BUSY_TIMEOUT, check_file, storage_error
from .migrations_links import LINK_SUMMARY_TABLES, LINK_SUMMARY_TRIGGERS
from .schema import LOOKUP_INDEXES, SCHEMA_VERSION

ROOT = "feeds"
#: table → its content key (#27: a capture's header sets, kept once each like bodies)
CONTENT_TABLES = {"documents": "hash", "snapshots": "hash", "header_sets": "sha256"}
BODY_TABLES = ("documents", "snapshots")  # the content tables that know their first fetch
MERGED_TABLES = {"hosts": "host"}  # table → its key; merged whole into every destination
PAYLOAD_TABLES = {"media_payloads": "sha256"}  # table → its content key, which rows refer to
#: The running daemon's own state, not the archive's record: its WebSub subscriptions (#29)
#: and the notifications they got are not moved; the daemon of the archive a feed lands in
#: subscribes it again; nor its podping cursor.
LOCAL_TABLES = frozenset({"push_subscriptions", "push_notices", "podping_cursor"})
#: An audit's identity across archives (its id is each archive's own).
AUDIT_KEY = "SELECT sha256, checked_at, expected, found, outcome FROM fixity_events"
OWNERS = ("feeds", "episodes")  # an owned table refers to one of these


@dataclass(frozen=True, slots=True)
class Transplanted:
    """What one :func:`transplant` copied: feeds, and rows per table (hosts: merged)."""

    feeds: int
    rows: dict[str, int]
    seconds: float


@dataclass(frozen=True, slots=True)
class _Table:
    name: str
    columns: tuple[str, ...]
    references: dict[str, str]  # column → the table it refers to (by id)
    keyed: dict[str, str]  # column → the payload table it refers to (by content key)


def _source_uri(path: Path) -> str:
    """A read-only URI for ``path`` that changes no byte of it and leaves no side file
    (``immutable`` without a WAL; ``mode=ro`` reads through one that holds data)."""
    wal = Path(f"{path}-wal")
    mode = "mode=ro" if wal.exists() and wal.stat().st_size else "immutable=1"
    return f"{Path(path).resolve().as_uri()}?{mode}"


@contextmanager
def _read_only(path: Path) -> Iterator[sqlite3.Connection]:
    check_file(path)
    try:
        conn = sqlite3.connect(_source_uri(path), uri=True, timeout=BUSY_TIMEOUT)
    except sqlite3.Error as e:
        raise storage_error(path, e, "cannot open archive") from e
    with closing(conn):
        try:
            yield conn
        except sqlite3.Error as e:
            raise storage_error(path, e, "cannot read archive") from e


def _schema_version(conn: sqlite3.Connection, schema: str = "main") -> int:
    return int(conn.execute(f"PRAGMA {schema}.user_version").fetchone()[0])


def _is_fts(conn: sqlite3.Connection, schema: str) -> set[str]:
    """The FTS tables and their shadow tables."""
    fts = {
        str(name)
        for (name,) in conn.execute(
            f"SELECT name FROM {schema}.sqlite_master WHERE type = 'table' "
            "AND sql LIKE 'CREATE VIRTUAL TABLE%USING FTS5%'"
        )
    }
    suffixes = ("", "_config", "_data", "_docsize", "_idx", "_content")
    return {f"{name}{suffix}" for name in fts for suffix in suffixes}


def _tables(conn: sqlite3.Connection, schema: str = "main") -> dict[str, _Table]:
    """The archive's own tables (not FTS, not SQLite's), with columns and references."""
    names = [
        str(name)
        for (name,) in conn.execute(
            f"SELECT name FROM {schema}.sqlite_master WHERE type = 'table' "
            "AND name NOT LIKE 'sqlite_%' ORDER BY name"
        )
    ]
    skip = _is_fts(conn, schema) | set(LINK_SUMMARY_TABLES) | LOCAL_TABLES  # not moved
    tables = {}
    for name in names:
        if name in skip:
            continue
        columns = tuple(str(r[1]) for r in conn.execute(f"PRAGMA {schema}.table_info([{name}])"))
        found = conn.execute(f"PRAGMA {schema}.foreign_key_list([{name}])").fetchall()
        references = {str(r[3]): str(r[2]) for r in found if str(r[2]) not in PAYLOAD_TABLES}
        keyed = {str(r[3]): str(r[2]) for r in found if str(r[2]) in PAYLOAD_TABLES}
        tables[name] = _Table(name, columns, references, keyed)
    return tables


def _check_tables(tables: dict[str, _Table], where: Path) -> None:
    """Every table has been decided about, and every ``…_id`` column is a declared reference."""
    for table in tables.values():
        undeclared = [c for c in table.columns if c.endswith("_id") and c not in table.references]
        if undeclared:
            raise StorageError(
                f"cannot move feeds of {where}: {table.name}.{undeclared[0]} looks like a "
                "reference but declares none"
            )
        known = table.name in (ROOT, *CONTENT_TABLES, *MERGED_TABLES, *PAYLOAD_TABLES)
        if not known and not table.keyed and not set(table.references.values()) & set(OWNERS):
            raise StorageError(
                f"cannot move feeds of {where}: table {table.name} belongs to no feed and "
                "transplant does not know how to merge it"
            )


def _owned(table: _Table, alias: str = "s") -> str:
    """The WHERE clause of ``table``'s rows that belong to the moved feeds."""
    feeds = [c for c, t in table.references.items() if t == "feeds"]
    episodes = [c for c, t in table.references.items() if t == "episodes"]
    clauses = [f"{alias}.[{c}] IN (SELECT id FROM temp.moved_feeds)" for c in feeds]
    no_feed = " AND ".join(f"{alias}.[{c}] IS NULL" for c in feeds) or "1"
    clauses += [
        f"({no_feed} AND {alias}.[{c}] IN (SELECT id FROM temp.moved_episodes))" for c in episodes
    ]
    return " OR ".join(clauses)


def _orphan(table: _Table, alias: str = "s") -> str:
    """The WHERE clause of ``table``'s rows that name no feed and no episode."""
    owners = _owners(table)
    return " AND ".join(f"{alias}.[{c}] IS NULL" for c in owners)


def transplant(
    source: Path,
    destination: Path,
    feed_urls: Iterable[str],
    *,
    orphans: bool = False,
    check: bool = True,
    bulk: bool = False,
) -> Transplanted:
    """Copy the feeds of ``source`` whose configured URLs are ``feed_urls``, with every row
    that belongs to them, into the archive ``destination`` (same schema version), in one
    transaction; ``hosts`` are merged whole (see the module's docstring).

    ``source`` is never written. A URL that is not a feed of ``source``, or already one of
    ``destination``, is :class:`StorageError` and nothing is copied. With ``check``, the
    destination's foreign keys are checked before the commit.

    With ``bulk``, for a new destination no one else has open (``reshard``'s partial files),
    the copy is written once instead of twice: through a rollback journal instead of the WAL
    (pages added are never journaled), and without the links' lookup indexes
    (:data:`~.schema.LOOKUP_INDEXES`) and the link summary's triggers; the next opening as an
    :class:`Archive` restores them and rebuilds the summary (at 30,000 episodes, 13 s become 7).
    """
    started = time.perf_counter()
    source, destination = Path(source), Path(destination)
    info = check_file(source)
    if info.kind != "archive":
        raise StorageError(f"no archive at {source}")
    target = check_file(destination)
    if target.kind != "archive" or target.version != SCHEMA_VERSION:
        raise StorageError(
            f"{destination} is not an archive of schema version {SCHEMA_VERSION}: open it "
            "with this podarchive first"
        )
    if info.version != SCHEMA_VERSION:
        raise StorageError(
            f"{source} has schema version {info.version}, not {SCHEMA_VERSION}: open it with "
            "this podarchive first (any run migrates it)"
        )
    urls = sorted(set(feed_urls))
    try:
        conn = sqlite3.connect(
            destination.resolve().as_uri() + "?mode=rw",
            uri=True,
            timeout=BUSY_TIMEOUT,
            isolation_level=None,
        )
    except sqlite3.Error as e:
        raise storage_error(destination, e, "cannot open archive") from e
    with closing(conn):
        try:
            conn.execute("PRAGMA foreign_keys = OFF")  # checked whole, before the commit
            if bulk:
                conn.execute("PRAGMA journal_mode = DELETE")
                for name in LOOKUP_INDEXES:
                    conn.execute(f"DROP INDEX IF EXISTS main.{name}")
                for name in LINK_SUMMARY_TRIGGERS:  # they read those indexes (schema 24)
                    conn.execute(f"DROP TRIGGER IF EXISTS main.{name}")
            conn.execute("ATTACH DATABASE ? AS src", [_source_uri(source)])
            try:
                rows, feeds = _copy(conn, source, destination, urls, orphans=orphans, check=check)
            finally:
                conn.execute("DETACH DATABASE src")
        except sqlite3.Error as e:
            raise storage_error(destination, e, f"cannot move feeds of {source} into") from e
    return Transplanted(feeds, rows, time.perf_counter() - started)


def _copy(
    conn: sqlite3.Connection,
    source: Path,
    destination: Path,
    urls: list[str],
    *,
    orphans: bool,
    check: bool,
) -> tuple[dict[str, int], int]:
    tables = _tables(conn, "main")
    theirs = _tables(conn, "src")
    if _schema_version(conn, "src") != _schema_version(conn, "main"):
        raise StorageError(f"{source} and {destination} have different schema versions")
    if {t: set(x.columns) for t, x in theirs.items()} != {
        t: set(x.columns) for t, x in tables.items()
    }:
        raise StorageError(f"{source} and {destination} have different tables or columns")
    _check_tables(tables, source)
    conn.execute("BEGIN IMMEDIATE")
    try:
        rows = _copy_rows(conn, tables, source, destination, urls, orphans=orphans)
        if check:
            problem = conn.execute("PRAGMA main.foreign_key_check").fetchone()
            if problem is not None:
                raise StorageError(
                    f"moving feeds of {source} into {destination} left {problem[0]} row "
                    f"{problem[1]} referring to a missing {problem[2]} row; nothing was copied"
                )
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    finally:
        for name in (
            "wanted",
            "moved_feeds",
            "moved_episodes",
            *(f"map_{t}" for t in CONTENT_TABLES),
            "moved_payloads",
        ):
            conn.execute(f"DROP TABLE IF EXISTS temp.{name}")
    return rows, rows.get(ROOT, 0)


def _copy_rows(
    conn: sqlite3.Connection,
    tables: dict[str, _Table],
    source: Path,
    destination: Path,
    urls: list[str],
    *,
    orphans: bool,
) -> dict[str, int]:
    _select_moved(conn, source, destination, urls)
    offsets = {
        name: int(conn.execute(f"SELECT coalesce(max(id), 0) FROM main.[{name}]").fetchone()[0])
        for name, table in tables.items()
        if name not in MERGED_TABLES and "id" in table.columns
    }
    _map_snapshots(conn, offsets["snapshots"])
    for name in ("documents", "header_sets"):
        _map_content(conn, tables, name, offsets.get(name, 0), orphans=orphans)
    _map_payloads(conn, tables, orphans=orphans)
    rows = {
        name: _merge_table(conn, table)
        if name in MERGED_TABLES
        else _copy_table(conn, table, offsets, orphans=orphans)
        for name, table in tables.items()
    }
    for name in BODY_TABLES:  # a body both hold: the first fetch of it is the earlier one
        conn.execute(
            f"UPDATE main.[{name}] AS d SET url = s.url, content_type = s.content_type, "
            f"first_fetched_at = s.first_fetched_at FROM temp.map_{name} m "
            f"JOIN src.[{name}] s ON s.id = m.old "
            "WHERE d.id = m.new AND NOT m.fresh AND s.first_fetched_at < d.first_fetched_at"
        )
    return rows


def _select_moved(
    conn: sqlite3.Connection, source: Path, destination: Path, urls: list[str]
) -> None:
    """The temp tables of the feeds and episodes to move; refused when a feed is not in
    ``source`` or already in ``destination``."""
    conn.execute("CREATE TEMP TABLE wanted (url TEXT PRIMARY KEY)")
    conn.executemany("INSERT INTO temp.wanted VALUES (?)", [(u,) for u in urls])
    conn.execute(
        "CREATE TEMP TABLE moved_feeds AS SELECT id FROM src.feeds WHERE url IN "
        "(SELECT url FROM temp.wanted)"
    )
    missing = conn.execute(
        "SELECT url FROM temp.wanted WHERE url NOT IN (SELECT url FROM src.feeds) LIMIT 1"
    ).fetchone()
    if missing is not None:
        raise StorageError(f"{missing[0]} is not a feed of {source}")
    there = conn.execute(
        "SELECT url FROM main.feeds WHERE url IN (SELECT url FROM temp.wanted) LIMIT 1"
    ).fetchone()
    if there is not None:
        raise StorageError(f"{there[0]} is already a feed of {destination}; not merging it")
    conn.execute(
        "CREATE TEMP TABLE moved_episodes AS SELECT id FROM src.episodes "
        "WHERE feed_id IN (SELECT id FROM temp.moved_feeds)"
    )
    conn.execute("CREATE UNIQUE INDEX temp.moved_feeds_id ON moved_feeds (id)")
    conn.execute("CREATE UNIQUE INDEX temp.moved_episodes_id ON moved_episodes (id)")


def _merge_table(conn: sqlite3.Connection, table: _Table) -> int:
    """Merge a table of :data:`MERGED_TABLES` whole: the later ``not_before`` wins."""
    name, key = table.name, MERGED_TABLES[table.name]
    columns = ", ".join(f"[{c}]" for c in table.columns)
    updates = ", ".join(f"[{c}] = excluded.[{c}]" for c in table.columns if c != key)
    cursor = conn.execute(
        f"INSERT INTO main.[{name}] ({columns}) SELECT {columns} FROM src.[{name}] "
        f"WHERE true ON CONFLICT ([{key}]) DO UPDATE SET {updates} "
        f"WHERE excluded.not_before > coalesce([{name}].not_before, '')"
    )
    return cursor.rowcount


def _value(table: _Table, column: str, offsets: Mapping[str, int]) -> str:
    """The destination's value of ``column`` for a source row ``s``."""
    if column == "id":
        referred = table.name
    elif column in table.references:
        referred = table.references[column]
    else:
        return f"s.[{column}]"
    if referred in CONTENT_TABLES:
        return f"(SELECT new FROM temp.map_{referred} WHERE old = s.[{column}])"
    return f"s.[{column}] + {offsets[referred]}"


def _copy_table(
    conn: sqlite3.Connection, table: _Table, offsets: Mapping[str, int], *, orphans: bool
) -> int:
    """Copy the moved rows of one table, their ids shifted past the destination's."""
    name = table.name
    columns = ", ".join(f"[{c}]" for c in table.columns)
    values = ", ".join(_value(table, c, offsets) for c in table.columns)
    if name == "snapshots":
        # its owner: the feed itself when it moves, else the first moved feed it served
        values = values.replace(f"s.[feed_id] + {offsets[ROOT]}", f"m.owner + {offsets[ROOT]}")
        where = "JOIN temp.map_snapshots m ON m.old = s.id WHERE m.fresh"
    elif name in ("documents", "header_sets"):
        where = f"JOIN temp.map_{name} m ON m.old = s.id WHERE m.fresh"
    elif name == ROOT:
        where = "WHERE s.id IN (SELECT id FROM temp.moved_feeds)"
    elif name in PAYLOAD_TABLES:
        where = f"JOIN temp.moved_payloads m ON m.key = s.[{PAYLOAD_TABLES[name]}] WHERE m.fresh"
    elif not _owners(table):  # a payload's own rows (its fixity events): with the payload
        (column,) = table.keyed
        where = f"JOIN temp.moved_payloads m ON m.key = s.[{column}] WHERE m.fresh"
    else:
        where = f"WHERE {_owned(table)}"
        if orphans:
            where += f" OR ({_orphan(table)})"
    cursor = conn.execute(
        f"INSERT INTO main.[{name}] ({columns}) SELECT {values} FROM src.[{name}] s {where}"
    )
    return cursor.rowcount


def _owners(table: _Table) -> list[str]:
    return [c for c, t in table.references.items() if t in OWNERS]


def _map_payloads(conn: sqlite3.Connection, tables: dict[str, _Table], *, orphans: bool) -> None:
    """``temp.moved_payloads``: the media payloads (by SHA-256) the moved rows refer to (with
    ``orphans``, also those no row refers to) and whether the destination lacks them
    (``fresh``: then the payload's row and its fixity events are copied; a payload both hold
    is the same bytes, and the destination's row stays)."""
    conn.execute("CREATE TEMP TABLE moved_payloads (key TEXT PRIMARY KEY, fresh INTEGER)")
    for name, key in PAYLOAD_TABLES.items():
        needed, referenced = [], []
        for table in tables.values():
            for column, referred in table.keyed.items():
                if referred == name and _owners(table):
                    needed.append(f"SELECT s.[{column}] FROM src.[{table.name}] s "
                                  f"WHERE {_owned(table)}")  # fmt: skip
                    referenced.append(f"SELECT [{column}] FROM src.[{table.name}] "
                                      f"WHERE [{column}] IS NOT NULL")  # fmt: skip
        if orphans:
            unreferenced = " UNION ".join(referenced) or "SELECT NULL WHERE false"
            needed.append(f"SELECT [{key}] FROM src.[{name}] WHERE [{key}] NOT IN ({unreferenced})")
        if needed:
            conn.execute(
                f"INSERT OR IGNORE INTO temp.moved_payloads (key, fresh) SELECT s.[{key}], "
                f"d.[{key}] IS NULL FROM src.[{name}] s LEFT JOIN main.[{name}] d "
                f"ON d.[{key}] = s.[{key}] WHERE s.[{key}] IN ({' UNION '.join(needed)})"
            )


def _map_snapshots(conn: sqlite3.Connection, offset: int) -> None:
    """``temp.map_snapshots``: each snapshot the moved feeds need (the bodies they served,
    the snapshots they own, the delta bases of those) → its id in the destination, whether
    it is to be copied (``fresh``: no body of its hash there yet) and its owner there."""
    conn.execute(
        "CREATE TEMP TABLE map_snapshots "
        "(old INTEGER PRIMARY KEY, new INTEGER NOT NULL, fresh INTEGER, owner INTEGER)"
    )
    conn.execute(
        "WITH RECURSIVE need (id, feed) AS ("
        " SELECT snapshot_id, feed_id FROM src.feed_bodies"
        " WHERE feed_id IN (SELECT id FROM temp.moved_feeds)"
        " UNION SELECT id, feed_id FROM src.snapshots"
        " WHERE feed_id IN (SELECT id FROM temp.moved_feeds)"
        " UNION SELECT s.base_id, need.feed FROM need JOIN src.snapshots s ON s.id = need.id"
        " WHERE s.base_id IS NOT NULL) "
        "INSERT INTO temp.map_snapshots (old, new, fresh, owner) "
        f"SELECT s.id, coalesce(d.id, s.id + {offset}), d.id IS NULL, "
        " CASE WHEN s.feed_id IN (SELECT id FROM temp.moved_feeds) THEN s.feed_id"
        " ELSE min(need.feed) END "
        "FROM need JOIN src.snapshots s ON s.id = need.id "
        "LEFT JOIN main.snapshots d ON d.hash = s.hash GROUP BY s.id"
    )


def _map_content(
    conn: sqlite3.Connection, tables: dict[str, _Table], name: str, offset: int, *, orphans: bool
) -> None:
    """``temp.map_<name>`` (documents, header sets): each row a moved row refers to (with
    ``orphans``, also each one no row refers to) → its id in the destination (the one with
    the same content key, if any), and whether to copy it."""
    needed = []
    unreferenced = []
    for table in tables.values():
        for column, referred in table.references.items():
            if referred != name:
                continue
            owned = _owned(table)
            needed.append(f"SELECT s.[{column}] FROM src.[{table.name}] s WHERE {owned}")
            unreferenced.append(
                f"SELECT [{column}] FROM src.[{table.name}] WHERE [{column}] IS NOT NULL"
            )
    if orphans:
        referenced = " UNION ".join(unreferenced) or "SELECT NULL WHERE false"
        needed.append(f"SELECT id FROM src.[{name}] WHERE id NOT IN ({referenced})")
    conn.execute(
        f"CREATE TEMP TABLE map_{name} (old INTEGER PRIMARY KEY, new INTEGER NOT NULL, fresh "
        "INTEGER)"
    )
    if not needed:
        return
    key = CONTENT_TABLES[name]
    conn.execute(
        f"INSERT INTO temp.map_{name} (old, new, fresh) "
        f"SELECT s.id, coalesce(d.id, s.id + {offset}), d.id IS NULL FROM src.[{name}] s "
        f"LEFT JOIN main.[{name}] d ON d.[{key}] = s.[{key}] "
        f"WHERE s.id IN ({' UNION '.join(needed)})"
    )


# reading a source, for reshard's plan and its verification -----------------------------------


def feed_urls(path: Path) -> list[str]:
    """The configured URLs of the feeds of the archive at ``path``, read without a write."""
    with _read_only(path) as conn:
        return [str(u) for (u,) in conn.execute("SELECT url FROM feeds ORDER BY id")]


def archive_version(path: Path) -> int:
    """The schema version of the archive at ``path`` (refusing what is no archive)."""
    info = check_file(path)
    if info.kind != "archive":
        raise StorageError(f"no archive at {path}")
    return info.version


def table_counts(path: Path) -> dict[str, int]:
    """Rows per table of the archive at ``path`` (not the full-text tables)."""
    with _read_only(path) as conn:
        return {
            name: int(conn.execute(f"SELECT count(*) FROM [{name}]").fetchone()[0])
            for name in _tables(conn)
        }


def content_keys(path: Path) -> dict[str, set[str]]:
    """The keys of the shared tables (document, snapshot and payload hashes, hosts, audits)."""
    with _read_only(path) as conn:
        keys = {
            table: {str(k) for (k,) in conn.execute(f"SELECT [{key}] FROM [{table}]")}
            for table, key in {**CONTENT_TABLES, **MERGED_TABLES, **PAYLOAD_TABLES}.items()
        }
        keys["fixity_events"] = {  # a payload's audits travel with each copy of it
            str(row) for row in conn.execute(AUDIT_KEY)
        }
        return keys
