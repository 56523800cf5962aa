"""Issue #24: rules for kinds of page the first rounds missed, each on its own made-up page
(built from the structure of a kind of site: an app's modal wrapper, a broadcaster's "Show
more" synopsis, a newspaper's standfirst and article body, CSS-in-JS sites that name their
components in data attributes, a broadcaster's cards without a card class, a Gatsby page that
writes the notes in a <footer>). Each test also shows the page the rule must leave alone.
"""

from __future__ import annotations

import json

from podarchive.core.types import PageNotes
from podarchive.read.extract import extract_page

URL = "https://harbourhours.example.org/episodes/42"
PROSE = (
    "Nora and Ilse talk about lighthouse keepers, the last manned beacons on the northern coast,"
    " and what a night on the lamp gallery sounds like when the fog horn starts."
)
MORE = "Later they read letters from a keeper's daughter and follow the supply boat's route."
LINK = "<a href='https://maps.example.net/route'>the supply boat's route map</a>"


def page(body: str, head: str = "") -> str:
    return (
        "<!doctype html><html><head><title>Lighthouses · Harbour Hours</title>"
        f"<meta property='og:site_name' content='Harbour Hours'>{head}</head><body>"
        f"<nav><a href='/'>Home</a></nav>{body}<footer>© Harbour Hours</footer></body></html>"
    )


def notes_of(body: str, head: str = "", feed: str | None = None) -> PageNotes:
    return extract_page(page(body, head), URL, feed_notes=feed)


def json_ld(description: str) -> str:
    data = {"@type": "PodcastEpisode", "name": "Lighthouses", "description": description}
    return f"<script type='application/ld+json'>{json.dumps(data)}</script>"


# --- the page's own words outweigh a class name ----------------------------------------------

MODAL = (
    "<main><h1>Lighthouses</h1><section aria-label='Episode Description'>"
    f"<div class='content-modal__wrapper'><p>{PROSE}</p><p>{MORE}</p></div>"
    "<button>MORE</button></section>"
    "<section><h2>Information</h2><dl><dt>Show</dt><dd>Harbour Hours</dd></dl></section></main>"
)


def test_a_marked_element_holding_the_only_copy_of_the_structured_notes_is_kept() -> None:
    notes = notes_of(MODAL, head=json_ld(f"{PROSE} {MORE}"))
    assert notes.text == f"{PROSE}\n\n{MORE}"
    assert notes.method == "json-ld"


def test_without_a_reference_a_modal_is_furniture() -> None:
    notes = notes_of(MODAL + f"<div class='card'><p>{MORE} {MORE}</p></div>")
    assert PROSE not in notes.text  # the rule above is what kept it


def test_a_marked_element_goes_when_the_reference_survives_elsewhere() -> None:
    body = (
        f"<article><h1>Lighthouses</h1><p>{PROSE}</p><p>{MORE}</p></article>"
        f"<div class='share-panel'><p>{PROSE}</p></div>"
    )
    notes = notes_of(body, head=json_ld(PROSE))
    assert notes.text.count("Nora and Ilse") == 1


# --- a short synopsis, a hidden long one and "Show more" -------------------------------------

SHORT = "Nora and Ilse spend a night with the last lighthouse keepers of the coast."


def synopsis(button: str) -> str:
    return (
        "<article><h1>Lighthouses</h1><div class='synopsis-toggle'>"
        f"<div class='synopsis-toggle__short'><p>{SHORT}</p></div>"
        f"<div class='synopsis-toggle__long' style='display:none'><p>{PROSE}</p><p>{MORE}</p>"
        f"</div>{button}</div></article>"
    )


def test_the_hidden_long_synopsis_behind_show_more_is_the_notes() -> None:
    notes = notes_of(synopsis("<button>Show more</button>"))
    assert notes.text == f"{PROSE}\n\n{MORE}"


def test_without_an_expander_the_hidden_text_stays_hidden() -> None:
    notes = notes_of(synopsis("<button>Download</button>"))
    assert notes.text == SHORT


# --- several small <article>s are cards --------------------------------------------------------

HOST_CARDS = "".join(
    f"<div class='column'><article class='media'><img src='/{name}.jpg'>"
    f"<p><a href='/host/{name}/'><strong>{name.title()}</strong></a><br>{name.title()} keeps"
    " a small boat, a smaller blog and a list of every light on the coast, from Skarv to the"
    " southern capes.</p></article></div>"
    for name in ("nora", "ilse")
)


def test_small_articles_beside_denser_text_are_cards_not_the_notes() -> None:
    body = (
        f"<div class='section'><h1>Lighthouses</h1><div class='content episode-content'>"
        f"<p>{PROSE}</p></div><div class='episode-guests'><h3>Hosts</h3>{HOST_CARDS}"
        "</div></div>"
    )
    notes = notes_of(body)
    assert notes.text == PROSE


def test_the_largest_of_several_long_articles_is_still_the_one() -> None:
    posts = "".join(f"<article><h2>Post {n}</h2><p>{PROSE * n}</p></article>" for n in (1, 3, 2))
    notes = notes_of(posts)
    assert notes.text.count("Nora and Ilse") == 3


# --- a newspaper's standfirst and article body ------------------------------------------------

STANDFIRST = "Two keepers are left on the northern coast. Nora Lind reports on their last winter."


def test_article_body_is_the_notes_and_the_standfirst_leads_them() -> None:
    body = (
        "<main><article><div class='series'><a href='/series/harbour'>Harbour Hours</a>"
        " <span>Series</span></div><h1>The last keepers</h1>"
        f"<div class='dcr-standfirst'><p>{STANDFIRST}</p></div>"
        "<figure class='main-media'><img src='/k.jpg'><figcaption>The lamp at Skarv."
        " Photograph: A. Keeper/Agency</figcaption></figure>"
        "<div class='dcr-meta'><address>Presented by Nora Lind with Ilse Berg; produced by"
        " Ada Holm</address><div class='dcr-date'>Thu 5 Nov 2026 03.00 GMT</div></div>"
        f"<div class='article-body-commercial-selector article-body'><p>{PROSE}</p>"
        f"<p>{MORE} See {LINK}.</p></div></article></main>"
    )
    notes = notes_of(body)
    assert notes.text.startswith(STANDFIRST)
    assert notes.text.endswith("route map.")
    assert "Presented by" not in notes.text
    assert "Photograph" not in notes.text


# --- component names in data attributes --------------------------------------------------------


def test_data_tag_names_the_post_content_and_the_comments() -> None:
    body = (
        "<main><div class='sc-jrAGrp' data-tag='post-card'>"
        "<span data-tag='post-visibility'>Public</span><h1>Lighthouses</h1>"
        "<div data-tag='post-published-at'>Nov 27, 2026</div>"
        f"<div class='sc-egiyK' data-tag='post-content'><p>{PROSE} {LINK}.</p></div>"
        "<div data-tag='post-tags'><a href='/posts?tag=episodes'>episodes</a></div></div>"
        "<section data-tag='content-card-comments'><h2>Comments</h2><div><a href='/u/1'>Gwen"
        "</a><p>My dad was a keeper on this coast, thirty years on the same rock, and he still"
        " talks about the fog horn every single winter evening.</p></div></section></main>"
    )
    notes = notes_of(body)
    assert notes.text == f"{PROSE} the supply boat's route map."
    assert [link.url for link in notes.links] == ["https://maps.example.net/route"]


