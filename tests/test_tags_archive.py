"""Every Podcasting 2.0 tag kept losslessly (#13), checked on the archive the real pipeline writes.

Each feed file of the shared corpus (02, 03) with elements in the podcast namespace is served
from a loopback site and archived by ``update_feeds``; the file is then walked again,
independently, with lxml, and every ``podcast:*`` element (nested ones too: a value's
recipients, an alternate enclosure's sources, what a live item holds) must be a current row of
``tags`` in the right scope (the channel: ``episode_id`` NULL; an item: its episode), with
every attribute as written, its own text, its parent and in document order. ``-s`` prints a
count per tag name. The channel's ``<link>`` must be the channel's own for every corpus feed
(not a live item's, an image's or an item's), and a ``podcast:liveItem`` never becomes an
episode. A changed soundbite keeps the earlier rows with ``seen_until``. Skipped when
../shared/corpus is absent; nothing here reaches beyond loopback.
"""

from __future__ import annotations

import gzip
import json
import re
import sqlite3
from collections import Counter
from collections.abc import Sequence
from contextlib import closing
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import urljoin

import pytest
from loopback import LoopbackSite
from lxml import etree

from podarchive.core.settings import Settings
from podarchive.read.schedule_files import FeedSchedule
from podarchive.store import Archive
from podarchive.update.run import RunReport, update_feeds

FOLDERS = ("02-podcastparser-tests", "03-real-feeds")
NOT_FEEDS = re.compile(r"(SOURCE\.txt|LICENSE.*|.*\.json|.*\.md|.*\.ya?ml)$")
CONTENT_TYPES = {
    ".html": "text/html",
    ".atom": "application/atom+xml",
    ".rss": "application/rss+xml",
}
# every URI the namespace has gone by (compared lower-cased, without a trailing slash: feeds
# write the GitHub one as "Podcastindex-org"); an undeclared ``podcast:`` prefix counts too
PODCAST_URIS = frozenset(
    {
        "https://podcastindex.org/namespace/1.0",
        "http://podcastindex.org/namespace/1.0",
        "https://github.com/podcastindex-org/podcast-namespace/blob/main/docs/1.0.md",
    }
)
RSS_NAMESPACES = frozenset(
    {"", "http://purl.org/rss/1.0/", "http://my.netscape.com/rdf/simple/0.9/"}
)  # where <channel>, <item> and <link> live
ATOM_URI = "http://www.w3.org/2005/Atom"
ATOM = ATOM_URI.lower()
ITEM_NAMESPACES = RSS_NAMESPACES | {ATOM}
LIVE_EXAMPLE = "03-real-feeds/Podcastindex-org-podcast-namespace/example.xml"
SETTINGS = Settings(host_gap=0, retries=0)


# --- the file, read independently --------------------------------------------------------


def xml_parser() -> etree.XMLParser:
    return etree.XMLParser(
        recover=True, resolve_entities=False, no_network=True, load_dtd=False, huge_tree=False
    )


def read_xml(body: bytes) -> etree._Element | None:
    if body[:2] == b"\x1f\x8b":
        body = gzip.decompress(body)
    try:
        return etree.fromstring(body, xml_parser())
    except etree.XMLSyntaxError:
        return None


def qname(element: etree._Element) -> tuple[str, str]:
    """(namespace or undeclared prefix, local name); ("", "") for comments and PIs."""
    tag = element.tag
    if not isinstance(tag, str):
        return "", ""
    if tag.startswith("{"):
        namespace, _, local = tag[1:].partition("}")
        return namespace, local
    if ":" in tag:  # lxml's recovery keeps an undeclared prefix in the tag
        prefix, _, local = tag.partition(":")
        return prefix, local
    return "", tag


def is_podcast(element: etree._Element) -> bool:
    namespace, _ = qname(element)
    return namespace.lower().rstrip("/") in PODCAST_URIS or namespace == "podcast"


def own_text(element: etree._Element) -> str | None:
    return (element.text or "").strip() or None


