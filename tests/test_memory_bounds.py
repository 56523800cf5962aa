"""A run's memory follows its largest feed, not its number of feeds (issue #15).

What bounds it, each proved by what it does rather than by a stopwatch or a memory figure
(those are ``benchmarks/vs_peers.py --check``'s):

* the run starts no more fetches than it has request slots until one of them is stored:
  with the archive's writer held up, the server sees exactly ``concurrency`` feed requests;
* the CPU lane takes a big feed's chunks from their generator only as workers are ready;
* parsed episodes cross from a worker process packed, and unpack in order, a chunk at a time.
"""

from __future__ import annotations

import pickle
import platform
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
from loopback import LoopbackSite
from test_cpu import needs_two_cores

from podarchive.core.settings import Settings
from podarchive.core.types import Link, Tag
from podarchive.read.jobs import EpisodeWrites, read_feed
from podarchive.read.schedule_files import FeedSchedule
from podarchive.runtime.cpu import CpuLane
from podarchive.runtime.malloc import return_big_blocks
from podarchive.store import Archive
from podarchive.update.run import RunReport, in_flight_limit, update_feeds

FEED = """<?xml version="1.0"?><rss version="2.0"><channel><title>Feed {k}</title>
<link>https://example.com/{k}</link>{items}</channel></rss>"""
ITEM = """<item><title>Episode {i}</title><guid>f{k}-{i}</guid>
<description><![CDATA[<p>Notes {i} with <a href="https://example.com/{k}/{i}">a link</a>.</p>]]>
</description></item>"""


def feed(k: int, items: int = 3) -> bytes:
    return FEED.format(k=k, items="".join(ITEM.format(k=k, i=i) for i in range(items))).encode()


def wait_for(condition: Callable[[], bool], seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.01)
    return False


def test_a_run_starts_no_more_feeds_than_it_can_store(tmp_path: Path) -> None:
    """Six feeds, two request slots, and the writer held up (its clock stops when it comes
    to store the first feed that finished): the two feeds are fetched and parsed, then the run waits to store them
    instead of fetching the other four into memory. Once the writer goes on, every feed is
    archived, each fetched once."""
    path = tmp_path / "archive.db"
    settings = Settings(
        concurrency=2, per_host=2, host_gap=0, retries=0, processes=1, allow_private_hosts=True
    )
    assert in_flight_limit(settings) == 2
    release = threading.Event()
    with LoopbackSite() as site:
        for k in range(6):
            site.serve(f"/f/{k}", feed(k))
        schedules = [FeedSchedule(url=site.url(f"/f/{k}"), pages=False) for k in range(6)]
        reports: list[RunReport] = []

        def clock() -> datetime:
            if sys._getframe(1).f_code.co_name == "_store":  # the writer, about to store
                release.wait(30)  # is held up here
            return datetime(2026, 12, 3, 12, 0, tzinfo=UTC)

        def run() -> None:
            with Archive(path) as archive:
                reports.append(update_feeds(archive, schedules, settings=settings, clock=clock))

        runner = threading.Thread(target=run)
        runner.start()
        try:
            assert wait_for(lambda: len(site.requests) >= 2, 30)
            # the other four would be asked for now if finished feeds could pile up
            assert not wait_for(lambda: len(site.requests) > 2, 1.5)
            seen_while_held = [r.path for r in site.requests]
        finally:
            release.set()
            runner.join(60)
    assert sorted(seen_while_held) == ["/f/0", "/f/1"]
    assert not runner.is_alive()
    assert [f.error for f in reports[0].feeds] == [None] * 6
    assert sorted(r.path for r in site.requests) == [f"/f/{k}" for k in range(6)]
    with Archive(path) as archive:
        assert archive.db.execute("SELECT count(*) FROM episodes").fetchone()[0] == 18


@needs_two_cores
def test_the_lane_takes_chunks_only_as_workers_are_ready(tmp_path: Path) -> None:
    """A job's argument is made when it is about to be sent: never more than two a worker
    ahead of the finished jobs (each job leaves a file, seen before the next is made)."""
    ahead: list[int] = []

    def jobs() -> Iterator[tuple[Path]]:
        for k in range(24):
            done = sum(1 for _ in tmp_path.glob("done-*"))
            ahead.append(k - done)
            yield (tmp_path / f"done-{k}",)

    with CpuLane(2, start_after=0) as lane:
        lane.map(Path.touch, jobs(), weight=10**9)
    assert len(ahead) == 24
    assert sum(1 for _ in tmp_path.glob("done-*")) == 24
    assert max(ahead) <= 2 * 2, ahead


