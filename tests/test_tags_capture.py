"""Every Podcasting 2.0 tag kept losslessly, at the parse level (#13).

* A ``podcast:liveItem`` (with its own ``<title>``, ``<link>``, ``<enclosure>``…) before or after
  the channel's own fields leaves every Channel field the channel's own; its values are only
  in ``Channel.tags``, and an ``<item>`` inside it is no episode.
* Conformance: every ``podcast:*`` element of the corpus feeds (02-podcastparser-tests,
  03-real-feeds), found by an lxml walk of its own, is in the tags of its scope with every
  attribute and its text. ``pytest -s`` prints the count per tag name.
* The golden feed ``tests/golden/parse/podcast_tags.xml`` (compared in test_parse.py) and its
  highlights; tags reach EpisodeWrite, not the rows; hostile trees stay bounded; a property
  round trip.
"""

from __future__ import annotations

import collections
import dataclasses
import time
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from lxml import etree

from podarchive.core.errors import ParseError
from podarchive.core.types import Channel, Episode, Tag
from podarchive.read import podcast_ns
from podarchive.read.extension_tags import MAX_TAGS
from podarchive.read.parse import parse_feed
from podarchive.read.rows import channel_row, episode_row, episode_writes

GOLDEN = Path(__file__).resolve().parent / "golden" / "parse"
PODCAST = "https://podcastindex.org/namespace/1.0"
PODCAST_URIS = {
    "https://podcastindex.org/namespace/1.0",
    "http://podcastindex.org/namespace/1.0",
    "https://github.com/podcastindex-org/podcast-namespace/blob/main/docs/1.0.md",
}
NS = (
    'xmlns:itunes="http://www.itunes.com/dtds/podcast-1.0.dtd" '
    f'xmlns:podcast="{PODCAST}" '
    'xmlns:atom="http://www.w3.org/2005/Atom" xmlns:dc="http://purl.org/dc/elements/1.1/" '
    'xmlns:sy="http://purl.org/rss/1.0/modules/syndication/" '
    'xmlns:fh="http://purl.org/syndication/history/1.0" xmlns:media="http://search.yahoo.com/mrss/"'
)


# --- podcast:liveItem inside the channel ---------------------------------------------------


def channel_fields(who: str) -> str:
    """Every element a Channel field is read from, with values naming ``who``."""
    own = who == "own"
    date = "Tue, 02 Feb 2021" if own else "Mon, 01 Jan 2001"
    return f"""
<title>{who} title</title><link>https://{who}.example.com/</link>
<description>{who} description</description><language>{who}-lang</language>
<managingEditor>{who}@example.com ({who} editor)</managingEditor><dc:creator>{who} creator</dc:creator>
<itunes:author>{who} author</itunes:author><itunes:summary>{who} summary</itunes:summary>
<itunes:subtitle>{who} subtitle</itunes:subtitle>
<itunes:owner><itunes:name>{who} owner</itunes:name><itunes:email>{who}@owner.example.com</itunes:email></itunes:owner>
<image><url>https://{who}.example.com/img.png</url><title>{who} title</title><link>https://{who}.example.com/</link></image>
<itunes:image href="https://{who}.example.com/art.png"/>
<category>{who} category</category><itunes:category text="{who} cat"/>
<itunes:explicit>{"yes" if own else "no"}</itunes:explicit><itunes:type>{"serial" if own else "episodic"}</itunes:type>
<itunes:new-feed-url>https://{who}.example.com/new.xml</itunes:new-feed-url>
<pubDate>{date} 00:00:00 GMT</pubDate><lastBuildDate>{date} 00:00:00 GMT</lastBuildDate>
<ttl>{60 if own else 5}</ttl><sy:updatePeriod>{"daily" if own else "hourly"}</sy:updatePeriod>
<sy:updateFrequency>{2 if own else 7}</sy:updateFrequency>
<atom:link rel="next" href="https://{who}.example.com/page2.xml"/>
<podcast:guid>{who}-guid</podcast:guid><podcast:locked>{"yes" if own else "no"}</podcast:locked>
<podcast:funding url="https://{who}.example.com/fund">{who} fund</podcast:funding>
"""


