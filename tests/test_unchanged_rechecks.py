"""Issue #23 item 8: a re-check whose body changed only where nothing is read (a WebVTT
``NOTE``, a chapters file's JSON spacing, a page's CSRF token) is no revision and keeps no new
body: revisions, segments, chapters and kept bodies stay as they were; the fetch is recorded.
A real change still makes a revision and keeps its body; ``reparse`` still rebuilds the page
notes from the bodies kept.

A loopback podcast of two episodes, each with a page, a WebVTT transcript and a chapters file;
runs and re-checks go through the command line (``run --recheck-pages``).
"""

from __future__ import annotations

import json
import sqlite3
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from loopback import LoopbackSite

from podarchive.cli import cli

EPISODES = ("ep1", "ep2")
CUES = [
    ("00:00:01.000", "00:00:04.000", "Ada", "Welcome back to Loopback Talks."),
    ("00:00:04.000", "00:00:09.500", "Grace", "Today: how the dispatcher picks a kernel."),
    ("00:12:30.250", "00:12:35.000", "Ada", "And that was the lightning round."),
]
CHAPTERS = {
    "version": "1.2.0",
    "chapters": [
        {"startTime": 0, "title": "Cold open"},
        {"startTime": 754.5, "title": "Lightning round", "url": "https://example.org/l"},
    ],
}
PAGE = """<!doctype html><html><head><title>{ep}</title>
<meta name="csrf-token" content="{token}"></head><body>
<nav><a href="/">Home</a> <a href="/about">About</a></nav>
<form action="/subscribe"><input type="hidden" name="authenticity_token" value="{token}">
<input name="email"></form>
<main><article><h1>Episode {ep}</h1>
<div class="notes"><p>{notes} See <a href="https://example.org/{ep}/paper">the paper</a>
and <a href="https://example.org/{ep}/code">the code</a>.</p></div>
</article></main><footer>Loopback Talks</footer></body></html>"""


def vtt(note: str, cues: list[tuple[str, str, str, str]] = CUES) -> str:
    blocks = "".join(
        f"cue-{i}\n{start} --> {end}\n<v {who}>{text}\n\n"
        for i, (start, end, who, text) in enumerate(cues)
    )
    return f"WEBVTT\n\nNOTE {note}\n\n{blocks}"


def feed_xml(base: str) -> str:
    items = "".join(
        f"""<item><title>Episode {ep}</title><guid>{ep}</guid><link>{base}/{ep}</link>
  <pubDate>Mon, 30 Nov 2026 10:00:00 GMT</pubDate><description>Feed notes.</description>
  <podcast:transcript url="{base}/{ep}.vtt" type="text/vtt"/>
  <podcast:chapters url="{base}/{ep}.chapters.json" type="application/json+chapters"/>
</item>"""
        for ep in EPISODES
    )
    return f"""<?xml version="1.0" encoding="UTF-8"?>
<rss version="2.0" xmlns:podcast="https://podcastindex.org/namespace/1.0">
<channel><title>Loopback Talks</title><link>{base}/</link><description>Talks.</description>
{items}</channel></rss>"""


def serve_round(
    site: LoopbackSite,
    n: int,
    *,
    cues: list[tuple[str, str, str, str]] = CUES,
    chapters: dict[str, Any] = CHAPTERS,
    notes: str = "First notes.",
) -> None:
    """Round ``n`` of every file: a new NOTE, JSON spacing and CSRF token, a new ETag."""
    for ep in EPISODES:
        site.serve(f"/{ep}.vtt", vtt(f"generated in round {n}", cues), etag=f'"vtt-{n}"',
                   content_type="text/vtt")  # fmt: skip
        spacing = json.dumps(chapters, indent=n or None, separators=(",", ":" + " " * (n % 2)))
        site.serve(f"/{ep}.chapters.json", spacing, etag=f'"ch-{n}"',
                   content_type="application/json+chapters")  # fmt: skip
        page = PAGE.format(ep=ep, token=f"{n:04d}-{ep}-" + "a1b2c3d4" * 8, notes=notes)
        site.serve(f"/{ep}", page, etag=f'"page-{n}"', content_type="text/html; charset=utf-8")


@pytest.fixture
def podcast(site: LoopbackSite) -> LoopbackSite:
    site.serve("/feed.xml", feed_xml(site.url("")), etag='"feed-1"')
    serve_round(site, 0)
    return site


def run(podcast: LoopbackSite, db: Path, *extra: str) -> None:
    args = ["run", podcast.url("/feed.xml"), "--db", str(db), "--allow-private-hosts", *extra]
    result = CliRunner().invoke(cli, args, catch_exceptions=False)
    assert (result.exit_code, result.stderr) == (0, "")


def rows(db: Path, sql: str) -> list[tuple[Any, ...]]:
    with closing(sqlite3.connect(db)) as conn:
        return conn.execute(sql).fetchall()


COUNTS = {
    "transcript bodies": "SELECT count(*) FROM documents WHERE kind = 'transcript'",
    "chapters bodies": "SELECT count(*) FROM documents WHERE kind = 'chapters'",
    "page bodies": "SELECT count(*) FROM documents WHERE kind = 'page'",
    "page_bodies": "SELECT count(*) FROM page_bodies",
    "transcript_revisions": "SELECT count(*) FROM transcript_revisions",
    "transcript_segments": "SELECT count(*) FROM transcript_segments",
    "chapter_revisions": "SELECT count(*) FROM chapter_revisions",
    "chapters": "SELECT count(*) FROM chapters",
    "episode_revisions": "SELECT count(*) FROM episode_revisions",
    "links": "SELECT count(*) FROM links",
}


