"""Feeds the archive writes (#28): its changes as Atom (feedgen) and JSON Feed 1.1 (plain
JSON), and an archived podcast republished as RSS 2.0 with the iTunes and Podcasting 2.0
namespaces (feedgen, with one extension of ours for the namespaced elements).

The only feedgen user. What to write comes from the layers above as plain values
(:class:`ChangeFeed`, :class:`PodcastFeed`); every string is made XML-safe here (control
characters a hostile feed may carry would make lxml refuse the document). A change's
content is HTML made of escaped text only: no markup a podcast published reaches it.
"""

from __future__ import annotations

import html
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from podarchive import __version__
from podarchive.core.clock import parse_iso
from podarchive.core.errors import PodarchiveError
from podarchive.rules.changes import Change, FieldDiff

ITUNES = "http://www.itunes.com/dtds/podcast-1.0.dtd"
PODCAST = "https://podcastindex.org/namespace/1.0"
#: Our own namespace, for what only an archive says of an episode: when the feed stopped
#: listing it (``archive:removed``, ``archive:unlisted``) and that the file is a copy.
ARCHIVE = "https://github.com/podarchive/podarchive/blob/main/docs/changes.md#namespace"
GENERATOR = f"podarchive {__version__}"
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


class FeedWriteError(PodarchiveError):
    """A feed could not be written (the generator refused a value)."""


def xml_text(value: object) -> str:
    """``value`` as text XML can hold: control characters and lone surrogates dropped."""
    return _NOT_XML.sub("", "" if value is None else str(value))


def _moment(stamp: str | None) -> datetime:
    try:
        parsed = parse_iso(stamp)
    except ValueError:
        parsed = None
    return parsed or datetime(1970, 1, 1, tzinfo=UTC)


# the change feed ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ChangeFeed:
    """A change feed to write: its id and title, its changes (oldest first), links by
    relation (``self``, ``next``, ``alternate``) and each change's own link (by id)."""

    id: str
    title: str
    changes: Sequence[Change]
    links: Mapping[str, str] = field(default_factory=dict)
    entry_links: Mapping[str, str] = field(default_factory=dict)
    updated: str | None = None  # default: the last change's time


def _diff_html(diff: FieldDiff) -> str:
    rows = []
    for row in diff.rows:
        if row.tag == "equal":
            continue
        if row.old:
            old = "".join(html.escape(s.text) for s in row.old)
            rows.append(f"<p><del>{old}</del></p>")
        if row.new:
            new = "".join(html.escape(s.text) for s in row.new)
            rows.append(f"<p><ins>{new}</ins></p>")
    return f"<h4>{html.escape(diff.label)}</h4>" + "".join(rows)


def change_html(change: Change) -> str:
    """A change's content as HTML: escaped text, ``<del>`` the old, ``<ins>`` the new."""
    if change.diffs:
        return xml_text("".join(_diff_html(d) for d in change.diffs))
    return xml_text("".join(f"<p>{html.escape(line)}</p>" for line in change.summary.splitlines()))


def _updated(feed: ChangeFeed) -> datetime:
    return _moment(feed.updated or (feed.changes[-1].at if feed.changes else None))


def change_atom(feed: ChangeFeed) -> bytes:
    """The change feed as Atom 1.0 (entries oldest first; each with its cursor as a
    ``podarchive:cursor`` category, so a reader can resume after it)."""
    from feedgen.feed import FeedGenerator

    fg = FeedGenerator()
    fg.id(xml_text(feed.id))
    fg.title(xml_text(feed.title))
    fg.updated(_updated(feed))
    fg.generator("podarchive", version=__version__)
    for rel, href in feed.links.items():
        fg.link(href=xml_text(href), rel=rel)
    for change in reversed(feed.changes):  # feedgen prepends: the document is oldest first
        entry = fg.add_entry()
        entry.id(change.id)
        entry.title(xml_text(change.title))
        entry.updated(_moment(change.at))
        entry.published(_moment(change.at))
        entry.author({"name": xml_text(change.podcast)})
        entry.category([
            {"term": change.kind, "scheme": "tag:podarchive,2026:kind"},
            {"term": change.cursor, "scheme": "tag:podarchive,2026:cursor"},
        ])  # fmt: skip
        entry.content(change_html(change), type="html")
        alternate: str | None = feed.entry_links.get(change.id) or change.link
        if alternate:
            entry.link(href=xml_text(alternate), rel="alternate")
    try:
        data: bytes = fg.atom_str(pretty=True)
    except ValueError as e:
        raise FeedWriteError(f"cannot write the change feed: {e}") from e
    return data


