"""Backfill (issue 6): paged feeds, RFC 5005 archives, the site, pages; resumable, exactly-once."""

from __future__ import annotations

import os
import re
import select
import signal
import socket
import sqlite3
import subprocess
import sys
import threading
import time
from collections import Counter
from http.server import BaseHTTPRequestHandler
from pathlib import Path

import pytest
from conftest import FAST_ENV
from loopback import LoopbackSite

from podarchive.core.settings import Settings
from podarchive.read.schedule_files import FeedSchedule
from podarchive.store import Archive
from podarchive.tasks.backfill import BackfillOptions, backfill
from podarchive.tasks.reparse import reparse
from podarchive.update.run import update_feeds

SETTINGS = Settings(allow_private_hosts=True, host_gap=0, retry_base=0.01)
ATOM = "http://www.w3.org/2005/Atom"
FH = "http://purl.org/syndication/history/1.0"


def item(site: LoopbackSite, n: int) -> str:
    return (
        f"<item><guid>ep-{n}</guid><title>Episode {n}</title>"
        f"<link>{site.url(f'/site/episodes/ep-{n}')}</link>"
        f"<pubDate>Mon, {n:02d} Jan 2024 10:00:00 GMT</pubDate>"
        f'<enclosure url="{site.url(f"/media/ep-{n}.mp3")}" type="audio/mpeg" length="1"/>'
        f"<description>Notes of episode {n}.</description></item>"
    )


def rss(
    site: LoopbackSite,
    numbers: list[int],
    links: dict[str, str],
    *,
    title: str = "Show",
    archive: bool = False,
) -> str:
    atom_links = "".join(f'<atom:link rel="{rel}" href="{href}"/>' for rel, href in links.items())
    marker = "<fh:archive/>" if archive else ""
    return (
        f'<?xml version="1.0"?><rss version="2.0" xmlns:atom="{ATOM}" xmlns:fh="{FH}"><channel>'
        f"<title>{title}</title><link>{site.url('/site')}</link><description>d</description>"
        f"{atom_links}{marker}{''.join(item(site, n) for n in numbers)}</channel></rss>"
    )


def page_html(n: int) -> bytes:
    return (
        f"<html><head><title>Site | Episode {n}</title></head><body><nav>menu</nav>"
        f"<article><h1>Episode {n} on the site</h1><p>These are the show notes of episode {n}, "
        f"long enough to count as notes. <a href='https://example.org/{n}'>a link</a></p>"
        f"</article></body></html>"
    ).encode()


class Served:
    """Slow replies that count a request as served only if the client is still there.

    With ``hold``, episode pages beyond the first ``hold_after`` wait for it to be set.
    """

    def __init__(
        self, delay: float = 0.0, hold: threading.Event | None = None, hold_after: int = 0
    ) -> None:
        self.delay = delay
        self.served: Counter[str] = Counter()
        self.lock = threading.Lock()
        self.hold, self.hold_after = hold, hold_after

    def pages_served(self) -> int:
        with self.lock:
            return sum(1 for p in self.served if "/site/episodes/" in p)

    def route(self, site: LoopbackSite, path: str, body: bytes, content_type: str) -> None:
        def handler(h: BaseHTTPRequestHandler) -> None:
            if self.hold and "/site/episodes/" in path and self.pages_served() >= self.hold_after:
                self.hold.wait(30)
            if self.delay:
                time.sleep(self.delay)
                if _client_gone(h.connection):
                    return
            h.send_response(200)
            h.send_header("Content-Type", content_type)
            h.send_header("Content-Length", str(len(body)))
            h.end_headers()
            h.wfile.write(body)
            with self.lock:
                self.served[path] += 1

        site.handle(path, handler)


def _client_gone(conn: socket.socket) -> bool:
    readable, _, _ = select.select([conn], [], [], 0)
    if not readable:
        return False
    try:
        return conn.recv(1, socket.MSG_PEEK) == b""
    except OSError:
        return True


