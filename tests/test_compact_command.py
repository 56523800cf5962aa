"""``podarchive compact`` (#30): an archive with free pages (links added, then deleted) gets
them back: the file shrinks, every row and the WAL mode stay, the command prints the sizes.
A run holding the archive, or another connection having it open, is refused in one line with
the file untouched; a failure half way (the copy cannot be written) leaves the original as it
was, in WAL mode, with no copy left behind."""

from __future__ import annotations

import shutil
import sqlite3
from contextlib import closing
from pathlib import Path

import pytest
from archive_rows import every_row, schema
from commands import invoke, podarchive

from podarchive.runtime.lock import archive_lock, daemon_lock
from podarchive.store import Archive
from podarchive.store.compact_file import compact_path

V14 = Path(__file__).parent / "fixtures" / "archives" / "v14.sqlite"


@pytest.fixture
def archive(tmp_path: Path) -> Path:
    """An archive of this version in WAL mode with about 2 MB of free pages."""
    path = tmp_path / "archive.db"
    shutil.copy(V14, path)
    with Archive(path) as opened:
        conn = opened.db.conn
        episode = conn.execute("SELECT min(id) FROM episodes").fetchone()[0]
        with conn:
            conn.executemany(
                "INSERT INTO links (episode_id, source, position, url, domain, revision_id) "
                "VALUES (?, 'feed', ?, ?, 'x.example', 1)",
                [(episode, 1000 + k, f"https://x.example/{k:0>200}") for k in range(8000)],
            )
        opened.checkpoint()
        with conn:
            conn.execute("DELETE FROM links WHERE domain = 'x.example'")
        opened.checkpoint()
    return path


def state(path: Path) -> tuple[object, ...]:
    with closing(sqlite3.connect(path)) as conn:
        mode = conn.execute("PRAGMA journal_mode").fetchone()[0]
        return every_row(conn), schema(conn), mode


def test_compact_gives_the_free_pages_back(archive: Path) -> None:
    before, size = state(archive), archive.stat().st_size
    code, out, err = invoke("compact", "--db", str(archive))
    assert (code, err) == (0, "")
    assert out.startswith(f"{archive}: ")
    assert "MB given back" in out
    assert archive.stat().st_size < size / 2
    assert state(archive) == before  # every row, the schema, WAL mode
    assert not compact_path(archive).exists()
    with Archive(archive) as opened:  # still an archive this version writes to
        assert opened.schema_version > 0


@pytest.mark.parametrize("lock", [archive_lock, daemon_lock])
def test_compact_refuses_while_a_run_or_a_daemon_holds_the_archive(
    archive: Path, lock: object
) -> None:
    before = archive.read_bytes()
    with lock(archive).acquire():  # type: ignore[operator]
        code, out, err = invoke("compact", "--db", str(archive))
    assert code == 1
    assert out == ""
    assert len(err.strip().splitlines()) == 1
    assert "Traceback" not in err
    assert archive.read_bytes() == before


def test_compact_refuses_while_another_connection_has_it_open(archive: Path) -> None:
    before = state(archive)
    with closing(sqlite3.connect(archive)) as other:
        other.execute("SELECT count(*) FROM episodes").fetchone()  # WAL: it holds the -shm
        code, _, err = invoke("compact", "--db", str(archive))
    assert code == 1
    assert "open elsewhere" in err
    assert len(err.strip().splitlines()) == 1
    assert state(archive) == before


def test_a_failure_half_way_leaves_the_original_untouched(archive: Path) -> None:
    """The copy's path is taken by a directory: VACUUM INTO fails after the original was
    switched to a rollback journal; it is switched back, every row as it was."""
    before, size = state(archive), archive.stat().st_size
    compact_path(archive).mkdir()
    code, out, err = invoke("compact", "--db", str(archive))
    assert code == 1
    assert out == ""
    assert len(err.strip().splitlines()) == 1
    assert "cannot compact" in err
    assert state(archive) == before
    assert archive.stat().st_size == size
    assert compact_path(archive).is_dir()  # not ours to remove


def test_compact_as_a_real_process(archive: Path, tmp_path: Path) -> None:
    size = archive.stat().st_size
    done = podarchive("compact", "--db", str(archive), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "MB given back" in done.stdout
    assert archive.stat().st_size < size / 2
    missing = podarchive("compact", "--db", str(tmp_path / "none.db"), cwd=tmp_path)
    assert missing.returncode == 1
    assert len(missing.stderr.strip().splitlines()) == 1
