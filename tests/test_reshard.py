"""``reshard`` (#16): every feed re-homed into its new shard with its whole history.

The layouts of 1, 2 and 3 shards are archived by the real pipeline from one loopback site:
copies of the PyTorch fixture (pages, transcripts, chapters; the copies share those bodies,
so ``documents`` are shared between feeds and shards) and two feeds that serve the same
bytes (one ``snapshot`` shared by two feeds), each polled twice with a changed feed in
between (episode and feed revisions). The feed URLs are picked so that every pair of
(shard of 2, shard of 3) and every shard of 4 has a feed.

Rows are compared by content, every table's ids replaced by natural keys (a feed by its
URL, a body by its hash, any other row by its content with its references resolved the
same way), feed by feed, before and after.
"""

from __future__ import annotations

import hashlib
import shutil
import sqlite3
from collections import Counter
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from loopback import LoopbackSite, serve_pytorch

import podarchive.cluster.reshard as reshard_module
from podarchive.cluster.reshard import ReshardReport, reshard
from podarchive.core.errors import ArchiveLocked, ConfigError, StorageError
from podarchive.core.settings import Settings
from podarchive.read.schedule_files import FeedSchedule
from podarchive.rules.shards import find_shards, shard_layouts, shard_of, shard_path
from podarchive.runtime.lock import archive_lock
from podarchive.store import SCHEMA_VERSION, Archive, Transplanted, check_archive, transplant
from podarchive.store.migrations_links import LINK_SUMMARY_TABLES
from podarchive.update.run import update_feeds

SETTINGS = Settings(
    connect_timeout=2, read_timeout=2, deadline=10, allow_private_hosts=True, host_gap=0,
    retry_base=0.01, retries=0,
)  # fmt: skip
START = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)
SAME_FEED = """<?xml version="1.0" encoding="utf-8"?>
<rss version="2.0"><channel><title>Twice served</title><link>https://twice.example/</link>
<description>One body at two addresses.</description>
<item><guid>twice-1</guid><title>Echo one</title><description>Quaternion echo.</description>
<pubDate>Mon, 06 Jun 2022 13:00:00 +0000</pubDate></item>
<item><guid>twice-2</guid><title>Echo two</title><description>Second echo.</description>
<pubDate>Tue, 07 Jun 2022 13:00:00 +0000</pubDate></item>
</channel></rss>"""
WEAK = b"<title>Weak references</title>"
STRIDES = b"<title>Strides</title>"
FEED_TITLE = b"<title>PyTorch Developer Podcast</title>"


class Site:
    """The loopback site, the feeds it serves and how each poll changes them."""

    def __init__(self, site: LoopbackSite) -> None:
        self.site = site
        self.pytorch: list[str] = []
        self.twice: list[str] = []
        combos: set[tuple[int, int]] = set()
        fours: set[int] = set()
        for i in range(500):
            url = site.url(f"/p{i}/feed.xml")
            combo, four = (shard_of(url, 2), shard_of(url, 3)), shard_of(url, 4)
            if combo not in combos or four not in fours:
                combos.add(combo)
                fours.add(four)
                assert serve_pytorch(site, prefix=f"/p{i}") == url
                self.pytorch.append(url)
            if len(combos) == 6 and len(fours) == 4:
                break
        for i in range(500):
            a, b = site.url(f"/same{i}a.xml"), site.url(f"/same{i}b.xml")
            if all(shard_of(a, n) != shard_of(b, n) for n in (2, 3, 4)):
                self.twice = [a, b]
                break
        for url in self.twice:
            site.serve(url.removeprefix(site.url("")), SAME_FEED, etag='"same-v1"')
        assert len(self.twice) == 2

    @property
    def urls(self) -> list[str]:
        return [*self.pytorch, *self.twice]

    def change(self, version: int) -> None:
        """Poll 2 (version 2) renames an episode and the feed; poll 3 another episode, and
        the feed gains an item."""
        for url in self.pytorch:
            path = url.removeprefix(self.site.url(""))
            reply = self.site.routes[path]
            assert not callable(reply)
            body = reply.body
            if version == 2:
                body = body.replace(WEAK, b"<title>Weak references, revised</title>")
                body = body.replace(FEED_TITLE, b"<title>PyTorch Dev Podcast</title>", 1)
            else:
                body = body.replace(STRIDES, b"<title>Strides, revised</title>")
                extra = b"<item><guid>bonus-1</guid><title>Bonus</title></item>"
                body = body.replace(b"<item>", extra + b"<item>", 1)
            self.site.serve(path, body, etag=f'"feed-v{version}"', content_type=reply.content_type)