@dataclass
class Element:
    """One ``podcast:*`` element of the file, as lxml reads it."""

    scope: int | None  # index of its <item> in document order; None: the channel
    namespace: str  # the URI as written ("podcast" for an undeclared prefix)
    name: str
    attributes: dict[str, str]
    text: str | None
    parent: etree._Element  # the channel, the item, or the element it is in
    node: etree._Element


@dataclass
class FeedFile:
    root: etree._Element
    channel: etree._Element | None
    items: list[etree._Element]  # <item>/<entry> in document order (never podcast:liveItem)
    elements: list[Element] = field(default_factory=list)  # document order


def channel_of(root: etree._Element) -> etree._Element | None:
    """RSS's <channel>, or an Atom <feed> itself."""
    if qname(root) in ((ATOM_URI, "feed"), ("http://purl.org/atom/ns#", "feed")):
        return root
    for child in root:
        namespace, local = qname(child)
        if local == "channel" and namespace in RSS_NAMESPACES:
            return child
    return None


def read_feed(body: bytes) -> FeedFile | None:
    root = read_xml(body)
    if root is None:
        return None
    items = [
        e
        for e in root.iter()
        if qname(e)[1] in ("item", "entry") and qname(e)[0].lower() in ITEM_NAMESPACES
    ]
    feed = FeedFile(root, channel_of(root), items)
    index = {item: i for i, item in enumerate(items)}
    for node in root.iterdescendants():
        if not is_podcast(node):
            continue
        scope = next((index[a] for a in node.iterancestors() if a in index), None)
        namespace, name = qname(node)
        parent = node.getparent()
        assert parent is not None
        feed.elements.append(
            Element(scope, namespace, name, dict(node.attrib), own_text(node), parent, node)
        )
    return feed


def corpus_feeds(corpus: Path) -> list[Path]:
    return [
        path
        for folder in FOLDERS
        for path in sorted((corpus / folder).rglob("*"))
        if path.is_file() and not NOT_FEEDS.match(path.name)
    ]


def podcast_feeds(corpus: Path) -> list[Path]:
    """The corpus files with at least one element in the podcast namespace."""
    return [
        path
        for path in corpus_feeds(corpus)
        if (feed := read_feed(path.read_bytes())) is not None and feed.elements
    ]


# --- the archive ---------------------------------------------------------------------------


def archive_files(
    site: LoopbackSite, corpus: Path, files: Sequence[Path], db: Path
) -> dict[str, tuple[int, str, str | None]]:
    """Serve ``files`` and archive them in one run: name → (feed id, URL, error)."""
    schedules = []
    for index, path in enumerate(files):
        site.serve(
            f"/{index}",
            path.read_bytes(),
            content_type=CONTENT_TYPES.get(path.suffix, "application/xml"),
        )
        schedules.append(
            FeedSchedule(
                url=site.url(f"/{index}"),
                name=str(path.relative_to(corpus)),
                allow_private_hosts=True,
                pages=False,
                transcripts=False,
                chapters=False,
            )
        )
    with Archive(db) as archive:
        report = update_feeds(archive, schedules, settings=SETTINGS)
        ids = {name: (i, url) for i, url, name in archive.feeds()}
    errors = {f.label: f.error for f in report.feeds}
    return {name: (*ids[name], errors.get(name)) for name in ids}


@dataclass(frozen=True)
class TagRow:
    id: int
    episode_id: int | None
    parent_id: int | None
    ns: str
    namespace: str
    name: str
    attributes: dict[str, Any]
    text: str | None


def current_tags(conn: sqlite3.Connection, feed_id: int) -> list[TagRow]:
    rows = conn.execute(
        "SELECT id, episode_id, parent_id, ns, namespace, name, attributes, text FROM tags "
        "WHERE feed_id = ? AND seen_until IS NULL ORDER BY id",
        [feed_id],
    )
    return [
        TagRow(i, e, p, ns, uri, name, json.loads(attributes) if attributes else {}, text)
        for i, e, p, ns, uri, name, attributes, text in rows
    ]


