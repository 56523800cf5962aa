"""The CPU lane sized to the run (#30): a run of a few feeds parses in its own process (no
fork server, no workers), and a worker imports what parsing needs, not the command-line tool.
"""

from __future__ import annotations

import multiprocessing
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from loopback import LoopbackSite
from test_cpu import big_feed

import podarchive.runtime.cpu as cpu
from podarchive.core.settings import Settings
from podarchive.read.schedule_files import FeedSchedule
from podarchive.runtime.cpu import (
    FEW_FEEDS,
    FEW_FEEDS_START_AFTER,
    START_AFTER,
    lane_plan,
)
from podarchive.runtime.pool import SafePool
from podarchive.store import Archive
from podarchive.update import big_ingest
from podarchive.update.run import update_feeds

SRC = Path(cpu.__file__).resolve().parents[2]


def test_a_few_feeds_wait_for_much_more_markup_before_a_pool() -> None:
    assert lane_plan(1) == (0, FEW_FEEDS_START_AFTER)
    assert lane_plan(FEW_FEEDS - 1) == (0, FEW_FEEDS_START_AFTER)
    assert FEW_FEEDS_START_AFTER > 18 * 1024 * 1024  # 10 feeds of 300 episodes stay inline


def test_many_feeds_or_a_stream_start_a_pool_after_a_megabyte() -> None:
    assert lane_plan(FEW_FEEDS) == (0, START_AFTER)
    assert lane_plan(1000) == (0, START_AFTER)
    assert lane_plan(None) == (0, START_AFTER)  # a stream: its size is not known


def test_a_big_first_ingest_sends_every_job_to_the_workers() -> None:
    assert lane_plan(100, big=True) == (0, 0)
    assert lane_plan(5, processes=2, big=True) == (2, 0)
    assert lane_plan(100, processes=1, big=True) == (1, 0)  # never a pool anyway


def test_processes_set_by_hand_are_kept_whatever_the_run() -> None:
    assert lane_plan(2, processes=2) == (2, START_AFTER)
    assert lane_plan(2, processes=1) == (1, START_AFTER)  # never a pool anyway


def test_a_run_of_a_few_feeds_starts_no_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    started: list[int] = []

    class Counted(SafePool):
        def __init__(self, workers: int, **kwargs: Any) -> None:
            started.append(workers)
            super().__init__(workers, **kwargs)

    monkeypatch.setattr(cpu, "SafePool", Counted)
    with LoopbackSite() as site:
        for name in ("a", "b", "c"):
            site.serve(f"/{name}", big_feed(200))  # 3 x 0.7 MB: over START_AFTER in all
        schedules = [
            FeedSchedule(url=site.url(f"/{n}"), name=n, pages=False) for n in ("a", "b", "c")
        ]
        settings = Settings(host_gap=0, retries=0, allow_private_hosts=True)
        with Archive(tmp_path / "a.db") as archive:
            report = update_feeds(archive, schedules, settings=settings)
            assert not report.failed
            assert archive.count("episodes") == 600
            assert started == []
            assert multiprocessing.active_children() == []
        if cpu.usable_cores() >= 2:  # the same first run with workers asked for starts them
            with Archive(tmp_path / "b.db") as archive:
                update_feeds(archive, schedules, settings=settings.replace(processes=2))
            assert started == [2]


@pytest.mark.skipif(cpu.usable_cores() < 2, reason="one usable core")
def test_a_big_first_run_parses_nothing_in_its_own_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A big first ingest starts its workers for its first (tiny) feed; the next run of the
    same feeds, not big any more, parses them in its own process (#30)."""
    started: list[int] = []
    inline: list[object] = []

    class Counted(SafePool):
        def __init__(self, workers: int, **kwargs: Any) -> None:
            started.append(workers)
            super().__init__(workers, **kwargs)

    monkeypatch.setattr(cpu, "SafePool", Counted)
    monkeypatch.setattr(big_ingest, "BIG_INGEST_FEEDS", 3)
    inline_map = cpu.CpuLane._inline_map
    monkeypatch.setattr(
        cpu.CpuLane,
        "_inline_map",
        lambda lane, fn, jobs: inline.append(fn) or inline_map(lane, fn, jobs),
    )
    with LoopbackSite() as site:
        for name in ("a", "b", "c"):
            site.serve(f"/{name}", big_feed(2))
        schedules = [
            FeedSchedule(url=site.url(f"/{n}"), name=n, pages=False) for n in ("a", "b", "c")
        ]
        settings = Settings(host_gap=0, retries=0, allow_private_hosts=True)
        with Archive(tmp_path / "a.db") as archive:
            assert not update_feeds(archive, schedules, settings=settings).failed
            assert archive.count("episodes") == 6
            assert started == [cpu.usable_cores()]
            assert inline == []
            assert multiprocessing.active_children() == []
            site.serve("/a", big_feed(3))  # one new episode: the next run is not big
            assert not update_feeds(archive, schedules, settings=settings).failed
            assert archive.count("episodes") == 7
            assert started == [cpu.usable_cores()]  # no pool this time
            assert inline != []


@pytest.mark.skipif(sys.version_info >= (3, 14), reason="spawn takes the plain path from 3.14")
def test_a_worker_imports_no_client_database_or_web_library(tmp_path: Path) -> None:
    """Run as the console script is (a script that imports the CLI is ``__main__``), the
    parent's main module is not imported again in the workers."""
    script = tmp_path / "podarchive_script.py"
    script.write_text(
        "import podarchive.cli.run  # what the console script has imported for run\n"
        "from podarchive.read.jobs import loaded_modules\n"
        "from podarchive.runtime.cpu import CpuLane\n"
        "if __name__ == '__main__':\n"
        "    with CpuLane(2, start_after=0) as lane:\n"
        "        assert lane.started is False\n"
        "        names = lane.run(loaded_modules, weight=1)\n"
        "        assert lane.started\n"
        "    print(' '.join(sorted(names)))\n"
    )
    done = subprocess.run(
        [sys.executable, str(script)],
        capture_output=True,
        text=True,
        timeout=120,
        env={"PYTHONPATH": str(SRC), "PATH": "/usr/bin:/bin"},
        check=False,
    )
    assert done.returncode == 0, done.stderr
    names = set(done.stdout.split())
    assert "podarchive.read.parse" in names  # it is a worker that has parsed
    assert "sqlite3" not in names
    for library in ("httpx", "sqlite_utils", "datasette", "click", "podarchive.cli"):
        assert library not in names