def poll(db: Path, urls: list[str], at: datetime) -> list[Any]:
    with Archive(db) as archive:
        report = update_feeds(
            archive, [FeedSchedule(url=u) for u in urls], settings=SETTINGS, clock=lambda: at
        )
    assert not report.failed, [f.error for f in report.failed]
    return report.feeds


def build_layout(directory: Path, shards: int, urls: list[str], at: datetime) -> None:
    directory.mkdir(exist_ok=True)
    for k in range(shards):
        mine = [u for u in urls if shard_of(u, shards) == k]
        if mine:
            poll(shard_path(directory, k, shards), mine, at)


@pytest.fixture(scope="module")
def layouts(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Site, dict[int, Path]]]:
    """Pristine layouts of 1, 2 and 3 shards (copied by each test), polled twice; the site
    then serves version 3 of the feeds, for the polls after a reshard."""
    root = tmp_path_factory.mktemp("layouts")
    with LoopbackSite() as loopback:
        site = Site(loopback)
        dirs = {n: root / f"in{n}" for n in (1, 2, 3)}
        for n, directory in dirs.items():
            build_layout(directory, n, site.urls, START)
        site.change(2)
        for n, directory in dirs.items():
            build_layout(directory, n, site.urls, START + timedelta(hours=1))
        site.change(3)
        yield site, dirs


def copy_layout(source: Path, target: Path) -> Path:
    shutil.copytree(source, target)
    return target


# reading archives by content --------------------------------------------------------------


def _fts_and_shadows(conn: sqlite3.Connection) -> set[str]:
    names = {
        str(r[0])
        for r in conn.execute(
            "SELECT name FROM sqlite_master WHERE sql LIKE 'CREATE VIRTUAL TABLE%USING FTS5%'"
        )
    }
    return {f"{n}{s}" for n in names for s in ("", "_config", "_data", "_docsize", "_idx")}


def dump(db: Path) -> dict[tuple[str, str], Counter[Any]]:
    """(table, owner) → the multiset of the table's rows by content. The owner is the URL of
    the feed a row belongs to (directly or through its episode), or ``*`` for shared rows
    (documents, hosts). Each id is replaced by its row's natural key: a feed's URL, a
    document's or snapshot's hash, any other row's content (references resolved alike)."""
    conn = sqlite3.connect(db)
    conn.row_factory = sqlite3.Row
    try:
        skip = _fts_and_shadows(conn) | set(LINK_SUMMARY_TABLES)  # per archive, as FTS
        names = [
            str(r[0])
            for r in conn.execute(
                "SELECT name FROM sqlite_master WHERE type = 'table' "
                "AND name NOT LIKE 'sqlite_%' ORDER BY name"
            )
            if str(r[0]) not in skip
        ]
        refs = {
            t: {str(r[3]): str(r[2]) for r in conn.execute(f"PRAGMA foreign_key_list([{t}])")}
            for t in names
        }
        data = {
            t: {r["_row"]: dict(r) for r in conn.execute(f"SELECT rowid AS _row, * FROM [{t}]")}
            for t in names
        }
    finally:
        conn.close()
    memo: dict[tuple[str, int], Any] = {}

    def key(table: str, rowid: int | None) -> Any:
        if rowid is None:
            return None
        if (table, rowid) not in memo:
            row = data[table][rowid]
            if table == "feeds":
                memo[table, rowid] = row["url"]
            elif table in ("documents", "snapshots"):
                memo[table, rowid] = row["hash"]
            else:
                memo[table, rowid] = (table, content(table, row))
        return memo[table, rowid]

    def content(table: str, row: dict[str, Any]) -> tuple[Any, ...]:
        return tuple(
            (c, key(refs[table][c], v) if c in refs[table] else v)
            for c, v in sorted(row.items())
            if c not in ("_row", "id")
        )

    def owner(table: str, row: dict[str, Any]) -> str:
        if table == "feeds":
            return str(row["url"])
        for column, referred in refs[table].items():
            if referred == "feeds" and row[column] is not None:
                return str(data["feeds"][row[column]]["url"])
        for column, referred in refs[table].items():
            if referred == "episodes" and row[column] is not None:
                return owner("episodes", data["episodes"][row[column]])
        return "*"

    found: dict[tuple[str, str], Counter[Any]] = {}
    for table in names:
        for row in data[table].values():
            belongs = "*" if table in ("documents", "snapshots") else owner(table, row)
            if table == "snapshots":  # its owner is whichever feed served it first
                row = {c: v for c, v in row.items() if c != "feed_id"}
            if table == "documents":  # a body shared by feeds: their earliest fetch of it
                row = {c: v for c, v in row.items() if c not in ("url", "first_fetched_at")}
            found.setdefault((table, belongs), Counter())[content(table, row)] += 1
    return found


