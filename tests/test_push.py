"""WebSub (#29): the rules, the callback endpoint, and the daemon end to end with a stub hub
on loopback (subscribe, verify, a signed notification archives the new episode without
waiting for the poll, bad signatures ignored, a 10 s lease renewed, a removed feed
unsubscribed, a restart, a hub that refuses)."""

from __future__ import annotations

import hashlib
import hmac
import logging
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import closing, contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

from loopback import LoopbackSite, Reply
from websub_hub import StubHub, get, rss

from podarchive.core.settings import Settings
from podarchive.daemon.push import PushManager
from podarchive.daemon.push_http import PushServer
from podarchive.daemon.scheduler import Daemon
from podarchive.daemon.service import PushOptions, cycle_update, push_side
from podarchive.read.schedule_files import FeedSchedule
from podarchive.rules.push import (
    Asked,
    challenge_for,
    hub_and_topic,
    push_line,
    renew_at,
    signature_ok,
    stretched,
)
from podarchive.store import Archive

log = logging.getLogger("test_push")


# the rules --------------------------------------------------------------------------------


def test_hub_and_topic_need_both_http_links() -> None:
    assert hub_and_topic([("hub", "https://h/"), ("self", "https://f/")]) == (
        "https://h/",
        "https://f/",
    )
    assert hub_and_topic([("hub", "https://h/")]) is None
    assert hub_and_topic([("hub", "javascript:x"), ("self", "https://f/")]) is None
    assert hub_and_topic([("alternate self", "https://f/"), ("HUB", "http://h")]) == (
        "http://h",
        "https://f/",
    )


def test_signatures_sha256_preferred_sha1_accepted_others_not() -> None:
    body = b"<rss/>"
    good256 = "sha256=" + hmac.new(b"s", body, hashlib.sha256).hexdigest()
    good1 = "sha1=" + hmac.new(b"s", body, hashlib.sha1).hexdigest()
    assert signature_ok("s", good256, body)
    assert signature_ok("s", good1, body)
    assert not signature_ok("t", good256, body)
    assert not signature_ok("s", good256, body + b" ")
    assert not signature_ok("s", None, body)
    assert not signature_ok("s", "md5=" + hashlib.md5(body).hexdigest(), body)
    assert not signature_ok("s", "sha256", body)


def test_a_verification_counts_only_for_what_was_asked() -> None:
    asked = Asked("subscribe", "https://f/")
    query = {
        "hub.mode": "subscribe",
        "hub.topic": "https://f/",
        "hub.challenge": "abc",
        "hub.lease_seconds": "10",
    }
    assert challenge_for(asked, query) == "abc"
    assert challenge_for(None, query) is None
    assert challenge_for(asked, {**query, "hub.topic": "https://other/"}) is None
    assert challenge_for(asked, {**query, "hub.mode": "unsubscribe"}) is None
    assert challenge_for(asked, {**query, "hub.challenge": ""}) is None
    assert challenge_for(asked, {**query, "hub.lease_seconds": "x"}) is None
    unsub = {**query, "hub.mode": "unsubscribe"}
    del unsub["hub.lease_seconds"]
    assert challenge_for(Asked("unsubscribe", "https://f/"), unsub) == "abc"


def test_renewal_comes_before_the_lease_ends_and_the_interval_stretches() -> None:
    t = datetime(2026, 1, 1, tzinfo=UTC)
    assert t < renew_at(t, 10) < t + timedelta(seconds=10)
    assert renew_at(t, 10) <= t + timedelta(seconds=9)
    assert renew_at(t, 864_000) == t + timedelta(seconds=864_000 - 3600)
    day = timedelta(days=1)
    assert stretched(timedelta(hours=1), day) == day
    assert stretched(timedelta(days=7), day) == timedelta(days=7)
    assert stretched(None, day) is None
    assert push_line(None) == "push: none"


# the daemon end to end ----------------------------------------------------------------------


def wait_for(condition: Callable[[], object], timeout: float = 15.0, what: str = "") -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what or condition}"
        time.sleep(0.02)


def episodes(db: Path) -> int:
    with closing(sqlite3.connect(db)) as conn:
        return int(conn.execute("SELECT count(*) FROM episodes").fetchone()[0])


