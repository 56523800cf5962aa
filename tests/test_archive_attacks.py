"""Issue #17: a damaged archive, another program's database, a newer archive, a growing WAL,
a deleted archive under the daemon, and schedules too fast to be polite.

Every archive here is a real SQLite file written by the real pipeline; damage is real bytes
overwritten in one page of a table b-tree; refusals are checked byte for byte.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import threading
from collections.abc import Iterator
from contextlib import closing, contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from commands import invoke, podarchive, query
from loopback import LoopbackSite, serve_pytorch

from podarchive.core.errors import NotAnArchive, SchemaTooNew
from podarchive.store import APPLICATION_ID, SCHEMA_VERSION, WAL_SIZE_LIMIT, Archive

ARCHIVES = Path(__file__).parent / "fixtures" / "archives"


def archive_of(tmp_path: Path, url: str, name: str = "archive.db") -> Path:
    """An archive written by a real run, checkpointed: every page is in the main file."""
    db = tmp_path / name
    assert invoke("run", url, "--db", str(db), "--allow-private-hosts")[0] == 0
    assert not Path(f"{db}-wal").exists()
    return db


def rootpage(db: Path, table: str) -> tuple[int, int]:
    """(page number, page size) of a table's b-tree root."""
    with closing(sqlite3.connect(db)) as conn:
        (size,) = conn.execute("PRAGMA page_size").fetchone()
        (page,) = conn.execute(
            "SELECT rootpage FROM sqlite_master WHERE name = ?", [table]
        ).fetchone()
    return int(page), int(size)


def smash_header(db: Path, table: str) -> None:
    """Overwrite the b-tree page header of the table's root page (its page type and counts)."""
    page, size = rootpage(db, table)
    with db.open("r+b") as f:
        f.seek((page - 1) * size)
        f.write(b"\xff" * 8)


def smash_cells(db: Path, table: str) -> None:
    """Overwrite the end of the root page, where a leaf keeps its cells (the rows)."""
    page, size = rootpage(db, table)
    with db.open("r+b") as f:
        f.seek(page * size - 300)
        f.write(b"\xee" * 300)


def snapshot(db: Path) -> tuple[bytes, int, list[str]]:
    """The file's bytes, its mtime and every file in its directory."""
    return db.read_bytes(), db.stat().st_mtime_ns, sorted(p.name for p in db.parent.iterdir())


# 1. damage -------------------------------------------------------------------------------


def test_damage_in_a_page_the_run_reads_is_one_line_and_exit_1(
    tmp_path: Path, pytorch_feed: str
) -> None:
    db = archive_of(tmp_path, pytorch_feed)
    smash_header(db, "hosts")  # every run reads the hosts table first
    code, out, err = invoke("run", pytorch_feed, "--db", str(db), "--allow-private-hosts")
    assert (code, out) == (1, "")
    assert err == (
        f"podarchive: {db} is damaged (database disk image is malformed); run 'podarchive check'\n"
    )
    result = podarchive(
        "run", pytorch_feed, "--db", "archive.db", "--allow-private-hosts", cwd=tmp_path
    )
    assert result.returncode == 1
    assert result.stderr == (
        "podarchive: archive.db is damaged (database disk image is malformed); "
        "run 'podarchive check'\n"
    )


@pytest.mark.parametrize(
    "command", [["status"], ["reparse"], ["backfill"], ["backfill", "--dry-run"], ["check"]]
)
def test_every_command_reports_damage_in_one_line(
    tmp_path: Path, pytorch_feed: str, command: list[str]
) -> None:
    db = archive_of(tmp_path, pytorch_feed)
    smash_header(db, "feeds")  # every command reads the feeds
    if command[0] == "backfill":
        command = [*command, pytorch_feed, "--allow-private-hosts"]
    code, out, err = invoke(*command, "--db", str(db))
    assert code == 1
    if command == ["check"]:
        assert "DAMAGED" in out
    else:
        assert err == (
            f"podarchive: {db} is damaged (database disk image is malformed); "
            "run 'podarchive check'\n"
        )


def unread_damage(tmp_path: Path, url: str) -> Path:
    """An archive whose only damage is in the rows of a table a run never reads."""
    db = archive_of(tmp_path, url)
    with Archive(db) as archive:
        (feed_id, _, _), *_ = archive.feeds()
        archive.start_walk(feed_id, "2026-12-01T00:00:00Z")  # backfill_walks: one row
    smash_cells(db, "backfill_walks")
    return db


