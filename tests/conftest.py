from __future__ import annotations

import json
import signal
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from loopback import FIXTURES, LoopbackSite, serve_pytorch

CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus"

# A shell without job control starts background commands (`cmd &`, some CI runners) with
# Ctrl-C ignored, and ignored it stays in every process they start: the Ctrl-C tests would
# find podarchive deaf to it. A user's terminal delivers it; so does the suite, wherever run.
if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)
# Tests talk to their own loopback servers: no politeness gap, quick retries. Tests of the
# gap and the retries set them explicitly.
FAST_ENV = {"PODARCHIVE_HOST_GAP": "0", "PODARCHIVE_RETRY_BASE": "0.01"}


@pytest.fixture(autouse=True)
def _fast_politeness(monkeypatch: pytest.MonkeyPatch) -> None:
    for name, value in FAST_ENV.items():
        monkeypatch.setenv(name, value)


_LOCAL_NAMES = frozenset({"localhost", "127.0.0.1", "::1", "127.0.0.2", ""})


@pytest.fixture(autouse=True)
def _no_network_beyond_loopback(monkeypatch: pytest.MonkeyPatch) -> None:
    """Tests talk only to their own 127.0.0.1 servers, whatever URLs feed content names
    (transcripts, chapters, pages of corpus feeds): other names do not resolve here, on a
    machine with internet access or without.
    """
    real = socket.getaddrinfo

    def loopback_only(host: Any, *args: Any, **kwargs: Any) -> Any:
        name = host.decode() if isinstance(host, bytes) else str(host or "")
        if name.lower() not in _LOCAL_NAMES and not name.startswith("127."):
            raise socket.gaierror(socket.EAI_NONAME, "Name or service not known (test)")
        return real(host, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", loopback_only)


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
