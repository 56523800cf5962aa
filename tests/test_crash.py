"""SIGKILL ``podarchive run`` at random points; the archive must stay whole and converge.

Thirty feeds on a loopback site (20-50 items each, HTML notes with links; four with episode
pages; some gzip-encoded, some slow and dripping) are archived by a real subprocess,
``python -m podarchive run --allow-private-hosts --db a.db <urls...>``, which is killed
with SIGKILL after a seeded random delay, ten times in a row on the same archive. Before
each run the feeds grow by two items (a new "generation"), so every run has real writing
to do. After every kill:

* ``PRAGMA integrity_check`` is ok, foreign keys hold, the FTS index matches its table;
* no feed is half-written: a feed's episodes are exactly the items of the body whose hash
  the feed row stores (or none, before its first success); each episode has exactly the
  links its notes hold, and each fetched page exactly the links the page holds.

Finally one uninterrupted run brings the archive to the last generation, and its content
must equal a clean single run on a fresh archive: rows compared by (feed URL, episode key)
rather than ids, without timestamps (every ``*_at`` column and ``not_before``) and without
the fetch log, which legitimately differ between the two histories.
"""

from __future__ import annotations

import gzip
import hashlib
import os
import random
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

import pytest
from loopback import LoopbackSite

pytestmark = pytest.mark.slow

FEEDS = 30
KILLS = 10
FINAL = KILLS  # generations 0..KILLS-1 are killed, generation KILLS runs to the end
SEED = 20241202
ENV = {  # one host serves everything: no politeness gap, no retries of a dying server
    "PODARCHIVE_HOST_GAP": "0",
    "PODARCHIVE_CONCURRENCY": "4",
    "PODARCHIVE_PER_HOST": "4",
    "PODARCHIVE_RETRIES": "0",
    "PODARCHIVE_CONNECT_TIMEOUT": "5",
    "PODARCHIVE_READ_TIMEOUT": "5",
}
OBSERVATION_LOGS = {
    "fetches", "feed_bodies", "snapshots", "documents", "page_bodies", "captures", "header_sets"
}  # fmt: skip
# row ids (documents are numbered in the order bodies arrive) and times
VOLATILE = {
    "id",
    "feed_id",
    "episode_id",
    "not_before",
    "document_id",
    "page_document_id",
    "revision_id",
    "transcript_id",
    "chapter_file_id",
}  # fmt: skip  -- plus every column named *_at


@dataclass(frozen=True)
class FeedPlan:
    index: int
    base: int  # items in generation 0; generation g has base + 2 g
    pages: bool
    gzip: bool
    slow: float  # seconds of pause in the middle of the body


class Site:
    """The thirty feeds and their pages, served at the current generation."""

    def __init__(self, loopback: LoopbackSite, rng: random.Random) -> None:
        self.loopback = loopback
        self.generation = 0
        self.plans = [
            FeedPlan(
                index=f,
                base=rng.randint(20, 30),
                pages=f % 8 == 0,
                gzip=f % 3 == 0,
                slow=0.15 if f % 7 == 3 else 0.0,
            )
            for f in range(FEEDS)
        ]
        for plan in self.plans:
            loopback.handle(f"/f{plan.index}/feed.xml", self._feed_handler(plan))
            if plan.pages:
                for i in range(plan.base + 2 * FINAL):
                    page = page_html(plan.index, i).encode()
                    loopback.handle(
                        f"/f{plan.index}/ep{i}.html", responder(lambda p=page: p, html=True)
                    )
        # sha256 of each generation's body -> its item count, per feed
        self.bodies = {
            plan.index: {
                hashlib.sha256(self.body(plan, g)).hexdigest(): self.count(plan, g)
                for g in range(FINAL + 1)
            }
            for plan in self.plans
        }

    def url(self, plan: FeedPlan) -> str:
        return self.loopback.url(f"/f{plan.index}/feed.xml")

    @property
    def urls(self) -> list[str]:
        return [self.url(p) for p in self.plans]

    @staticmethod
    def count(plan: FeedPlan, generation: int) -> int:
        return plan.base + 2 * generation

    def body(self, plan: FeedPlan, generation: int) -> bytes:
        items = [
            item_xml(plan, i, self.loopback.url(f"/f{plan.index}/ep{i}.html"))
            for i in reversed(range(self.count(plan, generation)))
        ]
        return (
            '<?xml version="1.0" encoding="utf-8"?>\n<rss version="2.0"><channel>'
            f"<title>Feed {plan.index}</title><link>https://show{plan.index}.example.com/</link>"
            f"<description>Show number {plan.index}</description>{''.join(items)}"
            "</channel></rss>"
        ).encode()

    def _feed_handler(self, plan: FeedPlan) -> Callable[[BaseHTTPRequestHandler], None]:
        return responder(
            lambda: self.body(plan, self.generation), gzip_it=plan.gzip, pause=plan.slow
        )


def feed_links(i: int) -> int:
    return i % 4 + 1


def page_links(i: int) -> int:
    return i % 3 + 1