def change_json(feed: ChangeFeed) -> bytes:
    """The change feed as JSON Feed 1.1 (items oldest first; ``_podarchive`` holds each
    change's kind, cursor, podcast and episode)."""
    items = []
    for change in feed.changes:
        item: dict[str, Any] = {
            "id": change.id,
            "title": change.title,
            "content_html": change_html(change),
            "content_text": change.summary,
            "date_published": change.at,
            "authors": [{"name": change.podcast}],
            "tags": [change.kind],
            "_podarchive": {
                "kind": change.kind,
                "cursor": change.cursor,
                "podcast": change.podcast,
                "feed_url": change.feed_url,
                "episode": change.episode,
                "diffs": [{"field": d.field, "old": d.old, "new": d.new} for d in change.diffs],
            },
        }
        url: str | None = feed.entry_links.get(change.id) or change.link
        if url:
            item["url"] = url
        items.append(item)
    document: dict[str, Any] = {
        "version": "https://jsonfeed.org/version/1.1",
        "title": feed.title,
        "items": items,
    }
    for rel, key in (("self", "feed_url"), ("alternate", "home_page_url"), ("next", "next_url")):
        if rel in feed.links:
            document[key] = feed.links[rel]
    return (json.dumps(document, ensure_ascii=False, indent=1) + "\n").encode("utf-8")


# the republished podcast -------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class EpisodeItem:
    """One archived episode as the republished feed lists it."""

    guid: str
    title: str | None
    link: str | None = None
    published: str | None = None
    notes_html: str | None = None
    enclosure: tuple[str, int, str] | None = None  # url, length, type
    duration: int | None = None
    season: int | None = None
    number: int | None = None
    episode_type: str | None = None
    explicit: bool | None = None
    image: str | None = None
    transcripts: Sequence[Mapping[str, str]] = ()  # url, type, language, rel
    chapters: tuple[str, str] | None = None  # url, type
    removed_at: str | None = None
    unlisted_at: str | None = None
    original_enclosure: str | None = None  # when ``enclosure`` points at the archived copy


@dataclass(frozen=True, slots=True)
class PodcastFeed:
    """An archived podcast to republish."""

    title: str
    link: str
    description: str
    self_url: str | None = None
    language: str | None = None
    author: str | None = None
    image: str | None = None
    explicit: bool | None = None
    podcast_type: str | None = None
    podcast_guid: str | None = None
    categories: Sequence[str] = ()
    original_url: str | None = None
    updated: str | None = None
    episodes: Sequence[EpisodeItem] = ()


def _sub(parent: Any, ns: str, name: str, value: object = None, **attributes: object) -> Any:
    from lxml import etree

    element = etree.SubElement(parent, f"{{{ns}}}{name}")
    for key, attribute in attributes.items():
        if attribute not in (None, ""):
            element.set(key, xml_text(attribute))
    if value not in (None, ""):
        element.text = xml_text(value)
    return element


def _yes_no(value: bool | None) -> str | None:
    return None if value is None else ("true" if value else "false")


class _ChannelExtension:
    """feedgen's feed extension: the channel's iTunes, Podcasting 2.0 and archive elements."""

    podcast: PodcastFeed | None = None

    def extend_ns(self) -> dict[str, str]:
        return {"itunes": ITUNES, "podcast": PODCAST, "archive": ARCHIVE}

    def extend_atom(self, feed: Any) -> Any:
        return feed

    def extend_rss(self, feed: Any) -> Any:
        podcast = self.podcast
        channel = feed[0]
        if podcast is None:
            return feed
        if podcast.author:
            _sub(channel, ITUNES, "author", podcast.author)
        if podcast.image:
            _sub(channel, ITUNES, "image", href=podcast.image)
        tops: dict[str, Any] = {}
        for category in podcast.categories:  # "Education > How To": a subcategory
            top, _, sub = (part.strip() for part in category.partition(">"))
            if top and top not in tops:
                tops[top] = _sub(channel, ITUNES, "category", text=top)
            if top and sub:
                _sub(tops[top], ITUNES, "category", text=sub)
        if podcast.explicit is not None:
            _sub(channel, ITUNES, "explicit", _yes_no(podcast.explicit))
        if podcast.podcast_type in ("episodic", "serial"):
            _sub(channel, ITUNES, "type", podcast.podcast_type)
        if podcast.podcast_guid:
            _sub(channel, PODCAST, "guid", podcast.podcast_guid)
        if podcast.original_url:
            _sub(channel, ARCHIVE, "original", podcast.original_url)
        return feed


