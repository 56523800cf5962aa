"""Issue #24: the feed-guided extractor on summary feeds, teasers cut from the feed's notes,
containers that must not grow over a neighbouring component, and post meta links before the
notes (synthetic pages made from the structure of real ones, with made-up text)."""

from __future__ import annotations

import json

from podarchive.core.types import PageNotes
from podarchive.read.extract import extract_page
from podarchive.read.extract.guided import is_teaser, reference_tokens

URL = "https://example.org/episodes/7"
SUMMARY = "Ghost stories from the lighthouse keepers of the northern lakes, told by a historian."
SECOND = (
    "She reads from the keepers' logbooks of the winter of 1905, when three ships went down in"
    " one night, and from the letters the keepers' wives sent to the mainland."
)
THIRD = (
    "Recorded live at the visitor centre in October, with questions from the audience about the"
    " fog signal, the lens and the supply boat that came once a month in summer."
)


def page(body: str, head: str = "") -> str:
    return (
        f"<!doctype html><html><head><title>Ep 7</title>{head}</head><body>"
        f"<nav><a href='/'>Home</a></nav>{body}<footer>© Show</footer></body></html>"
    )


def lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if line]


def notes_of(body: str, feed_notes: str | None = None, head: str = "") -> PageNotes:
    return extract_page(page(body, head), URL, feed_notes=feed_notes)


# --- a feed summary starts the notes: they go on after its block ---------------------------


def test_a_summary_feed_takes_the_paragraphs_that_continue_its_block() -> None:
    body = (
        "<main><h1>The keepers</h1><div class='post-body'>"
        f"<p>{SUMMARY}</p><p>{SECOND}</p>"
        "<p>Her book: <a href='https://books.example.net/keepers'>The Keepers</a></p>"
        f"<p>{THIRD}</p>"
        "<h3>Related episodes</h3><p><a href='/episodes/6'>The fog horn</a> and more.</p>"
        "</div></main>"
    )
    notes = notes_of(body, feed_notes=SUMMARY)
    assert notes.method == "feed-match"
    assert lines(notes.text) == [SUMMARY, SECOND, "Her book: The Keepers", THIRD]
    assert [link.url for link in notes.links] == ["https://books.example.net/keepers"]
    assert "3 more elements after it" in notes.evidence


def test_the_continuation_stops_at_the_posts_furniture() -> None:
    body = (
        "<main><div class='post-body'>"
        f"<p>{SUMMARY}</p><p>{SECOND}</p>"
        "<p>Tags: <a href='/tag/ghosts'>ghosts</a>, <a href='/tag/lakes'>lakes</a></p>"
        f"<p>{THIRD}</p></div></main>"
    )
    notes = notes_of(body, feed_notes=SUMMARY)
    assert lines(notes.text) == [SUMMARY, SECOND]
    assert notes.links == ()


def test_full_feed_notes_take_only_their_own_block() -> None:
    full = f"<p>{SUMMARY}</p><p>{SECOND}</p><p>{THIRD}</p>"
    body = (
        f"<main><div class='post-body'>{full}"
        "<p>Listen to the whole series and tell your friends about the show, please.</p>"
        "</div></main>"
    )
    notes = notes_of(body, feed_notes=full)
    assert lines(notes.text) == [SUMMARY, SECOND, THIRD]


def test_a_summary_on_a_page_with_no_more_notes_is_the_notes() -> None:
    body = (
        f"<main><article><h1>The keepers</h1><div class='entry'><p>{SUMMARY}</p></div>"
        "<div class='episode-meta'><p>Duration 41:12 · Season 3 · Episode 7 · Explicit: no"
        " · Download the MP3 file (38 MB) · Embed this episode on your site</p></div>"
        "</article></main>"
    )
    notes = notes_of(body, feed_notes=SUMMARY)
    assert notes.text == SUMMARY


# --- a post meta link before the notes is not their start ---------------------------------


def test_a_category_link_before_the_notes_does_not_pull_in_the_post_meta() -> None:
    body = (
        "<div class='post'><div class='post-info'><span class='day'>Monday Oct 30, 2023</span>"
        " <span class='category'><a href='/category/ghost/'>Ghost</a></span></div>"
        f"<div class='entry'><p>{SUMMARY}</p></div></div>"
    )
    notes = notes_of(body, feed_notes=SUMMARY)
    assert notes.text == SUMMARY
    assert notes.links == ()


# --- the container does not grow over another component ----------------------------------


def test_the_block_does_not_grow_over_a_date_line_beside_it() -> None:
    notes_html = f"<p>{SUMMARY} {SECOND} {THIRD}</p>"
    body = (
        "<article><div class='episode'>"
        "<div class='episode-date'>October 30, 2023</div>"
        f"<div>{notes_html}</div></div></article>"
    )
    notes = notes_of(body, feed_notes=notes_html)
    assert notes.text == f"{SUMMARY} {SECOND} {THIRD}"
    assert "2023" not in notes.text


# --- a teaser cut from the feed's notes ----------------------------------------------------


def test_a_page_line_cut_from_the_feeds_opening_is_a_teaser() -> None:
    reference = reference_tokens(f"{SUMMARY} {SECOND} {THIRD}")
    cut = f"{SUMMARY} She reads from the keepers' logbooks of the winter…"
    assert is_teaser(f"{cut}\nMore episodes of the show", reference)
    assert not is_teaser(f"{SUMMARY} {SECOND} {THIRD}", reference)
    assert not is_teaser("An unrelated line about another show and its many guests.", reference)


def test_a_structured_description_replaces_a_teaser_cut_from_it() -> None:
    full = f"{SUMMARY} {SECOND} {THIRD}"
    data = {"@context": "https://schema.org", "@type": "PodcastEpisode", "description": full}
    head = f"<script type='application/ld+json'>{json.dumps(data)}</script>"
    teaser = f"{SUMMARY} She reads from the keepers' logbooks of the winter…"
    body = (
        f"<main><div class='episode'><p class='lede'>{teaser}</p>"
        "<p class='meta'>41 min · Podcast · Ghost stories from the lakes, every other Monday,"
        " with new tales, letters and the voices of the keepers' families</p></div></main>"
    )
    notes = notes_of(body, head=head)
    assert notes.text == full
    assert notes.method == "json-ld"
