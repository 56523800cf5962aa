"""The archive: schema version, migrations, guarded upserts, transactions."""

from __future__ import annotations

import ast
import inspect
import sqlite3
from pathlib import Path

import pytest

import podarchive.store
from podarchive.core.errors import NotAnArchive, SchemaTooNew, StorageError
from podarchive.core.types import EpisodeWrite, FetchRecord, Link
from podarchive.store import SCHEMA_VERSION, Archive, FeedSave, base

NOW = "2026-12-02T12:00:00Z"
LATER = "2026-12-02T13:00:00Z"


def episode(key: str, title: str, links: int = 2) -> EpisodeWrite:
    return EpisodeWrite(
        key=key,
        row={"guid": key, "title": title, "notes_text": f"notes of {title}", "page_url": None},
        links=tuple(
            Link(
                i,
                f"https://ex.example/{key}/{i}",
                f"https://ex.example/{key}/{i}",
                "ex.example",
                "l",
            )
            for i in range(links)
        ),
    )


def save(
    archive: Archive, feed_id: int, episodes: list[EpisodeWrite], now: str = NOW
) -> tuple[int, int, int]:
    stats = archive.save_feed(
        FeedSave(
            feed_id,
            {"title": "Show"},
            episodes,
            status=200,
            etag='"e"',
            last_modified=None,
            content_hash="h",
            now=now,
            records=[FetchRecord("https://ex.example/feed", "feed", now, 5, 200, 10)],
        )
    )
    return stats.new, stats.changed, stats.unchanged


def test_new_archive_has_current_schema_and_wal(tmp_path: Path) -> None:
    with Archive(tmp_path / "a.db") as archive:
        assert archive.schema_version == SCHEMA_VERSION
        assert archive.db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        tables = set(archive.db.table_names())
        assert {"feeds", "episodes", "links", "fetches", "episodes_fts"} <= tables
        fks = {
            (fk.table, fk.column, fk.other_table) for fk in archive.db.table("links").foreign_keys
        }
        assert ("links", "episode_id", "episodes") in fks


def test_reopening_does_not_migrate_again(tmp_path: Path) -> None:
    with Archive(tmp_path / "a.db") as archive:
        feed = archive.ensure_feed("https://ex.example/feed", "Show", NOW)
        save(archive, feed.id, [episode("a", "A")])
    with Archive(tmp_path / "a.db") as archive:
        assert archive.count("episodes") == 1


def test_newer_archive_is_refused_untouched(tmp_path: Path) -> None:
    path = tmp_path / "a.db"
    Archive(path).close()
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA user_version = 99")
    conn.execute("CREATE TABLE precious (x)")
    conn.execute("INSERT INTO precious VALUES (1)")
    conn.commit()
    conn.close()
    before = path.read_bytes()
    with pytest.raises(SchemaTooNew, match="schema version 99"):
        Archive(path)
    assert path.read_bytes() == before


def test_a_foreign_database_with_a_high_version_is_not_called_newer(tmp_path: Path) -> None:
    path = tmp_path / "a.db"
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA user_version = 99")
    conn.execute("CREATE TABLE precious (x)")
    conn.commit()
    conn.close()
    with pytest.raises(NotAnArchive, match=r"it has tables: precious\); refusing to change it"):
        Archive(path)


def test_not_a_database(tmp_path: Path) -> None:
    path = tmp_path / "a.db"
    path.write_bytes(b"this is not sqlite" * 100)
    with pytest.raises(NotAnArchive, match="not an SQLite database"):
        Archive(path)


def test_sqlite_errors_become_storage_errors(tmp_path: Path) -> None:
    with Archive(tmp_path / "a.db") as archive:
        archive.db.execute("DROP TABLE hosts")
        with pytest.raises(StorageError, match=r"^archive error in .*a\.db: no such table: hosts$"):
            archive.host_blocks(NOW)
        with pytest.raises(StorageError, match="no such table: hosts"):
            archive.save_host_blocks({"h.example": LATER}, NOW)


def test_every_public_member_of_the_facade_is_translated() -> None:
    """Mixins included: the wrappers sit on the facade, for what every mixin defines."""
    wrapper = base._translated(len).__code__
    public = [name for name in dir(Archive) if not name.startswith("_")]
    for name in public:
        member = inspect.getattr_static(Archive, name)
        if isinstance(member, property):
            member = member.fget
        member = getattr(member, "__func__", member)  # a classmethod's function
        assert getattr(member, "__code__", None) is wrapper, name
        assert name in vars(Archive), name
    owners = {c for c in Archive.__mro__ for name in public if name in vars(c)} - {Archive}
    assert {c.__name__ for c in owners} >= {
        "Connection", "FeedsMixin", "EpisodesMixin", "SnapshotsMixin", "FeedHistoryMixin",
        "BackfillMixin", "PagesMixin", "FetchLogMixin", "StatusMixin",
    }  # fmt: skip