def layout_dump(paths: list[Path]) -> dict[tuple[str, str], Counter[Any]]:
    """The union of the shards' dumps; shared rows (bodies, hosts) as sets: a body two
    feeds share may be in two shards, and every shard has every host."""
    merged: dict[tuple[str, str], Counter[Any]] = {}
    for path in paths:
        for where, rows in dump(path).items():
            if where[1] == "*":
                merged[where] = Counter(dict.fromkeys(merged.get(where, Counter()) | rows, 1))
            else:
                merged[where] = merged.get(where, Counter()) + rows
    return merged


def searches(paths: list[Path]) -> set[tuple[str, str, str]]:
    """What full-text search finds in every index, across the shards: (index, feed, hit)."""
    hits = set()
    queries = {
        "episodes_fts": (
            "SELECT f.url, e.key FROM episodes_fts JOIN episodes e ON e.id = episodes_fts.rowid "
            "JOIN feeds f ON f.id = e.feed_id WHERE episodes_fts MATCH ?"
        ),
        "transcript_segments_fts": (
            "SELECT f.url, e.key || s.position FROM transcript_segments_fts "
            "JOIN transcript_segments s ON s.id = transcript_segments_fts.rowid "
            "JOIN episodes e ON e.id = s.episode_id JOIN feeds f ON f.id = e.feed_id "
            "WHERE transcript_segments_fts MATCH ?"
        ),
        "chapters_fts": (
            "SELECT f.url, e.key || c.position FROM chapters_fts "
            "JOIN chapters c ON c.id = chapters_fts.rowid "
            "JOIN episodes e ON e.id = c.episode_id JOIN feeds f ON f.id = e.feed_id "
            "WHERE chapters_fts MATCH ?"
        ),
    }
    for path in paths:
        conn = sqlite3.connect(path)
        try:
            for index, sql in queries.items():
                for word in ("tensor", "quaternion", "references", "revised", "the"):
                    hits |= {(index, str(u), str(k)) for u, k in conn.execute(sql, [word])}
        finally:
            conn.close()
    return hits


def digests(directory: Path) -> dict[str, str]:
    return {
        p.name: hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(directory.iterdir())
        if p.is_file() and not p.name.endswith(".lock")
    }


# reshard, end to end ---------------------------------------------------------------------


