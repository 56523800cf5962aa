"""The generic extractor on labelled pages: short notes in an explicit container are notes.

Link-set precision and recall against hand-made labels (tests/fixtures/generic/labelled/,
measured by benchmarks/extract_notes.py); the floors are the figures reached in #12.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

from podarchive.core.errors import ExtractError
from podarchive.read.extract import extract_page

SCRIPT = Path(__file__).resolve().parent.parent / "benchmarks" / "extract_notes.py"


def load_benchmark() -> ModuleType:
    spec = importlib.util.spec_from_file_location("extract_notes_benchmark", SCRIPT)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


BENCH = load_benchmark()
SYNTHETIC = BENCH.labelled_pages(corpus=False)


@pytest.mark.parametrize("page", SYNTHETIC, ids=lambda page: page.name)
def test_synthetic_page_recall_is_complete(page: object) -> None:
    score = BENCH.score(page)
    assert score.found == score.page.has_notes
    assert score.recall == 1.0


def test_synthetic_totals() -> None:
    precision, recall = BENCH.totals([BENCH.score(page) for page in SYNTHETIC])
    assert recall == 1.0
    assert precision >= 0.94  # 37 of 39: Podlove chapters and contributors widgets are kept


@pytest.mark.corpus
def test_corpus_totals() -> None:
    pages = [page for page in BENCH.labelled_pages() if page.group == "corpus"]
    if not pages:
        pytest.skip("no corpus at ../shared/corpus")
    precision, recall = BENCH.totals([BENCH.score(page) for page in pages])
    assert recall == 1.0
    assert precision >= 0.6  # the three SoundCloud pages' browser-upgrade box is not notes


def page(body: str) -> str:
    return f"<!doctype html><html><body><nav><a href='/'>Home</a></nav>{body}</body></html>"


@pytest.mark.parametrize(
    "body",
    [
        "<main><article><div class='notes'><p>Bonus episode!</p></div></article></main>",
        "<article><h1>Episode 3</h1><p>We talk about Rust.</p></article>",
        "<main><h1>Episode 3</h1><p>We talk about Rust.</p></main>",
        "<section class='show-notes'><p>We talk about Rust.</p></section>",
        "<div id='episode-description'><p>We talk about Rust.</p></div>",
    ],
)
def test_short_notes_in_an_explicit_container_are_notes(body: str) -> None:
    notes = extract_page(page(body), "https://example.com/ep/3")
    assert notes.extractor == "generic"
    assert notes.text.endswith(("Bonus episode!", "We talk about Rust."))


@pytest.mark.parametrize(
    "body",
    [
        "<article><h1>Episode 3: a long title that is not notes</h1><time>1 May 2024</time></article>",
        "<article><p>Too short.</p></article>",
        "<div class='x'><p>We talk about Rust.</p></div>",  # no explicit container: 40 needed
        "<article><p>Teaser one, short.</p></article><article><p>Teaser two, short.</p></article>",
    ],
)
def test_labels_and_teasers_are_not_notes(body: str) -> None:
    with pytest.raises(ExtractError, match="^no show notes found$"):
        extract_page(page(body), "https://example.com/ep/3")


def test_notes_named_container_wins_over_denser_furniture() -> None:
    blurb = "Example Show is a weekly talk about software, hosted by two people who like it."
    html = page(
        f"<div><section class='episode-notes'><p>A bonus chat with Ada.</p></section>"
        f"<div class='blurb'><p>{blurb}</p></div></div>"
    )
    assert extract_page(html, "https://example.com/").text == "A bonus chat with Ada."
