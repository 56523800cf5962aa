"""Issue #24: the rules that keep what is never notes out of page notes, each on its own
synthetic page (made from the structure of real pages, with made-up text), and the
strategies: feed match, structured data, app state, on-page transcripts."""

from __future__ import annotations

import json

import pytest

from podarchive.core.types import PageNotes
from podarchive.read.extract import extract_page
from podarchive.read.extract.platforms import PLATFORM_FURNITURE

URL = "https://example.org/episodes/42"
PROSE = (
    "Nora and Ilse talk about lighthouse keepers, the last manned beacons on the northern coast,"
    " and what a night on the lamp gallery sounds like when the fog horn starts."
)
MORE = "Later they read letters from a keeper's daughter and follow the supply boat's route."


def page(body: str, head: str = "") -> str:
    return (
        f"<!doctype html><html><head><title>Ep 42</title>{head}</head><body>"
        f"<nav><a href='/'>Home</a></nav>{body}<footer>© Show</footer></body></html>"
    )


def notes_of(body: str, **kwargs: str) -> PageNotes:
    return extract_page(page(body), URL, **kwargs)  # type: ignore[arg-type]


def article(inner: str) -> str:
    return f"<article><h1>Lighthouses</h1><div class='entry-content'>{inner}</div></article>"


# --- hidden elements ----------------------------------------------------------------------


@pytest.mark.parametrize(
    "hidden",
    [
        "<div style='display: none'>{x}</div>",
        "<div style='visibility:hidden'>{x}</div>",
        "<div hidden>{x}</div>",
        "<div aria-hidden='true'>{x}</div>",
    ],
)
def test_hidden_elements_are_never_notes(hidden: str) -> None:
    junk = "tracking pixel instrumentation block with a long hidden sentence of words"
    notes = notes_of(article(f"<p>{PROSE}</p>" + hidden.format(x=junk)))
    assert PROSE in notes.text
    assert "instrumentation" not in notes.text


def test_audio_fallback_and_video_are_dropped() -> None:
    player = (
        "<audio controls src='https://cdn.example.org/42.mp3'>"
        "<a href='https://cdn.example.org/42.mp3'>Your browser cannot play this file</a></audio>"
        "<video><p>Video fallback text for old browsers</p></video>"
    )
    notes = notes_of(article(player + f"<p>{PROSE}</p>"))
    assert "browser" not in notes.text
    assert "fallback" not in notes.text
    assert [link.url for link in notes.links] == []


# --- platform rules -------------------------------------------------------------------------

PLATFORM_CASES = {
    "screen readers": "<span class='sr-only'>Opens in a new window, press enter to play</span>",
    "media players": "<div class='audio-module-controls'>Play 12:30 Queue Download Embed</div>"
    "<div class='embed-code-box'>Copy the iframe code to embed this episode here</div>",
    "powerpress": "<p class='powerpress_links powerpress_links_mp3'>Podcast: <a href='https://"
    "cdn.example.org/a.mp3'>Play in new window</a> | <a href='https://cdn.example.org/a.mp3'>"
    "Download</a></p>",
    "podlove": "<div class='podlove-web-player'><a href='https://cdn.example.org/b.m4a'>Listen"
    " to the whole episode here now</a></div>",
    "podpress": "<div class='podPress_content podPress_content_audio_mp3'><a href='https://"
    "cdn.example.org/c.mp3'>Jetzt abspielen</a> | Play in Popup | Download (73)</div>",
    "seriously-simple-podcasting": "<div class='podcast_meta'><a href='https://cdn.example.org/"
    "c.mp3'>Download file</a> | Duration: 40:12 | Recorded on 1 May</div>",
    "podigee": "<div class='podigee-podcast-player-wrap'>Player loading, please wait a bit</div>",
    "spotify": "<div class='spotify-embed-wrapper'>Listen on the green streaming app today</div>",
    "apple": "<div class='we-share-panel'>Share this episode with your friends right away</div>",
    "acast": "<div class='acast-player-box'>Player of the hosting platform, loading now</div>",
    "transistor": "<div class='transistor-player-frame'>Embedded player for this episode</div>",
    "buzzsprout": "<div class='buzzsprout-player-42'>Embedded player for this episode</div>",
    "libsyn": "<div class='libsyn-item-player'>Embedded player for this episode here</div>",
    "podbean": "<div class='podbean-player-box'>Embedded player for this episode here</div>",
    "squarespace": "<div class='sqs-block embed-block'>Embedded player for this episode</div>",
    "substack": "<div class='subscription-widget-wrap'>Subscribe to get the next letter</div>",
    "wordpress.com": "<div class='sharedaddy sd-sharing'>Share this: Twitter Facebook Email</div>",
    "wordpress": "<footer class='entry-meta'>Posted in Episodes by the editor</footer>"
    "<div class='post-tags'>lighthouses, coast, fog</div>",
}