def test_a_camel_case_component_name_reads_like_a_class() -> None:
    body = (
        "<main><h1>Lighthouses</h1><div data-testid='relatedEpisodes'><p>Another episode about"
        f" harbours and their pilots, with long words to weigh more than the notes here.</p>"
        f"<p>{MORE} {MORE}</p></div>"
        f"<div data-testid='episodeDescription'><p>{PROSE}</p></div></main>"
    )
    notes = notes_of(body)
    assert notes.text == PROSE


# --- captions with credits ------------------------------------------------------------------


def test_a_credited_caption_inside_the_notes_goes() -> None:
    body = (
        f"<article><h1>Lighthouses</h1><div class='entry-content'><p>{PROSE}</p>"
        "<figure><img src='/pier.jpg'><figcaption>The pier at Skarv. Photograph: A. Keeper"
        "</figcaption></figure>"
        "<p class='mediaCaption'>Wollgras im Moor | Bildquelle: Westfunk/H. Schmidt</p>"
        f"<p>{MORE}</p></div></article>"
    )
    notes = notes_of(body)
    assert notes.text == f"{PROSE}\n\n{MORE}"


def test_a_figure_of_the_notes_without_a_credit_stays() -> None:
    body = (
        f"<article><h1>Lighthouses</h1><div class='entry-content'><p>{PROSE}</p>"
        "<figure><img src='/graph.png'><figcaption>Figure 1: the beacons' ranges along the"
        f" coast</figcaption></figure><p>{MORE}</p></div></article>"
    )
    assert "Figure 1" in notes_of(body).text


# --- subtitles and leads ----------------------------------------------------------------------


def test_a_subtitle_with_no_sentence_end_is_not_the_lead() -> None:
    tagline = (
        "Warum die Leuchttürme zurückkommen – mit der Historikerin Dr. Nora Lind-Berg aus Kiel"
    )
    body = (
        f"<article><header><h1>Folge 57</h1><p class='episode-subtitle'>{tagline}</p></header>"
        f"<section class='episode-description'><p>{PROSE}</p></section></article>"
    )
    assert notes_of(body).text == PROSE


def test_a_subtitle_that_is_a_sentence_leads_the_notes() -> None:
    lead = "Nora Lind-Berg on why the lighthouses of the coast are coming back after all."
    body = (
        f"<article><header><h1>Folge 57</h1></header><p class='subtitle'>{lead}</p>"
        "<div class='player'>Play</div>"
        f"<section class='episode-description'><p>{PROSE}</p></section></article>"
    )
    assert notes_of(body).text == f"{lead}\n\n{PROSE}"


# --- the show's boxes after the notes -------------------------------------------------------


def test_a_guests_box_of_its_own_ends_the_notes() -> None:
    body = (
        f"<article><h1>Lighthouses</h1><div class='segment-body'><p>{PROSE}</p></div>"
        "<div class='segment-guests'><h3>Guests</h3><div class='guest'><span>Nora Lind"
        "</span><span>Former keeper, Skarv light</span></div></div></article>"
    )
    assert notes_of(body).text == PROSE


def test_a_guests_heading_in_the_notes_own_flow_is_theirs() -> None:
    body = (
        f"<article><h1>Lighthouses</h1><div class='entry-content'><p>{PROSE}</p>"
        "<h3>Guests</h3><ul><li><a href='https://nora.example.net/'>Nora Lind</a>, keeper"
        "</li></ul></div></article>"
    )
    notes = notes_of(body)
    assert notes.text.endswith("Nora Lind, keeper")
    assert [link.url for link in notes.links] == ["https://nora.example.net/"]


def test_a_german_about_the_show_box_ends_the_notes() -> None:
    body = (
        f"<main><div class='text'><p>{PROSE}</p><p>{MORE}</p></div>"
        "<div class='box'><h2 class='boxTitle'>Über die Sendung</h2><p>Harbour Hours erklärt"
        " jeden Werktag ein Thema aus der Seefahrt.</p></div></main>"
    )
    assert notes_of(body).text == f"{PROSE}\n\n{MORE}"


# --- the feed's span stops where the notes' words run out ------------------------------------


def test_the_feed_block_stops_before_cards_that_repeat_the_shows_words() -> None:
    feed = f"<p>{PROSE}</p><p>{MORE}</p>"
    cards = "".join(
        f"<div class='col'><a href='/episodes/{n}'><h4>{n}: The keepers of the coast</h4></a>"
        "<p>Nora and Ilse talk about the lamp and the fog on the northern coast.</p></div>"
        for n in (41, 40, 39)
    )
    body = (
        f"<div class='container episode-content'><div id='show-notes'>{feed}</div></div>"
        f"<section class='more-episodes container'><h2>From Harbour Hours</h2>"
        f"<div class='row'>{cards}</div></section>"
    )
    notes = notes_of(body, feed=feed)
    assert notes.method == "feed-match"
    assert notes.text == f"{PROSE}\n\n{MORE}"


# --- a broadcaster's cards with no card class ---------------------------------------------------


def broadcaster_card(number: int) -> str:
    return (
        f"<div class='c-epi'><div class='c-pl-a'><button>Play</button></div><div>"
        f"<h2><a href='/audio/{number}/'>Another morning show, part {number}</a></h2>"
        "<p>A colleague of the team has a problem with her daughter, who keeps on...</p>"
        f"<p><strong>10/06/2024</strong> | <span>07:0{number}</span></p></div>"
        "<div class='c-sh'><p>El código iframe se ha copiado en el portapapeles</p>"
        f"<p class='emb'>&lt;iframe src=\"https://harbourhours.example.org/embed/{number}/\""
        ' width="100%"&gt;&lt;/iframe&gt;</p></div></div>'
    )


def test_a_set_of_cards_linking_within_the_site_goes_whatever_its_class() -> None:
    body = (
        f"<main><h1>Lighthouses</h1><p class='dt'>16/09/2016</p><div class='cnt-txt'>"
        f"<p>{PROSE}</p></div>{broadcaster_card(1)}<div class='lst-epi'><p>Episodios"
        f" anteriores</p><ul><li>{broadcaster_card(2)}</li><li>{broadcaster_card(3)}</li></ul>"
        "</div></main>"
    )
    notes = notes_of(body)
    assert notes.text == PROSE
    assert notes.links == ()


def test_linked_headings_to_other_sites_in_the_notes_stay() -> None:
    books = "".join(
        f"<div class='book'><h3><a href='https://books.example.net/{n}'>Book {n}</a></h3>"
        f"<p>A keeper's memoir, number {n}.</p></div>"
        for n in (1, 2)
    )
    body = f"<article><h1>Lighthouses</h1><div class='entry-content'><p>{PROSE}</p>{books}"
    body += "</div></article>"
    notes = notes_of(body)
    assert [link.url for link in notes.links] == [
        "https://books.example.net/1",
        "https://books.example.net/2",
    ]


def test_embed_code_and_a_clipboard_notice_are_never_notes() -> None:
    body = (
        f"<article><h1>Lighthouses</h1><div class='entry-content'><p>{PROSE}</p>"
        "<p>Link copied to clipboard</p>"
        '<p>&lt;iframe src="https://player.example.net/42" width="100%"&gt;&lt;/iframe&gt;'
        f"</p><p>{MORE}</p></div></article>"
    )
    assert notes_of(body).text == f"{PROSE}\n\n{MORE}"


# --- notes written in a <footer> ------------------------------------------------------------

TOPICS = (
    "<ul><li><a class='podcast_time'>0:40</a> - Lamps: <a href='https://lamps.example.net/'>"
    "Fresnel</a></li><li><a class='podcast_time'>11:40</a> - Fog horns and their keepers</li>"
    "<li><a class='podcast_time'>13:35</a> - The supply boat's winter route</li></ul>"
)