def serve_show(
    site: LoopbackSite,
    served: Served | None = None,
    *,
    pages: range = range(1, 13),
    sitemap_extra: tuple[int, ...] = (13, 14),
) -> dict[str, str]:
    """A paged feed (3 pages, ep 12..4), an RFC 5005 chain (3 documents) and a site."""
    served = served or Served()
    u = site.url
    feeds = {
        "/paged/feed.xml": rss(
            site, [12, 11, 10], {"self": u("/paged/feed.xml"), "next": u("/paged/feed.xml?page=2")}
        ),
    }
    site.serve("/paged/feed.xml", feeds["/paged/feed.xml"], etag='"p1"')
    # page 2 and 3 share a path with the feed: route by query in one handler
    bodies = {
        "/paged/feed.xml?page=2": rss(
            site, [9, 8, 7], {"next": u("/paged/feed.xml?page=3"), "first": u("/paged/feed.xml")}
        ),
        "/paged/feed.xml?page=3": rss(
            site, [6, 5, 4], {"next": u("/paged/feed.xml?page=2")}
        ),  # a loop back
    }
    first = site.routes["/paged/feed.xml"]

    def paged(h: BaseHTTPRequestHandler) -> None:
        body = bodies.get(h.path)
        if body is None:
            from loopback import _send_reply

            _send_reply(h, first, {k.lower(): v for k, v in h.headers.items()})
            return
        if served.delay:
            time.sleep(served.delay)
            if _client_gone(h.connection):
                return
        data = body.encode()
        h.send_response(200)
        h.send_header("Content-Type", "application/rss+xml")
        h.send_header("Content-Length", str(len(data)))
        h.end_headers()
        h.wfile.write(data)
        with served.lock:
            served.served[h.path] += 1

    site.handle("/paged/feed.xml", paged)
    site.serve(
        "/arch/index.xml",
        rss(site, [12, 11], {"self": u("/arch/index.xml"), "prev-archive": u("/arch/2.xml")}),
    )
    served.route(
        site,
        "/arch/2.xml",
        rss(
            site,
            [10, 9, 8, 7],
            {"prev-archive": u("/arch/1.xml"), "current": u("/arch/index.xml")},
            title="Old title",
            archive=True,
        ).encode(),
        "application/rss+xml",
    )
    served.route(
        site,
        "/arch/1.xml",
        rss(
            site,
            [6, 5, 4, 3, 2, 1],
            {"next-archive": u("/arch/2.xml"), "current": u("/arch/index.xml")},
            title="Older title",
            archive=True,
        ).encode(),
        "application/rss+xml",
    )
    for n in [*pages, *sitemap_extra]:
        served.route(site, f"/site/episodes/ep-{n}", page_html(n), "text/html; charset=utf-8")
    locs = "".join(
        f"<url><loc>{u(f'/site/episodes/ep-{n}')}</loc></url>" for n in [*pages, *sitemap_extra]
    )
    site.serve(
        "/sitemap.xml",
        f'<?xml version="1.0"?><urlset><url><loc>{u("/site/about")}</loc></url>{locs}</urlset>',
    )
    return {"paged": u("/paged/feed.xml"), "archive": u("/arch/index.xml")}


def run_backfill(path: Path, url: str, **options: object) -> object:
    with Archive(path) as archive:
        return backfill(
            archive,
            [FeedSchedule(url=url, name="Show")],
            options=BackfillOptions(**options),
            settings=SETTINGS,
        )  # type: ignore[arg-type]


def episodes(path: Path) -> dict[str, dict]:
    conn = sqlite3.connect(path)
    conn.row_factory = sqlite3.Row
    try:
        return {r["key"]: dict(r) for r in conn.execute("SELECT * FROM episodes")}
    finally:
        conn.close()


def page_hits(site: LoopbackSite) -> Counter[str]:
    return Counter(r.path for r in site.requests if "/site/episodes/" in r.path)


# paged feeds and archives ---------------------------------------------------------------


def test_paged_feed_walks_all_three_pages_and_fetches_every_page(
    site: LoopbackSite, tmp_path: Path
) -> None:
    urls = serve_show(site)
    report = run_backfill(tmp_path / "a.db", urls["paged"])
    (feed,) = report.feeds  # type: ignore[attr-defined]
    assert feed.error is None
    assert (feed.feed_episodes, feed.archive_new, feed.documents_fetched) == (3, 6, 2)
    assert feed.pages_ok == 9
    rows = episodes(tmp_path / "a.db")
    assert sorted(rows) == sorted(f"guid:ep-{n}" for n in range(4, 13))
    assert all(r["page_status"] == "ok" for r in rows.values())
    assert rows["guid:ep-5"]["unlisted_at"]
    assert rows["guid:ep-5"]["archive_url"].endswith("page=3")
    assert rows["guid:ep-12"]["unlisted_at"] is None
    assert (
        sum(r.path.startswith("/paged/feed.xml") for r in site.requests) == 3
    )  # the feed, page 2, page 3; the loop back is not followed
    assert set(page_hits(site).values()) == {1}