def test_every_platform_rule_has_a_fixture() -> None:
    assert set(PLATFORM_CASES) == set(PLATFORM_FURNITURE)


@pytest.mark.parametrize("platform", sorted(PLATFORM_CASES))
def test_platform_furniture_is_dropped(platform: str) -> None:
    furniture = PLATFORM_CASES[platform]
    notes = notes_of(article(furniture + f"<p>{PROSE}</p><p>{MORE}</p>"))
    assert notes.text.startswith("Nora and Ilse")
    assert notes.text.endswith("route.")
    assert notes.links == ()


# --- general rules ---------------------------------------------------------------------------


def test_advertisement_label_and_furniture_lines_are_dropped() -> None:
    body = article(
        f"<p>{PROSE}</p><div class='slot'><span>Advertisement</span></div>"
        "<p>SKIP ADVERTISEMENT</p><figure><img src='/a.jpg'><b>Enlarge this image</b>"
        "<span>hide caption</span></figure>"
        "<p>https://cdn.example.org/episodes/42.mp3</p>"
        "<p>Download: <a href='https://cdn.example.org/42.mp3'>mp3</a></p>"
        f"<p>{MORE}</p>"
    )
    notes = notes_of(body)
    assert notes.text == f"{PROSE}\n\n{MORE}"


def test_post_furniture_after_the_notes_is_cut() -> None:
    body = article(
        f"<p>{PROSE} <a href='https://lighthouses.example.net/'>Keepers' society</a></p>"
        "<strong>Download:</strong> <a href='https://cdn.example.org/a.mp3'>mp3</a>"
        "<p>Published on 16.08.2019 · Duration: 1 hour · Licence: CC-BY</p>"
        "<p>Related episodes: <a href='/episodes/41'>41</a> <a href='/episodes/40'>40</a></p>"
        "<p>Cite this episode: Show, Ep 42, https://example.org/episodes/42</p>"
    )
    notes = notes_of(body)
    assert notes.text == PROSE + " Keepers' society"
    assert [link.url for link in notes.links] == ["https://lighthouses.example.net/"]


def test_tags_and_related_cards_are_dropped() -> None:
    cards = "".join(
        f"<div class='teaser'><h2><a href='/episodes/{n}'>Other episode {n}</a></h2>"
        f"<p>Teaser text of another episode number {n} of the show.</p></div>"
        for n in (40, 41)
    )
    body = article(f"<p>{PROSE}</p>{cards}<p class='tags'>fog, coast</p>")
    notes = notes_of(body)
    assert notes.text == PROSE
    assert notes.links == ()


def test_in_page_contents_list_is_dropped() -> None:
    contents = (
        "<h3>In this episode</h3><ul><li><a href='#q1'>First question asked</a></li>"
        "<li><a href='#q2'>Second question asked</a></li></ul>"
    )
    notes = notes_of(article(f"<p>{PROSE}</p>{contents}"))
    assert notes.text == PROSE


def test_notes_split_by_an_embed_are_joined() -> None:
    body = (
        "<div class='col'><div class='sqs-block html-block'><div class='sqs-block-content'>"
        f"<p>{PROSE}</p></div></div>"
        "<div class='sqs-block image-block'></div>"
        "<div class='sqs-block html-block'><div class='sqs-block-content'>"
        f"<p>{MORE} <a href='https://maps.example.net/route'>Route map</a></p></div></div></div>"
    )
    notes = notes_of(body)
    assert notes.text.startswith("Nora and Ilse")
    assert notes.text.endswith("Route map")
    assert [(link.position, link.url) for link in notes.links] == [
        (0, "https://maps.example.net/route")
    ]


def test_lead_paragraph_in_a_sibling_block_is_kept() -> None:
    body = (
        "<div class='episode'><div class='article-description'><p>This week: lighthouses.</p>"
        "</div><div class='article-description'>"
        f"<p>{PROSE}</p><p>{MORE}</p></div><div class='credits'>Produced by Kai</div></div>"
    )
    notes = notes_of(body)
    assert notes.text.startswith("This week: lighthouses.")
    assert "Produced" not in notes.text