def episodes_for_items(
    conn: sqlite3.Connection, feed_id: int, items: Sequence[etree._Element]
) -> dict[int, int | None]:
    """Item index → episode id: items in document order against the feed's episodes (a fresh
    archive inserts them in document order), by guid where there is one; an item repeating an
    earlier item's guid is a duplicate the archive does not keep (None)."""
    episodes = conn.execute(
        "SELECT id, guid FROM episodes WHERE feed_id = ? ORDER BY id", [feed_id]
    ).fetchall()
    kept: list[tuple[int, str | None]] = []
    out: dict[int, int | None] = {}
    seen: set[str] = set()
    for index, item in enumerate(items):
        guid = next(
            (own_text(c) for c in item if qname(c)[1] in ("guid", "id") and own_text(c)), None
        )
        if guid is not None and guid in seen:
            out[index] = None
            continue
        if guid is not None:
            seen.add(guid)
        kept.append((index, guid))
    assert len(kept) == len(episodes), (len(kept), len(episodes))
    for (index, guid), (episode_id, stored_guid) in zip(kept, episodes, strict=True):
        if guid is not None:
            assert (stored_guid or "").strip() == guid, (index, guid, stored_guid)
        out[index] = episode_id
    return out


@dataclass
class Tally:
    found: Counter[str] = field(default_factory=Counter)
    total: Counter[str] = field(default_factory=Counter)
    problems: list[str] = field(default_factory=list)

    def print(self, title: str) -> None:
        print(f"\n{title}")
        for name in sorted(self.total, key=lambda n: (-self.total[n], n)):
            print(f"  {name:24s} {self.found[name]:5d} / {self.total[name]:5d}")
        found, total = sum(self.found.values()), sum(self.total.values())
        share = 100.0 * found / total if total else 100.0
        print(f"  {'total':24s} {found:5d} / {total:5d}  ({share:.1f}%)")


def check_feed(conn: sqlite3.Connection, feed_id: int, feed: FeedFile, label: str) -> Tally:
    """Every podcast element of ``feed`` against the archive's current tags of ``feed_id``."""
    tally = Tally()
    rows = current_tags(conn, feed_id)
    by_id = {row.id: row for row in rows}
    episode_of = episodes_for_items(conn, feed_id, feed.items)
    scope_elements: dict[int | None, list[Element]] = {}
    for element in feed.elements:
        if element.scope is not None and episode_of[element.scope] is None:
            continue  # a duplicate item: the first one with its guid is the episode
        key = None if element.scope is None else episode_of[element.scope]
        scope_elements.setdefault(key, []).append(element)
    scopes = set(scope_elements) | {r.episode_id for r in rows if r.ns == "podcast"}
    for scope in sorted(scopes, key=lambda s: -1 if s is None else s):
        elements = scope_elements.get(scope, [])
        stored = [r for r in rows if r.episode_id == scope and r.ns == "podcast"]
        where = f"{label} {'channel' if scope is None else f'episode {scope}'}"
        unmatched = list(stored)
        problems = len(tally.problems)
        for element in elements:  # present at all, wherever (the per-tag counts)
            tally.total[element.name] += 1
            match = next(
                (
                    r
                    for r in unmatched
                    if (r.name, r.attributes, r.text)
                    == (element.name, element.attributes, element.text)
                ),
                None,
            )
            if match is None:
                tally.problems.append(
                    f"{where}: missing <{element.name}> {element.attributes} {element.text!r}"
                )
                continue
            tally.found[element.name] += 1
            unmatched.remove(match)
        for row in unmatched:
            tally.problems.append(f"{where}: a row no element has: {row}")
        if len(stored) != len(elements) or len(tally.problems) > problems:
            continue
        # in document order, each with its namespace as written and its parent
        ids = {element.node: row.id for element, row in zip(elements, stored, strict=True)}
        scope_node = feed.channel if scope is None else None
        for element, row in zip(elements, stored, strict=True):
            if (row.name, row.attributes, row.text) != (
                element.name,
                element.attributes,
                element.text,
            ):
                tally.problems.append(f"{where}: <{element.name}> out of document order")
                continue
            if element.namespace != "podcast" and row.namespace != element.namespace:
                tally.problems.append(f"{where}: <{element.name}> namespace {row.namespace!r}")
            parent = element.parent
            if parent in ids:
                wanted: int | None = ids[parent]
                ok = row.parent_id == wanted
            elif parent is scope_node or parent in feed.items:
                ok = row.parent_id is None
            else:  # inside an element of another namespace, itself captured
                holder = by_id.get(row.parent_id) if row.parent_id is not None else None
                ok = holder is not None and holder.name == qname(parent)[1]
            if not ok:
                tally.problems.append(
                    f"{where}: <{element.name}> parent {row.parent_id}, in <{qname(parent)[1]}>"
                )
    return tally


