"""Tests for podarchive.read.extract: unit tests on inline HTML, goldens over tests/fixtures."""

from __future__ import annotations

import dataclasses
import json
import os
import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from podarchive.core.errors import ExtractError
from podarchive.core.types import Link, PageNotes
from podarchive.read.extract import extract_links, extract_page, html_to_text, notes_text_and_links

FIXTURES = Path(__file__).parent / "fixtures"
GOLDEN = Path(__file__).parent / "golden" / "extract"
REGEN = os.environ.get("PODARCHIVE_REGEN_GOLDEN") == "1"
NEXT_DATA_RE = re.compile(r'<script id="__NEXT_DATA__".*?</script>', re.S)

LONG = "This episode is about weak references, caches and private fields in C++ code."


def page(body: str, head: str = "") -> str:
    return f"<!doctype html><html><head>{head}</head><body>{body}</body></html>"


def outcome(body: bytes | str, url: str) -> PageNotes | str:
    """The notes, or the ExtractError's message."""
    try:
        return extract_page(body, url)
    except ExtractError as error:
        return str(error)


def urls(links: tuple[Link, ...]) -> list[str]:
    return [link.url for link in links]


# --- extract_links -------------------------------------------------------------------------


def test_extract_links_makes_urls_absolute_in_document_order() -> None:
    html = (
        '<p><a href="/a">A</a> and <a href="https://Other.example.org/b?utm_source=x#f">B</a></p>'
    )
    links = extract_links(html, "https://www.example.com/episodes/1")
    assert links == (
        Link(0, "https://www.example.com/a", "https://www.example.com/a", "example.com", "A"),
        Link(
            1,
            "https://Other.example.org/b?utm_source=x#f",
            "https://other.example.org/b",
            "other.example.org",
            "B",
        ),
    )


def test_extract_links_skips_non_http_fragment_and_empty_links() -> None:
    html = (
        '<a href="mailto:a@example.com">mail</a><a href="javascript:void(0)">js</a>'
        '<a href="#top">top</a><a href="">empty</a><a href="  ">blank</a><a>no href</a>'
        '<a href="tel:+123">tel</a><a href="ftp://example.com/f">ftp</a>'
        '<a href="http://[::1">broken</a><a href=" https://kept.example.com/ ">kept</a>'
    )
    links = extract_links(html, "https://example.com/")
    assert urls(links) == ["https://kept.example.com/"]
    assert links[0].position == 0


def test_extract_links_prefers_base_href() -> None:
    html = '<base href="https://cdn.example.com/notes/"><a href="x.html">x</a>'
    assert urls(extract_links(html, "https://example.com/page")) == [
        "https://cdn.example.com/notes/x.html"
    ]


def test_extract_links_relative_base_href_resolves_against_base_url() -> None:
    html = '<base href="/sub/"><a href="x">x</a>'
    assert urls(extract_links(html, "https://example.com/a/b")) == ["https://example.com/sub/x"]


def test_extract_links_without_base_keeps_only_absolute_links() -> None:
    html = '<a href="/relative">r</a><a href="https://example.com/abs">a</a>'
    assert urls(extract_links(html, None)) == ["https://example.com/abs"]


def test_extract_links_collapses_anchor_text() -> None:
    html = '<a href="https://example.com/">  Some\n   <b>bold</b>\ttext </a>'
    assert extract_links(html, None)[0].text == "Some bold text"


@pytest.mark.parametrize("text", ["", "plain text", "https://example.com/", "notes.html"])
def test_extract_links_on_text_without_tags(text: str) -> None:
    assert extract_links(text, "https://example.com/") == ()


# --- html_to_text --------------------------------------------------------------------------


def test_html_to_text_blocks_become_lines() -> None:
    html = (
        "<h2>Title</h2><p>First   paragraph\nwrapped.</p><p>Second<br>line</p>"
        "<ul><li>one</li><li>two</li></ul><div>div</div>"
    )
    assert (
        html_to_text(html) == "Title\n\nFirst paragraph wrapped.\n\nSecond\nline\n\none\ntwo\ndiv"
    )


