"""WebSub (#29): notification-to-archive latency, p50/p95 over 100 signed notifications.

Run: ``python benchmarks/push_latency.py`` (``--smoke``: 10). An in-process daemon with its
WebSub endpoint, a stub hub and the feed on 127.0.0.1: each round adds one episode to the
feed, POSTs a signed notification to the daemon's callback (paced under the endpoint's cap
of 10 a second per hub) and times until the episode's row is in the archive. The reference,
measured in the same run: the same poll done directly (``update_feeds`` of the feed, one new
episode), i.e. the pipeline's own share.
"""

from __future__ import annotations

import sqlite3
import statistics
import sys
import tempfile
import threading
import time
from contextlib import closing
from datetime import timedelta
from pathlib import Path

from common import arguments, machine, show

sys.path.insert(0, str(Path(__file__).parent.parent / "tests"))
from loopback import LoopbackSite, Reply  # noqa: E402
from websub_hub import StubHub, rss  # noqa: E402

from podarchive.core.settings import Settings  # noqa: E402
from podarchive.daemon.push import HUB_RATE  # noqa: E402
from podarchive.daemon.scheduler import CycleResult, Daemon  # noqa: E402
from podarchive.daemon.service import PushOptions, cycle_update, push_side  # noqa: E402
from podarchive.read.schedule_files import FeedSchedule  # noqa: E402
from podarchive.store import Archive  # noqa: E402
from podarchive.update.run import update_feeds  # noqa: E402

PACE = 1.05 / HUB_RATE  # seconds between notifications: the endpoint caps each hub's rate


def count(db: Path) -> int:
    with closing(sqlite3.connect(db, timeout=10)) as conn:
        return int(conn.execute("SELECT count(*) FROM episodes").fetchone()[0])


def wait(condition, timeout: float = 30.0) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise SystemExit("timed out")
        time.sleep(0.002)


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(p / 100 * (len(ordered) - 1)))]


def pushed(tmp: Path, rounds: int, base: int) -> list[float]:
    db = tmp / "push.db"
    settings = Settings(host_gap=0)
    with StubHub(lease=3600) as hub, LoopbackSite() as site:
        url = site.url("/feed")
        site.routes["/feed"] = Reply(rss(base, hub.url, url))
        feed = FeedSchedule(url=url, every=timedelta(hours=1), allow_private_hosts=True)
        daemon = Daemon(load=lambda: [feed], update=lambda f, s: CycleResult(), watch=tmp, tick=0.5)
        push, server = push_side(daemon, db, settings, PushOptions("127.0.0.1:0", "http://x"))
        assert push is not None
        assert server is not None
        push.public_url = f"http://127.0.0.1:{server.port}"  # the port it was given
        daemon.update = cycle_update(db, settings, push)
        with Archive(db):
            pass
        server.start()
        push.start()
        thread = threading.Thread(target=daemon.run, args=([feed],), kwargs={"signals": False})
        thread.start()
        try:
            wait(lambda: hub.subscriptions() and hub.subscriptions()[0].verified == 200)
            wait(lambda: count(db) == base)
            sub = hub.subscriptions()[0]
            latencies = []
            last = 0.0
            for r in range(1, rounds + 1):
                site.routes["/feed"] = Reply(rss(base + r, hub.url, url))
                time.sleep(max(0.0, last + PACE - time.monotonic()))  # under the hub's cap
                start = last = time.monotonic()
                assert hub.publish(sub, b"x") == 202
                wait(lambda r=r: count(db) == base + r)
                latencies.append(1000 * (time.monotonic() - start))
        finally:
            daemon.request("stop")
            thread.join(timeout=30)
            server.stop()
            push.stop()
    return latencies


def direct(tmp: Path, rounds: int, base: int) -> list[float]:
    settings = Settings(host_gap=0, allow_private_hosts=True)
    with LoopbackSite() as site, Archive(tmp / "direct.db") as archive:
        url = site.url("/feed")
        feed = FeedSchedule(url=url, every=timedelta(hours=1))
        site.routes["/feed"] = Reply(rss(base, "http://h.invalid/", url))
        update_feeds(archive, [feed], settings=settings)
        times = []
        for r in range(1, rounds + 1):
            site.routes["/feed"] = Reply(rss(base + r, "http://h.invalid/", url))
            start = time.monotonic()
            (report,) = update_feeds(archive, [feed], settings=settings).feeds
            assert report.ok
            assert report.stats.new == 1
            times.append(1000 * (time.monotonic() - start))
    return times


def main() -> None:
    args = arguments(__doc__)
    rounds, base = (10, 20) if args.smoke else (100, 50)
    print(machine())
    print(f"{rounds} notifications, one new episode each, feed of {base}+ episodes\n")
    with tempfile.TemporaryDirectory() as tmp:
        push = pushed(Path(tmp), rounds, base)
        poll = direct(Path(tmp), rounds, base)
    rows = [("case", "p50 ms", "p95 ms", "max ms")]
    for name, values in (("POST → episode row (daemon)", push), ("direct poll (reference)", poll)):
        rows.append(
            (
                name,
                f"{statistics.median(values):.1f}",
                f"{percentile(values, 95):.1f}",
                f"{max(values):.1f}",
            )
        )
    show(rows)
    print(f"push overhead (p50): {statistics.median(push) - statistics.median(poll):.1f} ms")


if __name__ == "__main__":
    main()