# --- the conformance run -------------------------------------------------------------------


@pytest.fixture
def corpus_archive(
    corpus: Path, tmp_path: Path, site: LoopbackSite
) -> tuple[Path, dict[str, tuple[int, str, str | None]], list[Path]]:
    """Every corpus feed of 02 and 03 archived in one run."""
    files = corpus_feeds(corpus)
    assert len(files) > 200
    db = tmp_path / "archive.db"
    return db, archive_files(site, corpus, files, db), files


@pytest.mark.slow
@pytest.mark.corpus
def test_every_podcast_tag_of_the_corpus_is_a_current_tag_row(
    corpus: Path, tmp_path: Path, site: LoopbackSite, capsys: pytest.CaptureFixture[str]
) -> None:
    files = podcast_feeds(corpus)
    names = {str(p.relative_to(corpus)) for p in files}
    assert len(files) >= 10
    assert LIVE_EXAMPLE in names
    db = tmp_path / "archive.db"
    feeds = archive_files(site, corpus, files, db)
    tally = Tally()
    refused = []
    with closing(sqlite3.connect(db)) as conn:
        for path in files:
            name = str(path.relative_to(corpus))
            feed_id, _, error = feeds[name]
            feed = read_feed(path.read_bytes())
            assert feed is not None
            if error is not None:  # only what is no feed at all (the namespace's XSD sample)
                assert feed.channel is None, (name, error)
                assert not feed.items, (name, error)
                refused.append(f"{name}: {error}")
                continue
            one = check_feed(conn, feed_id, feed, name)
            tally.found.update(one.found)
            tally.total.update(one.total)
            tally.problems.extend(one.problems)
    with capsys.disabled():
        tally.print(f"podcast:* elements of {len(files) - len(refused)} corpus feeds in `tags`:")
        for line in refused:
            print(f"  not a feed, not archived: {line}")
    assert tally.problems == []
    assert tally.found == tally.total
    assert sum(tally.total.values()) >= 700
    for name in ("person", "soundbite", "liveItem", "valueRecipient", "source", "remoteItem"):
        assert tally.total[name] > 0, name


@pytest.mark.slow
@pytest.mark.corpus
def test_the_channel_link_is_the_channel_s_own_for_every_corpus_feed(
    corpus: Path,
    corpus_archive: tuple[Path, dict[str, tuple[int, str, str | None]], list[Path]],
) -> None:
    """``feeds.link`` is the ``<link>`` that is a direct child of ``<channel>`` (resolved
    against the feed's URL, as feedparser resolves it), never a live item's, an image's or an
    item's; a channel without one has none, or its own ``atom:link`` (alternate)."""
    db, feeds, files = corpus_archive
    with closing(sqlite3.connect(db)) as conn:
        stored = {name: link for name, link in conn.execute("SELECT name, link FROM feeds")}
    checked = Counter[str]()
    problems = []
    for path in files:
        name = str(path.relative_to(corpus))
        _, url, error = feeds[name]
        feed = read_feed(path.read_bytes())
        if (
            error is not None
            or feed is None
            or feed.channel is None
            or qname(feed.channel)[1] != "channel"
        ):
            checked["not RSS with a <channel> lxml reads, or refused"] += 1
            continue
        assert feed.channel is not None
        channel_ns = qname(feed.channel)[0]
        own = [c for c in feed.channel if qname(c) == (channel_ns, "link") and own_text(c)]
        if own:
            text = own_text(own[0])
            assert text is not None
            wanted = {urljoin(url, text)}
            checked["own <link>"] += 1
        else:
            alternates = [
                c.get("href", "")
                for c in feed.channel
                if qname(c)[0].lower() == ATOM
                and qname(c)[1] == "link"
                and c.get("rel", "alternate") == "alternate"
            ]
            wanted = {None, *(urljoin(url, h) for h in alternates if h)}
            checked["no <link> of its own"] += 1
        if stored[name] not in wanted:
            problems.append(f"{name}: feeds.link {stored[name]!r}, the channel's {wanted}")
    assert problems == []
    assert checked["own <link>"] >= 100
    assert stored[LIVE_EXAMPLE] == "https://example.com/podcast"  # not the liveItem's /live


