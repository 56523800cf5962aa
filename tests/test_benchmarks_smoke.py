"""Every benchmark script still runs (``--smoke``: tiny sizes, seconds); nothing about time."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).parent.parent / "benchmarks"
SCRIPTS = [
    "first_ingest.py",
    "repoll.py",
    "one_new.py",
    "hourly_cycle.py",
    "vs_reader.py",
    "transcripts.py",
]


@pytest.mark.slow
@pytest.mark.parametrize("script", SCRIPTS)
def test_benchmark_smoke_run(script: str) -> None:
    if script == "vs_reader.py" and importlib.util.find_spec("reader") is None:
        pytest.skip("reader is not installed (benchmark-only dependency)")
    proc = subprocess.run(
        [sys.executable, str(BENCHMARKS / script), "--smoke"],
        cwd=BENCHMARKS,
        capture_output=True,
        timeout=180,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr.decode(errors="replace")[-3000:]
    assert proc.stdout.strip()
