"""Issue #24, around the extractor: a page is read with its episode's feed notes; each page
row says how its notes were found (method, evidence, confidence); a transcript shown on the
page is a transcript (``transcripts`` row of format "page", time-coded, searchable), never
the notes; ``reparse`` re-reads the kept bodies the same way, without the network.

A loopback podcast of one episode whose page carries the feed's notes amid furniture, and a
time-coded transcript; everything goes through the command line.
"""

from __future__ import annotations

import asyncio
import json
import re
import sqlite3
from contextlib import closing
from datetime import UTC, datetime
from pathlib import Path

import pytest
from commands import invoke, query
from loopback import LoopbackSite

from podarchive.core.types import LOW_CONFIDENCE
from podarchive.read.extract import extract_page
from podarchive.store import PAGE_FORMAT, Archive
from podarchive.update.pages import pages_due
from podarchive.web.serve import make_datasette

LINES = [
    (0, "Ada", "Welcome back to Loopback Talks, where we take apart a kernel dispatcher."),
    (65, "Grace", "Today we follow one tensor from Python all the way down to the kernel."),
    (754, "Ada", "And that was the lightning round; thanks for listening to the whole thing."),
]
TRANSCRIPT = "".join(
    f"<p>[{s // 60:02d}:{s % 60:02d}] {who}: {text} {text}</p>\n" for s, who, text in LINES
)
FEED_NOTES = (
    "<p>How the dispatcher picks a kernel, from the Python call to the CUDA launch. "
    'See <a href="https://example.org/paper">the dispatcher paper</a>.</p>'
)
PAGE = f"""<!doctype html><html><head><title>Dispatch</title></head><body>
<nav><a href="/">Home</a> <a href="/about">About</a> <a href="/archive">Archive</a></nav>
<main><article><h1>Dispatch</h1>
<div class="entry">{FEED_NOTES}
<p>Extra on the page: <a href="https://example.org/code">the code</a>.</p></div>
<section class="episode-transcript"><h2>Transcript</h2>
{TRANSCRIPT}</section>
</article></main><footer>Loopback Talks · <a href="/privacy">Privacy</a></footer></body></html>"""


def feed_xml(base: str, title: str = "Dispatch") -> str:
    return f"""<?xml version="1.0" encoding="UTF-8"?>
<rss version="2.0"><channel><title>Loopback Talks</title><link>{base}/</link>
<description>Talks.</description>
<item><title>{title}</title><guid>ep1</guid><link>{base}/ep1</link>
<pubDate>Mon, 30 Nov 2026 10:00:00 GMT</pubDate>
<description><![CDATA[{FEED_NOTES}]]></description></item>
</channel></rss>"""


@pytest.fixture
def db(site: LoopbackSite, tmp_path: Path) -> Path:
    site.serve("/feed.xml", feed_xml(site.url("")), etag='"feed-1"')
    site.serve("/ep1", PAGE, content_type="text/html; charset=utf-8")
    path = tmp_path / "archive.db"
    run(site, path)
    return path


def run(site: LoopbackSite, db: Path, *extra: str) -> None:
    code, _, err = invoke(
        "run", site.url("/feed.xml"), "--db", str(db), "--allow-private-hosts", *extra
    )
    assert (code, err) == (0, "")


def page_transcript(db: Path) -> list[tuple[object, ...]]:
    return query(
        db,
        "SELECT s.start, s.speaker, s.text FROM transcript_segments s JOIN transcripts t "
        f"ON t.id = s.transcript_id WHERE t.format = '{PAGE_FORMAT}' AND s.revision_id IS NULL "
        "ORDER BY s.position",
    )


def extracted(db: Path, feed_notes: str | None) -> tuple[str, str, float]:
    """How the extractor finds the page's notes, given these feed notes (phase 1 decides)."""
    ((url,),) = query(db, "SELECT page_url FROM episodes")
    notes = extract_page(PAGE, str(url), feed_notes=feed_notes)
    return notes.method, notes.evidence, notes.confidence


def test_the_page_row_says_how_its_notes_were_found_by_the_feed_notes(db: Path) -> None:
    ((method, evidence, confidence, text),) = query(
        db, "SELECT page_method, page_evidence, page_confidence, page_notes_text FROM episodes"
    )
    assert (method, evidence, confidence) == extracted(db, FEED_NOTES)
    assert extracted(db, FEED_NOTES) != extracted(
        db, None
    )  # so the feed notes reached the extractor
    assert method
    assert evidence
    assert 0.0 <= confidence <= 1.0
    assert "How the dispatcher picks a kernel" in text
    assert "lightning round" not in text  # the transcript is not the notes


def test_an_on_page_transcript_is_a_time_coded_searchable_transcript(db: Path) -> None:
    segments = page_transcript(db)
    assert [(start, who) for start, who, _ in segments] == [(s, w) for s, w, _ in LINES]
    assert segments[1][2].startswith("Today we follow one tensor")
    ((url, status, fmt, items, due),) = query(
        db, "SELECT url, status, format, items, next_check_at FROM transcripts"
    )
    assert (url.endswith("/ep1"), status, fmt, items, due) == (True, "ok", PAGE_FORMAT, 3, None)
    found = query(
        db,
        "SELECT s.start FROM transcript_segments_fts f JOIN transcript_segments s "
        "ON s.id = f.rowid WHERE transcript_segments_fts MATCH 'tensor'",
    )
    assert found == [(65.0,)]


def test_the_feed_writing_the_episode_again_keeps_the_page_transcript_listed(
    db: Path, site: LoopbackSite
) -> None:
    site.serve("/feed.xml", feed_xml(site.url(""), title="Dispatch, revised"), etag='"feed-2"')
    run(site, db)
    assert query(db, "SELECT title FROM episodes") == [("Dispatch, revised",)]
    assert query(db, "SELECT unlisted_at FROM transcripts") == [(None,)]
    assert len(page_transcript(db)) == 3