LIVE_ITEM = f"""<podcast:liveItem status="live" start="2021-09-26T07:30:00.000-0600"
 end="2021-09-26T08:30:00.000-0600">
<guid>live-guid</guid>
<enclosure url="https://live.example.com/stream.mp3" type="audio/mpeg" length="312"/>
<podcast:person role="host" href="https://live.example.com/host">live person</podcast:person>
{channel_fields("live")}<fh:complete/>
<item><title>live nested item</title><guid>live-nested</guid></item>
</podcast:liveItem>"""
ITEMS = "<item><title>Episode</title><guid>ep</guid></item>"


def live_feed(where: str, own: bool = True) -> bytes:
    """A feed with a liveItem ``before`` or ``after`` the channel's own fields (or no fields
    but a title when ``own`` is False)."""
    fields = channel_fields("own") if own else "<title>own title</title>"
    channel = fields + LIVE_ITEM if where == "after" else LIVE_ITEM + fields
    return (
        f'<?xml version="1.0" encoding="utf-8"?><rss version="2.0" {NS}><channel>'
        f"{channel}{ITEMS}</channel></rss>"
    ).encode()


def without_live_item(own: bool = True) -> bytes:
    fields = channel_fields("own") if own else "<title>own title</title>"
    return (
        f'<?xml version="1.0" encoding="utf-8"?><rss version="2.0" {NS}><channel>'
        f"{fields}{ITEMS}</channel></rss>"
    ).encode()


def untagged(channel: Channel) -> Channel:
    return dataclasses.replace(channel, tags=())


@pytest.mark.parametrize("own", [True, False], ids=["own-fields", "title-only"])
@pytest.mark.parametrize("where", ["after", "before"])
def test_live_item_leaves_every_channel_field_the_channels_own(where: str, own: bool) -> None:
    url = "https://own.example.com/feed.xml"
    parsed = parse_feed(live_feed(where, own), url=url)
    expected = parse_feed(without_live_item(own), url=url).channel
    assert untagged(parsed.channel) == untagged(expected)
    assert "live" not in repr(untagged(parsed.channel))
    assert [e.guid for e in parsed.episodes] == ["ep"]  # the liveItem's <item> is no episode
    assert "live" not in repr(parsed.episodes)
    assert not parsed.warnings
    # the liveItem is in the channel's tags, whole
    tags = parsed.channel.tags
    (live,) = [i for i, t in enumerate(tags) if t.name == "liveItem"]
    assert tags[live].parent is None
    assert tags[live].namespace == PODCAST
    assert tags[live].attributes == (
        ("status", "live"),
        ("start", "2021-09-26T07:30:00.000-0600"),
        ("end", "2021-09-26T08:30:00.000-0600"),
    )
    inside = {(t.namespace, t.name): t for t in tags if t.parent == live}
    assert inside[("", "title")].text == "live title"
    assert inside[("", "link")].text == "https://live.example.com/"
    assert inside[("", "guid")].text == "live-guid"
    assert inside[("", "enclosure")].attributes == (
        ("url", "https://live.example.com/stream.mp3"),
        ("type", "audio/mpeg"),
        ("length", "312"),
    )
    assert inside[(PODCAST, "person")].text == "live person"
    assert inside[(PODCAST, "person")].attributes == (
        ("role", "host"),
        ("href", "https://live.example.com/host"),
    )
    positions = [t.position for t in tags if t.parent == live]
    assert positions == list(range(len(positions)))
    nested_item = next(i for i, t in enumerate(tags) if t.name == "item")
    assert [t.text for t in tags if t.parent == nested_item] == [
        "live nested item",
        "live-nested",
    ]


