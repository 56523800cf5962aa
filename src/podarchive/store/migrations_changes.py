"""Migration v19 (issue #28): the indexes the change feed reads by, in time order.

The change feed's latest page and the page after a reader's cursor read each history table by
its time column, newest (or oldest) first, ``LIMIT`` the page's size
(:mod:`podarchive.store.change_reads`): the time an episode was first seen, removed or
unlisted, a page body, transcript or chapters revision, a new version of the media's bytes, a
podcast's own revision. Without these indexes each of those reads is a scan of its whole
table (every episode, for the first three): a second and more on a 300,000-episode archive.
With them each reads a few rows of one index (``benchmarks/pages_at_scale.py --changes``).
Episode revisions already have theirs (``idx_episode_revisions_seen_until``); feeds and feed
moves are a row a podcast.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import sqlite_utils


#: (name, "table (columns)") of each index, created if missing.
CHANGE_INDEXES = (
    ("idx_episodes_first_seen_at", "episodes (first_seen_at)"),
    (
        "idx_episodes_removed_at",
        "episodes (removed_from_feed_at) WHERE removed_from_feed_at IS NOT NULL",
    ),
    ("idx_episodes_unlisted_at", "episodes (unlisted_at) WHERE unlisted_at IS NOT NULL"),
    ("idx_page_bodies_seen_at", "page_bodies (seen_at)"),
    ("idx_transcript_revisions_seen_until", "transcript_revisions (seen_until)"),
    ("idx_chapter_revisions_seen_until", "chapter_revisions (seen_until)"),
    ("idx_episode_media_new_bytes", "episode_media (first_seen_at) WHERE version > 1"),
    ("idx_feed_revisions_seen_until", "feed_revisions (seen_until)"),
)


def _change_indexes_v19(db: sqlite_utils.Database) -> None:
    """Issue #28: the indexes of :data:`CHANGE_INDEXES` (no row changes)."""
    for name, on in CHANGE_INDEXES:
        db.execute(f'CREATE INDEX IF NOT EXISTS "{name}" ON {on}')