def item_xml(plan: FeedPlan, i: int, page_url: str) -> str:
    anchors = " ".join(
        f'<a href="https://site{n}.example.org/f{plan.index}/e{i}">reference {n}</a>'
        for n in range(feed_links(i))
    )
    notes = f"<p>Episode {i} of feed {plan.index}: notes with links.</p><ul><li>{anchors}</li></ul>"
    link = f"<link>{page_url}</link>" if plan.pages else ""
    day = 1 + i % 28
    return (
        f"<item><title>Feed {plan.index} episode {i}</title><guid>f{plan.index}-e{i}</guid>"
        f"{link}<pubDate>Mon, {day:02d} Jan 2024 10:{i % 60:02d}:00 GMT</pubDate>"
        f"<description><![CDATA[{notes}]]></description>"
        f'<enclosure url="https://cdn.example.com/f{plan.index}/e{i}.mp3" type="audio/mpeg" '
        f'length="{1000 + i}"/></item>'
    )


def page_html(feed: int, i: int) -> str:
    anchors = " and ".join(
        f'<a href="https://page{n}.example.net/f{feed}/e{i}">page link {n}</a>'
        for n in range(page_links(i))
    )
    return (
        f"<!doctype html><html><head><title>Episode {i}</title></head><body><main>"
        f"<h1>Feed {feed} episode {i}</h1><p>The full show notes of this episode, longer than "
        f"the feed's, with {anchors} to read after listening.</p></main></body></html>"
    )