def test_html_to_text_at_most_one_blank_line() -> None:
    assert html_to_text("<p>a</p><p></p><p> </p><br><br><p>b</p>") == "a\n\nb"


def test_html_to_text_drops_script_style_and_comments() -> None:
    html = "<style>p{}</style><p>kept<script>alert(1)</script><!-- gone --></p>"
    assert html_to_text(html) == "kept"


def test_html_to_text_inline_elements_do_not_break() -> None:
    assert html_to_text("<p>a<b>b</b><i> c</i></p>") == "ab c"


def test_html_to_text_table_cells_and_pre() -> None:
    assert html_to_text("<table><tr><td>a</td><td>b</td></tr><tr><td>c</td></tr></table>") == (
        "a b\nc"
    )
    assert html_to_text("<pre>line 1\n  line   2</pre>") == "line 1\nline 2"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("plain  text ", "plain text"),
        ("a\n\n\n\nb\nc", "a\n\nb\nc"),
        ("Tom &amp; Jerry", "Tom & Jerry"),
        ("https://example.com/", "https://example.com/"),
        ("", ""),
    ],
)
def test_html_to_text_plain_text(text: str, expected: str) -> None:
    assert html_to_text(text) == expected


def test_html_to_text_deep_nesting() -> None:
    html = "<div>" * 10_000 + "deep" + "</div>" * 10_000
    assert html_to_text(html) == "deep"


@given(st.text(max_size=300))
def test_html_to_text_and_links_never_raise(text: str) -> None:
    result = html_to_text(text)
    assert result == result.strip()
    assert "\n\n\n" not in result
    assert html_to_text(text) == result  # deterministic
    assert isinstance(extract_links(text, "https://example.com/"), tuple)


@given(st.lists(st.sampled_from(["<p>", "</p>", "<br>", "<div>", "x y", " ", "<b>", "&amp;"])))
def test_html_to_text_on_tag_soup(parts: list[str]) -> None:
    result = html_to_text("".join(parts))
    assert "\n\n\n" not in result
    assert result == result.strip()


# --- feed notes: one parse, one walk, remembered per fragment (#15) -------------------------

_NOTE_PARTS = st.sampled_from(
    [
        "<p>",
        "</p>",
        "<br>",
        "<div>",
        "</div>",
        "x y",
        " ",
        "\n",
        "<b>",
        "</b>",
        "&amp;",
        '<a href="/rel">',
        '<a href="https://Ex.com:443/p?utm_source=z&k=1#f">',
        "</a>",
        '<a href="#top">',
        '<a href="mailto:a@b.c">',
        "<a>",
        '<a href=" http://x.org/ ">',
        '<base href="/sub/">',
        '<base href="https://other.org/b/">',
        "<pre>a\n b",
        "</pre>",
        "<script>s<a href='/s'>",
        "</script>",
        "<noscript><a href='/n'>n</a>",
        "</noscript>",
        "<!-- c -->",
        "<table><tr><td>c",
        "</td><td>d",
        '<a href="/x"><b>in</b> b</a>',
        "<svg:x a:b='1'>",
        "<?xml version='1.0'?>",
        "<template><a href='/t'>t</a></template>",
        "&lt;a href=/q&gt;",
        "<a href='http://[::1'>v6</a>",
        "<img src=/i.png>",
        "é",
    ]
)
_BASES = st.sampled_from([None, "https://example.com/a/b", "http://e.org", "http://[::1"])


def _notes_by_two_walks(html: str, base_url: str | None) -> tuple[str, tuple[Link, ...]]:
    """What notes_text_and_links gave before #15: the tree walked for text, then for links."""
    from podarchive.read.extract.links import base_of, links_in
    from podarchive.read.extract.soup import parse
    from podarchive.read.extract.text import text_of

    if "<" not in html:
        return html_to_text(html), ()
    soup = parse(html)
    if soup is None:
        return "", ()
    return text_of(soup), links_in(soup, base_of(soup, base_url))


