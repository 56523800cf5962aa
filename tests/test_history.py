"""The archive forgets nothing: revisions, guid churn, removals, snapshots, reparse."""

from __future__ import annotations

import re
import sqlite3
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from loopback import LoopbackSite, Reply

from podarchive.core.settings import Settings
from podarchive.read.schedule_files import FeedSchedule
from podarchive.store import Archive
from podarchive.tasks.reparse import reparse
from podarchive.update.run import update_feeds

SETTINGS = Settings(host_gap=0, retry_base=0.01, allow_private_hosts=True)
ITEM = re.compile(rb"<item>.*?</item>", re.S)


class Clock:
    def __init__(self) -> None:
        self.now = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)

    def __call__(self) -> datetime:
        return self.now


def run(db: Path, url: str, clock: Clock) -> None:
    with Archive(db) as archive:
        report = update_feeds(
            archive, [FeedSchedule(url=url, name="PyTorch")], settings=SETTINGS, clock=clock
        )
    assert not report.failed
    clock.now += timedelta(hours=1)


def items(body: bytes) -> list[bytes]:
    return ITEM.findall(body)


def item_of(body: bytes, title: str) -> bytes:
    (found,) = [i for i in items(body) if f"<title>{title}</title>".encode() in i]
    return found


def rows(db: Path, sql: str, *params: Any) -> list[tuple[Any, ...]]:
    conn = sqlite3.connect(db)
    try:
        return conn.execute(sql, params).fetchall()
    finally:
        conn.close()


def keyed_dump(db: Path) -> dict[str, Any]:
    """The archive by natural keys (episode key, revision time), not by row ids."""
    conn = sqlite3.connect(db)
    conn.row_factory = sqlite3.Row

    def select(sql: str) -> list[dict[str, Any]]:
        return [dict(r) for r in conn.execute(sql)]

    try:
        return {
            "feeds": select("SELECT * FROM feeds"),
            "feed_revisions": select(
                "SELECT feed_id, seen_from, seen_until, changed, title, author, image, description FROM feed_revisions ORDER BY seen_until"
            ),
            "episodes": sorted(
                (
                    {k: v for k, v in r.items() if k not in ("id", "page_document_id")}
                    for r in select(
                        "SELECT e.*, d.hash AS page_document FROM episodes e "
                        "LEFT JOIN documents d ON d.id = e.page_document_id"
                    )
                ),
                key=lambda r: r["key"],
            ),
            "revisions": sorted(
                (
                    {k: v for k, v in r.items() if k not in ("id", "episode_id")}
                    for r in select(
                        "SELECT e.key AS ekey, r.* FROM episode_revisions r JOIN episodes e ON e.id = r.episode_id"
                    )
                ),
                key=lambda r: (r["ekey"], r["source"], r["seen_until"]),
            ),
            "links": sorted(
                (tuple("" if v is None else str(v) for v in r.values()))
                for r in select(
                    "SELECT e.key, l.source, r.seen_until, l.position, l.url, l.normalized_url, l.domain, l.text "
                    "FROM links l JOIN episodes e ON e.id = l.episode_id LEFT JOIN episode_revisions r ON r.id = l.revision_id"
                )
            ),
            # schema 8: what episodes point to, by episode key, URL and body hash
            "page_bodies": sorted(
                tuple(r.values())
                for r in select(
                    "SELECT e.key, b.seen_at, d.hash FROM page_bodies b "
                    "JOIN episodes e ON e.id = b.episode_id JOIN documents d ON d.id = b.document_id"
                )
            ),
            "files": sorted(
                (tuple("" if v is None else str(v) for v in r.values()))
                for table in ("transcripts", "chapter_files")
                for r in select(
                    f"SELECT '{table}', e.key, f.url, f.position, f.type, f.status, f.error, "
                    "f.format, f.items, f.warnings, d.hash, f.etag, f.last_modified, f.fetched_at, "
                    "f.attempts, f.failures, f.next_check_at, f.version_seen_at, f.first_seen_at, "
                    f"f.unlisted_at FROM {table} f JOIN episodes e ON e.id = f.episode_id "
                    "LEFT JOIN documents d ON d.id = f.document_id"
                )
            ),
            "segments": sorted(
                (tuple("" if v is None else str(v) for v in r.values()))
                for r in select(
                    "SELECT e.key, t.url, r.seen_until, s.position, s.start, s.end, s.speaker, "
                    "s.text FROM transcript_segments s JOIN episodes e ON e.id = s.episode_id "
                    "JOIN transcripts t ON t.id = s.transcript_id "
                    "LEFT JOIN transcript_revisions r ON r.id = s.revision_id"
                )
            ),
            "chapters": sorted(
                (tuple("" if v is None else str(v) for v in r.values()))
                for r in select(
                    "SELECT e.key, c.source, f.url, r.seen_until, c.position, c.start, c.end, "
                    "c.title, c.url, c.image, c.toc FROM chapters c "
                    "JOIN episodes e ON e.id = c.episode_id "
                    "LEFT JOIN chapter_files f ON f.id = c.chapter_file_id "
                    "LEFT JOIN chapter_revisions r ON r.id = c.revision_id"
                )
            ),
        }
    finally:
        conn.close()