def test_live_item_channel_fields_by_name() -> None:
    channel = parse_feed(live_feed("after"), url="https://own.example.com/feed.xml").channel
    assert (channel.title, channel.link) == ("own title", "https://own.example.com/")
    assert channel.description == "own description"
    assert channel.author == "own author"
    assert (channel.owner_name, channel.owner_email) == ("own owner", "own@owner.example.com")
    assert channel.image == "https://own.example.com/art.png"
    assert channel.language == "own-lang"
    assert channel.categories == ("own cat",)
    assert (channel.explicit, channel.type, channel.locked) == (True, "serial", True)
    assert channel.podcast_guid == "own-guid"
    assert [f.url for f in channel.funding] == ["https://own.example.com/fund"]
    assert channel.new_feed_url == "https://own.example.com/new.xml"
    assert channel.updated == "2021-02-02T00:00:00Z"
    assert (channel.ttl, channel.update_period, channel.update_frequency) == (60, "daily", 2)
    assert channel.complete is False
    assert channel.links == (("next", "https://own.example.com/page2.xml"),)


def test_extension_holding_rss_inside_an_item_is_not_the_items() -> None:
    body = (
        f'<?xml version="1.0"?><rss version="2.0" {NS}><channel><title>T</title><item>'
        "<podcast:x><title>Inner</title><link>https://inner/</link>"
        "<pubDate>Mon, 01 Jan 2001 00:00:00 GMT</pubDate>"
        '<enclosure url="https://inner/x.mp3" type="audio/mpeg"/></podcast:x>'
        "<title>Real</title><guid>g</guid>"
        '<enclosure url="https://real/x.mp3" type="audio/mpeg"/></item></channel></rss>'
    ).encode()
    (episode,) = parse_feed(body).episodes
    assert (episode.title, episode.link, episode.published) == ("Real", None, None)
    assert episode.enclosure is not None
    assert episode.enclosure.url == "https://real/x.mp3"
    assert [t.name for t in episode.tags] == ["x", "title", "link", "pubDate", "enclosure"]


def test_nested_items_dropped_by_guid_when_counts_differ() -> None:
    # lxml stops at its depth limit (libxml2: 256), feedparser reads on: guids decide
    deep = "<podcast:d>" * 300 + "</podcast:d>" * 300
    body = (
        f'<?xml version="1.0"?><rss version="2.0" {NS}><channel><title>T</title>'
        "<podcast:liveItem><item><guid>inside</guid></item></podcast:liveItem>"
        f"<item><guid>one</guid></item><item><guid>two</guid>{deep}</item>"
        "<item><guid>three</guid></item></channel></rss>"
    ).encode()
    scan = podcast_ns.scan(body)
    assert [i.guid for i in scan.items] == ["one", "two"]  # "three" is past the limit
    assert scan.nested_items == ((0, "inside"),)
    assert [e.guid for e in parse_feed(body).episodes] == ["one", "two", "three"]


# --- the golden feed's highlights ------------------------------------------------------------


def by_name(tags: tuple[Tag, ...], name: str) -> list[tuple[int, Tag]]:
    return [(i, t) for i, t in enumerate(tags) if t.name == name]


def children(tags: tuple[Tag, ...], parent: int) -> list[Tag]:
    found = [t for t in tags if t.parent == parent]
    assert [t.position for t in found] == list(range(len(found)))
    return found


