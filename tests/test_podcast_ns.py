"""podcast_ns's capture of extension elements (#13): what is kept, and how it is flattened."""

from __future__ import annotations

import pytest

from podarchive.core.types import Tag
from podarchive.read import podcast_ns
from podarchive.read.extension_tags import MAX_TAGS

PODCAST = "https://podcastindex.org/namespace/1.0"
NS = (
    f'xmlns:podcast="{PODCAST}" xmlns:itunes="http://www.itunes.com/dtds/podcast-1.0.dtd" '
    'xmlns:content="http://purl.org/rss/1.0/modules/content/" '
    'xmlns:atom="http://www.w3.org/2005/Atom" xmlns:dc="http://purl.org/dc/elements/1.1/" '
    'xmlns:sy="http://purl.org/rss/1.0/modules/syndication/" '
    'xmlns:media="http://search.yahoo.com/mrss/" xmlns:x="https://example.com/x"'
)


def feed(channel: str = "", items: str = "", ns: str = NS) -> bytes:
    return (
        f'<?xml version="1.0" encoding="utf-8"?><rss version="2.0" {ns}><channel>'
        f"<title>T</title>{channel}{items}</channel></rss>"
    ).encode()


def item_tags(body: bytes) -> tuple[Tag, ...]:
    (item,) = podcast_ns.scan(body).items
    return item.tags


def test_only_extension_namespaces_are_captured_at_the_top() -> None:
    body = feed(
        "<link>https://example.com/</link><itunes:author>A</itunes:author>"
        "<atom:link rel='self' href='https://example.com/f'/><dc:creator>C</dc:creator>"
        "<sy:updatePeriod>daily</sy:updatePeriod><podcast:locked>yes</podcast:locked>"
        "<media:thumbnail url='https://example.com/t.png'/><x:thing>X</x:thing>",
        "<item><title>E</title><content:encoded>&lt;p&gt;n&lt;/p&gt;</content:encoded>"
        "<itunes:duration>1:00</itunes:duration><podcast:season name='One'>1</podcast:season>"
        "</item>",
    )
    scan = podcast_ns.scan(body)
    assert [(t.namespace, t.name, t.text) for t in scan.channel.tags] == [
        (PODCAST, "locked", "yes"),
        ("http://search.yahoo.com/mrss/", "thumbnail", None),
        ("https://example.com/x", "thing", "X"),
    ]
    assert scan.items[0].tags == (Tag(PODCAST, "season", (("name", "One"),), "1"),)
    assert scan.channel.document is None  # nothing misleads feedparser: no second reading
    assert scan.items[0].document is None


@pytest.mark.parametrize(
    "uri",
    [
        "https://podcastindex.org/namespace/1.0",
        "http://podcastindex.org/namespace/1.0",
        "https://github.com/Podcastindex-org/podcast-namespace/blob/main/docs/1.0.md",
    ],
)
def test_namespace_is_kept_as_written(uri: str) -> None:
    body = feed(items="<item><p:txt purpose='verify'>abc</p:txt></item>", ns=f'xmlns:p="{uri}"')
    assert item_tags(body) == (Tag(uri, "txt", (("purpose", "verify"),), "abc"),)


def test_undeclared_prefix_is_the_namespace() -> None:
    body = feed(items="<item><podcast:txt>abc</podcast:txt><media:x/></item>", ns="")
    assert [(t.namespace, t.name) for t in item_tags(body)] == [
        ("podcast", "txt"),
        ("media", "x"),
    ]


def test_undeclared_prefixes_feedparser_maps_are_not_captured() -> None:
    body = feed(
        items="<item><itunes:x>1</itunes:x><content:encoded>2</content:encoded>"
        "<dc:creator>3</dc:creator><atom:link href='h'/><sy:x>4</sy:x></item>",
        ns="",
    )
    assert item_tags(body) == ()


def test_subtree_is_flattened_in_document_order() -> None:
    body = feed(
        items="<item><podcast:value type='lightning' method='keysend'>"
        "<podcast:valueRecipient name='A' split='90'/>"
        "<podcast:valueRecipient name='B' split='10'><x:note>n</x:note></podcast:valueRecipient>"
        "</podcast:value><podcast:alternateEnclosure type='audio/opus'>"
        "<podcast:source uri='https://a/1.opus'/><podcast:integrity type='sri' value='sha'/>"
        "</podcast:alternateEnclosure></item>"
    )
    tags = item_tags(body)
    assert [(t.name, t.parent, t.position) for t in tags] == [
        ("value", None, 0),
        ("valueRecipient", 0, 0),
        ("valueRecipient", 0, 1),
        ("note", 2, 0),
        ("alternateEnclosure", None, 1),
        ("source", 4, 0),
        ("integrity", 4, 1),
    ]
    assert tags[2].attributes == (("name", "B"), ("split", "10"))
    assert tags[3].namespace == "https://example.com/x"