def test_damage_a_run_does_not_read_is_found_by_check(tmp_path: Path, pytorch_feed: str) -> None:
    db = unread_damage(tmp_path, pytorch_feed)
    before = snapshot(db)
    result = podarchive("check", "--db", "archive.db", cwd=tmp_path)
    assert result.returncode == 1
    lines = result.stdout.splitlines()
    assert lines[0].startswith("archive.db: DAMAGED")
    assert any(line.startswith("  integrity_check: On tree page ") for line in lines), lines
    assert any("restore archive.db from a backup" in line for line in lines)
    assert any('sqlite3 archive.db ".recover" | sqlite3 recovered.db' in line for line in lines)
    assert "Traceback" not in result.stderr
    assert snapshot(db) == before  # read-only


def test_the_daily_quick_check_stops_a_run_on_unread_damage(
    tmp_path: Path, pytorch_feed: str
) -> None:
    db = unread_damage(tmp_path, pytorch_feed)
    marker = Path(f"{db}.checked")
    assert marker.is_file()  # the first run checked the new archive
    old = (datetime.now(UTC) - timedelta(days=2)).timestamp()
    os.utime(marker, (old, old))  # a day has passed: the next run checks again
    before = db.read_bytes()
    code, out, err = invoke("run", pytorch_feed, "--db", str(db), "--allow-private-hosts")
    assert (code, out) == (1, "")
    assert err.startswith(f"podarchive: {db} is damaged (quick_check: On tree page ")
    assert err.endswith("; run 'podarchive check'\n")
    assert err.count("\n") == 1
    assert db.read_bytes() == before  # nothing written into a damaged archive


def test_a_sound_archive_checks_ok_read_only(tmp_path: Path, pytorch_feed: str) -> None:
    db = archive_of(tmp_path, pytorch_feed)
    before = snapshot(db)
    result = podarchive("check", "--db", "archive.db", cwd=tmp_path)
    assert (result.returncode, result.stderr) == (0, "")
    assert result.stdout == (
        "archive.db: sound (integrity_check, foreign_key_check, chapters_fts integrity-check, "
        "episodes_fts integrity-check, transcript_segments_fts integrity-check)\n"
    )
    assert snapshot(db) == before


def test_check_finds_and_repairs_a_damaged_search_index(tmp_path: Path, pytorch_feed: str) -> None:
    db = archive_of(tmp_path, pytorch_feed)
    with closing(sqlite3.connect(db)) as conn:  # index entries for an episode that is not there
        conn.execute(
            "INSERT INTO episodes_fts (rowid, title, summary, notes_text, page_notes_text) "
            "VALUES (99999, 'ghost', 'ghost', 'ghost', 'ghost')"
        )
        conn.commit()
    code, out, _ = invoke("check", "--db", str(db))
    assert code == 1
    assert "  episodes_fts: " in out
    assert "podarchive check --repair-fts" in out
    code, out, _ = invoke("check", "--db", str(db), "--repair-fts")
    assert code == 0, out
    assert "episodes_fts rebuilt" in out
    assert invoke("check", "--db", str(db))[0] == 0
    assert query(db, "SELECT count(*) FROM episodes_fts WHERE episodes_fts MATCH 'strides'") == [
        (1,)
    ]


# 2. another program's database, or no database at all ----------------------------------


def foreign(path: Path, *, version: int = 0, wal: bool = False) -> Path:
    with closing(sqlite3.connect(path)) as conn:
        if wal:
            conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT)")
        conn.execute("CREATE TABLE orders (id INTEGER PRIMARY KEY, user_id INTEGER)")
        conn.execute("INSERT INTO users (name) VALUES ('ada')")
        conn.execute(f"PRAGMA user_version = {version}")
        conn.commit()
    return path