def test_golden_podcast_tags_highlights() -> None:
    feed = parse_feed((GOLDEN / "podcast_tags.xml").read_bytes())
    channel = feed.channel
    assert (channel.title, channel.link) == ("Tags Everywhere", "https://tags.example.com/")
    assert channel.description == "Every Podcasting 2.0 tag, kept."
    assert (channel.language, channel.image) == ("en-gb", "https://tags.example.com/art.jpg")
    assert channel.updated == "2023-10-02T08:00:00Z"
    assert [e.guid for e in feed.episodes] == ["tags-2", "tags-1"]
    tops = [t.name for t in channel.tags if t.parent is None]
    assert tops == [
        "liveItem",
        "guid",
        "locked",
        "medium",
        "license",
        "txt",
        "txt",
        "updateFrequency",
        "block",
        "block",
        "images",
        "location",
        "trailer",
        "funding",
        "value",
        "podroll",
        "chat",
        "liveItem",
        "block",  # googleplay:block
    ]
    assert [t.position for t in channel.tags if t.parent is None] == list(range(len(tops)))
    ((locked_at, locked),) = by_name(channel.tags, "locked")
    assert (locked.text, locked.attributes) == ("yes", (("owner", "owner@tags.example.com"),))
    ((value_at, _),) = [(i, t) for i, t in by_name(channel.tags, "value") if t.parent is None]
    recipients = children(channel.tags, value_at)
    assert [r.name for r in recipients] == ["valueRecipient", "valueRecipient"]
    assert dict(recipients[1].attributes)["customValue"] == "01IMQkt4BFzAiSynxcQQqd"
    ((podroll_at, _),) = by_name(channel.tags, "podroll")
    assert [dict(r.attributes)["feedGuid"] for r in children(channel.tags, podroll_at)] == [
        "917393e3-1b1e-5cef-ace4-edaa54e1f810",
        "396d9ef7-2b70-5e5d-8b6e-7a2c1f8a4b3c",
    ]
    (googleplay,) = [t for t in channel.tags if t.namespace.endswith("play-podcasts/1.0")]
    assert googleplay.text == "no"

    full, trailer = feed.episodes
    ((season_at, season),) = by_name(full.tags, "season")
    assert (season.text, season.attributes) == ("2", (("name", "Season of Tags"),))
    assert [t.text for _, t in by_name(full.tags, "soundbite")] == ["Why tags matter", None]
    ((alternate_at, _),) = by_name(full.tags, "alternateEnclosure")
    inner = children(full.tags, alternate_at)
    assert [t.name for t in inner] == ["integrity", "source", "source"]
    assert dict(inner[2].attributes) == {
        "uri": "ipfs://QmdwGqd3d2gFPGeJNLLCshdiPert45fMu84552Y4XHTy4y",
        "contentType": "audio/opus",
    }
    ((split_at, _),) = by_name(full.tags, "valueTimeSplit")
    (remote,) = children(full.tags, split_at)
    assert dict(remote.attributes)["medium"] == "music"
    assert [t.namespace for t in full.tags if t.name == "content"] == [
        "http://search.yahoo.com/mrss/"
    ]
    ((mixed_at, mixed),) = by_name(trailer.tags, "txt")
    assert mixed.text == "mixed  content"
    (unknown,) = children(trailer.tags, mixed_at)
    assert (unknown.text, unknown.attributes) == ("inner text", (("kind", "inner"),))
    ((_, remote_item),) = by_name(trailer.tags, "remoteItem")
    assert remote_item.text == "Remote episode"


# --- conformance over the corpus --------------------------------------------------------------

_PARSER = dict(
    resolve_entities=False,
    no_network=True,
    load_dtd=False,
    huge_tree=False,
    recover=True,
    remove_comments=True,
    remove_pis=True,
)
_FEED_SUFFIXES = (".xml", ".rss", ".atom", ".rdf", "")


def _local(tag: Any) -> tuple[str | None, str]:
    """(namespace as the tags write it, local name); None namespace for non-elements."""
    if not isinstance(tag, str):
        return None, ""
    if tag.startswith("{"):
        uri, _, local = tag[1:].partition("}")
        return uri, local
    prefix, colon, local = tag.partition(":")
    return (prefix, local) if colon else ("", tag)


def _is_podcast(namespace: str | None) -> bool:
    return namespace is not None and (namespace.lower() in PODCAST_URIS or namespace == "podcast")


def _own_text(el: Any) -> str | None:
    pieces = [el.text or ""]
    for child in el:
        if not isinstance(child.tag, str):
            pieces.append(child.text or "")
        pieces.append(child.tail or "")
    return "".join(pieces).strip() or None


