"""Realistic synthetic podcast feeds and episode pages, deterministic, built in memory.

``feed(n)`` is an RSS 2.0 podcast feed of ``n`` episodes, newest first, each with ~5 KB of
HTML show notes full of links, the usual itunes fields, a guid, an enclosure and Podcasting
2.0 tags; ``page(i)`` is the episode's web page (~25 KB: navigation, the notes, a footer).
"""

from __future__ import annotations

from dataclasses import dataclass

PARAGRAPH = (
    '<p>In this episode we talk about <a href="https://example.com/topic/{i}/{j}">topic {j}</a>, '
    '<a href="https://example.org/ref/{i}/{j}?utm_source=feed">a reference</a> and '
    "<strong>strong words</strong> &amp; <em>emphasis</em>. Lorem ipsum dolor sit amet, "
    "consectetur adipiscing elit, sed do eiusmod tempor incididunt ut labore {i}.</p>\n"
)
NAV = "".join(f'<li><a href="/section/{k}">Section {k}</a></li>' for k in range(40))


def notes(i: int, paragraphs: int = 16) -> str:
    """About 5 KB of show-note HTML (16 paragraphs)."""
    return "".join(PARAGRAPH.format(i=i, j=j) for j in range(paragraphs))


@dataclass(frozen=True)
class FeedSpec:
    name: str = "bench"
    episodes: int = 100
    build_date: str = "Mon, 06 Jun 2022 13:00:00 +0000"
    page_base: str | None = None  # episode <link>s point here (pages served by the server)
    paragraphs: int = 16  # of notes per episode; 16 ≈ 5 KB
    edited: int | None = None  # index of an episode whose title is edited


def item(spec: FeedSpec, i: int) -> str:
    link = (
        f"{spec.page_base}/{spec.name}/ep/{i}"
        if spec.page_base
        else f"https://example.com/{spec.name}/ep/{i}"
    )
    title = f"Episode {i}: a title" + (" (edited)" if spec.edited == i else "")
    files = spec.page_base or "https://example.com"  # served beside the pages, if they are
    return f"""<item>
<title>{title}</title><link>{link}</link>
<guid isPermaLink="false">{spec.name}-{i:06d}</guid>
<pubDate>{_date(i)}</pubDate>
<description><![CDATA[<p>Short description of episode {i}.</p>]]></description>
<content:encoded><![CDATA[{notes(i, spec.paragraphs)}]]></content:encoded>
<itunes:summary>Summary of episode {i}</itunes:summary>
<itunes:duration>00:42:{i % 60:02d}</itunes:duration>
<itunes:season>1</itunes:season><itunes:episode>{i}</itunes:episode>
<itunes:episodeType>full</itunes:episodeType><itunes:explicit>false</itunes:explicit>
<itunes:image href="https://example.com/{spec.name}/ep/{i}.jpg"/>
<enclosure url="https://cdn.example.com/{spec.name}/{i}.mp3" type="audio/mpeg" length="{1000 + i}"/>
<podcast:transcript url="{files}/{spec.name}/{i}.vtt" type="text/vtt"/>
<podcast:person role="host">Host Name</podcast:person>
</item>
"""


def _date(i: int) -> str:
    """A distinct RFC 822 date per episode, later for higher ``i``."""
    day, hour = divmod(i, 24)
    year, day = divmod(day, 365)
    month, mday = divmod(day, 28)
    months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
    return f"{mday + 1:02d} {months[month % 12]} {2000 + year} {hour:02d}:00:00 +0000"


def feed(spec: FeedSpec) -> bytes:
    head = f"""<?xml version="1.0" encoding="UTF-8"?>
<rss version="2.0" xmlns:itunes="http://www.itunes.com/dtds/podcast-1.0.dtd"
 xmlns:content="http://purl.org/rss/1.0/modules/content/"
 xmlns:podcast="https://podcastindex.org/namespace/1.0"><channel>
<title>Benchmark Show {spec.name}</title><link>https://example.com/{spec.name}</link>
<description>A show for benchmarks.</description><language>en</language>
<lastBuildDate>{spec.build_date}</lastBuildDate>
<itunes:author>A. Host</itunes:author><itunes:category text="Technology"/>
<itunes:image href="https://example.com/{spec.name}.jpg"/>
<podcast:guid>{spec.name}-guid</podcast:guid>
"""
    items = "".join(item(spec, i) for i in range(spec.episodes - 1, -1, -1))
    return (head + items + "</channel></rss>\n").encode()


def page(name: str, i: int) -> bytes:
    """An episode page: boilerplate around the show notes (~25 KB)."""
    body = notes(i, 40)
    return f"""<!doctype html><html><head><meta charset="utf-8"><title>Episode {i}</title>
<link rel="stylesheet" href="/style.css"></head><body>
<header><nav><ul>{NAV}</ul></nav></header>
<main><article><h1>Episode {i}</h1><section class="show-notes">{body}</section></article></main>
<aside><ul>{NAV}</ul></aside><footer><p>© Benchmark Show {name}</p><ul>{NAV}</ul></footer>
</body></html>""".encode()


if __name__ == "__main__":
    for n in (100, 1000, 10000):
        print(f"{n:>6} episodes: {len(feed(FeedSpec(episodes=n))) / 1e6:6.2f} MB")
    print(f"page: {len(page('bench', 1)) / 1e3:.1f} KB")
