"""The pages that make the archive read like one (issue #28): a podcast's page, the podcasts as
cards, the archive's size and health on the index, and the few columns the episodes table
opens with.

Each page is read by an ``async`` function over a Datasette database (a few indexed queries:
they answer in milliseconds on a 300,000-episode archive, see ``benchmarks/pages_at_scale.py``)
and shaped by plain functions (:func:`excerpt`, :func:`podcast_view`, :func:`card`), which the
templates in ``datasette/templates`` show. Text is escaped by the templates; a podcast's
description, HTML as published, is sanitised by nh3 as show notes are (the ``archive_notes``
filter).

Artwork (#28): a podcast's artwork and an episode's image are shown from the archive
(``/-/media/…``) when the media folder is served and a copy is kept (:func:`archived_images`),
else from the publisher's URL (without a referrer).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from podarchive.core.errors import PodarchiveError
from podarchive.rules.media import IMAGE_EXTENSIONS
from podarchive.store.media_files import MediaFolder
from podarchive.web.episode_view import MediaUrl, hms, http_href
from podarchive.web.shard_search import fts_phrases

#: Episodes a podcast's page lists at a time.
PAGE_SIZE = 50
#: The episodes table's default columns, in order; every other one is a click away
#: (``?_wide=1``, or ``_col=``/``_nocol=`` as Datasette reads them).
EPISODE_COLUMNS = ("title", "feed_id", "published", "duration", "notes_text")
#: The flag that shows every column of the episodes table.
WIDE = "_wide"

FEED_SQL = """
select
  feeds.*,
  (select min(fetches.started_at) from fetches
     where fetches.feed_id = feeds.id and fetches.kind = 'feed'
       and fetches.started_at > coalesce(feeds.last_success_at, '')
       and feeds.error_count > 0) as failing_since
from feeds where feeds.id = :id
"""
FEED_COUNTS_SQL = """
select
  count(*) as episodes,
  sum(duration) as seconds,
  min(nullif(published, '')) as first_published,
  max(nullif(published, '')) as last_published,
  sum(removed_from_feed_at is not null or unlisted_at is not null) as gone
from episodes where feed_id = :id
"""
MOVES_SQL = """
select old_url, new_url, reason, moved_at from feed_moves where feed_id = :id
order by moved_at desc, id desc limit 5
"""
EPISODES_SQL = """
select id, title, published, duration, episode_type, season, number,
  substr(coalesce(nullif(notes_text, ''), nullif(summary, ''), page_notes_text), 1, 400) as notes
from episodes where feed_id = :id
order by published desc, id desc
limit :limit offset :offset
"""
SEARCH_SQL = """
select episodes.id, episodes.title, episodes.published, episodes.duration,
  episodes.episode_type, episodes.season, episodes.number,
  snippet(episodes_fts, -1, '«', '»', '…', 24) as notes
from episodes_fts join episodes on episodes.id = episodes_fts.rowid
where episodes_fts match :q and episodes.feed_id = :id
order by episodes_fts.rank, episodes.published desc, episodes.id
limit :limit offset :offset
"""
CARDS_SQL = """
select feeds.id, coalesce(feeds.title, feeds.name, feeds.url) as title, feeds.author,
  feeds.image, feeds.description, feeds.error_count, feeds.gone_at, feeds.last_success_at,
  counted.episodes, counted.last_published
from feeds left join (
  select feed_id, count(*) as episodes, max(published) as last_published
  from episodes group by feed_id
) counted on counted.feed_id = feeds.id
order by lower(coalesce(feeds.title, feeds.name, feeds.url)), feeds.id
"""
OVERVIEW_SQL = """
select
  (select count(*) from feeds) as podcasts,
  (select count(*) from episodes) as episodes,
  (select count(*) from feeds where error_count > 0 and gone_at is null) as failing,
  (select count(*) from feeds where gone_at is not null) as gone,
  (select max(last_fetched_at) from feeds) as last_fetch,
  (select max(published) from episodes) as newest,
  (select page_count * page_size from pragma_page_count(), pragma_page_size()) as bytes
