"""A big first ingest (#30) defers the links' indexes and summary triggers, and is crash safe.

The rule (``update.big_ingest``): at least ``BIG_INGEST_FEEDS`` feeds without episodes yet,
and at least as many as the archive's feeds with episodes. Seen from the loopback server: a
handler looks at the archive's ``sqlite_master`` each time a feed is requested, so the
tests see what the run had in place while it fetched. A real ``podarchive run`` is killed
(SIGKILL) while its last feed hangs; the next opening of the archive brings back the
indexes, the triggers and an exact summary. The canned queries answer the same with the
indexes deferred as after.
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import closing
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

import pytest
from loopback import LoopbackSite

from podarchive.core.settings import Settings
from podarchive.read.schedule_files import FeedSchedule
from podarchive.store import Archive
from podarchive.store.migrations_links import LINK_SUMMARY_TRIGGERS, REBUILD_LINK_SUMMARY
from podarchive.store.schema import LOOKUP_INDEXES
from podarchive.tasks.backfill import backfill
from podarchive.tasks.backfill_model import BackfillOptions
from podarchive.update.big_ingest import BIG_INGEST_FEEDS, is_big
from podarchive.update.run import update_feeds

DEFERRED = {*LOOKUP_INDEXES, *LINK_SUMMARY_TRIGGERS}
METADATA = Path(__file__).parent.parent / "src/podarchive/web/datasette/metadata.json"
ENV = {
    "PODARCHIVE_HOST_GAP": "0",
    "PODARCHIVE_CONCURRENCY": "4",
    "PODARCHIVE_PER_HOST": "4",
    "PODARCHIVE_RETRIES": "0",
    "PODARCHIVE_READ_TIMEOUT": "600",  # the hanging feed hangs until the kill
}


def rss(k: int) -> bytes:
    items = "".join(
        f"<item><guid>f{k}-e{e}</guid><title>Episode {e}</title>"
        f"<description><![CDATA[<p><a href='https://d{(k + e) % 7}.example/{k}/{e}'>a</a> "
        f"<a href='https://WWW.shared.example/x#{e % 2}'>b</a> "
        f"<a href='https://sub.d{e % 3}.example/p?utm_source=x'>c</a></p>]]></description>"
        f"<pubDate>Mon, 0{e + 1} Dec 2026 09:00:00 +0000</pubDate></item>"
        for e in range(3)
    )
    return (
        f"<?xml version='1.0'?><rss version='2.0'><channel><title>Show {k}</title>"
        f"<link>https://show{k}.example/</link>{items}</channel></rss>"
    ).encode()


class Site:
    """``feeds`` tiny feeds; each request notes which deferrable names the archive has."""

    def __init__(self, site: LoopbackSite, db: Path, feeds: int, hang: bool = False) -> None:
        self.db = db
        self.seen: list[set[str]] = []
        self.release = threading.Event()
        self.urls = [site.url(f"/f{k}.xml") for k in range(feeds)]
        for k in range(feeds):
            last = hang and k == feeds - 1
            site.handle(f"/f{k}.xml", self._hanging() if last else self._reply(k))

    def names(self) -> set[str]:
        if not self.db.exists():
            return set()
        with closing(sqlite3.connect(self.db, timeout=30)) as conn:
            return {n for (n,) in conn.execute("SELECT name FROM sqlite_master")}

    def _reply(self, k: int) -> Any:
        def reply(h: BaseHTTPRequestHandler) -> None:
            self.seen.append(self.names() & DEFERRED)
            body = rss(k)
            h.send_response(200)
            h.send_header("Content-Type", "application/rss+xml")
            h.send_header("Content-Length", str(len(body)))
            h.end_headers()
            h.wfile.write(body)

        return reply

    def _hanging(self) -> Any:
        def reply(h: BaseHTTPRequestHandler) -> None:
            self.seen.append(self.names() & DEFERRED)
            self.release.wait(120)
            h.close_connection = True

        return reply


@pytest.fixture
def site() -> Iterator[LoopbackSite]:
    with LoopbackSite() as s:
        yield s


def schedules(urls: list[str]) -> list[FeedSchedule]:
    return [FeedSchedule(url=u, pages=False, allow_private_hosts=True) for u in urls]


def recount(conn: sqlite3.Connection) -> list[tuple[Any, ...]]:
    """``link_domains`` as the rebuild computes it from the links (in a rolled-back copy)."""
    conn.execute("SAVEPOINT recount")
    try:
        for sql in REBUILD_LINK_SUMMARY:
            conn.execute(sql)
        return conn.execute("SELECT * FROM link_domains ORDER BY domain").fetchall()
    finally:
        conn.execute("ROLLBACK TO recount")
        conn.execute("RELEASE recount")


def canned(conn: sqlite3.Connection, name: str, **params: str) -> list[tuple[Any, ...]]:
    queries = json.loads(METADATA.read_text())["databases"]["archive"]["queries"]
    return conn.execute(queries[name]["sql"], params).fetchall()


def answers(db: Path) -> dict[str, list[tuple[Any, ...]]]:
    with closing(sqlite3.connect(db, timeout=30)) as conn:
        return {
            "domains": canned(conn, "most_linked_domains"),
            "d1": canned(conn, "episodes_linking_to", target="d1.example"),
            "shared": canned(conn, "episodes_linking_to", target="https://WWW.shared.example/x"),
        }


# --- the rule ---------------------------------------------------------------------------


def test_the_rule() -> None:
    assert is_big(BIG_INGEST_FEEDS, 0)
    assert is_big(1000, 1000)
    assert not is_big(BIG_INGEST_FEEDS - 1, 0)  # a small first run
    assert not is_big(500, 501)  # the rebuild would read more links than the run brings


def test_ingest_counts(tmp_path: Path) -> None:
    with Archive(tmp_path / "a.db") as archive:
        with archive.db.conn:
            archive.db.execute("INSERT INTO feeds (id, url) VALUES (1, 'u1'), (2, 'u2')")
            archive.db.execute(
                "INSERT INTO episodes (feed_id, key, first_seen_at) VALUES (1, 'k', '2026')"
            )
        # u2 is known but has no episode, u3 is not in the archive; u1 has one
        assert archive.ingest_counts(["u1", "u2", "u3", "u3"]) == (2, 1)


# --- in-process runs --------------------------------------------------------------------


def test_a_small_first_run_keeps_the_indexes(site: LoopbackSite, tmp_path: Path) -> None:
    db = tmp_path / "a.db"
    feeds = Site(site, db, BIG_INGEST_FEEDS - 1)
    with Archive(db) as archive:
        report = update_feeds(archive, schedules(feeds.urls), settings=Settings(host_gap=0))
    assert not report.failed
    assert feeds.seen
    assert all(names == DEFERRED for names in feeds.seen)


def test_a_big_first_run_defers_them_and_reads_stay_right(
    site: LoopbackSite, tmp_path: Path
) -> None:
    db = tmp_path / "a.db"
    feeds = Site(site, db, BIG_INGEST_FEEDS)
    with Archive(db) as archive:
        report = update_feeds(archive, schedules(feeds.urls), settings=Settings(host_gap=0))
        assert not report.failed
        assert len(feeds.seen) == BIG_INGEST_FEEDS
        assert all(names == set() for names in feeds.seen)  # deferred for every fetch
        after = answers(db)
        names = {n for (n,) in archive.db.execute("SELECT name FROM sqlite_master")}
        assert names >= DEFERRED
        assert archive.db.execute("SELECT * FROM link_domains ORDER BY domain").fetchall() == (
            recount(archive.db.conn)
        )
        with archive.deferred_link_indexes():  # readers while a big ingest runs
            assert answers(db) == after
        # a second run of the same feeds: they have episodes now, nothing is deferred
        feeds.seen.clear()
        update_feeds(archive, schedules(feeds.urls), settings=Settings(host_gap=0))
        assert feeds.seen
        assert all(names == DEFERRED for names in feeds.seen)
    assert after["domains"]
    assert after["d1"]
    assert after["shared"]


def test_a_big_backfill_defers_them_a_dry_run_does_not(site: LoopbackSite, tmp_path: Path) -> None:
    db = tmp_path / "a.db"
    feeds = Site(site, db, BIG_INGEST_FEEDS)
    Archive(db).close()
    with closing(Archive.open_read_only(db)) as archive:  # a dry run writes nothing
        backfill(
            archive,
            schedules(feeds.urls),
            options=BackfillOptions(dry_run=True),
            settings=Settings(host_gap=0),
        )
    assert len(feeds.seen) == BIG_INGEST_FEEDS
    assert all(names == DEFERRED for names in feeds.seen)
    feeds.seen.clear()
    with Archive(db) as archive:
        report = backfill(archive, schedules(feeds.urls), settings=Settings(host_gap=0))
        assert not [f.error for f in report.feeds if f.error]
        assert archive.db.execute("SELECT count(*) FROM episodes").fetchone()[0] == 300
    assert len(feeds.seen) == BIG_INGEST_FEEDS
    assert all(names == set() for names in feeds.seen)
    assert feeds.names() >= DEFERRED


# --- a real run, killed ------------------------------------------------------------------


def wait_for(what: Any, proc: subprocess.Popen[bytes], timeout: float = 300) -> None:
    deadline = time.monotonic() + timeout
    while not what():
        assert proc.poll() is None, proc.communicate()[1].decode(errors="replace")
        assert time.monotonic() < deadline, "the run did not get there"
        time.sleep(0.1)


def stored_feeds(db: Path) -> int:
    if not db.exists():
        return 0
    with closing(sqlite3.connect(db, timeout=30)) as conn:
        try:
            row = conn.execute("SELECT count(DISTINCT feed_id) FROM episodes").fetchone()
        except sqlite3.OperationalError:  # not created yet
            return 0
    return int(row[0])


def test_a_killed_big_run_leaves_an_archive_the_next_opening_restores(
    site: LoopbackSite, tmp_path: Path
) -> None:
    db = tmp_path / "a.db"
    count = BIG_INGEST_FEEDS + 2
    feeds = Site(site, db, count, hang=True)
    proc = subprocess.Popen(
        [sys.executable, "-m", "podarchive", "run", "--allow-private-hosts", "--db", str(db)]
        + feeds.urls,
        env={**os.environ, **ENV},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        # every feed but the hanging last one stored, the hanging one asked for
        wait_for(lambda: stored_feeds(db) == count - 1, proc)
        wait_for(lambda: len(feeds.seen) == count, proc)
        assert feeds.names() & DEFERRED == set()  # the run defers them
        during = answers(db)
        proc.send_signal(signal.SIGKILL)
        proc.wait(30)
    finally:
        feeds.release.set()
        if proc.poll() is None:
            proc.kill()
            proc.wait(30)
        assert proc.stderr is not None
        proc.stderr.close()
    assert proc.returncode == -signal.SIGKILL
    assert all(names == set() for names in feeds.seen)
    assert feeds.names() & DEFERRED == set()  # as the crash left it
    with Archive(db) as archive:  # the next opening to write restores them
        names = {n for (n,) in archive.db.execute("SELECT name FROM sqlite_master")}
        assert names >= DEFERRED
        summary = archive.db.execute("SELECT * FROM link_domains ORDER BY domain").fetchall()
        assert summary
        assert summary == recount(archive.db.conn)
    assert answers(db) == during
    assert during["domains"]
    assert during["d1"]
    assert during["shared"]


# --- the benchmark ------------------------------------------------------------------------


@pytest.mark.slow
def test_the_import_case_of_vs_peers_runs() -> None:
    """``vs_peers.py --import-case --smoke``: import, then the run, at two sizes; the table of
    the store's CPU per episode (nothing about time is asserted)."""
    benchmarks = Path(__file__).parent.parent / "benchmarks"
    proc = subprocess.run(
        [sys.executable, "vs_peers.py", "--smoke", "--import-case", "--reference"],
        cwd=benchmarks,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    rows = [
        json.loads(line.split("; load")[0])
        for line in proc.stdout.splitlines()
        if line.startswith("  {")
    ]
    assert [(r["feeds"], r["plain"]) for r in rows] == [
        (2, False),
        (2, True),
        (4, False),
        (4, True),
    ]
    assert all(r["store_calls_elsewhere"] == 0 for r in rows)  # the store: the run's thread
    assert "store CPU ms/episode" in proc.stdout
    assert "store CPU per episode at 4 feeds" in proc.stdout