COMMANDS = [
    ["run", "https://podcast.example/feed.xml"],
    ["status"],
    ["reparse"],
    ["backfill", "https://podcast.example/feed.xml"],
    ["backfill", "--dry-run", "https://podcast.example/feed.xml"],
    ["check"],
    ["check", "--repair-fts"],
    ["serve"],
]


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: " ".join(c[:2]))
@pytest.mark.parametrize("version", [0, 3])
def test_another_programs_database_is_refused_untouched(
    tmp_path: Path, command: list[str], version: int
) -> None:
    db = foreign(tmp_path / "other.db", version=version)
    before = snapshot(db)
    code, out, err = invoke(*command, "--db", str(db))
    assert code == 1
    assert err == (
        f"podarchive: {db} is not a podarchive archive (it has tables: users, orders); "
        "refusing to change it\n"
    ) or (command == ["serve"] and "is not a podarchive archive" in err), err
    assert snapshot(db) == before


def test_daemon_refuses_another_programs_database(tmp_path: Path) -> None:
    db = foreign(tmp_path / "other.db", wal=True)
    (tmp_path / "schedules").mkdir()
    (tmp_path / "schedules" / "f.toml").write_text('[[feed]]\nurl = "https://x.example/f"\n')
    before = snapshot(db)
    result = podarchive("daemon", "--db", "other.db", cwd=tmp_path)
    assert result.returncode == 1
    assert result.stderr == (
        "podarchive: other.db is not a podarchive archive (it has tables: users, orders); "
        "refusing to change it\n"
    )
    assert snapshot(db) == before


@pytest.mark.parametrize(
    "content",
    [os.urandom(8192), b"just some notes\n" * 40, b"SQLite format 3\x00" + b"\x00" * 10],
    ids=["random", "text", "short-header"],
)
def test_a_file_that_is_not_sqlite_is_refused_untouched(tmp_path: Path, content: bytes) -> None:
    db = tmp_path / "notes.db"
    db.write_bytes(content)
    before = snapshot(db)
    result = podarchive("run", "https://x.example/f", "--db", "notes.db", cwd=tmp_path)
    assert result.returncode == 1
    assert result.stderr == (
        "podarchive: notes.db is not a podarchive archive (not an SQLite database); "
        "refusing to change it\n"
    )
    assert snapshot(db) == before


def test_a_foreign_wal_database_is_refused_untouched_by_a_real_process(tmp_path: Path) -> None:
    db = foreign(tmp_path / "other.db", version=3, wal=True)
    before = snapshot(db)
    result = podarchive("run", "https://x.example/f", "--db", "other.db", cwd=tmp_path)
    assert result.returncode == 1
    assert result.stderr == (
        "podarchive: other.db is not a podarchive archive (it has tables: users, orders); "
        "refusing to change it\n"
    )
    assert snapshot(db) == before


def test_an_empty_file_or_a_new_path_becomes_an_archive(tmp_path: Path, pytorch_feed: str) -> None:
    (tmp_path / "empty.db").write_bytes(b"")
    for name in ("empty.db", "new.db"):
        code, _, err = invoke(
            "run", pytorch_feed, "--db", str(tmp_path / name), "--allow-private-hosts"
        )
        assert (code, err) == (0, "")
        assert query(tmp_path / name, "SELECT count(*) FROM episodes") == [(9,)]
        assert query(tmp_path / name, "PRAGMA application_id") == [(APPLICATION_ID,)]


def test_an_archive_without_the_application_id_is_recognised_and_marked(tmp_path: Path) -> None:
    db = tmp_path / "archive.db"
    shutil.copy(ARCHIVES / "v6.sqlite", db)
    assert query(db, "PRAGMA application_id") == [(0,)]
    before = {t: query(db, f"SELECT * FROM [{t}] ORDER BY rowid") for t in ("feeds", "episodes")}
    with Archive(db) as archive:
        assert archive.schema_version == SCHEMA_VERSION
    assert query(db, "PRAGMA application_id") == [(APPLICATION_ID,)]
    for table, rows in before.items():
        assert len(query(db, f"SELECT * FROM [{table}]")) == len(rows)


def test_an_archive_with_another_application_id_is_refused(tmp_path: Path) -> None:
    db = foreign(tmp_path / "other.db")
    with closing(sqlite3.connect(db)) as conn:
        conn.execute("PRAGMA application_id = 1196444487")  # GPKG
        conn.commit()
    with pytest.raises(NotAnArchive, match=r"it has tables: users, orders\)"):
        Archive(db)


# 3. an archive from a newer podarchive --------------------------------------------------


