"""(e) Side by side with reader (lemon24's, PyPI) on the same loopback feeds.

Full update (first fetch of every feed) and no-change update (every feed answers 304).
Run: ``pip install reader`` (benchmark only), then ``python benchmarks/vs_reader.py``.
Skips with a message when reader is not installed. podarchive runs with pages off.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

from common import arguments, bench_settings, cpu_wall, fresh_archive, machine, schedules, show
from feedgen import FeedSpec, feed, notes
from server import ServerProcess

from podarchive.read.extract import notes_text_and_links
from podarchive.update.run import update_feeds


def main() -> None:
    args = arguments(__doc__)
    try:
        import reader as reader_lib
    except ImportError:
        print("reader is not installed (pip install reader): skipped")
        return
    feeds, episodes = (4, 10) if args.smoke else (50, 100)
    print(machine() + f"; reader {reader_lib.__version__}")
    print("host_gap=0 for podarchive; reader with its defaults; server in a child process\n")
    with ServerProcess(lifetime=900) as srv, tempfile.TemporaryDirectory() as tmp:
        paths = [f"/vs/{k}" for k in range(feeds)]
        srv.set({p: feed(FeedSpec(name=f"vs{k}", episodes=episodes)) for k, p in enumerate(paths)})
        urls = [srv.url(p) for p in paths]
        figures: dict[tuple[str, str], float] = {}
        with fresh_archive(Path(tmp), "pod.db") as archive:
            for phase in ("full", "no change"):
                with cpu_wall() as t:
                    report = update_feeds(archive, schedules(urls), settings=bench_settings())
                assert not report.failed, report.failed[0].error
                figures[("podarchive", phase)] = t["wall"]
        r = reader_lib.make_reader(str(Path(tmp) / "reader.sqlite"))
        for url in urls:
            r.add_feed(url)
        for phase in ("full", "no change"):
            before = srv.counts()
            with cpu_wall() as t:
                r.update_feeds(
                    workers=8, scheduled=False
                )  # poll every feed, as podarchive does here
            figures[("reader", phase)] = t["wall"]
            requests = srv.counts()[0] - before[0]
            assert requests == feeds, f"reader made {requests} requests for {feeds} feeds"
        assert sum(1 for _ in r.get_entries()) == feeds * episodes
        r.close()
    rows = [("update", "podarchive s", "reader s", "podarchive faster by")]
    for phase in ("full", "no change"):
        ours, theirs = figures[("podarchive", phase)], figures[("reader", phase)]
        rows.append(
            (
                f"{phase} ({feeds} feeds x {episodes} eps)",
                f"{ours:.2f}",
                f"{theirs:.2f}",
                f"{theirs / ours:.1f}x",
            )
        )
    show(rows)
    with cpu_wall() as t:
        for _ in range(feeds):
            for i in range(episodes):
                notes_text_and_links(notes(i), "https://example.com/")
    print(
        f"\nwork reader does not do: the text and links of the {feeds * episodes} show notes "
        f"with BeautifulSoup cost {t['cpu']:.2f} s of CPU on one core "
        f"({1000 * t['cpu'] / (feeds * episodes):.2f} ms per note)"
    )
    sys.stdout.flush()


if __name__ == "__main__":
    main()