def test_rfc5005_chain_keeps_the_feed_metadata_and_marks_nothing_removed(
    site: LoopbackSite, tmp_path: Path
) -> None:
    urls = serve_show(site)
    path = tmp_path / "a.db"
    report = run_backfill(path, urls["archive"])
    (feed,) = report.feeds  # type: ignore[attr-defined]
    assert (feed.feed_episodes, feed.archive_new, feed.documents_fetched) == (2, 10, 2)
    with Archive(path) as archive:
        assert archive.db.execute("SELECT title FROM feeds").fetchall() == [("Show",)]
        assert archive.count("feed_revisions") == 0
        assert archive.db.execute(
            "SELECT count(*) FROM episodes WHERE removed_from_feed_at IS NOT NULL"
        ).fetchone() == (0,)
        kinds = archive.db.execute(
            "SELECT kind, count(*) FROM feed_bodies GROUP BY kind"
        ).fetchall()
        assert dict(kinds) == {"feed": 1, "archive": 2}
    # a regular run afterwards leaves the archived episodes alone
    with Archive(path) as archive:
        update_feeds(
            archive,
            [FeedSchedule(url=urls["archive"], name="Show", pages=False)],
            settings=SETTINGS,
        )
    rows = episodes(path)
    assert len(rows) == 12
    assert all(r["removed_from_feed_at"] is None for r in rows.values())
    # a second backfill fetches no archive document (immutable) and no page again
    before = Counter(r.path for r in site.requests)
    report = run_backfill(path, urls["archive"])
    after = Counter(r.path for r in site.requests) - before
    assert set(after) == {"/arch/index.xml"}
    assert report.feeds[0].documents_done_before == 2  # type: ignore[attr-defined]


def test_reparse_replays_archive_pages(site: LoopbackSite, tmp_path: Path) -> None:
    urls = serve_show(site)
    path = tmp_path / "a.db"
    run_backfill(
        path,
        urls["archive"],
    )
    with Archive(path) as archive:
        before = archive.dump()
        (report,) = reparse(archive)
        assert report.bodies == 3
        assert archive.dump() == before


def test_since_limits_archive_episodes_and_pages(site: LoopbackSite, tmp_path: Path) -> None:
    urls = serve_show(site)
    path = tmp_path / "a.db"
    run_backfill(path, urls["archive"], since="2024-01-08")
    rows = episodes(path)
    assert sorted(rows) == sorted(f"guid:ep-{n}" for n in range(8, 13))
    assert site.hits("/arch/1.xml") == 0  # 2.xml is partly older than --since: no further back
    assert set(page_hits(site)) == {f"/site/episodes/ep-{n}" for n in range(8, 13)}
    # without --since, the partial document is fetched again, and the older one too
    run_backfill(path, urls["archive"])
    assert len(episodes(path)) == 12


def test_limit_and_pages_only(site: LoopbackSite, tmp_path: Path) -> None:
    urls = serve_show(site)
    path = tmp_path / "a.db"
    report = run_backfill(path, urls["paged"], limit=2, pages_only=True)
    (feed,) = report.feeds  # type: ignore[attr-defined]
    assert feed.documents_fetched == 0
    assert sum(r.path.startswith("/paged/feed.xml") for r in site.requests) == 1
    assert feed.pages_fetched == 2
    assert feed.pages_left == 1
    assert sum(page_hits(site).values()) == 2
    report = run_backfill(path, urls["paged"], pages_only=True)
    assert report.feeds[0].pages_fetched == 1  # type: ignore[attr-defined]
    assert set(page_hits(site).values()) == {1}


