"""A cluster worker keeps the episodes' media too (#26), as processes against a real Redis.

A scheduler and one worker of both shards of a two-shard cluster, two podcasts with
``media = true`` on a loopback server, one in each shard, that link one payload under two
URLs: every enclosure is downloaded once, each payload is stored once in the media folder the
shards share, each shard's ledger names its own. Then a large download is held by the server
and the worker is stopped: it exits at once, cleanly, keeping the partial file in its
shard's own partial folder (what arrived before the hold: the next poll resumes from it).
"""

from __future__ import annotations

import hashlib
import random
import sqlite3
from pathlib import Path

import pytest
from loopback import LoopbackSite, MediaFile
from redis_server import RedisServer
from test_cluster import Processes, redis_server, wait_for  # noqa: F401

from podarchive.rules.shards import shard_of, shard_path

SHARDS = 2
SIZE = 150_000


def feed_xml(name: str, enclosures: list[str]) -> str:
    items = "".join(
        f"<item><guid>{name}-{i}</guid><title>{name} {i}</title>"
        f"<pubDate>0{i + 1} Jun 2026 10:00:00 GMT</pubDate>"
        f'<enclosure url="{url}" length="{SIZE}" type="audio/mpeg"/></item>'
        for i, url in enumerate(enclosures)
    )
    return f"<?xml version='1.0'?><rss version='2.0'><channel><title>{name}</title>{items}</channel></rss>"


def one_in_each_shard(site: LoopbackSite) -> tuple[str, str]:
    """Two feed paths whose URLs hash to different shards."""
    paths = [f"/feed/{i}" for i in range(50)]
    first = paths[0]
    other = next(
        p for p in paths if shard_of(site.url(p), SHARDS) != shard_of(site.url(first), SHARDS)
    )
    return first, other


def rows(db: Path, sql: str) -> list[tuple[object, ...]]:
    """Read-only: a shard not created yet is an error, never an empty file made here."""
    conn = sqlite3.connect(f"{db.as_uri()}?mode=ro", uri=True)
    try:
        return conn.execute(sql).fetchall()
    finally:
        conn.close()


def stored_payloads(db: Path) -> set[str]:
    try:
        return {str(r[0]) for r in rows(db, "SELECT sha256 FROM episode_media")}
    except sqlite3.Error:  # not created yet, or not migrated yet
        return set()


@pytest.mark.slow
def test_a_worker_downloads_each_shards_media_once_into_the_shared_folder(
    tmp_path: Path,
    redis_server: RedisServer,  # noqa: F811
) -> None:
    bodies = {name: random.Random(name).randbytes(SIZE) for name in ("a0", "a1", "ab", "b0")}
    files = {
        "/m/a0.mp3": MediaFile(bodies["a0"]),
        "/m/a1.mp3": MediaFile(bodies["a1"]),
        "/m/ab.mp3": MediaFile(bodies["ab"]),  # one payload under two URLs, in two shards
        "/m/b-ab.mp3": MediaFile(bodies["ab"]),
        "/m/b0.mp3": MediaFile(bodies["b0"]),
    }
    big = MediaFile(random.Random("big").randbytes(4 * SIZE), chunk=1 << 14)
    big.hold_at = SIZE  # the server stops sending here until released
    with LoopbackSite() as site:
        for path, handler in files.items():
            site.handle(path, handler)
        site.handle("/m/big.mp3", big)
        path_a, path_b = one_in_each_shard(site)
        feeds = {
            path_a: feed_xml("A", [site.url(p) for p in ("/m/a0.mp3", "/m/a1.mp3", "/m/ab.mp3")]),
            path_b: feed_xml("B", [site.url(p) for p in ("/m/b-ab.mp3", "/m/b0.mp3")]),
        }
        for path, body in feeds.items():
            site.serve(path, body)
        write_schedules(tmp_path, [site.url(path_a), site.url(path_b)])
        dbs = {
            shard_of(site.url(p), SHARDS): shard_path(
                tmp_path / "shards", shard_of(site.url(p), SHARDS), SHARDS
            )
            for p in feeds
        }
        want = {hashlib.sha256(b).hexdigest() for b in bodies.values()}
        digest = {name: hashlib.sha256(b).hexdigest() for name, b in bodies.items()}
        shard_a, shard_b = (shard_of(site.url(p), SHARDS) for p in (path_a, path_b))
        # each shard's own ledger, not their union: shard A alone may already hold "ab"
        # while shard B is still fetching it under its other URL
        ledgers = {
            shard_a: {digest["a0"], digest["a1"], digest["ab"]},
            shard_b: {digest["ab"], digest["b0"]},
        }
        procs = Processes(tmp_path, redis_server.url)
        try:
            procs.start("scheduler", "scheduler", "--shards", str(SHARDS), "--tick", "0.2")
            procs.start("worker", "worker", "--shard", "0", "--shard", "1")
            wait_for(
                "each shard's payloads in its own ledger",
                lambda: all(stored_payloads(dbs[s]) == p for s, p in ledgers.items()),
            )
            media = tmp_path / "shards" / "media"
            on_disk = {p.stem for p in media.glob("??/??/*.mp3")}
            assert on_disk == want  # the shared payload once
            for sha in want:
                path = next(media.glob(f"??/??/{sha}.mp3"))
                assert hashlib.sha256(path.read_bytes()).hexdigest() == sha
            assert [len(f.sent) for f in files.values()] == [1] * 5

            # a new podcast with a large file the server holds halfway, then the worker is
            # stopped: it ends at once, keeping the partial file in its shard's own folder
            site.serve("/feed/big", feed_xml("Big", [site.url("/m/big.mp3")]))
            write_schedules(tmp_path, [*(site.url(p) for p in feeds), site.url("/feed/big")])
            wait_for("the big file held halfway", big.held.is_set)
            assert procs.stop("worker") == 0, procs.log("worker")
            shard = shard_path(tmp_path / "shards", shard_of(site.url("/feed/big"), SHARDS), SHARDS)
            partials = tmp_path / "shards" / "media" / ".partial" / shard.stem
            kept = [p for p in partials.iterdir() if not p.name.endswith(".validator")]
            assert len(kept) == 1
            part = kept[0].read_bytes()
            assert 0 < len(part) <= SIZE
            assert part == big.body[: len(part)]  # what came before the hold, kept to resume
            assert "Traceback" not in procs.log("worker"), procs.log("worker")
        finally:
            big.release.set()
            procs.stop_all()


def write_schedules(tmp_path: Path, urls: list[str]) -> None:
    directory = tmp_path / "schedules"
    directory.mkdir(exist_ok=True)
    (directory / "feeds.toml").write_text(
        "".join(
            f'[[feed]]\nurl = "{u}"\nevery = "1h"\npages = false\nmedia = true\n'
            "allow_private_hosts = true\n\n"
            for u in urls
        )
    )
