from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from loopback import FIXTURES, LoopbackSite, serve_pytorch

CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus"


@pytest.fixture
def site() -> Iterator[LoopbackSite]:
    with LoopbackSite() as server:
        yield server


@pytest.fixture
def pytorch_feed(site: LoopbackSite) -> str:
    """URL of the PyTorch fixture feed on the loopback site (pages served too)."""
    return serve_pytorch(site)


@pytest.fixture(scope="session")
def pytorch_expected() -> dict:
    return json.loads((FIXTURES / "pytorch" / "expected.json").read_text())


@pytest.fixture
def corpus() -> Path:
    if not CORPUS.is_dir():
        pytest.skip(f"no corpus at {CORPUS} (../shared/corpus is absent)")
    return CORPUS
