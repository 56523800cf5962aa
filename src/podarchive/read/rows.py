"""Parsed feeds → archive rows. Pure: values in, values out.

The notes' text and links come from :mod:`podarchive.read.extract` (Beautiful Soup), imported
by the functions that derive them: a run's own process needs :func:`channel_row` only, and
its workers parse (#30).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import asdict
from typing import Any

from podarchive.core.identity import dedupe
from podarchive.core.types import Channel, Episode, EpisodeWrite, ParsedFeed, Row
from podarchive.core.urls import is_http_url
from podarchive.rules.policy import PodcastIdentity


def channel_row(channel: Channel) -> Row:
    """The feed's columns. Its tags are not among them: the store keeps them in ``tags``."""
    return {
        "title": channel.title,
        "link": channel.link,
        "description": channel.description,
        "author": channel.author,
        "owner_name": channel.owner_name,
        "owner_email": channel.owner_email,
        "image": channel.image,
        "language": channel.language,
        "categories": _json_list(channel.categories),
        "explicit": _bool_int(channel.explicit),
        "type": channel.type,
        "podcast_guid": channel.podcast_guid,
        "locked": _bool_int(channel.locked),
        "funding": _json_list([asdict(f) for f in channel.funding]),
        "new_feed_url": channel.new_feed_url,
        "updated": channel.updated,
        "ttl": channel.ttl,
        "update_period": channel.update_period,
        "update_frequency": channel.update_frequency,
    }


def episode_row(episode: Episode, notes_text: str | None = None) -> Row:
    """The episode's columns; ``notes_text`` when the caller already derived it."""
    from podarchive.read.extract import html_to_text  # see episode_writes

    enclosure = episode.enclosure
    notes = episode.notes_html
    if notes and notes_text is None:
        notes_text = html_to_text(notes)
    row: Row = {
        "guid": episode.guid,
        "title": episode.title,
        "published": episode.published,
        "updated": episode.updated,
        "duration": episode.duration,
        "season": episode.season,
        "number": episode.number,
        "episode_type": episode.episode_type,
        "explicit": _bool_int(episode.explicit),
        "link": episode.link,
        "summary": episode.summary,
        "notes_html": notes,
        "notes_text": notes_text if notes else None,
        "image": episode.image,
        "enclosure_url": enclosure.url if enclosure else None,
        "enclosure_type": enclosure.type if enclosure else None,
        "enclosure_length": enclosure.length if enclosure else None,
        "transcripts": _json_list([asdict(t) for t in episode.transcripts]),
        "chapters": _json_list([asdict(c) for c in episode.chapters]),
        "persons": _json_list([asdict(p) for p in episode.persons]),
        "page_url": episode.link if episode.link and is_http_url(episode.link) else None,
    }
    if episode.simple_chapters:  # only when given: rows stored before schema 8 hash the same
        row["simple_chapters"] = _json_list([asdict(c) for c in episode.simple_chapters])
    return row


def episode_writes(parsed: ParsedFeed, base_url: str) -> tuple[list[EpisodeWrite], list[str]]:
    """Rows, feed-note links and tags (#13) of each distinct episode of a parsed feed.

    The tags are no column: the store keeps them in ``tags``, so rows stored before keep
    their hash.
    """
    from podarchive.read.extract import notes_text_and_links

    kept, warnings = dedupe(parsed.episodes)
    writes = []
    for key, episode in kept:
        notes = episode.notes_html
        text, links = notes_text_and_links(notes, episode.link or base_url) if notes else (None, ())
        writes.append(
            EpisodeWrite(key=key, row=episode_row(episode, text), links=links, tags=episode.tags)
        )
    return writes, warnings


def podcast_identity(parsed: ParsedFeed) -> PodcastIdentity:
    return PodcastIdentity(
        podcast_guid=parsed.channel.podcast_guid,
        title=parsed.channel.title,
        episode_guids=frozenset(e.guid for e in parsed.episodes if e.guid),
    )


def _json_list(values: Sequence[Any]) -> str | None:
    return json.dumps(list(values), ensure_ascii=False) if values else None


def _bool_int(value: bool | None) -> int | None:
    return None if value is None else int(value)
