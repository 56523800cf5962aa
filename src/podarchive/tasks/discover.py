"""Find the feed behind a URL a user gives ``podarchive add``: the feed itself, or a web page
that announces its feed with ``<link rel="alternate">``; :class:`FeedChecks` does it for many
URLs at once, politely (``podarchive import``)."""

from __future__ import annotations

import threading
import time
from collections import Counter
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from urllib.parse import urlsplit

import httpx

from podarchive.core.errors import FetchError, NotAFeed, ParseError, PodarchiveError, one_line
from podarchive.core.settings import Settings
from podarchive.net.fetch import Fetcher
from podarchive.read.extract import discover_feeds
from podarchive.read.parse import parse_feed

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


class FeedChecks:
    """``find_feed`` for each URL in the background, a few hosts at once (one host's URLs
    one after the other, ``host_gap`` apart). :meth:`next` gives the results in order: a
    FoundFeed, or the one-line reason the check failed. Leaving the ``with`` block cancels
    the checks not started yet."""

    def __init__(self, urls: list[str], settings: Settings | None) -> None:
        self._pool: ThreadPoolExecutor | None = None
        self._futures: Iterator[Future[FoundFeed | str]] = iter(())
        if not urls or settings is None:
            return
        self._settings = settings
        hosts = [(urlsplit(url).hostname or "").lower() for url in urls]
        self._left = Counter(hosts)
        self._locks = {host: threading.Lock() for host in self._left}
        self._pool = ThreadPoolExecutor(max_workers=min(settings.concurrency, len(urls)))
        pool = self._pool
        self._futures = iter(
            [pool.submit(self._check, u, h) for u, h in zip(urls, hosts, strict=True)]
        )

    def _check(self, url: str, host: str) -> FoundFeed | str:
        with self._locks[host]:
            try:
                return find_feed(url, self._settings)
            except PodarchiveError as e:
                return one_line(str(e))
            finally:
                self._left[host] -= 1
                if self._left[host]:
                    time.sleep(self._settings.host_gap)

    def next(self) -> FoundFeed | str:
        return next(self._futures).result()

    def __enter__(self) -> FeedChecks:
        return self

    def __exit__(self, *exc: object) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)