def test_notes_in_a_footer_inside_main_are_found_when_nothing_else_is() -> None:
    body = (
        "<main><div><header><h3>#1 — Lighthouses</h3><date>28 July</date></header>"
        f"<div><audio controls src='/1.mp3'></audio></div><footer class='_3QctX0'>{TOPICS}"
        "</footer></div></main>"
    )
    notes = notes_of(body)
    assert notes.text.startswith("0:40 - Lamps: Fresnel")
    assert [link.url for link in notes.links] == ["https://lamps.example.net/"]


def test_a_posts_footer_still_goes_when_the_notes_are_found() -> None:
    body = (
        f"<main><article><h1>Lighthouses</h1><p>{PROSE}</p><footer>Posted in Episodes by the"
        " editor, tagged keepers and lamps</footer></article></main>"
    )
    assert notes_of(body).text == PROSE


# --- round two: what set 8 showed ---------------------------------------------------------------


def test_a_structured_summary_that_is_the_pages_subtitle_heading_is_not_the_notes() -> None:
    subtitle = "An economist on flock sizes, feed prices, bird flu and the thirty-cent question"
    body = (
        f"<article class='post'><div class='post-header'><h1>Eggs</h1>"
        f"<h3 class='subtitle'>{subtitle}</h3><div>Harriet Osei · Feb 08, 2024</div></div>"
        f"<div class='available-content'><div class='body markup'><p>{PROSE}</p>"
        f"<p>{MORE} See {LINK}.</p></div></div></article>"
    )
    notes = notes_of(body, head=json_ld(subtitle))
    assert notes.text == f"{PROSE}\n\n{MORE} See the supply boat's route map."


def test_a_sidebar_of_episode_summaries_is_still_furniture() -> None:
    summaries = "".join(
        f"<div class='e-item'><a class='e-title' href='/e/{n}/'>Ep {n}</a>"
        f"<div class='e-summary'>{PROSE} {MORE} {MORE}</div></div>"
        for n in (41, 40)
    )
    body = (
        f"<div class='main-wrap'><div class='post'><h2>Ep 42</h2><div class='entry-content'>"
        f"<p>{MORE}</p></div></div><div class='col-md-4 sidebar'>{summaries}</div></div>"
    )
    assert notes_of(body).text == MORE


CHAPTERS = (
    "<h3>Topics</h3><ul><li>(00:00) – Intro</li><li>(02:41) – The lamp that leaked</li>"
    "<li>(11:30) – Building the fog horn</li></ul>"
)


def test_topics_over_time_coded_lines_are_the_notes_chapters() -> None:
    body = (
        f"<article><h1>Lighthouses</h1><div class='entry-content'><p>{PROSE}</p>{CHAPTERS}"
        f"<h3>Links</h3><ul><li>{LINK}</li></ul></div></article>"
    )
    notes = notes_of(body)
    assert "(11:30) – Building the fog horn" in notes.text
    assert [link.url for link in notes.links] == ["https://maps.example.net/route"]


def test_topics_as_a_list_of_tags_still_end_the_notes() -> None:
    body = (
        f"<article><h1>Lighthouses</h1><div class='entry-content'><p>{PROSE}</p><p>{MORE}</p>"
        "<h3>Topics</h3><ul><li><a href='/topics/sea'>Sea</a></li><li><a href='/topics/light'>"
        "Light</a></li></ul></div></article>"
    )
    assert notes_of(body).text == f"{PROSE}\n\n{MORE}"


def test_the_feeds_first_paragraph_leads_to_the_rest_of_its_container() -> None:
    long_paragraph = f"{PROSE} {MORE} {PROSE}"  # long enough not to be a summary
    feed = f"<p>{long_paragraph}</p>"
    body = (
        "<main><section class='episode-header'><h1>Lighthouses</h1></section>"
        f"<section class='episode-content'><h2>Show Notes</h2><div class='body'>"
        f"<p>{long_paragraph}</p>{CHAPTERS}<h3>Links</h3><ul><li>{LINK}</li></ul>"
        "<p>Harbour Hours is hosted by Nora Lind.</p></div></section></main>"
    )
    notes = notes_of(body, feed=feed)
    assert notes.method == "feed-match"
    assert notes.text.endswith("Harbour Hours is hosted by Nora Lind.")
    assert [link.url for link in notes.links] == ["https://maps.example.net/route"]


def test_a_row_of_action_links_is_furniture() -> None:
    body = (
        f"<article><h1>Lighthouses</h1><p class='lead'>{PROSE}</p><div class='episode-actions'>"
        "<a href='https://cdn.example.org/42.mp3'>Download MP3</a> <a href='/s/42'>Share</a>"
        f" <a href='#transcript'>Transcript</a></div><div class='body'><p>{MORE}</p></div>"
        "</article>"
    )
    assert "Download" not in notes_of(body).text


def test_the_teams_own_box_ends_the_notes() -> None:
    body = (
        f"<article><h1>Les phares</h1><div class='content'><p>{PROSE}</p><p>{MORE}</p></div>"
        "<section class='Credits'><h2 class='Credits-title'>L'équipe</h2><ul><li>Margaux"
        " Delacroix, production</li><li>Théo Gaillac, réalisation</li></ul></section></article>"
    )
    assert notes_of(body).text == f"{PROSE}\n\n{MORE}"


# --- structured data: plain-text URLs, an app's own JSON state, the run's first lines ----------


def test_urls_written_in_a_plain_text_description_become_links() -> None:
    description = f"{PROSE}\\nThe route map: https://maps.example.net/route.\\n{MORE}"
    state = (
        '<script>var ytInitialPlayerResponse = {"videoDetails": {"shortDescription": '
        f'"{description}"}}}};</script>'
    )
    notes = notes_of("<div id='app'></div>" + state)
    assert notes.method == "app-state"
    assert [link.url for link in notes.links] == ["https://maps.example.net/route"]
    assert "route map: https://maps.example.net/route." in notes.text


def test_an_apps_own_json_state_with_an_html_description_is_read() -> None:
    html = f"<p>{PROSE}</p><p>{MORE} See {LINK}.</p>"
    state = {"entities": {"items": {"episode:1": {"htmlDescription": html}}}}
    script = f"<script id='initial-state' type='application/json'>{json.dumps(state)}</script>"
    teaser = f"<main><h1>Lighthouses</h1><p>{PROSE[:90]} …</p></main>"
    notes = notes_of(teaser + script)
    assert notes.method == "app-state"
    assert [link.url for link in notes.links] == ["https://maps.example.net/route"]


def test_a_json_script_without_a_notes_field_is_not_parsed_as_notes() -> None:
    state = {"session": {"accessToken": "", "description": "A long session description " * 9}}
    script = f"<script id='session' type='application/json'>{json.dumps(state)}</script>"
    notes = notes_of(f"<article><h1>Lighthouses</h1><p>{PROSE}</p></article>{script}")
    assert notes.text == PROSE


def test_the_feeds_run_does_not_start_at_the_shows_link_or_a_meta_line() -> None:
    feed = f"<p>{PROSE}</p><p>{MORE}</p><p>Harbour Hours Lighthouse Stories is ad-free.</p>"
    body = (
        "<main><div class='headings'><h1>Lighthouse keepers</h1><div class='subtitles'>"
        "<a href='/show'>"
        "Harbour Hours Lighthouse Stories</a></div><div class='meta'><span>38 min</span>"
        f" <span>Explicit</span></div></div><div class='paragraph'>{feed}</div></main>"
    )
    notes = notes_of(body, feed=feed)
    assert notes.text.startswith("Nora and Ilse")
    assert notes.links == ()