def test_failed_pages_are_retried_and_fetched_ones_are_not(
    site: LoopbackSite, tmp_path: Path
) -> None:
    urls = serve_show(site, pages=range(1, 12))  # ep-12's page is missing: 404
    path = tmp_path / "a.db"
    report = run_backfill(path, urls["paged"])
    assert report.feeds[0].pages_failed == 1  # type: ignore[attr-defined]
    assert any("HTTP 404" in reason for _, reason in report.feeds[0].failures)  # type: ignore[attr-defined]
    served = Served()
    served.route(site, "/site/episodes/ep-12", page_html(12), "text/html")
    report = run_backfill(path, urls["paged"])
    assert report.feeds[0].pages_ok == 1  # type: ignore[attr-defined]
    assert page_hits(site)["/site/episodes/ep-11"] == 1


# the site -------------------------------------------------------------------------------


def test_site_sitemap_finds_episodes_missing_from_the_feed(
    site: LoopbackSite, tmp_path: Path
) -> None:
    urls = serve_show(site)
    path = tmp_path / "a.db"
    report = run_backfill(path, urls["paged"], site=True)
    (feed,) = report.feeds  # type: ignore[attr-defined]
    assert (feed.site_found, feed.site_matched, feed.site_new) == (14, 9, 5)
    rows = episodes(path)
    extra = {k: r for k, r in rows.items() if k.startswith("page:")}
    assert len(extra) == 5  # ep 1-3 (only on the site here) and 13, 14
    ep13 = extra[f"page:{site.url('/site/episodes/ep-13')}"]
    assert ep13["title"] == "Episode 13 on the site"
    assert ep13["found_on_site_at"]
    assert ep13["page_status"] == "ok"
    assert "show notes of episode 13" in ep13["page_notes_text"]
    assert set(page_hits(site).values()) == {1}
    # a later run of the feed does not mark them removed or unlisted
    with Archive(path) as archive:
        update_feeds(archive, [FeedSchedule(url=urls["paged"], name="Show")], settings=SETTINGS)
    assert all(
        r["removed_from_feed_at"] is None and r["unlisted_at"] is None
        for k, r in episodes(path).items()
        if k.startswith("page:")
    )


def test_site_listing_with_pagination(site: LoopbackSite, tmp_path: Path) -> None:
    urls = serve_show(site)
    del site.routes["/sitemap.xml"]
    u = site.url
    site.serve(
        "/site/episodes",
        '<html><body><a href="/site/episodes/ep-13">13</a><a href="/site/episodes/ep-12">12</a><a href="/site/about">about</a><a rel="next" href="/site/episodes?page=2">next</a></body></html>',
        content_type="text/html",
    )
    listing2 = f'<html><body><a href="{u("/site/episodes/ep-14")}">14</a><a href="/site/episodes?page=1">1</a><a href="/site/episodes?page=2">2</a></body></html>'

    def pages(h: BaseHTTPRequestHandler) -> None:
        from loopback import Reply, _send_reply

        body = listing2 if "page=2" in h.path else site.routes["/site/episodes-first"].body.decode()  # type: ignore[union-attr]
        _send_reply(h, Reply(body=body.encode(), content_type="text/html"), {})

    site.routes["/site/episodes-first"] = site.routes["/site/episodes"]
    site.handle("/site/episodes", pages)
    report = run_backfill(tmp_path / "a.db", urls["paged"], site=True, pages_only=True)
    (feed,) = report.feeds  # type: ignore[attr-defined]
    assert (feed.site_found, feed.site_matched, feed.site_new) == (3, 1, 2)
    assert (
        sum(r.path.split("?")[0] == "/site/episodes" for r in site.requests) == 3
    )  # listing, ?page=2, ?page=1 (same as the first: bounded)


# dry run and the command ----------------------------------------------------------------


def cli_env() -> dict[str, str]:
    return {**os.environ, **FAST_ENV, "PYTHONPATH": str(Path(__file__).parents[1] / "src")}


def podarchive(*args: str, **kwargs: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "podarchive", *args],
        capture_output=True,
        text=True,
        env=cli_env(),
        timeout=60,
        **kwargs,  # type: ignore[call-overload]
    )


