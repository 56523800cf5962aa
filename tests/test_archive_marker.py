"""Issue #23 item 7: an archive is recognised by its application id and its schema; another
program's database that merely shares table names, or holds only a view, is refused untouched;
every archive written before the marker (schemas 1 to 11, no application id) still opens and
migrates.

The foreign files are real SQLite databases written here with sqlite3; the old archives are the
real fixtures (written by the podarchive of their time) and archives of every schema version
made by the migrations up to that version, their application id cleared as before issue #17.
"""

from __future__ import annotations

import hashlib
import shutil
import sqlite3
from contextlib import closing
from pathlib import Path

import pytest
from click.testing import CliRunner
from commands import invoke, podarchive, query

import podarchive.store.base as store_base
from podarchive.cli import cli
from podarchive.store import APPLICATION_ID, SCHEMA_VERSION, Archive
from podarchive.store.archive_path import migrated_tables
from podarchive.store.frozen_tables import FROZEN_TABLES

ARCHIVES = Path(__file__).parent / "fixtures" / "archives"
PRE_MARKER_FIXTURES = ["v1", "v3", "v5", "v6"]  # written before issue #17: no application id
FEED = "https://podcast.example/feed.xml"
COMMANDS = [
    ["run", FEED],
    ["check"],
    ["check", "--repair-fts"],
    ["status"],
    ["reparse"],
    ["backfill", "--dry-run", FEED],
    ["serve"],
]


def snapshot(db: Path) -> tuple[str, int, list[str]]:
    """The file's hash, its mtime and every file in its directory (no -wal, -shm, lock)."""
    digest = hashlib.sha256(db.read_bytes()).hexdigest()
    return digest, db.stat().st_mtime_ns, sorted(p.name for p in db.parent.iterdir())


def four_tables(path: Path, *, application_id: int = 0) -> Path:
    """Another program's database with an archive's first four table names, user_version 1."""
    with closing(sqlite3.connect(path)) as conn:
        conn.executescript(
            """
            CREATE TABLE feeds (id INTEGER PRIMARY KEY, url TEXT, name TEXT);
            CREATE TABLE episodes (id INTEGER PRIMARY KEY, feed_id INTEGER, title TEXT);
            CREATE TABLE links (id INTEGER PRIMARY KEY, episode_id INTEGER, url TEXT);
            CREATE TABLE fetches (id INTEGER PRIMARY KEY, url TEXT, status INTEGER);
            INSERT INTO feeds (url, name) VALUES ('https://mine.example/rss', 'my own feed');
            INSERT INTO episodes (feed_id, title) VALUES (1, 'kept as it is');
            PRAGMA user_version = 1;
            """
        )
        conn.execute(f"PRAGMA application_id = {application_id}")
        conn.commit()
    return path


def only_a_view(path: Path) -> Path:
    with closing(sqlite3.connect(path)) as conn:
        conn.execute("CREATE VIEW answers AS SELECT 42 AS answer")
        conn.commit()
    return path


def refused(db: Path, reason: str, command: list[str]) -> str:
    ending = "not serving it" if command == ["serve"] else "refusing to change it"
    return f"podarchive: {db} is not a podarchive archive ({reason}); {ending}\n"


FOUR_TABLES = (
    "not the tables of a schema-1 archive: feeds has no author, categories, content_hash, "
    "description, …"
)


@pytest.fixture(autouse=True)
def _never_served(monkeypatch: pytest.MonkeyPatch) -> None:
    """``serve`` of a file taken for an archive fails the test instead of serving forever."""
    import uvicorn

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("serve started a server for a file that is not an archive")

    monkeypatch.setattr(uvicorn, "run", refuse)
    monkeypatch.setattr(uvicorn.Server, "run", refuse)


