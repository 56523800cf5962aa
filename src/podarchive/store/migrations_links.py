"""Migration v20 (issue #28): what the two link queries read instead of every link.

``episodes_linking_to`` matches its target as a domain (exactly, or as a parent domain), or as
the start of a link's normalized URL or of its URL as written. The first three have indexes
(``idx_links_domain``, ``idx_links_normalized_url``); the URL as written had none, so every
question read every link: 0.4 s on a 300,000-episode archive (``benchmarks/pages_at_scale.py``).
:data:`LINK_URL_INDEX` holds only the links whose URL as written is not their normalized URL (an
upper-case host, a fragment, tracking parameters): a URL that starts with the target and equals
its normalized URL is found by the normalized URL's index. It is one of the links' lookup
indexes (``schema.LOOKUP_INDEXES``): a big first ingest drops it and builds it once at its end.

``most_linked_domains`` counted four distinct things per domain over every current link (1.4 s
there); it now reads :data:`LINK_SUMMARY_TABLES`' ``link_domains``, kept by triggers.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import sqlite_utils


LINK_URL_INDEX = "idx_links_url_written"
LINK_URL_INDEX_SQL = (
    f'CREATE INDEX "{LINK_URL_INDEX}"\n    ON "links" ("url")'
    "\n    WHERE normalized_url IS NULL OR url != normalized_url"
)


def _links_v20(db: sqlite_utils.Database) -> None:
    """Issue #28: :data:`LINK_URL_INDEX` (unless a run already restored it) and the per-domain
    summary (:data:`LINK_SUMMARY_TABLES`, filled from the current links, and its triggers)."""
    present = db.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'index' AND name = ?", [LINK_URL_INDEX]
    ).fetchone()
    if present is None:
        db.execute(LINK_URL_INDEX_SQL)
    _link_summary(db)


# The per-domain summary ``most_linked_domains`` reads: that query counted, over every current
# link, the distinct (episode, URL) pairs, URLs, episodes and podcasts of each domain.
# ``link_domains`` holds those four counts per domain, kept exact by triggers on ``links`` with
# one reference count (``link_domain_feeds``: current links per domain and podcast). A link's
# URL is its normalized URL, else its URL as written; a current link has no revision and a
# domain. The (episode, URL) pairs and episodes are checked among the episode's own current
# links (``idx_links_current``); whether another current link of the domain has the URL, by the
# URL's lookup indexes (schema 24: until then a third table, ``link_domain_urls``, held every
# domain and URL again, 9 % of the archive). A big first ingest drops the triggers with the
# lookup indexes and rebuilds the tables once at its end (``Archive.deferred_link_indexes``);
# ``transplant`` leaves them to the destination's triggers.
LINK_SUMMARY_TABLES = ("link_domains", "link_domain_feeds")
_URL = "coalesce({r}.normalized_url, {r}.url)"
_FEED = "(SELECT feed_id FROM episodes WHERE id = {r}.episode_id)"
_CURRENT = "{r}.revision_id IS NULL AND {r}.domain IS NOT NULL"


def _same(r: str) -> str:
    """NULL if no other current link of the episode has this domain, else whether one also
    has this URL (1) or none does (0): one walk of the episode's current links (by
    ``idx_links_current``: ``+`` keeps the planner off the domain's index, which a big domain
    made a walk of all its links for every link written)."""
    return (
        f"(SELECT max(coalesce(l.normalized_url, l.url) = {_URL.format(r=r)}) FROM links l "
        f"WHERE l.episode_id = {r}.episode_id AND l.revision_id IS NULL AND l.id != {r}.id "
        f"AND +l.domain = {r}.domain)"
    )


def _other_url(r: str) -> str:
    """Whether another current link of the domain has this link's URL: by the normalized
    URL's index, else among the URLs as written that are not normalized (their index; the
    domain's index is not used: a big domain has many links, a URL few)."""
    url = _URL.format(r=r)
    rest = f"AND +l.domain = {r}.domain AND l.revision_id IS NULL AND l.id != {r}.id"
    return (
        f"(EXISTS (SELECT 1 FROM links l WHERE l.normalized_url = {url} {rest}) OR EXISTS "
        f"(SELECT 1 FROM links l WHERE l.normalized_url IS NULL AND l.url = {url} {rest}))"
    )


def _add(r: str) -> str:
    feed = f"coalesce({_FEED.format(r=r)}, 0)"
    return f"""
    INSERT INTO link_domains (domain, links, urls, episodes, podcasts)
      SELECT {r}.domain, NOT coalesce(same, 0), NOT {_other_url(r)},
        same IS NULL, NOT EXISTS (SELECT 1 FROM link_domain_feeds
          WHERE domain = {r}.domain AND feed_id = {feed})
      FROM (SELECT {_same(r)} AS same) WHERE true
      ON CONFLICT (domain) DO UPDATE SET links = links + excluded.links,
        urls = urls + excluded.urls, episodes = episodes + excluded.episodes,
        podcasts = podcasts + excluded.podcasts;
    INSERT INTO link_domain_feeds (domain, feed_id, n) VALUES ({r}.domain, {feed}, 1)
      ON CONFLICT (domain, feed_id) DO UPDATE SET n = n + 1;"""


