"""A feed moved by its own content stays untrusted (issue #23, item 5).

Only the URLs a person configured (a schedule entry, ``run URL``, ``add URL``) skip the
address guard, with the permanent redirects their hosts answer with. A feed that moved by
``itunes:new-feed-url`` is fetched from then on as any URL taken from feed content: every
hop guarded, the moves its new host's redirects lead to included.

Only loopback is ever dialled. For the guard (injected into the fetcher of ``run``,
``backfill`` and a cluster worker, as tests/test_fetch_attacks.py does for the fetcher
alone), 127.0.0.2 plays a public host and 127.0.0.1 an internal one.
"""

from __future__ import annotations

import dataclasses
import ipaddress
import threading
import time
from collections.abc import Iterator
from functools import partial
from http.server import BaseHTTPRequestHandler
from pathlib import Path

import pytest
from click.testing import CliRunner
from loopback import LoopbackSite
from redis_server import RedisServer

import podarchive.tasks.backfill
import podarchive.update.run
from podarchive.cli import cli
from podarchive.cluster.broker import Cluster
from podarchive.cluster.worker import ShardWorker
from podarchive.core.settings import Settings
from podarchive.core.types import FeedState
from podarchive.net.fetch import Fetcher
from podarchive.read.schedule_files import FeedSchedule
from podarchive.rules.shards import shard_path
from podarchive.store import Archive

PUBLIC = "127.0.0.2"
ITUNES = "http://www.itunes.com/dtds/podcast-1.0.dtd"
BLOCKED = "blocked: private address 127.0.0.1"


def only_public(address: ipaddress.IPv4Address | ipaddress.IPv6Address) -> bool:
    """The test's address check: everything but 127.0.0.2 is "private"."""
    return str(address) != PUBLIC


@pytest.fixture(autouse=True)
def _guard_as_if_public(monkeypatch: pytest.MonkeyPatch) -> None:
    guarded = partial(Fetcher, address_blocked=only_public)
    monkeypatch.setattr(podarchive.update.run, "Fetcher", guarded)
    monkeypatch.setattr(podarchive.tasks.backfill, "Fetcher", guarded)


@pytest.fixture
def public() -> Iterator[LoopbackSite]:
    with LoopbackSite(PUBLIC) as server:
        yield server


def rss(title: str = "Show", extra: str = "", guid: str = "ep-1") -> bytes:
    return (
        f'<?xml version="1.0"?><rss version="2.0" xmlns:itunes="{ITUNES}"><channel>'
        f"<title>{title}</title>{extra}<item><guid>{guid}</guid><title>One</title></item>"
        "</channel></rss>"
    ).encode()


def redirect(site: LoopbackSite, path: str, to: str, status: int) -> None:
    def send(h: BaseHTTPRequestHandler) -> None:
        h.send_response(status)
        h.send_header("Location", to)
        h.send_header("Content-Length", "0")
        h.end_headers()

    site.handle(path, send)


def invoke(*args: str) -> tuple[int, str]:
    """Exit code and stderr of a command (stdout: :func:`invoke_all`)."""
    code, _, err = invoke_all(*args)
    return code, err