# --- round three: what real set 4 showed ---------------------------------------------------------


def test_an_archive_of_older_episodes_goes_however_long() -> None:
    archive = "".join(
        f"<li><a href='/episode-{n}-keepers-and-lamps/'>Episode {n}: “Keepers and lamps, part"
        f" {n}” mit Gast {n}</a></li>"
        for n in range(1, 18)
    )
    body = (
        f"<article><h1>Folge 18</h1><div class='entry-content'><p>{PROSE} {LINK}.</p>"
        f"<div class='su-spoiler'><div class='su-spoiler-title' role='button'><span></span>"
        f"Ältere Podcast-Folgen</div><div class='su-spoiler-content'><ul>{archive}</ul></div>"
        "</div><p>Abonniere doch am besten unseren Podcast-Feed:</p></div></article>"
    )
    notes = notes_of(body)
    assert notes.text == f"{PROSE} the supply boat's route map."
    assert [link.url for link in notes.links] == ["https://maps.example.net/route"]


def test_own_episode_links_under_a_heading_of_the_notes_stay() -> None:
    mentioned = "".join(
        f"<li><a href='/episodes/{n}'>Episode {n}: the keepers</a></li>" for n in range(5)
    )
    body = (
        f"<article><h1>Lighthouses</h1><div class='entry-content'><p>{PROSE}</p>"
        f"<h3>Mentioned in this episode</h3><ul>{mentioned}</ul></div></article>"
    )
    assert len(notes_of(body).links) == 5


def test_the_title_again_a_counter_and_tag_chips_under_the_notes_go() -> None:
    body = (
        f"<article><h1>Lighthouse keepers of the coast</h1><div class='entry-content'>"
        f"<p>{PROSE}</p><p>{MORE}</p><p>Lighthouse keepers of the coast</p>"
        "<p><a class='rounded-label' href='/podcasts-historia_1.html'>historia</a>"
        " <a class='rounded-label' href='/podcasts-faros_2.html'>faros</a></p>"
        "<p>Este audio le gusta a: 187 usuarios</p><div><a href='#'>Mostrar Ocultar</a></div>"
        "</div></article>"
    )
    notes = notes_of(body)
    assert notes.text == f"{PROSE}\n\n{MORE}"
    assert notes.links == ()


def test_the_sites_licence_box_ends_the_notes() -> None:
    body = (
        f"<main><div class='episode'><p>{PROSE}</p><p>{MORE}</p></div><div class='about'>"
        "<h2>Atribuição e licenças</h2><p>O website é produzido por Tiago e o código está"
        " licenciado nos termos da <a href='https://example.org/LICENSE'>Licença MIT</a>.</p>"
        "</div></main>"
    )
    notes = notes_of(body)
    assert notes.text == f"{PROSE}\n\n{MORE}"
    assert notes.links == ()


def test_a_lead_far_below_the_headline_in_its_header_is_found() -> None:
    clutter = "".join(
        f"<span class='post-meta-item'><span class='icon'><i class='fa'></i></span>"
        f"<span class='post-meta-item-text'>meta {n}</span></span>"
        for n in range(20)
    )
    lead = "我们经常可以看到在咸鱼拼多多里面看到便宜市场价7折甚至更低折扣的产品，而这些卖家的货源渠道到底是哪里的来的呢？"
    body = (
        "<div role='dialog' class='cookie'><h1>Your privacy</h1><p>We use cookies.</p></div>"
        f"<article><header class='post-header'><h1>#5 货源</h1><div class='post-meta'>{clutter}"
        f"</div><div class='post-description'>{lead}</div></header>"
        f"<div class='post-body'><p>{PROSE}</p></div></article>"
    )
    notes = notes_of(body)
    assert notes.text == f"{lead}\n\n{PROSE}"


def test_a_teaser_card_outside_the_headlines_block_is_no_lead() -> None:
    body = (
        f"<div><article><div><h1>Lighthouses</h1></div><div class='storytext'><p>{PROSE}</p>"
        "</div></article></div><aside class='more'><article class='item'><h2><a href='/x'>"
        "Another story</a></h2><p class='teaser'>Low water has revealed boats, bones and a"
        " landing craft from the war.</p></article></aside>"
    )
    assert notes_of(body).text == PROSE


# --- round four: what set 9 showed -----------------------------------------------------------


def next_data(episode: dict[str, object]) -> str:
    data = {"props": {"pageProps": {"episode": episode}}}
    return f"<script id='__NEXT_DATA__' type='application/json'>{json.dumps(data)}</script>"


def test_a_plain_json_summary_gives_way_to_the_longer_notes_on_the_page() -> None:
    summary = f"{' '.join(PROSE.split()[:13])} the coast. They explain the fog."
    body = (
        f"<main><h1>Lighthouses</h1><div class='css-1x2y3z'><p>{PROSE}</p>"
        f"<p>{MORE} See {LINK}.</p></div></main>" + next_data({"description": summary})
    )
    notes = notes_of(body)
    assert notes.text.startswith(PROSE)
    assert [link.url for link in notes.links] == ["https://maps.example.net/route"]


def test_a_plain_json_description_is_the_notes_when_the_page_shows_none() -> None:
    body = "<main><div id='player'></div></main>" + next_data({"description": PROSE})
    notes = notes_of(body)
    assert notes.text == PROSE
    assert notes.extractor == "simplecast"


def test_a_footer_named_for_the_notes_inside_the_post_is_kept() -> None:
    body = (
        "<div class='layout'><article class='post-show'><h1>Boxing Day derby</h1>"
        "<div class='meta'>26 Dec 2023 · 48 mins</div>"
        f"<footer class='post-show__description'><p>{PROSE}</p></footer></article>"
        "<aside><h3>More episodes</h3><ul><li><a href='/posts/1'>Christmas quiz</a> 20 Dec"
        "</li><li><a href='/posts/2'>Draw reaction</a> 13 Dec</li></ul></aside></div>"
    )
    assert notes_of(body).text == PROSE


def test_tags_and_comments_headings_end_the_notes() -> None:
    body = (
        f"<main><h1>Il prezzo del grano</h1><div class='Cu4ob'><div class='xP8ra'>{PROSE}</div>"
        "</div><div class='Cu4ob'><h2>Tag</h2><div><a href='/tag/pasta'>pasta</a></div></div>"
        "<section class='Cu4ob'><h2>Commenti (3)</h2><ul><li><strong>marta_b</strong><p>Puntata"
        " bellissima, finalmente qualcuno che spiega come funzionano i listini del grano duro."
        "</p></li></ul></section></main>"
    )
    assert notes_of(body).text == PROSE


def test_an_episode_in_window_state_gives_its_html_description() -> None:
    episode = {
        "title": "Ep 88",
        "duration": 4001,
        "description": f"<p>{PROSE}</p><p>{MORE} See {LINK}.</p>",
    }
    state = {"station": {"podcastName": "Two Dads"}, "episodePreview": episode}
    script = f"<script>window.__STATE__ = {json.dumps(state)};</script>"
    body = f"<main><h1>Ep 88</h1><p class='clamp'>{PROSE[:80]}…</p></main>{script}"
    notes = notes_of(body)
    assert notes.method == "app-state"
    assert [link.url for link in notes.links] == ["https://maps.example.net/route"]


