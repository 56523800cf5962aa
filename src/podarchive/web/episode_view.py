"""An episode's page in two steps: what it reads, then what it shows.

* The query step, :func:`read_episode`: the episode's row (with its podcast's name and link)
  and its related rows, read-only, as a plain :class:`EpisodeRows`; a table the database lacks
  gives no rows.
* The rendering step, :func:`episode_page`: from an :class:`EpisodeRows`, the dictionary the
  ``row.html`` template shows as ``archive_episode``: links (one per URL, with the notes they
  are in), people, chapters (one per start and title), the first readable transcript's
  segments, revisions, the archived copies of its media (each version's size, SHA-256,
  dates, last audit, and the URL of the local file when the media folder is served), and the
  URLs and dates around them. It reads no database.

Also the two value formats the pages share: :func:`hms` and :func:`http_href`.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from podarchive.core.errors import PodarchiveError
from podarchive.core.mediatype import parse_content_type
from podarchive.core.types import LOW_CONFIDENCE
from podarchive.core.urls import is_http_url
from podarchive.read.transcript_formats import format_timestamp, media_link
from podarchive.store.media_files import MediaFolder

#: Transcript segments shown on an episode's page; the rest are a link away.
SEGMENTS_SHOWN = 1000
#: An episode's columns its page shows in their own places, not among "all fields".
EPISODE_SHOWN = frozenset(
    {"id", "title", "notes_html", "notes_text", "page_notes_html", "page_notes_text"}
)

#: A row's URL on the page's database: (table, primary key) → URL.
RowUrl = Callable[[str, object], str]
#: A stored payload's URL on the server, from its path in the media folder (``ab/cd/….mp3``).
MediaUrl = Callable[[str], str]

EPISODE_SQL = (
    "select episodes.*, coalesce(feeds.title, feeds.name, feeds.url) as podcast, "
    "feeds.link as podcast_link from episodes join feeds on feeds.id = episodes.feed_id "
    "where episodes.id = :id"
)
#: The related rows: table → its query, of the episode's ``:id``.
RELATED_SQL = {
    "links": "select source, url, normalized_url, domain, text from links "
    "where episode_id = :id and revision_id is null order by source, position",
    "persons": 'select name, role, "group", href from persons where episode_id = :id order by name',
    "chapters": 'select start, "end", title, url, source from chapters '
    "where episode_id = :id and revision_id is null "
    "order by start, source = 'psc', chapter_file_id, position",
    "transcripts": "select id, url, format, language, status, items, rel from transcripts "
    "where episode_id = :id order by status = 'ok' and items > 0 desc, format = 'page', "
    "position",
    "episode_revisions": "select id, source, seen_from, seen_until, changed, title "
    "from episode_revisions where episode_id = :id order by seen_until desc, id desc",
    "episode_media": "select m.id, m.url, m.version, m.sha256, m.first_seen_at, "
    "m.last_seen_at, p.size, p.content_type, p.ext, p.last_audit_at, p.last_audit "
    "from episode_media m join media_payloads p on p.sha256 = m.sha256 "
    "where m.episode_id = :id order by m.url, m.version",
}
SEGMENTS_SQL = (
    "select start, speaker, text from transcript_segments "
    "where transcript_id = :transcript and revision_id is null order by position "
    "limit :limit"
)


@dataclass(frozen=True, slots=True)
class EpisodeRows:
    """What an episode's page reads: each row a plain dictionary of its columns."""

    episode: dict[str, Any]  # episodes.*, with ``podcast`` and ``podcast_link``
    links: list[dict[str, Any]]
    persons: list[dict[str, Any]]
    chapters: list[dict[str, Any]]
    transcripts: list[dict[str, Any]]  # the first one shown, when it has items
    segments: list[dict[str, Any]]  # the shown transcript's, at most SEGMENTS_SHOWN + 1
    revisions: list[dict[str, Any]]
    media: list[dict[str, Any]] = field(default_factory=list)  # episode_media + its payload


async def read_episode(db: Any, pk: object) -> EpisodeRows | None:
    """The rows of episode ``pk`` in Datasette database ``db``; None when there is none."""
    row = (await db.execute(EPISODE_SQL, {"id": pk})).first()
    if row is None:
        return None
    episode: dict[str, Any] = dict(row)
    names = set(await db.table_names()) | set(await db.view_names())

    async def select(table: str, sql: str, **params: Any) -> list[dict[str, Any]]:
        if table not in names:
            return []
        return [dict(r) for r in (await db.execute(sql, {"id": episode["id"], **params})).rows]

    related = {table: await select(table, sql) for table, sql in RELATED_SQL.items()}
    transcripts = related["transcripts"]
    segments = []
    if transcripts and transcripts[0]["items"]:
        limit = SEGMENTS_SHOWN + 1
        segments = await select(
            "transcript_segments", SEGMENTS_SQL, transcript=transcripts[0]["id"], limit=limit
        )
    return EpisodeRows(
        episode=episode,
        links=related["links"],
        persons=related["persons"],
        chapters=related["chapters"],
        transcripts=transcripts,
        segments=segments,
        revisions=related["episode_revisions"],
        media=related["episode_media"],
    )


