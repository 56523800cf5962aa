"""Migration 9 on the v7 fixture (#13): the archive's first write fills ``tags`` from its snapshots.

`tests/fixtures/archives/v7.sqlite` holds the PyTorch feed seen four times (2026-12-01..04: a
retitled episode, a body kept as a delta of the one before, then two episodes gone), 9 episodes
whose items carry ``podcast:person``, ``podcast:transcript`` and ``podcast:chapters``, and a feed
that only ever failed. Migration 9 cannot parse, so the first command that writes (here
``reparse``, through the CLI and as a real subprocess) rebuilds the feeds from their snapshots:
every episode's podcast tags are then those of the last body that listed it (read here again,
independently, with lxml), the typed views answer, ``feeds.tags_filled_at`` is set, and a
second command does not fill again. No row of the old archive is lost. A fresh archive's feeds
never need filling.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import subprocess
import sys
import zlib
from contextlib import closing
from pathlib import Path
from typing import Any

from commands import invoke
from conftest import FAST_ENV
from test_tags_archive import Element, TagRow, current_tags, own_text, qname, read_feed

from podarchive.core.settings import Settings
from podarchive.read.schedule_files import FeedSchedule
from podarchive.store import Archive
from podarchive.update.run import update_feeds

V7 = Path(__file__).parent / "fixtures" / "archives" / "v7.sqlite"
SRC = Path(__file__).resolve().parents[1] / "src"
FILLING = "filling podcast tags from the stored snapshots"
PYTORCH = "PyTorch Developer Podcast"
BROKEN = "http://127.0.0.1:37617/broken.xml"  # the fixture's failing feed: no snapshots


def copy_v7(tmp_path: Path) -> Path:
    path = tmp_path / "archive.db"
    shutil.copy(V7, path)
    return path


def podarchive(*args: str) -> subprocess.CompletedProcess[str]:
    """The real command, in a subprocess."""
    return subprocess.run(
        [sys.executable, "-m", "podarchive", *args],
        capture_output=True,
        text=True,
        env={**os.environ, **FAST_ENV, "PYTHONPATH": str(SRC)},
        timeout=120,
        check=False,
    )


def v7_tables(conn: sqlite3.Connection) -> dict[str, list[str]]:
    """The tables of rows (not FTS ones), with their columns."""
    names = [
        name
        for (name,) in conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' "
            "AND sql NOT LIKE 'CREATE VIRTUAL TABLE%' AND name NOT LIKE '%_fts_%'"
        )
    ]
    return {t: [r[1] for r in conn.execute(f"PRAGMA table_info([{t}])")] for t in names}


def counts(path: Path, tables: dict[str, list[str]]) -> dict[str, int]:
    with closing(sqlite3.connect(path)) as conn:
        return {t: conn.execute(f"SELECT count(*) FROM [{t}]").fetchone()[0] for t in tables}


def full_bodies(path: Path) -> list[tuple[str, bytes]]:
    """The PyTorch feed's bodies as served, in order, read from the file with sqlite3 and zlib.

    A body kept as a delta (``base_id``) shares its base's items region byte for byte: the
    items it lists are its base's, so it is left out here.
    """
    with closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True)) as conn:
        rows = conn.execute(
            "SELECT b.seen_at, s.body, s.base_id FROM feed_bodies b "
            "JOIN snapshots s ON s.id = b.snapshot_id JOIN feeds f ON f.id = b.feed_id "
            "WHERE f.name = ? ORDER BY b.seen_at, b.id",
            [PYTORCH],
        ).fetchall()
    assert [base is not None for _, _, base in rows] == [False, False, True, False]
    return [(at, zlib.decompress(body)) for at, body, base in rows if base is None]


def item_guid(item: Any) -> str:
    guid = next(own_text(c) for c in item if qname(c)[1] == "guid")
    assert guid is not None
    return guid


def expected_from_snapshots(path: Path) -> tuple[list[Element], dict[str, list[Element]]]:
    """The podcast elements of the channel (last body) and of each item, by guid (the last
    body that listed it)."""
    channel: list[Element] = []
    items: dict[str, list[Element]] = {}
    for _, body in full_bodies(path):
        feed = read_feed(body)
        assert feed is not None
        channel = [e for e in feed.elements if e.scope is None]
        for index, item in enumerate(feed.items):
            items[item_guid(item)] = [e for e in feed.elements if e.scope == index]
    return channel, items


def shape(elements: list[Element]) -> list[tuple[str, dict[str, str], str | None]]:
    return [(e.name, e.attributes, e.text) for e in elements]


def stored_shape(rows: list[TagRow]) -> list[tuple[str, dict[str, Any], str | None]]:
    return [(r.name, r.attributes, r.text) for r in rows if r.ns == "podcast"]


def feed_ids(conn: sqlite3.Connection) -> tuple[int, int]:
    pytorch = conn.execute("SELECT id FROM feeds WHERE name = ?", [PYTORCH]).fetchone()[0]
    broken = conn.execute("SELECT id FROM feeds WHERE url = ?", [BROKEN]).fetchone()[0]
    return pytorch, broken


def every_tag(path: Path) -> list[tuple[Any, ...]]:
    with closing(sqlite3.connect(path)) as conn:
        return conn.execute("SELECT * FROM tags ORDER BY id").fetchall()


def filled_at(path: Path) -> list[tuple[Any, ...]]:
    with closing(sqlite3.connect(path)) as conn:
        return conn.execute("SELECT id, tags_filled_at FROM feeds ORDER BY id").fetchall()


# --- the fixture, before ------------------------------------------------------------------


def test_the_v7_snapshots_hold_persons_transcripts_and_chapters_for_every_episode() -> None:
    channel, items = expected_from_snapshots(V7)
    assert len(items) == 9
    assert all(any(e.name == "person" for e in tags) for tags in items.values())
    names = {e.name for tags in items.values() for e in tags}
    assert {"person", "transcript", "chapters"} <= names
    assert channel  # podcast:guid, locked, funding…
    assert len(full_bodies(V7)) == 3
    with closing(sqlite3.connect(f"file:{V7}?mode=ro", uri=True)) as conn:
        assert conn.execute("PRAGMA user_version").fetchone() == (7,)
        assert conn.execute("SELECT count(*) FROM episodes").fetchone() == (9,)
        assert conn.execute("SELECT url FROM feeds WHERE name IS NULL").fetchall() == [(BROKEN,)]


# --- the first write after the upgrade -------------------------------------------------------


def test_reparse_after_the_upgrade_fills_every_episode_s_tags_from_its_snapshots(
    tmp_path: Path,
) -> None:
    path = copy_v7(tmp_path)
    channel, items = expected_from_snapshots(path)
    code, out, err = invoke("-v", "reparse", "--db", str(path))
    assert code == 0, err
    assert FILLING in err
    assert f"{PYTORCH}: 4 bodies replayed" in out
    with closing(sqlite3.connect(path)) as conn:
        pytorch, broken = feed_ids(conn)
        rows = current_tags(conn, pytorch)
        assert stored_shape([r for r in rows if r.episode_id is None]) == shape(channel)
        episodes = conn.execute(
            "SELECT id, guid FROM episodes WHERE feed_id = ? ORDER BY id", [pytorch]
        ).fetchall()
        assert len(episodes) == 9
        for episode_id, guid in episodes:  # listed or not any more: as last seen
            mine = [r for r in rows if r.episode_id == episode_id]
            assert stored_shape(mine) == shape(items[guid]), guid
            assert all(r.parent_id is None for r in mine if r.ns == "podcast")
        # the persons of every episode, through the view, with the spec's defaults
        persons = conn.execute(
            'SELECT e.guid, p.name, p.role, p."group", p.img, p.href FROM persons p '
            "JOIN episodes e ON e.id = p.episode_id ORDER BY p.id"
        ).fetchall()
        assert persons == [
            (
                guid,
                p.text,
                p.attributes.get("role", "host"),
                p.attributes.get("group", "cast"),
                p.attributes.get("img"),
                p.attributes.get("href"),
            )
            for _, guid in episodes
            for p in items[guid]
            if p.name == "person"
        ]
        assert {guid for guid, *_ in persons} == {guid for _, guid in episodes}
        assert conn.execute("SELECT count(*) FROM tags WHERE feed_id = ?", [broken]).fetchone() == (
            0,
        )
        # the history's times, not the upgrade's: each scope's tags are as old as the body
        # that first had them
        seen = {at for at, _ in full_bodies(path)}
        stamps = set(conn.execute("SELECT seen_from FROM tags UNION SELECT seen_until FROM tags"))
        assert {at for (at,) in stamps} - {None} <= seen
    assert all(stamp is not None for _, stamp in filled_at(path))
    with Archive(path) as archive:
        assert archive.feeds_without_tags() == []


def test_the_fill_runs_once_a_real_subprocess_then_the_cli(tmp_path: Path) -> None:
    """The first command that writes fills; the next one opens the archive and fills nothing
    (it reparses only the failing feed, which has no snapshots: the PyTorch feed's tags are
    not rebuilt, their ids stay)."""
    path = copy_v7(tmp_path)
    first = podarchive("-v", "reparse", BROKEN, "--db", str(path))
    assert first.returncode == 0, first.stderr
    assert FILLING in first.stderr
    assert f"{PYTORCH}: 4 bodies replayed for its tags" in first.stderr
    tags, stamps = every_tag(path), filled_at(path)
    assert len(tags) > 9
    assert all(stamp is not None for _, stamp in stamps)
    code, _, err = invoke("-v", "reparse", BROKEN, "--db", str(path))
    assert code == 0, err
    assert FILLING not in err
    assert "bodies replayed for its tags" not in err
    assert every_tag(path) == tags
    assert filled_at(path) == stamps


def test_the_fill_loses_no_row_of_the_old_archive(tmp_path: Path) -> None:
    path = copy_v7(tmp_path)
    with closing(sqlite3.connect(path)) as conn:
        tables = v7_tables(conn)
        (fts_rows,) = conn.execute("SELECT count(*) FROM episodes_fts").fetchone()
    before = counts(path, tables)
    code, _, err = invoke("reparse", "--db", str(path))
    assert code == 0, err
    assert counts(path, tables) == before
    with closing(sqlite3.connect(path)) as conn:
        assert conn.execute("SELECT count(*) FROM episodes_fts").fetchone() == (fts_rows,)
        conn.execute("INSERT INTO episodes_fts(episodes_fts) VALUES('integrity-check')")
        assert conn.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
        assert conn.execute("PRAGMA foreign_key_check").fetchall() == []


def old_values(path: Path, tables: dict[str, list[str]]) -> dict[str, list[tuple[Any, ...]]]:
    """Every column of the v7 tables but the ids a reparse renumbers (links, revisions)."""
    out = {}
    with closing(sqlite3.connect(path)) as conn:
        for table, cols in tables.items():
            kept = [
                c
                for c in cols
                if not (table in ("links", "episode_revisions", "feed_revisions") and c == "id")
                and c != "revision_id"
            ]
            select = ", ".join(f"[{c}]" for c in kept)
            out[table] = sorted(conn.execute(f"SELECT {select} FROM [{table}]"), key=repr)
    return out


def test_the_fill_keeps_every_old_value(tmp_path: Path) -> None:
    """The fill is a reparse, and a reparse with the parser that archived the feed leaves it
    as it was: every value of the v7 archive (removal marks, revisions, links, row hashes)
    is kept; the fill only adds tags and ``tags_filled_at``."""
    path = copy_v7(tmp_path)
    with closing(sqlite3.connect(path)) as conn:
        tables = v7_tables(conn)
    before = old_values(path, tables)
    code, _, err = invoke("reparse", "--db", str(path))
    assert code == 0, err
    after = old_values(path, tables)
    changed = {
        table: [(old, new) for old, new in zip(before[table], rows, strict=False) if old != new]
        or f"{len(before[table])} rows, then {len(rows)}"
        for table, rows in after.items()
        if rows != before[table]
    }
    assert changed == {}


# --- a fresh archive ------------------------------------------------------------------------


def test_a_fresh_archive_s_feeds_never_need_filling(tmp_path: Path, pytorch_feed: str) -> None:
    path = tmp_path / "fresh.db"
    schedule = FeedSchedule(
        url=pytorch_feed, allow_private_hosts=True, pages=False, transcripts=False, chapters=False
    )
    with Archive(path) as archive:
        report = update_feeds(archive, [schedule], settings=Settings(host_gap=0, retries=0))
        assert report.failed == []
        assert archive.feeds_without_tags() == []
        assert archive.db.execute("SELECT count(*) FROM persons").fetchone()[0] >= 9
    assert all(stamp is not None for _, stamp in filled_at(path))
    code, _, err = invoke("-v", "reparse", "--db", str(path))
    assert code == 0, err
    assert FILLING not in err


def test_the_fill_on_a_fresh_archive_s_own_feed_gives_what_the_run_gave(
    tmp_path: Path, pytorch_feed: str
) -> None:
    """The fill is a reparse: forgetting ``tags_filled_at`` on an archive the pipeline wrote
    makes the next write rebuild the same tags (same scopes, names, attributes, texts)."""
    path = tmp_path / "fresh.db"
    schedule = FeedSchedule(
        url=pytorch_feed, allow_private_hosts=True, pages=False, transcripts=False, chapters=False
    )
    with Archive(path) as archive:
        update_feeds(archive, [schedule], settings=Settings(host_gap=0, retries=0))

    def tags_by_key() -> list[tuple[Any, ...]]:
        with closing(sqlite3.connect(path)) as conn:
            return conn.execute(
                "SELECT e.key, t.position, t.ns, t.namespace, t.name, t.attributes, t.text, "
                "t.seen_from, t.seen_until, p.name FROM tags t "
                "LEFT JOIN episodes e ON e.id = t.episode_id "
                "LEFT JOIN tags p ON p.id = t.parent_id ORDER BY t.id"
            ).fetchall()

    run = tags_by_key()
    with closing(sqlite3.connect(path)) as conn:
        conn.execute("UPDATE feeds SET tags_filled_at = NULL")
        conn.commit()
    code, _, err = invoke("-v", "reparse", "--db", str(path))
    assert code == 0, err
    assert FILLING in err
    assert tags_by_key() == run
