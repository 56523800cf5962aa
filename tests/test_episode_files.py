"""Issue #12 end to end: transcripts, chapters, page re-checks and kept page HTML.

A loopback podcast whose first episode lists an SRT, a WebVTT and a Podcasting 2.0 JSON
transcript, a chapters file and Podlove Simple Chapters, and whose second episode lists
files that fail every way a host fails (a 500, binary bytes, 50 MB, not JSON). Runs go
through the command line, as a user's would.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import zlib
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from conftest import FAST_ENV
from loopback import LoopbackSite

from podarchive.cli import cli
from podarchive.core.settings import Settings
from podarchive.core.types import FileTask
from podarchive.net.fetch import Fetcher
from podarchive.read.schedule_files import FeedSchedule
from podarchive.update.files import fetch_file

MiB = 1024 * 1024

SRT = """1
00:00:01,000 --> 00:00:04,000
Welcome back to Loopback Talks.

2
01:02:05,900 --> 01:02:09,000
Now the gradient checkpointing question.
"""
VTT = """WEBVTT

00:00:01.000 --> 00:00:04.000
<v Ada>Welcome back to Loopback Talks.

00:12:30.250 --> 00:12:35.000
<v Grace>The dispatcher decides which kernel runs.
"""
TRANSCRIPT_JSON = {
    "version": "1.0.0",
    "segments": [
        {"speaker": "Ada", "startTime": 1.0, "endTime": 4.0, "body": "Welcome back."},
        {
            "speaker": "Grace",
            "startTime": 1800.5,
            "endTime": 1805,
            "body": "Quantization saves memory.",
        },
    ],
}
CHAPTERS = {
    "version": "1.2.0",
    "chapters": [
        {"startTime": 0, "title": "Cold open"},
        {"startTime": 754.5, "title": "Lightning round", "url": "/lightning"},
    ],
}
PAGE = """<!doctype html><html><head><title>Episode one</title></head><body>
<nav><a href="/">Home</a> <a href="/about">About</a></nav>
<main><article><h1>Episode one</h1>
<div class="notes"><p>{notes} See <a href="https://example.org/{paper}">the paper</a>.</p></div>
</article></main><footer>© Loopback Talks</footer></body></html>"""


def feed_xml(base: str) -> str:
    return f"""<?xml version="1.0" encoding="UTF-8"?>
<rss version="2.0" xmlns:podcast="https://podcastindex.org/namespace/1.0"
     xmlns:psc="http://podlove.org/simple-chapters">
<channel><title>Loopback Talks</title><link>{base}/</link><description>Talks.</description>
<item><title>Episode one</title><guid>ep1</guid><link>{base}/ep1</link>
  <pubDate>Mon, 30 Nov 2026 10:00:00 GMT</pubDate>
  <enclosure url="{base}/ep1.mp3#x" type="audio/mpeg" length="1000"/>
  <description>Feed notes for one.</description>
  <podcast:transcript url="{base}/ep1.srt" type="application/srt"/>
  <podcast:transcript url="{base}/ep1.vtt" type="text/vtt" language="en"/>
  <podcast:transcript url="{base}/ep1.json" type="application/json"/>
  <podcast:chapters url="{base}/ep1.chapters.json" type="application/json+chapters"/>
  <psc:chapters version="1.2">
    <psc:chapter start="00:00:00" title="Opening"/>
    <psc:chapter start="00:10:00.500" title="Listener mailbag" href="/mailbag"/>
  </psc:chapters>
</item>
<item><title>Episode two</title><guid>ep2</guid>
  <pubDate>Tue, 01 Dec 2026 10:00:00 GMT</pubDate>
  <enclosure url="{base}/ep2.mp3" type="audio/mpeg" length="1000"/>
  <description>Feed notes for two.</description>
  <podcast:transcript url="{base}/ep2-broken.vtt" type="text/vtt"/>
  <podcast:transcript url="{base}/ep2-binary.srt" type="application/srt"/>
  <podcast:transcript url="{base}/ep2-huge.vtt" type="text/vtt"/>
  <podcast:chapters url="{base}/ep2.chapters.json" type="application/json+chapters"/>
