"""The CPU lane (issue #7): big runs parse in worker processes, and archive the same.

The lane's unit tests run real worker processes (forkserver) on module-level functions;
the pipeline tests archive the same feeds with the workers forced on and with parsing
inline, and compare the archives by natural keys.
"""

from __future__ import annotations

import os
import signal
import threading
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from loopback import FIXTURES, LoopbackSite, serve_pytorch
from test_history import keyed_dump

import podarchive.read.jobs as reading
import podarchive.runtime.cpu as cpu
from podarchive.core.errors import Abandoned, ParseError, PodarchiveError
from podarchive.core.settings import Settings
from podarchive.read.feed_fields import parse_duration
from podarchive.read.schedule_files import FeedSchedule
from podarchive.runtime.cpu import CpuLane
from podarchive.runtime.pool import SafePool
from podarchive.store import Archive
from podarchive.update.run import update_feeds

needs_two_cores = pytest.mark.skipif(cpu.usable_cores() < 2, reason="one usable core")


@pytest.fixture
def pools(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Counts the worker pools the lane starts (and their sizes)."""
    started: list[int] = []

    class Counted(SafePool):
        def __init__(self, workers: int, **kwargs: Any) -> None:
            started.append(workers)
            super().__init__(workers, **kwargs)

    monkeypatch.setattr(cpu, "SafePool", Counted)
    return started


def test_small_work_runs_inline_without_a_pool(pools: list[int]) -> None:
    with CpuLane(2, start_after=1000) as lane:
        assert lane.run(parse_duration, "1:02:03", weight=10) == 3723
        assert lane.map(parse_duration, [("10",), ("1:00",)], weight=500) == [10, 60]
        assert not lane.started
    assert pools == []


def test_one_process_never_starts_a_pool(pools: list[int]) -> None:
    with CpuLane(1, start_after=0) as lane:
        assert lane.map(parse_duration, [("5",)] * 3, weight=10**9) == [5, 5, 5]
    assert pools == []


@needs_two_cores
def test_big_work_goes_to_worker_processes_in_order(pools: list[int]) -> None:
    texts = [f"{h}:{m:02d}:00" for h in range(3) for m in range(60)]
    with CpuLane(2, start_after=100) as lane:
        assert lane.run(parse_duration, "1", weight=50) == 1  # under the threshold: inline
        assert not lane.started
        results = lane.map(parse_duration, [(t,) for t in texts], weight=10_000)
        assert lane.started
    assert results == [parse_duration(t) for t in texts]
    assert pools == [2]


@needs_two_cores
def test_a_workers_exception_comes_back_as_it_is() -> None:
    with CpuLane(2, start_after=0) as lane, pytest.raises(ParseError, match="empty body"):
        lane.run(reading.read_feed, b"   ", None, "http://example.com/f", weight=1)


@needs_two_cores
def test_abort_gives_up_waiting_at_once() -> None:
    lane = CpuLane(2, start_after=0)
    body = (FIXTURES / "pytorch" / "feed.xml").read_bytes()
    lane.run(reading.read_feed, body, None, "http://example.com/f", weight=1)  # pool is up
    threading.Timer(0.05, lane.abort).start()
    with pytest.raises(Abandoned):
        lane.map(reading.read_feed, [(body, None, "http://e.com/f")] * 200, weight=1)
    lane.close()


def big_feed(items: int) -> bytes:
    """An RSS feed of ``items`` items of about 3 KB each, with links in their notes."""
    para = '<p>Notes of {i} with <a href="https://example.com/{i}/{j}">link {j}</a>.</p>'
    parts = [
        '<?xml version="1.0" encoding="UTF-8"?>\n<rss version="2.0" '
        'xmlns:content="http://purl.org/rss/1.0/modules/content/"><channel>'
        "<title>Big</title><link>https://example.com/</link><description>d</description>"
    ]
    for i in range(items):
        notes = "".join(para.format(i=i, j=j) for j in range(40))
        parts.append(
            f"<item><title>Episode {i}</title><guid>big-{i}</guid>"
            f"<link>https://example.com/ep/{i}</link>"
            f"<pubDate>Mon, 0{1 + i % 9} Jan 2024 10:{i % 60:02d}:00 GMT</pubDate>"
            f"<content:encoded><![CDATA[{notes}]]></content:encoded></item>\n"
        )
    parts.append("</channel></rss>\n")
    return "".join(parts).encode()


def archive_runs(
    db: Path, schedules: list[FeedSchedule], runs: int, settings: Settings, before: Any = None
) -> Path:
    with Archive(db) as archive:
        for run in range(runs):
            if before is not None:
                before(run)
            now = datetime(2024, 1, 1, tzinfo=UTC) + timedelta(hours=run)  # order-free times
            report = update_feeds(archive, schedules, settings=settings, clock=lambda at=now: at)
            assert not report.failed, report.failed[0].error
    return db


@needs_two_cores
def test_workers_archive_what_inline_parsing_archives(
    tmp_path: Path, site: LoopbackSite, pools: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A chunked, parallel first ingest and a re-poll with a new item, pages included."""
    monkeypatch.setattr(cpu, "START_AFTER", 0)  # every job goes to the workers
    monkeypatch.setattr(reading, "CHUNK_BYTES", 64 * 1024)  # several chunks per body
    feed_url = serve_pytorch(site)
    site.serve("/big", big_feed(120))
    schedules = [
        FeedSchedule(url=feed_url, name="pytorch", allow_private_hosts=True),
        FeedSchedule(url=site.url("/big"), name="big", pages=False),
    ]

    def grow(run: int) -> None:
        if run == 1:
            site.serve("/big", big_feed(121))

    base = Settings(host_gap=0, retries=0, allow_private_hosts=True)
    parallel = archive_runs(tmp_path / "parallel.db", schedules, 2, base.replace(processes=2), grow)
    assert pools == [2, 2]  # each run started its workers
    site.serve("/big", big_feed(120))
    inline = archive_runs(tmp_path / "inline.db", schedules, 2, base.replace(processes=1), grow)
    assert keyed_dump(parallel) == keyed_dump(inline)
    with Archive(parallel) as archive:
        assert archive.count("episodes") == 9 + 121
        assert (
            archive.db.execute("SELECT count(*) FROM episodes WHERE page_status = 'ok'").fetchone()[
                0
            ]
            == 9
        )


@needs_two_cores
def test_a_bad_feed_in_the_workers_fails_alone(
    tmp_path: Path, site: LoopbackSite, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(cpu, "START_AFTER", 0)
    site.serve("/good", big_feed(5))
    site.serve("/bad", b"<!doctype html><html><body>no feed here</body></html>")
    schedules = [
        FeedSchedule(url=site.url(p), name=p.strip("/"), pages=False) for p in ("/good", "/bad")
    ]
    with Archive(tmp_path / "a.db") as archive:
        report = update_feeds(
            archive, schedules, settings=Settings(host_gap=0, retries=0, processes=2)
        )
        assert [f.label for f in report.failed] == ["bad"]
        assert report.failed[0].error == "not a feed: got an HTML page"
        assert archive.count("episodes") == 5


def die_if(flag: bool, value: int) -> int:
    """A job whose worker is killed (as the kernel's OOM killer would) when ``flag``."""
    if flag:
        os.kill(os.getpid(), signal.SIGKILL)
    return value


def sigint_ignored() -> bool:
    return signal.getsignal(signal.SIGINT) == signal.SIG_IGN


@needs_two_cores
def test_a_dead_worker_fails_its_job_alone_and_the_lane_goes_on() -> None:
    with CpuLane(2, start_after=0) as lane:
        with pytest.raises(PodarchiveError, match="parser process died"):
            lane.map(die_if, [(False, 1), (True, 2), (False, 3)], weight=1)
        assert lane.map(die_if, [(False, 4), (False, 5)], weight=1) == [4, 5]


@needs_two_cores
def test_workers_leave_ctrl_c_to_the_run() -> None:
    with CpuLane(2, start_after=0) as lane:
        assert lane.run(sigint_ignored, weight=1)
    assert not sigint_ignored()
