"""Several archives as one: the shards' cross-shard databases and their canned queries (#16).

Pure: names and SQL. A cross-shard database's connections ATTACH its shards read-only,
each as a schema of its name; its canned queries (:func:`cross_shard_queries`: search
episodes and show notes ranked with each shard's own full-text index, recent episodes,
links to a URL or domain, most-linked domains, failing feeds) run a part on every shard and
``union all`` them, each row naming its shard. SQLite attaches at most
:func:`sqlite_attach_limit` databases to a connection, so past that the shards are served
in groups (:func:`shard_groups`). :mod:`podarchive.web.serve` builds the server from these.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Mapping, Sequence
from typing import Any

from podarchive.core.errors import PodarchiveError

#: The cross-shard database when the shards fit in one; else ``shards-group-1``, ``-2``…
CROSS_NAME = "all-shards"
CROSS_GROUP_NAME = "shards-group-{}"
#: Names Datasette keeps for itself.
RESERVED_NAMES = frozenset({"_memory", "_internal"})


def sqlite_attach_limit() -> int:
    """How many databases this Python's SQLite attaches to one connection (its compiled
    ``SQLITE_MAX_ATTACHED``: 10 unless built otherwise)."""
    import sqlite3

    conn = sqlite3.connect(":memory:")
    try:
        return conn.getlimit(sqlite3.SQLITE_LIMIT_ATTACHED)
    finally:
        conn.close()


def shard_groups(names: Sequence[str], limit: int | None = None) -> list[tuple[str, list[str]]]:
    """The cross-shard databases: (name, the shards it attaches). One, :data:`CROSS_NAME`,
    when the shards fit in one connection (``limit``, default :func:`sqlite_attach_limit`);
    else consecutive groups of ``limit`` shards, ``shards-group-1``, ``shards-group-2``…"""
    size = limit if limit is not None else sqlite_attach_limit()
    if size < 1:
        raise PodarchiveError(f"cannot attach {size} databases to a connection")
    if len(names) <= size:
        return [(CROSS_NAME, list(names))]
    chunks = [list(names[i : i + size]) for i in range(0, len(names), size)]
    return [(CROSS_GROUP_NAME.format(i), chunk) for i, chunk in enumerate(chunks, 1)]


def metadata_for_shards(
    packaged: Mapping[str, Any], names: Sequence[str], groups: Sequence[tuple[str, Sequence[str]]]
) -> dict[str, Any]:
    """``packaged`` (podarchive's metadata for one archive) with one database entry per shard
    (the archive's) and one per cross-shard database: its title, description and
    :func:`cross_shard_queries`."""
    metadata: dict[str, Any] = copy.deepcopy(dict(packaged))
    archive = metadata["databases"].pop("archive")
    count = len(names)
    metadata["description"] = (
        f"An archive of podcasts kept in {count} shard{'s' if count != 1 else ''}: feeds, "
        "episodes, show notes and every link in them, transcripts and chapters, with the "
        "history of what each podcast changed or took down. Search every shard at once "
        "first; each shard is also its own database with its tables and queries."
    )
    databases: dict[str, Any] = {}
    for i, (group, members) in enumerate(groups, 1):
        part = "" if len(groups) == 1 else f" (part {i} of {len(groups)})"
        databases[group] = {
            "title": f"Search every shard{part}",
            "description": (
                f"Search and browse {len(members)} shard{'s' if len(members) != 1 else ''} at "
                f"once: {', '.join(members)}. Each result names its shard and links to the "
                "episode's page there. Custom SQL sees each shard as a schema: "
                f'select * from "{members[0]}".episodes.'
                + (
                    ""
                    if len(groups) == 1
                    else f" SQLite attaches at most {len(members)} databases to one "
                    "connection, so the shards are searched in groups."
                )
            ),
            "queries": cross_shard_queries(members, archive.get("queries", {})),
        }
    for name in names:
        databases[name] = {**copy.deepcopy(archive), "title": f"Podcast archive: {name}"}
    metadata["databases"] = databases
    return metadata


def _identifier(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


#: A search box's words and "quoted phrases" (an unclosed quote ends at the end of the text).
_PHRASES = re.compile(r'"([^"]*)"?|([^\s"]+)')


def fts_phrases(text: str) -> str:
    """What a reader typed in a table's search box as an FTS5 query that always parses:
    each word and each "quoted phrase" one phrase, all required (Datasette's
    ``escape_fts``, which turns a lone ``"`` or a blank search into a syntax error). With
    nothing to search for it is ``""``, which matches nothing."""
    found = (phrase or word for phrase, word in _PHRASES.findall(text.replace("\0", " ")))
    return " ".join(f'"{part}"' for part in found if part.strip()) or '""'


#: The words of ``:q`` as an FTS5 query of phrases (as the archive's own search queries).
_MATCH = """'"' || replace(replace(trim(:q), '"', '""'), ' ', '" "') || '"'"""
_HMS = """case when duration >= 0 and duration < 1e9
    then printf('%d:%02d:%02d', cast(duration as integer) / 3600,
      cast(duration as integer) % 3600 / 60, cast(duration as integer) % 60)
  end"""

#: Each cross-shard query: title, description, the part run on each shard (``{db}``: its
#: schema; ``{shard}``: its name as a string), and what is done with their union (``parts``).
_CROSS_QUERIES: dict[str, tuple[str, str, str, str]] = {
    "search_episodes": (
        "Search episodes and show notes in every shard",
        "Episodes whose title or show notes (feed and page) contain every word of q, "
        "across the shards, best matches first (each shard ranks its own: BM25 over its "
        "episodes), with the matching passage; the first 100 per shard.",
        f"""select * from (
  select
    {{shard}} as shard,
    e.title as episode,
    coalesce(f.title, f.name, f.url) as podcast,
    e.published,
    e.duration,
    snippet(x.episodes_fts, -1, '«', '»', '…', 24) as passage,
    x.rank as rank,
    e.id as episode_id,
    e.feed_id
  from {{db}}.episodes_fts x
    join {{db}}.episodes e on e.id = x.rowid
    join {{db}}.feeds f on f.id = e.feed_id
  where x.episodes_fts match {_MATCH}
  order by x.rank, e.published desc, e.id
  limit 100
)""",
        f"""with parts as (
{{parts}}
)
select
  shard, episode, podcast, published, {_HMS} as duration, passage, episode_id, feed_id
from parts
order by rank, published desc, shard, episode_id
limit 100""",
    ),
    "recent_episodes": (
        "Recent episodes in every shard",
        "The 200 episodes published last, across the shards.",
        """select * from (
  select
    {shard} as shard,
    e.title as episode,
    coalesce(f.title, f.name, f.url) as podcast,
    e.published,
    e.duration,
    e.id as episode_id,
    e.feed_id
  from {db}.episodes e
    join {db}.feeds f on f.id = e.feed_id
  where e.published is not null
  order by e.published desc, e.id desc
  limit 200
)""",
        f"""with parts as (
{{parts}}
)
select shard, episode, podcast, published, {_HMS} as duration, episode_id, feed_id
from parts
order by published desc, shard, episode_id desc
limit 200""",
    ),
    "episodes_linking_to": (
        "Episodes linking to a URL or domain, in every shard",
        "Episodes whose current show notes link to target: a domain (and its subdomains; "
        "www. ignored) or the start of a URL; newest first, with the first such link and "
        "how many distinct ones.",
        # each shard answers with the archive's own query (its indexes, its walk by date)
        """select {shard} as shard, q.* from (
{archive}
) q""",
        """with parts as (
{parts}
)
select shard, episode, podcast, published, links, sources, url, text, episode_id, feed_id
from parts
order by published desc, shard, episode_id desc
limit 1000""",
    ),
    "most_linked_domains": (
        "Most-linked domains in every shard",
        "The domains the current show notes link to most, across the shards: links (one "
        "per URL per episode), distinct URLs, episodes, podcasts and shards.",
        # each shard's link summary (migration v20); a URL linked in two shards is counted
        # once, by the top domains' own URLs
        """select {shard} as shard, d.domain, d.links, d.episodes, d.podcasts
  from {db}.link_domains d""",
        """with parts as (
{parts}
),
top as (
  select
    domain, sum(links) as links, sum(episodes) as episodes, sum(podcasts) as podcasts,
    count(*) as shards
  from parts
  group by domain
  order by links desc, episodes desc, domain
  limit 500
)
select
  domain,
  links,
  (select count(distinct url) from (
{urls}
  )) as urls,
  episodes,
  podcasts,
  shards
from top
order by links desc, episodes desc, domain""",
    ),
    "failing_feeds": (
        "Failing feeds in every shard",
        "Feeds whose latest polls failed, across the shards: how many in a row, the last "
        "error, since when (the first failed request after the last success) and when the "
        "next poll is due.",
        """select
    {shard} as shard,
    coalesce(f.name, f.title, f.url) as feed,
    f.error_count as failures,
    f.last_error,
    f.last_status,
    (select min(fetches.started_at) from {db}.fetches fetches
       where fetches.feed_id = f.id and fetches.kind = 'feed'
         and fetches.started_at > coalesce(f.last_success_at, '')) as failing_since,
    f.last_error_at,
    f.last_success_at,
    f.gone_at,
    f.next_due_at,
    coalesce(f.fetch_url, f.url) as url,
    f.id as feed_id
  from {db}.feeds f
  where f.error_count > 0""",
        """with parts as (
{parts}
)
select * from parts
order by failures desc, failing_since, shard, feed_id""",
    ),
}


#: A domain's URLs in each shard, for the top domains of ``most_linked_domains``.
_DOMAIN_URLS = (
    "select coalesce(normalized_url, url) as url from {db}.links"
    " where domain = top.domain and revision_id is null"
)
#: The archive's tables a query of one archive names: in a cross-shard part, the shard's.
_TABLES = re.compile(r"\b(from|join)\s+(links|episodes|feeds)\b", re.IGNORECASE)


def in_shard(sql: str) -> str:
    """A query of one archive (``from links``, ``join episodes``…) as a part template that
    reads the shard's tables (``{db}``), its own braces kept."""
    escaped = sql.replace("{", "{{").replace("}", "}}")
    return _TABLES.sub(lambda m: f"{m[1]} {{db}}.{m[2]}", escaped)


def cross_shard_queries(
    shards: Sequence[str], archive: Mapping[str, Mapping[str, Any]]
) -> dict[str, dict[str, Any]]:
    """The canned queries of a cross-shard database whose connections attach ``shards``
    (each as a schema of its name): each query's part on every shard, ``union all``.
    ``archive``: the archive's own canned queries, which some parts run as they are."""
    queries = {}
    for name, (title, description, part, whole) in _CROSS_QUERIES.items():
        own = archive.get(name, {}).get("sql", "")
        template = part.replace("{archive}", in_shard(own)) if "{archive}" in part else part
        queries[name] = {
            "title": title,
            "description": description,
            "sql": whole.format(
                parts=_union(template, shards),
                urls=_union(_DOMAIN_URLS, shards, "    ") if "{urls}" in whole else "",
            ),
            "hide_sql": True,
        }
    return queries


def _union(template: str, shards: Sequence[str], indent: str = "  ") -> str:
    """``template`` on every shard, ``union all``."""
    return f"\n{indent}union all\n".join(
        indent + template.format(db=_identifier(shard), shard=_literal(shard)) for shard in shards
    )