def test_the_feeds_run_does_not_open_on_a_header_the_notes_repeat() -> None:
    feed = (
        f"<p>{PROSE}</p><p>Listen to Harbour Hours ad-free on Harbour+. Start your trial in"
        " the Harbour App, Apple Podcasts or Spotify.</p>"
    )
    body = (
        "<main><div class='sc-1'><span>Listen on</span><a href='https://podcasts.apple.com/x'>"
        "Apple Podcasts</a><a href='https://open.spotify.com/show/x'>Spotify</a>"
        "<a href='https://harbourhours.example.org/app/'>Harbour App</a></div>"
        "<div class='sc-2'><a href='/shows/harbour-hours/'>Harbour Hours: the keepers of the"
        " northern coast</a><div>Episode 3</div><h1>Lighthouse keepers</h1>"
        f"<div class='sc-3'>{feed}</div></div></main>"
    )
    notes = notes_of(body, feed=feed)
    assert notes.text.startswith("Nora and Ilse")
    assert notes.links == ()


# --- round five: what real set 5 showed ------------------------------------------------------


LONG = f"{PROSE} {MORE} {PROSE.replace('Nora', 'Then Nora')}"


def test_a_structured_description_of_the_first_paragraph_leads_to_the_whole_post() -> None:
    sections = "".join(
        f"<section><hr><h3>Part {n}</h3><p>{MORE} {n}</p><ul><li>{LINK}</li></ul></section>"
        for n in (1, 2, 3)
    )
    body = (
        f"<article><h1>Ep 10</h1><div class='post-content'><section><p>{LONG}</p>"
        f"<p>Read it all on the site.</p></section>{sections}</div></article>"
    )
    notes = notes_of(body, head=json_ld(LONG))  # long enough not to be a summary
    assert notes.text.startswith(LONG)
    assert "Part 3" in notes.text


def test_cjk_lines_count_as_prose_for_the_longer_block() -> None:
    lead = (
        "和我一样也是主播的育承有一档叫做足元注意的播客。今天的节目分为两部分，前半部分是工具箱。"
    )
    lines = "".join(
        f"<p>{n}：这是一段关于播客制作流程的详细说明，包括录音、剪辑和发布的经验。</p>"
        for n in range(8)
    )
    body = (
        f"<article><h1>第十期</h1><div class='post-content'><section><p>{lead}</p></section>"
        f"<section><h3>时间轴</h3>{lines}</section></div></article>"
    )
    notes = notes_of(body, head=json_ld(lead))
    assert "7：这是一段" in notes.text


def test_card_links_wrapping_a_whole_card_go() -> None:
    cards = "".join(
        f"<a class='ep-card' href='/episodes/{n}.html'><img src='/{n}.jpg'><div>#{n}"
        f" Another episode</div><p>Keepers and lamps, episode {n}, with guests.</p></a>"
        for n in (40, 41)
    )
    body = (
        f"<main><h1>Ep 42</h1><div class='about'><p>{PROSE}</p></div><section><h2>Listen next</h2>"
        f"<div class='ep-grid'>{cards}</div></section></main>"
    )
    notes = notes_of(body)
    assert notes.text == PROSE
    assert notes.links == ()


def test_a_cjk_date_and_an_open_in_app_line_are_not_notes() -> None:
    body = (
        "<main><div class='card'><h1>EP12</h1><p class='text-gray'> 2024年2月4日 </p>"
        f"<div class='prose'><p>{PROSE}</p><p>{MORE}</p>"
        "<p><a href='https://listen.style/p/magicalfm/ep12'>LISTENで開く</a></p></div></div>"
        "<section><h2>パーソナリティ</h2><div><p>@michiru_da</p><p>関西人のプロダクトマネージャー"
        "</p></div></section></main>"
    )
    notes = notes_of(body)
    assert notes.text == f"{PROSE}\n\n{MORE}"
    assert notes.links == ()


# --- round six: what set 10 showed ------------------------------------------------------------


def test_a_box_like_the_notes_that_opens_with_other_episodes_is_not_joined() -> None:
    others = "".join(
        f"<li><a href='/play/audios/ep-{n}/'><span>Another night {n}</span></a>"
        f"<span>14 mar 2024 · 52:48</span><p>Hay islas en España donde vive una sola familia,"
        f" episodio {n}, con testimonios de marineros.</p></li>"
        for n in range(3)
    )
    body = (
        f"<main><div class='wrap'><div class='mod textMod'><p>{LONG}</p><p>{MORE}</p></div>"
        f"<div class='ad'></div><div class='mod relatedMod'><h2>Otros audios de Las noches"
        f" del faro</h2><ul>{others}</ul></div></div></main>"
    )
    assert notes_of(body).text == f"{LONG}\n\n{MORE}"


def test_a_manuscript_heading_after_the_notes_ends_them() -> None:
    body = (
        f"<article><h1>Moore</h1><div class='text'><p>{PROSE}</p><p>{MORE}</p></div>"
        "<section class='b-manuscript'><h2>Manuskript zur Sendung</h2><p>Diese Sendung wurde"
        " zuerst am 4. Februar 2024 ausgestrahlt.</p></section></article>"
    )
    assert notes_of(body).text == f"{PROSE}\n\n{MORE}"


def test_another_next_js_site_with_a_show_notes_heading_reads_its_own_notes_field() -> None:
    html = f"<p>{PROSE}</p><p>{MORE} See {LINK}.</p>"
    script = next_data({"title": "Ep 112", "notesHtml": html})
    body = f"<main><h1>Ep 112</h1><h2>Show notes</h2><p class='clamp'>{PROSE[:90]}…</p></main>"
    notes = notes_of(body + script)
    assert notes.method == "app-state"
    assert [link.url for link in notes.links] == ["https://maps.example.net/route"]


# --- round seven: what set 11 showed ------------------------------------------------------------

SYNOPSIS = "Nora and Ilse walk the old drove road from the lighthouse to the harbour."
HERO = (
    f"<section class='herospace'><h1>The Ferryman's Daughter</h1><p class='short'>{SYNOPSIS}"
    "</p><p class='meta'>Released On: 17 Mar 2024 · 28 mins</p></section>"
    "<div class='player'><audio src='/a.mp3'></audio></div>"
)
LONG_SYNOPSIS = f"<section class='synopsis'><div class='long'><p>{LONG}</p><p>{MORE}</p></div>"
LONG_SYNOPSIS += "</section>"


def test_a_structured_summary_in_the_hero_gives_way_to_the_long_synopsis() -> None:
    notes = notes_of(f"<div>{HERO}</div><main>{LONG_SYNOPSIS}</main>", head=json_ld(SYNOPSIS))
    assert notes.text == f"{LONG}\n\n{MORE}"


def test_korean_and_japanese_sections_after_the_notes_end_them() -> None:
    for heading in (
        "이 채널의 다른 에피소드",
        "レター（3）",
        "このチャンネルの放送",
        "Popular Now in Radio",
    ):
        body = (
            f"<article><h1>133화</h1><div class='episode-desc'><p>{PROSE}</p><p>{MORE}</p></div>"
            f"<div class='more'><h4>{heading}</h4><ul><li><a href='/e/132'>132화. 강릉 순두부"
            "</a></li><li><a href='/e/131'>131화. 전주 콩나물국밥</a></li></ul></div></article>"
        )
        assert notes_of(body).text == f"{PROSE}\n\n{MORE}", heading


def test_a_caption_with_a_credit_element_goes() -> None:
    body = (
        f"<article><h1>Outports</h1><div class='story'><p>{PROSE}</p><figure><img src='/h.jpg'>"
        "<figcaption class='image-caption'>Saltbox houses above the harbour. <span class='credit'>"
        f"(Bernadette Coady/CNB)</span></figcaption></figure><p>{MORE}</p></div></article>"
    )
    assert notes_of(body).text == f"{PROSE}\n\n{MORE}"