def invoke_all(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


def stored_state(db: Path, url: str) -> FeedState:
    with Archive.open_read_only(db) as archive:
        state = archive.feed_state(url)
    assert state is not None
    return state


def schedule(tmp_path: Path, url: str) -> Path:
    directory = tmp_path / "schedules"
    directory.mkdir(exist_ok=True)
    (directory / "show.toml").write_text(f'[[feed]]\nurl = "{url}"\nname = "Show"\npages = false\n')
    return directory


def moved_by_content(
    tmp_path: Path, site: LoopbackSite, public: LoopbackSite, db: Path | None = None
) -> Path:
    """A configured feed (on the internal host) that names a public new-feed-url serving
    the same podcast; one ``run`` moves it there. Then the public host redirects to the
    internal one. Returns the schedules directory."""
    new_url = public.url("/new.xml")
    move = f"<itunes:new-feed-url>{new_url}</itunes:new-feed-url>"
    site.serve("/old.xml", rss(extra=move))
    site.serve("/secret", rss(guid="internal"))  # an internal service, never to be asked
    public.serve("/new.xml", rss())
    schedules = schedule(tmp_path, site.url("/old.xml"))
    db = db or tmp_path / "a.db"
    code, err = invoke("run", "--all", "--schedules", str(schedules), "--db", str(db))
    assert code == 0
    assert err.endswith(f" WARNING Show: moved to {new_url} (update its schedule file)\n")
    state = stored_state(db, site.url("/old.xml"))
    assert state.fetch_url == new_url
    redirect(public, "/new.xml", site.url("/secret"), 302)
    return schedules


def test_a_feed_moved_by_new_feed_url_never_reaches_an_internal_address(
    tmp_path: Path, site: LoopbackSite, public: LoopbackSite
) -> None:
    schedules = moved_by_content(tmp_path, site, public)
    db = str(tmp_path / "a.db")
    for _ in range(2):  # every later poll
        code, err = invoke("run", "--all", "--schedules", str(schedules), "--db", db)
        assert (code, err) == (1, f"podarchive: Show: {BLOCKED}\n")
    assert site.hits("/secret") == 0
    assert public.hits("/new.xml") == 3  # the check before the move, then each poll
    assert site.hits("/old.xml") == 1


def test_backfill_of_a_feed_moved_by_new_feed_url_is_guarded(
    tmp_path: Path, site: LoopbackSite, public: LoopbackSite
) -> None:
    schedules = moved_by_content(tmp_path, site, public)
    db = str(tmp_path / "a.db")
    code, out, err = invoke_all("backfill", "--schedules", str(schedules), "--db", db, "--dry-run")
    assert (code, err) == (1, f"podarchive: Show: {BLOCKED}\n")
    assert f"  failed: {BLOCKED}\n" in out
    # the real run fails the feed's poll and walks the body stored before, as for any failure
    code, out, err = invoke_all("backfill", "--schedules", str(schedules), "--db", db)
    assert code == 0
    assert f"/old.xml: {BLOCKED}\n" in out
    assert "Traceback" not in err
    assert site.hits("/secret") == 0
    assert public.hits("/new.xml") == 3


def test_a_move_from_a_moved_feed_stays_untrusted(
    tmp_path: Path, site: LoopbackSite, public: LoopbackSite
) -> None:
    """The new host's permanent redirect moves the feed on (its old URL failing), and the
    URL it moved to is no more trusted than the one it came from."""
    schedules = moved_by_content(tmp_path, site, public)
    db = str(tmp_path / "a.db")
    public.serve("/newer.xml", rss())
    redirect(public, "/new.xml", public.url("/newer.xml"), 301)
    assert invoke("run", "--all", "--schedules", str(schedules), "--db", db) == (0, "")
    public.serve("/new.xml", b"", status=404)
    code, _ = invoke("run", "--all", "--schedules", str(schedules), "--db", db)
    assert code == 1  # the old URL failing after a sighting: moved at once
    assert stored_state(tmp_path / "a.db", site.url("/old.xml")).fetch_url == public.url(
        "/newer.xml"
    )
    redirect(public, "/newer.xml", site.url("/secret"), 307)
    code, err = invoke("run", "--all", "--schedules", str(schedules), "--db", db)
    assert (code, err) == (1, f"podarchive: Show: {BLOCKED}\n")
    assert site.hits("/secret") == 0


def test_a_move_by_the_configured_host_s_own_redirects_stays_trusted(
    tmp_path: Path, site: LoopbackSite
) -> None:
    """A configured feed on a private host (no allow_private_hosts) that moves by its own
    301 to another private URL is still fetched there: a person trusted that host."""
    site.serve("/new.xml", rss())
    redirect(site, "/old.xml", "/new.xml", 301)
    schedules = schedule(tmp_path, site.url("/old.xml"))
    db = str(tmp_path / "a.db")
    assert invoke("run", "--all", "--schedules", str(schedules), "--db", db) == (0, "")
    site.serve("/old.xml", b"", status=404)
    code, _ = invoke("run", "--all", "--schedules", str(schedules), "--db", db)
    assert code == 1  # moved at once: the old URL failed after a sighting
    assert stored_state(tmp_path / "a.db", site.url("/old.xml")).fetch_url == site.url("/new.xml")
    assert invoke("run", "--all", "--schedules", str(schedules), "--db", db) == (0, "")
    assert site.hits("/new.xml") == 2


def test_a_cluster_worker_polls_a_feed_moved_by_new_feed_url_guarded(
    tmp_path: Path, site: LoopbackSite, public: LoopbackSite
) -> None:
    """The worker of a shard whose archive holds the moved feed: its poll is guarded too."""
    shards = tmp_path / "shards"
    db = shard_path(shards, 0, 1)
    db.parent.mkdir(parents=True)
    moved_by_content(tmp_path, site, public, db)
    with RedisServer(tmp_path / "redis") as redis:
        cluster = Cluster(redis.url)
        cluster.init_shards(1)
        with Archive.open_read_only(db) as archive:
            ((url, stamp, _),) = archive.due_stamps()
        feed = FeedSchedule(url=url, name="Show", pages=False)
        cluster.enqueue(0, feed, stamp)
        settings = Settings(host_gap=0, retry_base=0.01)
        worker = ShardWorker(Cluster(redis.url), 0, shards, settings=settings, threads=2)
        stop = threading.Event()
        thread = threading.Thread(target=worker.run, args=(stop,))
        thread.start()
        try:
            deadline = time.monotonic() + 120
            while worker.counts.polled + worker.counts.failed < 1:
                assert thread.is_alive(), "the worker stopped"
                assert time.monotonic() < deadline, "the worker never polled the feed"
                time.sleep(0.05)
        finally:
            stop.set()
            thread.join(60)
            cluster.close()
    assert worker.counts.failed == 1
    assert site.hits("/secret") == 0
    with Archive.open_read_only(db) as archive:
        last_error = archive.db.execute("SELECT last_error FROM feeds").fetchone()
    assert last_error == (BLOCKED,)


@pytest.mark.parametrize(
    ("moves", "trusted"),
    [
        ([], True),
        ([("B", "permanent redirect")], True),
        ([("B", "permanent redirect"), ("C", "old URL failing")], True),
        ([("B", "itunes:new-feed-url")], False),
        ([("B", "permanent redirect"), ("C", "itunes:new-feed-url")], False),
        ([("B", "itunes:new-feed-url"), ("C", "permanent redirect")], False),
        ([("B", "itunes:new-feed-url"), ("A", "permanent redirect")], True),
        (
            [("B", "itunes:new-feed-url"), ("A", "permanent redirect"), ("D", "old URL failing")],
            True,
        ),
        (
            [
                ("B", "itunes:new-feed-url"),
                ("A", "permanent redirect"),
                ("D", "itunes:new-feed-url"),
            ],
            False,
        ),
    ],
)
def test_trust_follows_the_feed_s_moves(
    tmp_path: Path, moves: list[tuple[str, str]], trusted: bool
) -> None:
    """Trusted: the configured URL (A), or reached from it by permanent redirects only."""
    url = "https://a.example/feed"
    with Archive(tmp_path / "a.db") as archive:
        state = archive.ensure_feed(url, None, "2026-01-01T00:00:00Z")
        old = url
        for target, reason in moves:
            new = url if target == "A" else f"https://{target.lower()}.example/feed"
            archive.move_feed(state.id, old, new, reason, "2026-01-02T00:00:00Z")
            old = new
        assert archive.feed_state(url) == dataclasses.replace(
            state, fetch_url=None if old == url and not moves else old, fetch_trusted=trusted
        )