@needs_two_cores
def test_the_lane_holds_a_few_jobs_for_all_its_callers_together(tmp_path: Path) -> None:
    """Three fetch threads with big feeds at once: the jobs in the pool stay two a worker
    in all, not two a worker for each thread (a job's argument is made just before it
    takes a slot, so each thread may hold one made and not yet sent)."""
    lock = threading.Lock()
    ahead: list[int] = []
    pulled = 0

    def jobs(thread: int) -> Iterator[tuple[Path]]:
        nonlocal pulled
        for k in range(12):
            with lock:
                pulled += 1
                ahead.append(pulled - sum(1 for _ in tmp_path.glob("done-*")))
            yield (tmp_path / f"done-{thread}-{k}",)

    with CpuLane(2, start_after=0) as lane:
        callers = [
            threading.Thread(target=lane.map, args=(Path.touch, jobs(t)), kwargs={"weight": 1})
            for t in range(3)
        ]
        for caller in callers:
            caller.start()
        for caller in callers:
            caller.join(60)
    assert sum(1 for _ in tmp_path.glob("done-*")) == 36
    assert max(ahead) <= 2 * 2 + 3, ahead


def writes_of(k: int, items: int) -> EpisodeWrites:
    return read_feed(feed(k, items), None, f"https://example.com/{k}").writes


def test_writes_made_here_stay_objects() -> None:
    writes = writes_of(1, 4)
    assert len(writes) == 4
    assert [w.key for w in writes] == [w.key for w in writes]
    assert list(writes)[0].row["title"] == "Episode 0"


def test_writes_cross_a_process_packed_and_unpack_in_order() -> None:
    writes = writes_of(1, 50)
    sent = pickle.dumps(writes)
    assert len(sent) < len(pickle.dumps(tuple(writes))) / 2  # compressed on the way
    received = pickle.loads(sent)
    assert len(received) == 50
    assert list(received) == list(writes)
    assert list(received) == list(writes)  # iterable again: unpacked anew each time
    assert list(writes)[3] in received


def test_joined_writes_keep_the_order_of_their_parts() -> None:
    a, b, c = writes_of(1, 3), pickle.loads(pickle.dumps(writes_of(2, 5))), writes_of(3, 2)
    joined = EpisodeWrites.join([a, b, c])
    assert len(joined) == 10
    assert [w.key for w in joined] == [w.key for part in (a, b, c) for w in part]
    assert list(pickle.loads(pickle.dumps(joined))) == list(joined)
    assert len(EpisodeWrites.join([])) == 0
    assert list(EpisodeWrites()) == []


@pytest.mark.parametrize("items", [0, 1, 7])
def test_packed_writes_equal_plain_ones(items: int) -> None:
    writes = writes_of(4, items)
    assert list(pickle.loads(pickle.dumps(writes))) == list(writes)


def test_the_allocator_is_told_to_return_big_blocks() -> None:
    """On glibc (this machine, the CI's), mallopt takes the fixed threshold; elsewhere the
    call says it could not, and nothing else changes."""
    glibc = sys.platform.startswith("linux") and platform.libc_ver()[0] == "glibc"
    assert return_big_blocks() is glibc


def test_setting_the_allocator_starts_no_process() -> None:
    """``ctypes.util.find_library`` ran ``ldconfig -p`` in a child at every start (#30): in a
    fresh interpreter the setting is made without loading that module."""
    if not (sys.platform.startswith("linux") and platform.libc_ver()[0] == "glibc"):
        pytest.skip("glibc only")
    probe = (
        "import sys\n"
        "from podarchive.runtime.malloc import return_big_blocks\n"
        "print(return_big_blocks(), 'ctypes.util' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["True", "False"]


def test_links_and_tags_cross_a_process_as_themselves() -> None:
    link = Link(3, "https://e.com/A?utm_source=x", "https://e.com/A", "e.com", "a link")
    tags = (
        Tag("https://podcastindex.org/namespace/1.0", "person", (("role", "host"),), "Ann"),
        Tag("", "x", (), None, parent=0, position=2),
    )
    assert pickle.loads(pickle.dumps(link)) == link
    assert pickle.loads(pickle.dumps(tags)) == tags
