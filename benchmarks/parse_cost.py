"""Cost of feed parsing per item: feedparser with/without its sanitiser, the lxml scan, parse_feed.

Run: ``PYTHONPATH=src python benchmarks/parse_cost.py [items] [repeats]``. The feed is built in
memory: ``items`` episodes (default 1,000), each with ~5 KB of HTML notes full of links and
the usual itunes fields. Prints the median milliseconds per item over ``repeats`` runs.
"""

from __future__ import annotations

import io
import statistics
import sys
import time
from collections.abc import Callable

import feedparser

from podarchive.read import podcast_ns
from podarchive.read.parse import parse_feed

PARAGRAPH = (
    '<p>In this episode we talk about <a href="https://example.com/topic/{i}/{j}">topic {j}</a>, '
    '<a href="/relative/{i}/{j}?utm_source=feed">a relative link</a> and '
    "<strong>strong words</strong> &amp; <em>emphasis</em>. Lorem ipsum dolor sit amet, "
    "consectetur adipiscing elit, sed do eiusmod tempor incididunt ut labore.</p>\n"
)


def notes(i: int) -> str:
    """About 5 KB of show-note HTML."""
    return "".join(PARAGRAPH.format(i=i, j=j) for j in range(16)) + "<script>track()</script>"


def item(i: int) -> str:
    return f"""<item>
<title>Episode {i}: a title</title><link>https://example.com/ep/{i}</link>
<guid isPermaLink="false">guid-{i:05d}</guid><pubDate>Mon, 06 Jun 2022 13:00:00 +0000</pubDate>
<description><![CDATA[<p>Short description of episode {i}.</p>]]></description>
<content:encoded><![CDATA[{notes(i)}]]></content:encoded>
<itunes:summary>Summary of episode {i}</itunes:summary>
<itunes:duration>00:42:{i % 60:02d}</itunes:duration>
<itunes:season>1</itunes:season><itunes:episode>{i}</itunes:episode>
<itunes:episodeType>full</itunes:episodeType><itunes:explicit>false</itunes:explicit>
<itunes:image href="https://example.com/ep/{i}.jpg"/>
<enclosure url="https://cdn.example.com/{i}.mp3" type="audio/mpeg" length="{1000 + i}"/>
<podcast:transcript url="https://example.com/{i}.vtt" type="text/vtt"/>
<podcast:chapters url="https://example.com/{i}.json" type="application/json+chapters"/>
<podcast:person role="host">Host Name</podcast:person>
</item>"""


def synthetic_feed(items: int) -> bytes:
    head = """<?xml version="1.0" encoding="UTF-8"?>
<rss version="2.0" xmlns:itunes="http://www.itunes.com/dtds/podcast-1.0.dtd"
 xmlns:content="http://purl.org/rss/1.0/modules/content/"
 xmlns:podcast="https://podcastindex.org/namespace/1.0"><channel>
<title>Benchmark Show</title><link>https://example.com/</link><description>d</description>
<itunes:author>A</itunes:author><itunes:category text="Technology"/>
<podcast:guid>bench</podcast:guid>"""
    return (head + "".join(item(i) for i in range(items)) + "</channel></rss>").encode()


def median_ms_per_item(run: Callable[[], object], items: int, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1000 / items


def main() -> None:
    items = int(sys.argv[1]) if len(sys.argv) > 1 else 1000
    repeats = int(sys.argv[2]) if len(sys.argv) > 2 else 5
    body = synthetic_feed(items)
    headers = {"content-type": "application/rss+xml"}

    def feedparser_run(sanitize: bool) -> Callable[[], object]:
        return lambda: feedparser.parse(
            io.BytesIO(body),
            response_headers=headers,
            sanitize_html=sanitize,
            resolve_relative_uris=sanitize,
        )

    cases: dict[str, Callable[[], object]] = {
        "feedparser default (sanitize + resolve URIs)": feedparser_run(True),
        "feedparser sanitize_html=False, resolve_relative_uris=False": feedparser_run(False),
        "podcast_ns.scan (lxml)": lambda: podcast_ns.scan(body),
        "parse_feed (all of it)": lambda: parse_feed(body, headers),
    }
    print(f"{items} items, {len(body) / 1e6:.2f} MB, median of {repeats} runs, ms per item")
    results = {name: median_ms_per_item(run, items, repeats) for name, run in cases.items()}
    for name, ms in results.items():
        print(f"  {ms:8.3f}  {name}")
    names = list(results)
    print(f"  sanitiser costs {results[names[0]] / results[names[1]]:.1f}x")


if __name__ == "__main__":
    main()
