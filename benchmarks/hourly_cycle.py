"""(d) An hourly cycle of 10,000 feeds: most unchanged (304), some with only a new
lastBuildDate, a few with a new episode. Wall time and peak memory of the cycle, which runs
in a process of its own as a cron run does (the setup and the benchmark's data are not in
its memory).

Run: ``python benchmarks/hourly_cycle.py``. Feeds are small (30 episodes), pages off. The
changed feeds are ingested for real; the unchanged ones get a cloned fetch state (their
poll is a 304 that reads and writes only that state).
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from common import (
    arguments,
    bench_settings,
    clone_feed_states,
    cpu_wall,
    fresh_archive,
    machine,
    run_in_child,
    schedules,
    show,
)
from feedgen import FeedSpec, feed
from server import ServerProcess

from podarchive.update.run import update_feeds

EPISODES = 30


def main() -> None:
    args = arguments(__doc__)
    total, dated, grown = (200, 10, 3) if args.smoke else (10_000, 500, 50)
    print(machine())
    print("host_gap=0, per_host=8 (everything is on 127.0.0.1); server in a child process\n")
    with ServerProcess(lifetime=1200) as srv, tempfile.TemporaryDirectory() as tmp:
        real = [f"/real/{k}" for k in range(dated + grown)]
        specs = {p: FeedSpec(name=f"r{k}", episodes=EPISODES) for k, p in enumerate(real)}
        srv.set({p: feed(s) for p, s in specs.items()})
        same = feed(FeedSpec(name="same", episodes=EPISODES))
        quiet = [f"/quiet/{k}" for k in range(total - len(real))]
        srv.set({p: same for p in quiet})
        urls = [srv.url(p) for p in real + quiet]
        with fresh_archive(Path(tmp), "cycle.db") as archive:
            with cpu_wall() as setup:
                report = update_feeds(
                    archive, schedules(urls[: len(real) + 1]), settings=bench_settings()
                )
                assert not report.failed, report.failed[0].error
                clone_feed_states(archive, urls[len(real)], urls[len(real) + 1 :])
            changes = {}
            for k, path in enumerate(real):
                spec = specs[path]
                date = "Tue, 07 Jun 2022 14:00:00 +0000"
                extra = 1 if k >= dated else 0
                changes[path] = feed(FeedSpec(spec.name, EPISODES + extra, build_date=date))
            srv.set(changes)
            del specs, changes, same
        before = srv.counts()
        t = run_in_child(Path(tmp) / "cycle.db", urls)  # a cron run: a process of its own
        after = srv.counts()
        assert not t["failed"], t["failed"]
        new = t["new"]
        assert new == grown, new
    show(
        [
            ("cycle", "wall s", "client CPU s", "peak RSS MB", "requests", "304s", "new eps"),
            (
                f"{total} feeds: {total - dated - grown} unchanged, "
                f"{dated} lastBuildDate, {grown} new",
                f"{t['wall']:.1f}",
                f"{t['cpu']:.1f}",
                f"{t['peak_rss_mb']:.0f} ({t['rss_before_mb']:.0f} at start)",
                str(after[0] - before[0]),
                str(after[1] - before[1]),
                str(new),
            ),
        ]
    )
    print(f"(setup: {setup['wall']:.1f} s to ingest {len(real) + 1} feeds and clone the rest)")


if __name__ == "__main__":
    main()