def test_a_closed_connection_is_a_storage_error_from_every_mixin(tmp_path: Path) -> None:
    archive = Archive(tmp_path / "a.db")
    archive.db.conn.close()
    calls = {
        "schema_version": lambda: archive.schema_version,
        "feed_state": lambda: archive.feed_state("https://ex.example/feed"),
        "episode_keys": lambda: archive.episode_keys(1),
        "pages_to_fetch": lambda: archive.pages_to_fetch(1),
        "page_index": lambda: archive.page_index(1),
        "export_history": lambda: archive.export_history(1),
        "feed_observations": lambda: archive.feed_observations(1),
        "count": lambda: archive.count("feeds"),
        "log_fetches": lambda: archive.log_fetches([]),
    }
    for name, call in calls.items():
        with pytest.raises(StorageError, match="closed database"):
            call()
        assert name in vars(Archive)


def test_the_store_imports_no_higher_layer() -> None:
    """podarchive.store may import errors, types, history, episode_plan, clock and namespaces
    (and the package's ``__version__``, core: a capture's software, #27), never
    fetch/pipeline/cli."""
    allowed = {
        "podarchive.core.errors", "podarchive.core.types", "podarchive.rules.history", "podarchive.core.clock",
        "podarchive.core.namespaces", "podarchive.rules.episode_plan", "podarchive",
        "podarchive.rules.push",  # a WebSub subscription's value type (#29), pure like history
    }  # fmt: skip
    for path in Path(podarchive.store.__file__).parent.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            elif isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            else:
                continue
            inside = [n for n in names if n.split(".")[0] == "podarchive"]
            assert set(inside) <= allowed, (path.name, inside)


def test_identical_save_changes_nothing(tmp_path: Path) -> None:
    with Archive(tmp_path / "a.db") as archive:
        feed = archive.ensure_feed("https://ex.example/feed", "Show", NOW)
        assert save(archive, feed.id, [episode("a", "A"), episode("b", "B")]) == (2, 0, 0)
        before = archive.dump()
        changes = archive.db.conn.total_changes
        assert save(archive, feed.id, [episode("a", "A"), episode("b", "B")], LATER) == (0, 0, 2)
        # only the feed's fetch state and the fetch log were written
        assert archive.db.conn.total_changes - changes == 2
        after = archive.dump()
        assert after["episodes"] == before["episodes"]
        assert after["links"] == before["links"]
        assert archive.count("fetches") == 2


def test_changed_episode_is_updated_and_its_links_replaced(tmp_path: Path) -> None:
    with Archive(tmp_path / "a.db") as archive:
        feed = archive.ensure_feed("https://ex.example/feed", "Show", NOW)
        save(archive, feed.id, [episode("a", "A", links=3)])
        assert save(archive, feed.id, [episode("a", "A2", links=1)], LATER) == (0, 1, 0)
        assert archive.db.execute("SELECT title, first_seen_at FROM episodes").fetchall() == [
            ("A2", NOW)
        ]
        # the current notes' link, and the three of the earlier revision
        current = archive.db.execute("SELECT count(*) FROM links WHERE revision_id IS NULL")
        assert current.fetchone()[0] == 1
        assert archive.count("links") == 4
        assert archive.db.execute("SELECT title, changed FROM episode_revisions").fetchall() == [
            ("A", "title")
        ]
        hits = archive.db.execute(
            "SELECT title FROM episodes_fts WHERE episodes_fts MATCH 'A2'"
        ).fetchall()
        assert hits == [("A2",)]


def test_a_failed_write_leaves_no_half_feed(tmp_path: Path) -> None:
    with Archive(tmp_path / "a.db") as archive:
        feed = archive.ensure_feed("https://ex.example/feed", "Show", NOW)
        save(archive, feed.id, [episode("a", "A")])
        broken = EpisodeWrite(key="c", row={"title": object()}, links=())  # not storable
        with pytest.raises((StorageError, TypeError, sqlite3.Error)):
            save(archive, feed.id, [episode("b", "B"), broken])
        assert [r[0] for r in archive.db.execute("SELECT key FROM episodes")] == ["a"]
        assert archive.count("fetches") == 1


def test_feed_error_counts_up_and_success_resets(tmp_path: Path) -> None:
    with Archive(tmp_path / "a.db") as archive:
        feed = archive.ensure_feed("https://ex.example/feed", "Show", NOW)
        archive.record_feed_error(feed.id, "HTTP 500 server error", 500, NOW, [])
        archive.record_feed_error(feed.id, "timeout", None, NOW, [])
        row = archive.db.execute("SELECT error_count, last_error FROM feeds").fetchone()
        assert row == (2, "timeout")
        archive.record_feed_unchanged(
            feed.id, status=304, etag=None, last_modified=None, now=LATER, records=[]
        )
        row = archive.db.execute(
            "SELECT error_count, last_error, last_success_at FROM feeds"
        ).fetchone()
        assert row == (0, None, LATER)
