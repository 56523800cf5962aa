"""Which parsed item is which archived episode. Pure.

An episode's key within its feed is, in order of preference:

1. ``guid:<guid>`` — the feed's own identifier for it;
2. ``enclosure:<url>`` — the media URL with tracking-redirect prefixes (podtrac,
   chartable, …) and cache-busting query parameters removed, then normalized;
3. ``link:<url>`` — the episode page, normalized;
4. ``title:<title>|<published>``;
5. ``notes:<sha1 of the notes>`` as a last resort.

Two items of one feed with the same key are the same episode: the first one in the
document wins (feeds list newest first, so that is the current version) and the
duplicate is reported.
"""

from __future__ import annotations

import hashlib

from podarchive.types import Episode
from podarchive.urls import normalize_url, strip_cache_busters, strip_tracking_prefixes


def episode_key(episode: Episode) -> str:
    if episode.guid and episode.guid.strip():
        return "guid:" + episode.guid.strip()
    if episode.enclosure and episode.enclosure.url.strip():
        return "enclosure:" + media_identity(episode.enclosure.url)
    if episode.link and episode.link.strip():
        return "link:" + normalize_url(episode.link.strip())
    if episode.title and episode.title.strip():
        return f"title:{episode.title.strip()}|{episode.published or ''}"
    digest = hashlib.sha1((episode.notes_html or "").encode("utf-8")).hexdigest()
    return "notes:" + digest


def media_identity(url: str) -> str:
    """The media file an enclosure URL points at, however it is tracked or cache-busted."""
    return normalize_url(strip_cache_busters(strip_tracking_prefixes(url.strip())))


def dedupe(episodes: tuple[Episode, ...]) -> tuple[list[tuple[str, Episode]], list[str]]:
    """Pair each episode with its key, keeping the first of any duplicates.

    Returns the kept ``(key, episode)`` pairs in document order and one warning per
    dropped duplicate.
    """
    kept: list[tuple[str, Episode]] = []
    seen: dict[str, int] = {}
    warnings: list[str] = []
    for index, episode in enumerate(episodes):
        key = episode_key(episode)
        if key in seen:
            warnings.append(
                f"duplicate episode {key[:120]} at item {index + 1}: kept item {seen[key] + 1}"
            )
            continue
        seen[key] = index
        kept.append((key, episode))
    return kept, warnings