def test_a_recheck_with_the_same_transcript_makes_no_revision(db: Path, site: LoopbackSite) -> None:
    site.serve("/ep1", PAGE.replace("Privacy", "Your privacy"), content_type="text/html")
    run(site, db, "--recheck-pages")
    assert query(db, "SELECT count(*) FROM transcript_revisions") == [(0,)]
    assert len(page_transcript(db)) == 3


def test_a_changed_transcript_keeps_the_earlier_one_as_a_revision(
    db: Path, site: LoopbackSite
) -> None:
    site.serve("/ep1", PAGE.replace("lightning round", "speed round"), content_type="text/html")
    run(site, db, "--recheck-pages")
    assert query(db, "SELECT format, items FROM transcript_revisions") == [(PAGE_FORMAT, 3)]
    how = "SELECT page_method, page_evidence, page_confidence FROM episodes"
    assert query(db, how) == [extracted(db, FEED_NOTES)]  # re-checked with the feed notes too
    assert "speed round" in str(page_transcript(db)[2][2])


def test_reparse_rebuilds_how_and_the_transcript_without_the_network(
    db: Path, site: LoopbackSite
) -> None:
    how = "SELECT page_method, page_evidence, page_confidence FROM episodes"
    expected = query(db, how), page_transcript(db)
    with closing(sqlite3.connect(db)) as conn, conn:  # as a page read before schema 13 is
        conn.execute(
            "UPDATE episodes SET page_method = NULL, page_evidence = NULL, page_confidence = NULL"
        )
        conn.execute("DELETE FROM transcript_segments")
        conn.execute("DELETE FROM transcripts")
    asked = len(site.requests)
    code, out, err = invoke("reparse", "--db", str(db))
    assert (code, err, len(site.requests)) == (0, "", asked)
    assert "1 page re-read (1 changed" in out
    assert (query(db, how), page_transcript(db)) == expected


def test_status_counts_the_pages_whose_notes_were_low_confidence(db: Path) -> None:
    code, out, _ = invoke("status", "--json", "--db", str(db))
    assert (code, [f["pages_low_confidence"] for f in json.loads(out)["feeds"]]) == (0, [0])
    assert "low confidence" not in invoke("status", "--db", str(db))[1]
    with closing(sqlite3.connect(db)) as conn, conn:  # as the extractor rated a poor page
        conn.execute(f"UPDATE episodes SET page_confidence = {LOW_CONFIDENCE - 0.01}")
    code, out, _ = invoke("status", "--json", "--db", str(db))
    assert (code, [f["pages_low_confidence"] for f in json.loads(out)["feeds"]]) == (0, [1])
    lines = [line for line in invoke("status", "--db", str(db))[1].splitlines() if "low" in line]
    assert lines == [
        "low confidence: Loopback Talks: 1 page whose notes were found with a confidence "
        "below 0.5 (episodes.page_evidence says why)"
    ]


def episode_page(db: Path) -> str:
    async def fetch() -> str:
        response = await make_datasette(db).client.get("/archive/episodes/1")
        assert response.status_code == 200
        return str(response.text)

    return asyncio.run(fetch())


def test_the_episode_page_shows_how_the_page_notes_were_found(db: Path) -> None:
    with closing(sqlite3.connect(db)) as conn, conn:  # hostile evidence is shown as text
        conn.execute("UPDATE episodes SET page_evidence = '<b>matched</b> 41 of 41 words'")
    html = episode_page(db)
    section = html[html.index('id="page-notes"') :]
    (how,) = re.findall(r'<p class="archive-aside page-how">(.*?)</p>', section)
    method, _, confidence = extracted(db, FEED_NOTES)
    assert how == (
        f"Found by <code>{method}</code>: &lt;b&gt;matched&lt;/b&gt; 41 of 41 words "
        f"(confidence {confidence:.2f})."
    )
    with closing(sqlite3.connect(db)) as conn, conn:
        conn.execute("UPDATE episodes SET page_confidence = 0.25")
    assert "(confidence 0.25, low)." in episode_page(db)
    # the feed's file transcripts come first; the page's own one is shown when it is the only
    assert "Today we follow one tensor" in html


def test_every_page_task_carries_its_episodes_feed_notes(db: Path) -> None:
    """New, failed and re-checked pages (run) and backfill's: the extractor gets the notes."""
    now = datetime(2026, 12, 5, tzinfo=UTC)
    with Archive(db) as archive:
        (recheck,) = pages_due(archive, 1, now, everything=True)
        assert (recheck.status, recheck.feed_notes) == ("ok", FEED_NOTES)
        archive.db.execute("UPDATE episodes SET page_status = 'failed', page_attempts = 1")
        (fresh,) = pages_due(archive, 1, now, failed_now=True)
        assert (fresh.status, fresh.feed_notes) == ("failed", FEED_NOTES)
        ((backfill, key),) = archive.backfill_page_tasks(1, None)
        assert (key, backfill.feed_notes) == ("guid:ep1", FEED_NOTES)


def test_page_notes_like_the_feeds_still_say_how_they_were_found(db: Path) -> None:
    with closing(sqlite3.connect(db)) as conn, conn:  # the page shows just the feed's notes
        conn.execute("UPDATE episodes SET page_notes_text = notes_text, page_notes_html = NULL")
    html = episode_page(db)
    assert 'id="page-notes"' not in html
    method = query(db, "SELECT page_method FROM episodes")[0][0]
    notes = html[html.index('id="notes"') :]
    assert f"web page shows the same notes, found by <code>{method}</code>" in notes
