"""Migration v17 (issue #28): the index ``episodes_linking_to`` finds links as written by.

``episodes_linking_to`` matches its target as a domain (exactly, or as a parent domain), or as
the start of a link's normalized URL or of its URL as written. The first three have indexes
(``idx_links_domain``, ``idx_links_normalized_url``); the URL as written had none, so every
question read every link: 0.4 s on a 300,000-episode archive (``benchmarks/pages_at_scale.py``).
This index holds only the links whose URL as written is not their normalized URL (an upper-case
host, a fragment, tracking parameters): a URL that starts with the target and equals its
normalized URL is found by the normalized URL's index. It is one of the links' lookup indexes
(``schema.LOOKUP_INDEXES``): a big first ingest drops it and builds it once at its end.
"""

from __future__ import annotations

import sqlite_utils

LINK_URL_INDEX = "idx_links_url_written"
LINK_URL_INDEX_SQL = (
    f'CREATE INDEX "{LINK_URL_INDEX}"\n    ON "links" ("url")'
    "\n    WHERE normalized_url IS NULL OR url != normalized_url"
)


def _link_url_index_v17(db: sqlite_utils.Database) -> None:
    """Issue #28: :data:`LINK_URL_INDEX` (no row changes), unless a run already restored it."""
    present = db.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'index' AND name = ?", [LINK_URL_INDEX]
    ).fetchone()
    if present is None:
        db.execute(LINK_URL_INDEX_SQL)