def _is_item(el: Any) -> bool:
    namespace, local = _local(el.tag)
    return local in ("item", "entry") and namespace in (
        "",
        "http://purl.org/rss/1.0/",
        "http://www.w3.org/2005/Atom",
        "http://purl.org/atom/ns#",
    )


def _walk(body: bytes) -> tuple[list[Any], list[tuple[int | None, Any]]]:
    """The feed's top-level items, and each podcast:* element with its item's index (None
    for the channel); podcast:* elements outside the channel are left out."""
    root = etree.fromstring(body.lstrip(), etree.XMLParser(**_PARSER))
    if root is None:
        return [], []
    channel = next((c for c in root if _local(c.tag)[1] == "channel"), root)
    parents = (root,) if channel is root else (channel, root)  # RSS 1.0: items beside it
    items = [c for p in parents for c in p if isinstance(c.tag, str) and _is_item(c)]
    index = {id(item): n for n, item in enumerate(items)}
    found: list[tuple[int | None, Any]] = []
    for el in root.iter():
        if not _is_podcast(_local(el.tag)[0]):
            continue
        chain = [el, *el.iterancestors()]
        item = next((index[id(a)] for a in chain if id(a) in index), None)
        if item is None and channel not in chain[1:]:
            continue  # not inside the channel (or the Atom feed)
        found.append((item, el))
    return items, found


def _corpus_files(corpus: Path) -> list[Path]:
    files = []
    for folder in ("02-podcastparser-tests", "03-real-feeds"):
        for path in sorted((corpus / folder).rglob("*")):
            if path.is_file() and path.suffix.lower() in _FEED_SUFFIXES:
                body = path.read_bytes()
                if b"podcast" in body.lower():
                    files.append(path)
    return files


def _matches(tag: Tag, el: Any) -> bool:
    namespace, local = _local(el.tag)
    attributes = set(tag.attributes)
    return (
        tag.name == local
        and tag.namespace == namespace
        and all((name, value) in attributes for name, value in el.attrib.items())
        and tag.text == _own_text(el)
    )


@pytest.mark.corpus
def test_every_podcast_element_of_the_corpus_is_kept(corpus: Path) -> None:
    counts: collections.Counter[str] = collections.Counter()
    feeds = 0
    for path in _corpus_files(corpus):
        body = path.read_bytes()
        items, found = _walk(body)
        if not found:
            continue
        try:
            parsed = parse_feed(body, url="https://example.com/feed.xml")
        except ParseError:
            continue
        feeds += 1
        episodes: list[Episode | None]
        if len(parsed.episodes) == len(items):
            episodes = list(parsed.episodes)
        else:  # by guid (lxml and feedparser may disagree on a broken feed)
            guids = {e.guid: e for e in parsed.episodes}
            episodes = [guids.get(_item_guid(item)) for item in items]
        unused: dict[int | None, list[Tag]] = {}
        for scope, el in found:
            if scope is None:
                tags = unused.setdefault(None, list(parsed.channel.tags))
            else:
                episode = episodes[scope]
                assert episode is not None, f"{path.name}: item {scope} not parsed"
                tags = unused.setdefault(scope, list(episode.tags))
            match = next((t for t in tags if _matches(t, el)), None)
            where = "the channel" if scope is None else f"item {scope}"
            assert match is not None, f"{path.name}: {el.tag} {dict(el.attrib)} not in {where}"
            tags.remove(match)  # each element matches a tag of its own
            counts[_local(el.tag)[1]] += 1
    print(f"\npodcast:* elements kept, {feeds} feeds:")
    for name, count in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])):
        print(f"  {name:24} {count}")
    assert feeds >= 5
    assert counts["person"] > 0


def _item_guid(item: Any) -> str | None:
    for child in item:
        if _local(child.tag)[1] in ("guid", "id"):
            return (child.text or "").strip() or None
    return None


# --- rows --------------------------------------------------------------------------------------