# another program's database -------------------------------------------------------------


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: " ".join(c[:2]))
def test_a_foreign_database_with_an_archive_s_table_names_is_refused_untouched(
    tmp_path: Path, command: list[str]
) -> None:
    db = four_tables(tmp_path / "other.db")
    before = snapshot(db)
    code, out, err = invoke(*command, "--db", str(db))
    assert (code, out, err) == (1, "", refused(db, FOUR_TABLES, command))
    assert snapshot(db) == before
    assert not Path(f"{db}-wal").exists()


def test_a_foreign_database_with_an_archive_s_table_names_is_refused_by_a_real_process(
    tmp_path: Path,
) -> None:
    db = four_tables(tmp_path / "other.db")
    before = snapshot(db)
    for command in (["run", FEED], ["check"], ["status"]):
        result = podarchive(*command, "--db", "other.db", cwd=tmp_path)
        assert (result.returncode, result.stdout) == (1, ""), command
        assert result.stderr == (
            f"podarchive: other.db is not a podarchive archive ({FOUR_TABLES}); "
            "refusing to change it\n"
        )
    assert snapshot(db) == before
    assert query(db, "PRAGMA journal_mode") == [("delete",)]  # never switched to WAL


def test_a_database_with_the_marker_but_not_an_archive_s_tables_is_refused(
    tmp_path: Path,
) -> None:
    db = four_tables(tmp_path / "other.db", application_id=APPLICATION_ID)
    before = snapshot(db)
    code, _, err = invoke("run", FEED, "--db", str(db))
    assert (code, err) == (1, refused(db, FOUR_TABLES, ["run"]))
    assert snapshot(db) == before


def test_a_pre_marker_archive_missing_a_table_is_refused(tmp_path: Path) -> None:
    db = tmp_path / "archive.db"
    shutil.copy(ARCHIVES / "v3.sqlite", db)
    with closing(sqlite3.connect(db)) as conn:
        conn.execute("DROP TABLE feed_moves")
        conn.commit()
    before = snapshot(db)
    code, _, err = invoke("run", FEED, "--db", str(db))
    reason = "not the tables of a schema-3 archive: no feed_moves table"
    assert (code, err) == (1, refused(db, reason, ["run"]))
    assert snapshot(db) == before


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: " ".join(c[:2]))
def test_a_database_with_only_a_view_is_refused_untouched(
    tmp_path: Path, command: list[str]
) -> None:
    db = only_a_view(tmp_path / "views.db")
    before = snapshot(db)
    code, out, err = invoke(*command, "--db", str(db))
    assert (code, out, err) == (1, "", refused(db, "it has views: answers", command))
    assert snapshot(db) == before
    assert query(db, "SELECT answer FROM answers") == [(42,)]


# archives written before the marker ---------------------------------------------------------


def unmarked(db: Path) -> Path:
    """``db`` as a podarchive before issue #17 left it: no application id."""
    with closing(sqlite3.connect(db)) as conn:
        conn.execute("PRAGMA application_id = 0")
        conn.execute("PRAGMA journal_mode = DELETE")
        conn.commit()
    return db


