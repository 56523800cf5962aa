"""WebSub failures of the daemon (#29): a hub that cannot be reached (a closed port) and a
hub the address guard refuses (a private or loopback address, for a feed whose schedule does
not allow private hosts) are each one WARNING line, no traceback; the feed keeps polling as
scheduled (not stretched), and ``status`` shows the failure."""

from __future__ import annotations

import json
import logging
import socket
from datetime import timedelta
from pathlib import Path

import pytest
from click.testing import CliRunner
from loopback import LoopbackSite, Reply
from test_push import daemon_with_push, episodes, rss, wait_for
from websub_hub import StubHub

from podarchive.cli import cli
from podarchive.read.schedule_files import FeedSchedule


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])  # closed once the block ends: nothing listens


def failed_lines(caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    return [r for r in caplog.records if "polling only" in r.getMessage()]


def push_status(db: Path) -> dict[str, object]:
    result = CliRunner().invoke(cli, ["status", "--db", str(db), "--json"])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    (feed,) = json.loads(result.stdout)["feeds"]
    return dict(feed)


def test_an_unreachable_hub_is_one_line_and_the_feed_keeps_polling(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    db = tmp_path / "a.db"
    hub = f"http://127.0.0.1:{closed_port()}/hub"
    with LoopbackSite() as site:
        url = site.url("/feed")
        site.routes["/feed"] = Reply(rss(1, hub, url))
        feed = FeedSchedule(url=url, every=timedelta(hours=1), allow_private_hosts=True)
        with daemon_with_push(db, [feed], tmp_path) as run:
            wait_for(lambda: episodes(db) == 1, what="the first poll")
            wait_for(lambda: getattr(run.push.subscription(url), "state", "") == "failed")
            assert run.push.stretch(feed) == feed  # polled as scheduled
            sub = run.push.subscription(url)
            assert sub is not None
            assert sub.last_error is not None
            assert "hub unreachable" in sub.last_error
    (line,) = failed_lines(caplog)
    assert line.levelno == logging.WARNING
    assert "\n" not in line.getMessage()
    assert all(r.exc_info is None for r in caplog.records)
    text = json.dumps(push_status(db))
    assert "hub unreachable" in text


@pytest.mark.parametrize("where", ["loopback", "private"])
def test_a_hub_the_guard_refuses_is_one_line_and_never_asked(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, where: str
) -> None:
    caplog.set_level(logging.INFO)
    db = tmp_path / "a.db"
    with StubHub() as stub, LoopbackSite() as site:
        hub = stub.url if where == "loopback" else "http://10.1.2.3/hub"
        url = site.url("/feed")
        site.routes["/feed"] = Reply(rss(1, hub, url))
        feed = FeedSchedule(url=url, every=timedelta(hours=1))  # no allow_private_hosts
        with daemon_with_push(db, [feed], tmp_path) as run:
            wait_for(lambda: episodes(db) == 1, what="the first poll")
            wait_for(lambda: getattr(run.push.subscription(url), "state", "") == "failed")
            assert run.push.stretch(feed) == feed
        assert stub.asked == []  # the guard refused before any connection
    (line,) = failed_lines(caplog)
    assert "blocked" in line.getMessage()
    assert all(r.exc_info is None for r in caplog.records)
    assert "blocked" in json.dumps(push_status(db))