@pytest.mark.corpus
def test_a_live_item_is_a_channel_tag_never_an_episode(
    corpus: Path, tmp_path: Path, site: LoopbackSite
) -> None:
    path = corpus / LIVE_EXAMPLE
    feed = read_feed(path.read_bytes())
    assert feed is not None
    live = [e for e in feed.elements if e.name == "liveItem"]
    assert len(live) == 1
    live_guid = own_text(next(c for c in live[0].node if qname(c)[1] == "guid"))
    db = tmp_path / "archive.db"
    feed_id, _, error = archive_files(site, corpus, [path], db)[LIVE_EXAMPLE]
    assert error is None
    with closing(sqlite3.connect(db)) as conn:
        guids = [
            g for (g,) in conn.execute("SELECT guid FROM episodes WHERE feed_id = ?", [feed_id])
        ]
        assert len(guids) == len(feed.items) == 3
        assert live_guid not in guids
        assert conn.execute(
            "SELECT count(*) FROM episodes WHERE title LIKE '%Live Show%'"
        ).fetchone() == (0,)
        rows = conn.execute(
            'SELECT feed_id, status, start, "end", guid, title, enclosure_url, became_episode_id '
            "FROM live_items"
        ).fetchall()
        assert rows == [
            (
                feed_id,
                live[0].attributes["status"],
                live[0].attributes["start"],
                live[0].attributes["end"],
                live_guid,
                "Podcasting 2.0 Live Show",
                "https://example.com/pc20/livestream?format=.mp3",
                None,
            )
        ]
        (tag_id, episode_id) = conn.execute(
            "SELECT id, episode_id FROM tags WHERE name = 'liveItem'"
        ).fetchone()
        assert episode_id is None  # the channel's
        children = conn.execute(
            "SELECT name, episode_id FROM tags WHERE parent_id = ? ORDER BY position", [tag_id]
        ).fetchall()
        wanted = [qname(c)[1] for c in live[0].node if isinstance(c.tag, str)]
        assert [name for name, _ in children] == wanted  # title, link, guid, enclosure… too
        assert {e for _, e in children} == {None}


# --- the typed views over the namespace's example ------------------------------------------