# --- transcripts -----------------------------------------------------------------------------

TURNS = "".join(
    f"<p>{speaker}: line {n} of the conversation about lamps, fog and the supply boat.</p>"
    for n in range(12)
    for speaker in ("Nora",)
)


def test_transcript_after_a_heading_is_kept_out_of_the_notes() -> None:
    lines = "".join(
        f"<p>[00:{n:02d}:10] Ilse: we talked about the lamp for quite a while, line {n}, and "
        f"then about the keepers and their long nights out on the rock in winter.</p>"
        for n in range(8)
    )
    notes = notes_of(article(f"<p>{PROSE}</p><h2>Episode Transcript:</h2>{lines}"))
    assert notes.text == PROSE
    assert notes.transcript is not None
    assert len(notes.transcript) == 8
    first = notes.transcript[0]
    assert (first.start, first.speaker) == (10.0, "Ilse")
    assert first.text.startswith("we talked about the lamp")
    assert notes.transcript[3].start == 190.0


def test_transcript_named_by_its_class_is_kept_out() -> None:
    body = article(f"<p>{PROSE}</p><div class='episode-transcript'>{TURNS}</div>")
    notes = notes_of(body)
    assert notes.text == PROSE
    assert notes.transcript is not None
    assert notes.transcript[0].speaker == "Nora"


def test_speaker_turns_without_a_name_are_a_transcript() -> None:
    body = article(f"<p>{PROSE} See below for the conversation.</p><h3>Lamps</h3>{TURNS}")
    notes = notes_of(body)
    assert notes.text == PROSE + " See below for the conversation."
    assert notes.transcript is not None
    assert len(notes.transcript) == 13  # the heading, then the twelve turns


def test_a_link_to_a_transcript_is_not_a_transcript() -> None:
    body = article(f"<p><a href='/episodes/42/transcript'>Full Transcript</a></p><p>{PROSE}</p>")
    notes = notes_of(body)
    assert notes.transcript is None
    assert notes.text.endswith("starts.")


def test_chapter_lines_are_not_a_transcript() -> None:
    chapters = "".join(f"<p>0{n}:00 - Chapter {n}</p>" for n in range(9))
    notes = notes_of(article(f"<p>{PROSE}</p>{chapters}"))
    assert notes.transcript is None
    assert "Chapter 8" in notes.text


# --- strategies --------------------------------------------------------------------------------


def test_feed_match_finds_the_block_that_carries_the_feed_notes() -> None:
    feed = f"<p>{PROSE}</p><p>{MORE}</p>"
    body = (
        "<div class='layout'><div class='hero'><h2>Lighthouses</h2><p>Listen on every app, "
        "subscribe, rate and review the show; a long call to action that the generic rule "
        "would take for the notes because it is the longest run of prose on this page, by far,"
        " and it goes on and on about apps and ratings and reviews and more.</p></div>"
        f"<div class='body'><p>{PROSE}</p><p>{MORE} "
        "<a href='https://letters.example.net/'>The letters</a></p></div></div>"
    )
    notes = notes_of(body, feed_notes=feed)
    assert notes.method == "feed-match"
    assert notes.text.startswith("Nora and Ilse")
    assert notes.text.endswith("The letters")
    assert [link.url for link in notes.links] == ["https://letters.example.net/"]
    assert notes.confidence > 0.9
    assert "feed" in notes.evidence


def test_feed_notes_longer_than_the_page_teaser_are_the_notes() -> None:
    feed = f"<p>{PROSE}</p><p>{MORE}</p><p>Sponsor: <a href='https://lamps.example.com/'>Lamps"
    feed += "</a></p><p>Thanks to the harbour office for the recordings and the archive.</p>"
    teaser = PROSE[:60] + "…"
    notes = notes_of(f"<main><p>{teaser}</p></main>", feed_notes=feed)
    assert notes.method == "feed-match"
    assert notes.text.endswith("archive.")
    assert [link.url for link in notes.links] == ["https://lamps.example.com/"]


def test_without_a_match_the_feed_leaves_the_page_to_the_generic_rule() -> None:
    notes = notes_of(article(f"<p>{PROSE}</p>"), feed_notes="Completely different words here.")
    assert notes.method == "generic"
    assert notes.text == PROSE