def test_siblings_sharing_only_an_atomic_class_are_not_joined() -> None:
    comment = (
        "ゆず: 取り上げてくださってありがとうございます！野菜室に移したら、ちゃんと膨らみました。"
    )
    body = (
        "<div id='root'><div class='css-view-1dbjc4n'>"
        f"<div class='css-text-146c3p1 r-rjixqe'>{LONG}</div>"
        "<div class='css-view-1dbjc4n r-18u37iz'><img src='/ad.png'></div>"
        f"<div class='css-text-146c3p1'>{comment * 3}</div></div></div>"
    )
    assert notes_of(body).text == LONG


# --- notes in named boxes: a description, then a box of show notes --------------------------

BOXES = (
    "<article><h1>Lighthouses</h1><div class='episode-player'><audio></audio></div>"
    f"<div class='episode-description'><p>{PROSE}</p><p>{MORE}</p></div>"
    f"<div class='episode-shownotes'><h2>Links</h2><ul><li>{LINK}</li></ul>"
    "<h2>Chapters</h2><ol><li>00:00 Hello</li><li>12:30 The lamp gallery</li></ol></div>"
    "<div class='episode-downloads'><a href='https://cdn.example.net/42.mp3'>MP3</a></div>"
    "</article>"
)


def test_a_box_of_show_notes_after_the_description_box_is_part_of_the_notes() -> None:
    for feed in (None, PROSE):
        notes = notes_of(BOXES, feed=feed)
        assert notes.text.startswith(PROSE)
        assert notes.text.endswith("12:30 The lamp gallery")
        assert [link.url for link in notes.links] == ["https://maps.example.net/route"]


def test_a_box_after_the_notes_named_for_the_show_is_left_out() -> None:
    body = BOXES.replace("episode-shownotes", "show-description")
    notes = notes_of(body)
    assert notes.text == f"{PROSE}\n\n{MORE}"


# --- a line that tells how to play the episode is the player's ---------------------------------


def test_an_instruction_to_play_the_episode_is_not_notes() -> None:
    body = (
        "<article><h1>Lighthouses</h1><p class='plisten'>Click the image to listen to this"
        f" episode...</p><p>{PROSE}</p><p>{MORE}</p></article>"
    )
    assert notes_of(body).text == f"{PROSE}\n\n{MORE}"


def test_a_sentence_that_sends_to_another_recording_stays() -> None:
    line = "Click here to listen to our interview with the keeper's daughter."
    body = f"<article><h1>Lighthouses</h1><p>{PROSE}</p><p>{line}</p><p>{MORE}</p></article>"
    assert notes_of(body).text == f"{PROSE}\n\n{line}\n\n{MORE}"


# --- a broadcaster's short synopsis under the headline is the lead of the long one -------------

LEAD_HERO = (
    "<div class='page'><section class='c-hero'><div class='c-hero__details'>"
    "<h1>Lighthouses</h1><p class='c-hero__short-synopsis'>Two friends climb a tower above"
    " the fjord, with tea, a radio and old logbooks.</p><p class='c-hero__meta'>Released 3 May · 28 mins</p></div>"
    "</section><div class='c-player'><button>Play</button></div>"
    f"<section class='c-details'><div class='c-details__long'><p>{PROSE}</p><p>{MORE}</p>"
    "<p>Presenter: Nora Lind<br>Producer: Ilse Berg</p></div></section></div>"
)


def test_a_feed_summary_that_is_the_lead_under_the_headline_opens_the_long_synopsis() -> None:
    summary = (
        "<p>Two friends climb a tower above the fjord, with tea, a radio and old logbooks.</p>"
    )
    for feed in (summary, None):
        notes = notes_of(LEAD_HERO, feed=feed)
        assert notes.text.startswith("Two friends climb a tower")
        assert PROSE in notes.text
        assert notes.text.endswith("Producer: Ilse Berg")


# --- a long description under the headline, the show notes in a section after ----------------


def test_a_long_description_in_the_episode_box_leads_the_show_notes_section_after_it() -> None:
    sentence = "Keepers {} wrote the weather down every {} hours, and their logbooks {} survive in the archive."
    words = ("of Ushant", "of Sein", "at the Jument", "on Kéréon", "at Ar-Men", "at Tévennec")
    description = " ".join(sentence.format(w, n, w) for n, w in enumerate(words, start=2))
    assert 600 < len(description) < 1000
    notes_section = "".join(f"<p>{line}</p>" for line in (PROSE, LONG, MORE))
    body = (
        "<main><article class='post'><h1>Lighthouses</h1><article class='episode'>"
        "<div class='episode-player'><iframe src='https://embed.example.net/42'></iframe></div>"
        "<ul class='episode-actions'><li><a href='https://x.example/share'>Share</a></li></ul>"
        f"<div class='episode-description'>{description}<div class='date'>Published: May 3"
        "</div></div></article><section class='episode-notes'><h2>Show Notes</h2>"
        f"{notes_section}<p>The route: {LINK}.</p></section></article></main>"
    )
    notes = notes_of(body)
    assert notes.text.startswith("Keepers of Ushant")
    assert notes.text.endswith("The route: the supply boat's route map.")
    assert "https://maps.example.net/route" in [link.url for link in notes.links]


# --- a broadcaster's segment page: the story's header lines above one sentence ----------------

SENTENCE = "Keepers on the northern coast are training as pilots so that the harbour can stay open."


def test_comments_that_mark_where_a_cms_block_ends_do_not_stop_the_header_trim() -> None:
    body = (
        "<article class='story'><div class='storytitle'><h1>Keepers</h1></div>"
        "<!-- END CLASS='STORYTITLE' --><div class='meta'><time>May 3, 2024 6:01 PM ET</time>"
        f"</div><!-- END CLASS='META' --><div class='storytext'><p>{PROSE}</p></div></article>"
    )
    assert notes_of(body).text == PROSE


def test_a_line_naming_the_programme_that_aired_the_segment_is_not_notes() -> None:
    body = (
        "<article class='story'><h1>Keepers</h1><div class='program-block'>Heard on <a"
        " href='https://radio.example.org/programs/morning'>Morning Harbour</a></div>"
        f"<div class='storytext'><p>{PROSE}</p></div></article>"
    )
    assert notes_of(body).text == PROSE


def test_a_long_headline_does_not_use_up_the_header_trim_of_a_one_sentence_segment() -> None:
    headline = "Keepers on the northern coast are training as harbour pilots this winter"
    body = (
        f"<article class='story'><h1>{headline}</h1><div class='dateblock'><time>May 3, 2024"
        "</time> <span>6:01 PM ET</span></div><h3 class='slug'><a href='/coast/'>Coast and Sea</a></h3>"
        f"<div class='storytext'><p>{SENTENCE}</p></div></article>"
    )
    assert notes_of(body).text == SENTENCE


# --- what set 13 showed -----------------------------------------------------------------------


def test_a_platform_s_ai_summary_under_the_headline_is_not_the_lead() -> None:
    body = (
        "<main><h1>Lighthouses</h1><section class='summary'><h2>Summary</h2><p class='summary-text'>"
        "Two hosts discuss lighthouses and the keepers who lived in them for many decades.</p>"
        "<p class='note'>This summary was generated by AI.</p></section>"
        f"<section class='about'><h2>Overview</h2><div class='description'><p>{PROSE}</p>"
        f"<p>{MORE}</p></div></section></main>"
    )
    assert notes_of(body).text == f"{PROSE}\n\n{MORE}"


