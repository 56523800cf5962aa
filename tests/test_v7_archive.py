"""The v7 fixture and migration 8 (issue #12) on it: what an archive of schema 7 keeps and gains.

`tests/fixtures/archives/v7.sqlite` was made by the script in tests/fixtures/README.md (the v6
one, asserting schema 7) run against the code of the commit that added it. Opening it must
keep every row and end with the schema a fresh archive has. Migration 8 (``_archive_around_v8``)
must keep every old column value, give each archived page its first re-check from the age rule,
list every transcript and chapters file the episodes name as a pending file, keep the episodes'
full-text index and its triggers, and leave an archive the new pipeline writes to: the feed
saved again unchanged rewrites no episode, and the listed files and archived pages are due.

The tests of migration 8 alone stop there (a later migration may change rows and schema); those
of the pipeline's paths run every migration.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
from collections.abc import Iterator
from contextlib import closing, contextmanager
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from test_covering_indexes_migration import current_writes, meta

from podarchive.core.clock import iso, parse_iso
from podarchive.core.types import FileTask, KeptBody
from podarchive.read.chapter_formats import parse_chapters_json
from podarchive.read.transcript_formats import parse_transcript
from podarchive.store import (
    APPLICATION_ID,
    FTS_UPDATE_TRIGGER,
    SCHEMA_VERSION,
    Archive,
    FeedSave,
)
from podarchive.store import base as store_base

V7 = Path(__file__).parent / "fixtures" / "archives" / "v7.sqlite"
# after every stamp the fixture holds (its runs were at 2026-12-01..04 09:00Z): "now" at the
# upgrade, when every file the migration lists must be due
NOW = "2026-12-05T09:00:00Z"
FAR_FUTURE = "2100-01-01T00:00:00Z"
NEW_EPISODE_COLUMNS = ("simple_chapters", "page_document_id", "page_failures", "page_recheck_at")
NEW_TABLES = {
    "documents",
    "page_bodies",
    "transcripts",
    "chapter_files",
    "transcript_revisions",
    "chapter_revisions",
    "transcript_segments",
    "chapters",
    "transcript_segments_fts",
    "chapters_fts",
}  # fmt: skip  -- and the FTS tables' shadow tables
NEW_FTS = ("transcript_segments_fts", "chapters_fts")
DAY, WEEK, MONTH = timedelta(days=1), timedelta(days=7), timedelta(days=30)
SECOND = timedelta(seconds=1)
FILE_COLUMNS = {"transcripts": ("type", "language", "rel"), "chapter_files": ("type",)}
LISTS = {"transcripts": "transcripts", "chapter_files": "chapters"}  # table → episode column


def every_row(conn: sqlite3.Connection) -> dict[str, list[tuple[Any, ...]]]:
    """Every row of every table (FTS shadow tables too), in a stable order."""
    tables = [
        name
        for (name,) in conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name != 'episodes_fts'"
        )
    ]
    return {t: sorted(conn.execute(f"SELECT * FROM [{t}]").fetchall(), key=repr) for t in tables}


def schema(conn: sqlite3.Connection) -> set[tuple[str, str, str | None]]:
    return set(conn.execute("SELECT type, name, sql FROM sqlite_master"))


def columns(conn: sqlite3.Connection, table: str) -> list[str]:
    return [r[1] for r in conn.execute(f"PRAGMA table_info([{table}])")]


def all_tables(conn: sqlite3.Connection) -> set[str]:
    return {name for (name,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}


def stored_tables(conn: sqlite3.Connection) -> dict[str, bool]:
    """The tables with rows of their own (not the FTS virtual tables): name → has a rowid."""
    return {
        name: "WITHOUT ROWID" not in sql
        for name, sql in conn.execute(
            "SELECT name, sql FROM sqlite_master WHERE type = 'table' "
            "AND sql NOT LIKE 'CREATE VIRTUAL TABLE%'"
        )
    }


def rows_of(
    conn: sqlite3.Connection, table: str, cols: list[str], rowid: bool
) -> list[tuple[Any, ...]]:
    """``cols`` of every row, each with its rowid when the table has one, in a stable order."""
    select = ", ".join(["rowid"] * rowid + [f"[{c}]" for c in cols])
    return sorted(conn.execute(f"SELECT {select} FROM [{table}]").fetchall(), key=repr)


def old_state(path: Path) -> dict[str, tuple[list[str], bool, list[tuple[Any, ...]]]]:
    """Every pre-migration table: its columns, whether it has a rowid, and its rows."""
    with closing(sqlite3.connect(path)) as conn:
        assert conn.execute("PRAGMA user_version").fetchone() == (7,)
        state = {}
        for table, rowid in stored_tables(conn).items():
            cols = columns(conn, table)
            state[table] = (cols, rowid, rows_of(conn, table, cols, rowid))
        return state


def episodes_by_id(path: Path) -> dict[int, dict[str, Any]]:
    with closing(sqlite3.connect(path)) as conn:
        conn.row_factory = sqlite3.Row
        return {r["id"]: dict(r) for r in conn.execute("SELECT * FROM episodes")}


def copy_v7(tmp_path: Path) -> Path:
    path = tmp_path / "archive.db"
    shutil.copy(V7, path)
    return path


@contextmanager
def migrated_to_8(path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[sqlite3.Connection]:
    """``path`` opened by the archive with migrations up to 8 only, then read with sqlite3."""
    with monkeypatch.context() as patch:
        patch.setattr(store_base, "MIGRATIONS", store_base.MIGRATIONS[:8])
        patch.setattr(store_base, "SCHEMA_VERSION", 8)
        with Archive(path) as archive:
            assert archive.schema_version == 8
    with closing(sqlite3.connect(path)) as conn:
        assert conn.execute("PRAGMA user_version").fetchone() == (8,)
        yield conn


def expected_recheck(episode: dict[str, Any]) -> str | None:
    """The first re-check of a page archived before schema 8: the age rule, no jitter."""
    if episode["page_status"] != "ok" or episode["page_fetched_at"] is None:
        return None
    fetched = parse_iso(episode["page_fetched_at"])
    born = parse_iso(episode["published"] or episode["first_seen_at"])
    assert fetched is not None
    assert born is not None
    age = fetched - born
    interval = DAY if age < WEEK else WEEK if age < MONTH else MONTH
    return iso(fetched + interval)


def listed_files(episodes: dict[int, dict[str, Any]], table: str) -> set[tuple[Any, ...]]:
    """(episode id, url, position, *the feed's attributes) of every file the episodes list."""
    out = set()
    for episode_id, episode in episodes.items():
        raw = episode[LISTS[table]]
        for position, item in enumerate(json.loads(raw) if raw else []):
            attributes = tuple(item.get(a) for a in FILE_COLUMNS[table])
            out.add((episode_id, item["url"], position, *attributes))
    return out


def pytorch(archive: Archive) -> int:
    found: int = archive.db.execute(
        "SELECT id FROM feeds WHERE name = 'PyTorch Developer Podcast'"
    ).fetchone()[0]
    return found


def fts_integrity_check(conn: sqlite3.Connection, table: str) -> None:
    conn.execute(f"INSERT INTO [{table}]([{table}]) VALUES('integrity-check')")


# --- the fixture ---------------------------------------------------------------------------


def test_the_fixture_is_what_its_readme_says() -> None:
    with closing(sqlite3.connect(f"file:{V7}?mode=ro", uri=True)) as conn:
        assert conn.execute("PRAGMA user_version").fetchone() == (7,)
        assert conn.execute("PRAGMA application_id").fetchone() == (APPLICATION_ID,)
        assert conn.execute("PRAGMA journal_mode").fetchone() == ("delete",)
        counts = {t: n for t, n in ((t, len(r)) for t, r in every_row(conn).items())}
        (latest,) = conn.execute(
            "SELECT max(max(started_at), (SELECT max(max(first_seen_at), max(page_fetched_at)) "
            "FROM episodes)) FROM fetches"
        ).fetchone()
        episodes = dict(
            conn.execute("SELECT id, transcripts IS NOT NULL OR chapters IS NOT NULL FROM episodes")
        )
    assert counts["feeds"] == 2
    assert counts["episodes"] == 9
    assert counts["episode_revisions"] >= 1  # "Strides (revised)"
    assert counts["snapshots"] >= 3  # one of them a delta
    assert counts["links"] > 0
    assert counts["fetches"] > 0
    assert latest < NOW
    assert sum(episodes.values()) == 2  # two episodes list transcripts and chapters


def test_a_v7_archive_opens_keeping_every_row_with_a_fresh_archive_s_schema(
    tmp_path: Path,
) -> None:
    path = copy_v7(tmp_path)
    with closing(sqlite3.connect(path)) as conn:
        before = every_row(conn)
    with Archive(path) as archive, Archive(tmp_path / "fresh.db") as fresh:
        assert archive.schema_version == SCHEMA_VERSION
        assert schema(archive.db.conn) == schema(fresh.db.conn)
        rows_after = every_row(archive.db.conn)
        assert archive.db.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
    for table, rows in before.items():  # a migration may add columns, never lose rows
        assert len(rows_after[table]) == len(rows), table


# --- migration 8 alone ---------------------------------------------------------------------


def test_migration_8_keeps_every_old_value_and_adds_empty_columns(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = copy_v7(tmp_path)
    before = old_state(path)
    with closing(sqlite3.connect(path)) as conn:
        tables_before = all_tables(conn)
    with migrated_to_8(path, monkeypatch) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
        assert conn.execute("PRAGMA foreign_key_check").fetchall() == []
        shadow = {f"{t}_{s}" for t in NEW_FTS for s in ("data", "idx", "docsize", "config")}
        assert all_tables(conn) - tables_before == NEW_TABLES | shadow
        for table, (old_columns, rowid, old_rows) in before.items():
            now_columns = columns(conn, table)
            assert now_columns[: len(old_columns)] == old_columns, table  # columns only appended
            added = tuple(now_columns[len(old_columns) :])
            assert added == (NEW_EPISODE_COLUMNS if table == "episodes" else ()), table
            # every row, FTS shadow tables too (nothing was re-indexed)
            assert rows_of(conn, table, old_columns, rowid) == old_rows, table
        new_values = conn.execute(
            "SELECT simple_chapters, page_document_id, page_failures FROM episodes"
        ).fetchall()
        assert new_values == [(None, None, 0)] * 9
        for table in NEW_TABLES - {"transcripts", "chapter_files"}:
            assert conn.execute(f"SELECT count(*) FROM [{table}]").fetchone() == (0,), table


def test_migration_8_gives_archived_pages_their_first_recheck_by_the_age_rule(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = copy_v7(tmp_path)
    old = episodes_by_id(path)
    expected = {i: expected_recheck(e) for i, e in old.items()}
    assert sum(v is not None for v in expected.values()) == 8  # every page but the 404
    assert expected[8] is None
    assert expected[1] == "2026-12-31T09:00:00Z"  # a 2022 episode: monthly from its fetch
    with migrated_to_8(path, monkeypatch) as conn:
        got = dict(conn.execute("SELECT id, page_recheck_at FROM episodes"))
    assert got == expected


def fetched_at(episode: dict[str, Any]) -> datetime:
    moment = parse_iso(episode["page_fetched_at"])
    assert moment is not None
    return moment


# episode id → (published and first_seen_at as ages at the page's fetch (None: NULL),
# page_status, whether page_fetched_at is kept, the interval expected): every branch, both bounds
AGES: dict[int, tuple[timedelta | None, timedelta, str, bool, timedelta | None]] = {
    1: (timedelta(), timedelta(), "ok", True, DAY),  # published at the fetch
    2: (WEEK - SECOND, timedelta(), "ok", True, DAY),
    3: (WEEK, timedelta(), "ok", True, WEEK),  # a week old at the fetch: weekly
    4: (MONTH - SECOND, timedelta(), "ok", True, WEEK),
    5: (MONTH, timedelta(), "ok", True, MONTH),  # 30 days old at the fetch: monthly
    6: (None, 2 * DAY, "ok", True, DAY),  # no date: the age is first_seen's
    7: (-3 * DAY, 400 * DAY, "ok", True, DAY),  # published after the fetch: age 0
    8: (400 * DAY, 400 * DAY, "empty", True, None),  # no notes: not archived
    9: (400 * DAY, 400 * DAY, "ok", False, None),  # never fetched (hand-made): nothing
}


def test_the_first_recheck_follows_every_branch_of_the_age_rule(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The fixture's episodes are all years old; here their dates are moved (before the
    migration, on the v7 copy) to cover daily, weekly, monthly and the bounds between them.
    """
    path = copy_v7(tmp_path)
    old = episodes_by_id(path)
    with closing(sqlite3.connect(path)) as conn:
        for episode_id, (published, seen, status, fetched, _) in AGES.items():
            at = fetched_at(old[episode_id])
            conn.execute(
                "UPDATE episodes SET published = ?, first_seen_at = ?, page_status = ?, "
                "page_fetched_at = ? WHERE id = ?",
                [
                    None if published is None else iso(at - published),
                    iso(at - seen),
                    status,
                    iso(at) if fetched else None,
                    episode_id,
                ],
            )
        conn.commit()
    edited = episodes_by_id(path)
    expected = {i: expected_recheck(e) for i, e in edited.items()}
    by_table = {
        i: None if interval is None else iso(fetched_at(old[i]) + interval)
        for i, (*_, interval) in AGES.items()
    }
    assert expected == by_table  # the rule as written here agrees with the table above
    with migrated_to_8(path, monkeypatch) as conn:
        got = dict(conn.execute("SELECT id, page_recheck_at FROM episodes"))
    assert got == expected


def test_migration_8_lists_every_named_file_as_pending_and_due(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = copy_v7(tmp_path)
    old = episodes_by_id(path)
    with migrated_to_8(path, monkeypatch) as conn:
        for table, attributes in FILE_COLUMNS.items():
            expected = listed_files(old, table)
            rows = conn.execute(
                f"SELECT episode_id, url, position, {', '.join(attributes)} FROM {table}"
            ).fetchall()
            assert len(rows) == len(expected)  # one row per listed file, no more
            assert set(rows) == expected, table
            state = conn.execute(
                f"SELECT episode_id, status, first_seen_at, next_check_at, attempts, failures, "
                f"fetched_at, document_id, etag, last_modified, unlisted_at, error FROM {table}"
            ).fetchall()
            for episode_id, status, first_seen, next_check, *rest in state:
                assert status == "pending"
                assert first_seen == old[episode_id]["first_seen_at"]
                assert next_check is not None
                assert next_check <= NOW  # due at the first run after the upgrade
                assert rest == [0, 0, None, None, None, None, None, None]
    assert len(listed_files(old, "transcripts")) == 4  # vtt and srt, twice
    assert {r[3] for r in listed_files(old, "transcripts")} == {"text/vtt", "application/srt"}
    assert {r[5] for r in listed_files(old, "transcripts")} == {None, "captions"}
    assert len(listed_files(old, "chapter_files")) == 2


def test_migration_8_keeps_the_episodes_full_text_index_and_adds_two(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = copy_v7(tmp_path)
    with closing(sqlite3.connect(path)) as conn:
        triggers = set(conn.execute("SELECT name, sql FROM sqlite_master WHERE type = 'trigger'"))
    assert {name for name, _ in triggers} == {"episodes_ai", "episodes_ad", "episodes_au"}
    assert ("episodes_au", FTS_UPDATE_TRIGGER) in triggers
    with migrated_to_8(path, monkeypatch) as conn:
        after = set(conn.execute("SELECT name, sql FROM sqlite_master WHERE type = 'trigger'"))
        assert triggers <= after  # the episodes' triggers, unchanged
        assert {name for name, _ in after - triggers} == {
            f"{t}_{op}" for t in ("transcript_segments", "chapters") for op in ("ai", "ad", "au")
        }
        for table in ("episodes_fts", "transcript_segments_fts", "chapters_fts"):
            fts_integrity_check(conn, table)

        def found(word: str) -> list[int]:
            return [
                r[0]
                for r in conn.execute(
                    "SELECT rowid FROM episodes_fts WHERE episodes_fts MATCH ? ORDER BY rowid",
                    [word],
                )
            ]

        assert found("liskov") == [9]
        assert found("strides") == [2]
        conn.execute("UPDATE episodes SET title = 'Zanzibar quokkas' WHERE id = 2")
        assert found("zanzibar") == [2]
        assert found("title:strides") == []  # the old title left the index
        # a bookkeeping column does not re-index (schema 6's trigger), a new one neither
        conn.execute("UPDATE episodes SET page_recheck_at = ?, page_failures = 1", [NOW])
        assert found("quokka") == [2]  # porter stemming
        conn.execute("DELETE FROM links WHERE episode_id = 2")
        conn.execute("DELETE FROM episode_revisions WHERE episode_id = 2")
        conn.execute("DELETE FROM fetches WHERE episode_id = 2")
        for table in ("transcripts", "chapter_files"):
            conn.execute(f"DELETE FROM {table} WHERE episode_id = 2")
        conn.execute("DELETE FROM episodes WHERE id = 2")
        assert found("zanzibar") == []
        fts_integrity_check(conn, "episodes_fts")
        conn.commit()


# --- the pipeline's paths on a migrated archive --------------------------------------------


def test_the_feed_saved_again_unchanged_rewrites_no_episode(tmp_path: Path) -> None:
    """Rows stored before schema 8 hash the same: ``simple_chapters`` is only in the rows of
    items with Podlove chapters, and the fixture's feed has none.
    """
    path = copy_v7(tmp_path)
    with Archive(path) as archive:
        feed = pytorch(archive)
        writes = current_writes(archive, feed)
        assert len(writes) == 7  # two of the nine are no longer listed
        assert all("simple_chapters" not in w.row for w in writes)
        before = every_row(archive.db.conn)
        stats = archive.save_feed(FeedSave(
            feed, meta(archive, feed), writes, status=200, etag=None, last_modified=None,
            content_hash="x", now=NOW, records=(),
        ))  # fmt: skip
        assert (stats.new, stats.changed, stats.unchanged) == (0, 0, 7)
        after = every_row(archive.db.conn)
        fts_integrity_check(archive.db.conn, "episodes_fts")
    for table in ("episodes", "episode_revisions", "links", "transcripts", "chapter_files",
                  "episodes_fts_data", "episodes_fts_docsize"):  # fmt: skip
        assert after[table] == before[table], table


def test_the_listed_files_are_due_file_tasks(tmp_path: Path) -> None:
    path = copy_v7(tmp_path)
    old = episodes_by_id(path)
    with Archive(path) as archive:
        feed = pytorch(archive)
        tasks = archive.files_to_fetch(feed, NOW, ["transcript", "chapters"])
        assert all(isinstance(t, FileTask) for t in tasks)
        expected = [
            (kind, episode_id, url, attributes[0])
            for kind, table in (("transcript", "transcripts"), ("chapters", "chapter_files"))
            for episode_id, url, _, *attributes in sorted(
                listed_files(old, table), key=lambda r: (r[0], r[2])
            )
        ]
        assert [(t.kind, t.episode_id, t.url, t.declared_type) for t in tasks] == expected
        for t in tasks:
            episode = old[t.episode_id]
            assert (t.feed_id, t.status, t.attempts, t.failures, t.fetched_at) == (
                feed, "pending", 0, 0, None,
            )  # fmt: skip
            assert (t.etag, t.last_modified, t.document_id) == (None, None, None)
            assert (t.published, t.first_seen_at) == (
                episode["published"],
                episode["first_seen_at"],
            )
        assert archive.files_to_fetch(feed, NOW, ["transcript"]) == [
            t for t in tasks if t.kind == "transcript"
        ]
        other = archive.db.execute("SELECT id FROM feeds WHERE id != ?", [feed]).fetchone()[0]
        assert archive.files_to_fetch(other, NOW, ["transcript", "chapters"]) == []


def test_the_archived_pages_are_due_for_a_recheck(tmp_path: Path) -> None:
    path = copy_v7(tmp_path)
    old = episodes_by_id(path)
    archived = {i for i, e in old.items() if e["page_status"] == "ok"}
    with Archive(path) as archive:
        feed = pytorch(archive)
        tasks = archive.pages_to_recheck(feed, FAR_FUTURE)
        assert {t.episode_id for t in tasks} == archived
        assert len(tasks) == len(archived)
        for t in tasks:
            episode = old[t.episode_id]
            assert (t.feed_id, t.url, t.etag, t.status, t.fetched_at) == (
                feed,
                episode["page_url"],
                episode["page_etag"],
                "ok",
                episode["page_fetched_at"],
            )
            assert (t.published, t.first_seen_at, t.failures, t.document_id) == (
                episode["published"],
                episode["first_seen_at"],
                0,
                None,
            )
        assert archive.pages_to_recheck(feed, NOW) == []  # first re-checks are a month away
        assert archive.pages_to_recheck(feed, NOW, everything=True) == tasks
        first = min(expected_recheck(old[i]) or "" for i in archived)
        assert [t.episode_id for t in archive.pages_to_recheck(feed, first)] == [
            i for i in sorted(archived) if expected_recheck(old[i]) == first
        ]


def test_the_new_pipeline_writes_files_and_rechecks_to_a_migrated_archive(
    tmp_path: Path,
) -> None:
    """One fetch of each listed file and one re-check of each archived page, stored as the
    pipeline stores them: rows, documents, full-text indexes and due times follow.
    """
    path = copy_v7(tmp_path)
    vtt = b"WEBVTT\n\n00:00:01.000 --> 00:00:04.000\n<v Edward>Hello quaternions\n"
    srt = b"1\n00:00:01,000 --> 00:00:04,000\nHello quaternions\n"
    chapters = b'{"version": "1.2.0", "chapters": [{"startTime": 0, "title": "Intro wombats"}]}'
    later = "2026-12-06T09:00:00Z"
    with Archive(path) as archive:
        feed = pytorch(archive)
        for task in archive.files_to_fetch(feed, NOW, ["transcript", "chapters"]):
            if task.kind == "transcript":
                body = vtt if task.url.endswith(".vtt") else srt
                parsed: Any = parse_transcript(body, task.declared_type, task.url)
            else:
                body = chapters
                parsed = parse_chapters_json(body, task.url)
            archive.record_file(
                task, status="ok", now=NOW, records=(), next_check_at=later,
                body=KeptBody.of(body, task.url, task.declared_type), parsed=parsed,
                etag='"f1"',
            )  # fmt: skip
        assert archive.files_to_fetch(feed, NOW, ["transcript", "chapters"]) == []
        assert len(archive.files_to_fetch(feed, later, ["transcript", "chapters"])) == 6
        conn = archive.db.conn
        assert conn.execute("SELECT count(*) FROM documents").fetchone() == (3,)  # deduplicated
        assert conn.execute(
            "SELECT DISTINCT status, document_id IS NOT NULL, items FROM transcripts"
        ).fetchall() == [("ok", 1, 1)]
        hits = conn.execute(
            "SELECT s.episode_id, s.speaker FROM transcript_segments_fts f "
            "JOIN transcript_segments s ON s.id = f.rowid "
            "WHERE transcript_segments_fts MATCH 'quaternion' ORDER BY s.episode_id, s.speaker"
        ).fetchall()
        assert hits == [(1, None), (1, "Edward"), (2, None), (2, "Edward")]
        assert conn.execute(
            "SELECT c.episode_id FROM chapters_fts f JOIN chapters c ON c.id = f.rowid "
            "WHERE chapters_fts MATCH 'wombat' ORDER BY c.episode_id"
        ).fetchall() == [(1,), (2,)]

        tasks = archive.pages_to_recheck(feed, FAR_FUTURE)
        unchanged, failing = tasks[0], tasks[1]
        archive.record_page(unchanged, status="not_modified", now=NOW, records=(),
                            recheck_at=later)  # fmt: skip
        archive.record_page(failing, status="failed", now=NOW, records=(), error="HTTP 503",
                            recheck_at=later)  # fmt: skip
        rows = dict(
            (r[0], r[1:])
            for r in conn.execute(
                "SELECT id, page_status, page_failures, page_recheck_at, page_fetched_at, "
                "page_notes_text IS NOT NULL FROM episodes WHERE id IN (?, ?)",
                [unchanged.episode_id, failing.episode_id],
            )
        )
        assert rows[unchanged.episode_id] == ("ok", 0, later, NOW, 1)
        assert rows[failing.episode_id] == ("ok", 1, later, NOW, 1)  # the notes stay archived
        assert {t.episode_id for t in archive.pages_to_recheck(feed, later)} >= {
            unchanged.episode_id,
            failing.episode_id,
        }
        assert conn.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
        assert conn.execute("PRAGMA foreign_key_check").fetchall() == []
        for table in ("episodes_fts", "transcript_segments_fts", "chapters_fts"):
            fts_integrity_check(conn, table)


def test_migration_8_skips_file_lists_it_cannot_read(tmp_path: Path) -> None:
    """Hand-edited or foreign lists (a bare string, a non-text or empty url, an object instead
    of a list, not JSON) are skipped, never a refusal to open the archive."""
    path = copy_v7(tmp_path)
    with closing(sqlite3.connect(path)) as conn, conn:
        conn.execute(
            "UPDATE episodes SET transcripts = ? WHERE id = 3",
            ['["https://x.example/t.vtt", {"url": 5}, {"url": ""}, null]'],
        )
        conn.execute('UPDATE episodes SET chapters = \'{"url": "https://x.example/c"}\'')
        conn.execute("UPDATE episodes SET transcripts = 'not json' WHERE id = 4")
        listed = conn.execute(
            "SELECT count(*) FROM episodes WHERE id NOT IN (3, 4) AND transcripts IS NOT NULL"
        ).fetchone()[0]
    with Archive(path) as archive:
        urls = [r[0] for r in archive.db.execute("SELECT url FROM transcripts")]
        assert archive.count("chapter_files") == 0
    assert all(url.startswith("http") for url in urls)
    assert len(urls) == 2 * listed  # the untouched episodes' vtt and srt