def test_attributes_as_written_in_order_and_namespaced() -> None:
    body = feed(
        items="<item><podcast:images srcset=' a.png 1x , b.png 2x ' x:extra='1' "
        "xml:lang='en' a=''/></item>"
    )
    (tag,) = item_tags(body)
    assert tag.attributes == (
        ("srcset", " a.png 1x , b.png 2x "),
        ("{https://example.com/x}extra", "1"),
        ("{http://www.w3.org/XML/1998/namespace}lang", "en"),
        ("a", ""),
    )
    assert tag.text is None


def test_text_is_own_text_with_tails_comments_and_pis_skipped() -> None:
    body = feed(
        items="<item><podcast:txt>  before <!-- c --><x:b>inner</x:b> after <?pi x?> end "
        "</podcast:txt><podcast:empty>   </podcast:empty>"
        "<podcast:cdata><![CDATA[ <b>raw</b> ]]></podcast:cdata></item>"
    )
    txt, inner, empty, cdata = item_tags(body)
    assert txt.text == "before  after  end"
    assert inner.text == "inner"
    assert empty.text is None
    assert cdata.text == "<b>raw</b>"


def test_entities_are_not_expanded() -> None:
    body = (
        b'<?xml version="1.0"?><!DOCTYPE rss [<!ENTITY e "EXPANDED">]>'
        b'<rss version="2.0" xmlns:podcast="https://podcastindex.org/namespace/1.0"><channel>'
        b"<title>T</title><item><podcast:txt>a &e; b &amp; c</podcast:txt></item>"
        b"</channel></rss>"
    )
    (tag,) = item_tags(body)
    assert tag.text is not None
    assert "EXPANDED" not in tag.text
    assert tag.text == "a &e; b & c"


def test_live_item_is_a_channel_tag_and_its_item_no_episode() -> None:
    body = feed(
        "<podcast:liveItem status='live'><title>Live</title><guid>live</guid>"
        "<item><guid>inside</guid></item></podcast:liveItem>",
        "<item><guid>one</guid></item><item><guid>two</guid></item>",
    )
    scan = podcast_ns.scan(body)
    assert [i.guid for i in scan.items] == ["one", "two"]
    assert scan.nested_items == ((0, "inside"),)
    assert [(t.name, t.parent) for t in scan.channel.tags] == [
        ("liveItem", None),
        ("title", 0),
        ("guid", 0),
        ("item", 0),
        ("guid", 3),
    ]
    assert scan.channel.document is not None
    assert b"liveItem" not in scan.channel.document
    assert b"<item" not in scan.channel.document
    assert b"<title>T</title>" in scan.channel.document


def test_item_document_leaves_out_misleading_extensions_only() -> None:
    body = feed(
        items="<item><title>Real</title><podcast:x><title>Inner</title></podcast:x>"
        "<podcast:transcript url='https://a/t.vtt'/></item>"
    )
    (item,) = podcast_ns.scan(body).items
    assert item.document is not None
    assert b"Inner" not in item.document
    assert b"<title>Real</title>" in item.document
    assert b"transcript" in item.document


def test_document_keeps_the_body_encoding() -> None:
    body = (
        '<?xml version="1.0" encoding="windows-1252"?><rss version="2.0" '
        f'xmlns:podcast="{PODCAST}"><channel><title>Caf\u00e9 \u20ac</title>'
        "<podcast:liveItem><link>https://live/</link></podcast:liveItem></channel></rss>"
    ).encode("cp1252")
    document = podcast_ns.scan(body, "windows-1252").channel.document
    assert document is not None
    assert document.startswith(b"<?xml version='1.0' encoding='windows-1252'?>")
    assert "Caf\u00e9 \u20ac".encode("cp1252") in document


def test_cap_per_scope() -> None:
    many = "<podcast:x>" + "<podcast:y/>" * (MAX_TAGS + 5) + "</podcast:x>"
    body = feed(many, f"<item>{many}</item><item><podcast:z/></item>")
    scan = podcast_ns.scan(body)
    assert len(scan.channel.tags) == MAX_TAGS
    assert scan.channel.tags_cut
    first, second = scan.items
    assert (len(first.tags), first.tags_cut) == (MAX_TAGS, True)
    assert (len(second.tags), second.tags_cut) == (1, False)


def test_cut_scope_still_finds_items_and_misleading_children() -> None:
    many = "<podcast:y/>" * (MAX_TAGS + 1)
    body = feed(f"<podcast:x>{many}<item><guid>in</guid></item></podcast:x>", "<item/>")
    scan = podcast_ns.scan(body)
    assert scan.channel.tags_cut
    assert scan.nested_items == ((0, "in"),)
    assert scan.channel.document is not None