def test_dry_run_fetches_only_feed_documents_and_writes_nothing(
    site: LoopbackSite, tmp_path: Path
) -> None:
    urls = serve_show(site)
    path = tmp_path / "a.db"
    done = podarchive(
        "backfill",
        urls["archive"],
        "--db",
        str(path),
        "--dry-run",
        "--allow-private-hosts",
        "--site",
    )
    assert done.returncode == 0, done.stderr
    assert not path.exists()
    assert page_hits(site) == Counter()
    assert {r.path for r in site.requests} == {
        "/arch/index.xml",
        "/arch/2.xml",
        "/arch/1.xml",
        "/sitemap.xml",
    }
    assert "would fetch 14" in done.stdout
    assert "nothing written" in done.stdout
    # with an archive: unchanged to the byte
    with Archive(path) as archive:
        update_feeds(archive, [FeedSchedule(url=urls["archive"], pages=False)], settings=SETTINGS)
    stamp, data = path.stat().st_mtime_ns, path.read_bytes()
    site.requests.clear()
    done = podarchive(
        "backfill", urls["archive"], "--db", str(path), "--dry-run", "--allow-private-hosts"
    )
    assert done.returncode == 0, done.stderr
    assert (path.stat().st_mtime_ns, path.read_bytes()) == (stamp, data)
    assert page_hits(site) == Counter()
    assert "would fetch 12" in done.stdout


def test_cli_summary(site: LoopbackSite, tmp_path: Path) -> None:
    urls = serve_show(site)
    schedules = tmp_path / "schedules"
    schedules.mkdir()
    (schedules / "show.toml").write_text(
        f'[[feed]]\nurl = "{urls["paged"]}"\nname = "Paged show"\nallow_private_hosts = true\n'
    )
    done = podarchive(
        "backfill",
        "--schedules",
        str(schedules),
        "--db",
        str(tmp_path / "a.db"),
        "--site",
        "--rate",
        "1000",
    )
    assert done.returncode == 0, done.stderr
    print(done.stdout)
    assert "Paged show:" in done.stdout
    assert "6 new from 2 archive/paged documents" in done.stdout
    assert "14 episode pages found, 9 in the feed, 5 new" in done.stdout
    assert "pages: fetched 14 (14 ok" in done.stdout
    assert (
        "podarchive: Paged show: episode pages" in done.stderr
    )  # plain progress lines off a terminal
    done = podarchive(
        "backfill", "Nope", "--schedules", str(schedules), "--db", str(tmp_path / "a.db")
    )
    assert done.returncode == 2


# interrupted and resumed ----------------------------------------------------------------


def _interrupt_then_resume(site: LoopbackSite, tmp_path: Path, how: signal.Signals) -> Counter[str]:
    hold = threading.Event()  # pages after the 4th wait until the signal is sent
    served = Served(delay=0.1, hold=hold, hold_after=4)
    urls = serve_show(site, served)
    path = tmp_path / "a.db"
    args = [
        sys.executable,
        "-m",
        "podarchive",
        "backfill",
        urls["archive"],
        "--db",
        str(path),
        "--allow-private-hosts",
        "--site",
    ]
    proc = subprocess.Popen(
        args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=cli_env()
    )
    try:
        deadline = time.monotonic() + 60
        while served.pages_served() < 4:  # mid-way through the pages
            assert time.monotonic() < deadline
            assert proc.poll() is None
            time.sleep(0.01)
        time.sleep(0.05)
        proc.send_signal(how)
    finally:
        hold.set()
    out, err = proc.communicate(timeout=30)
    if how == signal.SIGINT:
        assert proc.returncode == 130, err
        assert "interrupted" in err
        assert "Traceback" not in err
    else:
        assert proc.returncode == -signal.SIGKILL
    assert sum(1 for p in served.served if "/site/episodes/" in p) < 14  # it really stopped mid-way
    done = subprocess.run(args, capture_output=True, text=True, env=cli_env(), timeout=60)
    assert done.returncode == 0, done.stderr
    rows = episodes(path)
    assert len(rows) == 14
    assert all(r["page_status"] == "ok" for r in rows.values())
    assert sqlite3.connect(path).execute("PRAGMA integrity_check").fetchone() == ("ok",)
    return served.served