@pytest.mark.corpus
def test_the_typed_views_answer_what_the_example_feed_says(
    corpus: Path, tmp_path: Path, site: LoopbackSite
) -> None:
    path = corpus / LIVE_EXAMPLE
    feed = read_feed(path.read_bytes())
    assert feed is not None
    db = tmp_path / "archive.db"
    feed_id, _, error = archive_files(site, corpus, [path], db)[LIVE_EXAMPLE]
    assert error is None
    with closing(sqlite3.connect(db)) as conn:
        episode_of = episodes_for_items(conn, feed_id, feed.items)

        def of(name: str) -> list[Element]:
            return [e for e in feed.elements if e.name == name]

        def scope(element: Element) -> int | None:
            return None if element.scope is None else episode_of[element.scope]

        def floats(value: str | None) -> float | None:
            return None if value is None else float(value)

        persons = conn.execute(
            'SELECT episode_id, name, role, "group", img, href FROM persons ORDER BY id'
        ).fetchall()
        assert persons == [
            (
                scope(p),
                p.text,
                p.attributes.get("role", "host"),
                p.attributes.get("group", "cast"),
                p.attributes.get("img"),
                p.attributes.get("href"),
            )
            for p in of("person")
        ]
        assert ("cover art designer", "visuals") in {(r[2], r[3]) for r in persons}
        soundbites = conn.execute(
            "SELECT episode_id, start, duration, title FROM soundbites ORDER BY id"
        ).fetchall()
        assert soundbites == [
            (
                scope(s),
                floats(s.attributes["startTime"]),
                floats(s.attributes["duration"]),
                s.text,
            )
            for s in of("soundbite")
        ]
        alternates = conn.execute(
            'SELECT episode_id, type, length, bitrate, height, title, "default", sources '
            "FROM alternate_enclosures ORDER BY id"
        ).fetchall()
        assert alternates == [
            (
                scope(a),
                a.attributes.get("type"),
                int(a.attributes["length"]) if "length" in a.attributes else None,
                floats(a.attributes.get("bitrate")),
                int(a.attributes["height"]) if "height" in a.attributes else None,
                a.attributes.get("title"),
                a.attributes.get("default"),
                json.dumps(
                    [s.get("uri") for s in a.node if qname(s)[1] == "source"],
                    separators=(",", ":"),
                ),
            )
            for a in of("alternateEnclosure")
        ]
        sources = conn.execute(
            "SELECT episode_id, uri FROM alternate_enclosure_sources ORDER BY id"
        ).fetchall()
        assert sources == [
            (scope(s), s.attributes.get("uri"))
            for s in of("source")
            if qname(s.parent)[1] == "alternateEnclosure"
        ]
        recipients = conn.execute(
            "SELECT episode_id, value_type, method, name, address, split FROM value_recipients "
            "ORDER BY id"
        ).fetchall()
        assert recipients == [
            (
                scope(r),
                r.parent.get("type"),
                r.parent.get("method"),
                r.attributes.get("name"),
                r.attributes.get("address"),
                floats(r.attributes.get("split")),
            )
            for r in of("valueRecipient")
        ]
        remote = conn.execute(
            "SELECT episode_id, feed_guid, feed_url, medium, inside FROM remote_items ORDER BY id"
        ).fetchall()
        assert remote == [
            (
                scope(r),
                r.attributes.get("feedGuid"),
                r.attributes.get("feedUrl"),
                r.attributes.get("medium"),
                qname(r.parent)[1] if is_podcast(r.parent) else None,
            )
            for r in of("remoteItem")
        ]
        podroll = conn.execute("SELECT feed_guid, feed_url FROM podroll ORDER BY id").fetchall()
        assert podroll == [
            (r.attributes.get("feedGuid"), r.attributes.get("feedUrl"))
            for r in of("remoteItem")
            if qname(r.parent)[1] == "podroll"
        ]
        assert len(podroll) == 2
        locations = conn.execute(
            "SELECT episode_id, name, geo, osm, rel, country FROM locations ORDER BY id"
        ).fetchall()
        assert locations == [
            (
                scope(p),
                p.text,
                p.attributes.get("geo"),
                p.attributes.get("osm"),
                p.attributes.get("rel"),
                p.attributes.get("country"),
            )
            for p in of("location")
        ]


ATOM_FEED = """<?xml version="1.0" encoding="utf-8"?>
<feed xmlns="http://www.w3.org/2005/Atom" xmlns:podcast="https://podcastindex.org/namespace/1.0">
  <title>An Atom show</title>
  <id>urn:uuid:60a76c80-d399-11d9-b93C-0003939e0af6</id>
  <updated>2026-12-01T09:00:00Z</updated>
  <link rel="alternate" type="text/html" href="https://example.org/atom-show"/>
  <podcast:guid>c7c3b5b8-7a4e-5a33-b8a2-3f6c6c1f1b5e</podcast:guid>
  <podcast:person role="host" img="https://example.org/ann.jpg">Ann Example</podcast:person>
  <entry>
    <title>First</title>
    <id>urn:uuid:1225c695-cfb8-4ebb-aaaa-80da344efa6a</id>
    <updated>2026-12-01T09:00:00Z</updated>
    <link rel="enclosure" type="audio/mpeg" length="1" href="https://example.org/1.mp3"/>
    <podcast:soundbite startTime="12.5" duration="30">Bit</podcast:soundbite>
    <podcast:value type="lightning" method="keysend">
      <podcast:valueRecipient name="Ann" type="node" address="02ab" split="100"/>
    </podcast:value>
  </entry>
</feed>
"""


