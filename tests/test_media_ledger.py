"""The media ledger of an archive (issue #26): payloads, fetches, versions, state, fixity."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest

from podarchive.core.errors import StorageError
from podarchive.core.types import EpisodeWrite, FetchRecord
from podarchive.store import Archive, FeedSave, MediaState, check_archive, transplant

NOW = "2026-12-02T12:00:00Z"
LATER = "2026-12-03T12:00:00Z"
SHA = {n: f"{n:x}" * 64 for n in range(1, 8)}  # payload names: 64 hex digits each


def episode(key: str, published: str, enclosure: str | None) -> EpisodeWrite:
    row: dict[str, Any] = {"guid": key, "title": f"Episode {key}", "published": published}
    if enclosure:
        row |= {"enclosure_url": enclosure, "enclosure_type": "audio/mpeg"}
        row["enclosure_length"] = 1000
    return EpisodeWrite(key=key, row=row, links=())


@pytest.fixture
def archive(tmp_path: Path) -> Iterator[Archive]:
    archive = Archive(tmp_path / "archive.db")
    feed = archive.ensure_feed("https://ex.example/feed", "Show", NOW)
    episodes = [
        episode("a", "2026-11-01T00:00:00Z", "https://cdn.example/a.mp3"),
        episode("b", "2026-11-02T00:00:00Z", "https://cdn.example/b.mp3"),
        episode("c", "2026-11-03T00:00:00Z", None),  # no enclosure: never media
        episode("d", "2026-11-04T00:00:00Z", "https://cdn.example/d.mp3"),
    ]
    archive.save_feed(
        FeedSave(
            feed.id, {"title": "Show"}, episodes, status=200, etag=None, last_modified=None,
            content_hash="h", now=NOW,
            records=[FetchRecord("https://ex.example/feed", "feed", NOW, 5, 200, 10)],
        )
    )  # fmt: skip
    yield archive
    archive.close()


def ids(archive: Archive) -> dict[str, int]:
    return dict(archive.db.execute("SELECT key, id FROM episodes").fetchall())


def test_a_payload_is_recorded_once(archive: Archive) -> None:
    assert archive.record_payload(SHA[1], 1000, "audio/mpeg", ".mp3", NOW)
    assert not archive.record_payload(SHA[1], 1000, "audio/mpeg", ".mp3", LATER)
    rows = archive.db.execute("SELECT sha256, size, ext, first_seen_at, last_seen_at FROM "
                              "media_payloads").fetchall()  # fmt: skip
    assert rows == [(SHA[1], 1000, ".mp3", NOW, LATER)]


def test_versions_are_added_never_overwritten(archive: Archive) -> None:
    a, url = ids(archive)["a"], "https://cdn.example/a.mp3"
    for n in (1, 2):
        archive.record_payload(SHA[n], 100 * n, "audio/mpeg", ".mp3", NOW)
    assert archive.add_media_version(a, url, SHA[1], NOW) == 1
    assert archive.add_media_version(a, url, SHA[1], LATER) == 1  # same bytes: same version
    assert archive.add_media_version(a, url, SHA[2], LATER) == 2
    versions = archive.media_versions(a, url)
    assert [(v["version"], v["sha256"], v["size"]) for v in versions] == [
        (1, SHA[1], 100),
        (2, SHA[2], 200),
    ]
    assert (versions[0]["first_seen_at"], versions[0]["last_seen_at"]) == (NOW, LATER)
    assert archive.media_versions(a, "https://other.example/a.mp3") == []


def test_dropping_a_version_says_whether_the_payload_is_still_used(archive: Archive) -> None:
    e = ids(archive)
    archive.record_payload(SHA[1], 10, None, "", NOW)
    archive.record_payload(SHA[2], 10, None, "", NOW)
    archive.add_media_version(e["a"], "https://cdn.example/a.mp3", SHA[1], NOW)
    archive.add_media_version(e["b"], "https://cdn.example/b.mp3", SHA[1], NOW)  # shared
    archive.add_media_version(e["a"], "https://cdn.example/a.mp3", SHA[2], NOW)
    assert archive.drop_media_version(e["a"], "https://cdn.example/a.mp3", SHA[1]) == 1
    assert archive.drop_media_version(e["a"], "https://cdn.example/a.mp3", SHA[2]) == 0
    links = archive.media_links(SHA[1])
    assert [(r["episode_id"], r["title"], r["version"]) for r in links] == [
        (e["b"], "Episode b", 1)
    ]
    # the next version of a still counts on: numbers are never reused
    assert archive.add_media_version(e["a"], "https://cdn.example/a.mp3", SHA[2], LATER) == 1


def test_a_fetch_is_recorded_with_its_headers(archive: Archive) -> None:
    a = ids(archive)["a"]
    archive.record_payload(SHA[1], 1000, "audio/mpeg", ".mp3", NOW)
    fetch = archive.record_media_fetch(
        a, "https://cdn.example/a.mp3", outcome="stored", now=NOW,
        final_url="https://cdn2.example/a.mp3", status=200, etag='"e1"',
        last_modified="Mon, 01 Dec 2026 00:00:00 GMT",
        headers={"Content-Type": "audio/mpeg", "Content-Length": "1000"}, moved=1000,
        sha256=SHA[1],
    )  # fmt: skip
    failed = archive.record_media_fetch(
        a, "https://cdn.example/a.mp3", outcome="failed", now=LATER, status=404, error="HTTP 404"
    )
    rows = archive._rows("SELECT * FROM media_fetches ORDER BY id")
    assert [r["id"] for r in rows] == [fetch, failed]
    assert json.loads(rows[0]["headers"]) == {
        "Content-Length": "1000",
        "Content-Type": "audio/mpeg",
    }
    assert (rows[0]["bytes"], rows[0]["sha256"], rows[0]["final_url"]) == (
        1000, SHA[1], "https://cdn2.example/a.mp3",
    )  # fmt: skip
    assert (rows[1]["outcome"], rows[1]["bytes"], rows[1]["sha256"], rows[1]["headers"]) == (
        "failed", 0, None, None,
    )  # fmt: skip


def test_a_fetch_naming_an_unknown_payload_is_refused(archive: Archive) -> None:
    with pytest.raises(StorageError):
        archive.record_media_fetch(ids(archive)["a"], "u", outcome="stored", now=NOW, sha256=SHA[3])
    assert archive.count("media_fetches") == 0  # its transaction rolled back


def test_the_download_state_is_written_whole(archive: Archive) -> None:
    a, url = ids(archive)["a"], "https://cdn.example/a.mp3"
    assert archive.media_state(a, url) is None
    state = MediaState(partial_key=f"{a}-0123456789abcdef", validator='"e1"', partial_bytes=512,
                       error_count=1, last_error="timed out", next_check_at=LATER)  # fmt: skip
    archive.set_media_state(a, url, state, NOW)
    assert archive.media_state(a, url) == state
    stored = MediaState(etag='"e1"', checks=1, next_check_at="2026-12-10T00:00:00Z")
    archive.set_media_state(a, url, stored, LATER)
    assert archive.media_state(a, url) == stored


def test_media_due_newest_first_until_stored_then_on_its_recheck(archive: Archive) -> None:
    e = ids(archive)
    feed_id = archive.feeds()[0][0]
    due = archive.media_due(feed_id, NOW)
    assert [t.episode_id for t in due] == [e["d"], e["b"], e["a"]]  # c has no enclosure
    assert due[0].url == "https://cdn.example/d.mp3"
    assert (due[0].content_type, due[0].length, due[0].stored) == ("audio/mpeg", 1000, False)
    assert due[0].state == MediaState()
    # d stored, with its re-check tomorrow; b failed, retried later today; a untouched
    archive.record_payload(SHA[1], 1000, "audio/mpeg", ".mp3", NOW)
    archive.add_media_version(e["d"], "https://cdn.example/d.mp3", SHA[1], NOW)
    archive.set_media_state(
        e["d"], "https://cdn.example/d.mp3", MediaState(etag='"e"', next_check_at=LATER), NOW
    )
    retry = MediaState(partial_key="k", partial_bytes=10, error_count=1,
                       next_check_at="2026-12-02T18:00:00Z")  # fmt: skip
    archive.set_media_state(e["b"], "https://cdn.example/b.mp3", retry, NOW)
    assert [t.episode_id for t in archive.media_due(feed_id, NOW)] == [e["a"]]
    later = archive.media_due(feed_id, LATER)
    assert [(t.episode_id, t.stored) for t in later] == [
        (e["d"], True),
        (e["b"], False),
        (e["a"], False),
    ]
    assert later[1].state == retry
    # never re-checked again: not due, whatever the time
    archive.set_media_state(e["d"], "https://cdn.example/d.mp3", MediaState(checks=3), LATER)
    assert e["d"] not in [t.episode_id for t in archive.media_due(feed_id, "2099-01-01T00:00:00Z")]
    # a feed whose enclosure URL changed: the new URL is due (nothing stored for it)
    archive.db.execute("UPDATE episodes SET enclosure_url = 'https://cdn.example/d2.mp3' "
                       "WHERE id = ?", [e["d"]])  # fmt: skip
    assert e["d"] in [t.episode_id for t in archive.media_due(feed_id, NOW)]


def test_fixity_events_and_the_audit_queue(archive: Archive) -> None:
    e = ids(archive)
    sizes = {1: 300, 2: 200, 3: 100, 4: 50}
    for n, size in sizes.items():
        archive.record_payload(SHA[n], size, "audio/mpeg", ".mp3", NOW)
        if n != 4:  # payload 4 is no episode's version (dropped by the cap): not audited
            archive.add_media_version(e["a"], "https://cdn.example/a.mp3", SHA[n], NOW)
    queue = archive.audit_queue()
    assert [r["sha256"] for r in queue] == [SHA[1], SHA[2], SHA[3]]  # none audited yet
    archive.record_fixity(SHA[1], SHA[1], SHA[1], "ok", NOW)
    archive.record_fixity(SHA[3], SHA[3], None, "missing", LATER)
    assert [r["sha256"] for r in archive.audit_queue()] == [SHA[2], SHA[1], SHA[3]]
    assert [r["sha256"] for r in archive.audit_queue(500)] == [SHA[2], SHA[1]]  # 200 + 300
    assert [r["sha256"] for r in archive.audit_queue(499)] == [SHA[2]]
    assert [r["sha256"] for r in archive.audit_queue(1)] == [SHA[2]]  # at least one
    events = archive.db.execute(
        "SELECT sha256, checked_at, expected, found, outcome FROM fixity_events ORDER BY id"
    ).fetchall()
    assert events == [(SHA[1], NOW, SHA[1], SHA[1], "ok"), (SHA[3], LATER, SHA[3], None, "missing")]
    row = archive.db.execute("SELECT last_audit_at, last_audit FROM media_payloads "
                             "WHERE sha256 = ?", [SHA[3]]).fetchone()  # fmt: skip
    assert row == (LATER, "missing")


def test_a_ledger_passes_check(archive: Archive, tmp_path: Path) -> None:
    e = ids(archive)
    archive.record_payload(SHA[1], 10, None, "", NOW)
    archive.add_media_version(e["a"], "https://cdn.example/a.mp3", SHA[1], NOW)
    archive.record_media_fetch(e["a"], "https://cdn.example/a.mp3", outcome="stored", now=NOW,
                               sha256=SHA[1])  # fmt: skip
    archive.record_fixity(SHA[1], SHA[1], SHA[1], "ok", NOW)
    archive.close()
    _, problems = check_archive(tmp_path / "archive.db")
    assert problems == []
    with closing(sqlite3.connect(tmp_path / "archive.db")) as conn:
        plan = conn.execute(
            "EXPLAIN QUERY PLAN SELECT version FROM episode_media WHERE episode_id = 1 "
            "AND url = 'u' AND sha256 = 's'"
        ).fetchall()
    assert "idx_episode_media_episode_id_url_sha256" in str(plan)


def test_reshard_moves_ledger_rows_with_their_feed(tmp_path: Path) -> None:
    """transplant: versions, fetches and states go with their episode; a payload (by its
    SHA-256, never offset) with the rows that use it, once per archive, with its audits."""
    source = tmp_path / "source.db"
    with Archive(source) as archive:
        for n, url in enumerate(("https://one.example/feed", "https://two.example/feed")):
            feed = archive.ensure_feed(url, f"Show {n}", NOW)
            archive.save_feed(
                FeedSave(
                    feed.id, {"title": f"Show {n}"},
                    [episode(f"k{n}", NOW, f"https://cdn.example/{n}.mp3")],
                    status=200, etag=None, last_modified=None, content_hash=f"h{n}", now=NOW,
                    records=[],
                )
            )  # fmt: skip
        one, two = (r[0] for r in archive.db.execute("SELECT id FROM episodes ORDER BY id"))
        archive.record_payload(SHA[1], 10, "audio/mpeg", ".mp3", NOW)  # both episodes' bytes
        archive.record_payload(SHA[2], 20, "audio/mpeg", ".mp3", NOW)  # only the second's
        archive.record_payload(SHA[3], 30, "audio/mpeg", ".mp3", NOW)  # nobody's any more
        for episode_id, n, sha in ((one, 0, SHA[1]), (two, 1, SHA[1]), (two, 1, SHA[2])):
            url = f"https://cdn.example/{n}.mp3"
            archive.add_media_version(episode_id, url, sha, NOW)
            archive.record_media_fetch(episode_id, url, outcome="stored", now=NOW, sha256=sha)
            archive.set_media_state(episode_id, url, MediaState(checks=1), NOW)
        archive.record_fixity(SHA[1], SHA[1], SHA[1], "ok", LATER)
        archive.record_fixity(SHA[2], SHA[2], None, "missing", LATER)
    shards = [tmp_path / "a.db", tmp_path / "b.db"]
    for shard in shards:
        Archive(shard).close()
    transplant(source, shards[0], ["https://one.example/feed"], orphans=True)
    transplant(source, shards[1], ["https://two.example/feed"])

    def ledger(path: Path) -> dict[str, list[tuple[Any, ...]]]:
        with closing(sqlite3.connect(path)) as conn:
            return {
                "payloads": conn.execute("SELECT sha256 FROM media_payloads ORDER BY 1").fetchall(),
                "versions": conn.execute(
                    "SELECT e.key, m.sha256, m.version FROM episode_media m "
                    "JOIN episodes e ON e.id = m.episode_id ORDER BY 1, 3"
                ).fetchall(),
                "fetches": conn.execute(
                    "SELECT e.key, f.sha256 FROM media_fetches f "
                    "JOIN episodes e ON e.id = f.episode_id ORDER BY 1, 2"
                ).fetchall(),
                "states": conn.execute(
                    "SELECT e.key, s.checks FROM media_state s "
                    "JOIN episodes e ON e.id = s.episode_id ORDER BY 1"
                ).fetchall(),
                "audits": conn.execute(
                    "SELECT sha256, outcome FROM fixity_events ORDER BY 1"
                ).fetchall(),
            }

    assert ledger(shards[0]) == {
        "payloads": [(SHA[1],), (SHA[3],)],  # the orphan goes to the shard taking orphans
        "versions": [("k0", SHA[1], 1)],
        "fetches": [("k0", SHA[1])],
        "states": [("k0", 1)],
        "audits": [(SHA[1], "ok")],
    }
    assert ledger(shards[1]) == {
        "payloads": [(SHA[1],), (SHA[2],)],
        "versions": [("k1", SHA[1], 1), ("k1", SHA[2], 2)],
        "fetches": [("k1", SHA[1]), ("k1", SHA[2])],
        "states": [("k1", 1)],
        "audits": [(SHA[1], "ok"), (SHA[2], "missing")],
    }
    for shard in shards:
        assert check_archive(shard)[1] == []


def test_reshard_splits_feeds_that_share_a_payload(tmp_path: Path) -> None:
    """A payload two feeds share, with its audit, lands in both of their new shards: the
    reshard's own check counts payloads and audits as sets, so it passes, and loses nothing."""
    from podarchive.cluster.reshard import reshard
    from podarchive.rules.shards import find_shards, shard_of, shard_path

    urls = [f"https://show{n}.example/feed" for n in range(40)]
    first = urls[0]
    other = next(u for u in urls if shard_of(u, 2) != shard_of(first, 2))
    directory = tmp_path / "shards"
    directory.mkdir()
    with Archive(shard_path(directory, 0, 1)) as archive:
        for n, url in enumerate((first, other)):
            feed = archive.ensure_feed(url, f"Show {n}", NOW)
            archive.save_feed(
                FeedSave(
                    feed.id, {"title": f"Show {n}"},
                    [episode(f"k{n}", NOW, f"https://cdn.example/{n}.mp3")],
                    status=200, etag=None, last_modified=None, content_hash=f"h{n}", now=NOW,
                    records=[],
                )
            )  # fmt: skip
        archive.record_payload(SHA[1], 10, "audio/mpeg", ".mp3", NOW)
        for n, (episode_id,) in enumerate(archive.db.execute("SELECT id FROM episodes")):
            archive.add_media_version(episode_id, f"https://cdn.example/{n}.mp3", SHA[1], NOW)
        archive.record_fixity(SHA[1], SHA[1], SHA[1], "ok", LATER)

    reshard(directory, 2)

    for path in find_shards(directory, 2):
        with closing(sqlite3.connect(path)) as conn:
            assert conn.execute("SELECT sha256 FROM media_payloads").fetchall() == [(SHA[1],)]
            assert conn.execute("SELECT outcome FROM fixity_events").fetchall() == [("ok",)]
            assert conn.execute("SELECT count(*) FROM episode_media").fetchone() == (1,)
