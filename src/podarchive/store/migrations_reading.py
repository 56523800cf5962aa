"""Migration v16 (issue #28): the indexes the archive's pages read by.

A podcast's page lists its episodes newest first and counts them; the podcasts' cards count
each podcast's episodes and find its latest; the episodes table's facets group by episode
type and season; ``episodes_by_year`` counts each podcast's episodes per year;
``removed_episodes`` lists the episodes no longer in their feed (a partial index of those).
Without these indexes each of those reads every episode row (their show notes too): seconds
on a 300,000-episode archive, past Datasette's time limits. With them each is a walk of one
small index (``benchmarks/pages_at_scale.py``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import sqlite_utils


#: (name, "table (columns)") of each index, created if missing.
READING_INDEXES = (
    ("idx_episodes_feed_published", "episodes (feed_id, published)"),
    ("idx_episodes_episode_type", "episodes (episode_type)"),
    ("idx_episodes_season", "episodes (season)"),
    ("idx_episodes_feed_year", "episodes (feed_id, substr(published, 1, 4), duration)"),
    (
        "idx_episodes_gone",
        "episodes (coalesce(removed_from_feed_at, unlisted_at))"
        " WHERE removed_from_feed_at IS NOT NULL OR unlisted_at IS NOT NULL",
    ),
)


def _reading_indexes_v16(db: sqlite_utils.Database) -> None:
    """Issue #28: the indexes of :data:`READING_INDEXES` (no row changes)."""
    for name, on in READING_INDEXES:
        db.execute(f'CREATE INDEX IF NOT EXISTS "{name}" ON {on}')
