from __future__ import annotations

from pathlib import Path

from podarchive.read.extract import discover_feeds


def test_alternate_links_in_document_order_resolved_and_deduplicated() -> None:
    html = (
        '<html><head><base href="https://show.example/sub/">'
        '<link rel="alternate" type="application/rss+xml" href="feed.rss">'
        '<link rel="alternate stylesheet" type="text/css" href="x.css">'
        '<link rel="alternate" type="application/atom+xml; charset=utf-8" href="/atom">'
        '<link rel="alternate" type="application/rss+xml" href="feed.rss">'
        '<link rel="alternate" type="application/json" href="/feed.json">'
        '<link rel="canonical" href="/page"></head></html>'
    )
    assert discover_feeds(html, "https://show.example/page", content_type="text/html") == [
        "https://show.example/sub/feed.rss",
        "https://show.example/atom",
    ]


def test_not_html_announces_nothing() -> None:
    assert discover_feeds(b"\x00\x01", "https://x.example/", content_type="image/png") == []
    assert discover_feeds("", "https://x.example/") == []


def test_podlove_site_from_the_corpus(corpus: Path) -> None:
    page = corpus / "05-episode-pages/janw-podcast-archiver/pages/der-lautsprecher.de_homepage.html"
    feeds = discover_feeds(
        page.read_bytes(), "https://der-lautsprecher.de/", content_type="text/html"
    )
    assert feeds[0] == "https://der-lautsprecher.de/feed/mp3"
    assert len(feeds) == 4
