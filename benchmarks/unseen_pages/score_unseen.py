"""Score the extractor on the held-out synthetic episode pages beside this file (issue #24).

Run: ``PYTHONPATH=src python benchmarks/unseen_pages/score_unseen.py [--dir DIR]``. ``--dir``
scores another folder of labelled pages the same way: ``DIR/<id>.html`` or
``DIR/pages/<id>.html``, ``DIR/labels/<id>.json``, ``DIR/feeds/<id>.html`` where the feed is
known, and the page's URL in its label (``page_url``) or in ``DIR/SOURCE.tsv`` (a header row
with ``id`` and ``page_url`` columns). Each page is run
through ``podarchive.read.extract.extract_page`` with the feed's description (``feeds/<id>.html``,
where the feed has one) and without it, and through trafilatura when it is importable (a
benchmark-only peer, run as the corpus' ``run.py`` runs it). The scores come from the
``score.py`` of ``../shared/corpus/07-real-episode-pages`` (imported in place at run time, never
copied); without that folder the script says so and exits 0.

Printed: a per-page table (C = clean; junk = other text in what is kept; P/R = link precision
and recall; the extractor's method), then per run: pages clean (start and end found, at most
10 % other text, and at most 20 %), mean other text, link precision and recall (micro).
"""

from __future__ import annotations

import importlib.util
import json
import os
import sys
from pathlib import Path
from types import ModuleType
from typing import Any
from urllib.parse import urljoin

HERE = Path(__file__).resolve().parent
CORPUS_NAME = "07-real-episode-pages"


def corpus_dir() -> Path | None:
    env = os.environ.get("CORPUS")
    cands = [Path(env), Path(env) / CORPUS_NAME] if env else []
    cands += [p / "shared" / "corpus" / CORPUS_NAME for p in HERE.parents]
    return next((c for c in cands if (c / "score.py").exists()), None)


def load_score(corpus: Path) -> ModuleType:
    sys.dont_write_bytecode = True  # leave no __pycache__ beside the corpus
    spec = importlib.util.spec_from_file_location("corpus_score", corpus / "score.py")
    assert spec
    assert spec.loader
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def run_podarchive(raw: bytes, url: str, feed: str | None) -> dict[str, Any]:
    from podarchive.core.errors import ExtractError
    from podarchive.read.extract import extract_page

    try:
        n = extract_page(raw, url, feed_notes=feed)
    except ExtractError as e:
        return {"text": "", "links": [], "method": f"error: {e}", "transcript": False}
    return {
        "text": n.text,
        "links": [link.url for link in n.links],
        "method": getattr(n, "method", "?"),
        "confidence": getattr(n, "confidence", None),
        "transcript": bool(getattr(n, "transcript", None)),
    }


def trafilatura_runner():
    try:
        import trafilatura
        from lxml import etree
    except ImportError:
        return None

    def run(raw: bytes, url: str, feed: str | None) -> dict[str, Any]:
        html = raw.decode("utf-8", "replace")
        xml = trafilatura.extract(html, url=url, include_links=True, output_format="xml")
        txt = trafilatura.extract(html, url=url, include_links=False, output_format="txt")
        links = []
        if xml:
            for ref in etree.fromstring(xml.encode("utf-8")).iter("ref"):
                if ref.get("target"):
                    links.append(urljoin(url, ref.get("target")))
        return {"text": txt or "", "links": links, "method": "trafilatura", "transcript": False}

    return run


def page_urls(folder: Path) -> dict[str, str]:
    """Page URLs by id from ``folder/SOURCE.tsv``, where there is one."""
    source = folder / "SOURCE.tsv"
    if not source.exists():
        return {}
    rows = [line.split("\t") for line in source.read_text(encoding="utf-8").splitlines() if line]
    head = rows[0]
    if "id" not in head or "page_url" not in head:
        return {}
    at, url = head.index("id"), head.index("page_url")
    return {row[at]: row[url] for row in rows[1:] if len(row) > max(at, url)}


def pages_of(folder: Path) -> dict[str, Path]:
    """The labelled pages of ``folder`` by id."""
    found = {p.stem: p for p in [*folder.glob("*.html"), *folder.glob("pages/*.html")]}
    return {
        pid: found[pid] for pid in sorted(found) if (folder / "labels" / f"{pid}.json").exists()
    }


def fmt(v: Any, pct: bool = False) -> str:
    if v is None:
        return "–"
    if isinstance(v, bool):
        return "Y" if v else "n"
    return f"{round(100 * v)}%" if pct else f"{v:.2f}"


def main(argv: list[str]) -> int:
    folder = Path(argv[argv.index("--dir") + 1]).resolve() if "--dir" in argv else HERE
    corpus = corpus_dir()
    if corpus is None:
        print(f"no {CORPUS_NAME}/score.py found (set CORPUS); nothing scored")
        return 0
    score = load_score(corpus)
    runs: dict[str, Any] = {
        "feed": lambda raw, url, feed: run_podarchive(raw, url, feed),
        "nofeed": lambda raw, url, feed: run_podarchive(raw, url, None),
    }
    traf = trafilatura_runner()
    if traf:
        runs["trafilatura"] = traf
    results: dict[str, dict[str, dict]] = {r: {} for r in runs}
    pages = pages_of(folder)
    ids = list(pages)
    urls = page_urls(folder)
    labels = {}
    for pid in ids:
        label = json.loads((folder / "labels" / f"{pid}.json").read_text(encoding="utf-8"))
        label.setdefault("page_url", urls.get(pid, "https://example.invalid/"))
        labels[pid] = label
        raw = pages[pid].read_bytes()
        ff = folder / "feeds" / f"{pid}.html"
        feed = ff.read_text(encoding="utf-8") if ff.exists() else None
        for name, fn in runs.items():
            res = fn(raw, label["page_url"], feed)
            s = score.score_one(label, res, label["page_url"])
            s["method"] = res.get("method")
            s["transcript"] = res.get("transcript")
            results[name][pid] = s

    head = f"{'id':36s} {'feed':5s}"
    for name in runs:
        head += f" | {name[:11]:11s} C junk    P    R"
    print(head + " | method (feed / nofeed)")
    for pid in ids:
        label = labels[pid]
        line = f"{pid[:36]:36s} {label.get('feed', '?'):5s}"
        for name in runs:
            s = results[name][pid]
            c = "C" if score.is_clean(s) else ("F" if s["found"] else "-")
            junk, p, r = fmt(s.get("junk_x"), True), fmt(s.get("P")), fmt(s.get("R"))
            line += f" | {'':11s} {c} {junk:>4s} {p:>4s} {r:>4s}"
        m = [str(results[r][pid].get("method")) for r in ("feed", "nofeed")]
        tr = " +transcript" if results["feed"][pid].get("transcript") else ""
        print(line + f" | {m[0]} / {m[1]}{tr}")
    print()
    for name in runs:
        ss = list(results[name].values())
        m = score.summarize(ss)
        c20 = sum(
            1
            for s in ss
            if s.get("start")
            and s.get("end_x")
            and s.get("junk_x") is not None
            and s["junk_x"] <= 0.20
        )
        print(
            f"{name:12s} clean {m['clean']}/{m['pages']} (at 20 %: {c20}/{m['pages']}); "
            f"other text mean {fmt(m['junk_x_mean'], True)}; links P {m['links_tp']}/"
            f"{m['links_tp'] + m['links_fp']}={fmt(m['P_micro'])} "
            f"R {m['links_tp']}/{m['links_gold']}={fmt(m['R_micro'])}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