def test_tags_are_no_column_so_old_rows_keep_their_hash() -> None:
    tag = Tag(PODCAST, "txt", (("purpose", "verify"),), "abc")
    assert episode_row(Episode(guid="g", tags=(tag,))) == episode_row(Episode(guid="g"))
    assert channel_row(Channel(title="T", tags=(tag,))) == channel_row(Channel(title="T"))


def test_episode_writes_carry_the_tags() -> None:
    parsed = parse_feed((GOLDEN / "podcast_tags.xml").read_bytes())
    writes, _ = episode_writes(parsed, "https://tags.example.com/feed.xml")
    assert [w.tags for w in writes] == [e.tags for e in parsed.episodes]
    assert all(w.tags for w in writes)


# --- hostile input ---------------------------------------------------------------------------------


def _feed(channel: str = "", items: str = "") -> bytes:
    return (
        f'<?xml version="1.0"?><rss version="2.0" xmlns:podcast="{PODCAST}"><channel>'
        f"<title>T</title>{channel}{items}</channel></rss>"
    ).encode()


def test_100k_elements_in_one_scope_are_cut_with_a_warning() -> None:
    many = "<podcast:x/>" * 100_000
    started = time.process_time()
    feed = parse_feed(_feed(many, f"<item><guid>a</guid>{many}</item><item><guid>b</guid></item>"))
    assert time.process_time() - started < 60
    assert len(feed.channel.tags) == MAX_TAGS
    assert [len(e.tags) for e in feed.episodes] == [MAX_TAGS, 0]
    most = f"{MAX_TAGS:,}"
    assert feed.warnings == (
        f"more than {most} extension elements in the channel, item 1: the first {most} kept",
    )


def test_deep_nesting_stays_bounded() -> None:
    depth = 100_000
    deep = "<podcast:x>" * depth + "</podcast:x>" * depth
    body = _feed(deep, f"<item><guid>a</guid>{deep}<title>in</title></item>")
    feed = parse_feed(body)  # libxml2 stops at its depth limit; recovery keeps what it read
    assert feed.channel.title == "T"
    for tags in (feed.channel.tags, *(e.tags for e in feed.episodes)):
        assert len(tags) <= 300
        assert all(t.parent is None or t.parent < i for i, t in enumerate(tags))


def test_many_items_inside_a_live_item_are_no_episodes() -> None:
    inside = "".join(f"<item><guid>in-{n}</guid></item>" for n in range(2_000))
    body = _feed(f"<podcast:liveItem>{inside}</podcast:liveItem>", "<item><guid>own</guid></item>")
    feed = parse_feed(body)
    assert [e.guid for e in feed.episodes] == ["own"]
    assert len(feed.channel.tags) == 1 + 2 * 2_000


_LAUGHS = "".join(f'<!ENTITY lol{n} "{("&lol" + str(n - 1) + ";") * 10}">' for n in range(1, 10))


def _entity_feed(declarations: str, text: str) -> bytes:
    return (
        f'<?xml version="1.0"?><!DOCTYPE rss [{declarations}]>'
        f'<rss version="2.0" xmlns:podcast="{PODCAST}"><channel><title>T</title>'
        f"<podcast:liveItem><title>{text}</title><link>{text}</link>"
        f"<podcast:txt>{text}</podcast:txt></podcast:liveItem>"
        f"<item><guid>a</guid><podcast:x><title>{text}</title></podcast:x></item>"
        "</channel></rss>"
    ).encode()


def test_entities_in_a_live_item_are_never_expanded() -> None:
    """Internal and external entities inside a liveItem, whose channel is read twice."""
    body = _entity_feed(
        '<!ENTITY inner "EXPANDED"><!ENTITY secret SYSTEM "file:///etc/passwd">',
        "&inner; &secret;",
    )
    feed = parse_feed(body)
    assert "EXPANDED" not in repr(feed.channel.tags)
    assert "root:" not in repr(feed)
    assert (feed.channel.title, feed.channel.link) == ("T", None)
    assert [t.text for t in feed.channel.tags] == [None, *["&inner; &secret;"] * 3]
    assert [t.text for t in feed.episodes[0].tags] == [None, "&inner; &secret;"]
    assert feed.episodes[0].title is None  # the title inside podcast:x is not the item's


