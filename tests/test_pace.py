"""A run's slow start (#30, ``update.pace``): a few fetches in flight at first, one more for
each one stored while the CPU lane keeps up, to ``concurrency``. Event-driven: a server that
holds its responses, and what it saw in flight, from its own log."""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler
from pathlib import Path

from loopback import LoopbackSite
from test_memory_bounds import feed, wait_for

from podarchive.core.settings import Settings
from podarchive.read.schedule_files import FeedSchedule
from podarchive.store import Archive
from podarchive.update.pace import Pace, first_in_flight
from podarchive.update.run import update_feeds

SETTINGS = Settings(
    concurrency=8, per_host=8, host_gap=0, retries=0, processes=2, allow_private_hosts=True
)


def test_the_pace_grows_by_one_for_each_fetch_stored_while_the_lane_keeps_up() -> None:
    pace = Pace(first_in_flight(2), 8)
    assert pace.now == 3
    pace.stored(lane_saturated=True)
    assert pace.now == 3  # parsing is the bottleneck: no more in flight
    for expected in (4, 5, 6, 7, 8, 8):
        pace.stored(lane_saturated=False)
        assert pace.now == expected
    assert Pace(first_in_flight(8), 4).now == 4  # never above the limit
    assert Pace(first_in_flight(1), 1).now == 1


class Held:
    """Feed responses held until ``release`` is set (or ``count`` are held at once); counts
    the most requests it held at once."""

    def __init__(self, site: LoopbackSite, count: int) -> None:
        self.site, self.count = site, count
        self.release = threading.Event()
        self.lock = threading.Lock()
        self.now = self.most = 0

    def route(self, k: int) -> None:
        body = feed(k)

        def handle(h: BaseHTTPRequestHandler) -> None:
            with self.lock:
                self.now += 1
                self.most = max(self.most, self.now)
                if self.now >= self.count:
                    self.release.set()
            self.release.wait(30)
            with self.lock:
                self.now -= 1
            h.send_response(200)
            h.send_header("Content-Type", "application/rss+xml")
            h.send_header("Content-Length", str(len(body)))
            h.end_headers()
            h.wfile.write(body)

        self.site.handle(f"/f/{k}", handle)


def _run(tmp_path: Path, site: LoopbackSite, feeds: int, out: list[object]) -> threading.Thread:
    schedules = [FeedSchedule(url=site.url(f"/f/{k}"), pages=False) for k in range(feeds)]

    def run() -> None:
        with Archive(tmp_path / "a.db") as archive:
            report = update_feeds(archive, schedules, settings=SETTINGS)
            out.append([f.error for f in report.feeds])

    runner = threading.Thread(target=run)
    runner.start()
    return runner


def test_a_run_starts_with_a_few_fetches_in_flight(tmp_path: Path) -> None:
    """Every response held: the run asks for the lane's processes and one more, no more."""
    out: list[object] = []
    with LoopbackSite() as site:
        held = Held(site, count=99)
        for k in range(10):
            held.route(k)
        runner = _run(tmp_path, site, 10, out)
        try:
            assert wait_for(lambda: held.most >= 3, 30)
            assert not wait_for(lambda: len(site.requests) > 3, 1.0)
        finally:
            held.release.set()
            runner.join(60)
    assert held.most == 3
    assert out == [[None] * 10]


def test_against_a_slow_server_the_run_reaches_full_concurrency(tmp_path: Path) -> None:
    """Sixteen feeds answered at once, then eight the server holds until it has all eight
    in flight together: the run gets there only if its pace has grown to ``concurrency``
    (else the server's wait runs out and ``most`` is short of eight)."""
    out: list[object] = []
    quick = 16
    with LoopbackSite() as site:
        held = Held(site, count=SETTINGS.concurrency)
        for k in range(quick):
            site.serve(f"/f/{k}", feed(k))
        for k in range(quick, quick + SETTINGS.concurrency):
            held.route(k)
        runner = _run(tmp_path, site, quick + SETTINGS.concurrency, out)
        runner.join(90)
        held.release.set()
    assert not runner.is_alive()
    assert held.most == SETTINGS.concurrency
    assert out == [[None] * (quick + SETTINGS.concurrency)]
