"""(#27) What keeping each poll's captures costs: archive bytes and client CPU per feed poll.

Feeds of 30 episodes are ingested once, then polled in rounds, each round twice in a row:
with captures off (``Archive.record_captures`` a no-op: the code before #27) and on. A
round is an unchanged poll (304: the first after a change, with new validators, so new
header sets), another (the usual hourly poll: its header sets are stored already) and a
changed one (a new ``lastBuildDate``: a 200 whose body is stored as a delta snapshot). Per
feed poll: the archive's growth (its pages in use after a checkpoint: whole pages, hence
many feeds), the bytes of ``captures`` and ``header_sets`` with their indexes (``dbstat``,
bytes in use) beside the fetch log's (``fetches``, the same run's reference), and the
client CPU. Run: ``python benchmarks/capture_cost.py``.
"""

from __future__ import annotations

import statistics
import tempfile
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from pathlib import Path

from common import arguments, bench_settings, cpu_wall, fresh_archive, machine, schedules, show
from feedgen import FeedSpec, feed
from server import ServerProcess

from podarchive.store import Archive
from podarchive.update.run import update_feeds

# bytes in use (pages less their unused space), so that a poll's few rows are not rounded
# to whole pages; a table's indexes count with it
TABLE_BYTES = (
    "SELECT coalesce(sum(d.pgsize - d.unused), 0) FROM dbstat d "
    "JOIN sqlite_master m ON m.name = d.name WHERE m.tbl_name = ?"
)


@contextmanager
def captures_off() -> Iterator[None]:
    original = Archive.record_captures
    Archive.record_captures = lambda self, *args, **kwargs: []  # type: ignore[method-assign]
    try:
        yield
    finally:
        Archive.record_captures = original  # type: ignore[method-assign]


def sizes(archive: Archive) -> dict[str, int]:
    db = archive.db
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    used = (
        db.execute("PRAGMA page_count").fetchone()[0]
        - db.execute("PRAGMA freelist_count").fetchone()[0]
    )
    found = {"archive": used * db.execute("PRAGMA page_size").fetchone()[0]}
    for table in ("captures", "header_sets", "fetches"):
        found[table] = db.execute(TABLE_BYTES, [table]).fetchone()[0]
    return found


def poll(
    srv: ServerProcess, archive: Archive, specs: list[FeedSpec], urls: list[str], date: str | None
) -> tuple[float, dict[str, int]]:
    """One poll of every feed (``date``: a new lastBuildDate, else unchanged: 304s)."""
    if date is not None:
        bodies = {
            f"/c/{s.name}": feed(FeedSpec(s.name, s.episodes, build_date=date)) for s in specs
        }
        srv.set(bodies)
    before = sizes(archive)
    with cpu_wall() as t:
        report = update_feeds(archive, schedules(urls), settings=bench_settings())
    assert not report.failed, report.failed[0].error
    assert all(f.not_modified == (date is None) for f in report.feeds)
    after = sizes(archive)
    return 1000 * t["cpu"] / len(urls), {k: after[k] - before[k] for k in after}


def main() -> None:
    args = arguments(__doc__)
    feeds, rounds = (10, 1) if args.smoke else (200, 3)
    print(machine())
    print(
        f"{feeds} feeds x 30 episodes; {rounds} rounds of (304, 304 again, changed) polls, "
        "off then on\n"
    )
    specs = [FeedSpec(name=f"cap{k}", episodes=30) for k in range(feeds)]
    results: dict[tuple[str, bool], list[tuple[float, dict[str, int]]]] = {}
    with ServerProcess(lifetime=900) as srv, tempfile.TemporaryDirectory() as tmp:
        srv.set({f"/c/{s.name}": feed(s) for s in specs})
        urls = [srv.url(f"/c/{s.name}") for s in specs]
        with fresh_archive(Path(tmp), "captures.db") as archive:
            assert not update_feeds(archive, schedules(urls), settings=bench_settings()).failed
            for n in range(rounds):
                for on in (False, True):
                    for case in ("304", "304 again", "changed"):
                        minute = 2 * n + on
                        date = f"Tue, 07 Jun 2022 10:{minute:02d}:00 +0000"
                        switch: AbstractContextManager[None] = (
                            nullcontext() if on else captures_off()
                        )
                        with switch:
                            unchanged = case.startswith("304")
                            got = poll(srv, archive, specs, urls, None if unchanged else date)
                        results.setdefault((case, on), []).append(got)
    rows = [("poll", "captures", "CPU ms/feed", "archive B/feed", "captures+header_sets B/feed",
             "fetches B/feed (reference)")]  # fmt: skip
    for (case, on), runs in sorted(results.items()):
        cpu = statistics.median(r[0] for r in runs)

        def per_feed(key: str, runs: list[tuple[float, dict[str, int]]] = runs) -> float:
            return statistics.median(r[1][key] for r in runs) / feeds

        kept = per_feed("captures") + per_feed("header_sets")
        rows.append(
            (case, "on" if on else "off", f"{cpu:.2f}", f"{per_feed('archive'):.0f}",
             f"{kept:.0f}", f"{per_feed('fetches'):.0f}")
        )  # fmt: skip
    show(rows)


if __name__ == "__main__":
    main()