def newer(tmp_path: Path) -> Path:
    """A real archive, then marked as written by a future schema, in rollback-journal mode."""
    db = tmp_path / "future.db"
    Archive(db).close()
    with closing(sqlite3.connect(db)) as conn:
        conn.execute("PRAGMA user_version = 99")
        conn.execute("PRAGMA journal_mode = DELETE")  # header bytes 18-19: 1, 1
        conn.commit()
    assert db.read_bytes()[18:20] == b"\x01\x01"
    return db


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: " ".join(c[:2]))
def test_a_newer_archive_is_refused_untouched_by_every_command(
    tmp_path: Path, command: list[str]
) -> None:
    db = newer(tmp_path)
    before = snapshot(db)
    code, _, err = invoke(*command, "--db", str(db))
    assert code == 1
    assert err == (
        f"podarchive: {db} has schema version 99; this podarchive knows up to "
        f"{SCHEMA_VERSION}: upgrade podarchive\n"
    )
    assert snapshot(db) == before


def test_a_newer_archive_is_refused_untouched_by_a_real_process(tmp_path: Path) -> None:
    db = newer(tmp_path)
    before = snapshot(db)
    result = podarchive("status", "--db", "future.db", cwd=tmp_path)
    assert result.returncode == 1
    assert "has schema version 99" in result.stderr
    assert snapshot(db) == before


def test_open_read_only_refuses_untouched(tmp_path: Path) -> None:
    db = newer(tmp_path)
    before = snapshot(db)
    with pytest.raises(SchemaTooNew):
        Archive.open_read_only(db)
    assert snapshot(db) == before


def test_open_read_only_leaves_no_wal_behind(tmp_path: Path, pytorch_feed: str) -> None:
    db = archive_of(tmp_path, pytorch_feed)
    before = snapshot(db)
    with Archive.open_read_only(db) as archive:
        assert archive.count("episodes") == 9
    assert snapshot(db) == before


# 4. the WAL -----------------------------------------------------------------------------


def wal_size(db: Path) -> int:
    wal = Path(f"{db}-wal")
    return wal.stat().st_size if wal.exists() else 0


def big_feed(site: LoopbackSite, items: int = 800) -> str:
    notes = "<p>" + "Words about tensors and strides. " * 120 + "</p>"
    body = "".join(
        f"<item><guid>g{i}</guid><title>Episode {i}</title>"
        f"<description><![CDATA[{notes} {i}]]></description></item>"
        for i in range(items)
    )
    site.serve("/big.xml", f'<rss version="2.0"><channel><title>Big</title>{body}</channel></rss>')
    return site.url("/big.xml")


def test_a_run_beside_an_idle_reader_leaves_an_empty_wal(
    tmp_path: Path, site: LoopbackSite
) -> None:
    db = tmp_path / "archive.db"
    Archive(db).close()
    with closing(sqlite3.connect(db)) as reader:  # Datasette's connection, between queries
        reader.execute("SELECT count(*) FROM episodes").fetchone()
        code, _, err = invoke("run", big_feed(site), "--db", str(db), "--no-pages")
        assert (code, err) == (0, "")
        assert wal_size(db) == 0


@contextmanager
def reading(db: Path) -> Iterator[sqlite3.Connection]:
    """A reader inside a read transaction (an open Datasette query)."""
    with closing(sqlite3.connect(db, isolation_level=None)) as reader:
        reader.execute("BEGIN")
        reader.execute("SELECT count(*) FROM episodes").fetchone()
        yield reader
        reader.execute("COMMIT")


def test_checkpoint_after_a_reader_lets_go(tmp_path: Path, site: LoopbackSite) -> None:
    db = tmp_path / "archive.db"
    url = big_feed(site)
    with Archive(db) as archive:
        with reading(db):
            assert invoke("run", url, "--db", str(db), "--no-pages")[0] == 0
            grown = wal_size(db)
            assert grown > WAL_SIZE_LIMIT  # the reader kept the run's pages in the WAL
            archive.checkpoint()  # does not wait for the reader: the WAL stays
            assert wal_size(db) == grown
        archive.checkpoint()
        assert wal_size(db) == 0


