"""WebSub on the cluster's scheduler (#29), as processes against a real Redis: a scheduler
with ``--listen``/``--public-url`` and a worker, a feed on a loopback server that names the
stub hub. The scheduler learns the hub from the shard's archive, subscribes, answers the
verification; a bad signature makes nothing due; a signed notification gets the new
episode into the shard without waiting for the hourly poll; a feed removed from the
schedule is unsubscribed."""

from __future__ import annotations

import json
import sqlite3
import time
import urllib.error
from pathlib import Path

import pytest
from click.testing import CliRunner
from loopback import LoopbackSite, Reply
from redis_server import RedisServer, _free_port
from test_cluster import Processes, redis_server, wait_for  # noqa: F401
from test_push import rss
from websub_hub import HubSub, StubHub

from podarchive.cli import cli
from podarchive.cluster.broker import Cluster, due_key
from podarchive.cluster.push import SUBS_KEY, BrokerPushStore
from podarchive.rules.shards import shard_path

SHARDS = 1


def write_schedule(tmp_path: Path, urls: list[str], private: tuple[str, ...] = ()) -> None:
    """``urls`` every hour; those in ``private`` (all, when empty) may reach private hosts."""
    directory = tmp_path / "schedules"
    directory.mkdir(exist_ok=True)
    (directory / "feeds.toml").write_text(
        "".join(
            f'[[feed]]\nurl = "{u}"\nevery = "1h"\npages = false\n'
            f"allow_private_hosts = {str(not private or u in private).lower()}\n\n"
            for u in urls
        )
    )


def episodes(db: Path) -> int:
    try:
        conn = sqlite3.connect(f"{db.as_uri()}?mode=ro", uri=True)
        try:
            return int(conn.execute("SELECT count(*) FROM episodes").fetchone()[0])
        finally:
            conn.close()
    except sqlite3.Error:  # not created or not migrated yet
        return 0


def feed_polls(site: LoopbackSite) -> int:
    return sum(1 for r in site.requests if r.path == "/feed")


def state(cluster: Cluster, url: str) -> str | None:
    raw = cluster.redis.hget(SUBS_KEY, url)
    return None if raw is None else str(json.loads(raw)["state"])


def published(hub: StubHub, sub: HubSub, body: bytes) -> bool:
    """A signed notification the endpoint took (202); False while it is not listening."""
    try:
        return hub.publish(sub, body) == 202
    except urllib.error.URLError:
        return False


def scheduler_args(port: int) -> list[str]:
    return [
        "scheduler", "--shards", str(SHARDS), "--tick", "0.5",
        "--listen", f"127.0.0.1:{port}", "--public-url", f"http://127.0.0.1:{port}",
    ]  # fmt: skip


@pytest.mark.slow
def test_the_scheduler_subscribes_and_a_signed_notification_is_polled_at_once(
    tmp_path: Path,
    redis_server: RedisServer,  # noqa: F811
) -> None:
    port = _free_port()
    db = shard_path(tmp_path / "shards", 0, SHARDS)
    cluster = Cluster(redis_server.url)
    with StubHub(lease=3600) as hub, LoopbackSite() as site:
        url = site.url("/feed")
        site.routes["/feed"] = Reply(rss(1, hub.url, url))
        write_schedule(tmp_path, [url])
        procs = Processes(tmp_path, redis_server.url)
        procs.env["PODARCHIVE_PUSH_LOOK_S"] = "1"
        try:
            procs.start("scheduler", *scheduler_args(port))
            procs.start("worker", "worker", "--shard", "0")
            wait_for("the first poll", lambda: episodes(db) == 1)
            wait_for("a verified subscription", lambda: any(s.verified for s in hub.asked))
            sub = hub.subscriptions()[0]
            assert sub.verified == 200
            assert sub.topic == url
            assert sub.callback.startswith(f"http://127.0.0.1:{port}/websub/")
            wait_for("the subscription live in the broker", lambda: state(cluster, url) == "live")
            polls = feed_polls(site)
            site.routes["/feed"] = Reply(rss(2, hub.url, url))
            # a bad signature: acknowledged, one line, the feed not made due
            assert hub.publish(sub, b"<rss/>", signature="sha256=" + "0" * 64) == 202
            wait_for("the ignored line", lambda: "a bad signature" in procs.log("scheduler"))
            assert (cluster.redis.zscore(due_key(0), url) or 0) > time.time() + 600
            # a signed one: enqueued at once, polled through the pipeline
            posted = time.monotonic()
            assert hub.publish(sub, b"<rss>not the feed</rss>") == 202
            wait_for("the pushed episode", lambda: episodes(db) == 2, patience=5)
            print(f"notification to archived episode: {time.monotonic() - posted:.3f} s")
            assert feed_polls(site) == polls + 1
            store = BrokerPushStore(cluster, tmp_path / "shards", SHARDS)
            wait_for("both notices kept", lambda: len(store.notices(url)) == 2)
            notices = store.notices(url)
            assert [n.signature_valid for n in notices] == [False, True]
            assert notices[1].body == b"<rss>not the feed</rss>"
            assert notices[1].content_type == "application/rss+xml"
            # a restarted scheduler keeps the subscriptions (they live in the broker)
            assert procs.stop("scheduler") == 0
            procs.start("scheduler", *scheduler_args(port))
            site.routes["/feed"] = Reply(rss(3, hub.url, url))
            wait_for("the endpoint back", lambda: published(hub, sub, b"again"))
            wait_for("pushed after a restart", lambda: episodes(db) == 3, patience=5)
            assert len(hub.subscriptions()) == 1  # not asked again: the lease runs
            # the feed leaves the schedule (another takes its place): unsubscribed
            site.routes["/other"] = Reply(rss(1, hub.url, site.url("/other")).replace(b"hub", b"x"))
            write_schedule(tmp_path, [site.url("/other")])
            wait_for("the unsubscription", lambda: hub.subscriptions("unsubscribe"))
            wait_for("gone", lambda: state(cluster, url) == "gone")
            assert "schedule reloaded: 1 feeds" in procs.log("scheduler")
            assert procs.stop("scheduler") == 0
            assert procs.stop("worker") == 0
        finally:
            procs.stop_all()
            cluster.close()
    for name in ("scheduler", "worker"):
        assert "Traceback" not in procs.log(name)