@dataclass
class Running:
    daemon: Daemon
    push: PushManager
    server: PushServer
    thread: threading.Thread

    def stop(self) -> None:
        self.daemon.request("stop")
        self.thread.join(timeout=20)
        self.server.stop()
        self.push.stop()
        assert not self.thread.is_alive()


@contextmanager
def daemon_with_push(db: Path, feeds: list[FeedSchedule], tmp: Path) -> Iterator[Running]:
    settings = Settings(host_gap=0)
    holder: dict[str, list[FeedSchedule]] = {"feeds": feeds}
    daemon = Daemon(load=lambda: holder["feeds"], update=lambda f, s: None, watch=tmp, tick=0.1)  # type: ignore[arg-type,return-value]
    push, server = push_side(daemon, db, settings, PushOptions("127.0.0.1:0", "http://x"))
    assert push is not None
    assert server is not None
    push.public_url = f"http://127.0.0.1:{server.port}"  # the port it was given
    daemon.update = cycle_update(db, settings, push)
    with Archive(db):
        pass
    server.start()
    push.start()
    thread = threading.Thread(target=daemon.run, args=(feeds,), kwargs={"signals": False})
    thread.start()
    running = Running(daemon, push, server, thread)
    try:
        yield running
    finally:
        if thread.is_alive():
            running.stop()


def test_subscribe_verify_notify_archives_at_once(tmp_path: Path, caplog) -> None:
    caplog.set_level(logging.INFO)
    db = tmp_path / "a.db"
    with StubHub(lease=3600) as hub, LoopbackSite() as site:
        feed_url = site.url("/feed")
        site.routes["/feed"] = Reply(rss(1, hub.url, feed_url))
        feed = FeedSchedule(url=feed_url, every=timedelta(hours=1), allow_private_hosts=True)
        with daemon_with_push(db, [feed], tmp_path) as run:
            wait_for(lambda: hub.subscriptions() and hub.subscriptions()[0].verified, what="sub")
            sub = hub.subscriptions()[0]
            assert sub.verified == 200
            assert sub.topic == feed_url
            assert len(sub.secret) == 64
            wait_for(lambda: episodes(db) == 1, what="the first poll")
            assert run.push.subscription(feed_url).state == "live"  # type: ignore[union-attr]
            polls = len(site.requests)
            # verification for a topic or mode not asked for: 404, no echo
            assert hub.verify(sub, topic="https://other.example/") == 404
            assert hub.verify(sub, mode="unsubscribe") == 404
            # a bad and a missing signature: acknowledged, ignored
            site.routes["/feed"] = Reply(rss(2, hub.url, feed_url))
            assert hub.publish(sub, b"<rss/>", signature="sha256=" + "0" * 64) == 202
            assert hub.publish(sub, b"<rss/>", signature=None) == 202
            assert hub.publish(sub, b"<rss/>", signature="sha1=zz") == 202
            # a valid one: the feed is polled now, through the pipeline
            posted = time.monotonic()
            assert hub.publish(sub, b"<rss>not the feed</rss>") == 202
            wait_for(lambda: episodes(db) == 2, timeout=5, what="the pushed episode")
            latency = time.monotonic() - posted
            log.info("notification to archived episode: %.3f s", latency)
            assert len(site.requests) == polls + 1  # the valid notification's poll only
            ignored = [r for r in caplog.records if "notification for" in r.getMessage()]
            assert len(ignored) == 3
            sub_row = run.push.subscription(feed_url)
            assert sub_row is not None
            assert sub_row.notifications == 1
            # unknown callbacks and other routes: 404
            callback_base = sub.callback.rsplit("/", 1)[0]
            assert get(callback_base + "/nope?hub.challenge=x")[0] == 404
            assert get(run.push.public_url + "/")[0] == 404
            assert hub.publish(dataclass_replace(sub, callback_base + "/nope"), b"x") == 404
            # the interval is stretched while live, never stopped
            stretched_feed = run.push.stretch(feed)
            assert stretched_feed.every == timedelta(days=1)
        with closing(sqlite3.connect(db)) as conn:
            row = conn.execute(
                "SELECT state, notifications, last_notified_at FROM push_subscriptions"
            ).fetchone()
        assert row[0] == "live"
        assert row[1] == 1
        assert row[2]
        with Archive(db) as archive:  # every notification kept as evidence, signed or not
            notices = archive.push_notices(feed_url)
        assert [n.signature_valid for n in notices] == [False, False, False, True]
        assert notices[-1].body == b"<rss>not the feed</rss>"
        assert notices[-1].content_type == "application/rss+xml"
        assert notices[-1].sha256 == hashlib.sha256(b"<rss>not the feed</rss>").hexdigest()


