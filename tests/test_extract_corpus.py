"""Conformance of extract_page over real episode pages in ../shared/corpus (skipped if absent)."""

from __future__ import annotations

from pathlib import Path

import pytest

from podarchive.core.errors import ExtractError
from podarchive.core.types import PageNotes
from podarchive.read.extract import extract_links, extract_page

CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus"
PAGES = CORPUS / "05-episode-pages" / "janw-podcast-archiver" / "pages"

#: Where each page was fetched from (see the corpus folder's EXTRACTED.txt).
PAGE_URLS = {
    "castro.fm_podcast_f996ae94.html": "https://castro.fm/podcast/f996ae94-70a2-4d9c-afbc-c70b5bacd120",
    "der-lautsprecher.de_homepage.html": "https://der-lautsprecher.de/",
    "overcast.fm_episode_+AAyIOzrEy1g_99pi.html": "https://overcast.fm/+AAyIOzrEy1g",
    "soundcloud.com_janwillhaus.html": "https://soundcloud.com/janwillhaus",
    "soundcloud.com_the-holden-village-podcast.html": "https://soundcloud.com/the-holden-village-podcast",
    "soundcloud.com_trueundergroundone.html": "https://soundcloud.com/trueundergroundone",
}

pytestmark = pytest.mark.corpus


def read_page(name: str) -> bytes:
    if not PAGES.is_dir():
        pytest.skip(f"no corpus at {CORPUS} (../shared/corpus is absent)")
    return (PAGES / name).read_bytes()


def extract(name: str) -> PageNotes:
    return extract_page(read_page(name), PAGE_URLS[name], content_type="text/html; charset=utf-8")


@pytest.mark.parametrize("name", sorted(PAGE_URLS))
def test_page_gives_notes_or_a_one_line_reason(name: str) -> None:
    try:
        notes: PageNotes | str = extract(name)
    except ExtractError as error:
        notes = str(error)
    if isinstance(notes, str):
        assert notes
        assert "\n" not in notes
    else:
        assert notes.text.strip()
        assert notes.html.strip()
        assert [link.position for link in notes.links] == list(range(len(notes.links)))
        assert all(link.url.startswith(("http://", "https://")) for link in notes.links)


def test_every_corpus_page_is_listed() -> None:
    read_page("castro.fm_podcast_f996ae94.html")
    assert {path.name for path in PAGES.glob("*.html")} == set(PAGE_URLS)


def test_der_lautsprecher_homepage_picks_the_longest_post() -> None:
    notes = extract("der-lautsprecher.de_homepage.html")
    assert notes.extractor == "generic"
    assert notes.text.startswith("Über Vor- und Nachteile von Audioformaten")  # LS018's teaser
    assert "Auphonic" in notes.text
    assert notes.links, "the post links to its contributors and chapters"
    assert "Kommentar" not in notes.text  # the comments link was dropped


def test_overcast_99pi_has_no_notes_in_its_body() -> None:
    """Overcast's episode page carries only title, date, player and badges; its one-line
    description is in ``<meta og:description>``, so there are no show notes to extract."""
    with pytest.raises(ExtractError, match="^no show notes found$"):
        extract("overcast.fm_episode_+AAyIOzrEy1g_99pi.html")
    html = read_page("overcast.fm_episode_+AAyIOzrEy1g_99pi.html").decode("utf-8")
    page_links = extract_links(html, PAGE_URLS["overcast.fm_episode_+AAyIOzrEy1g_99pi.html"])
    assert "The Real Book" in html
    assert "https://feeds.simplecast.com/BqbsxVfO" in [link.url for link in page_links]
    assert {link.domain for link in page_links} >= {"stitcher.com", "overcast.fm"}


def test_castro_podcast_page_gives_the_show_description() -> None:
    notes = extract("castro.fm_podcast_f996ae94.html")
    assert notes.extractor == "generic"
    assert "Holger Klein" in notes.text
