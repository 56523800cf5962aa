"""Issue #24: the patterns that real pages held out from tuning showed (static podcast sites'
own pages: Hugo and Jekyll templates, a bare page), each on a page of its own made from their
structure with made-up text.

* a chapter list of time codes inside the notes is the notes', not a transcript;
* a list or a quote that is the densest part of running text is a part: the notes are the text;
* the page's summary (its meta description) shown just before the block is the notes' lead;
* a site's or a show's own description is never the episode's lead.
"""

from __future__ import annotations

from podarchive.extract import extract_page

URL = "https://driftwood.example.org/episodes/7/"
SUMMARY = "We talk about the cold, living through a hard winter, and keeping a boat in the ice"


def page(body: str, head: str = "") -> str:
    return (
        f"<!doctype html><html><head><title>Ice · Driftwood</title>{head}</head>"
        f"<body><nav><a href='/'>Home</a></nav>{body}</body></html>"
    )


def chapters(count: int, long_every: int = 0) -> str:
    lines = []
    for i in range(count):
        title = f"Topic number {i}"
        if long_every and i % long_every == 0:
            title += " with a much longer title " + "and a link https://a.example.net/x " * 3
        lines.append(f"<p>00:{i:02d}:10 {title}</p>")
    return "".join(lines)


def test_a_chapter_list_with_a_few_long_lines_stays_in_the_notes() -> None:
    body = f"<article><p>{SUMMARY}.</p>{chapters(30, long_every=3)}</article>"
    notes = extract_page(page(body), URL)
    assert notes.transcript is None
    assert "00:29:10 Topic number 29" in notes.text


def test_time_coded_paragraphs_mostly_long_are_still_a_transcript() -> None:
    said = "and then we went out on the ice to see whether it would hold the weight of the boat"
    turns = "".join(f"<p>00:{i:02d}:00 {said}, said number {i}.</p>" for i in range(12))
    body = f"<article><p>{SUMMARY}.</p></article><section>{turns}</section>"
    notes = extract_page(page(body), URL)
    assert notes.transcript is not None
    assert len(notes.transcript) == 12
    assert "said number" not in notes.text


def test_the_densest_list_takes_the_running_text_around_it() -> None:
    items = "".join(
        f"<li>00:{i:02d}:00 Chapter title number {i} of the show</li>" for i in range(20)
    )
    body = (
        "<section><h1>Ice</h1><div class='content'><h3>Contents</h3>"
        f"<ul>{items}</ul><p><a href='https://digest.example.net/2'>The digest</a></p>"
        "<p>Questions: <a href='https://social.example/@host'>Mastodon</a></p>"
        "<p>Thanks!</p></div></section>"
    )
    notes = extract_page(page(body), URL)
    assert notes.text.endswith("Thanks!")
    assert [link.url for link in notes.links] == [
        "https://digest.example.net/2",
        "https://social.example/@host",
    ]


def test_a_quote_in_a_bare_page_takes_the_whole_page() -> None:
    said = f"<p>{SUMMARY}, and how the harbour master reads the ice.</p>"
    body = (
        "<p>Our guest keeps a boat in the harbour all year.</p>"
        f"<blockquote>{said * 3}</blockquote><p>Links:</p>"
        "<ul><li><a href='https://ice.example.net/'>Ice charts</a></li>"
        "<li><a href='https://boats.example.net/'>Winter moorings</a></li></ul>"
    )
    html = f"<!doctype html><html><head><title>7: Ice</title></head><body>{body}</body></html>"
    notes = extract_page(html, URL)
    assert notes.text.startswith("Our guest keeps a boat")
    assert [link.url for link in notes.links] == [
        "https://ice.example.net/",
        "https://boats.example.net/",
    ]


def test_the_pages_summary_just_before_the_block_is_its_lead() -> None:
    head = f"<meta name='description' content='{SUMMARY} and more'>"
    body = (
        f"<main><h1>Ice</h1><div class='row'><div class='col'><div>{SUMMARY} and more</div>"
        "<div><p>Recorded in the week of 20 July.</p><h2>Played</h2><ul><li>A song</li>"
        "<li>Another song</li></ul><h2>Recommended</h2><p>A film about the ice (1973), and a"
        " book about harbours that we both read this winter.</p>"
        f"<p>{'Then a long talk about the harbour, the boats and the ice. ' * 20}</p>"
        "</div></div></div></main>"
    )
    notes = extract_page(page(body, head), URL)
    assert notes.text.startswith(SUMMARY)


def test_a_subtitle_that_is_the_summary_is_not_the_lead() -> None:
    head = "<meta property='og:description' content='Two keepers, one boat, forty winters'>"
    body = (
        "<article><div class='post-header'><h1>Ice</h1>"
        "<h3>Two keepers, one boat, forty winters</h3></div>"
        f"<div class='body markup'><p>{SUMMARY}, and the harbour master's charts.</p>"
        f"<p>{SUMMARY}, again, in other words and at greater length.</p></div></article>"
    )
    notes = extract_page(page(body, head), URL)
    assert notes.text.startswith(SUMMARY)


def test_the_sites_own_description_is_never_the_episodes_lead() -> None:
    body = (
        "<div class='main'><h1><a href='/'>Driftwood</a></h1>"
        "<div class='site-description'><p>Driftwood is a show about boats, twice a week, for"
        " anyone who lives near the water.</p></div>"
        "<article class='episode'><h2><a href='/episodes/7'>Episode 7: Ice</a></h2>"
        f"<div class='episode-body'><p>{SUMMARY}.</p><p>Links:</p><ul><li>"
        "<a href='https://ice.example.net/'>Ice charts</a></li></ul></div></article></div>"
    )
    notes = extract_page(page(body), URL)
    assert notes.text.startswith(SUMMARY)
    assert "twice a week" not in notes.text