def test_a_feed_description_of_a_few_words_never_replaces_the_page_s_notes() -> None:
    """Two words of feed notes match the headline alone: no evidence of the notes' block,
    so the page's own notes and links stay (the feed's words are not taken for them)."""
    body = (
        "<main><h1>Autograd</h1><p>How reverse-mode automatic differentiation is implemented,"
        " with a <a href='https://blog.example.org/ad'>blog post</a>.</p></main>"
    )
    feed = "<p>About <a href='https://docs.example.org/'>autograd</a>.</p>"
    notes = notes_of(body, feed_notes=feed)
    assert notes.method == "generic"
    assert "reverse-mode" in notes.text
    assert [link.url for link in notes.links] == ["https://blog.example.org/ad"]
    assert "the the" not in notes.evidence


def test_json_ld_description_replaces_a_cut_teaser() -> None:
    full = f"{PROSE}\n{MORE}\nSentry - Sponsor\nTrack errors with Sentry, free for small teams."
    data = {"@context": "https://schema.org", "@type": "PodcastEpisode", "description": full}
    head = f"<script type='application/ld+json'>{json.dumps(data)}</script>"
    body = (
        f"<main><h1>Episode</h1><p>{PROSE[:80]}…</p>"
        "<p><a href='https://sentry.example.io/'>Sentry</a></p>"
        "<p><a href='https://example.org/show'>See all episodes</a></p></main>"
    )
    notes = extract_page(page(body, head), URL)
    assert notes.method == "json-ld"
    assert notes.text.endswith("small teams.")
    assert [link.url for link in notes.links] == ["https://sentry.example.io/"]


def test_json_ld_that_matches_the_page_finds_the_block_and_what_continues_it() -> None:
    data = {"@type": "PodcastEpisode", "description": PROSE[:100]}
    head = f"<script type='application/ld+json'>{json.dumps(data)}</script>"
    notes = extract_page(page(article(f"<p>{PROSE}</p><p>{MORE}</p>"), head), URL)
    assert notes.method == "json-ld"
    assert notes.text == f"{PROSE}\n\n{MORE}"
    assert "of the JSON-LD, and 1 more element after it" in notes.evidence


def test_app_state_shownotes_keep_their_links() -> None:
    shownotes = f"<p>{PROSE} <a href='https://letters.example.net/'>letters</a></p>"
    state = {"props": {"pageProps": {"episode": {"description": PROSE, "shownotes": shownotes}}}}
    script = f"<script id='__NEXT_DATA__' type='application/json'>{json.dumps(state)}</script>"
    notes = extract_page(page(f"<main><p>{PROSE}</p></main>{script}"), URL)
    assert notes.method == "app-state"
    assert [link.url for link in notes.links] == ["https://letters.example.net/"]


def test_old_call_and_equality_hold() -> None:
    notes = extract_page(page(article(f"<p>{PROSE}</p>")), URL)
    assert notes == PageNotes(notes.html, notes.text, notes.links, "generic")
    assert notes.method == "generic"
    assert 0.0 <= notes.confidence <= 1.0


def test_question_overview_of_in_page_anchors_is_dropped() -> None:
    overview = "<h3>The questions of this episode</h3>" + "".join(
        f"<p><a href='#q{n}'><strong>Question number {n} about the lamps?</strong></a></p>"
        for n in range(3)
    )
    notes = notes_of(article(f"<p>{PROSE}</p>{overview}"))
    assert notes.text == PROSE


def test_a_box_emptied_of_its_cards_goes_too() -> None:
    box = (
        "<div class='contentbox'><div class='boxhead'>More news</div><div class='teaser'>"
        "<h2><a href='/news/1'>A news item elsewhere</a></h2><p>Its teaser text.</p></div></div>"
    )
    notes = notes_of(article(f"<p>{PROSE}</p>{box}"))
    assert notes.text == PROSE


def test_a_short_feed_summary_confirms_the_whole_main_block() -> None:
    body = article(
        f"<p>{PROSE}</p><p>{MORE}</p><p>Links: <a href='https://x.example.net/'>x</a></p>"
    )
    notes = notes_of(body, feed_notes=PROSE[:90])
    assert notes.method == "feed-match"  # the summary's block, continued over what follows it
    assert notes.text.startswith(PROSE)
    assert notes.text.endswith("Links: x")
    assert "feed" in notes.evidence


