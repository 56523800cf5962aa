from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from loopback import FIXTURES, LoopbackSite, serve_pytorch

CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus"
# Tests talk to their own loopback servers: no politeness gap, quick retries. Tests of the
# gap and the retries set them explicitly.
FAST_ENV = {"PODARCHIVE_HOST_GAP": "0", "PODARCHIVE_RETRY_BASE": "0.01"}


@pytest.fixture(autouse=True)
def _fast_politeness(monkeypatch: pytest.MonkeyPatch) -> None:
    for name, value in FAST_ENV.items():
        monkeypatch.setenv(name, value)


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