@pytest.fixture
def history_db(tmp_path: Path, site: LoopbackSite, pytorch_feed: str) -> tuple[Path, Reply, Clock]:
    """Three runs over a feed that changes in every way a publisher changes things."""
    db, clock = tmp_path / "archive.db", Clock()
    reply = site.routes["/pytorch/feed.xml"]
    assert isinstance(reply, Reply)
    original = reply.body
    run(db, pytorch_feed, clock)

    changed = original
    strides = item_of(changed, "Strides")
    changed = changed.replace(
        strides,
        strides.replace(b"so let's talk about strides", b"so let us talk about strides, at length"),
    )
    new_ci = item_of(changed, "New CI")
    changed = changed.replace(
        new_ci, new_ci.replace(b"<title>New CI</title>", b"<title>New CI (GitHub Actions)</title>")
    )
    aot = item_of(changed, "AOTAutograd")
    changed = changed.replace(
        aot,
        re.sub(rb'(<enclosure[^>]*?)url="[^"]+"', rb'\1url="https://cdn.example/aot-v2.mp3"', aot),
    )
    exceptions = item_of(changed, "Python exceptions")
    changed = changed.replace(
        exceptions,
        re.sub(
            rb"<guid([^>]*)>[^<]+</guid>", rb"<guid\1>new-guid-for-exceptions</guid>", exceptions
        ),
    )
    changed = changed.replace(
        item_of(changed, "Torch vs ATen APIs"), b""
    )  # from the middle: removed
    changed = changed.replace(
        item_of(changed, "Tensor subclasses and Liskov substitution principle"), b""
    )  # the oldest: truncated
    changed = changed.replace(
        b"<title>PyTorch Developer Podcast</title>",
        b"<title>The PyTorch Developer Podcast</title>",
        1,
    )
    reply.body, reply.etag = changed, '"v2"'
    page = site.routes["/pytorch/episodes/strides"]
    assert isinstance(page, Reply)
    page.body, page.etag = (
        page.body.replace(
            b"so let's talk about strides", b"so let us talk about strides, at length"
        ),
        '"p2"',
    )
    run(db, pytorch_feed, clock)

    back = changed.replace(b"</channel>", item_of(original, "Torch vs ATen APIs") + b"</channel>")
    reply.body, reply.etag = back, '"v3"'
    run(db, pytorch_feed, clock)
    return db, reply, clock


def test_changes_become_revisions_and_nothing_is_duplicated(
    history_db: tuple[Path, Reply, Clock],
) -> None:
    db, _, _ = history_db
    assert rows(db, "SELECT count(*) FROM episodes") == [(9,)]  # the new guid is the same episode
    revisions = rows(
        db,
        "SELECT e.title, r.source, r.changed, r.title, r.guid, r.seen_from, r.seen_until FROM episode_revisions r "
        "JOIN episodes e ON e.id = r.episode_id ORDER BY e.title, r.source",
    )
    by_title = {(r[0], r[1]): r for r in revisions}
    assert by_title[("New CI (GitHub Actions)", "feed")][2:4] == ("title", "New CI")
    assert by_title[("AOTAutograd", "feed")][2] == "enclosure"
    assert by_title[("Python exceptions", "feed")][2] == "guid"
    assert by_title[("Python exceptions", "feed")][4] != "new-guid-for-exceptions"
    assert by_title[("Strides", "feed")][2] == "notes"
    assert by_title[("Strides", "page")][2] == "page_notes"
    assert by_title[("Strides", "feed")][5:] == ("2026-12-01T09:00:00Z", "2026-12-01T10:00:00Z")
    (current,) = rows(
        db, "SELECT notes_text, page_notes_text, guid FROM episodes WHERE title = 'Strides'"
    )
    assert "at length" in current[0]
    assert "at length" in current[1]
    (old,) = rows(
        db,
        "SELECT r.notes_text, r.page_notes_text FROM episode_revisions r JOIN episodes e ON e.id = r.episode_id WHERE e.title = 'Strides' AND r.source = 'feed'",
    )
    assert "at length" not in old[0]
    # the links of the earlier notes stay, marked to their revision
    assert rows(
        db,
        "SELECT count(*) FROM links l JOIN episodes e ON e.id = l.episode_id WHERE e.title = 'Strides' AND l.revision_id IS NOT NULL AND l.source = 'feed'",
    ) == [(2,)]
    assert rows(db, "SELECT changed, title FROM feed_revisions") == [
        ("title", "PyTorch Developer Podcast")
    ]
    assert rows(db, "SELECT title FROM feeds") == [("The PyTorch Developer Podcast",)]