@pytest.mark.parametrize(("old", "new"), [(2, 3), (3, 2), (1, 4)])
def test_reshard_moves_every_feed_with_its_whole_history(
    layouts: tuple[Site, dict[int, Path]], tmp_path: Path, old: int, new: int
) -> None:
    site, dirs = layouts
    directory = copy_layout(dirs[old], tmp_path / "shards")
    before_files = digests(directory)
    old_paths = find_shards(directory)
    before = layout_dump(old_paths)
    found_before = searches(old_paths)

    report = reshard(directory, new)

    assert isinstance(report, ReshardReport)
    assert (report.old_shards, report.new_shards) == (old, new)
    assert report.paths == tuple(shard_path(directory, k, new) for k in range(new))
    assert sum(report.feeds) == report.feeds_moved == len(site.urls)
    assert report.rows["feeds"] == len(site.urls)
    assert report.rows["episodes"] == sum(
        n for (t, _), c in before.items() if t == "episodes" for n in c.values()
    )
    assert report.seconds > 0
    # the old layout is untouched, byte for byte, and beside it now is the new one
    assert digests(directory) == {
        **before_files,
        **{p.name: digests(directory)[p.name] for p in report.paths},
    }
    assert all(before_files[name] == digests(directory)[name] for name in before_files)
    assert sorted(shard_layouts(directory)) == sorted({old, new})
    assert not list(directory.glob("*.partial*"))

    new_paths = list(report.paths)
    for k, path in enumerate(new_paths):
        tables, problems = check_archive(path)
        assert problems == [], problems
        assert len(tables) == 3
        with sqlite3.connect(path) as conn:
            urls = [str(u) for (u,) in conn.execute("SELECT url FROM feeds")]
        conn.close()
        assert all(shard_of(u, new) == k for u in urls)
        assert len(urls) == report.feeds[k]
        # every row of the shard belongs to one of its feeds (or is a shared body or host)
        assert {owner for (_, owner) in dump(path)} <= {*urls, "*"}
    assert layout_dump(new_paths) == before
    assert searches(new_paths) == found_before


def _feed_state(db: Path, url: str) -> dict[tuple[str, str], Counter[Any]]:
    """One feed's rows by content, without what a poll measures (when and how long each
    fetch took)."""
    found = {}
    for (table, owner), rows in dump(db).items():
        if owner != url:
            continue
        if table in ("fetches", "captures"):
            # the wall clock's, not the run's (a capture's Date is in its response_values)
            timing = (
                "ms", "started_at", "request_headers_id", "response_headers_id",
                "response_values",
            )  # fmt: skip
            untimed: Counter[Any] = Counter()
            for row, n in rows.items():
                untimed[tuple(x for x in row if x[0] not in timing)] += n
            rows = untimed
        found[table] = rows
    return found


def test_a_poll_after_reshard_continues_each_feeds_history(
    layouts: tuple[Site, dict[int, Path]], tmp_path: Path
) -> None:
    """The third poll of every feed (a renamed episode, a new one) on its new shard does what
    it does on its old one: the archived episodes are unchanged, not new; revisions go on."""
    site, dirs = layouts
    directory = copy_layout(dirs[2], tmp_path / "shards")
    control = copy_layout(dirs[2], tmp_path / "control")
    reshard(directory, 3)
    at = START + timedelta(hours=2)
    for url in site.urls:
        new_db = shard_path(directory, shard_of(url, 3), 3)
        old_db = shard_path(control, shard_of(url, 2), 2)
        revisions = _count(new_db, url, "episode_revisions")
        (after,) = poll(new_db, [url], at)
        (same,) = poll(old_db, [url], at)
        assert (after.stats, after.not_modified) == (same.stats, same.not_modified)
        if url in site.pytorch:
            assert (after.stats.new, after.stats.changed, after.stats.unchanged) == (1, 1, 8)
            assert _count(new_db, url, "episode_revisions") > revisions
        else:  # unchanged since: its ETag came along
            assert after.not_modified
        assert _feed_state(new_db, url) == _feed_state(old_db, url)
    for path in find_shards(directory, 3):
        assert check_archive(path)[1] == []


def _count(db: Path, url: str, table: str) -> int:
    with sqlite3.connect(db) as conn:
        (n,) = conn.execute(
            f"SELECT count(*) FROM {table} t JOIN episodes e ON e.id = t.episode_id "
            "JOIN feeds f ON f.id = e.feed_id WHERE f.url = ?",
            [url],
        ).fetchone()
    conn.close()
    return int(n)


# refusals and failures leave the directory as it was ----------------------------------------