def counts(db: Path) -> dict[str, int]:
    return {name: int(rows(db, sql)[0][0]) for name, sql in COUNTS.items()}


def recheck(podcast: LoopbackSite, db: Path, n: int, **changes: Any) -> None:
    """Serve round ``n`` and re-check every page and file: each answers 200 with it."""
    serve_round(podcast, n, **changes)
    asked = len(podcast.requests)
    run(podcast, db, "--recheck-pages")
    got = {r.path for r in podcast.requests[asked:]}
    assert {f"/{ep}{suffix}" for ep in EPISODES for suffix in ("", ".vtt", ".chapters.json")} <= got


def test_bodies_changed_only_where_nothing_is_read_make_no_revision_and_keep_no_body(
    tmp_path: Path, podcast: LoopbackSite
) -> None:
    db = tmp_path / "archive.db"
    run(podcast, db)
    first = counts(db)
    assert first == {
        "transcript bodies": 1,  # both episodes serve the same bytes: one document
        "chapters bodies": 1,
        "page bodies": 2,
        "page_bodies": 2,
        "transcript_revisions": 0,
        "transcript_segments": 6,
        "chapter_revisions": 0,
        "chapters": 4,
        "episode_revisions": 0,
        "links": 4,
    }
    fetches = rows(db, "SELECT count(*) FROM fetches")[0][0]
    for n in (1, 2, 3):
        recheck(podcast, db, n)
        assert counts(db) == first, n
    # every fetch is recorded: in the fetch log, and its validators for the next re-check
    assert rows(db, "SELECT count(*) FROM fetches")[0][0] >= fetches + 3 * 6
    assert rows(db, "SELECT DISTINCT etag, status, error FROM transcripts") == [
        ('"vtt-3"', "ok", None)
    ]
    assert rows(db, "SELECT DISTINCT etag, status FROM chapter_files") == [('"ch-3"', "ok")]
    assert rows(db, "SELECT DISTINCT page_etag, page_status FROM episodes") == [('"page-3"', "ok")]
    asked = len(podcast.requests)
    run(podcast, db, "--recheck-pages")  # round 3 still served: every answer is a 304
    again = {r.path: r.headers.get("if-none-match") for r in podcast.requests[asked:]}
    assert again["/ep1.vtt"] == '"vtt-3"'
    assert again["/ep1"] == '"page-3"'
    assert counts(db) == first


def test_a_real_change_still_makes_a_revision_and_keeps_its_body(
    tmp_path: Path, podcast: LoopbackSite
) -> None:
    db = tmp_path / "archive.db"
    run(podcast, db)
    recheck(podcast, db, 1)
    first = counts(db)
    edited = [*CUES[:2], ("00:12:30.250", "00:12:35.000", "Ada", "That was the quick round.")]
    chapters = {**CHAPTERS, "chapters": [*CHAPTERS["chapters"][:1], {"startTime": 900}]}
    recheck(podcast, db, 2, cues=edited, chapters=chapters, notes="Corrected notes.")
    assert counts(db) == {
        **first,
        "transcript bodies": 2,
        "chapters bodies": 2,
        "page bodies": 4,
        "page_bodies": 4,
        "transcript_revisions": 2,  # one per episode, of 3 segments each
        "transcript_segments": 12,
        "chapter_revisions": 2,
        "chapters": 8,
        "episode_revisions": 2,
        "links": 8,
    }
    assert (
        rows(db, "SELECT text FROM transcript_segments WHERE revision_id IS NULL AND position = 2")
        == [("That was the quick round.",)] * 2
    )
    assert rows(db, "SELECT DISTINCT page_notes_text FROM episodes") == [
        ("Corrected notes. See the paper and the code.",)
    ]
    recheck(podcast, db, 3, cues=edited, chapters=chapters, notes="Corrected notes.")
    assert counts(db)["transcript_revisions"] == 2  # and the NOTE after it is none again
    assert counts(db)["page_bodies"] == 4


def page_side(db: Path) -> list[tuple[Any, ...]]:
    return rows(
        db,
        "SELECT e.guid, e.page_notes_html, e.page_version_seen_at, l.position, l.url, l.text "
        "FROM episodes e JOIN links l ON l.episode_id = e.id AND l.source = 'page' "
        "AND l.revision_id IS NULL ORDER BY e.guid, l.position",
    )


def test_reparse_rebuilds_the_page_notes_from_the_body_kept_before_the_token_changes(
    tmp_path: Path, podcast: LoopbackSite
) -> None:
    db = tmp_path / "archive.db"
    run(podcast, db)
    for n in (1, 2):
        recheck(podcast, db, n)
    before = page_side(db)
    assert len(before) == 4
    asked = len(podcast.requests)
    result = CliRunner().invoke(cli, ["reparse", "--db", str(db)], catch_exceptions=False)
    assert result.exit_code == 0, result.stderr
    assert "2 pages re-read (0 changed, 0 kept as they were)" in result.stdout
    assert page_side(db) == before
    with closing(sqlite3.connect(db)) as conn, conn:
        conn.execute(
            "UPDATE episodes SET page_notes_html = NULL, page_notes_text = NULL, "
            "page_extractor = NULL, page_version_seen_at = NULL"
        )
        conn.execute("DELETE FROM links WHERE source = 'page'")
    result = CliRunner().invoke(cli, ["reparse", "--db", str(db)], catch_exceptions=False)
    assert result.exit_code == 0, result.stderr
    assert "2 pages re-read (2 changed, 0 kept as they were)" in result.stdout
    assert page_side(db) == before
    assert len(podcast.requests) == asked  # without the network