@settings(max_examples=300)
@given(st.lists(_NOTE_PARTS, max_size=30), _BASES, _BASES)
def test_notes_text_and_links_equal_two_walks(
    parts: list[str], base: str | None, other: str | None
) -> None:
    html = "".join(parts)
    assume(html.count("<?xml") < 2)  # parse() cuts one declaration; bs4 warns of a second
    assert notes_text_and_links(html, base) == _notes_by_two_walks(html, base)
    # the fragment again (remembered), under another base URL: only the URLs differ
    assert notes_text_and_links(html, other) == _notes_by_two_walks(html, other)


@settings(max_examples=300)
@given(st.one_of(st.lists(_NOTE_PARTS, max_size=30).map("".join), st.text(max_size=200)))
def test_lean_tree_equals_bs4_tree(html: str) -> None:
    from podarchive.read.extract.soup import parse

    assume(html.count("<?xml") < 2)  # parse() cuts one declaration; bs4 warns of a second
    lean, plain = parse(html, lean=True), parse(html)
    assert (lean is None) == (plain is None)
    if lean is not None and plain is not None:
        assert lean.decode() == plain.decode()


@given(st.text(alphabet=st.characters(blacklist_characters="<"), max_size=200))
def test_notes_without_markup_are_plain_text(text: str) -> None:
    """No tag: the text's entities decoded and its line breaks kept, no links, no tree."""
    assert notes_text_and_links(text, "https://example.com/") == (html_to_text(text), ())


def test_identical_notes_are_derived_once() -> None:
    from podarchive.read.extract.text import _derived

    html = '<p>Support us: <a href="/donate">donate</a> <a href="https://x.org/">x</a></p>'
    text, links = notes_text_and_links(html, "https://a.example/ep/1")
    hits = _derived.cache_info().hits
    again, other = notes_text_and_links(html, "https://b.example/ep/2")
    assert _derived.cache_info().hits == hits + 1
    assert again == text == "Support us: donate x"
    assert [link.url for link in links] == ["https://a.example/donate", "https://x.org/"]
    assert [link.url for link in other] == ["https://b.example/donate", "https://x.org/"]


# --- extract_page: decoding and refusals ---------------------------------------------------


@pytest.mark.parametrize(
    ("content_type", "reason"),
    [("application/rss+xml", "not HTML: application/rss+xml"), ("image/png", "not HTML")],
)
def test_extract_page_refuses_other_media_types(content_type: str, reason: str) -> None:
    with pytest.raises(ExtractError, match=re.escape(reason)):
        extract_page(
            page(f"<article><p>{LONG}</p></article>"), "https://e.com/", content_type=content_type
        )


@pytest.mark.parametrize(
    ("body", "reason"),
    [
        (b"", "not HTML: no markup"),
        (b"just some text", "not HTML: no markup"),
        (b'<?xml version="1.0"?>\n<rss version="2.0"><channel/></rss>', "looks like a feed"),
        (b"<feed xmlns='http://www.w3.org/2005/Atom'></feed>", "looks like a feed"),
    ],
)
def test_extract_page_refuses_non_html(body: bytes, reason: str) -> None:
    with pytest.raises(ExtractError, match=reason):
        extract_page(body, "https://example.com/")


def test_extract_page_xhtml_with_xml_declaration() -> None:
    html = '<?xml version="1.0" encoding="utf-8"?>\n' + page(f"<article><p>{LONG}</p></article>")
    assert extract_page(html, "https://example.com/").text == LONG


@pytest.mark.parametrize(
    ("body", "content_type"),
    [
        ("\ufeff" + page(f"<article><p>Café {LONG}</p></article>"), None),
        (page(f"<article><p>Café {LONG}</p></article>").encode("utf-8"), None),
        (
            b"\xef\xbb\xbf" + page(f"<article><p>Caf\u00e9 {LONG}</p></article>").encode(),
            "text/html; charset=iso-8859-1",  # the BOM wins
        ),
        (
            page(f"<article><p>Café {LONG}</p></article>").encode("cp1252"),
            'text/html; charset="ISO-8859-1"',
        ),
        (
            page(f"<article><p>Café {LONG}</p></article>", '<meta charset="windows-1252">').encode(
                "cp1252"
            ),
            "text/html",
        ),
        (
            page(
                f"<article><p>Café {LONG}</p></article>",
                '<meta http-equiv="Content-Type" content="text/html; charset=latin1">',
            ).encode("cp1252"),
            None,
        ),
        (
            page(f"<article><p>Café {LONG}</p></article>", '<meta charset="bogus">').encode(),
            None,
        ),
        (
            "\ufeff".encode("utf-16-le")
            + page(f"<article><p>Café {LONG}</p></article>").encode("utf-16-le"),
            None,
        ),
    ],
)
def test_extract_page_decodes(body: bytes | str, content_type: str | None) -> None:
    notes = extract_page(body, "https://example.com/", content_type=content_type)
    assert notes.text == f"Café {LONG}"