@pytest.mark.slow
@pytest.mark.parametrize("how", [signal.SIGINT, signal.SIGKILL], ids=["sigint", "sigkill"])
def test_interrupted_backfill_resumes_fetching_everything_exactly_once(
    site: LoopbackSite, tmp_path: Path, how: signal.Signals
) -> None:
    served = _interrupt_then_resume(site, tmp_path, how)
    print(how.name, dict(served))
    assert served["/arch/2.xml"] == served["/arch/1.xml"] == 1
    pages = {p: n for p, n in served.items() if "/site/episodes/" in p}
    assert len(pages) == 14
    if how == signal.SIGINT:
        assert set(pages.values()) == {1}  # a graceful stop stores what is in flight
    else:
        # A SIGKILL can land after a page was received and before its transaction
        # committed: only such in-flight pages (at most per_host = 2) are asked again.
        # Everything committed is never fetched twice.
        again = [p for p, n in pages.items() if n > 1]
        assert len(again) <= 2, pages
        assert set(pages.values()) <= {1, 2}


# transcripts and chapters, the dry run's count, the summary after Ctrl-C (#23) -------------

PODCAST_NS = "https://podcastindex.org/namespace/1.0"


def serve_files_show(site: LoopbackSite, hold: threading.Event | None = None) -> Served:
    """A plain feed of 5 episodes, each with its page, a VTT transcript and a chapters file.

    With ``hold``, the page requests that arrive after the first two wait for it
    (``served.holding`` is set when the first of them arrives)."""
    served = Served()
    served.holding = threading.Event()  # type: ignore[attr-defined]
    arrived = Counter[str]()
    items = "".join(
        f"<item><guid>ep-{n}</guid><title>Episode {n}</title>"
        f"<link>{site.url(f'/site/episodes/ep-{n}')}</link>"
        f"<pubDate>Mon, {n:02d} Jan 2024 10:00:00 GMT</pubDate>"
        f'<podcast:transcript url="{site.url(f"/files/{n}.vtt")}" type="text/vtt"/>'
        f'<podcast:chapters url="{site.url(f"/files/{n}.json")}" '
        'type="application/json+chapters"/>'
        f"<description>Notes of episode {n}.</description></item>"
        for n in range(1, 6)
    )
    site.serve(
        "/files/feed.xml",
        f'<?xml version="1.0"?><rss version="2.0" xmlns:podcast="{PODCAST_NS}"><channel>'
        f"<title>Files show</title><link>{site.url('/site')}</link><description>d</description>"
        f"{items}</channel></rss>",
    )
    for n in range(1, 6):
        site.serve(
            f"/files/{n}.vtt",
            f"WEBVTT\n\n00:00:01.000 --> 00:00:04.000\nHello from episode {n}.\n",
            content_type="text/vtt",
        )
        site.serve(
            f"/files/{n}.json",
            '{"version": "1.2.0", "chapters": [{"startTime": 0, "title": "Intro"}]}',
            content_type="application/json+chapters",
        )

        def page(h: BaseHTTPRequestHandler, n: int = n) -> None:
            with served.lock:
                arrived["pages"] += 1
                held = hold is not None and arrived["pages"] > 2
            if held and hold is not None:
                served.holding.set()  # type: ignore[attr-defined]
                hold.wait(60)
            body = page_html(n)
            h.send_response(200)
            h.send_header("Content-Type", "text/html; charset=utf-8")
            h.send_header("Content-Length", str(len(body)))
            h.end_headers()
            h.wfile.write(body)
            with served.lock:
                served.served[f"/site/episodes/ep-{n}"] += 1

        site.handle(f"/site/episodes/ep-{n}", page)
    return served


def file_statuses(path: Path) -> Counter[tuple[str, str]]:
    conn = sqlite3.connect(path)
    try:
        rows = conn.execute(
            "SELECT 'transcript', status FROM transcripts "
            "UNION ALL SELECT 'chapters', status FROM chapter_files"
        ).fetchall()
    finally:
        conn.close()
    return Counter((kind, status) for kind, status in rows)


