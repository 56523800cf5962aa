"""Migration v24 (issue #30): the link summary without a second copy of every URL.

``link_domain_urls`` (migration 20, ``WITHOUT ROWID`` since 23) held one row per domain and
current URL, the URL's text again: 18.6 MB of a 203 MB archive at 100 feeds x 100 episodes,
every URL distinct. Its one use was to tell the triggers whether another current link of the
domain has a link's URL (``link_domains.urls``), and the cross-shard ``most_linked_domains``
the top domains' URLs. The links' own lookup indexes answer the first
(:func:`.migrations_links._other_url`), ``links`` by ``idx_links_domain`` the second. SQLite
3.40 has no built-in hash the triggers could key a smaller table by (no custom function: the
triggers fire on every connection, Datasette's and the ``sqlite3`` shell's included), and a
URL dictionary would hold the text once more, so the table goes.

The migration drops the summary's triggers, the table, and creates the triggers as they are
now (unless a deferred ingest's crash left them out: the next open rebuilds); ``link_domains``
and ``link_domain_feeds`` keep their rows: their counts do not change.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .migrations_links import summary_triggers_replaced

if TYPE_CHECKING:
    import sqlite_utils


def _disk_v24(db: sqlite_utils.Database) -> None:
    """Issue #30: ``link_domain_urls`` dropped; the triggers read the links' indexes."""
    with summary_triggers_replaced(db):
        db.execute("DROP TABLE IF EXISTS link_domain_urls")
