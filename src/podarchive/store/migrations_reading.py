"""Migration v16 (issue #28): the indexes the archive's pages read by.

A podcast's page lists its episodes newest first and counts them; the podcasts' cards count
each podcast's episodes and find its latest; the episodes table's facets group by episode
type and season. Without these indexes each of those reads every episode row (their show
notes too): 2 to 3 s on a 30,000-episode archive, past Datasette's time limits at 300,000.
With them each is a walk of one small index (``benchmarks/pages_at_scale.py``).
"""

from __future__ import annotations

import sqlite_utils

#: (name, "table (columns)") of each index, created if missing.
READING_INDEXES = (
    ("idx_episodes_feed_published", "episodes (feed_id, published, duration)"),
    ("idx_episodes_episode_type", "episodes (episode_type)"),
    ("idx_episodes_season", "episodes (season)"),
)


def _reading_indexes_v16(db: sqlite_utils.Database) -> None:
    """Issue #28: the indexes of :data:`READING_INDEXES` (no row changes)."""
    for name, on in READING_INDEXES:
        db.execute(f'CREATE INDEX IF NOT EXISTS "{name}" ON {on}')