def test_refusals(layouts: tuple[Site, dict[int, Path]], tmp_path: Path) -> None:
    _, dirs = layouts
    directory = copy_layout(dirs[2], tmp_path / "shards")
    with pytest.raises(ConfigError, match="already in 2 shards"):
        reshard(directory, 2)
    with pytest.raises(ConfigError, match="number of shards"):
        reshard(directory, 0)
    with pytest.raises(ConfigError, match="no archive of a 5-shard layout"):
        reshard(directory, 3, from_shards=5)
    (directory / "shard-1-of-3.db").write_bytes(b"")
    with pytest.raises(ConfigError, match="give --shards N"):
        reshard(directory, 4)  # which layout to start from?
    with pytest.raises(ConfigError, match="already holds archives of a 3-shard layout"):
        reshard(directory, 3, from_shards=2)
    assert sorted(shard_layouts(directory)) == [2, 3]
    with pytest.raises(ConfigError, match="no shard archives"):
        reshard(tmp_path / "empty", 2)


def test_a_held_lock_refuses_with_one_line(
    layouts: tuple[Site, dict[int, Path]], tmp_path: Path
) -> None:
    _, dirs = layouts
    directory = copy_layout(dirs[2], tmp_path / "shards")
    before = digests(directory)
    worker = archive_lock(shard_path(directory, 1, 2)).acquire()  # a running worker's
    with worker, pytest.raises(ArchiveLocked) as raised:
        reshard(directory, 3)
    message = str(raised.value)
    assert "\n" not in message
    assert "stop the workers" in message
    assert "shard-1-of-2.db" in message
    assert digests(directory) == before
    assert sorted(shard_layouts(directory)) == [2]
    report = reshard(directory, 3)  # the lock released, it goes through
    assert report.feeds_moved > 0


def test_an_old_shard_of_another_schema_version_is_refused(
    layouts: tuple[Site, dict[int, Path]], tmp_path: Path
) -> None:
    _, dirs = layouts
    directory = copy_layout(dirs[2], tmp_path / "shards")
    conn = sqlite3.connect(shard_path(directory, 0, 2))
    conn.execute("PRAGMA user_version = 10")
    conn.close()
    before = digests(directory)
    with pytest.raises(StorageError, match=f"schema version 10, not {SCHEMA_VERSION}"):
        reshard(directory, 3)
    assert digests(directory) == before


