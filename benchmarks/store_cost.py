"""The store's cost alone: CPU of ``Archive.save_feed`` on a first ingest, and the archive's size.

Run: ``PYTHONPATH=src python benchmarks/store_cost.py [--feeds N] [--episodes E] [--profile]``
(default 20 feeds x 300 episodes of ``feedgen``: ~5 KB HTML notes with 32 links each). Every
feed is read beforehand (``reading.read_feed``, item hashes, the snapshot, as the pipeline
does), so only the saving is timed: CPU ms per episode of the first save, then of an identical
second save (nothing rewritten). ``--deferred`` makes the first saves inside
``Archive.deferred_link_indexes()`` (the links' lookup indexes built once at the end, included in
the time). ``--profile`` prints the top of a cProfile of the first saves; the size is the
archive's tables and indexes by ``dbstat``, largest first.
"""

from __future__ import annotations

import argparse
import cProfile
import json
import pstats
import sqlite3
import tempfile
import time
from pathlib import Path
from typing import Any

from feedgen import FeedSpec, feed

from podarchive.core.types import Snapshot
from podarchive.read import item_split
from podarchive.read.jobs import read_feed, with_item_hashes
from podarchive.read.rows import channel_row
from podarchive.store import Archive, FeedSave

NOW = "2026-12-03T09:00:00Z"


def prepared(feeds: int, episodes: int) -> list[dict[str, Any]]:
    """Each feed's save_feed arguments, as the pipeline hands them over."""
    out = []
    for k in range(feeds):
        url = f"https://bench.example/f/{k}.xml"
        body = feed(FeedSpec(name=f"f{k}", episodes=episodes))
        split = item_split.split_items(body, f"bench\0{url}\0")
        read = read_feed(body, {}, url)
        snapshot = Snapshot(body, url, "application/rss+xml")
        if split is not None:
            regions = split.region_hashes(4)
            snapshot = Snapshot(
                body, url, "application/rss+xml", items_from=split.start, items_to=split.end,
                items_hash=regions[0][1], regions=regions,
            )  # fmt: skip
        out.append(
            {
                "url": url, "meta": channel_row(read.channel),
                "episodes": with_item_hashes(read, split), "snapshot": snapshot,
                "content_hash": f"{k:064x}", "channel_tags": read.channel.tags,
                "complete": read.channel.complete,
            }
        )  # fmt: skip
    return out


def save_all(archive: Archive, feeds: list[dict[str, Any]]) -> None:
    for f in feeds:
        state = archive.ensure_feed(f["url"], None, NOW)
        archive.save_feed(FeedSave(
            state.id, f["meta"], f["episodes"], status=200, etag=None, last_modified=None,
            content_hash=f["content_hash"], now=NOW, records=(), complete=f["complete"],
            snapshot=f["snapshot"], channel_tags=f["channel_tags"],
        ))  # fmt: skip


def sizes(path: Path) -> list[tuple[str, float, float]]:
    """(table or index, MB, MB unused) by dbstat, largest first."""
    with sqlite3.connect(path) as conn:
        rows = conn.execute(
            "SELECT name, sum(pgsize), sum(unused) FROM dbstat GROUP BY name ORDER BY 2 DESC"
        ).fetchall()
    return [(n, s / 1e6, u / 1e6) for n, s, u in rows]


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--smoke", action="store_true", help="tiny sizes, a few seconds")
    parser.add_argument("--feeds", type=int, default=20)
    parser.add_argument("--episodes", type=int, default=300)
    parser.add_argument("--profile", action="store_true")
    parser.add_argument("--deferred", action="store_true", help="deferred_link_indexes()")
    args = parser.parse_args()
    if args.smoke:
        args.feeds, args.episodes = 2, 20
    feeds = prepared(args.feeds, args.episodes)
    count = args.feeds * args.episodes
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "archive.db"
        with Archive(path) as archive:
            profiler = cProfile.Profile() if args.profile else None
            cpu = time.process_time()
            if profiler:
                profiler.enable()
            if args.deferred:
                with archive.deferred_link_indexes():
                    save_all(archive, feeds)
            else:
                save_all(archive, feeds)
            if profiler:
                profiler.disable()
            first = time.process_time() - cpu
            cpu = time.process_time()
            save_all(archive, [{**f, "content_hash": "x" + f["content_hash"]} for f in feeds])
            again = time.process_time() - cpu
            archive.checkpoint()
        table = sizes(path)
        total = path.stat().st_size / 1e6
    figures = {
        "feeds": args.feeds, "episodes": count, "deferred": args.deferred,
        "first_save_ms_per_episode": round(first * 1000 / count, 3),
        "identical_save_ms_per_episode": round(again * 1000 / count, 3),
        "archive_mb": round(total, 2),
    }  # fmt: skip
    print(json.dumps(figures))
    for name, mb, unused in table[:25]:
        print(f"{name:40s} {mb:8.2f} MB  unused {unused:6.2f}")
    if profiler:
        pstats.Stats(profiler).sort_stats("tottime").print_stats(25)


if __name__ == "__main__":
    main()
