"""``podarchive daemon --podping`` (#29) as a real process: a stub Hive node and a feed on
loopback, a trusted ping polls the feed, ``status`` shows the cursor; bad options are one
line and exit 2."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
from pathlib import Path

from click.testing import CliRunner
from conftest import FAST_ENV
from loopback import LoopbackSite, Reply
from test_podping import FIRST, RSS, StubHive, cursor, ping_op, wait_for

from podarchive.cli import cli


def test_bad_podping_options_are_one_line_and_exit_2(tmp_path: Path) -> None:
    runner = CliRunner()
    args = ["daemon", "--schedules", str(tmp_path), "--db", str(tmp_path / "a.db")]
    cases = [
        (["--podping", "--podping-node", "ftp://node"], "--podping-node: not an http(s) URL"),
        (["--podping", "--podping-node", "api.hive.blog"], "--podping-node: not an http(s) URL"),
        (["--podping", "--podping-writer", "bad account!"], "not a Hive account name"),
        (["--podping-node", "https://api.hive.blog"], "need --podping"),
        (["--podping", "--podping-every", "0"], "--podping-every"),
    ]
    for extra, message in cases:
        result = runner.invoke(cli, [*args, *extra])
        assert result.exit_code == 2, result.output
        assert message in result.output
        assert len(result.output.strip().splitlines()) == 1
    assert not (tmp_path / "a.db").exists()
    process = subprocess.run(
        [sys.executable, "-m", "podarchive", *args, "--podping", "--podping-node", "x"],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert process.returncode == 2
    assert process.stderr.strip().splitlines() == [
        "podarchive: error: --podping-node: not an http(s) URL: 'x'"
    ]


def test_the_daemon_process_polls_a_pinged_feed_and_status_shows_the_cursor(
    tmp_path: Path,
) -> None:
    db = tmp_path / "a.db"
    schedules = tmp_path / "schedules"
    schedules.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith("PODARCHIVE_")}
    env.update(FAST_ENV)
    with LoopbackSite() as site, LoopbackSite() as node_site, LoopbackSite() as dead_site:
        hive = StubHive(node_site)
        site.routes["/feed"] = Reply(RSS)
        feed_url = site.url("/feed")
        (schedules / "f.toml").write_text(f'[[feed]]\nurl = "{feed_url}"\nevery = "1h"\n')
        process = subprocess.Popen(
            [sys.executable, "-m", "podarchive", "daemon", "--schedules", str(schedules),
             "--db", str(db), "--tick", "0.2", "--allow-private-hosts", "--podping",
             "--podping-node", dead_site.url("/gone"), "--podping-node", hive.url,
             "--podping-every", "0.1", "--podping-writer", "podping.test"],
            env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            text=True,
        )  # fmt: skip
        lines: list[str] = []
        reader = threading.Thread(target=lambda: lines.extend(process.stderr or []), daemon=True)
        reader.start()
        try:
            wait_for(lambda: cursor(db) == FIRST, timeout=30, what="the cursor at the head")
            wait_for(lambda: site.hits("/feed") == 1, timeout=30, what="the first poll")
            untrusted = hive.add_block(ping_op("podping.aaa", feed_url))  # not in the list
            wait_for(lambda: (cursor(db) or 0) >= untrusted, what="the untrusted ping read")
            assert site.hits("/feed") == 1
            hive.add_block(ping_op("podping.test", feed_url))
            wait_for(lambda: site.hits("/feed") == 2, timeout=5, what="the pinged poll")
            status = subprocess.run(
                [sys.executable, "-m", "podarchive", "status", "--db", str(db)],
                env=env, capture_output=True, text=True, timeout=60, check=False,
            )  # fmt: skip
            assert "podping: block 9000000" in status.stdout
        except AssertionError as e:
            raise AssertionError(f"{e}\n" + "".join(lines)) from None
        finally:
            process.send_signal(signal.SIGTERM)
            process.wait(timeout=30)
            reader.join(timeout=5)
            for pipe in (process.stdout, process.stderr):
                if pipe is not None:
                    pipe.close()
    assert process.returncode == 0
    text = "".join(lines)
    assert "Traceback" not in text
    assert f"podping: node {dead_site.url('/gone')} failed" in text