def archive_of_version(path: Path, version: int, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An archive of schema ``version``: what the migrations up to it make, unmarked."""
    with monkeypatch.context() as patch:
        patch.setattr(store_base, "MIGRATIONS", store_base.MIGRATIONS[:version])
        patch.setattr(store_base, "SCHEMA_VERSION", version)
        with Archive(path) as archive:
            assert archive.schema_version == version
    return unmarked(path)


def assert_opens_and_migrates(db: Path, feed: str) -> None:
    code, out, err = invoke("status", "--db", str(db))
    assert (err, out.split()[:1]) == ("", ["FEED"])  # exit 1 for an old fixture's failing feed
    code, _, err = invoke("run", feed, "--db", str(db), "--allow-private-hosts")
    assert (code, err) == (0, ""), err
    assert query(db, "PRAGMA user_version") == [(SCHEMA_VERSION,)]
    assert query(db, "PRAGMA application_id") == [(APPLICATION_ID,)]
    code, out, err = invoke("check", "--db", str(db))
    assert (code, err) == (0, ""), err
    assert out.startswith(f"{db}: sound (")


@pytest.mark.parametrize("name", PRE_MARKER_FIXTURES)
def test_a_real_archive_from_before_the_marker_opens_and_migrates(
    tmp_path: Path, pytorch_feed: str, name: str
) -> None:
    db = tmp_path / "archive.db"
    shutil.copy(ARCHIVES / f"{name}.sqlite", db)
    assert query(db, "PRAGMA application_id") == [(0,)]
    episodes = query(db, "SELECT count(*) FROM episodes")[0][0]
    assert_opens_and_migrates(db, pytorch_feed)
    assert query(db, "SELECT count(*) FROM episodes")[0][0] >= episodes


@pytest.mark.parametrize("name", ["v7", "v10"])
def test_a_later_fixture_without_its_marker_opens_and_migrates(
    tmp_path: Path, pytorch_feed: str, name: str
) -> None:
    db = unmarked(shutil.copy(ARCHIVES / f"{name}.sqlite", tmp_path / "archive.db"))
    assert query(db, "PRAGMA application_id") == [(0,)]
    assert_opens_and_migrates(db, pytorch_feed)


@pytest.mark.parametrize("version", range(1, SCHEMA_VERSION + 1))
def test_an_archive_of_every_schema_version_without_the_marker_opens_and_migrates(
    tmp_path: Path, pytorch_feed: str, version: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = archive_of_version(tmp_path / "archive.db", version, monkeypatch)
    assert query(db, "PRAGMA user_version") == [(version,)]
    assert query(db, "PRAGMA application_id") == [(0,)]
    assert_opens_and_migrates(db, pytorch_feed)
    assert query(db, "SELECT count(*) FROM episodes") == [(9,)]


def test_an_archive_with_a_column_of_the_user_s_own_still_opens(tmp_path: Path) -> None:
    """The schema an archive must have is its version's columns at least: a column a user
    added to a table (their own notes on episodes) does not make it another program's."""
    db = tmp_path / "archive.db"
    Archive(db).close()
    conn = sqlite3.connect(db)
    conn.execute("ALTER TABLE episodes ADD COLUMN my_rating INTEGER")
    conn.commit()
    conn.close()
    result = CliRunner().invoke(cli, ["check", "--db", str(db)])
    assert result.exit_code == 0, result.output


def test_the_frozen_tables_are_what_the_migrations_make() -> None:
    """#30: a frozen version's tables spare each opening the migrations in memory; they must
    be exactly what migrations 1 to that version make (a new version: derive it the same way)."""
    assert FROZEN_TABLES, "no frozen version"
    for version, tables in FROZEN_TABLES.items():
        made = migrated_tables(version)
        assert list(tables) == list(made), f"schema {version}: tables differ"
        for name, columns in made.items():
            assert tables[name] == columns, f"schema {version}: {name}'s columns differ"
    assert SCHEMA_VERSION in FROZEN_TABLES, (
        f"schema {SCHEMA_VERSION} has no frozen tables in store/frozen_tables.py: every opening "
        "would run the migrations in memory; add them (print migrated_tables(version))"
    )


def test_a_current_archive_missing_a_column_is_refused(tmp_path: Path) -> None:
    """The frozen tables are checked as the migrated ones were: a column gone is refused."""
    db = tmp_path / "archive.db"
    Archive(db).close()
    with closing(sqlite3.connect(db)) as conn:
        conn.execute("ALTER TABLE feed_moves DROP COLUMN reason")
        conn.commit()
    before = snapshot(db)
    code, _, err = invoke("run", FEED, "--db", str(db))
    reason = f"not the tables of a schema-{SCHEMA_VERSION} archive: feed_moves has no reason"
    assert (code, err) == (1, refused(db, reason, ["run"]))
    assert snapshot(db) == before