def test_an_atom_feed_s_podcast_tags_are_kept_too(tmp_path: Path, site: LoopbackSite) -> None:
    site.serve("/atom.xml", ATOM_FEED, content_type="application/atom+xml")
    db = tmp_path / "archive.db"
    schedule = FeedSchedule(
        url=site.url("/atom.xml"), allow_private_hosts=True, pages=False, transcripts=False,
        chapters=False,
    )  # fmt: skip
    with Archive(db) as archive:
        assert update_feeds(archive, [schedule], settings=SETTINGS).failed == []
        (feed_id,) = archive.db.execute("SELECT id FROM feeds").fetchone()
    feed = read_feed(ATOM_FEED.encode())
    assert feed is not None
    assert [(e.name, e.scope) for e in feed.elements] == [
        ("guid", None), ("person", None), ("soundbite", 0), ("value", 0), ("valueRecipient", 0),
    ]  # fmt: skip
    with closing(sqlite3.connect(db)) as conn:
        tally = check_feed(conn, feed_id, feed, "atom")
    assert tally.problems == []
    assert tally.found == tally.total


# --- revisions ------------------------------------------------------------------------------

SHOW = """<?xml version="1.0" encoding="UTF-8"?>
<rss version="2.0" xmlns:podcast="https://podcastindex.org/namespace/1.0">
  <channel>
    <title>Soundbite revisions</title>
    <link>https://example.org/show</link>
    <description>A show whose soundbite is moved.</description>
    <lastBuildDate>{built}</lastBuildDate>
    <podcast:funding url="https://example.org/fund">Support the show</podcast:funding>
    <item>
      <title>Episode one</title>
      <guid isPermaLink="false">ep-1</guid>
      <pubDate>Tue, 01 Dec 2026 08:00:00 GMT</pubDate>
      <enclosure url="https://example.org/ep1.mp3" type="audio/mpeg" length="1234"/>
      <podcast:person role="host" href="https://example.org/ann">Ann Example</podcast:person>
      <podcast:soundbite startTime="{start}" duration="{duration}">{title}</podcast:soundbite>
    </item>
    <item>
      <title>Episode zero</title>
      <guid isPermaLink="false">ep-0</guid>
      <pubDate>Sun, 01 Nov 2026 08:00:00 GMT</pubDate>
      <enclosure url="https://example.org/ep0.mp3" type="audio/mpeg" length="1234"/>
      <podcast:soundbite startTime="5" duration="20">Unchanged</podcast:soundbite>
    </item>
  </channel>
</rss>
"""
BUILT = "Tue, 01 Dec 2026 09:00:00 GMT"
DAYS = [f"2026-12-0{d}T09:00:00Z" for d in (1, 2, 3)]


def at(day: int) -> Any:
    return lambda: datetime(2026, 12, day, 9, tzinfo=UTC)


def run_once(archive: Archive, url: str, day: int) -> RunReport:
    schedule = FeedSchedule(
        url=url, allow_private_hosts=True, pages=False, transcripts=False, chapters=False
    )
    report = update_feeds(archive, [schedule], settings=SETTINGS, clock=at(day))
    assert report.failed == []
    return report


def all_tags(archive: Archive, episode_key: str) -> list[tuple[Any, ...]]:
    return archive.db.execute(
        "SELECT t.id, t.name, t.attributes, t.text, t.seen_from, t.seen_until FROM tags t "
        "JOIN episodes e ON e.id = t.episode_id WHERE e.key = ? ORDER BY t.id",
        [episode_key],
    ).fetchall()