def dataclass_replace(sub, callback: str):  # type: ignore[no-untyped-def]
    import dataclasses

    return dataclasses.replace(sub, callback=callback)


def test_a_short_lease_is_renewed_and_a_removed_feed_unsubscribed(tmp_path: Path) -> None:
    db = tmp_path / "a.db"
    with StubHub(lease=10) as hub, LoopbackSite() as site:
        feed_url = site.url("/feed")
        site.routes["/feed"] = Reply(rss(1, hub.url, feed_url))
        feed = FeedSchedule(url=feed_url, every=timedelta(hours=1), allow_private_hosts=True)
        with daemon_with_push(db, [feed], tmp_path) as run:
            wait_for(lambda: hub.subscriptions() and hub.subscriptions()[0].verified, what="sub")
            first = time.monotonic()
            wait_for(lambda: len(hub.subscriptions()) >= 2, timeout=12, what="the renewal")
            renewed = time.monotonic() - first
            assert renewed < 10  # asked again before the 10 s lease ended
            wait_for(lambda: hub.subscriptions()[1].verified == 200, what="renewal verified")
            run.daemon.apply([])  # the feed leaves the schedule
            wait_for(lambda: hub.subscriptions("unsubscribe"), what="the unsubscription")
            wait_for(lambda: hub.subscriptions("unsubscribe")[0].verified == 200, what="verified")
            wait_for(lambda: run.push.subscription(feed_url).state == "gone", what="gone")  # type: ignore[union-attr]
            assert hub.publish(hub.subscriptions()[0], b"x") == 404  # its callback is gone


def test_a_restart_keeps_the_subscription_and_a_refusing_hub_falls_back(
    tmp_path: Path, caplog
) -> None:
    caplog.set_level(logging.INFO)
    db = tmp_path / "a.db"
    with StubHub(lease=3600) as hub, LoopbackSite() as site:
        feed_url = site.url("/feed")
        site.routes["/feed"] = Reply(rss(1, hub.url, feed_url))
        feed = FeedSchedule(url=feed_url, every=timedelta(hours=1), allow_private_hosts=True)
        with daemon_with_push(db, [feed], tmp_path) as run:
            wait_for(lambda: hub.subscriptions() and hub.subscriptions()[0].verified, what="sub")
            wait_for(lambda: episodes(db) == 1, what="the first poll")
            run.stop()
        sub = hub.subscriptions()[0]
        site.routes["/feed"] = Reply(rss(2, hub.url, feed_url))
        with daemon_with_push(db, [feed], tmp_path) as run:
            # same secret, same callback token; the port is new, as after a restart
            port_base = run.push.public_url
            token = sub.callback.rsplit("/", 1)[1]
            moved = dataclass_replace(sub, f"{port_base}/websub/{token}")
            assert run.push.subscription(feed_url).state == "live"  # type: ignore[union-attr]
            assert hub.publish(moved, b"x") == 202
            wait_for(lambda: episodes(db) == 2, timeout=5, what="pushed after restart")
            assert len(hub.subscriptions()) == 1  # not asked again: the lease runs
    # a hub that refuses: one line, polling only
    db2 = tmp_path / "b.db"
    with StubHub(refuse=True) as hub, LoopbackSite() as site:
        feed_url = site.url("/feed")
        site.routes["/feed"] = Reply(rss(1, hub.url, feed_url))
        feed = FeedSchedule(url=feed_url, every=timedelta(hours=1), allow_private_hosts=True)
        with daemon_with_push(db2, [feed], tmp_path) as run:
            wait_for(lambda: run.push.subscription(feed_url), what="asked")
            wait_for(lambda: run.push.subscription(feed_url).state == "failed", what="failed")  # type: ignore[union-attr]
            assert run.push.stretch(feed) == feed  # not stretched: polling as scheduled
    failed = [r.getMessage() for r in caplog.records if "polling only" in r.getMessage()]
    assert len(failed) == 1
    assert "hub answered 500" in failed[0]
