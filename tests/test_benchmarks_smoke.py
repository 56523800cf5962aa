"""Every benchmark script still runs (``--smoke``: tiny sizes, seconds); nothing about time."""

from __future__ import annotations

import importlib.util
import json
import shutil
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
    "change_feed.py",
    "export_warc.py",
    "capture_cost.py",
    "push_latency.py",
    "unchanged_poll.py",
]


def smoke(script: str, *flags: str) -> subprocess.CompletedProcess[str]:
    """``script --smoke FLAGS`` from the benchmarks folder, its output as text."""
    return subprocess.run(
        [sys.executable, str(BENCHMARKS / script), "--smoke", *flags],
        cwd=BENCHMARKS,
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )


@pytest.mark.slow
@pytest.mark.parametrize("script", SCRIPTS)
def test_benchmark_smoke_run(script: str) -> None:
    if script == "vs_reader.py" and importlib.util.find_spec("reader") is None:
        pytest.skip("reader is not installed (benchmark-only dependency)")
    proc = smoke(script)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.strip()


@pytest.mark.slow
def test_vs_peers_smoke_prints_the_table_and_check_can_fail() -> None:
    """``vs_peers.py`` runs podarchive as a whole process tree; ``--check`` passes the 120 MB
    ceiling here and fails a 1 MB one (a guard the benchmark relies on must be able to)."""

    passing = smoke("vs_peers.py", "--peers", "none", "--check")
    assert passing.returncode == 0, passing.stderr[-3000:]
    assert "first update, wall s" in passing.stdout
    assert "PASS: peak RSS of the tree" in passing.stdout
    failing = smoke("vs_peers.py", "--peers", "none", "--check", "--ceiling-mb", "1")
    assert failing.returncode == 1, failing.stderr[-3000:]
    assert "FAIL: peak RSS of the tree" in failing.stdout


@pytest.mark.slow
def test_profile_ingest_smoke_prints_the_split_by_stage() -> None:
    """``profile_ingest.py`` (#15) ingests under cProfile and splits the CPU by stage."""
    proc = smoke("profile_ingest.py", "--top", "5")
    assert proc.returncode == 0, proc.stderr[-3000:]
    table = proc.stdout
    for stage in ("feedparser", "bs4 tree build", "own walk (extract)", "URL work", "FTS (est.)"):
        assert stage in table
    assert "episodes stored: 60" in table


@pytest.mark.slow
def test_store_cost_smoke_prints_the_save_cost_and_the_sizes() -> None:
    """``store_cost.py`` (#15) times ``save_feed`` alone and lists the archive by dbstat."""
    proc = smoke("store_cost.py", "--profile")
    assert proc.returncode == 0, proc.stderr[-3000:]
    first, *table = proc.stdout.splitlines()
    assert json.loads(first)["episodes"] == 40
    assert any(line.startswith("episodes ") for line in table)
    assert "function calls" in proc.stdout  # the profile


@pytest.mark.slow
def test_cluster_benchmark_smoke_run() -> None:
    """``cluster.py`` runs real ``podarchive worker`` processes over a real Redis; it checks
    the server's counts itself (every feed requested once, the unchanged ones 304)."""
    from redis_server import redis_binary

    redis_binary()  # skips without redis-server (fails where CI requires it)
    proc = smoke("cluster.py")
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "2 worker processes (2 shards each)" in proc.stdout
    assert "broker overhead per feed" in proc.stdout
    assert "4.5 million feeds hourly" in proc.stdout


@pytest.mark.slow
def test_media_download_quick_run_compares_with_curl_and_reports_memory() -> None:
    """``media_download.py`` (#26) streams a generated file from its own loopback server
    through ``download`` + ``MediaFolder.commit``, beside curl + sha256sum (when installed),
    and prints the memory of a larger download; the SHA-256s are checked by the script."""
    proc = smoke("media_download.py")
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "podarchive: commit (hash, fsync, rename)" in proc.stdout
    assert "podarchive: total" in proc.stdout
    if shutil.which("curl") and shutil.which("sha256sum"):
        assert "curl: total" in proc.stdout
        assert "podarchive / (curl + sha256sum + sync)" in proc.stdout
    else:
        assert "no reference" in proc.stdout
    assert "3. memory of one 8 MiB download + commit" in proc.stdout
    assert "RSS before" in proc.stdout