"""

#: The latest archived version of each image URL asked (``:urls``, a JSON list), #28.
ARCHIVED_IMAGES_SQL = """
select i.url, i.sha256, p.ext from image_files i join media_payloads p on p.sha256 = i.sha256
where i.url in (select value from json_each(:urls))
order by i.url, i.last_seen_at, i.version
"""
EPISODE_ART_SQL = """
select episodes.image, feeds.image as podcast_image from episodes
join feeds on feeds.id = episodes.feed_id where episodes.id = :id
"""
#: The extensions of the images the pages show from the archive: raster images only.
SHOWN_IMAGES = frozenset(IMAGE_EXTENSIONS.values())

_TAGS = re.compile(r"<[^>]*>")
_SPACE = re.compile(r"\s+")


def excerpt(text: object, limit: int = 160) -> str:
    """The first line of ``text`` (tags dropped, spaces folded), cut at a word before
    ``limit`` characters with an ellipsis; ``""`` for no text."""
    if not isinstance(text, str):
        return ""
    lines = [line.strip() for line in _TAGS.sub(" ", text).splitlines() if line.strip()]
    first = _SPACE.sub(" ", lines[0]) if lines else ""
    if len(first) <= limit:
        return first
    cut = first[:limit].rsplit(" ", 1)[0]
    return (cut if len(cut) > limit // 2 else first[:limit]).rstrip(" ,.;:") + "…"


def date_of(published: object) -> str:
    """The date of an ISO timestamp (``2022-05-30T13:00:00Z`` → ``2022-05-30``)."""
    return published[:10] if isinstance(published, str) else ""


def episode_line(row: Mapping[str, Any], url: str) -> dict[str, Any]:
    """One line of a podcast's episode list: date, title, duration, the first line of notes
    (a search's matching passage as it is: its « » mark the words)."""
    notes = row.get("notes") or ""
    return {
        "url": url,
        "title": row.get("title") or "Untitled episode",
        "date": date_of(row.get("published")),
        "published": row.get("published") or "",
        "duration": hms(row.get("duration")) or "",
        "notes": notes if "«" in notes else excerpt(notes),
        "kind": row.get("episode_type") if row.get("episode_type") not in (None, "full") else "",
    }


def health(feed: Mapping[str, Any]) -> dict[str, Any]:
    """A podcast's health in words: ``state`` (ok, failing, gone, never) and ``says``."""
    if feed.get("gone_at"):
        return {"state": "gone", "says": f"Gone (410) since {feed['gone_at']}"}
    errors = feed.get("error_count") or 0
    if errors:
        since = feed.get("failing_since") or feed.get("last_error_at") or "?"
        failures = f"{errors} failed poll{'s' if errors != 1 else ''} in a row"
        return {"state": "failing", "says": f"Failing since {since} ({failures})"}
    if not feed.get("last_success_at"):
        return {"state": "never", "says": "Not fetched successfully yet"}
    return {"state": "ok", "says": f"Fetched fine, last at {feed.get('last_fetched_at')}"}


def podcast_view(
    feed: Mapping[str, Any],
    counts: Mapping[str, Any],
    moves: list[Mapping[str, Any]],
    lines: list[dict[str, Any]],
    *,
    page: int,
    query: str,
    archived: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """What a podcast's page shows (the template escapes text; the description goes through
    the ``archive_notes`` filter); its artwork from ``archived`` (:func:`archived_images`)
    when it is there."""
    return {
        **_about(feed, archived or {}),
        "health": health(feed),
        "moves": [dict(m) for m in moves],
        **_counted(counts),
        "lines": lines[:PAGE_SIZE],
        "page": page,
        "more": len(lines) > PAGE_SIZE,
        "query": query,
    }


def _about(feed: Mapping[str, Any], archived: Mapping[str, str]) -> dict[str, Any]:
    """A podcast's title, author, artwork, description and links, as its page shows them."""
    text = {
        name: feed.get(column) or ""
        for name, column in (
            ("description", "description"),
            ("configured_url", "url"),
            ("language", "language"),
            ("last_fetch", "last_fetched_at"),
            ("last_success", "last_success_at"),
            ("last_error", "last_error"),
        )
    }
    return {
        **text,
        "id": feed["id"],
        "title": feed.get("title") or feed.get("name") or feed.get("url") or "Untitled podcast",
        "author": feed.get("author") or feed.get("owner_name") or "",
        **artwork(feed.get("image"), archived),
        "site": http_href(feed.get("link")),
        "feed_url": http_href(feed.get("fetch_url") or feed.get("url")),
        "new_feed_url": http_href(feed.get("new_feed_url")),
    }


def _counted(counts: Mapping[str, Any]) -> dict[str, Any]:
    """A podcast's counts: episodes, hours, first and last dates, those no longer listed."""
    seconds = counts.get("seconds") or 0
    return {
        "episodes": counts.get("episodes") or 0,
        "hours": round(seconds / 3600, 1) if seconds else 0,
        "first": date_of(counts.get("first_published")),
        "last": date_of(counts.get("last_published")),
        "gone": counts.get("gone") or 0,
    }


async def read_podcast(
    db: Any,
    pk: str,
    *,
    page: int,
    query: str,
    episode_url: Callable[[object], str],
    media_url: MediaUrl | None = None,
) -> dict[str, Any] | None:
    """Podcast ``pk``'s page (see :func:`podcast_view`) from Datasette database ``db``: its
    episodes newest first, ``PAGE_SIZE`` from page ``page`` (1: the first), or those
    matching ``query`` best first; None when there is no such podcast. Its artwork is the
    archived copy when ``media_url`` serves the media folder and one is kept."""
    feed = (await db.execute(FEED_SQL, {"id": pk})).first()
    if feed is None:
        return None
    params = {"id": feed["id"], "limit": PAGE_SIZE + 1, "offset": (page - 1) * PAGE_SIZE}
    counts = (await db.execute(FEED_COUNTS_SQL, params)).first()
    moves = (await db.execute(MOVES_SQL, params)).rows
    if query.strip():
        found = (await db.execute(SEARCH_SQL, {**params, "q": fts_phrases(query)})).rows
    else:
        found = (await db.execute(EPISODES_SQL, params)).rows
    lines = [episode_line(dict(row), episode_url(row["id"])) for row in found]
    archived = await archived_images(db, [feed["image"]], media_url)
    return podcast_view(
        dict(feed), dict(counts), moves, lines, page=page, query=query, archived=archived
    )


def card(
    row: Mapping[str, Any], url: str, archived: Mapping[str, str] | None = None
) -> dict[str, Any]:
    """A podcast's card on the podcasts page (its artwork from ``archived`` when there)."""
    return {
        "url": url,
        "title": row.get("title") or "Untitled podcast",
        "author": row.get("author") or "",
        **artwork(row.get("image"), archived or {}),
        "about": excerpt(row.get("description"), 180),
        "episodes": row.get("episodes") or 0,
        "last": date_of(row.get("last_published")),
        "health": health(row),
    }


async def read_cards(
    db: Any, podcast_url: Callable[[object], str], media_url: MediaUrl | None = None
) -> list[dict[str, Any]]:
    """Every podcast of Datasette database ``db`` as a card, by title (each artwork the
    archived copy when ``media_url`` serves the media folder and one is kept)."""
    rows = [dict(row) for row in (await db.execute(CARDS_SQL)).rows]
    archived = await archived_images(db, [row["image"] for row in rows], media_url)
    return [card(row, podcast_url(row["id"]), archived) for row in rows]


def artwork(url: object, archived: Mapping[str, str]) -> dict[str, Any]:
    """An image as a page shows it: ``image``, the archived copy's URL when ``archived``
    (:func:`archived_images`) has one, else the publisher's web URL (None: none), and
    ``image_archived``."""
    kept = archived.get(url) if isinstance(url, str) else None
    return {"image": kept or http_href(url), "image_archived": kept is not None}


async def archived_images(
    db: Any, urls: Iterable[object], media_url: MediaUrl | None
) -> dict[str, str]:
    """Image URL → the served URL of its latest archived copy, for those of ``urls`` kept as
    raster images (:data:`SHOWN_IMAGES`); none when the media folder is not served
    (``media_url`` None) or the archive keeps no images (before migration 17)."""
    wanted = sorted({url for url in urls if isinstance(url, str) and url})
    if media_url is None or not wanted or "image_files" not in await db.table_names():
        return {}
    found: dict[str, str] = {}
    for row in (await db.execute(ARCHIVED_IMAGES_SQL, {"urls": json.dumps(wanted)})).rows:
        url, sha256, ext = row["url"], row["sha256"], row["ext"] or ""
        if ext not in SHOWN_IMAGES:
            found.pop(url, None)  # the latest version is not one a page shows
            continue
        try:
            found[url] = media_url(MediaFolder("").path_of(sha256, ext).as_posix())
        except PodarchiveError:
            found.pop(url, None)
    return found


async def episode_artwork(db: Any, pk: object, media_url: MediaUrl | None) -> dict[str, Any]:
    """An episode's image for its page (its own, else its podcast's artwork), the archived
    copy when kept (see :func:`artwork`); ``image`` None when it has none."""
    row = (await db.execute(EPISODE_ART_SQL, {"id": pk})).first()
    if row is None:
        return artwork(None, {})
    url = next((u for u in (row["image"], row["podcast_image"]) if http_href(u)), None)
    return artwork(url, await archived_images(db, [url], media_url))


async def read_overview(db: Any) -> dict[str, Any] | None:
    """The archive's size and health (podcasts, episodes, failing and gone feeds, the last
    fetch, the newest episode); None for a database without podcasts (a cross-shard one)."""
    names = set(await db.table_names())
    if not {"feeds", "episodes"} <= names:
        return None
    row = dict((await db.execute(OVERVIEW_SQL)).first())
    return {**row, "newest": date_of(row.get("newest"))}


def default_columns(names: list[str], args: Mapping[str, Any]) -> list[str]:
    """The episodes table's columns shown: :data:`EPISODE_COLUMNS` unless the reader asked
    for others (``_col`` beyond them, ``_nocol``) or for every one (:data:`WIDE`)."""
    if WIDE in args or "_nocol" in args:
        return names
    asked = args.getlist("_col") if hasattr(args, "getlist") else [args.get("_col") or ""]
    if "_col" in args and set(asked) - set(EPISODE_COLUMNS):
        return names  # columns the reader chose
    return [name for name in EPISODE_COLUMNS if name in names] or names


#: A canned query's parameters as its form labels them.
PARAMETERS = {"q": "Words", "target": "URL or domain"}


def query_columns(columns: list[str]) -> list[tuple[int, str]]:
    """The columns a canned query's page shows, each with its index: not the ids (they make
    the links; the JSON and CSV keep them), nor ``media_link`` when ``start`` links to the
    moment itself."""
    timed = "start" in columns
    return [
        (i, name)
        for i, name in enumerate(columns)
        if not (name == "id" or name.endswith("_id") or (timed and name == "media_link"))
    ]


def sentences(text: str) -> tuple[str, str]:
    """``text``'s first sentence, and the rest."""
    head, dot, rest = text.partition(". ")
    return (head + "." if dot else head), rest.strip()