def test_extract_page_undecodable_bytes_are_replaced() -> None:
    body = page(f"<article><p>\xff\xfe {LONG}</p></article>").encode("latin-1")
    assert extract_page(body, "https://example.com/").text == f"\ufffd\ufffd {LONG}"


# --- extract_page: Simplecast --------------------------------------------------------------


def next_data(episode: object) -> str:
    data = json.dumps({"props": {"pageProps": {"episode": episode}}})
    return f'<script id="__NEXT_DATA__" type="application/json">{data}</script>'


SHOW_NOTES = (
    '<article class="episode"><h1>Weak references</h1><section class="episode-notes">'
    '<h2>Show notes</h2><div class="episode-description"><p>{0}</p>'
    '<p><a href="/episodes/other">Other</a></p></div></section></article>'
    '<aside class="sidebar"><a href="https://toppodcast.com/">Top</a></aside>'
)


def test_simplecast_prefers_next_data_long_description() -> None:
    notes_html = f'<p>{LONG}</p><p><a href="/episodes/first">First</a></p>'
    html = page(
        SHOW_NOTES.format("section text") + next_data({"long_description": notes_html}),
    )
    notes = extract_page(html, "https://show.simplecast.com/episodes/x")
    assert notes == PageNotes(
        html=notes_html,
        text=f"{LONG}\n\nFirst",
        links=(
            Link(
                0,
                "https://show.simplecast.com/episodes/first",
                "https://show.simplecast.com/episodes/first",
                "show.simplecast.com",
                "First",
            ),
        ),
        extractor="simplecast",
    )


def test_simplecast_next_data_falls_back_to_description() -> None:
    html = page(next_data({"long_description": "  ", "description": f"<p>{LONG}</p>"}))
    notes = extract_page(html, "https://example.com/episodes/x")  # detected by __NEXT_DATA__
    assert (notes.extractor, notes.text) == ("simplecast", LONG)


def test_next_data_notes_are_read_from_the_markup_with_the_page_base() -> None:
    notes_html = f'<p>{LONG} <a href="first">First</a></p>'
    script = next_data({"long_description": notes_html}).replace(
        'id="__NEXT_DATA__"', "ID='__NEXT_DATA__'"
    )
    html = page(script, '<base href="https://cdn.example.com/ep/">')
    notes = extract_page(html, "https://example.com/episodes/x")
    assert (notes.extractor, notes.text) == ("simplecast", f"{LONG} First")
    assert urls(notes.links) == ["https://cdn.example.com/ep/first"]


@pytest.mark.parametrize(
    "script",
    [
        '<script id="__NEXT_DATA__" type="application/json">{not json</script>',
        next_data(None),
        next_data({"long_description": None}),
        '<script id="__NEXT_DATA__" type="application/json">[1, 2]</script>',
        '<script id="__NEXT_DATA__" type="application/json">' + "[" * 100_000 + "</script>",
    ],
)
def test_simplecast_falls_back_to_show_notes_section(script: str) -> None:
    html = page(SHOW_NOTES.format(LONG) + script)
    notes = extract_page(html, "https://show.simplecast.com/episodes/x")
    assert notes.extractor == "simplecast"
    assert notes.text == f"{LONG}\n\nOther"
    assert urls(notes.links) == ["https://show.simplecast.com/episodes/other"]


def test_simplecast_detected_by_embedded_player() -> None:
    html = page(
        '<iframe src="https://player.simplecast.com/abc"></iframe>' + SHOW_NOTES.format(LONG)
    )
    assert extract_page(html, "https://podcast.example.com/ep/1").extractor == "simplecast"