def test_billion_laughs_in_a_live_item_stays_small() -> None:
    body = _entity_feed(f'<!ENTITY lol0 "lol">{_LAUGHS}', "&lol9;")
    feed = parse_feed(body)
    assert len(repr(feed)) < 20_000
    assert "lollol" not in repr(feed)
    assert feed.channel.link is None


# --- property: the tags rebuild the tree -------------------------------------------------------

_NAMES = st.sampled_from(["a", "b", "value", "valueRecipient", "source", "x-y", "z.1"])
_EXTENSIONS = st.sampled_from([PODCAST, "https://example.com/x"])
_TEXT = st.text(
    st.characters(codec="utf-8", exclude_categories=("Cs", "Cc", "Cn", "Co")), max_size=12
)
_VALUE = st.text(
    st.characters(codec="utf-8", exclude_categories=("Cs", "Cc", "Cn", "Co", "Zl", "Zp")),
    max_size=8,
)
_ATTRIBUTES = st.lists(st.tuples(_NAMES, _VALUE), max_size=3, unique_by=lambda a: a[0])


@dataclasses.dataclass
class Node:
    namespace: str
    name: str
    attributes: list[tuple[str, str]]
    text: str
    children: list[Node]


# below an extension element anything goes, plain RSS names' namespace ("") included
_DESCENDANTS = st.recursive(
    st.builds(Node, _EXTENSIONS | st.just(""), _NAMES, _ATTRIBUTES, _TEXT, st.just([])),
    lambda kids: st.builds(
        Node, _EXTENSIONS | st.just(""), _NAMES, _ATTRIBUTES, _TEXT, st.lists(kids, max_size=3)
    ),
    max_leaves=8,
)
_TOPS = st.builds(Node, _EXTENSIONS, _NAMES, _ATTRIBUTES, _TEXT, st.lists(_DESCENDANTS, max_size=3))


def _xml(node: Node) -> str:
    prefix = {PODCAST: "podcast:", "https://example.com/x": "x:", "": ""}[node.namespace]
    attributes = "".join(
        f' {name}="{_escape(value)}"' for name, value in node.attributes
    )  # unprefixed names: no namespace
    inner = _escape(node.text) + "".join(_xml(c) for c in node.children)
    return f"<{prefix}{node.name}{attributes}>{inner}</{prefix}{node.name}>"


def _escape(text: str) -> str:
    return (
        text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")
    )


def _rebuild(tags: tuple[Tag, ...]) -> list[Node]:
    nodes = [Node(t.namespace, t.name, list(t.attributes), t.text or "", []) for t in tags]
    tops: list[Node] = []
    for index, tag in enumerate(tags):
        siblings = tops if tag.parent is None else nodes[tag.parent].children
        assert tag.parent is None or tag.parent < index
        assert tag.position == len(siblings)
        siblings.append(nodes[index])
    return tops


def _normal(node: Node) -> Node:
    return Node(
        node.namespace,
        node.name,
        node.attributes,
        node.text.strip(),
        [_normal(c) for c in node.children],
    )


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(st.lists(_TOPS, max_size=4))
def test_tags_rebuild_the_extension_tree(tops: list[Node]) -> None:
    item = "<item><guid>g</guid>" + "".join(_xml(n) for n in tops) + "</item>"
    body = (
        f'<?xml version="1.0" encoding="utf-8"?><rss version="2.0" xmlns:podcast="{PODCAST}" '
        f'xmlns:x="https://example.com/x"><channel><title>T</title>{item}</channel></rss>'
    ).encode()
    (episode,) = parse_feed(body).episodes
    assert _rebuild(episode.tags) == [_normal(n) for n in tops]
