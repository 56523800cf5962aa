"""Issue #24 on the shared real episode pages (../shared/corpus/07-real-episode-pages, read in
place, skipped where absent): the floors are the figures reached in phase 1, scored by the
corpus' own score.py through benchmarks/extract_notes.py --shared."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

SCRIPT = Path(__file__).resolve().parent.parent / "benchmarks" / "extract_notes.py"
PAGES = Path(__file__).resolve().parents[2] / "shared" / "corpus" / "07-real-episode-pages"

pytestmark = pytest.mark.corpus


def load_benchmark() -> ModuleType:
    spec = importlib.util.spec_from_file_location("extract_notes_shared", SCRIPT)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def scored() -> tuple[ModuleType, list[dict[str, Any]]]:
    if not (PAGES / "MANIFEST.tsv").exists():
        pytest.skip(f"no shared pages at {PAGES}")
    bench = load_benchmark()
    scorer = bench.load_scorer()
    rows = scorer.episode_rows(PAGES)
    results = bench.run_podarchive(rows, 1)
    labels = {pid: (PAGES / "labels" / f"{pid}.json").read_text("utf-8") for pid in rows}
    return scorer, [
        scorer.score_one(json.loads(labels[pid]), results[pid], row["page_url"])
        for pid, row in rows.items()
    ]


def test_shared_pages_are_clean_with_only_their_links() -> None:
    scorer, scores = scored()
    summary = scorer.summarize(scores)
    assert summary["clean"] >= summary["pages"] - 1  # 17 of 17 in phase 1
    assert summary["P_micro"] >= 0.95
    assert summary["R_micro"] >= 0.95