def test_simplecast_page_without_notes_falls_back_to_generic() -> None:
    html = page(f"<main><p>{LONG}</p></main>")
    notes = extract_page(html, "https://show.simplecast.com/episodes/x")
    assert (notes.extractor, notes.text) == ("generic", LONG)


# --- extract_page: generic -----------------------------------------------------------------


def test_generic_drops_boilerplate() -> None:
    html = page(
        '<header><a href="/">Home</a> A long site header with plenty of words in it.</header>'
        '<nav><a href="/episodes">Episodes</a></nav>'
        f'<div id="content"><div class="entry"><p>{LONG}</p>'
        '<p><a href="https://example.org/ref">Reference</a></p>'
        '<div class="share-box">Share this on every social network you know of, please</div>'
        "</div></div>"
        '<div class="sidebar">A sidebar full of words that are not the notes at all, really.</div>'
        "<footer>Copyright and a long list of footer words that should never be notes.</footer>"
    )
    notes = extract_page(html, "https://example.com/ep/1")
    assert notes.extractor == "generic"
    assert notes.text == f"{LONG}\n\nReference"
    assert urls(notes.links) == ["https://example.org/ref"]
    assert notes.html.startswith("<p>This episode")


def test_generic_prefers_article_with_most_text() -> None:
    html = page(
        "<article><p>A short teaser for another episode, long enough.</p></article>"
        f"<article><p>{LONG} {LONG}</p></article>"
    )
    assert extract_page(html, "https://example.com/").text == f"{LONG} {LONG}"


def test_generic_uses_main_then_role_main() -> None:
    other = "<div><p>Some other words on the page that are not notes at all.</p></div>"
    assert extract_page(page(other + f"<main><p>{LONG}</p></main>"), "https://e.com/").text == LONG
    html = page(other + f'<div role="main"><p>{LONG}</p></div>')
    assert extract_page(html, "https://e.com/").text == LONG


def test_generic_densest_block() -> None:
    html = page(
        '<div id="wrap"><div class="col"><a href="/1">One</a><br><a href="/2">Two</a>'
        "<p>About this show, in one short line.</p></div>"
        f'<div class="txt"><p>{LONG}</p><p>{LONG}</p><p><a href="/x">x</a></p></div></div>'
    )
    notes = extract_page(html, "https://example.com/shows/ep.html")
    assert notes.text == f"{LONG}\n\n{LONG}\n\nx"
    assert urls(notes.links) == ["https://example.com/x"]


def test_generic_keeps_page_wide_form_and_state_classes() -> None:
    html = page(f'<form id="aspnetForm"><div class="page has-sidebar"><p>{LONG}</p></div></form>')
    assert extract_page(html, "https://example.com/").text == LONG


def test_generic_respects_page_base() -> None:
    html = page(
        f'<article><p>{LONG} <a href="notes.txt">notes</a></p></article>',
        '<base href="https://cdn.example.com/ep/">',
    )
    assert urls(extract_page(html, "https://example.com/").links) == [
        "https://cdn.example.com/ep/notes.txt"
    ]


@pytest.mark.parametrize(
    "body",
    [
        "<article><p>Too short.</p></article>",
        '<div><a href="/a">A link whose text is long enough to pass the limit</a></div>',
        "<nav><p>" + LONG + "</p></nav>",
        "",
    ],
)
def test_generic_without_notes(body: str) -> None:
    with pytest.raises(ExtractError, match="^no show notes found$"):
        extract_page(page(body), "https://example.com/")


def test_extract_page_deep_nesting() -> None:
    html = page("<div>" * 10_000 + f"<p>{LONG}</p>" + "</div>" * 10_000)
    assert extract_page(html, "https://example.com/").text == LONG


@settings(max_examples=150)
@given(st.one_of(st.binary(max_size=400), st.text(max_size=400)))
def test_extract_page_only_raises_extract_error(body: bytes | str) -> None:
    result = outcome(body, "https://example.com/")
    if isinstance(result, str):
        assert "\n" not in result
    else:
        assert result.text


