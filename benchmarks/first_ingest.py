"""(a) First ingest of a 1,000-episode feed with its pages: time and peak memory by stage,
beside the stage limits measured in the same run.

Stages (podarchive's own code, run one after another on the same inputs): fetch (the feed
and every page through podarchive's Fetcher), parse (parse_feed + episode_writes), extract
(extract_page of every page), store (save_feed + record_page). Limits: raw httpx GET of
the same URLs, raw ``lxml.etree`` parse of the feed, ``lxml.html`` text + links of the
pages, raw ``sqlite3`` ``executemany`` of the same rows. Then the real thing end to end
(update_feeds). Run: ``python benchmarks/first_ingest.py``.
"""

from __future__ import annotations

import sqlite3
import tempfile
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import lxml.html
from common import arguments, bench_settings, fresh_archive, machine, schedules, show
from feedgen import FeedSpec, feed, page
from lxml import etree
from server import ServerProcess

from podarchive.net.fetch import Fetcher
from podarchive.read.extract import extract_page
from podarchive.read.parse import parse_feed
from podarchive.read.rows import channel_row, episode_writes
from podarchive.store import EPISODE_COLUMNS, FeedSave
from podarchive.update.run import update_feeds


def measured(run: Callable[[], Any]) -> tuple[Any, float, float]:
    """(result, seconds, peak MB allocated by Python): timed bare, then again under tracemalloc."""
    start = time.perf_counter()
    result = run()
    seconds = time.perf_counter() - start
    tracemalloc.start()
    run()
    peak = tracemalloc.get_traced_memory()[1] / 1e6
    tracemalloc.stop()
    return result, seconds, peak


def main() -> None:
    args = arguments(__doc__)
    n = 20 if args.smoke else 1000
    print(machine())
    print("host_gap=0 (everything is on 127.0.0.1); memory: tracemalloc peak per stage\n")
    with ServerProcess(lifetime=900) as srv, tempfile.TemporaryDirectory() as tmp:
        base = srv.url("")
        spec = FeedSpec("first", n, page_base=base)
        srv.set({"/first": feed(spec)})
        srv.set({f"/first/ep/{i}": page("first", i) for i in range(n)}, "text/html; charset=utf-8")
        urls = [srv.url(f"/first/ep/{i}") for i in range(n)]
        settings = bench_settings()
        rows = [("stage", "podarchive s", "peak MB", "limit s", "limit", "ratio")]

        def fetch_all() -> tuple[Any, list[Any]]:
            with Fetcher(settings) as f:
                head = f.get(srv.url("/first"), kind="feed")
                return head, [
                    f.get(u, kind="page", trusted=False, allow_private_hosts=True) for u in urls
                ]

        (result, pages), t_fetch, m_fetch = measured(fetch_all)

        def raw_fetch() -> None:
            with httpx.Client() as c:
                c.get(srv.url("/first"))
                for u in urls:
                    c.get(u)

        _, l_fetch, _ = measured(raw_fetch)
        (parsed, writes), t_parse, m_parse = measured(
            lambda: (
                p := parse_feed(result.body, result.headers, url=result.final_url),
                episode_writes(p, result.final_url)[0],
            )
        )
        _, l_parse, _ = measured(lambda: etree.fromstring(result.body))
        notes, t_extract, m_extract = measured(
            lambda: [extract_page(p.body, p.final_url, content_type=p.content_type) for p in pages]
        )

        def lxml_extract() -> None:
            for p in pages:
                doc = lxml.html.fromstring(p.body)
                doc.make_links_absolute(p.final_url)
                doc.text_content()
                [a.get("href") for a in doc.iter("a")]

        _, l_extract, _ = measured(lxml_extract)

        def store() -> None:
            with fresh_archive(Path(tmp), "stages.db") as archive:
                state = archive.ensure_feed(srv.url("/first"), None, "2024-01-01T00:00:00Z")
                archive.save_feed(
                    FeedSave(
                        state.id,
                        channel_row(parsed.channel),
                        writes,
                        status=200,
                        etag=None,
                        last_modified=None,
                        content_hash="x",
                        now="2024-01-01T00:00:00Z",
                        records=[],
                    )
                )
                for task, note in zip(archive.pages_to_fetch(state.id), notes, strict=True):
                    archive.record_page(
                        task,
                        status="ok",
                        now="2024-01-01T00:00:01Z",
                        records=[],
                        extractor=note.extractor,
                        notes_html=note.html,
                        notes_text=note.text,
                        links=note.links,
                    )

        _, t_store, m_store = measured(store)

        def raw_store() -> None:
            conn = sqlite3.connect(Path(tmp) / "raw.db")
            cols = ("key", *EPISODE_COLUMNS)
            conn.execute(f"CREATE TABLE IF NOT EXISTS e ({', '.join(cols)})")
            conn.execute(
                "CREATE TABLE IF NOT EXISTS l "
                "(episode, position, url, normalized_url, domain, text)"
            )
            with conn:
                conn.executemany(
                    f"INSERT INTO e VALUES ({', '.join('?' * len(cols))})",
                    [(w.key, *(w.row.get(c) for c in EPISODE_COLUMNS)) for w in writes],
                )
                conn.executemany(
                    "INSERT INTO l VALUES (?, ?, ?, ?, ?, ?)",
                    [
                        (i, li.position, li.url, li.normalized_url, li.domain, li.text)
                        for i, w in enumerate(writes)
                        for li in (*w.links, *notes[i].links)
                    ],
                )
            conn.close()

        _, l_store, _ = measured(raw_store)
        stages = (
            ("fetch (feed + pages)", t_fetch, m_fetch, l_fetch, "raw httpx.Client GETs"),
            ("parse", t_parse, m_parse, l_parse, "lxml.etree.fromstring"),
            ("extract", t_extract, m_extract, l_extract, "lxml.html text + links"),
            ("store", t_store, m_store, l_store, "raw sqlite3 executemany"),
        )
        for name, ours, mem, limit, how in stages:
            rows.append(
                (name, f"{ours:.2f}", f"{mem:.0f}", f"{limit:.2f}", how, f"{ours / limit:.1f}x")
            )
        total, limits = sum(s[1] for s in stages), sum(s[3] for s in stages)
        rows.append(
            (
                "sum of stages",
                f"{total:.2f}",
                "",
                f"{limits:.2f}",
                "sum of limits",
                f"{total / limits:.1f}x",
            )
        )
        with fresh_archive(Path(tmp), "e2e.db") as archive:
            start = time.perf_counter()
            report = update_feeds(
                archive, schedules([srv.url("/first")], pages=True), settings=settings
            )
            e2e = time.perf_counter() - start
            (fr,) = report.feeds
            assert fr.ok, fr
            assert fr.stats.new == n, fr
            assert fr.pages_ok == n, fr
        rows.append(
            (
                "update_feeds end to end",
                f"{e2e:.2f}",
                "",
                f"{limits:.2f}",
                "sum of limits",
                f"{e2e / limits:.1f}x",
            )
        )
    show(rows)


if __name__ == "__main__":
    main()
