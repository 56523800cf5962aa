"""The change feed's and republishing's cost (#28) on a synthetic archive.

Run: ``PYTHONPATH=src python benchmarks/change_feed.py [--feeds N] [--episodes E] [--smoke]``
(default 50 feeds x 400 episodes, saved once, then again with a tenth of the episodes retitled
and their notes edited: revisions with diffs). Prints the wall time of: the whole archive's
change feed as Atom; the latest 100 (what ``serve`` answers by default); the changes after a
cursor at the end (a cron job with nothing new); one podcast republished as RSS. The
reference, measured in the same run: reading every episode row (``SELECT *``), the least any
whole-archive report costs.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

# this folder holds a feedgen.py of its own (synthetic feeds): the library must win here
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).parent.resolve()]

from podarchive.core.types import EpisodeWrite, FetchRecord  # noqa: E402
from podarchive.formats.feeds import podcast_rss  # noqa: E402
from podarchive.store import Archive, ArchiveReader, FeedSave  # noqa: E402
from podarchive.tasks.changes import ChangeQuery, change_document, read_changes  # noqa: E402
from podarchive.tasks.republish import podcast_feed  # noqa: E402

T1, T2, NOW = "2026-12-01T10:00:00Z", "2026-12-02T10:00:00Z", "2027-01-01T00:00:00Z"
NOTES = "<p>" + " ".join(f"word{i}" for i in range(120)) + "</p><p>Second paragraph.</p>"


def _episode(feed: int, n: int, edited: bool) -> EpisodeWrite:
    notes = NOTES.replace("Second", "Edited second") if edited else NOTES
    row = {
        "guid": f"f{feed}-e{n}", "title": f"Episode {n}" + (" (fixed)" if edited else ""),
        "published": f"2020-01-01T00:00:{n % 60:02d}Z", "enclosure_url": f"https://cdn.example/{feed}/{n}.mp3",
        "enclosure_type": "audio/mpeg", "enclosure_length": 1000 + n, "notes_html": notes,
        "notes_text": notes.replace("<p>", "").replace("</p>", "\n"),
    }  # fmt: skip
    return EpisodeWrite(key=f"guid:f{feed}-e{n}", row=row, links=())


def build(db: Path, feeds: int, episodes: int) -> None:
    with Archive(db) as archive:
        for stamp, edited in ((T1, False), (T2, True)):
            for f in range(feeds):
                url = f"https://feeds.example/{f}.xml"
                state = archive.ensure_feed(url, f"Show {f}", stamp)
                rows = [_episode(f, n, edited and n % 10 == 0) for n in range(episodes)]
                archive.save_feed(
                    FeedSave(
                        state.id, {"title": f"Show {f}"}, rows, status=200, etag=None,
                        last_modified=None, content_hash=f"{f}-{stamp}", now=stamp,
                        records=[FetchRecord(url, "feed", stamp, 5, 200, 10)],
                    )
                )  # fmt: skip


def timed(label: str, work: object) -> float:
    start = time.perf_counter()
    result = work()  # type: ignore[operator]
    seconds = time.perf_counter() - start
    print(f"{label:<44} {seconds * 1000:9.1f} ms  ({result})")
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--feeds", type=int, default=50)
    parser.add_argument("--episodes", type=int, default=400)
    parser.add_argument("--smoke", action="store_true")
    args = parser.parse_args()
    feeds, episodes = (2, 20) if args.smoke else (args.feeds, args.episodes)
    with tempfile.TemporaryDirectory() as folder:
        db = Path(folder) / "archive.db"
        build(db, feeds, episodes)
        print(f"{feeds} feeds x {episodes} episodes, a tenth edited once")
        with ArchiveReader.open_to_read(db) as archive:
            reference = timed(
                "reference: every episode row (SELECT *)",
                lambda: len(archive.db.execute("SELECT * FROM episodes").fetchall()),
            )
            everything = read_changes(archive, ChangeQuery(now=NOW))
            last = everything[-1].order
            whole = timed(
                "the whole change feed, as Atom",
                lambda: len(
                    change_document(read_changes(archive, ChangeQuery(now=NOW)), "atom", title="t")
                ),
            )
            timed(
                "the latest 100 (serve's default)",
                lambda: len(read_changes(archive, ChangeQuery(limit=100, now=NOW))),
            )
            timed(
                "after a cursor at the end (nothing new)",
                lambda: len(read_changes(archive, ChangeQuery(after=last, now=NOW))),
            )
            timed(
                "one podcast's latest 100",
                lambda: len(read_changes(archive, ChangeQuery(feed_id=1, limit=100, now=NOW))),
            )
            timed(
                "one revision's page (its row)",
                lambda: len(archive.change_row("episode_revisions", 1)),
            )
            timed(
                "one podcast republished as RSS", lambda: len(podcast_rss(podcast_feed(archive, 1)))
            )
        print(f"changes: {len(everything)}; whole feed / reference: {whole / reference:.1f}x")


if __name__ == "__main__":
    main()