def test_a_wal_a_reader_kept_is_cut_to_the_limit_by_the_next_write(
    tmp_path: Path, site: LoopbackSite
) -> None:
    db = tmp_path / "archive.db"
    url = big_feed(site)
    with Archive(db) as archive:
        with reading(db):
            assert invoke("run", url, "--db", str(db), "--no-pages")[0] == 0
        with reading(db):  # a query on the run's result while the run checkpoints
            assert not archive.checkpoint()  # copied, but not truncated under the reader
            assert wal_size(db) > WAL_SIZE_LIMIT
        with reading(db):  # a later query does not hold the copied WAL
            archive.ensure_feed("https://x.example/f", None, "2026-12-01T00:00:00Z")
        assert wal_size(db) <= WAL_SIZE_LIMIT  # journal_size_limit: cut at the next write


# 5. the daemon and a deleted archive ----------------------------------------------------


def test_the_daemon_does_not_recreate_a_deleted_archive(tmp_path: Path, site: LoopbackSite) -> None:
    from test_daemon import DaemonProcess, wait_for

    schedules, db = tmp_path / "schedules", tmp_path / "archive.db"
    schedules.mkdir()
    url = serve_pytorch(site)
    (schedules / "f.toml").write_text(
        f'[[feed]]\nurl = "{url}"\nevery = "1s"\nallow_private_hosts = true\n'
    )
    daemon = DaemonProcess(schedules, db)
    try:
        wait_for(lambda: db.exists() and site.hits("/pytorch/feed.xml") >= 1, what="a poll")
        wait_for(lambda: daemon.logged("INFO podarchive: "), what="the first update")
        backup = tmp_path / "backup.db"
        with closing(sqlite3.connect(db)) as conn, closing(sqlite3.connect(backup)) as copy:
            conn.backup(copy)
        for suffix in ("", "-wal", "-shm"):
            Path(f"{db}{suffix}").unlink(missing_ok=True)
        wait_for(lambda: daemon.logged("is gone"), what="the error line")
        polls = site.hits("/pytorch/feed.xml")
        threading.Event().wait(2.5)  # several ticks and 1 s jobs
        assert not db.exists()
        assert site.hits("/pytorch/feed.xml") == polls
        (line,) = daemon.logged("is gone")
        assert f"ERROR podarchive.daemon: update cycle failed: {db} is gone" in line
        assert "not starting a new empty archive" in line
        shutil.copy(backup, db)
        wait_for(lambda: site.hits("/pytorch/feed.xml") > polls, timeout=60, what="polls again")
        wait_for(lambda: daemon.logged("update cycles work again"), what="the recovery line")
    finally:
        daemon.stop()


# 6. no polling faster than once a minute ------------------------------------------------


def fast_schedule(directory: Path, url: str) -> Path:
    directory.mkdir(exist_ok=True)
    path = directory / "fast.toml"
    path.write_text(f'[[feed]]\nurl = "{url}"\nevery = "10s"\nallow_private_hosts = true\n')
    return path


@pytest.mark.parametrize(
    "command", [["run"], ["daemon"], ["add", "https://y.example/f", "--no-check"]]
)
def test_fast_schedules_need_allow_fast(tmp_path: Path, command: list[str]) -> None:
    path = fast_schedule(tmp_path / "s", "https://x.example/f")
    db = [] if command[0] == "add" else ["--db", str(tmp_path / "a.db")]
    code, _, err = invoke(*command, "--schedules", str(tmp_path / "s"), *db)
    assert code == 2
    assert err == (
        f"podarchive: error: {path}: feed[0].every: 10s is under the 60 s floor; "
        "use --allow-fast (for tests)\n"
    )
    assert not (tmp_path / "a.db").exists()


def test_allow_fast_runs_a_fast_schedule(tmp_path: Path, pytorch_feed: str) -> None:
    fast_schedule(tmp_path / "s", pytorch_feed)
    code, _, err = invoke(
        "run", "--allow-fast", "--schedules", str(tmp_path / "s"), "--db", str(tmp_path / "a.db")
    )
    assert (code, err) == (0, "")
    code, _, err = invoke(
        "add",
        "https://y.example/f",
        "--every",
        "5s",
        "--no-check",
        "--schedules",
        str(tmp_path / "s"),
    )
    assert code == 2
    assert "--every: 5s is under the 60 s floor; use --allow-fast (for tests)" in err
    code, _, _ = invoke(
        "add",
        "https://y.example/f",
        "--every",
        "5s",
        "--no-check",
        "--allow-fast",
        "--schedules",
        str(tmp_path / "s"),
    )
    assert code == 0