@given(
    st.lists(
        st.sampled_from(
            [
                "<article>",
                "</article>",
                "<main>",
                "<p>",
                "</p>",
                "<div class='nav'>",
                "</div>",
                "<a href='/x'>",
                "</a>",
                "<script>",
                LONG,
                "<nav>",
                "<base href='//h/'>",
                next_data({"long_description": LONG}),
                "<h2>Show notes</h2>",
                "player.simplecast.com",
            ]
        ),
        max_size=20,
    )
)
def test_extract_page_on_tag_soup(parts: list[str]) -> None:
    result = outcome("<html>" + "".join(parts), "https://example.simplecast.com/e")
    assert isinstance(result, str) or result.text


# --- goldens over tests/fixtures -----------------------------------------------------------


def golden_record(notes: PageNotes) -> dict[str, Any]:
    return {
        "extractor": notes.extractor,
        "text": notes.text,
        "links": [dataclasses.asdict(link) for link in notes.links],
    }


def check_golden(name: str, record: dict[str, Any]) -> None:
    path = GOLDEN / f"{name}.json"
    if REGEN:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(record, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    assert path.exists(), f"missing golden {path}; run with PODARCHIVE_REGEN_GOLDEN=1"
    assert record == json.loads(path.read_text(encoding="utf-8"))


def load_json(path: Path) -> dict[str, Any]:
    if not path.exists():
        pytest.skip(f"fixture {path} not generated yet")
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return data


PYTORCH = FIXTURES / "pytorch" / "expected.json"
GENERIC = FIXTURES / "generic" / "expected.json"
PYTORCH_SLUGS = sorted(path.stem for path in (FIXTURES / "pytorch" / "pages").glob("*.html"))
GENERIC_FILES = sorted(path.name for path in (FIXTURES / "generic").glob("*.html"))


def pytorch_episode(slug: str) -> dict[str, Any]:
    episodes = load_json(PYTORCH)["episodes"]
    return next(episode for episode in episodes if episode["slug"] == slug)


def without_blank_lines(text: str) -> str:
    return "\n".join(line for line in text.splitlines() if line)


@pytest.mark.parametrize("slug", PYTORCH_SLUGS)
def test_pytorch_page_golden(slug: str) -> None:
    episode = pytorch_episode(slug)
    html = (FIXTURES / "pytorch" / episode["page_file"]).read_bytes()
    notes = extract_page(html, episode["link"], content_type="text/html; charset=utf-8")
    assert notes.extractor == "simplecast"
    assert urls(notes.links) == episode["page_links"]
    # expected.json separates list items by blank lines; we keep a list item per line
    assert without_blank_lines(notes.text) == without_blank_lines(episode["page_notes_text"])
    assert notes.text == html_to_text(notes.html)
    check_golden(f"pytorch-{slug}", golden_record(notes))


@pytest.mark.parametrize("slug", PYTORCH_SLUGS)
def test_pytorch_page_without_next_data_gives_same_notes(slug: str) -> None:
    episode = pytorch_episode(slug)
    html = (FIXTURES / "pytorch" / episode["page_file"]).read_text(encoding="utf-8")
    stripped, count = NEXT_DATA_RE.subn("", html)
    assert count == 1
    with_json = extract_page(html, episode["link"])
    from_section = extract_page(stripped, episode["link"])
    assert from_section.extractor == "simplecast"
    assert (from_section.text, from_section.links) == (with_json.text, with_json.links)


@pytest.mark.parametrize("file", GENERIC_FILES)
def test_generic_page_golden(file: str) -> None:
    expected = next(p for p in load_json(GENERIC)["pages"] if p["file"] == file)
    html = (FIXTURES / "generic" / file).read_bytes()
    if not expected["has_notes"]:
        with pytest.raises(ExtractError, match="^no show notes found$"):
            extract_page(html, expected["page_url"])
        return
    notes = extract_page(html, expected["page_url"])
    assert notes.extractor == "generic"
    assert notes.text.startswith(expected["notes_text_starts_with"])
    assert urls(notes.links) == expected["links"]
    assert notes.text == html_to_text(notes.html)
    check_golden(f"generic-{Path(file).stem}", golden_record(notes))
