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

``--shared`` (issue #24) scores the real episode pages of ``../shared/corpus/07-real-episode-pages``
with that folder's own ``score.py`` (imported in place, never copied): podarchive as in this tree,
given the episode's feed description where the MANIFEST names its feed (``feed_local_path``);
podarchive as on ``--baseline DIR`` (a ``git archive main src`` unpacked in DIR, run in a child
process) when given; and trafilatura, a benchmark-only peer, when it is installed. It prints the
per-page table, then per tool: pages clean (start and end found, at most 10 % other text, and at
20 %), mean other text, link precision/recall (micro) and CPU milliseconds per page (best of
5 runs of each page: the median over the pages, and the total).
"""

from __future__ import annotations

import contextlib
import importlib.util
import json
import os
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

from podarchive.core.errors import ExtractError
from podarchive.read.extract import extract_page

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


SHARED = ROOT.parent / "shared" / "corpus" / "07-real-episode-pages"


def load_scorer() -> ModuleType:
    """The corpus folder's ``score.py``, imported from where it is."""
    sys.dont_write_bytecode = True  # leave no __pycache__ beside the pages
    spec = importlib.util.spec_from_file_location("shared_score", SHARED / "score.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def feed_notes_for(row: dict[str, str]) -> str | None:
    """The description of the page's episode in its feed, where the corpus holds the feed."""
    if not row.get("feed_local_path"):
        return None
    from podarchive.read.parse import parse_feed

    feed = parse_feed((SHARED / row["feed_local_path"]).read_bytes())
    page = row["page_url"].rstrip("/")
    for episode in feed.episodes:
        if episode.link and episode.link.rstrip("/") == page:
            return episode.notes_html or episode.summary
    return None


def run_podarchive(rows: dict[str, dict[str, str]], repeats: int) -> dict[str, dict[str, Any]]:
    """Each page's text, links and median seconds with this tree's (or DIR's) extractor."""
    import inspect

    guided = "feed_notes" in inspect.signature(extract_page).parameters
    results: dict[str, dict[str, Any]] = {}
    for pid, row in rows.items():
        raw = (SHARED / row["local_path"]).read_bytes()
        feed = feed_notes_for(row) if guided else None
        kwargs: dict[str, Any] = {"feed_notes": feed} if feed else {}
        times = []
        result: dict[str, Any] = {"text": "", "links": [], "method": "none"}
        for _ in range(repeats):
            start = time.process_time()
            try:
                notes = extract_page(raw, row["page_url"], **kwargs)
            except ExtractError as error:
                result = {"text": "", "links": [], "method": "none", "error": str(error)}
            else:
                result = {
                    "text": notes.text,
                    "links": [link.url for link in notes.links],
                    "method": getattr(notes, "method", "") or notes.extractor,
                    "transcript": len(getattr(notes, "transcript", None) or ()),
                }
            times.append(time.process_time() - start)
        result["secs"] = min(times)  # the least disturbed of the runs (cores are shared)
        results[pid] = result
    return results


def run_trafilatura(rows: dict[str, dict[str, str]], repeats: int) -> dict[str, dict[str, Any]]:
    """trafilatura as the corpus' ``run.py`` calls it (links from its XML output)."""
    from urllib.parse import urljoin

    import trafilatura
    from lxml import etree

    results: dict[str, dict[str, Any]] = {}
    for pid, row in rows.items():
        html = (SHARED / row["local_path"]).read_bytes().decode("utf-8", "replace")
        url = row["page_url"]
        times = []
        for _ in range(repeats):
            start = time.process_time()
            xml = trafilatura.extract(html, url=url, include_links=True, output_format="xml")
            text = trafilatura.extract(html, url=url, include_links=False, output_format="txt")
            times.append(time.process_time() - start)
        links = []
        if xml:
            for ref in etree.fromstring(xml.encode("utf-8")).iter("ref"):
                if target := ref.get("target"):
                    links.append(urljoin(url, target))
        results[pid] = {"text": text or "", "links": links, "secs": min(times)}
    return results


def run_baseline(directory: str, repeats: int) -> dict[str, dict[str, Any]]:
    """This benchmark's podarchive run in a child process with ``DIR/src`` first on the path."""
    env = {**os.environ, "PYTHONPATH": str(Path(directory) / "src")}
    command = [sys.executable, str(Path(__file__).resolve()), "--shared-child", str(repeats)]
    out = subprocess.run(command, env=env, check=True, capture_output=True, text=True).stdout
    return dict(json.loads(out))


def shared_table(tools: dict[str, dict[str, dict[str, Any]]]) -> str:
    """Per page and tool: clean (C), found (F) or nothing (-), other text, P, R; then totals."""
    scorer = load_scorer()
    rows = scorer.episode_rows(SHARED)
    labels = {
        pid: json.loads((SHARED / "labels" / f"{pid}.json").read_text("utf-8")) for pid in rows
    }
    names = list(tools)
    lines = ["| page | " + " | ".join(names) + " |", "|---" * (len(names) + 1) + "|"]
    scored: dict[str, list[dict[str, Any]]] = {name: [] for name in names}
    for pid, row in rows.items():
        cells = []
        for name in names:
            result = tools[name].get(pid, {"text": "", "links": []})
            one = scorer.score_one(labels[pid], result, row["page_url"])
            scored[name].append(one | {"secs": result.get("secs", 0.0)})
            mark = "C" if scorer.is_clean(one) else ("F" if one["found"] else "-")
            junk = "–" if one.get("junk_x") is None else f"{one['junk_x']:.0%}"
            extra = f" {result['method']}" if result.get("method") else ""
            cells.append(f"{mark} {junk} P {_fmt(one.get('P'))} R {_fmt(one.get('R'))}{extra}")
        lines.append(f"| {pid} | " + " | ".join(cells) + " |")
    lines.append("")
    for name in names:
        lines.append(f"{name}: " + _totals(scorer, scored[name]))
    return "\n".join(lines)


def _totals(scorer: ModuleType, scored: list[dict[str, Any]]) -> str:
    summary = scorer.summarize(scored)
    at20 = sum(
        bool(
            s.get("start") and s.get("end_x") and s.get("junk_x") is not None and s["junk_x"] <= 0.2
        )
        for s in scored
    )
    cpu = statistics.median(s["secs"] for s in scored) * 1000
    total = sum(s["secs"] for s in scored) * 1000
    return (
        f"clean {summary['clean']}/{summary['pages']} (at 20 %: {at20}); other text mean "
        f"{_fmt(summary['junk_x_mean'], pct=True)}; links P {_fmt(summary['P_micro'])} "
        f"R {_fmt(summary['R_micro'])}; CPU median {cpu:.1f} ms/page, total {total:.0f} ms"
    )


def _fmt(value: float | None, *, pct: bool = False) -> str:
    if value is None:
        return "–"
    return f"{value:.0%}" if pct else f"{value:.2f}"


def shared(argv: list[str]) -> None:
    """The ``--shared`` run (see the module docstring)."""
    if not (SHARED / "MANIFEST.tsv").exists():
        print(f"no shared pages at {SHARED}: skipped")
        return
    rows = load_scorer().episode_rows(SHARED)
    repeats = 5
    tools: dict[str, dict[str, dict[str, Any]]] = {}
    if "--baseline" in argv:
        tools["podarchive before"] = run_baseline(argv[argv.index("--baseline") + 1], repeats)
    tools["podarchive"] = run_podarchive(rows, repeats)
    try:
        tools["trafilatura"] = run_trafilatura(rows, repeats)
    except ImportError as error:
        print(f"trafilatura not installed ({error}): left out")
    print(shared_table(tools))


def main(argv: list[str]) -> None:
    if "--shared-child" in argv:
        rows = load_scorer().episode_rows(SHARED)
        print(json.dumps(run_podarchive(rows, int(argv[argv.index("--shared-child") + 1]))))
        return
    if "--shared" in argv:
        shared(argv)
        return
    print(table([score(page) for page in labelled_pages()]))
    if "--time" in argv:
        print()
        print(timings())


if __name__ == "__main__":
    main(sys.argv[1:])
