"""A loopback podcast archived by real runs, for the export tests (#27): ten episodes with
pages, a transcript and a chapters file; the feed served gzipped, fetched three times with
one change; the pages re-checked once. And a WARC read back as plain values."""

from __future__ import annotations

import json
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from loopback import LoopbackSite
from warcio.archiveiterator import ArchiveIterator

from podarchive.core.clock import now_iso
from podarchive.core.settings import Settings
from podarchive.read.schedule_files import FeedSchedule
from podarchive.store import Archive
from podarchive.update.run import update_feeds

T0 = datetime(2026, 12, 1, 10, 0, 0, tzinfo=UTC)
EPISODES = 10
SETTINGS = Settings(host_gap=0, retry_base=0.01, allow_private_hosts=True, processes=1)
SRT = "1\n00:00:01,000 --> 00:00:04,000\nWelcome back to Loopback Talks.\n"
CHAPTERS = {"version": "1.2.0", "chapters": [{"startTime": 0, "title": "Cold open"}]}
PAGE = (
    "<!doctype html><html><head><title>Episode {n}</title></head><body><main><article>"
    "<h1>Episode {n}</h1><div class='notes'><p>Notes of episode {n}, about "
    "<a href='https://example.org/{n}'>paper {n}</a>.</p></div></article></main></body></html>"
)


def feed_xml(base: str, first_title: str) -> str:
    items = []
    for n in range(1, EPISODES + 1):
        files = ""
        if n == 1:
            files = (
                f'<podcast:transcript url="{base}/ep1.srt" type="application/srt"/>'
                f'<podcast:chapters url="{base}/ep1.chapters.json" '
                'type="application/json+chapters"/>'
            )
        title = first_title if n == 1 else f"Episode {n}"
        items.append(
            f"<item><title>{title}</title><guid>ep{n}</guid><link>{base}/ep{n}</link>"
            f"<pubDate>Mon, {n:02d} Nov 2026 10:00:00 GMT</pubDate>"
            f"<description>Feed notes {n}.</description>{files}</item>"
        )
    return (
        '<?xml version="1.0" encoding="UTF-8"?><rss version="2.0" '
        'xmlns:podcast="https://podcastindex.org/namespace/1.0"><channel>'
        f"<title>Loopback Talks</title><link>{base}/</link><description>Talks.</description>"
        f"{''.join(items)}</channel></rss>"
    )


def _at(moment: datetime) -> Any:
    return lambda: moment


def archive_podcast(tmp_path: Path, site: LoopbackSite) -> Path:
    """The loopback podcast archived by three runs an hour apart; the archive's path."""
    base = site.url("")
    site.serve("/feed.xml", feed_xml(base, "Episode 1"), etag='"feed-1"', gzip=True)
    for n in range(1, EPISODES + 1):
        site.serve(f"/ep{n}", PAGE.format(n=n), etag=f'"p{n}"',
                   content_type="text/html; charset=utf-8")  # fmt: skip
    site.serve("/ep1.srt", SRT, content_type="application/x-subrip")
    site.serve("/ep1.chapters.json", json.dumps(CHAPTERS),
               content_type="application/json+chapters")  # fmt: skip
    db = tmp_path / "archive.db"
    schedule = [FeedSchedule(url=site.url("/feed.xml"), name="Loopback Talks")]
    with Archive(db) as archive:
        update_feeds(archive, schedule, settings=SETTINGS, clock=_at(T0))
        next_second()
        update_feeds(archive, schedule, settings=SETTINGS, clock=_at(T0 + timedelta(hours=1)),
                     recheck_pages=True)  # fmt: skip
        next_second()
        site.serve("/feed.xml", feed_xml(base, "Episode 1, retitled"), etag='"feed-2"', gzip=True)
        update_feeds(archive, schedule, settings=SETTINGS, clock=_at(T0 + timedelta(hours=2)))
    return db


def next_second() -> None:
    """Until the wall clock's second changes (at most a second): a capture's time is when its
    request was sent, to the second, and replay tells two captures of a URL apart by it."""
    start = now_iso()
    while now_iso() == start:
        time.sleep(0.02)


def records(path: Path) -> list[dict[str, Any]]:
    """Every record of a WARC: its WARC headers, HTTP status and headers, and payload."""
    found = []
    with path.open("rb") as f:
        for record in ArchiveIterator(f):
            http = record.http_headers
            found.append({
                "type": record.rec_type,
                "headers": dict(record.rec_headers.headers),
                "status": int(http.get_statuscode()) if http and record.rec_type != "request" else None,
                "http": list(http.headers) if http else [],
                "payload": record.content_stream().read(),
            })  # fmt: skip
    return found
