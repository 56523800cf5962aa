"""Precision and recall of the generic extractor's link set, and its time per page.

Run: ``PYTHONPATH=src python benchmarks/extract_notes.py [--time]``. The labelled pages are
``tests/fixtures/generic/labelled/*.html`` and the three older ``tests/fixtures/generic/`` pages
(labels in ``labelled/labels.json`` and ``generic/expected.json``), plus the episode pages of
``../shared/corpus/05-episode-pages`` when that folder exists (read in place, never copied).

Per page: the expected link set (hand-made: the URLs in the notes), the extracted one (empty
when the extractor finds no notes), precision = |kept ∩ expected| / |kept| and recall =
|kept ∩ expected| / |expected|; an empty set against an empty set counts 1.0, anything
against an empty set 0.0. Totals are micro-averaged over links. ``--time`` adds the median
milliseconds of ``extract_page`` per page (PyTorch fixture pages and corpus pages).
"""

from __future__ import annotations

import contextlib
import json
import statistics
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from podarchive.errors import ExtractError
from podarchive.extract import extract_page

ROOT = Path(__file__).resolve().parent.parent
GENERIC = ROOT / "tests" / "fixtures" / "generic"
LABELLED = GENERIC / "labelled"
PYTORCH_PAGES = ROOT / "tests" / "fixtures" / "pytorch" / "pages"
CORPUS_PAGES = ROOT.parent / "shared" / "corpus" / "05-episode-pages" / "janw-podcast-archiver"
CORPUS_PAGES = CORPUS_PAGES / "pages"
#: Where each corpus page was fetched from (pages/EXTRACTED.txt).
CORPUS_URLS = {
    "castro.fm_podcast_f996ae94.html": "https://castro.fm/podcast/f996ae94-70a2-4d9c-afbc-c70b5bacd120",
    "der-lautsprecher.de_homepage.html": "https://der-lautsprecher.de/",
    "overcast.fm_episode_+AAyIOzrEy1g_99pi.html": "https://overcast.fm/+AAyIOzrEy1g",
    "soundcloud.com_janwillhaus.html": "https://soundcloud.com/janwillhaus",
    "soundcloud.com_the-holden-village-podcast.html": "https://soundcloud.com/the-holden-village-podcast",
    "soundcloud.com_trueundergroundone.html": "https://soundcloud.com/trueundergroundone",
}


@dataclass(frozen=True)
class Labelled:
    """A page with its hand-made expectation."""

    group: str  # "synthetic" (fixtures) or "corpus"
    name: str
    path: Path
    url: str
    has_notes: bool
    links: frozenset[str]


@dataclass(frozen=True)
class Score:
    """One page's outcome against its label."""

    page: Labelled
    found: bool
    links: frozenset[str]

    @property
    def hits(self) -> int:
        return len(self.links & self.page.links)

    @property
    def precision(self) -> float:
        return self.hits / len(self.links) if self.links else float(not self.page.links)

    @property
    def recall(self) -> float:
        return self.hits / len(self.page.links) if self.page.links else float(not self.links)


def labelled_pages(*, corpus: bool = True) -> list[Labelled]:
    """The labelled synthetic pages, then the corpus pages if the corpus is there."""
    labels = json.loads((LABELLED / "labels.json").read_text(encoding="utf-8"))
    pages = [
        Labelled(
            "synthetic",
            entry["file"],
            LABELLED / entry["file"],
            entry["page_url"],
            entry["has_notes"],
            frozenset(entry["links"]),
        )
        for entry in labels["synthetic"]
    ]
    older = json.loads((GENERIC / "expected.json").read_text(encoding="utf-8"))["pages"]
    pages += [
        Labelled(
            "synthetic",
            entry["file"],
            GENERIC / entry["file"],
            entry["page_url"],
            entry["has_notes"],
            frozenset(entry["links"]),
        )
        for entry in older
    ]
    if corpus and CORPUS_PAGES.is_dir():
        pages += [
            Labelled(
                "corpus",
                entry["file"],
                CORPUS_PAGES / entry["file"],
                CORPUS_URLS[entry["file"]],
                entry["has_notes"],
                frozenset(entry["links"]),
            )
            for entry in labels["corpus"]
        ]
    return pages


def score(page: Labelled) -> Score:
    """Run ``extract_page`` on ``page`` and compare its link set with the label."""
    try:
        notes = extract_page(page.path.read_bytes(), page.url, content_type="text/html")
    except ExtractError:
        return Score(page, False, frozenset())
    return Score(page, True, frozenset(link.url for link in notes.links))


def totals(scores: list[Score]) -> tuple[float, float]:
    """Micro-averaged precision and recall over every link of ``scores``."""
    hits = sum(s.hits for s in scores)
    kept = sum(len(s.links) for s in scores)
    expected = sum(len(s.page.links) for s in scores)
    return (hits / kept if kept else 1.0), (hits / expected if expected else 1.0)


def table(scores: list[Score]) -> str:
    """A Markdown table: one row per page, then a total per group and overall."""
    rows = ["| page | notes expected / found | links exp / kept / hit | precision | recall |"]
    rows.append("|---|---|---|---|---|")
    for s in scores:
        found = f"{'yes' if s.page.has_notes else 'no'} / {'yes' if s.found else 'no'}"
        counts = f"{len(s.page.links)} / {len(s.links)} / {s.hits}"
        rows.append(f"| {s.page.name} | {found} | {counts} | {s.precision:.2f} | {s.recall:.2f} |")
    for group in ("synthetic", "corpus", None):
        chosen = [s for s in scores if group is None or s.page.group == group]
        if chosen:
            precision, recall = totals(chosen)
            right = sum(s.found == s.page.has_notes for s in chosen)
            rows.append(
                f"| **total {group or 'all'}** ({len(chosen)} pages) | {right} right |"
                f" {sum(len(s.page.links) for s in chosen)} / {sum(len(s.links) for s in chosen)}"
                f" / {sum(s.hits for s in chosen)} | {precision:.3f} | {recall:.3f} |"
            )
    return "\n".join(rows)


def median_ms(path: Path, url: str, repeats: int = 30) -> float:
    body = path.read_bytes()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        with contextlib.suppress(ExtractError):
            extract_page(body, url, content_type="text/html")
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1000


def timings() -> str:
    groups = {
        "pytorch fixture pages": [
            (p, "https://pytorch-dev-podcast.simplecast.com/episodes/" + p.stem)
            for p in sorted(PYTORCH_PAGES.glob("*.html"))
        ],
        "generic labelled pages": [(p.path, p.url) for p in labelled_pages(corpus=False)],
    }
    if CORPUS_PAGES.is_dir():
        groups["corpus pages"] = [(CORPUS_PAGES / n, u) for n, u in sorted(CORPUS_URLS.items())]
    lines = []
    for label, pages in groups.items():
        per_page = [median_ms(path, url) for path, url in pages]
        lines.append(
            f"{label}: median {statistics.median(per_page):.2f} ms, "
            f"sum of medians {sum(per_page):.1f} ms over {len(pages)} pages"
        )
    return "\n".join(lines)


def main(argv: list[str]) -> None:
    print(table([score(page) for page in labelled_pages()]))
    if "--time" in argv:
        print()
        print(timings())


if __name__ == "__main__":
    main(sys.argv[1:])
