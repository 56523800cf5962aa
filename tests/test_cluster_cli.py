"""The cluster's commands as a user runs them: scheduler, worker, reshard, status, serve.

Each failure is one line and the right exit code; ``status --shards-dir`` aggregates the
shards and, with ``--broker``, their workers. Real SQLite shards made by the pipeline on a
loopback server, a real Redis (tests/redis_server.py).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from datetime import date, timedelta
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import FAST_ENV
from loopback import LoopbackSite
from redis_server import RedisServer

from podarchive.cli import cli
from podarchive.cluster.broker import Cluster
from podarchive.read.schedule_files import FeedSchedule
from podarchive.rules.shards import shard_of, shard_path
from podarchive.store import Archive
from podarchive.update.run import update_feeds

SHARDS = 2


@pytest.fixture
def redis_server(tmp_path: Path) -> Iterator[RedisServer]:
    with RedisServer(tmp_path / "redis") as server:
        yield server


def rss(name: str) -> str:
    return (
        "<?xml version='1.0'?><rss version='2.0'><channel>"
        f"<title>{name}</title><link>https://example.com/{name}</link><description>d</description>"
        f"<item><title>{name} one</title><guid>{name}-1</guid><description>notes</description></item>"
        "</channel></rss>"
    )


def make_shards(site: LoopbackSite, directory: Path, feeds: int = 6) -> list[str]:
    """``feeds`` feeds archived by the pipeline into the shards their URLs hash to."""
    urls = []
    for i in range(feeds):
        site.serve(f"/f/{i}", rss(f"show{i}"))
        urls.append(site.url(f"/f/{i}"))
    site.serve("/f/broken", "not a feed", status=500)
    urls.append(site.url("/f/broken"))
    directory.mkdir(parents=True, exist_ok=True)
    for shard in range(SHARDS):
        mine = [u for u in urls if shard_of(u, SHARDS) == shard]
        with Archive(shard_path(directory, shard, SHARDS)) as archive:
            update_feeds(archive, [FeedSchedule(url=u, pages=False) for u in mine])
    return urls


def run(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, **FAST_ENV}
    return subprocess.run(
        [sys.executable, "-m", "podarchive", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )


def test_scheduler_once_as_a_process(tmp_path: Path, redis_server: RedisServer) -> None:
    schedules = tmp_path / "schedules"
    schedules.mkdir()
    (schedules / "a.toml").write_text('[[feed]]\nurl = "https://example.com/feed"\n')
    done = run(
        "scheduler", "--broker", redis_server.url, "--shards", "4",
        "--schedules", str(schedules), "--once",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "enqueued 0 due feeds" in done.stderr
    assert done.stderr.count("no worker has published it yet") == 4
    assert "Traceback" not in done.stderr
    probe = Cluster(redis_server.url)
    assert probe.shards() == 4
    probe.close()
    again = run(
        "scheduler", "--broker", redis_server.url, "--shards", "8",
        "--schedules", str(schedules), "--once",
    )  # fmt: skip
    assert again.returncode == 2
    assert again.stderr.strip().splitlines() == [
        f"podarchive: error: the cluster at {redis_server.url} has 4 shards, not 8 "
        "('podarchive reshard' changes it)"
    ]


def test_a_worker_that_cannot_reach_its_broker_is_one_line(tmp_path: Path) -> None:
    done = run("worker", "--broker", "redis://127.0.0.1:9/0", "--shard", "0")
    assert done.returncode == 1
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1
    assert lines[0].startswith("podarchive: cannot reach the broker at redis://127.0.0.1:9/0")


def test_command_line_mistakes(tmp_path: Path, redis_server: RedisServer) -> None:
    runner = CliRunner()
    no_broker = runner.invoke(cli, ["worker", "--shard", "0"], env={"PODARCHIVE_BROKER": ""})
    assert no_broker.exit_code == 2
    assert "--broker" in no_broker.output
    probe = Cluster(redis_server.url)
    probe.init_shards(4)
    probe.close()
    wrong = runner.invoke(cli, ["worker", "--broker", redis_server.url, "--shard", "7"])
    assert wrong.exit_code == 2
    assert "shard 7 does not exist: there are 4 (0 to 3)" in wrong.output
    bad_url = runner.invoke(cli, ["scheduler", "--broker", "http://example.com", "--once"])
    assert bad_url.exit_code == 1
    assert "not a Redis URL" in bad_url.output
    empty = runner.invoke(cli, ["serve", "--shards-dir", str(tmp_path / "nothing")])
    assert empty.exit_code == 2
    assert "no shard archives (shard-K-of-N.db)" in empty.output


def test_status_aggregates_the_shards_and_their_workers(
    tmp_path: Path, redis_server: RedisServer
) -> None:
    directory = tmp_path / "shards"
    with LoopbackSite() as site:
        urls = make_shards(site, directory)
    probe = Cluster(redis_server.url)
    probe.init_shards(SHARDS)
    from podarchive.core.clock import iso, utcnow

    probe.beat(0, {"pid": 1, "host": "here", "seen_at": iso(utcnow()), "polled": 3})
    probe.beat(1, {"pid": 2, "host": "there", "seen_at": "2026-01-01T00:00:00Z"})
    probe.close()
    runner = CliRunner()
    result = runner.invoke(
        cli, ["status", "--shards-dir", str(directory), "--broker", redis_server.url]
    )
    assert result.exit_code == 1  # shard 1's worker is silent
    out = result.output
    for i in range(6):
        assert f"show{i} " in out  # each shard's feeds, by title
    assert "shard 0 of 2: " in out
    assert "worker pid 1 on here, seen" in out
    assert "shard 1 of 2: " in out
    assert "NO WORKER: the last (pid 2 on there) silent since 2026-01-01T00:00:00Z" in out
    doc = json.loads(
        runner.invoke(
            cli, ["status", "--shards-dir", str(directory), "--json", "--failing-for", "1w"]
        ).output
    )
    assert {f["url"]: f["shard"] for f in doc["feeds"]} == {u: shard_of(u, SHARDS) for u in urls}
    assert doc["cluster"]["shards"] == SHARDS
    assert sum(d["feeds"] for d in doc["cluster"]["detail"]) == len(urls)
    assert doc["workers_missing"] == []  # no broker asked: no verdict on workers
    done = run("status", "--shards-dir", str(directory), "--failing-for", "1w")
    assert done.returncode == 0, done.stderr
    assert "shard 1 of 2" in done.stdout


def test_reshard_through_the_command_line(tmp_path: Path, redis_server: RedisServer) -> None:
    directory = tmp_path / "shards"
    with LoopbackSite() as site:
        urls = make_shards(site, directory)
    probe = Cluster(redis_server.url)
    probe.init_shards(SHARDS)
    probe.sync(0, [])
    done = run(
        "reshard", "--shards", "3", "--shards-dir", str(directory), "--broker", redis_server.url
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"resharded {len(urls)} feeds from 2 to 3 shards in ")
    assert probe.shards() == 3
    assert probe.synced(0) is None  # each worker publishes its index again
    probe.close()
    for shard in range(3):
        with Archive.open_to_read(shard_path(directory, shard, 3)) as archive:
            assert {u for _, u, _ in archive.feeds()} == {
                u for u in urls if shard_of(u, 3) == shard
            }
    twice = run("reshard", "--shards", "3", "--shards-dir", str(directory), "--from", "2")
    assert twice.returncode == 2
    assert len(twice.stderr.strip().splitlines()) == 1


def test_a_schedule_entry_reaches_the_worker_whole() -> None:
    """What a scheduler sends is what the worker polls with (name, pages, intervals)."""
    from podarchive.cluster.broker import schedule_from_message, schedule_to_message

    entry = FeedSchedule(
        url="https://example.com/f",
        name="F",
        every=timedelta(minutes=30),
        pages=False,
        user_agent="ua",
        transcripts=False,
        media=True,
        media_types=("video",),
        media_since=date(2024, 1, 31),
        media_versions=2,
    )
    assert schedule_from_message(json.loads(json.dumps(schedule_to_message(entry)))) == entry


def test_a_second_worker_of_a_shard_is_refused(tmp_path: Path, redis_server: RedisServer) -> None:
    """One writer per shard: the archive's lock, held here as a first worker would."""
    from podarchive.runtime.lock import archive_lock

    probe = Cluster(redis_server.url)
    probe.init_shards(SHARDS)
    probe.close()
    directory = tmp_path / "shards"
    directory.mkdir()
    held = archive_lock(shard_path(directory, 1, SHARDS)).acquire()
    try:
        done = run(
            "worker", "--broker", redis_server.url, "--shard", "1",
            "--shards-dir", str(directory),
        )  # fmt: skip
    finally:
        held.release()
    assert done.returncode == 1
    lines = done.stderr.strip().splitlines()
    assert lines[-1].startswith("podarchive: another worker or run (pid ")
    assert lines[-1].endswith(f"holds {shard_path(directory, 1, SHARDS)}")
    assert "Traceback" not in done.stderr
