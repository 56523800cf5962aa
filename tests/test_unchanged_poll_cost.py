"""An unchanged poll is cheap (#30): a 304, or a 200 with the body kept last, costs at most
:data:`MOST` SQL statements, all in one transaction, and leaves the archive exactly as the
general store path does (fetch log, validators, next_due_at, captures, redirect sightings).

Statements are counted with sqlite3's trace callback on the archive's own connection: a
count, not a stopwatch. Figures of its CPU cost: ``benchmarks/unchanged_poll.py``.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from loopback import LoopbackSite

from podarchive.core.clock import iso
from podarchive.core.settings import Settings
from podarchive.read.schedule_files import FeedSchedule
from podarchive.rules.policy import jitter
from podarchive.store import Archive
from podarchive.update import one_feed
from podarchive.update.run import RunReport, update_due, update_feeds

MOST = 8  # statements per unchanged feed, BEGIN and COMMIT included
SETTINGS = Settings(retries=0, host_gap=0, allow_private_hosts=True)
T0 = datetime(2026, 12, 2, 12, 0, tzinfo=UTC)
#: every feed due again, the fresh one too; a clock with microseconds, which iso() drops
T1 = T0 + timedelta(hours=4, microseconds=654321)
HOUR = timedelta(hours=1)
BODY = (
    b'<?xml version="1.0"?><rss version="2.0"><channel><title>Show</title>'
    b"<item><guid>ep-1</guid><title>One</title></item></channel></rss>"
)
LAST_MODIFIED = "Wed, 02 Dec 2026 10:00:00 GMT"
WRITES = ("INSERT", "UPDATE", "DELETE", "REPLACE")
#: kind → (path, what the loopback server does): an ETag (304), nothing (the same 200), an
#: ETag and a freshness hint (304 with Cache-Control, a floor three hours on)
KINDS = {
    "304": "/etag",
    "same-200": "/same",
    "304-fresh": "/fresh",
    "304-cron": "/cron",  # a 304 of a feed scheduled by cron
}


@pytest.fixture(scope="module")
def site() -> Iterator[LoopbackSite]:
    with LoopbackSite() as site:
        for n in range(3):
            site.serve(f"/etag/{n}.xml", BODY, etag='"v1"', last_modified=LAST_MODIFIED)
            site.serve(f"/same/{n}.xml", BODY)
            site.serve(f"/cron/{n}.xml", BODY, etag='"c1"')
            site.serve(
                f"/fresh/{n}.xml", BODY, etag='"f1"', headers={"Cache-Control": "max-age=10800"}
            )
        yield site


def schedules(site: LoopbackSite, kind: str, feeds: int = 1) -> list[FeedSchedule]:
    return [
        FeedSchedule(
            url=site.url(f"{KINDS[kind]}/{n}.xml"),
            every=None if kind == "304-cron" else HOUR,
            cron="*/20 * * * *" if kind == "304-cron" else None,
            pages=False,
            transcripts=False,
            chapters=False,
            allow_private_hosts=True,
        )
        for n in range(feeds)
    ]


def first_poll(db: Path, feeds: list[FeedSchedule]) -> None:
    with Archive(db) as archive:
        report = update_feeds(archive, feeds, settings=SETTINGS, clock=lambda: T0)
    assert not report.failed
    assert not any(f.not_modified for f in report.feeds)


@contextmanager
def traced(archive: Archive) -> Iterator[list[str]]:
    statements: list[str] = []
    archive.db.conn.set_trace_callback(statements.append)
    try:
        yield statements
    finally:
        archive.db.conn.set_trace_callback(None)


def poll(db: Path, feeds: list[FeedSchedule], *, due: bool = False) -> tuple[RunReport, list[str]]:
    """The unchanged poll at T1, by ``run URL`` (``update_feeds``: a cluster worker's stream
    too) or by the daemon's and cron's ``update_due``; its statements."""
    with Archive(db) as archive, traced(archive) as statements:
        run = update_due if due else update_feeds
        report = run(archive, feeds, settings=SETTINGS, clock=lambda: T1)
    assert not report.failed
    assert all(f.not_modified for f in report.feeds)
    return report, statements


def keyword(statement: str) -> str:
    return statement.split(None, 1)[0].upper()


@pytest.mark.parametrize("due", [False, True], ids=["update_feeds", "update_due"])
@pytest.mark.parametrize("kind", list(KINDS))
def test_an_unchanged_poll_costs_at_most_8_statements(
    site: LoopbackSite, tmp_path: Path, kind: str, due: bool
) -> None:
    """Per feed: what three feeds cost beyond one, halved (the run's own reads are not a
    feed's); each feed is one BEGIN … COMMIT, with no savepoint and no write outside it."""
    counts = {}
    for feeds in (1, 3):
        db = tmp_path / f"{feeds}.db"
        first_poll(db, schedules(site, kind, feeds))
        _, statements = poll(db, schedules(site, kind, feeds), due=due)
        counts[feeds] = len(statements)
        words = [keyword(s) for s in statements]
        assert words.count("BEGIN") == words.count("COMMIT") == feeds, statements
        assert not {"SAVEPOINT", "RELEASE", "ROLLBACK"} & set(words), statements
        inside = False
        for word, statement in zip(words, statements, strict=True):
            inside = word == "BEGIN" or (inside and word != "COMMIT")
            assert inside or word not in WRITES, statement
    per_feed = (counts[3] - counts[1]) / 2
    assert per_feed <= MOST, counts
    # the run's own: its read of the hosts' blocks (twice by update_due, with one read of
    # every feed's state), the listed feeds' states in one read (not one per feed), and the
    # archive's one look at its version (once it is opened)
    assert counts[1] - per_feed <= (5 if due else 3), counts


def test_stale_redirect_sightings_are_cleared_within_the_limit(
    site: LoopbackSite, tmp_path: Path
) -> None:
    """A feed whose last poll met a permanent redirect and this one not: its sightings are
    cleared (as before), in the same transaction; a feed without any never pays that."""
    feeds = schedules(site, "304")
    db = tmp_path / "a.db"
    first_poll(db, feeds)
    with Archive(db) as archive:
        archive.record_redirect(1, 301, "http://elsewhere.example/feed", iso(T0))
    _, statements = poll(db, feeds)
    deletes = [s for s in statements if keyword(s) == "DELETE"]
    assert len(deletes) == 1
    assert "feed_redirects" in deletes[0]
    assert len(statements) - 2 <= MOST  # the run's read of hosts, the archive's version
    _, statements = poll(db, feeds)
    assert not [s for s in statements if keyword(s) == "DELETE"]
    with Archive(db) as archive:
        assert archive.redirect_sightings(1) == []


# the state after: as the general store path leaves it --------------------------------


FEED_ROW = "SELECT * FROM feeds ORDER BY id"
FETCHES = (
    "SELECT feed_id, episode_id, kind, url, status, bytes, error, warning FROM fetches ORDER BY id"
)
CAPTURES = (
    "SELECT c.kind, c.feed_id, c.episode_id, c.method, c.url, c.http_version, c.status, "
    "c.reason, q.headers, r.headers, c.content_encoding, c.body_sha256, c.body_size, "
    "c.snapshot_id, c.document_id, c.payload_sha256, c.software, "
    "json_array_length(c.response_values) FROM captures c "
    "JOIN header_sets q ON q.id = c.request_headers_id "
    "JOIN header_sets r ON r.id = c.response_headers_id ORDER BY c.id"
)
REDIRECTS = "SELECT feed_id, status, target, seen_at FROM feed_redirects ORDER BY id"


def next_due_at(db: Path) -> object:
    conn = sqlite3.connect(db)
    try:
        return conn.execute("SELECT next_due_at FROM feeds").fetchone()[0]
    finally:
        conn.close()


def dump(db: Path) -> dict[str, list[tuple[object, ...]]]:
    conn = sqlite3.connect(db)
    try:
        queries = {"feeds": FEED_ROW, "fetches": FETCHES, "captures": CAPTURES}
        return {name: conn.execute(sql).fetchall() for name, sql in queries.items()} | {
            "redirects": conn.execute(REDIRECTS).fetchall()
        }
    finally:
        conn.close()


@pytest.mark.parametrize("sighting", [False, True], ids=["plain", "stale-sighting"])
@pytest.mark.parametrize("kind", list(KINDS))
def test_the_archive_after_is_the_general_paths(
    site: LoopbackSite, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kind: str, sighting: bool
) -> None:
    """The same two polls with the unchanged path and with the general one (the path every
    poll took before #30): the same feeds row, fetch log, captures and sightings."""
    feeds = schedules(site, kind)
    dumps = []
    for general in (False, True):
        db = tmp_path / f"{general}.db"
        first_poll(db, feeds)
        if sighting:
            with Archive(db) as archive:
                archive.record_redirect(1, 301, "http://elsewhere.example/feed", iso(T0))
        if general:
            monkeypatch.setattr(one_feed, "_unchanged_poll", lambda outcome, now: None)
        report, _ = poll(db, feeds)
        monkeypatch.undo()
        dumps.append(dump(db))
        # what a cluster worker publishes without reading it back: as stored, either path
        assert report.feeds[0].due == (next_due_at(db), False)
    fast, general_dump = dumps
    assert fast == general_dump


@pytest.mark.parametrize("kind", ["304", "same-200", "304-fresh"])
def test_the_state_after_an_unchanged_poll(site: LoopbackSite, tmp_path: Path, kind: str) -> None:
    feeds = schedules(site, kind)
    db = tmp_path / "a.db"
    first_poll(db, feeds)
    before = dump(db)
    poll(db, feeds)
    conn = sqlite3.connect(db)
    conn.row_factory = sqlite3.Row
    try:
        feed = conn.execute("SELECT * FROM feeds").fetchone()
        fetch = conn.execute("SELECT * FROM fetches ORDER BY id DESC").fetchone()
        capture = conn.execute("SELECT * FROM captures ORDER BY id DESC").fetchone()
        snapshot = conn.execute("SELECT id, hash FROM snapshots").fetchone()
    finally:
        conn.close()
    status = 200 if kind == "same-200" else 304
    assert len(dump(db)["fetches"]) == len(before["fetches"]) + 1
    assert (fetch["kind"], fetch["url"], fetch["status"]) == ("feed", feeds[0].url, status)
    assert (feed["last_status"], feed["error_count"], feed["last_error"]) == (status, 0, None)
    assert feed["last_fetched_at"] == feed["last_success_at"] == iso(T1)
    assert feed["content_hash"] == snapshot["hash"]  # kept, whatever answered
    validators = {
        "304": ('"v1"', LAST_MODIFIED),
        "same-200": (None, None),
        "304-fresh": ('"f1"', None),
    }
    assert (feed["etag"], feed["last_modified"]) == validators[kind]
    if kind == "304-fresh":  # the server's freshness wins over the hour and its jitter
        assert feed["next_due_at"] == feed["not_before"] == iso(T1 + 3 * HOUR)
    else:
        second = T1.replace(microsecond=0)  # as the poll's time was stored
        assert feed["next_due_at"] == iso(second + HOUR + jitter(feeds[0].url, HOUR))
        assert feed["not_before"] is None
    assert capture["status"] == status
    assert capture["request_headers_id"]
    assert capture["response_headers_id"]
    if kind == "same-200":  # the body is the snapshot kept last
        assert capture["snapshot_id"] == snapshot["id"]
        assert capture["body_sha256"] == snapshot["hash"]
        assert capture["body_size"] == len(BODY)
    else:
        assert capture["snapshot_id"] is None
        assert capture["body_sha256"] is None