def responder(
    make_body: Callable[[], bytes],
    *,
    gzip_it: bool = False,
    pause: float = 0.0,
    html: bool = False,
) -> Callable[[BaseHTTPRequestHandler], None]:
    """Headers and body in as few writes as possible (LoopbackSite's replies stall on
    Nagle + delayed ACK, ~40 ms each); optionally gzip, optionally a pause mid-body."""

    def reply(handler: BaseHTTPRequestHandler) -> None:
        body = make_body()
        media = "text/html" if html else "application/rss+xml"
        headers = ["HTTP/1.1 200 OK", f"Content-Type: {media}; charset=utf-8"]
        if gzip_it and "gzip" in handler.headers.get("Accept-Encoding", ""):
            body = gzip.compress(body, mtime=0)
            headers.append("Content-Encoding: gzip")
        head = "\r\n".join([*headers, f"Content-Length: {len(body)}", "", ""]).encode()
        try:
            if pause:
                handler.wfile.write(head + body[: len(body) // 2])
                time.sleep(pause)
                handler.wfile.write(body[len(body) // 2 :])
            else:
                handler.wfile.write(head + body)
        except OSError:
            handler.close_connection = True  # the client was killed: fine

    return reply


# --- the subprocess ----------------------------------------------------------------------


def kill_after_requests(proc: subprocess.Popen[bytes], site: LoopbackSite, count: int) -> None:
    """SIGKILL ``proc`` once the server has received ``count`` requests in all."""
    while proc.poll() is None:
        if len(site.requests) >= count:
            proc.send_signal(signal.SIGKILL)
            return
        time.sleep(0.002)


def start_run(db: Path, urls: list[str]) -> subprocess.Popen[bytes]:
    env = {**os.environ, **ENV}
    return subprocess.Popen(
        [sys.executable, "-m", "podarchive", "run", "--allow-private-hosts", "--db", str(db)]
        + urls,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )


def run_to_end(db: Path, urls: list[str]) -> float:
    start = time.perf_counter()
    proc = start_run(db, urls)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err.decode(errors="replace")
    assert b"Traceback" not in err
    return time.perf_counter() - start


# --- checks ---------------------------------------------------------------------------------


def connect(db: Path) -> sqlite3.Connection:
    conn = sqlite3.connect(db, timeout=10)
    conn.row_factory = sqlite3.Row
    return conn


def check_whole(db: Path, site: Site) -> dict[str, int]:
    """The archive is sound and no feed or page is half-written. Returns some counts."""
    conn = connect(db)
    try:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        assert conn.execute("PRAGMA foreign_key_check").fetchall() == []
        conn.execute("INSERT INTO episodes_fts(episodes_fts) VALUES ('integrity-check')")
        plans = {site.url(p): p for p in site.plans}
        stored = 0
        for feed in conn.execute("SELECT id, url, content_hash, last_success_at FROM feeds"):
            plan = plans[feed["url"]]
            keys = {
                r[0] for r in conn.execute("SELECT key FROM episodes WHERE feed_id = ?", [feed[0]])
            }
            if feed["content_hash"] is None:
                assert feed["last_success_at"] is None
                assert keys == set(), feed["url"]
                continue
            assert feed["last_success_at"] is not None
            count = site.bodies[plan.index][feed["content_hash"]]  # a body we served
            assert keys == {f"guid:f{plan.index}-e{i}" for i in range(count)}, feed["url"]
            stored += 1
        for row in conn.execute(
            "SELECT e.key, e.page_status, "
            "(SELECT count(*) FROM links l WHERE l.episode_id = e.id AND l.source = 'feed'), "
            "(SELECT count(*) FROM links l WHERE l.episode_id = e.id AND l.source = 'page') "
            "FROM episodes e"
        ):
            i = int(row[0].rsplit("-e", 1)[1])
            assert row[2] == feed_links(i), row[0]
            assert row[3] == (page_links(i) if row[1] == "ok" else 0), row[0]
        pages_ok = conn.execute("SELECT count(*) FROM episodes WHERE page_status = 'ok'")
        return {
            "feeds stored": stored,
            "episodes": conn.execute("SELECT count(*) FROM episodes").fetchone()[0],
            "pages ok": pages_ok.fetchone()[0],
        }
    finally:
        conn.close()


def content(db: Path) -> dict[str, list[dict[str, Any]]]:
    """The archive's content, keyed by feed URL and episode key, without volatile columns."""
    conn = connect(db)
    try:
        out: dict[str, list[dict[str, Any]]] = {}
        tables = [
            r[0]
            for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
            # the logs of what was fetched and seen legitimately differ: the crashed archive
            # saw every intermediate body, the clean one only the last
            if r[0] not in OBSERVATION_LOGS and not r[0].startswith(("episodes_fts", "sqlite_"))
        ]
        for table in sorted(tables):
            columns = [r[1] for r in conn.execute(f"PRAGMA table_info([{table}])")]
            kept = [c for c in columns if c not in VOLATILE and not c.endswith("_at")]
            if not kept:
                continue
            select = ", ".join(f"t.[{c}]" for c in kept)
            if table == "episodes":
                sql = (
                    f"SELECT f.url AS feed_url, {select} FROM episodes t "
                    "JOIN feeds f ON f.id = t.feed_id"
                )
            elif table == "links":
                sql = (
                    f"SELECT f.url AS feed_url, e.key AS episode_key, {select} FROM links t "
                    "JOIN episodes e ON e.id = t.episode_id JOIN feeds f ON f.id = e.feed_id"
                )
            elif "feed_id" in columns:
                sql = (
                    f"SELECT f.url AS feed_url, {select} FROM [{table}] t "
                    "JOIN feeds f ON f.id = t.feed_id"
                )
            else:
                sql = f"SELECT {select} FROM [{table}] t"
            rows = ({k: r[k] for k in r.keys()} for r in conn.execute(sql))  # noqa: SIM118
            out[table] = sorted(rows, key=repr)
        return out
    finally:
        conn.close()


def test_sigkill_at_random_points_never_half_writes_and_converges(tmp_path: Path) -> None:
    rng = random.Random(SEED)
    with LoopbackSite() as loopback:
        site = Site(loopback, rng)

        # a clean single run of the last generation: the reference, and the run's length
        site.generation = FINAL
        clean_db = tmp_path / "clean.db"
        clean_seconds = run_to_end(clean_db, site.urls)
        clean_counts = check_whole(clean_db, site)

        db = tmp_path / "a.db"
        killed_mid_run = 0
        history = []
        for generation in range(KILLS):
            site.generation = generation
            # Kill once a random number of this run's requests have reached the server
            # (not after a random time: with the item cache later runs are much faster than
            # the first, and timing would mostly miss them).
            delay = rng.randint(1, FEEDS * 3)  # feeds first, then their pages
            target = len(loopback.requests) + delay
            proc = start_run(db, site.urls)
            watcher = threading.Thread(
                target=kill_after_requests, args=(proc, loopback, target), daemon=True
            )
            watcher.start()
            _, err = proc.communicate(timeout=60)
            watcher.join(timeout=5)
            killed = proc.returncode == -signal.SIGKILL
            killed_mid_run += killed
            if not killed:
                assert proc.returncode == 0, err.decode(errors="replace")
            counts = check_whole(db, site)
            history.append((delay, killed, counts))

        site.generation = FINAL
        final_seconds = run_to_end(db, site.urls)
        counts = check_whole(db, site)
        assert counts["feeds stored"] == FEEDS
    print(f"\nclean run {clean_seconds:.2f} s {clean_counts}, final run {final_seconds:.2f} s")
    for delay, killed, step in history:
        print(f"  kill after {delay:3d} requests: {'killed' if killed else 'finished'}  {step}")
    assert killed_mid_run >= KILLS // 2  # most kills landed while it was working
    assert_same_content(content(db), content(clean_db))


def assert_same_content(
    got: dict[str, list[dict[str, Any]]], want: dict[str, list[dict[str, Any]]]
) -> None:
    """Equal, or a failure naming the first table, row and columns that differ."""
    assert sorted(got) == sorted(want)
    for table in sorted(want):
        assert len(got[table]) == len(want[table]), table
        for mine, theirs in zip(got[table], want[table], strict=True):
            differing = {c: (mine[c], theirs[c]) for c in theirs if mine[c] != theirs[c]}
            assert not differing, (table, {k: mine[k] for k in list(mine)[:2]}, differing)
