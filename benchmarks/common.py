"""Shared helpers of the benchmark scripts: settings, timing, memory, machine facts."""

from __future__ import annotations

import argparse
import json
import platform
import resource
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from podarchive.core.settings import Settings
from podarchive.read.schedule_files import FeedSchedule
from podarchive.store import Archive


def arguments(doc: str | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=(doc or "").splitlines()[0])
    parser.add_argument("--smoke", action="store_true", help="tiny sizes, a few seconds")
    return parser.parse_args()


def bench_settings(**changes: object) -> Settings:
    """Everything is on 127.0.0.1: no politeness gap, no per-host cap below concurrency."""
    base = Settings(
        host_gap=0,
        per_host=8,
        concurrency=8,
        allow_private_hosts=True,
        retries=0,
        max_feed_bytes=128 * 1024 * 1024,  # the 10,000-episode feed is 62 MB
    )
    return base.replace(**changes)


def schedules(urls: list[str], pages: bool = False) -> list[FeedSchedule]:
    # transcripts and chapters off: the figures are the feed's and the pages' cost, as before
    # #12 (benchmarks/transcripts.py measures the files), and no name beyond loopback is asked
    return [
        FeedSchedule(
            url=u, pages=pages, allow_private_hosts=True, transcripts=False, chapters=False
        )
        for u in urls
    ]


@contextmanager
def cpu_wall() -> Iterator[dict[str, float]]:
    """Client CPU (this process, all threads) and wall seconds of the block."""
    out: dict[str, float] = {}
    cpu, wall = time.process_time(), time.perf_counter()
    yield out
    out["cpu"] = time.process_time() - cpu
    out["wall"] = time.perf_counter() - wall


def median_of(repeats: int, run: Callable[[], float]) -> float:
    return statistics.median(run() for _ in range(repeats))


def peak_rss_mb() -> float:
    """Peak resident set of this process so far, in MB.

    Linux's VmHWM, which starts afresh at exec; ``ru_maxrss`` (the fallback elsewhere) keeps
    the peak of the process that forked us, so a child would report its parent's memory.
    """
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def clone_feed_states(archive: Archive, template_url: str, urls: list[str]) -> None:
    """Give ``urls`` the fetch state (ETag, body hash) of an archived feed, without ingesting.

    Unchanged polls (304, identical body) read and write only the feed's fetch state, so
    cloning it stands in for ingesting the same feed again under each URL.
    """
    etag, content_hash = archive.db.execute(
        "SELECT etag, content_hash FROM feeds WHERE url = ?", [template_url]
    ).fetchone()
    with archive.transaction():
        archive.db.conn.executemany(
            "INSERT INTO feeds (url, first_seen_at, etag, content_hash, error_count) "
            "VALUES (?, '2022-01-01T00:00:00Z', ?, ?, 0) ON CONFLICT(url) DO NOTHING",
            [(u, etag, content_hash) for u in urls],
        )


def run_in_child(archive: Path, urls: list[str]) -> dict[str, Any]:
    """One ``update_feeds`` of ``urls`` in a fresh process (child_run.py): its own figures."""
    listing = archive.with_suffix(".urls")
    listing.write_text("\n".join(urls))
    script = Path(__file__).with_name("child_run.py")
    done = subprocess.run(
        [sys.executable, str(script), str(archive), str(listing)],
        capture_output=True,
        text=True,
        check=True,
        timeout=1800,
    )
    figures: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return figures


def fresh_archive(directory: Path, name: str = "archive.db") -> Archive:
    path = directory / name
    for suffix in ("", "-wal", "-shm"):
        Path(str(path) + suffix).unlink(missing_ok=True)
    return Archive(path)


def compile_podarchive() -> str:
    """Byte-compile podarchive's modules where Python looks for them, as ``pip install``
    leaves a package, and say so in one line. A peer's virtualenv is compiled by pip; an
    editable checkout run with ``PYTHONDONTWRITEBYTECODE=1`` (as on the machines here) would
    otherwise compile all ~150 of podarchive's modules from source in every process it starts,
    about 0.15 s of CPU that no installed podarchive spends (#30, the no-change re-poll)."""
    import podarchive

    package = Path(podarchive.__file__).parent
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(package)], check=True)
    return f"podarchive's modules byte-compiled ({package})"


def machine() -> str:
    model = "?"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    import os
    from importlib.metadata import version

    libs = ", ".join(
        f"{n} {version(n)}"
        for n in ("feedparser", "lxml", "httpx", "beautifulsoup4", "sqlite-utils")
    )
    return (
        f"{os.cpu_count()} CPUs ({model}); Python {platform.python_version()}; "
        f"SQLite {__import__('sqlite3').sqlite_version}; {libs}"
    )


def show(rows: list[tuple[str, ...]]) -> None:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    for row in rows:
        print("  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)))
    sys.stdout.flush()
