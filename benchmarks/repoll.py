"""(b) Unchanged re-poll: client CPU per feed for 304 and identical-body 200, by feed size.

Also a 300-episode feed whose body differs only in ``lastBuildDate``: its cost, with the item
cache and forced full, and that it writes no episode. Run: ``python benchmarks/repoll.py``.
"""

from __future__ import annotations

import statistics
import tempfile
from pathlib import Path

from common import (
    arguments,
    bench_settings,
    clone_feed_states,
    cpu_wall,
    fresh_archive,
    machine,
    schedules,
    show,
)
from feedgen import FeedSpec, feed
from server import ServerProcess

from podarchive.update.run import update_feeds


def unchanged_polls(
    srv: ServerProcess, tmp: Path, episodes: int, feeds: int, etag: bool
) -> tuple[float, float]:
    """(ms CPU per feed, ms wall per feed) over ``feeds`` feeds that all serve one body."""
    body = feed(FeedSpec(name=f"f{episodes}", episodes=episodes))
    kind = "etag" if etag else "noetag"
    paths = [f"/{kind}/{episodes}/{i}" for i in range(feeds)]
    srv.set({p: body for p in paths})
    urls = [srv.url(p) for p in paths]
    with fresh_archive(tmp, f"repoll-{episodes}-{kind}.db") as archive:
        report = update_feeds(archive, schedules(urls[:1]), settings=bench_settings())
        assert not report.failed, report.failed[0].error
        clone_feed_states(archive, urls[0], urls[1:])
        if not etag:
            archive.db.execute("UPDATE feeds SET etag = NULL")
        before = srv.counts()
        with cpu_wall() as t:
            report = update_feeds(archive, schedules(urls), settings=bench_settings())
        after = srv.counts()
        assert not report.failed
        assert all(f.not_modified for f in report.feeds)
        if etag:
            assert after[1] - before[1] == feeds  # every poll was a 304
    return 1000 * t["cpu"] / feeds, 1000 * t["wall"] / feeds


VERSIONS = "SELECT max(version_seen_at), group_concat(row_hash), count(*) FROM episodes"
SNAPSHOT_BYTES = "SELECT coalesce(sum(length(body)), 0) FROM snapshots"


def build_date_only(
    srv: ServerProcess, tmp: Path, episodes: int, feeds: int, polls: int
) -> list[tuple[str, ...]]:
    """``feeds`` feeds whose bodies change only in lastBuildDate, polled ``polls`` times.

    Several feeds per run so that the run's fixed cost (thread pool, an httpx client whose
    SSL context alone costs ~18 ms) is shared as it is in a real run.
    """
    rows: list[tuple[str, ...]] = []
    for cache in (True, False):
        specs = [FeedSpec(name=f"lbd{int(cache)}-{k}", episodes=episodes) for k in range(feeds)]
        paths = [f"/lbd/{spec.name}" for spec in specs]
        srv.set({p: feed(spec) for p, spec in zip(paths, specs, strict=True)})
        urls = [srv.url(p) for p in paths]
        # one process: worker processes would take the full parse's CPU out of the figure
        settings = bench_settings(item_cache=cache, processes=1)
        with fresh_archive(tmp, f"lbd-{cache}.db") as archive:
            assert not update_feeds(archive, schedules(urls), settings=settings).failed
            costs, writes = [], 0
            versions = archive.db.execute(VERSIONS).fetchone()
            snapshot_bytes = archive.db.execute(SNAPSHOT_BYTES).fetchone()[0]
            for poll in range(polls):
                date = f"Tue, 07 Jun 2022 {poll % 24:02d}:{poll % 60:02d}:00 +0000"
                srv.set(
                    {
                        p: feed(FeedSpec(spec.name, episodes, build_date=date))
                        for p, spec in zip(paths, specs, strict=True)
                    }
                )
                with cpu_wall() as t:
                    report = update_feeds(archive, schedules(urls), settings=settings)
                assert not report.failed
                assert not any(f.not_modified for f in report.feeds)
                writes += sum(f.stats.new + f.stats.changed for f in report.feeds)
                costs.append(1000 * t["cpu"] / feeds)
                assert archive.db.execute(VERSIONS).fetchone() == versions  # none rewritten
            grown = archive.db.execute(SNAPSHOT_BYTES).fetchone()[0] - snapshot_bytes
        label = "item cache" if cache else "forced full parse"
        rows.append(
            (
                f"lastBuildDate only, {episodes} eps, {label}",
                f"{statistics.median(costs):.1f} ms CPU/feed (median of {polls} polls x {feeds})",
                f"episode writes: {writes}",
                f"snapshot bytes per changed body: {grown / polls / feeds / 1e3:.1f} KB",
            )
        )
    return rows


def main() -> None:
    args = arguments(__doc__)
    feeds = 20 if args.smoke else 1000
    sizes = (5, 50) if args.smoke else (100, 10000)
    print(machine())
    print("host_gap=0, per_host=8 (everything is on 127.0.0.1); server in a child process\n")
    rows = [("case", "client CPU ms/feed", "wall ms/feed", "")]
    figures = {}
    with ServerProcess(lifetime=900) as srv, tempfile.TemporaryDirectory() as tmp:
        for etag in (True, False):
            for episodes in sizes:
                # a 200 of a 62 MB body x 1,000 would move 62 GB: fewer feeds for that cell
                count = feeds if etag or episodes <= 1000 else min(feeds, 50)
                cpu, wall = unchanged_polls(srv, Path(tmp), episodes, count, etag)
                figures[(etag, episodes)] = cpu
                kind = "304 (ETag)" if etag else "200, identical body"
                rows.append(
                    (f"{kind}, {episodes} eps x {count} feeds", f"{cpu:.2f}", f"{wall:.2f}", "")
                )
        for etag in (True, False):
            small, large = (figures[(etag, n)] for n in sizes)
            kind = "304" if etag else "200 identical"
            rows.append(
                (f"ratio {sizes[1]}/{sizes[0]} eps, {kind}", f"{large / small:.2f}x", "", "")
            )
        show(rows)
        print()
        show(
            build_date_only(
                srv,
                Path(tmp),
                20 if args.smoke else 300,
                3 if args.smoke else 10,
                2 if args.smoke else 5,
            )
        )


if __name__ == "__main__":
    main()