def test_removed_unlisted_and_returned_episodes(history_db: tuple[Path, Reply, Clock]) -> None:
    db, _, _ = history_db
    marks = dict(
        (r[0], r[1:])
        for r in rows(
            db,
            "SELECT title, removed_from_feed_at, unlisted_at FROM episodes WHERE removed_from_feed_at IS NOT NULL OR unlisted_at IS NOT NULL",
        )
    )
    assert marks == {
        "Tensor subclasses and Liskov substitution principle": (None, "2026-12-01T10:00:00Z")
    }
    # "Torch vs ATen APIs" was removed from the middle on the second run and came back on the third
    assert rows(
        db, "SELECT removed_from_feed_at FROM episodes WHERE title = 'Torch vs ATen APIs'"
    ) == [(None,)]


def test_snapshots_keep_each_distinct_body_once(
    history_db: tuple[Path, Reply, Clock], site: LoopbackSite
) -> None:
    db, reply, clock = history_db
    assert rows(db, "SELECT count(*) FROM snapshots") == [(3,)]
    assert rows(db, "SELECT count(*) FROM feed_bodies") == [(3,)]
    (size, stored) = rows(db, "SELECT sum(size), sum(length(body)) FROM snapshots")[0]
    assert stored < size / 2  # compressed
    reply.etag = None  # the same body again, without validators: no new snapshot
    run(db, site.url("/pytorch/feed.xml"), clock)
    assert rows(db, "SELECT count(*) FROM feed_bodies") == [(3,)]


def test_reparse_gives_the_same_archive(history_db: tuple[Path, Reply, Clock]) -> None:
    db, _, _ = history_db
    before = keyed_dump(db)
    with Archive(db) as archive:
        (report,) = reparse(archive)
    assert report.bodies == 3
    assert report.skipped == []
    assert keyed_dump(db) == before


def test_reparse_without_the_network_applies_a_parser_change(
    history_db: tuple[Path, Reply, Clock], monkeypatch: pytest.MonkeyPatch
) -> None:
    db, _, _ = history_db
    import podarchive.tasks.reparse as reparse_module
    from podarchive.read.rows import episode_writes as real_writes

    def shouting(parsed: Any, base: str) -> Any:
        writes, dup = real_writes(parsed, base)
        for w in writes:
            w.row["title"] = (w.row["title"] or "").upper()
        return writes, dup

    monkeypatch.setattr(reparse_module, "episode_writes", shouting)
    with Archive(db) as archive:
        reparse(archive, ["PyTorch"])
    assert ("STRIDES",) in rows(db, "SELECT title FROM episodes")
    assert rows(db, "SELECT count(*) FROM episodes") == [(9,)]
    assert rows(db, "SELECT count(*) FROM episodes WHERE page_notes_text IS NOT NULL") == [(9,)]


def test_complete_feed_is_proof_of_removal(tmp_path: Path, site: LoopbackSite) -> None:
    def feed(*guids: str, complete: bool) -> bytes:
        mark = "<fh:complete/>" if complete else ""
        body = "".join(
            f"<item><guid>{g}</guid><title>{g}</title><pubDate>Mon, 0{i + 1} Jun 2022 10:00:00 GMT</pubDate></item>"
            for i, g in enumerate(guids)
        )
        return f'<rss version="2.0" xmlns:fh="http://purl.org/syndication/history/1.0"><channel><title>T</title>{mark}{body}</channel></rss>'.encode()

    site.serve("/f.xml", feed("a", "b", "c", complete=True))
    db, clock = tmp_path / "a.db", Clock()
    run(db, site.url("/f.xml"), clock)
    site.serve(
        "/f.xml", feed("b", "c", complete=True)
    )  # "a" is the oldest, yet the feed is complete
    run(db, site.url("/f.xml"), clock)
    assert rows(
        db,
        "SELECT guid, removed_from_feed_at IS NOT NULL, unlisted_at IS NOT NULL FROM episodes ORDER BY guid",
    ) == [
        ("a", 1, 0),
        ("b", 0, 0),
        ("c", 0, 0),
    ]


def test_reparse_command(history_db: tuple[Path, Reply, Clock]) -> None:
    import subprocess
    import sys

    db, _, _ = history_db
    before = keyed_dump(db)
    result = subprocess.run(
        [sys.executable, "-m", "podarchive", "reparse", "PyTorch", "--db", str(db)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout == (
        "PyTorch: 3 bodies replayed; 0 new, 0 changed, 9 unchanged episodes; "
        "9 pages re-read (0 changed, 0 kept as they were)\n"
    )
    assert keyed_dump(db) == before
    bad = subprocess.run(
        [sys.executable, "-m", "podarchive", "reparse", "Nope", "--db", str(db)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert bad.returncode == 2
    assert bad.stderr == "podarchive: error: no such feed in the archive: Nope\n"
