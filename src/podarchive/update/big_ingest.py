"""When a run counts as big (#30), and what a big run does: the links' indexes deferred.

A first ingest of many feeds inserts their links in random URL order: every feed dirties
pages all over the links' URL and domain indexes, which the WAL then rewrites, so the store's
CPU per episode grows with the archive (about 1 ms at 100 feeds, 2.3 ms at 1,000), and the
link summary's triggers add about 0.7 ms an episode. A big run does its work inside
:meth:`~podarchive.store.Archive.deferred_link_indexes`: the indexes and the triggers are
dropped, then built once, sorted, at the run's end (also when it fails; after a crash, by
the next opening of the archive to write). Readers meanwhile get the same answers, slower.

A run is big when at least :data:`BIG_INGEST_FEEDS` of its feeds have no episode archived
yet and they are at least as many as the feeds that have one (:func:`is_big`): the end's
rebuild reads every link of the archive, so the run must bring at least as many feeds as
there were. ``run`` and the daemon decide it for the feeds they update (``import`` only
writes a schedule file: the first ``run`` after it is the big one), ``backfill`` for the
feeds it walks; a cluster worker's stream, its feeds arriving one by one, never defers.
"""

from __future__ import annotations

from collections.abc import Collection, Iterator
from contextlib import contextmanager

from podarchive.store import ArchiveLike

BIG_INGEST_FEEDS = 100  # feeds without episodes yet, at least, in a big run


def is_big(new_feeds: int, archived_feeds: int) -> bool:
    """Whether a run of ``new_feeds`` feeds without episodes yet, on an archive of
    ``archived_feeds`` feeds with episodes, defers the links' indexes."""
    return new_feeds >= BIG_INGEST_FEEDS and new_feeds >= archived_feeds


@contextmanager
def big_ingest(archive: ArchiveLike, urls: Collection[str]) -> Iterator[bool]:
    """The links' indexes deferred for the block if a run of the feeds ``urls`` is big;
    yields whether it is."""
    if len(urls) < BIG_INGEST_FEEDS or not is_big(*archive.ingest_counts(urls)):
        yield False
        return
    with archive.deferred_link_indexes():
        yield True