def episode_page(
    rows: EpisodeRows, row_url: RowUrl, segments_url: str, media_url: MediaUrl | None = None
) -> dict[str, Any]:
    """What the page shows of ``rows``: the episode's columns and, added, its URLs (each row's
    by ``row_url``), date, duration, notes' base URLs, links, persons, chapters, transcripts
    (the shown one's full segments at ``segments_url``, the transcript segments table's URL),
    segments, revisions and the archived media (``media_url``: where the server serves a
    file of the media folder; None when it serves none)."""
    episode = dict(rows.episode)
    enclosure = http_href(episode.get("enclosure_url"))
    episode.update(_header(episode, enclosure, row_url))
    episode["links"] = _merged_links(rows.links)
    episode["persons"] = [{**person, "href": http_href(person["href"])} for person in rows.persons]
    episode["chapters"] = _chapters(rows.chapters, enclosure)
    episode.update(_transcript(rows, enclosure, segments_url))
    episode["revisions"] = [
        {**r, "url": row_url("episode_revisions", r["id"])} for r in rows.revisions
    ]
    episode["media"] = [_archived(m, row_url, media_url) for m in rows.media]
    episode["shown_columns"] = EPISODE_SHOWN
    return episode


def _archived(
    version: dict[str, Any], row_url: RowUrl, media_url: MediaUrl | None
) -> dict[str, Any]:
    """A stored version of the episode's media: its row, the publisher's URL as a link
    (``url_href``), the payload's page, the player to show (``video`` for a video type, else
    ``audio``) and the local file's URL (``src``; None when the folder is not served)."""
    kind, _ = parse_content_type(version.get("content_type"))
    return {
        **version,
        "url_href": http_href(version.get("url")),
        "payload_url": row_url("media_payloads", version["sha256"]),
        "player": "video" if kind.startswith("video/") else "audio",
        "src": _local_src(version, media_url),
    }


def _local_src(version: dict[str, Any], media_url: MediaUrl | None) -> str | None:
    """The served URL of a version's file, if the folder is served and its name is sound."""
    if media_url is None:
        return None
    try:
        path = MediaFolder("").path_of(str(version["sha256"]), str(version.get("ext") or ""))
    except PodarchiveError:
        return None
    return media_url(path.as_posix())


def _header(episode: dict[str, Any], enclosure: str | None, row_url: RowUrl) -> dict[str, Any]:
    """The episode's URLs, date, duration, and the base URLs of its notes."""
    published = episode.get("published") or ""
    link, page_url = http_href(episode.get("link")), http_href(episode.get("page_url"))
    return {
        "link_href": link,
        "page_href": page_url,
        "enclosure_href": enclosure,
        "url": row_url("episodes", episode["id"]),
        "podcast_url": row_url("feeds", episode["feed_id"]),
        "date": published[:10] or None,
        "duration_hms": hms(episode.get("duration")),
        "notes_base": link or page_url or http_href(episode["podcast_link"]),
        "page_notes_base": page_url or link,
        "same_notes": _words(episode.get("notes_text")) == _words(episode.get("page_notes_text")),
        "low_confidence": LOW_CONFIDENCE,
    }


def _merged_links(found: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The http(s) links, one per (normalised) URL: its ``sources`` (the notes it is in, in
    order) and the first text any of them gives it."""
    links: dict[str, dict[str, Any]] = {}
    for link in found:
        if http_href(link["url"]) is None:
            continue
        same = links.setdefault(link["normalized_url"] or link["url"], {**link, "sources": []})
        if link["source"] not in same["sources"]:
            same["sources"].append(link["source"])
        same["text"] = same["text"] or link["text"]
    return list(links.values())


def _chapters(found: list[dict[str, Any]], enclosure: str | None) -> list[dict[str, Any]]:
    """The chapters, one per start (whole seconds) and title, the first of each kept."""
    chapters: dict[tuple[Any, Any], dict[str, Any]] = {}
    for chapter in found:
        start = chapter["start"]
        key = int(start) if isinstance(start, int | float) and math.isfinite(start) else start
        chapters.setdefault(
            (key, chapter["title"]),
            {**chapter, "url": http_href(chapter["url"]), **_timed(start, enclosure)},
        )
    return list(chapters.values())


def _transcript(rows: EpisodeRows, enclosure: str | None, segments_url: str) -> dict[str, Any]:
    """The transcripts, the shown one (the first, when it has items; with the URL of all its
    segments), its first :data:`SEGMENTS_SHOWN` segments, and whether it has more."""
    transcripts = [dict(t) for t in rows.transcripts]
    shown = transcripts[0] if transcripts and transcripts[0]["items"] else None
    if shown is not None:
        shown["segments_url"] = f"{segments_url}?transcript_id={shown['id']}&revision_id__isnull=1"
    return {
        "transcripts": transcripts,
        "transcript": shown,
        "segments": [
            {**s, **_timed(s["start"], enclosure)} for s in rows.segments[:SEGMENTS_SHOWN]
        ],
        "more_segments": len(rows.segments) > SEGMENTS_SHOWN,
    }


def _timed(start: object, enclosure: str | None) -> dict[str, Any]:
    """A chapter's or segment's start as ``h:mm:ss`` and as a link into the episode's media."""
    shown = hms(start)
    at = float(start) if shown is not None and isinstance(start, int | float) else None
    return {
        "start_hms": shown,
        "media": media_link(enclosure, at) if enclosure and at is not None else None,
    }


def hms(seconds: object) -> str | None:
    """``h:mm:ss`` of a number of seconds (1188 → ``0:19:48``); None for anything else."""
    if isinstance(seconds, bool) or not isinstance(seconds, int | float | str):
        return None
    try:
        value = float(seconds)
    except ValueError:
        return None
    if not math.isfinite(value) or value < 0 or value >= 1e9:
        return None
    return format_timestamp(value)


def http_href(url: object) -> str | None:
    """``url`` when it is an absolute http(s) URL (safe in an href), else None."""
    return url.strip() if isinstance(url, str) and is_http_url(url) else None


def _words(text: object) -> str:
    return " ".join(str(text).split()) if text else ""
