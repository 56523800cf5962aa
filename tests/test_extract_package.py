"""The extract package's shape: its registry of extractors, its API and what it imports."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

import podarchive.read.extract
from podarchive.core.errors import ExtractError
from podarchive.core.types import PageNotes
from podarchive.read.extract import extract_page, registry
from podarchive.read.extract.links import links_in
from podarchive.read.extract.markup import inner_html
from podarchive.read.extract.page import Page
from podarchive.read.extract.soup import tags
from podarchive.read.extract.text import text_of

SRC = Path(__file__).resolve().parents[1] / "src" / "podarchive"
FIXTURE_PAGES = sorted((Path(__file__).parent / "fixtures").glob("*/**/*.html"))
LONG = "This episode is about weak references, caches and private fields in C++ code."
MADE_UP_PAGE = (
    "<html><body><main><p>Site-wide text that the generic extractor would take instead.</p>"
    f"<div class='madeup-body'><p>{LONG}</p><a href='/guest'>Guest</a></div></main></body></html>"
)


class MadeUpHost:
    """A host extractor as a new module would write it: notes in ``.madeup-body``."""

    def __init__(self) -> None:
        self.asked: list[str] = []

    def applies(self, text: str, url: str) -> bool:
        self.asked.append(url)
        return url.startswith("https://madeup.test/")

    def notes(self, page: Page) -> PageNotes | None:
        found = next(
            (t for t in tags(page.soup, "div") if "madeup-body" in t.get("class", [])), None
        )
        if found is None:
            return None
        links = links_in(found, page.base_url)
        return PageNotes(inner_html(found), text_of(found), links, "madeup")


def outcome(body: bytes | str, url: str) -> PageNotes | str:
    try:
        return extract_page(body, url)
    except ExtractError as error:
        return str(error)


@pytest.fixture
def made_up(monkeypatch: pytest.MonkeyPatch) -> MadeUpHost:
    extractor = MadeUpHost()
    monkeypatch.setattr(registry, "EXTRACTORS", (extractor, *registry.EXTRACTORS))
    return extractor


def test_a_registered_extractor_takes_its_host(made_up: MadeUpHost) -> None:
    notes = extract_page(MADE_UP_PAGE, "https://madeup.test/episodes/1")
    assert (notes.extractor, notes.text) == ("madeup", f"{LONG}\n\nGuest")
    assert [link.url for link in notes.links] == ["https://madeup.test/guest"]
    assert made_up.asked == ["https://madeup.test/episodes/1"]


def test_without_it_the_same_page_goes_to_the_generic_extractor() -> None:
    notes = extract_page(MADE_UP_PAGE, "https://madeup.test/episodes/1")
    assert notes.extractor == "generic"
    assert notes.text.startswith("Site-wide text")


def test_a_registered_extractor_changes_nothing_elsewhere(made_up: MadeUpHost) -> None:
    elsewhere = "https://example.com/episodes/1"
    pages = [(path.read_bytes(), f"https://example.com/{path.stem}") for path in FIXTURE_PAGES]
    pages.append((MADE_UP_PAGE, elsewhere))
    with_it = [outcome(body, url) for body, url in pages]
    assert len(made_up.asked) == len(pages)
    with pytest.MonkeyPatch.context() as undo:
        undo.setattr(registry, "EXTRACTORS", registry.EXTRACTORS[1:])
        assert with_it == [outcome(body, url) for body, url in pages]
    assert {r.extractor for r in with_it if isinstance(r, PageNotes)} >= {"generic", "simplecast"}
    assert isinstance(with_it[-1], PageNotes)
    assert with_it[-1].extractor == "generic"


def test_the_registry_ends_with_the_generic_fallback() -> None:
    names = [extractor.__name__ for extractor in registry.EXTRACTORS]  # type: ignore[attr-defined]
    assert names == ["podarchive.read.extract.simplecast", "podarchive.read.extract.generic"]


def test_every_exported_name_is_importable() -> None:
    for name in podarchive.read.extract.__all__:
        assert getattr(podarchive.read.extract, name) is not None


def test_importing_extract_loads_no_storage_network_or_cli_library() -> None:
    code = (
        "import json, sys; import podarchive.read.extract; "
        "print(json.dumps(sorted({n.split('.')[0] for n, m in sys.modules.items() if m})))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, check=True, text=True
    )
    loaded = set(json.loads(result.stdout))
    assert "bs4" in loaded
    assert loaded.isdisjoint({"sqlite_utils", "sqlite3", "httpx", "apscheduler", "click", "rich"})


def test_only_the_extract_package_imports_bs4() -> None:
    importers = {
        "/".join(path.relative_to(SRC).parts[:2])
        for path in SRC.rglob("*.py")
        if "from bs4" in path.read_text(encoding="utf-8")
        or "import bs4" in path.read_text(encoding="utf-8")
    }
    assert importers == {"read/extract"}