def test_a_failure_midway_leaves_no_partial_file(
    layouts: tuple[Site, dict[int, Path]], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _, dirs = layouts
    directory = copy_layout(dirs[2], tmp_path / "shards")
    before = digests(directory)
    calls = []

    def failing(*args: Any, **kwargs: Any) -> Transplanted:
        calls.append(args)
        if len(calls) == 4:
            raise StorageError("disk full (simulated)")
        return transplant(*args, **kwargs)

    monkeypatch.setattr(reshard_module, "transplant", failing)
    with pytest.raises(StorageError, match="simulated"):
        reshard(directory, 3)
    assert len(calls) == 4
    assert digests(directory) == before
    assert not list(directory.glob("*.partial*"))
    assert sorted(shard_layouts(directory)) == [2]


def test_a_wrong_count_is_caught_before_anything_is_renamed(
    layouts: tuple[Site, dict[int, Path]], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A copy that lost a row (a bug in the copy, simulated) fails the check."""
    _, dirs = layouts
    directory = copy_layout(dirs[2], tmp_path / "shards")
    before = digests(directory)

    def lossy(source: Path, destination: Path, *args: Any, **kwargs: Any) -> Transplanted:
        done = transplant(source, destination, *args, **kwargs)
        with sqlite3.connect(destination) as conn:
            conn.execute("DELETE FROM links WHERE id = (SELECT max(id) FROM links)")
        conn.close()
        return done

    monkeypatch.setattr(reshard_module, "transplant", lossy)
    with pytest.raises(StorageError, match=r"reshard check failed: \d+ links rows"):
        reshard(directory, 3)
    assert digests(directory) == before
    assert not list(directory.glob("*.partial*"))


def test_a_leftover_partial_file_is_replaced(
    layouts: tuple[Site, dict[int, Path]], tmp_path: Path
) -> None:
    """A crashed reshard's partial files are its own: the next one starts them afresh."""
    _, dirs = layouts
    directory = copy_layout(dirs[1], tmp_path / "shards")
    (directory / "shard-1-of-2.db.partial").write_bytes(b"half a database")
    report = reshard(directory, 2)
    assert not list(directory.glob("*.partial*"))
    assert all(check_archive(p)[1] == [] for p in report.paths)


# transplant on its own ------------------------------------------------------------------------


def test_transplant_refuses_a_feed_twice_or_one_it_does_not_have(
    layouts: tuple[Site, dict[int, Path]], tmp_path: Path
) -> None:
    site, dirs = layouts
    source = shard_path(dirs[1], 0, 1)
    target = tmp_path / "target.db"
    Archive(target).close()
    first = site.urls[:2]
    done = transplant(source, target, first)
    assert done.feeds == 2
    assert done.rows["episodes"] > 0
    with pytest.raises(StorageError, match="already a feed of"):
        transplant(source, target, first[1:])
    with pytest.raises(StorageError, match="is not a feed of"):
        transplant(source, target, ["https://nowhere.example/feed.xml"])
    again = transplant(source, target, site.urls[2:])  # ids offset past the first copy's
    assert again.feeds == len(site.urls) - 2
    assert check_archive(target)[1] == []
    assert layout_dump([target]) == layout_dump([source])


def test_a_shared_snapshot_follows_the_feed_that_did_not_own_it(
    layouts: tuple[Site, dict[int, Path]], tmp_path: Path
) -> None:
    """The two feeds serving the same bytes share one snapshot, owned by the first; the
    second, moved alone, takes a copy it owns, and reads back the same bodies."""
    site, dirs = layouts
    source = shard_path(dirs[1], 0, 1)
    target = tmp_path / "target.db"
    Archive(target).close()
    first, second = site.twice
    transplant(source, target, [second])
    assert check_archive(target)[1] == []
    with Archive.open_read_only(source) as old, Archive.open_read_only(target) as new:
        old_id = old.feed_state(second)
        new_id = new.feed_state(second)
        assert old_id is not None
        assert new_id is not None
        assert new.feed_observations(new_id.id) == old.feed_observations(old_id.id)
        (owner,) = new.db.execute("SELECT DISTINCT feed_id FROM snapshots").fetchone()
        assert owner == new_id.id
        assert new.db.execute("SELECT count(*) FROM feeds").fetchone()[0] == 1
    assert first not in {u for (_, u) in dump(target)}


def test_hosts_merge_keeping_the_longer_block(tmp_path: Path) -> None:
    source, target = tmp_path / "source.db", tmp_path / "target.db"
    for db, rows in (
        (source, [("a.example", "2026-01-02T00:00:00Z"), ("b.example", "2026-01-01T00:00:00Z")]),
        (target, [("a.example", "2026-01-01T00:00:00Z"), ("b.example", "2026-01-03T00:00:00Z")]),
    ):
        Archive(db).close()
        with sqlite3.connect(db) as conn:
            conn.executemany(
                "INSERT INTO hosts (host, not_before, reason, updated_at) VALUES (?, ?, ?, ?)",
                [(h, t, f"from {db.stem}", t) for h, t in rows],
            )
        conn.close()
    transplant(source, target, [])
    with sqlite3.connect(target) as conn:
        hosts = conn.execute("SELECT host, not_before, reason FROM hosts ORDER BY host").fetchall()
    conn.close()
    assert hosts == [
        ("a.example", "2026-01-02T00:00:00Z", "from source"),
        ("b.example", "2026-01-03T00:00:00Z", "from target"),
    ]


def test_a_table_nobody_decided_about_stops_the_copy(tmp_path: Path) -> None:
    source, target = tmp_path / "source.db", tmp_path / "target.db"
    for db in (source, target):
        Archive(db).close()
        with sqlite3.connect(db) as conn:
            conn.execute("CREATE TABLE notes (id INTEGER PRIMARY KEY, text TEXT)")
        conn.close()
    with pytest.raises(StorageError, match="table notes belongs to no feed"):
        transplant(source, target, [])
