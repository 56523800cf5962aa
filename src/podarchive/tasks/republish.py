"""Republishing (``podarchive republish``, and ``serve``'s ``feed.xml``): an archived podcast
as a feed a podcast app can subscribe to again, after the original died or changed.

Every episode the archive ever had is listed, the ones the feed no longer lists marked. An
enclosure points at the archived copy when the media is kept and there is somewhere it is
published (``media_url``: ``--media-base``, or the server's ``/-/media/``), else at the
original URL; transcripts and chapters at their archived bodies when ``document_url`` says
where those are served, else at their original URLs. Only http(s) URLs are written.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from podarchive.core.types import Row
from podarchive.core.urls import is_http_url
from podarchive.formats.feeds import EpisodeItem, PodcastFeed, podcast_rss
from podarchive.store import PAGE_FORMAT, ArchiveReader
from podarchive.tasks.changes import find_podcast, write_atomically

MediaUrl = Callable[[str, str], str]  # (sha256, extension) → where the payload is published
DocumentUrl = Callable[[str], str]  # SHA-256 of an archived body → where it is served


def media_path(sha256: str, ext: str) -> str:
    """A payload's path in the media folder (and under ``/-/media/``)."""
    return f"{sha256[:2]}/{sha256[2:4]}/{sha256}{ext}"


def media_base_url(base: str) -> MediaUrl:
    """``--media-base URL``: the media folder published at ``URL``."""
    return lambda sha256, ext: f"{base.rstrip('/')}/{media_path(sha256, ext)}"


def _http(url: object) -> str | None:
    return url if isinstance(url, str) and is_http_url(url) else None


def _categories(value: object) -> list[str]:
    try:
        parsed = json.loads(value) if isinstance(value, str) else []
    except ValueError:
        return []
    return [c for c in parsed if isinstance(c, str)] if isinstance(parsed, list) else []


def _enclosure(
    episode: Row, media_url: MediaUrl | None
) -> tuple[tuple[str, int, str] | None, str | None]:
    """(the enclosure to list, the original URL when the listed one is the archived copy)."""
    original = _http(episode.get("enclosure_url"))
    kind = str(episode.get("enclosure_type") or "application/octet-stream")
    sha = episode.get("media_sha256")
    if sha and media_url is not None:
        copy = media_url(str(sha), str(episode.get("media_ext") or ""))
        size = int(episode.get("media_size") or 0)
        return (copy, size, str(episode.get("media_type") or kind)), original
    if original is None:
        return None, None
    return (original, int(episode.get("enclosure_length") or 0), kind), None


def _file_url(file: Mapping[str, Any], document_url: DocumentUrl | None) -> str | None:
    if document_url is not None and file.get("document_hash"):
        return document_url(str(file["document_hash"]))
    return _http(file.get("url"))


def _item(
    episode: Row, media_url: MediaUrl | None, document_url: DocumentUrl | None
) -> EpisodeItem:
    enclosure, original = _enclosure(episode, media_url)
    transcripts = [
        {**{k: t.get(k) for k in ("type", "language", "rel")}, "url": url}
        for t in episode.get("transcript_files", ())
        if t.get("format") != PAGE_FORMAT and (url := _file_url(t, document_url))
    ]
    chapters = next(
        (
            (url, str(c.get("type") or "application/json+chapters"))
            for c in episode.get("chapter_files", ())
            if (url := _file_url(c, document_url))
        ),
        None,
    )
    explicit = episode.get("explicit")
    return EpisodeItem(
        guid=str(episode.get("guid") or episode["key"]),
        title=episode.get("title"),
        link=_http(episode.get("link")),
        published=episode.get("published"),
        notes_html=episode.get("notes_html"),
        enclosure=enclosure,
        duration=episode.get("duration"),
        season=episode.get("season"),
        number=episode.get("number"),
        episode_type=episode.get("episode_type"),
        explicit=None if explicit is None else bool(explicit),
        image=_http(episode.get("image")),
        transcripts=transcripts,
        chapters=chapters,
        removed_at=episode.get("removed_from_feed_at"),
        unlisted_at=episode.get("unlisted_at"),
        original_enclosure=original,
    )


def podcast_feed(
    archive: ArchiveReader,
    feed_id: int,
    *,
    media_url: MediaUrl | None = None,
    document_url: DocumentUrl | None = None,
    self_url: str | None = None,
) -> PodcastFeed:
    """The archived podcast ``feed_id`` as a feed to write."""
    found = archive.podcast_rows(feed_id)
    if found is None:
        raise LookupError(feed_id)
    feed, episodes = found
    title = str(feed.get("title") or feed.get("name") or feed["url"])
    explicit = feed.get("explicit")
    seen = [e.get("version_seen_at") or e.get("first_seen_at") for e in episodes]
    return PodcastFeed(
        title=title,
        link=_http(feed.get("link")) or str(feed["url"]),
        description=str(feed.get("description") or f"{title}, as archived by podarchive"),
        self_url=self_url,
        language=feed.get("language"),
        author=feed.get("author"),
        image=_http(feed.get("image")),
        explicit=None if explicit is None else bool(explicit),
        podcast_type=feed.get("type"),
        podcast_guid=feed.get("podcast_guid"),
        categories=_categories(feed.get("categories")),
        original_url=str(feed["url"]),
        updated=max([s for s in seen if s] + [feed.get("last_success_at") or ""]) or None,
        episodes=[_item(e, media_url, document_url) for e in episodes],
    )


@dataclass(frozen=True, slots=True)
class Republished:
    """What ``podarchive republish`` wrote: the podcast, how many episodes, how many of them
    the feed no longer lists, and how many point at an archived copy of their media."""

    title: str
    episodes: int
    removed: int
    archived_media: int


def republish(
    db_path: Path,
    podcast: str,
    out: Path | None,
    *,
    media_base: str | None = None,
    base_url: str | None = None,
    write: Callable[[bytes], object] | None = None,
) -> Republished:
    """``podarchive republish``: the podcast ``podcast`` names as RSS into ``out`` (atomically)
    or given to ``write``. ``base_url``: a ``podarchive serve`` that serves this archive (its
    ``/-/media/`` and archived transcripts and chapters); ``media_base`` overrides where the
    media folder is published."""
    database = db_path.stem
    base = base_url.rstrip("/") if base_url else None
    media = media_base or (f"{base}/-/media" if base else None)
    with ArchiveReader.open_to_read(db_path) as archive:
        feed_id = find_podcast(archive, podcast)
        feed = podcast_feed(
            archive,
            feed_id,
            media_url=media_base_url(media) if media else None,
            document_url=(lambda h: f"{base}/{database}/-/documents/{h}") if base else None,
            self_url=f"{base}/{database}/-/podcasts/{feed_id}/feed.xml" if base else None,
        )
    data = podcast_rss(feed)
    if write is not None:
        write(data)
    elif out is not None:
        write_atomically(out, data)
    return Republished(
        feed.title,
        len(feed.episodes),
        sum(1 for e in feed.episodes if e.removed_at or e.unlisted_at),
        sum(1 for e in feed.episodes if e.original_enclosure),
    )