def test_backfill_fetches_transcripts_and_chapters_and_the_dry_run_counts_them(
    site: LoopbackSite, tmp_path: Path
) -> None:
    serve_files_show(site)
    path, url = tmp_path / "a.db", site.url("/files/feed.xml")
    dry = podarchive("backfill", url, "--db", str(path), "--dry-run", "--allow-private-hosts")
    assert dry.returncode == 0, dry.stderr
    assert not path.exists()
    assert {r.path for r in site.requests} == {"/files/feed.xml"}
    assert "  pages: would fetch 5\n" in dry.stdout  # the feed's own episodes' pages
    assert "  transcripts and chapters: would fetch 10\n" in dry.stdout
    assert "15 more requests for episode pages, transcripts and chapters" in dry.stdout
    # the same guard as a run: pages and files come from feed content, untrusted
    blocked = podarchive("backfill", url, "--db", str(path))
    assert blocked.returncode == 0, blocked.stderr
    assert "transcripts and chapters: fetched 10 (0 read, 10 failed)" in blocked.stdout
    assert "/files/1.vtt: blocked: private address 127.0.0.1" in blocked.stdout
    assert file_statuses(path) == {("transcript", "failed"): 5, ("chapters", "failed"): 5}
    assert {r.path for r in site.requests} == {"/files/feed.xml"}
    site.requests.clear()
    done = podarchive("backfill", url, "--db", str(path), "--allow-private-hosts")
    assert done.returncode == 0, done.stderr
    assert "  pages: fetched 5 (5 ok, 0 without notes, 0 failed)\n" in done.stdout
    assert "  transcripts and chapters: fetched 10 (10 read, 0 failed)\n" in done.stdout
    assert file_statuses(path) == {("transcript", "ok"): 5, ("chapters", "ok"): 5}
    fetched = Counter(r.path for r in site.requests if r.path != "/files/feed.xml")
    assert len(fetched) == 15  # what the dry run said, each once
    assert set(fetched.values()) == {1}
    with Archive(path) as archive:
        assert archive.count("transcript_segments") == 5
    again = podarchive("backfill", url, "--db", str(path), "--allow-private-hosts")
    assert again.returncode == 0, again.stderr
    assert "transcripts and chapters" not in again.stdout  # nothing left to fetch
    assert Counter(r.path for r in site.requests if r.path != "/files/feed.xml") == fetched


@pytest.mark.slow
def test_ctrl_c_summary_counts_what_was_done(site: LoopbackSite, tmp_path: Path) -> None:
    hold = threading.Event()
    served = serve_files_show(site, hold)
    path, url = tmp_path / "a.db", site.url("/files/feed.xml")
    args = [sys.executable, "-m", "podarchive", "backfill", url, "--db", str(path)]
    proc = subprocess.Popen(
        [*args, "--allow-private-hosts"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=cli_env(),
    )
    try:
        # two pages are stored; the server holds the next ones until the backfill gives up
        assert served.holding.wait(60), "the third page was never asked for"  # type: ignore[attr-defined]
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)
    finally:
        hold.set()
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, err
    assert served.pages_served() == 2
    assert re.search(r"episode pages: 2 done in ", err), err  # the progress …
    assert "  pages: fetched 2 (2 ok, 0 without notes, 0 failed), 3 left\n" in out  # … agrees
    assert "transcripts and chapters" not in out  # a stop starts nothing new
    assert "Traceback" not in err
    assert err.endswith("podarchive: interrupted; run backfill again to continue\n")


def test_abandon_gives_up_what_is_in_flight_and_the_report_counts_what_was_stored(
    site: LoopbackSite, tmp_path: Path
) -> None:
    """A second Ctrl-C (``abandon``): the held pages are given up now, not after the grace."""
    hold = threading.Event()
    served = serve_files_show(site, hold)
    stop, abandon = threading.Event(), threading.Event()

    def interrupt() -> None:
        if served.holding.wait(60):  # type: ignore[attr-defined]
            stop.set()
            abandon.set()

    threading.Thread(target=interrupt, daemon=True).start()
    try:
        with Archive(tmp_path / "a.db") as archive:
            report = backfill(
                archive,
                [FeedSchedule(url=site.url("/files/feed.xml"), name="Files show")],
                options=BackfillOptions(grace=600),  # only abandon can end the wait
                settings=SETTINGS,
                stop=stop,
                abandon=abandon,
            )
    finally:
        hold.set()
    (feed,) = report.feeds
    assert report.stopped
    assert (feed.pages_ok, feed.pages_left) == (2, 3)  # the held ones: left, not stored
    assert feed.files_fetched == 0  # nothing new starts after a stop
    assert Counter(r["page_status"] for r in episodes(tmp_path / "a.db").values()) == {
        "ok": 2,
        "pending": 3,
    }
