"""(c) One new episode in a 1,000-episode feed: time to ingest it (item cache vs full parse).

Run: ``python benchmarks/one_new.py``. Pages off: the figure is the feed's ingest.
"""

from __future__ import annotations

import statistics
import tempfile
from pathlib import Path

from common import arguments, bench_settings, cpu_wall, fresh_archive, machine, schedules, show
from feedgen import FeedSpec, feed
from server import ServerProcess

from podarchive.update.run import update_feeds


def main() -> None:
    args = arguments(__doc__)
    episodes, rounds = (30, 2) if args.smoke else (1000, 5)
    print(machine())
    print("host_gap=0 (everything is on 127.0.0.1)\n")
    rows = [("case", "wall ms (median)", "client CPU ms", "new", "unchanged")]
    with ServerProcess(lifetime=600) as srv, tempfile.TemporaryDirectory() as tmp:
        for cache in (True, False):
            name = f"one{int(cache)}"
            srv.set({f"/{name}": feed(FeedSpec(name, episodes))})
            url = srv.url(f"/{name}")
            # one process: worker processes would take the full parse's CPU out of the figure
            settings = bench_settings(item_cache=cache, processes=1)
            walls, cpus, stats = [], [], None
            with fresh_archive(Path(tmp), f"{name}.db") as archive:
                assert not update_feeds(archive, schedules([url]), settings=settings).failed
                for r in range(1, rounds + 1):
                    srv.set({f"/{name}": feed(FeedSpec(name, episodes + r))})
                    with cpu_wall() as t:
                        (report,) = update_feeds(archive, schedules([url]), settings=settings).feeds
                    assert report.ok, report
                    assert report.stats.new == 1, report
                    walls.append(1000 * t["wall"])
                    cpus.append(1000 * t["cpu"])
                    stats = report.stats
            assert stats is not None
            label = "item cache" if cache else "forced full parse"
            rows.append(
                (
                    f"1 new in {episodes} eps, {label}",
                    f"{statistics.median(walls):.1f}",
                    f"{statistics.median(cpus):.1f}",
                    str(stats.new),
                    str(stats.unchanged),
                )
            )
    show(rows)
    print(f"ratio full/cache (wall): {float(rows[2][1]) / float(rows[1][1]):.1f}x")


if __name__ == "__main__":
    main()