class _ItemExtension:
    """feedgen's entry extension: an item's iTunes, Podcasting 2.0 and archive elements."""

    episode: EpisodeItem | None = None

    def extend_ns(self) -> dict[str, str]:
        return {}

    def extend_atom(self, entry: Any) -> Any:
        return entry

    def extend_rss(self, item: Any) -> Any:
        episode = self.episode
        if episode is None:
            return item
        for name, value in (
            ("duration", episode.duration), ("season", episode.season),
            ("episode", episode.number), ("episodeType", episode.episode_type),
            ("explicit", _yes_no(episode.explicit)),
        ):  # fmt: skip
            if value is not None and value != "":
                _sub(item, ITUNES, name, value)
        if episode.image:
            _sub(item, ITUNES, "image", href=episode.image)
        for transcript in episode.transcripts:
            kept = {k: transcript.get(k) for k in ("url", "type", "language", "rel")}
            _sub(item, PODCAST, "transcript", **kept)
        if episode.chapters:
            _sub(item, PODCAST, "chapters", url=episode.chapters[0], type=episode.chapters[1])
        if episode.removed_at:
            _sub(item, ARCHIVE, "removed", episode.removed_at)
        if episode.unlisted_at:
            _sub(item, ARCHIVE, "unlisted", episode.unlisted_at)
        if episode.original_enclosure:
            _sub(item, ARCHIVE, "originalEnclosure", episode.original_enclosure)
        return item


def _add_item(fg: Any, episode: EpisodeItem) -> None:
    entry = fg.add_entry(order="append")
    entry.archive.episode = episode  # the item extension, registered with the feed's
    entry.guid(xml_text(episode.guid), permalink=False)
    entry.title(xml_text(episode.title or episode.guid))
    if episode.link:
        entry.link(href=xml_text(episode.link))
    if episode.published:
        entry.pubDate(_moment(episode.published))
    if episode.notes_html:
        entry.description(xml_text(episode.notes_html))
    if episode.enclosure:
        url, length, kind = episode.enclosure
        entry.enclosure(xml_text(url), str(max(length, 0)), xml_text(kind))


def podcast_rss(podcast: PodcastFeed) -> bytes:
    """The archived podcast as RSS 2.0 with iTunes and Podcasting 2.0 elements: every
    episode, oldest first; those the feed no longer lists marked ``archive:removed`` or
    ``archive:unlisted``."""
    from feedgen.feed import FeedGenerator

    fg = FeedGenerator()
    fg.register_extension("archive", _ChannelExtension, _ItemExtension)
    fg.archive.podcast = podcast
    fg.title(xml_text(podcast.title))
    if podcast.self_url:
        fg.link(href=xml_text(podcast.self_url), rel="self")
    fg.link(href=xml_text(podcast.link), rel="alternate")  # last: RSS's <link> is the last one
    fg.description(xml_text(podcast.description) or "Archived by podarchive")
    if podcast.language:
        fg.language(xml_text(podcast.language))
    if podcast.image:
        title, link = xml_text(podcast.title), xml_text(podcast.link)
        fg.image(url=xml_text(podcast.image), title=title, link=link)
    fg.generator(GENERATOR)
    fg.lastBuildDate(_moment(podcast.updated))
    for episode in podcast.episodes:
        _add_item(fg, episode)
    try:
        data: bytes = fg.rss_str(pretty=True)
    except ValueError as e:
        raise FeedWriteError(f"cannot write the republished feed: {e}") from e
    return data