</item>
</channel></rss>
"""


def huge(handler: BaseHTTPRequestHandler) -> None:
    """50 MB announced and sent (until the client hangs up)."""
    handler.send_response(200)
    handler.send_header("Content-Type", "text/vtt")
    handler.send_header("Content-Length", str(50 * MiB))
    handler.end_headers()
    chunk = b"WEBVTT\n\n" + b"x" * (MiB - 8)
    try:
        for _ in range(50):
            handler.wfile.write(chunk)
    except OSError:
        pass


@pytest.fixture
def podcast(site: LoopbackSite) -> LoopbackSite:
    base = site.url("")
    site.serve("/feed.xml", feed_xml(base), etag='"feed-1"')
    site.serve("/ep1", PAGE.format(notes="First notes.", paper="one"), etag='"p1"',
               content_type="text/html; charset=utf-8")  # fmt: skip
    site.serve("/ep1.srt", SRT, etag='"srt"', content_type="application/x-subrip")
    site.serve("/ep1.vtt", VTT, etag='"vtt"', content_type="text/vtt")
    site.serve("/ep1.json", json.dumps(TRANSCRIPT_JSON), etag='"json"',
               content_type="application/json")  # fmt: skip
    site.serve("/ep1.chapters.json", json.dumps(CHAPTERS), etag='"ch"',
               content_type="application/json+chapters")  # fmt: skip
    site.serve("/ep2-broken.vtt", "oops", status=500, content_type="text/plain")
    site.serve("/ep2-binary.srt", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)) * 4,
               content_type="application/octet-stream")  # fmt: skip
    site.handle("/ep2-huge.vtt", huge)
    site.serve("/ep2.chapters.json", "<html>not json</html>", content_type="application/json")
    return site


@pytest.fixture
def schedules(tmp_path: Path, podcast: LoopbackSite) -> Path:
    directory = tmp_path / "schedules"
    directory.mkdir()
    (directory / "talks.toml").write_text(
        f'[[feed]]\nurl = "{podcast.url("/feed.xml")}"\nname = "Loopback Talks"\n'
        "allow_private_hosts = true\n",
        encoding="utf-8",
    )
    return directory


# episode two's files fail (a run without -v says so in one line) but never fail the run
FILES_FAILING = (
    "podarchive: Loopback Talks: 3 transcripts and 1 chapters file failed: body over 20 MiB "
    "(1 of 4); raise max_file_bytes (PODARCHIVE_MAX_FILE_BYTES)\n"
)


def run(schedules: Path, db: Path, *extra: str) -> tuple[int, str]:
    result = CliRunner().invoke(
        cli,
        ["run", "--all", "--schedules", str(schedules), "--db", str(db), *extra],
        catch_exceptions=False,
    )
    return result.exit_code, result.stderr


def rows(db: Path, sql: str, *args: Any) -> list[tuple[Any, ...]]:
    conn = sqlite3.connect(db)
    try:
        return conn.execute(sql, args).fetchall()
    finally:
        conn.close()


SEARCH = (
    "SELECT s.start, s.speaker, t.format FROM transcript_segments_fts f "
    "JOIN transcript_segments s ON s.id = f.rowid JOIN transcripts t ON t.id = s.transcript_id "
    "WHERE transcript_segments_fts MATCH ? AND s.revision_id IS NULL"
)
SEARCH_CHAPTERS = (
    "SELECT c.start, c.source, c.url FROM chapters_fts f JOIN chapters c ON c.id = f.rowid "
    "WHERE chapters_fts MATCH ? AND c.revision_id IS NULL"
)


def test_a_word_from_each_transcript_and_each_chapter_title_is_found_with_its_start(
    tmp_path: Path, schedules: Path, podcast: LoopbackSite
) -> None:
    db = tmp_path / "archive.db"
    assert run(schedules, db) == (0, FILES_FAILING)
    assert rows(db, SEARCH, "checkpointing") == [(3725.9, None, "srt")]
    assert rows(db, SEARCH, "dispatcher") == [(750.25, "Grace", "vtt")]
    assert rows(db, SEARCH, "quantization") == [(1800.5, "Grace", "json")]
    assert rows(db, SEARCH_CHAPTERS, "lightning") == [(754.5, "json", podcast.url("/lightning"))]
    assert rows(db, SEARCH_CHAPTERS, "mailbag") == [(600.5, "psc", podcast.url("/mailbag"))]
    # every transcript body kept once, with its hash; one row per file, read
    assert rows(
        db,
        "SELECT t.url, t.status, t.format, t.items, d.kind, d.size, length(d.hash) "
        "FROM transcripts t JOIN documents d ON d.id = t.document_id ORDER BY t.position",
    ) == [
        (podcast.url("/ep1.srt"), "ok", "srt", 2, "transcript", len(SRT), 64),
        (podcast.url("/ep1.vtt"), "ok", "vtt", 2, "transcript", len(VTT), 64),
        (podcast.url("/ep1.json"), "ok", "json", 2, "transcript",
         len(json.dumps(TRANSCRIPT_JSON)), 64),
    ]  # fmt: skip
    # the ends of chapters are filled from the next start; the last stays open
    assert rows(db, "SELECT source, start, end, title FROM chapters ORDER BY source, start") == [
        ("json", 0.0, 754.5, "Cold open"),
        ("json", 754.5, None, "Lightning round"),
        ("psc", 0.0, 600.5, "Opening"),
        ("psc", 600.5, None, "Listener mailbag"),
    ]


def test_files_that_fail_are_one_line_each_back_off_and_never_fail_the_feed(
    tmp_path: Path, schedules: Path, podcast: LoopbackSite
) -> None:
    db = tmp_path / "archive.db"
    assert run(schedules, db) == (0, FILES_FAILING)
    failed = dict(
        rows(db, "SELECT url, error FROM transcripts WHERE status = 'failed' ORDER BY url")
        + rows(db, "SELECT url, error FROM chapter_files WHERE status = 'failed'")
    )
    assert sorted(failed) == sorted(
        podcast.url(p)
        for p in ("/ep2-broken.vtt", "/ep2-binary.srt", "/ep2-huge.vtt", "/ep2.chapters.json")
    )
    assert all(error and "\n" not in error and len(error) < 300 for error in failed.values())
    assert "500" in failed[podcast.url("/ep2-broken.vtt")]
    assert "binary" in failed[podcast.url("/ep2-binary.srt")]
    assert "over 20 MiB" in failed[podcast.url("/ep2-huge.vtt")]
    assert "not JSON" in failed[podcast.url("/ep2.chapters.json")]
    # the same reasons in the fetch log, a row per request
    logged = dict(rows(db, "SELECT url, error FROM fetches WHERE error IS NOT NULL"))
    assert set(failed) <= set(logged)
    # the feed and the good files are fine
    assert rows(db, "SELECT last_error, error_count FROM feeds") == [(None, 0)]
    assert rows(db, "SELECT count(*) FROM transcripts WHERE status = 'ok'") == [(3,)]
    # status shows them, with the latest reason, and exits 0 (the feed is not failing)
    status = CliRunner().invoke(cli, ["status", "--db", str(db)], catch_exceptions=False)
    assert status.exit_code == 0
    assert "3 transcripts, 1 chapters: " in status.stdout
    doc = json.loads(CliRunner().invoke(cli, ["status", "--json", "--db", str(db)]).stdout)[
        "feeds"
    ][0]
    assert (doc["transcripts_failing"], doc["chapters_failing"]) == (3, 1)
    assert doc["file_error"] in failed.values()
    assert sum(doc["file_errors"].values()) == 4  # by reason, commonest first
    # a run straight after asks none of them again (they back off), nor the read ones
    asked = len(podcast.requests)
    assert run(schedules, db) == (0, "")
    again = [r.path for r in podcast.requests[asked:]]
    assert again == ["/feed.xml"]


def test_a_file_from_feed_content_is_fetched_behind_the_address_guard(
    podcast: LoopbackSite,
) -> None:
    """Without allow_private_hosts a transcript on a private address is refused unasked."""
    task = FileTask("transcript", 1, 1, 1, podcast.url("/ep1.vtt"), "text/vtt")
    schedule = FeedSchedule(url="https://feeds.example/feed.xml")
    with Fetcher(Settings(host_gap=0, retries=0)) as fetcher:
        outcome = fetch_file(fetcher, task, schedule)
    assert outcome.error is not None
    assert "private address" in str(outcome.error)
    assert podcast.hits("/ep1.vtt") == 0


def page_state(db: Path) -> dict[str, Any]:
    """Everything but the fetch log (its captures too, #27) and the bookkeeping of polls and
    re-checks (times)."""
    conn = sqlite3.connect(db)
    try:
        tables = [
            name
            for (name,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
            if name not in ("fetches", "captures", "header_sets", "sqlite_sequence")
            and "_fts" not in name
        ]
        state = {t: sorted(conn.execute(f"SELECT * FROM [{t}]"), key=repr) for t in tables}
        bookkeeping = ("page_fetched_at", "page_recheck_at", "page_attempts")
        columns = [c[1] for c in conn.execute("PRAGMA table_info(episodes)")]
        kept = ", ".join(c for c in columns if c not in bookkeeping)
        state["episodes"] = conn.execute(f"SELECT {kept} FROM episodes ORDER BY id").fetchall()
        feed_columns = [c[1] for c in conn.execute("PRAGMA table_info(feeds)")]
        timeless = ", ".join(c for c in feed_columns if not c.endswith("_at"))
        state["feeds"] = conn.execute(f"SELECT {timeless} FROM feeds").fetchall()
        for table in ("transcripts", "chapter_files"):
            state[table] = conn.execute(
                f"SELECT id, url, status, document_id, items FROM {table} ORDER BY id"
            ).fetchall()
        state["fts"] = [
            conn.execute(f"SELECT count(*) FROM [{name}]").fetchone()
            for name in ("episodes_fts_data", "transcript_segments_fts_data", "chapters_fts_data")
        ]
        return state
    finally:
        conn.close()


def test_an_edited_page_is_archived_on_recheck_keeping_both_bodies(
    tmp_path: Path, schedules: Path, podcast: LoopbackSite
) -> None:
    db = tmp_path / "archive.db"
    assert run(schedules, db) == (0, FILES_FAILING)
    assert rows(db, "SELECT page_status, page_extractor, page_notes_text FROM episodes "
                "WHERE guid = 'ep1'") == [("ok", "generic", "First notes. See the paper.")]  # fmt: skip
    # not due yet: a plain run does not ask the page again
    asked = len(podcast.requests)
    assert run(schedules, db) == (0, "")
    assert podcast.hits("/ep1") == 1, [r.path for r in podcast.requests[asked:]]

    podcast.serve("/ep1", PAGE.format(notes="Corrected notes.", paper="two"), etag='"p2"',
                  content_type="text/html; charset=utf-8")  # fmt: skip
    assert run(schedules, db, "--recheck-pages") == (0, FILES_FAILING)
    page_requests = [r for r in podcast.requests if r.path == "/ep1"]
    assert page_requests[-1].headers.get("if-none-match") == '"p1"'  # a conditional GET
    assert rows(db, "SELECT page_notes_text FROM episodes WHERE guid = 'ep1'") == [
        ("Corrected notes. See the paper.",)
    ]
    assert rows(
        db,
        "SELECT r.source, r.page_notes_text FROM episode_revisions r "
        "JOIN episodes e ON e.id = r.episode_id WHERE e.guid = 'ep1'",
    ) == [("page", "First notes. See the paper.")]
    assert rows(
        db,
        "SELECT l.url, l.revision_id IS NULL FROM links l JOIN episodes e "
        "ON e.id = l.episode_id WHERE e.guid = 'ep1' AND l.source = 'page' ORDER BY l.id",
    ) == [("https://example.org/one", 0), ("https://example.org/two", 1)]
    bodies = rows(
        db,
        "SELECT d.body FROM page_bodies b JOIN documents d ON d.id = b.document_id "
        "ORDER BY b.seen_at, b.id",
    )
    assert [b"First notes." in zlib.decompress(b) for (b,) in bodies] == [True, False]
    assert b"Corrected notes." in zlib.decompress(bodies[1][0])

    # a second identical re-check: the page answers 304; nothing but the fetch log changes
    before, fetches = page_state(db), rows(db, "SELECT count(*) FROM fetches")[0][0]
    assert run(schedules, db, "--recheck-pages") == (0, FILES_FAILING)
    assert page_state(db) == before
    assert rows(db, "SELECT count(*) FROM fetches")[0][0] > fetches


def test_reparse_rebuilds_page_notes_from_the_kept_html(
    tmp_path: Path, schedules: Path, podcast: LoopbackSite
) -> None:
    db = tmp_path / "archive.db"
    assert run(schedules, db) == (0, FILES_FAILING)
    podcast.serve("/ep1", PAGE.format(notes="Corrected notes.", paper="two"), etag='"p2"',
                  content_type="text/html; charset=utf-8")  # fmt: skip
    assert run(schedules, db, "--recheck-pages") == (0, FILES_FAILING)
    before = page_state(db)
    conn = sqlite3.connect(db)
    with conn:
        conn.execute(
            "UPDATE episodes SET page_notes_html = NULL, page_notes_text = NULL, "
            "page_extractor = NULL"
        )
        conn.execute("DELETE FROM links WHERE source = 'page'")
        conn.execute("DELETE FROM episode_revisions WHERE source = 'page'")
    conn.close()
    asked = len(podcast.requests)
    result = CliRunner().invoke(cli, ["reparse", "--db", str(db)], catch_exceptions=False)
    assert result.exit_code == 0, result.stderr
    assert "1 page re-read (1 changed, 0 kept as they were)" in result.stdout
    assert len(podcast.requests) == asked  # without the network
    after = page_state(db)
    # ids of the rebuilt revision and links are new; the content is the same
    strip = {"episode_revisions": 0, "links": 0}
    for table, column in strip.items():
        before[table] = sorted((r[:column] + r[column + 1 :] for r in before[table]), key=repr)
        after[table] = sorted((r[:column] + r[column + 1 :] for r in after[table]), key=repr)
    revision_ids = {r[0] for r in rows(db, "SELECT id FROM episode_revisions")}
    assert {r[-1] for r in rows(db, "SELECT * FROM links WHERE source = 'page'")} - {
        None
    } <= revision_ids
    before["links"] = [r[:-1] for r in before["links"]]
    after["links"] = [r[:-1] for r in after["links"]]
    before["fts"] = after["fts"] = []  # the index was written twice; its content is checked
    assert after == before
    hits = rows(db, "SELECT rowid FROM episodes_fts WHERE episodes_fts MATCH 'corrected'")
    assert len(hits) == 1


def test_a_changed_transcript_keeps_its_old_segments_as_a_revision(
    tmp_path: Path, schedules: Path, podcast: LoopbackSite
) -> None:
    db = tmp_path / "archive.db"
    assert run(schedules, db) == (0, FILES_FAILING)
    podcast.serve("/ep1.vtt", VTT.replace("dispatcher", "scheduler"), etag='"vtt-2"',
                  content_type="text/vtt")  # fmt: skip
    assert run(schedules, db, "--recheck-pages") == (0, FILES_FAILING)
    assert rows(db, SEARCH, "scheduler") == [(750.25, "Grace", "vtt")]
    assert rows(db, SEARCH, "dispatcher") == []  # current segments only
    old = rows(
        db,
        "SELECT s.text, r.seen_until IS NOT NULL, r.items FROM transcript_segments s "
        "JOIN transcript_revisions r ON r.id = s.revision_id WHERE s.text LIKE '%dispatcher%'",
    )
    assert old == [("The dispatcher decides which kernel runs.", 1, 2)]
    assert rows(db, "SELECT count(*) FROM documents WHERE kind = 'transcript'") == [(4,)]


def test_run_recheck_pages_as_a_real_process(
    tmp_path: Path, schedules: Path, podcast: LoopbackSite
) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PODARCHIVE_")}
    env.update(FAST_ENV)
    command = [sys.executable, "-m", "podarchive", "run", "--all", "--schedules", str(schedules)]
    for extra in ([], ["--recheck-pages"]):
        result = subprocess.run(
            [*command, *extra], cwd=tmp_path, capture_output=True, text=True, timeout=120,
            env=env, stdin=subprocess.DEVNULL,
        )  # fmt: skip
        assert (result.returncode, result.stderr) == (0, FILES_FAILING)
    assert podcast.hits("/ep1") == 2
    assert podcast.hits("/ep1.srt") == 2
    assert rows(tmp_path / "archive.db", SEARCH, "checkpointing") == [(3725.9, None, "srt")]
