"""Plain data passed between the pipeline's stages. Leaf module: imports only the stdlib.

Every value is immutable. Timestamps are ISO 8601 UTC strings (``2022-06-06T13:00:00Z``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

LinkSource = Literal["feed", "page"]


@dataclass(frozen=True, slots=True)
class Link:
    """One ``<a href>`` in a piece of show notes, in document order."""

    position: int
    url: str  # absolute
    normalized_url: str  # lower-case host, no fragment, tracking parameters removed
    domain: str  # host without "www."
    text: str  # anchor text, whitespace collapsed


@dataclass(frozen=True, slots=True)
class Enclosure:
    url: str
    type: str | None = None
    length: int | None = None


@dataclass(frozen=True, slots=True)
class Transcript:
    """``podcast:transcript``."""

    url: str
    type: str | None = None
    language: str | None = None
    rel: str | None = None


@dataclass(frozen=True, slots=True)
class Chapters:
    """``podcast:chapters``."""

    url: str
    type: str | None = None


@dataclass(frozen=True, slots=True)
class Person:
    """``podcast:person``."""

    name: str
    role: str | None = None
    group: str | None = None
    href: str | None = None
    img: str | None = None


@dataclass(frozen=True, slots=True)
class Funding:
    """``podcast:funding``."""

    url: str
    text: str | None = None


@dataclass(frozen=True, slots=True)
class Channel:
    """The podcast itself: what a feed says about the show."""

    title: str | None = None
    link: str | None = None  # the show's web site
    description: str | None = None
    author: str | None = None
    owner_name: str | None = None
    owner_email: str | None = None
    image: str | None = None
    language: str | None = None
    categories: tuple[str, ...] = ()
    explicit: bool | None = None
    type: str | None = None  # itunes:type: episodic | serial
    podcast_guid: str | None = None
    locked: bool | None = None
    funding: tuple[Funding, ...] = ()
    new_feed_url: str | None = None  # itunes:new-feed-url
    updated: str | None = None
    ttl: int | None = None  # RSS <ttl>, minutes
    update_period: str | None = None  # sy:updatePeriod: hourly, daily, weekly, ...
    update_frequency: int | None = None  # sy:updateFrequency: times per period
    complete: bool = False  # RFC 5005 fh:complete: absent episodes were removed
    links: tuple[tuple[str, str], ...] = ()  # atom:link (rel, absolute href): next, prev-archive…


@dataclass(frozen=True, slots=True)
class Episode:
    """One ``<item>``/``<entry>`` of a feed, as parsed (before identity is assigned)."""

    guid: str | None = None
    title: str | None = None
    link: str | None = None  # the episode's web page
    published: str | None = None
    updated: str | None = None
    summary: str | None = None  # short plain-ish summary (itunes:summary / subtitle)
    notes_html: str | None = None  # content:encoded, else description; raw, unsanitised
    duration: int | None = None  # seconds
    season: int | None = None
    number: int | None = None  # itunes:episode
    episode_type: str | None = None  # full | trailer | bonus
    explicit: bool | None = None
    image: str | None = None
    enclosure: Enclosure | None = None
    transcripts: tuple[Transcript, ...] = ()
    chapters: tuple[Chapters, ...] = ()
    persons: tuple[Person, ...] = ()


@dataclass(frozen=True, slots=True)
class ParsedFeed:
    """Everything :func:`podarchive.parse.parse_feed` read from one feed body."""

    channel: Channel
    episodes: tuple[Episode, ...]
    version: str = ""  # feedparser's format name, e.g. "rss20", "atom10"
    warnings: tuple[str, ...] = ()  # e.g. the XML error feedparser recovered from
    recovered: bool = False  # feedparser had to recover from an error: items may be missing


@dataclass(frozen=True, slots=True)
class PageNotes:
    """Show notes read from an episode's web page by :func:`podarchive.extract.extract_page`."""

    html: str  # the notes as an HTML fragment
    text: str  # the notes as plain text
    links: tuple[Link, ...]
    extractor: str  # which extractor found them: "simplecast", "generic", ...


@dataclass(frozen=True, slots=True)
class Redirect:
    status: int
    url: str  # the URL that answered with the redirect
    location: str  # where it pointed (absolute)


@dataclass(frozen=True, slots=True)
class FetchResult:
    """The outcome of one successful HTTP exchange (2xx or 304)."""

    url: str  # the URL asked for
    final_url: str  # after redirects
    status: int
    headers: dict[str, str] = field(default_factory=dict)  # lower-case names
    body: bytes = b""
    elapsed_ms: int = 0
    redirects: tuple[Redirect, ...] = ()

    @property
    def not_modified(self) -> bool:
        return self.status == 304

    @property
    def etag(self) -> str | None:
        return self.headers.get("etag")

    @property
    def last_modified(self) -> str | None:
        return self.headers.get("last-modified")

    @property
    def content_type(self) -> str | None:
        return self.headers.get("content-type")
