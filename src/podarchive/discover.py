"""Find the feed behind a URL a user gives ``podarchive add``: the feed itself, or a web page
that announces its feed with ``<link rel="alternate">``."""

from __future__ import annotations

from dataclasses import dataclass

import httpx

from podarchive.errors import FetchError, NotAFeed, ParseError
from podarchive.extract import discover_feeds
from podarchive.fetch import Fetcher
from podarchive.parse import parse_feed
from podarchive.settings import Settings

MAX_CANDIDATES = 5


@dataclass(frozen=True, slots=True)
class FoundFeed:
    url: str
    title: str | None
    episodes: int
    discovered_from: str | None = None  # the web page it was announced on


def find_feed(
    url: str, settings: Settings | None = None, *, transport: httpx.BaseTransport | None = None
) -> FoundFeed:
    """Fetch ``url``; a feed is returned as is, a page is searched for the feed it announces.

    Raises FetchError or ParseError (one line) when there is no feed to be found.
    """
    with Fetcher(settings, transport=transport) as fetcher:
        result = fetcher.get(url, kind="feed")
        try:
            parsed = parse_feed(result.body, result.headers, url=result.final_url)
        except NotAFeed:
            candidates = discover_feeds(
                result.body, result.final_url, content_type=result.content_type
            )
        else:
            return FoundFeed(url, parsed.channel.title, len(parsed.episodes))
        errors = []
        for candidate in candidates[:MAX_CANDIDATES]:
            try:
                found = fetcher.get(candidate, kind="feed", trusted=False)
                parsed = parse_feed(found.body, found.headers, url=found.final_url)
            except (ParseError, FetchError) as e:
                errors.append(f"{candidate}: {e}")
                continue
            return FoundFeed(candidate, parsed.channel.title, len(parsed.episodes), url)
    detail = f" ({'; '.join(errors)})" if errors else ""
    raise NotAFeed(f"not a feed, and the page announces no working feed{detail}")