def _remove(r: str) -> str:
    feed = f"coalesce({_FEED.format(r=r)}, 0)"
    return f"""
    UPDATE link_domains SET (links, episodes) = (
        SELECT links - NOT coalesce(same, 0), episodes - (same IS NULL)
        FROM (SELECT {_same(r)} AS same)),
      urls = urls - NOT {_other_url(r)},
      podcasts = podcasts - coalesce((SELECT n = 1 FROM link_domain_feeds
        WHERE domain = {r}.domain AND feed_id = {feed}), 0)
      WHERE domain = {r}.domain;
    UPDATE link_domain_feeds SET n = n - 1 WHERE domain = {r}.domain AND feed_id = {feed};
    DELETE FROM link_domain_feeds WHERE domain = {r}.domain AND feed_id = {feed} AND n <= 0;
    DELETE FROM link_domains WHERE domain = {r}.domain AND episodes <= 0;"""


_CHANGED = "episode_id, url, normalized_url, domain, revision_id"
#: name → CREATE TRIGGER statement of the triggers that keep the summary.
LINK_SUMMARY_TRIGGERS = {
    "links_summary_insert": f"CREATE TRIGGER links_summary_insert AFTER INSERT ON links "
    f"WHEN {_CURRENT.format(r='new')} BEGIN{_add('new')}\nEND",
    "links_summary_delete": f"CREATE TRIGGER links_summary_delete AFTER DELETE ON links "
    f"WHEN {_CURRENT.format(r='old')} BEGIN{_remove('old')}\nEND",
    "links_summary_update_old": f"CREATE TRIGGER links_summary_update_old AFTER UPDATE OF "
    f"{_CHANGED} ON links WHEN {_CURRENT.format(r='old')} BEGIN{_remove('old')}\nEND",
    "links_summary_update_new": f"CREATE TRIGGER links_summary_update_new AFTER UPDATE OF "
    f"{_CHANGED} ON links WHEN {_CURRENT.format(r='new')} BEGIN{_add('new')}\nEND",
}


@contextmanager
def summary_triggers_replaced(db: sqlite_utils.Database) -> Iterator[None]:
    """The summary's triggers dropped for the block, then created again as
    :data:`LINK_SUMMARY_TRIGGERS` defines them now: only those that were there (a deferred
    ingest's crash left them out: the next opening of the archive rebuilds them)."""
    present = {
        name
        for (name,) in db.execute(
            "SELECT name FROM sqlite_master WHERE type = 'trigger' AND name LIKE 'links_summary_%'"
        ).fetchall()
    }
    for name in present:
        db.execute(f"DROP TRIGGER {name}")
    yield
    for name, sql in LINK_SUMMARY_TRIGGERS.items():
        if name in present:
            db.execute(sql)


_CURRENT_LINKS = (
    "FROM links l JOIN episodes e ON e.id = l.episode_id "
    "WHERE l.revision_id IS NULL AND l.domain IS NOT NULL"
)
#: The summary from the links themselves: the migration's fill, and a deferred ingest's end.
REBUILD_LINK_SUMMARY = (
    "DELETE FROM link_domains",
    "DELETE FROM link_domain_feeds",
    f"INSERT INTO link_domain_feeds (domain, feed_id, n) SELECT l.domain, e.feed_id, count(*) "
    f"{_CURRENT_LINKS} GROUP BY 1, 2",
    "INSERT INTO link_domains (domain, links, urls, episodes, podcasts) SELECT l.domain, "
    "count(DISTINCT l.episode_id || ' ' || coalesce(l.normalized_url, l.url)), "
    "count(DISTINCT coalesce(l.normalized_url, l.url)), count(DISTINCT l.episode_id), "
    f"count(DISTINCT e.feed_id) {_CURRENT_LINKS} GROUP BY l.domain",
)


def _link_summary(db: sqlite_utils.Database) -> None:
    db.execute(
        "CREATE TABLE link_domains (domain TEXT PRIMARY KEY, links INTEGER NOT NULL, "
        "urls INTEGER NOT NULL, episodes INTEGER NOT NULL, podcasts INTEGER NOT NULL)"
    )
    db.execute(  # dropped by migration 24 (:mod:`.migrations_disk`)
        "CREATE TABLE link_domain_urls (domain TEXT NOT NULL, url TEXT NOT NULL, "
        "n INTEGER NOT NULL, PRIMARY KEY (domain, url))"
    )
    db.execute(
        "CREATE TABLE link_domain_feeds (domain TEXT NOT NULL, feed_id INTEGER NOT NULL, "
        "n INTEGER NOT NULL, PRIMARY KEY (domain, feed_id))"
    )
    for sql in REBUILD_LINK_SUMMARY:
        db.execute(sql)
    for sql in LINK_SUMMARY_TRIGGERS.values():
        db.execute(sql)