def test_a_changed_soundbite_keeps_the_old_rows_with_seen_until(
    tmp_path: Path, site: LoopbackSite
) -> None:
    show = {"built": BUILT, "start": "73.5", "duration": "30.0", "title": "The good bit"}
    reply = site.serve("/show.xml", SHOW.format(**show), etag='"v1"')
    url = site.url("/show.xml")
    with Archive(tmp_path / "archive.db") as archive:
        run_once(archive, url, 1)
        first = all_tags(archive, "guid:ep-1")
        channel = archive.db.execute("SELECT * FROM tags WHERE episode_id IS NULL").fetchall()
        other = all_tags(archive, "guid:ep-0")
        assert [(name, seen_from, until) for _, name, _, _, seen_from, until in first] == [
            ("person", DAYS[0], None),
            ("soundbite", DAYS[0], None),
        ]
        assert archive.db.execute("SELECT start, duration, title FROM soundbites").fetchall() == [
            (73.5, 30.0, "The good bit"),
            (5.0, 20.0, "Unchanged"),
        ]

        moved = {**show, "start": "120.25", "duration": "45", "title": "A better bit"}
        reply.body, reply.etag = SHOW.format(**moved).encode(), '"v2"'
        report = run_once(archive, url, 2)
        assert report.feeds[0].stats.new == 0
        second = all_tags(archive, "guid:ep-1")
        assert second[:2] == [(*row[:5], DAYS[1]) for row in first]  # kept, with seen_until
        assert [(name, json.loads(a), text, f, u) for _, name, a, text, f, u in second[2:]] == [
            ("person", {"role": "host", "href": "https://example.org/ann"}, "Ann Example",
             DAYS[1], None),
            ("soundbite", {"startTime": "120.25", "duration": "45"}, "A better bit", DAYS[1],
             None),
        ]  # fmt: skip
        assert archive.db.execute(
            "SELECT e.key, s.start, s.duration, s.title FROM soundbites s "
            "JOIN episodes e ON e.id = s.episode_id ORDER BY s.id"
        ).fetchall() == [("guid:ep-0", 5.0, 20.0, "Unchanged"), ("guid:ep-1", 120.25, 45.0,
                                                                 "A better bit")]  # fmt: skip
        assert archive.db.execute("SELECT count(*) FROM persons").fetchone() == (1,)
        # the other scopes are untouched: same rows, still current
        assert all_tags(archive, "guid:ep-0") == other
        assert archive.db.execute("SELECT * FROM tags WHERE episode_id IS NULL").fetchall() == (
            channel
        )
        # a soundbite is no tracked field: no episode revision for it
        assert archive.db.execute("SELECT count(*) FROM episode_revisions").fetchone() == (0,)

        # a new body whose items are unchanged (only lastBuildDate) writes no tag row
        reply.body = SHOW.format(**{**moved, "built": "Thu, 03 Dec 2026 09:00:00 GMT"}).encode()
        reply.etag = '"v3"'
        run_once(archive, url, 3)
        assert all_tags(archive, "guid:ep-1") == second
        assert archive.db.execute("SELECT * FROM tags WHERE episode_id IS NULL").fetchall() == (
            channel
        )


def test_a_changed_channel_tag_revises_the_channel_scope_only(
    tmp_path: Path, site: LoopbackSite
) -> None:
    show = {"built": BUILT, "start": "1", "duration": "2", "title": "Bit"}
    reply = site.serve("/show.xml", SHOW.format(**show), etag='"v1"')
    with Archive(tmp_path / "archive.db") as archive:
        run_once(archive, site.url("/show.xml"), 1)
        items = archive.db.execute("SELECT * FROM tags WHERE episode_id IS NOT NULL").fetchall()
        body = SHOW.format(**show).replace("Support the show", "Keep us going")
        reply.body, reply.etag = body.encode(), '"v2"'
        run_once(archive, site.url("/show.xml"), 2)
        channel = archive.db.execute(
            "SELECT name, text, seen_from, seen_until FROM tags WHERE episode_id IS NULL "
            "ORDER BY id"
        ).fetchall()
        assert channel == [
            ("funding", "Support the show", DAYS[0], DAYS[1]),
            ("funding", "Keep us going", DAYS[1], None),
        ]
        assert (
            archive.db.execute("SELECT * FROM tags WHERE episode_id IS NOT NULL").fetchall()
            == items
        )
