"""A small podcast on the loopback site for the capture tests (#27) and the v14 fixture.

Two episodes, each with a page (served gzip-encoded; episode 1's link answers a 302 first), a
transcript, a chapters file and a media file. :func:`serve_podcast` serves version 1 or 2 of
the feed (2 retitles episode 1 and changes the ETag). Uses only what schema 14's code had,
so ``tests/fixtures/archives/v14.sqlite`` is made with it (tests/fixtures/README.md).
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from loopback import LoopbackSite

from podarchive.core.settings import Settings
from podarchive.read.schedule_files import FeedSchedule
from podarchive.store import Archive
from podarchive.update.run import RunReport, update_feeds

PAGE = (
    "<!DOCTYPE html><html><head><title>Episode {n}</title></head><body><article>"
    "<h1>Episode {n}</h1><div class='notes'><p>Notes of episode {n}, with "
    "<a href='https://example.org/{n}'>a link</a>.</p></div></article></body></html>"
)
VTT = "WEBVTT\n\n00:00:00.000 --> 00:00:02.000\n<v Host>Hello from episode {n}.\n"
CHAPTERS = '{{"version": "1.2.0", "chapters": [{{"startTime": 0, "title": "Start of {n}"}}]}}'
SETTINGS = Settings(allow_private_hosts=True, host_gap=0, retry_base=0.01)
RUNS = ("2026-12-01T09:00:00", "2026-12-02T09:00:00", "2026-12-03T09:00:00")


def media_bytes(n: int) -> bytes:
    return bytes((i * 7 + n) % 251 for i in range(3000 + n))


def feed_xml(site: LoopbackSite, version: int) -> bytes:
    items = []
    for n in (1, 2):
        title = f"Episode {n}" + (" (revised)" if version == 2 and n == 1 else "")
        link = site.url(f"/ep/{n}") if n == 1 else site.url(f"/episodes/{n}")
        items.append(
            f"<item><guid>ep{n}</guid><title>{title}</title><link>{link}</link>"
            f"<pubDate>Mon, 0{n} Jun 2026 10:00:00 GMT</pubDate>"
            f"<description>Episode {n} in short.</description>"
            f'<enclosure url="{site.url(f"/m/ep{n}.mp3")}" type="audio/mpeg" '
            f'length="{len(media_bytes(n))}"/>'
            f'<podcast:transcript url="{site.url(f"/t/ep{n}.vtt")}" type="text/vtt"/>'
            f'<podcast:chapters url="{site.url(f"/c/ep{n}.json")}" '
            'type="application/json+chapters"/></item>'
        )
    return (
        '<?xml version="1.0" encoding="utf-8"?><rss version="2.0" '
        'xmlns:podcast="https://podcastindex.org/namespace/1.0"><channel>'
        f"<title>Capture Cast</title><link>{site.url('/')}</link>"
        f"<description>A podcast for the capture tests.</description>{''.join(items)}"
        "</channel></rss>"
    ).encode()


def serve_podcast(site: LoopbackSite, version: int = 1) -> str:
    """Serve the podcast (feed ``version`` 1 or 2); returns the feed's URL."""
    site.serve(
        "/feed.xml",
        feed_xml(site, version),
        etag=f'"feed-v{version}"',
        content_type="application/rss+xml",
    )
    site.serve(
        "/ep/1",
        b"moved",
        status=302,
        headers={"Location": "/episodes/1"},
        content_type="text/plain",
    )
    for n in (1, 2):
        site.serve(
            f"/episodes/{n}",
            PAGE.format(n=n),
            etag=f'"page-{n}"',
            gzip=True,
            content_type="text/html; charset=utf-8",
        )
        site.serve(f"/t/ep{n}.vtt", VTT.format(n=n), etag=f'"vtt-{n}"', content_type="text/vtt")
        site.serve(
            f"/c/ep{n}.json",
            CHAPTERS.format(n=n),
            etag=f'"chapters-{n}"',
            content_type="application/json+chapters",
        )
        site.serve(f"/m/ep{n}.mp3", media_bytes(n), etag=f'"mp3-{n}"', content_type="audio/mpeg")
    return site.url("/feed.xml")


def schedule(url: str) -> FeedSchedule:
    return FeedSchedule(url=url, name="Capture Cast", media=True)


def run_at(db: Path, url: str, when: str) -> RunReport:
    """One run of the podcast's feed (its pages, files and media) at a fixed clock."""
    moment = datetime.fromisoformat(when).replace(tzinfo=UTC)
    with Archive(db) as archive:
        return update_feeds(archive, [schedule(url)], settings=SETTINGS, clock=lambda: moment)


def three_runs(site: LoopbackSite, db: Path) -> list[RunReport]:
    """The history: a first run, the feed changed (episode 1 retitled), then a 304."""
    url = serve_podcast(site, 1)
    reports = [run_at(db, url, RUNS[0])]
    serve_podcast(site, 2)
    reports.append(run_at(db, url, RUNS[1]))
    reports.append(run_at(db, url, RUNS[2]))
    return reports
