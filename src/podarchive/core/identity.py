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

from podarchive.core.errors import one_line
from podarchive.core.types import Episode
from podarchive.core.urls import normalize_url, strip_cache_busters, strip_tracking_prefixes


def episode_key(episode: Episode) -> str:
    if episode.guid and episode.guid.strip():
        return "guid:" + episode.guid.strip()
    if episode.enclosure and episode.enclosure.url.strip():
        return "enclosure:" + media_identity(episode.enclosure.url)
    if episode.link and episode.link.strip():
        return "link:" + normalize_url(episode.link.strip())
    if episode.title and episode.title.strip():
        return f"title:{episode.title.strip()}|{episode.published or ''}"
    import hashlib  # rarely reached; a parse worker need not load OpenSSL (#30)

    digest = hashlib.sha1((episode.notes_html or "").encode("utf-8")).hexdigest()
    return "notes:" + digest


def media_identity(url: str) -> str:
    """The media file an enclosure URL points at, however it is tracked or cache-busted."""
    return normalize_url(strip_cache_busters(strip_tracking_prefixes(url.strip())))


def dedupe(episodes: tuple[Episode, ...]) -> tuple[list[tuple[str, Episode]], list[str]]:
    """Pair each episode with its key, keeping the first of any duplicates.

    Returns the kept ``(key, episode)`` pairs in document order and at most one warning:
    how many items repeated a key, with the first few of them.
    """
    kept: list[tuple[str, Episode]] = []
    seen: dict[str, int] = {}
    repeats: list[str] = []
    count = 0
    for index, episode in enumerate(episodes):
        key = episode_key(episode)
        if key in seen:
            count += 1
            if len(repeats) < SAMPLES:
                repeats.append(
                    f"item {index + 1} repeats item {seen[key] + 1}: {one_line(key, _MAX_KEY)}"
                )
            continue
        seen[key] = index
        kept.append((key, episode))
    return kept, [_duplicates_warning(count, repeats)] if count else []


SAMPLES = 5  # duplicates a warning names
_MAX_KEY = 80  # characters of a key a warning quotes


def _duplicates_warning(count: int, repeats: list[str]) -> str:
    if count == 1:
        return f"1 duplicate episode key (kept the first): {repeats[0]}"
    joined = "; ".join(repeats)
    if count <= len(repeats):
        return f"{count} duplicate episode keys (kept the first of each): {joined}"
    return f"{count:,} duplicate episode keys (kept the first of each), e.g. {joined}; …"
