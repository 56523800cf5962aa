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


def _links_v17(db: sqlite_utils.Database) -> None:
    """Issue #28: :data:`LINK_URL_INDEX` (unless a run already restored it) and the per-domain
    summary (:data:`LINK_SUMMARY_TABLES`, filled from the current links, and its triggers)."""
    present = db.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'index' AND name = ?", [LINK_URL_INDEX]
    ).fetchone()
    if present is None:
        db.execute(LINK_URL_INDEX_SQL)
    _link_summary(db)


# The per-domain summary ``most_linked_domains`` reads (issue #28): that query counted, over
# every current link, the distinct (episode, URL) pairs, URLs, episodes and podcasts of each
# domain: 1.4 s at 300,000 episodes. ``link_domains`` holds those four counts per domain, kept
# exact by triggers on ``links`` with two reference counts (``link_domain_urls``: current links
# per domain and URL; ``link_domain_feeds``: per domain and podcast). A link's URL is its
# normalized URL, else its URL as written; a current link has no revision and a domain. The
# (episode, URL) pairs and episodes are checked among the episode's own current links
# (``idx_links_current``). A big first ingest drops the triggers and rebuilds the tables once at
# its end, like the lookup indexes (``Archive.deferred_link_indexes``).
LINK_SUMMARY_TABLES = ("link_domains", "link_domain_urls", "link_domain_feeds")
_URL = "coalesce({r}.normalized_url, {r}.url)"
_FEED = "(SELECT feed_id FROM episodes WHERE id = {r}.episode_id)"
_CURRENT = "{r}.revision_id IS NULL AND {r}.domain IS NOT NULL"


def _others(r: str, same_url: bool) -> str:
    """Whether another current link of the episode has this domain (and this URL)."""
    url = f" AND coalesce(l.normalized_url, l.url) = {_URL.format(r=r)}" if same_url else ""
    return (
        f"EXISTS (SELECT 1 FROM links l WHERE l.episode_id = {r}.episode_id "
        f"AND l.revision_id IS NULL AND l.id != {r}.id AND l.domain = {r}.domain{url})"
    )


def _add(r: str) -> str:
    url, feed = _URL.format(r=r), _FEED.format(r=r)
    return f"""
    INSERT INTO link_domains (domain, links, urls, episodes, podcasts)
      VALUES ({r}.domain, 0, 0, 0, 0) ON CONFLICT (domain) DO NOTHING;
    UPDATE link_domains SET
      links = links + NOT {_others(r, True)},
      urls = urls + NOT EXISTS (SELECT 1 FROM link_domain_urls
        WHERE domain = {r}.domain AND url = {url}),
      episodes = episodes + NOT {_others(r, False)},
      podcasts = podcasts + NOT EXISTS (SELECT 1 FROM link_domain_feeds
        WHERE domain = {r}.domain AND feed_id = coalesce({feed}, 0))
      WHERE domain = {r}.domain;
    INSERT INTO link_domain_urls (domain, url, n) VALUES ({r}.domain, {url}, 1)
      ON CONFLICT (domain, url) DO UPDATE SET n = n + 1;
    INSERT INTO link_domain_feeds (domain, feed_id, n) VALUES ({r}.domain, coalesce({feed}, 0), 1)
      ON CONFLICT (domain, feed_id) DO UPDATE SET n = n + 1;"""


def _remove(r: str) -> str:
    url, feed = _URL.format(r=r), f"coalesce({_FEED.format(r=r)}, 0)"
    return f"""
    UPDATE link_domains SET
      links = links - NOT {_others(r, True)},
      urls = urls - coalesce((SELECT n = 1 FROM link_domain_urls
        WHERE domain = {r}.domain AND url = {url}), 0),
      episodes = episodes - NOT {_others(r, False)},
      podcasts = podcasts - coalesce((SELECT n = 1 FROM link_domain_feeds
        WHERE domain = {r}.domain AND feed_id = {feed}), 0)
      WHERE domain = {r}.domain;
    UPDATE link_domain_urls SET n = n - 1 WHERE domain = {r}.domain AND url = {url};
    DELETE FROM link_domain_urls WHERE domain = {r}.domain AND url = {url} AND n <= 0;
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

_CURRENT_LINKS = (
    "FROM links l JOIN episodes e ON e.id = l.episode_id "
    "WHERE l.revision_id IS NULL AND l.domain IS NOT NULL"
)
#: The summary from the links themselves: the migration's fill, and a deferred ingest's end.
REBUILD_LINK_SUMMARY = (
    "DELETE FROM link_domains",
    "DELETE FROM link_domain_urls",
    "DELETE FROM link_domain_feeds",
    "INSERT INTO link_domain_urls (domain, url, n) SELECT l.domain, "
    f"coalesce(l.normalized_url, l.url), count(*) {_CURRENT_LINKS} GROUP BY 1, 2",
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
    db.execute(
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