def test_credit_lines_are_not_speaker_turns() -> None:
    credits = "".join(
        f"<p>{role}: someone with a long enough name to count</p>"
        for role in ("Host", "Guest", "Music", "Producer", "Editor", "Artwork", "Sound", "Links")
    )
    notes = notes_of(article(f"<p>{PROSE}</p>{credits}"))
    assert notes.transcript is None
    assert "Artwork" in notes.text


def test_the_lead_under_the_headline_is_kept_when_the_block_leaves_it_out() -> None:
    body = (
        "<article><header><h1>Lighthouses</h1><p class='c-article-dek'>A lead of the episode: "
        "the last keepers of the coast, in their own words.</p></header>"
        f"<div class='article-body'><p>{PROSE}</p><p>{MORE}</p></div></article>"
    )
    notes = notes_of(body)
    assert notes.text.startswith("A lead of the episode")
    assert notes.text.endswith("route.")


def test_a_lead_the_notes_repeat_is_not_doubled() -> None:
    body = (
        f"<article><header><h1>Lighthouses</h1><p class='standfirst'>{PROSE}</p></header>"
        f"<div class='article-body'><p>{PROSE}</p><p>{MORE}</p></div></article>"
    )
    assert notes_of(body).text == f"{PROSE}\n\n{MORE}"


def test_cards_of_other_episodes_inside_the_notes_are_dropped() -> None:
    cards = "".join(
        f"<article><h3><a href='/episodes/{n}'>Episode {n}</a></h3><p>Another teaser {n}.</p>"
        "</article>"
        for n in range(5)
    )
    related = (
        "<div class='box'><h2>More episodes</h2><p><a href='/episodes/9'>Nine</a> "
        "<a href='/episodes/8'>Eight</a></p></div>"
    )
    notes = notes_of(
        f"<article><div class='entry-content'><p>{PROSE}</p>{cards}{related}</div></article>"
    )
    assert notes.text == PROSE
    assert notes.links == ()


def test_deep_nesting_with_a_feed_and_a_transcript_word_is_walked_iteratively() -> None:
    depth = 5000
    deep = "<div class='x'>" * depth + f"<p>{PROSE}</p><h2>Transcript</h2>" + "</div>" * depth
    notes = notes_of(
        f"<h1>T</h1><p class='dek'>A lead of forty characters or more here.</p>{deep}",
        feed_notes=PROSE,
    )
    assert PROSE in notes.text


def test_transcript_in_a_details_box_is_kept_out() -> None:
    lines = "".join(
        f"<p>Speaker {n % 2 + 1}: and that was the night the lamp went out, line {n}.</p>"
        for n in range(10)
    )
    body = article(f"<p>{PROSE}</p><details><summary>Transcript</summary>{lines}</details>")
    notes = notes_of(body)
    assert notes.text == PROSE
    assert notes.transcript is not None
    assert notes.transcript[0].speaker == "Speaker 1"


def test_comments_and_author_box_are_dropped() -> None:
    body = article(
        f"<p>{PROSE}</p><div class='author-box'>Written by the editor, who likes boats.</div>"
        "<ol class='commentlist'><li>Great episode, thanks for all the lamps!</li></ol>"
    )
    assert notes_of(body).text == PROSE


@pytest.mark.parametrize(
    "script",
    [
        '<script>window.__NUXT__={{"data":[{{"episode":{{"descriptionHtml":{notes}}}}}]}};'
        "</script>",
        '<script>window.__APOLLO_STATE__ = {{"Episode:42": {{"showNotes": {notes}}}}};</script>',
        "<script id='__NUXT_DATA__' type='application/json'>{{\"x\": {{\"long_description\": "
        "{notes}}}}}</script>",
    ],
)
def test_app_state_notes_replace_a_cut_teaser(script: str) -> None:
    full = (
        f"<p>{PROSE}</p><p>{MORE}</p><p>Sponsor: <a href='https://lamps.example.com/'>Lamps</a>"
        "</p><p>Thanks to the harbour office for the recordings and the archive.</p>"
    )
    head = script.format(notes=json.dumps(full))
    notes = extract_page(page(f"<main><p>{PROSE[:70]}…</p></main>", head), URL)
    assert notes.method == "app-state"
    assert notes.text.endswith("archive.")
    assert [link.url for link in notes.links] == ["https://lamps.example.com/"]
