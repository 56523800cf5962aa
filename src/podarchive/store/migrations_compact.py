"""Migration v23 (issue #30): less disk for the same content.

The link summary of migration 20 (:data:`.migrations_links.LINK_SUMMARY_TABLES`) was three
rowid tables, each with a primary key: SQLite kept every row twice, once in the table (under a
rowid no query reads) and once in the key's index (``sqlite_autoindex_…``). On 100 feeds x 100
episodes, ``link_domain_urls`` and its key took 37 MB of a 222 MB archive, a sixth of it.
As ``WITHOUT ROWID`` tables the key's b-tree holds the rows themselves: the same rows, the
same lookups (every query and trigger reads them by their key), about half the bytes.

The migration copies each table into its compact form (every row kept as it is), with the
summary's triggers dropped meanwhile and created again as they were; a fresh archive runs it
too, so new writes go to the compact tables.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .migrations_links import summary_triggers_replaced

if TYPE_CHECKING:
    import sqlite_utils

#: name → the compact table's columns and key (as migration 20's, WITHOUT ROWID).
COMPACT_TABLES = {
    "link_domains": "domain TEXT PRIMARY KEY, links INTEGER NOT NULL, urls INTEGER NOT NULL, "
    "episodes INTEGER NOT NULL, podcasts INTEGER NOT NULL",
    "link_domain_urls": "domain TEXT NOT NULL, url TEXT NOT NULL, n INTEGER NOT NULL, "
    "PRIMARY KEY (domain, url)",
    "link_domain_feeds": "domain TEXT NOT NULL, feed_id INTEGER NOT NULL, n INTEGER NOT NULL, "
    "PRIMARY KEY (domain, feed_id)",
}


def _compact_v23(db: sqlite_utils.Database) -> None:
    """Issue #30: the link summary's tables as ``WITHOUT ROWID`` tables, every row kept."""
    with summary_triggers_replaced(db):
        for table, columns in COMPACT_TABLES.items():
            db.execute(f"CREATE TABLE {table}_compact ({columns}) WITHOUT ROWID")
            db.execute(f"INSERT INTO {table}_compact SELECT * FROM {table}")
            db.execute(f"DROP TABLE {table}")
            db.execute(f"ALTER TABLE {table}_compact RENAME TO {table}")
