"""The words of ``backfill``, ``reparse`` and ``check``, from their reports alone (no click,
no network, no archive but a sound one made here)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from podarchive.core.types import SaveStats
from podarchive.store import Archive, Problem
from podarchive.tasks.archive_check import CheckReport, advice, check, check_lines
from podarchive.tasks.backfill import BackfillReport, FeedBackfill
from podarchive.tasks.backfill_summary import (
    EXIT_FAILED,
    EXIT_STOPPED,
    ending,
    feed_lines,
    summary_lines,
)
from podarchive.tasks.reparse import ReparseReport, report_line, skipped_lines


def feed(**counts: object) -> FeedBackfill:
    f = FeedBackfill("https://example.com/feed.xml", "Example")
    for name, value in counts.items():
        setattr(f, name, value)
    return f


def test_a_backfill_that_fetched_pages_and_files() -> None:
    f = feed(
        feed_episodes=3, archive_new=9, documents_fetched=2, documents_done_before=1,
        pages_ok=5, pages_empty=1, pages_failed=1, pages_left=2,
        files_ok=2, files_failed=1, requests=12,
        failures=[("https://example.com/e/1", "HTTP 404\nNot Found")],
    )  # fmt: skip
    assert summary_lines(BackfillReport([f])) == [
        "Example:",
        "  episodes: 3 in the feed, 9 new from 2 archive/paged documents fetched (1 done before)",
        "  pages: fetched 7 (5 ok, 1 without notes, 1 failed), 2 left",
        "  transcripts and chapters: fetched 3 (2 read, 1 failed)",
        "  failure: https://example.com/e/1: HTTP 404 Not Found",
        "12 requests",
    ]
    assert ending(BackfillReport([f])) == ([], 0)


def test_lines_left_out_when_there_is_nothing_to_say() -> None:
    lines = feed_lines(feed(feed_episodes=1, documents_fetched=1), dry_run=False)
    assert lines == [
        "Example:",
        "  episodes: 1 in the feed, 0 new from 1 archive/paged document fetched",
        "  pages: fetched 0 (0 ok, 0 without notes, 0 failed)",
    ]


def test_site_and_files_left() -> None:
    lines = feed_lines(feed(site_found=4, site_matched=3, site_new=1, files_left=2), dry_run=False)
    assert "  site: 4 episode pages found, 3 in the feed, 1 new" in lines
    assert "  transcripts and chapters: fetched 0 (0 read, 0 failed), 2 left" in lines


def test_a_dry_run_lists_what_it_would_fetch() -> None:
    f = feed(
        would_fetch=["https://example.com/e/1", "https://example.com/e/2"],
        would_fetch_files=["https://example.com/t/1.vtt"],
        requests=3,
    )
    lines = summary_lines(BackfillReport([f], dry_run=True))
    assert lines[2:] == [
        "  would fetch https://example.com/e/1",
        "  would fetch https://example.com/e/2",
        "  would fetch https://example.com/t/1.vtt",
        "  pages: would fetch 2",
        "  transcripts and chapters: would fetch 1",
        "dry run: 3 requests made for the feed documents; 3 more requests for episode pages, "
        "transcripts and chapters; nothing written",
    ]
    assert not any(line.startswith("  pages: fetched") for line in lines)


def test_a_dry_run_without_files_says_none_of_them() -> None:
    lines = feed_lines(feed(), dry_run=True)
    assert lines[-1] == "  pages: would fetch 0"
    assert summary_lines(BackfillReport([], dry_run=True))[-1].startswith(
        "dry run: 0 requests made for the feed documents; 0 more requests"
    )


def test_a_url_from_a_feed_starts_no_line_of_its_own() -> None:
    f = feed(failures=[("https://example.com/e/1\nforged: line", "refused\nforged: too")])
    lines = feed_lines(f, dry_run=False)
    assert not any("\n" in line for line in lines)
    assert lines[-1].startswith("  failure: https://example.com/e/1")


def test_ending_a_failed_and_a_stopped_backfill() -> None:
    failed = feed(error="HTTP 500\r\nserver error")
    lines, code = ending(BackfillReport([failed, feed()]))
    assert (lines, code) == (["podarchive: Example: HTTP 500 server error"], EXIT_FAILED)
    assert summary_lines(BackfillReport([failed]))[1] == "  failed: HTTP 500 server error"
    stopped = BackfillReport([failed], stopped=True)
    assert ending(stopped) == (
        ["podarchive: interrupted; run backfill again to continue"],
        EXIT_STOPPED,
    )


def test_reparse_lines() -> None:
    r = ReparseReport("https://example.com/feed.xml", "Example", bodies=1, pages=2)
    r.stats = SaveStats(new=1)
    r.skipped = ["2026-01-01T00:00:00Z: not a feed"]
    assert report_line(r) == (
        "Example: 1 body replayed; 1 new, 0 changed, 0 unchanged episode; "
        "2 pages re-read (0 changed, 0 kept as they were)"
    )
    assert skipped_lines(r) == [
        "podarchive: Example: skipped a body seen 2026-01-01T00:00:00Z: not a feed"
    ]
    empty = ReparseReport("https://example.com/feed.xml", "Example")
    assert "0 bodies replayed; 0 new, 0 changed, 0 unchanged episodes" in report_line(empty)
    assert skipped_lines(empty) == []


def test_check_lines_for_a_sound_and_a_damaged_archive() -> None:
    db = Path("archive.db")
    sound = CheckReport(db, ["episodes_fts"], [])
    assert check_lines(sound) == [
        "archive.db: sound (integrity_check, foreign_key_check, episodes_fts integrity-check)"
    ]
    index = CheckReport(db, ["episodes_fts"], [Problem("episodes_fts", "malformed")])
    assert check_lines(index) == [
        "archive.db: DAMAGED, 1 problem",
        "  episodes_fts: malformed",
        "what to do: only the full-text index is damaged; rebuild it from the episodes:",
        "  podarchive check --repair-fts --db archive.db",
    ]
    both = [Problem("integrity_check", "page 3"), Problem("episodes_fts", "malformed")]
    refused = CheckReport(db, ["episodes_fts"], both, refused=True)
    lines = check_lines(refused)
    assert lines[:2] == [
        "archive.db: not rebuilding the full-text index of a damaged archive",
        "archive.db: DAMAGED, 2 problems",
    ]
    assert lines[4].startswith("what to do: restore archive.db from a backup")


def test_advice_after_a_repair_that_left_the_index_damaged() -> None:
    problems = [Problem("episodes_fts", "still malformed")]
    assert advice(Path("a.db"), problems, repaired=True) == []
    assert advice(Path("a.db"), problems, repaired=False)[0].startswith("what to do: only")


def test_check_a_sound_archive_repairs_nothing(tmp_path: Path) -> None:
    db = tmp_path / "archive.db"
    Archive(db).close()
    rebuilt: list[str] = []
    report = check(db, repair_fts=True, on_rebuilt=rebuilt.append)
    assert report.sound
    assert report.tables
    assert not report.rebuilt
    assert not report.refused
    assert rebuilt == []
    with sqlite3.connect(db) as conn:  # check changed nothing it could see
        assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