def test_camel_case_component_classes_name_furniture_inside_the_body() -> None:
    body = (
        f"<article><h1>Lighthouses</h1><div class='RichTextArticleBody'><p>{PROSE}</p>"
        "<div class='Enhancement'><div class='PromoNewsletter'><h3>Get the Morning Brief</h3>"
        "<p>The day's local news, in your inbox before 7 a.m.</p></div></div>"
        f"<p>{MORE}</p></div><div class='ArticlePage-authorInfo'><div class='AuthorInfo'>"
        "<a href='/people/nora'>Nora Lind</a><p>Nora Lind has hosted the programme since"
        " 2014. Before that she covered city hall for the evening paper.</p></div></div>"
        "</article>"
    )
    assert notes_of(body).text == f"{PROSE}\n\n{MORE}"


def test_more_episodes_headings_in_nordic_dutch_and_polish_end_the_notes() -> None:
    headings = ("Fler avsnitt", "Flere episoder", "Meer afleveringen", "Więcej odcinków")
    for heading in (*headings, "Diğer Bölümler", "Další díly", "Другие выпуски"):
        body = (
            f"<article><h1>Lighthouses</h1><div class='text'><p>{PROSE}</p><p>{MORE}</p>"
            f"<h2>{heading}</h2><ul><li><a href='/ep/41'>The Salt Road</a> 15 mars 2026</li>"
            "<li><a href='/ep/40'>Over the Tops</a> 8 mars 2026</li></ul></div></article>"
        )
        assert notes_of(body).text == f"{PROSE}\n\n{MORE}", heading


CHARTS = "<a href='https://maps.example.net/route'>Harbour charts, 1890 to 1930</a>"


def test_full_feed_notes_go_on_into_the_show_notes_links_after_them_not_the_chapters() -> None:
    feed = f"<p>{PROSE}</p><p>{MORE}</p><p>{PROSE.replace('Nora', 'Later Nora')}</p>"
    body = (
        "<article><h1>Lighthouses</h1><div class='entry-content'>"
        f"<div class='episode-summary'>{feed}</div><h2>Shownotes</h2><ul><li>{CHARTS}</li></ul>"
        "<div class='chapters'><h3>Kapitel</h3><ol><li>00:00:00 Intro</li></ol></div>"
        "<div class='contributors'><h3>Mitwirkende</h3><table><tr><td>Nora Lind</td>"
        "<td>Moderation</td><td><a href='https://social.example/@nora'>Mastodon</a></td></tr>"
        "<tr><td>Ilse Berg</td><td>Moderation</td></tr></table></div>"
        "<div class='downloads'><h3>Download</h3><a href='/42.mp3'>MP3 Audio (48 MB)</a></div>"
        "</div></article>"
    )
    notes = notes_of(body, feed=feed)
    assert notes.text.endswith("Shownotes\n\nHarbour charts, 1890 to 1930")
    assert [link.url for link in notes.links] == ["https://maps.example.net/route"]


# --- what real set 7 showed: a broadcaster's page whose content sits in a "share" zone ----------


def test_furniture_inside_an_element_kept_for_the_notes_it_holds_still_goes() -> None:
    body = (
        "<main><h1>Lighthouses</h1><div class='share-zone'><div class='prose'>"
        f"<p>{PROSE}</p><div class='newsletter'><p>The harbour letter, every Friday morning"
        " in your inbox, with the week's tides and the keepers' news.</p></div>"
        f"<p>{MORE}</p></div></div></main>"
    )
    notes = notes_of(body, head=json_ld(f"{PROSE} {MORE}"))
    assert notes.text == f"{PROSE}\n\n{MORE}"


def test_a_carousel_of_the_series_other_episodes_is_not_notes() -> None:
    body = (
        f"<article><h1>Lighthouses</h1><div class='prose'><p>{PROSE}</p><p>{MORE}</p>"
        "<div class='wrapper-diffusions-carousel'><h2>In the same series</h2><ul><li>"
        "<a href='/ep/41'>The Salt Road: the medieval route over the hills</a> 51 min</li><li>"
        "<a href='/ep/43'>Over the Tops: a walk from the mill to the moor</a> 52 min</li></ul>"
        "</div></div></article>"
    )
    notes = notes_of(body)
    assert notes.text == f"{PROSE}\n\n{MORE}"
    assert notes.links == ()


def test_a_book_s_authors_in_a_bibliography_line_stay() -> None:
    body = (
        f"<article><h1>Lighthouses</h1><div class='text'><p>{PROSE}</p><h2>Bibliography</h2>"
        "<p class='book'><a href='https://books.example.org/keepers'>The Keepers</a>"
        "<span class='book-authors'><a href='https://books.example.org/people/lind'>Nora"
        " Lind</a></span><span class='book-editor'>Harbour Press, 2012</span></p></div>"
        "</article>"
    )
    notes = notes_of(body)
    assert notes.text.endswith("The KeepersNora LindHarbour Press, 2012")
    assert "https://books.example.org/people/lind" in [link.url for link in notes.links]


def test_a_discover_more_line_heading_after_the_notes_ends_them() -> None:
    for heading in ("À découvrir", "Da non perdere", "Zum Weiterhören", "حلقات سابقة"):
        body = (
            f"<article><h1>Lighthouses</h1><div class='text'><p>{PROSE}</p><p>{MORE}</p>"
            f"<div class='bloc'><p class='bloc-title'>{heading}</p><div><a href='/ep/41'>The"
            " Salt Road</a></div><div><a href='/ep/40'>Over the Tops</a></div></div></div>"
            "</article>"
        )
        assert notes_of(body).text == f"{PROSE}\n\n{MORE}", heading


# --- what set 14 showed -----------------------------------------------------------------------


def test_a_script_built_page_read_with_the_feed_still_gives_its_app_state_notes() -> None:
    episode = {
        "title": "Lighthouses",
        "duration": 3120,
        "description": f"<p>{PROSE}</p><p>{MORE}</p>",
    }
    state = {"episode": episode}
    script = f"<script>window.__INITIAL_STATE__ = {json.dumps(state)};</script>"
    body = f"<div id='app'><div class='loading'>Loading…</div></div>{script}"
    feed = "<p>Completely different words about another night entirely.</p>"
    for given in (None, feed):
        notes = notes_of(body, feed=given)
        assert notes.text == f"{PROSE}\n\n{MORE}", given
        assert notes.method == "app-state"


DRUPAL = (
    "<article class='node node--type-podcast-episode'>"
    "<div class='clearfix text-formatted field field--name-field-perex field--label-hidden'>"
    "<p>Why did the keepers stay on the rock for forty winters, and what did they write down"
    " about the weather every four hours?</p></div>"
    "<div class='field field--name-field-audio'><audio src='/42.mp3'></audio>"
    "<a href='https://harbourhours.example.org/files/42.mp3'>lighthouses-42.mp3</a>"
    " (41.8 MB)</div>"
    "<div class='clearfix text-formatted field field--name-body"
    " field--type-text-with-summary field--label-hidden'>"
    f"<p>{PROSE}</p><p>{MORE}</p></div>"
    "<div class='field field--name-field-speaker field--label-above'><h2 class='field__label'>"
    "Speaker</h2><div class='field__item'><p>Dr. Nora Lind studies the coast's lights and"
    " the people who kept them.</p></div></div>"
    "<div class='field field--name-field-reading field--label-above'><h2 class='field__label'>"
    f"Further reading</h2><div class='field__item'><ul><li>{LINK}</li></ul></div></div>"
    "<div class='field field--name-field-guests field--type-entity-reference"
    " field--label-above'><h2 class='field__label'>Guests</h2><div class='field__item'>"
    "<a href='/people/nora-lind'>Nora Lind</a></div></div>"
    "<div class='field field--name-field-tags field--label-inline'><div class='field__label'>"
    "Tags</div><a href='/tags/coast'>coast</a></div></article>"
)


