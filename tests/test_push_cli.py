"""`podarchive daemon --listen --public-url` (#29) as a real process with a stub hub, its
option errors through CliRunner, and the push line of `podarchive status`."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

from click.testing import CliRunner
from conftest import FAST_ENV
from loopback import LoopbackSite, Reply
from test_push import episodes, rss
from websub_hub import StubHub

from podarchive.cli import cli


def wait_for(condition: Callable[[], object], timeout: float = 20.0, what: str = "") -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what or condition}"
        time.sleep(0.05)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_push_options_go_together(tmp_path: Path) -> None:
    runner = CliRunner()
    args = ["daemon", "--schedules", str(tmp_path), "--db", str(tmp_path / "a.db")]
    result = runner.invoke(cli, [*args, "--listen", "127.0.0.1:0"])
    assert result.exit_code == 2
    assert "--listen and --public-url go together" in result.output
    result = runner.invoke(cli, [*args, "--listen", "127.0.0.1:0", "--public-url", "ftp://x"])
    assert result.exit_code == 2
    assert "must be an http(s) URL" in result.output
    result = runner.invoke(
        cli, [*args, "--listen", "x:1", "--public-url", "http://x", "--push-every", "soon"]
    )
    assert result.exit_code == 2
    assert "--push-every: bad interval" in result.output


def test_the_daemon_process_subscribes_and_a_notification_archives(tmp_path: Path) -> None:
    db = tmp_path / "a.db"
    schedules = tmp_path / "schedules"
    schedules.mkdir()
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("PODARCHIVE_")}
    env.update(FAST_ENV)
    with StubHub(lease=3600) as hub, LoopbackSite() as site:
        feed_url = site.url("/feed")
        site.routes["/feed"] = Reply(rss(1, hub.url, feed_url))
        (schedules / "f.toml").write_text(
            f'[[feed]]\nurl = "{feed_url}"\nevery = "1h"\nallow_private_hosts = true\n'
        )
        process = subprocess.Popen(
            [sys.executable, "-m", "podarchive", "daemon", "--schedules", str(schedules),
             "--db", str(db), "--tick", "0.2", "--listen", f"127.0.0.1:{port}",
             "--public-url", f"http://127.0.0.1:{port}"],
            env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            text=True,
        )  # fmt: skip
        lines: list[str] = []
        reader = threading.Thread(target=lambda: lines.extend(process.stderr or []), daemon=True)
        reader.start()
        try:
            wait_for(lambda: hub.subscriptions() and hub.subscriptions()[0].verified, what="sub")
            wait_for(lambda: episodes(db) == 1, what="the first poll")
            sub = hub.subscriptions()[0]
            assert hub.publish(sub, b"x", signature="sha256=00") == 202
            site.routes["/feed"] = Reply(rss(2, hub.url, feed_url))
            assert hub.publish(sub, b"x") == 202
            wait_for(lambda: episodes(db) == 2, timeout=5, what="the pushed episode")
            status = subprocess.run(
                [sys.executable, "-m", "podarchive", "status", "--db", str(db)],
                env=env, capture_output=True, text=True, timeout=60, check=False,
            )  # fmt: skip
            assert "push: " in status.stdout
            assert "subscribed until" in status.stdout
            assert "last notification" in status.stdout
        except AssertionError:
            process.send_signal(signal.SIGTERM)
            process.wait(timeout=30)
            reader.join(timeout=5)
            raise AssertionError("\n".join(lines)) from None
        finally:
            process.send_signal(signal.SIGTERM)
            process.wait(timeout=30)
            reader.join(timeout=5)
            for pipe in (process.stdout, process.stderr):
                if pipe is not None:
                    pipe.close()
    assert process.returncode == 0
    ignored = [line for line in lines if "notification for" in line]
    assert len(ignored) == 1
    assert "bad signature" in ignored[0]