def test_the_scheduler_s_push_options_are_checked(tmp_path: Path) -> None:
    runner = CliRunner()
    base = ["scheduler", "--broker", "redis://127.0.0.1:1/0", "--schedules", str(tmp_path)]
    result = runner.invoke(cli, [*base, "--listen", "127.0.0.1:0"])
    assert result.exit_code == 2
    assert "--listen and --public-url go together" in result.output
    once = [*base, "--once", "--listen", "127.0.0.1:0", "--public-url", "http://x"]
    result = runner.invoke(cli, once)
    assert result.exit_code == 2
    assert "does not go with --once" in result.output


@pytest.mark.slow
def test_a_hub_unreachable_or_refused_is_one_line_and_status_shows_it(
    tmp_path: Path,
    redis_server: RedisServer,  # noqa: F811
) -> None:
    """Feed A names a hub on a closed port (its schedule allows private hosts); feed B one on
    a private address (its schedule does not: the guard refuses it). Both are polled; each
    failure is one line of the scheduler's log; ``status --shards-dir --broker`` shows it."""
    port = _free_port()
    closed = f"http://127.0.0.1:{_free_port()}/hub"
    db = shard_path(tmp_path / "shards", 0, SHARDS)
    with LoopbackSite() as site:
        a, b = site.url("/a"), site.url("/b")
        site.routes["/a"] = Reply(rss(1, closed, a))
        site.routes["/b"] = Reply(rss(1, "http://10.1.2.3/hub", b))
        write_schedule(tmp_path, [a, b], private=(a,))
        procs = Processes(tmp_path, redis_server.url)
        procs.env["PODARCHIVE_PUSH_LOOK_S"] = "1"
        try:
            procs.start("scheduler", *scheduler_args(port))
            procs.start("worker", "worker", "--shard", "0")
            wait_for("both feeds polled", lambda: episodes(db) == 2)
            wait_for("two failures", lambda: procs.log("scheduler").count("polling only") == 2)
            result = CliRunner().invoke(
                cli,
                ["status", "--shards-dir", str(tmp_path / "shards"), "--json",
                 "--broker", redis_server.url],
            )  # fmt: skip
            doc = json.loads(result.stdout)
            push = {f["url"]: f["push"] for f in doc["feeds"]}
            assert push[a]["state"] == "failed"
            assert "hub unreachable" in push[a]["line"]
            assert push[b]["state"] == "failed"
            assert "blocked" in push[b]["line"]
            text = CliRunner().invoke(
                cli,
                ["status", "--shards-dir", str(tmp_path / "shards"), "--broker", redis_server.url],
            )
            assert text.stdout.count("failed (") == 2, text.stdout
            assert procs.stop("scheduler") == 0
        finally:
            procs.stop_all()
    lines = [line for line in procs.log("scheduler").splitlines() if "polling only" in line]
    assert len(lines) == 2
    assert all(" WARNING " in line for line in lines)
    assert "Traceback" not in procs.log("scheduler")