def test_a_drupal_body_goes_on_over_the_labelled_text_fields_after_it() -> None:
    teasers = "".join(
        f"<article class='node--teaser'><h3><a href='/ep/{n}'>Episode {n}</a></h3><p>A night"
        f" on another rock, number {n}.</p></article>"
        for n in (40, 41)
    )
    notes = notes_of(f"<main><h1>Lighthouses</h1>{DRUPAL}<div class='view'>{teasers}</div></main>")
    assert notes.text.startswith("Why did the keepers stay on the rock")
    assert notes.text.endswith("the supply boat's route map")
    assert [link.url for link in notes.links] == ["https://maps.example.net/route"]


# --- what real set 8 showed ---------------------------------------------------------------------


def test_an_article_in_noscript_is_what_a_reader_without_scripts_gets() -> None:
    body = (
        "<div id='app'></div><noscript class='errorPage'><p>JavaScript is disabled</p></noscript>"
        "<noscript><article><header><h1>Lighthouses</h1></header>"
        f"<p itemprop='description'>{PROSE} {MORE}</p></article></noscript>"
        "<div class='browser-warning'><p>Your current browser isn't compatible with this site."
        " Please download one of our supported browsers.</p></div>"
    )
    assert notes_of(body).text == f"{PROSE} {MORE}"


def test_the_page_s_summary_above_a_picture_leads_a_body_that_quotes_it_later() -> None:
    lead = "Why did the keepers stay on the rock for forty winters, far from everyone?"
    head = f"<meta name='description' content='{lead}'>"
    body = (
        "<div class='series'><h1>Lighthouses</h1><p>A series in four episodes</p></div>"
        f"<div class='content'><header class='heading-zone'></header><div class='intro'><p>{lead}</p></div>"
        "<figure><img src='/rock.jpg'><figcaption>The rock • Credits: N. Lind</figcaption>"
        f"</figure><div class='content-body'><blockquote><p>{MORE}</p></blockquote>"
        f"<p>{PROSE}</p><p>{lead} {PROSE.replace('Nora', 'Then Nora')}</p></div></div>"
    )
    notes = notes_of(body, head=head)
    assert notes.text.startswith(lead)
    assert "The rock" not in notes.text


def test_a_not_available_notice_above_the_synopsis_is_not_notes() -> None:
    body = (
        "<main><div class='notice'><p>Sorry, this episode is not currently available</p></div>"
        f"<h1>Lighthouses</h1><div class='synopsis'><p>{PROSE}</p><p>{MORE}</p></div></main>"
    )
    assert notes_of(body).text == f"{PROSE}\n\n{MORE}"


# --- what set 16 showed: broadcasters' app shells and newspapers' article bodies ---------------


def test_an_app_shell_with_a_date_line_takes_the_notes_of_its_own_state_global() -> None:
    notes_html = f"<p>{PROSE} See {LINK}.</p><p>{MORE}</p>"
    audio = {"title": "Lighthouses", "long_description": notes_html, "duration": 1620}
    script = f"<script>window.__RPS_STATE__ = {json.dumps({'audio': audio})};</script>"
    body = "<main><h1>Lighthouses</h1><p class='meta'>16/03/2024 27 min Radio 1</p>"
    notes = notes_of(body + "<rps-description></rps-description></main>" + script)
    assert notes.method == "app-state"
    assert notes.text == f"{PROSE} See the supply boat's route map.\n\n{MORE}"


def test_a_transcript_disclaimer_box_is_not_notes() -> None:
    body = (
        f"<article><h1>Lighthouses</h1><div class='storytext'><p>{PROSE}</p><p>{MORE}</p></div>"
        "<div class='transcript-disclaimer'><p>Copyright © 2024 Harbour Radio. All rights"
        " reserved.</p><p>Transcripts are created on a rush deadline and may be revised.</p>"
        "</div></article>"
    )
    assert notes_of(body).text == f"{PROSE}\n\n{MORE}"


def test_a_newspaper_body_split_by_an_ad_keeps_the_part_named_after_the_ad() -> None:
    body = (
        "<article><h1>Lighthouses</h1><section name='articleBody'><div class='listen-box'>"
        "<p>Listen and follow Harbour Hours</p><p><a href='https://podcasts.apple.com/x'>Apple"
        " Podcasts</a> | <a href='https://open.spotify.com/show/x'>Spotify</a></p></div>"
        f"<div class='BodyColumn'><p>{PROSE}</p></div><div id='story-ad-1-wrapper'"
        " class='css-ad'><div id='story-ad-1'></div></div><div id='after-story-ad-1'"
        f" class='BodyColumn'><p>{MORE}</p></div><div class='css-credit'><p>Photo Illustration"
        " by Harbour Hours; Photograph by Ilse Berg</p></div></section></article>"
    )
    assert notes_of(body).text == f"{PROSE}\n\n{MORE}"


def test_a_subscribe_box_after_a_broadcaster_s_text_is_not_notes() -> None:
    for box in ("b-podcast-abo", "podcast-box"):
        body = (
            f"<article><h1>Lighthouses</h1><section class='text'><p>{PROSE}</p><p>{MORE}</p>"
            f"</section><div class='{box}'><h3>Diese Sendung als Podcast abonnieren</h3><p>Harbour"
            " Hours erscheint jeden Donnerstag. Hören Sie alle Folgen in der <a"
            " href='https://app.example.de/'>App</a> oder per <a href='/feed.rss'>RSS-Feed</a>."
            "</p></div></article>"
        )
        assert notes_of(body).text == f"{PROSE}\n\n{MORE}", box


def test_a_standfirst_that_is_the_feed_s_first_sentence_is_not_a_teaser_of_it() -> None:
    standfirst = "Two friends climb a tower above the fjord, with tea, a radio and old logbooks."
    feed = f"{standfirst}<br/><br/>Nora Lind, www.harbour.example, Harbour Hours<br/><br/>Link"
    body = (
        f"<article><header><h1>Lighthouses</h1><p class='article-header-description'>{standfirst}"
        "</p><div class='author'>Von Nora Lind</div></header><div class='player'><button>Play"
        f"</button></div><section class='details'><p>{PROSE}</p><p>{MORE}</p><p>{LONG}</p>"
        "</section></article>"
    )
    notes = notes_of(body, feed=feed)
    assert notes.text.startswith(standfirst)
    assert notes.text.endswith(LONG)


def test_a_dateline_above_a_broadcaster_s_notes_goes() -> None:
    body = (
        "<main><section class='Cover'><h1>Lighthouses</h1><p class='date'>Épisode du lundi 3"
        " juin 2024 par <a href='/personnes/nora-lind'>Nora Lind</a></p></section>"
        f"<section class='Content'><p>{PROSE}</p><p>{MORE}</p></section></main>"
    )
    assert notes_of(body).text == f"{PROSE}\n\n{MORE}"


def test_a_linked_show_title_over_the_episode_and_a_programme_website_link_go() -> None:
    body = (
        "<main><div class='hero'><a href='https://radio.example.org/brand/harbour'><h1>Harbour"
        " Hours</h1></a><h2>Lighthouses</h2></div><section class='synopsis'>"
        f"<p>{PROSE}</p><p>{MORE}</p><p>Producer: Ilse Berg</p>"
        "<p><a href='https://radio.example.org/programmes/42'>Programme website</a></p>"
        "</section></main>"
    )
    notes = notes_of(body)
    assert notes.text == f"{PROSE}\n\n{MORE}\n\nProducer: Ilse Berg"
    assert notes.links == ()
