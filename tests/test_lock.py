"""One run at a time: the archive lock, in-process and between real `run` processes."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler
from pathlib import Path

import pytest
from conftest import FAST_ENV
from loopback import LoopbackSite

from podarchive.core.errors import ArchiveLocked, StorageError
from podarchive.runtime.lock import archive_lock, archive_lock_path

FEED = (
    b'<?xml version="1.0"?><rss version="2.0"><channel><title>Slow Show</title>'
    b"<item><guid>ep-1</guid><title>One</title></item></channel></rss>"
)


GATE_TIMEOUT = 25.0  # under the client's 30 s read timeout: a forgotten gate fails, not hangs


def gated_feed(site: LoopbackSite, gate: threading.Event, answered: list[float]) -> str:
    """A feed that answers once ``gate`` is set, so its run holds the lock until then.

    The time of each answer is appended to ``answered`` (the order of events, server side).
    """

    def handler(request: BaseHTTPRequestHandler) -> None:
        gate.wait(GATE_TIMEOUT)
        answered.append(time.monotonic())
        request.send_response(200)
        request.send_header("Content-Type", "application/rss+xml")
        request.send_header("Content-Length", str(len(FEED)))
        request.end_headers()
        request.wfile.write(FEED)

    site.handle("/slow.xml", handler)
    return site.url("/slow.xml")


def start_run(*args: str, cwd: Path) -> subprocess.Popen[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PODARCHIVE_")}
    env.update(FAST_ENV)
    return subprocess.Popen(
        [sys.executable, "-m", "podarchive", "run", *args],
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def finish(process: subprocess.Popen[str]) -> int:
    process.communicate(timeout=30)  # also closes its pipes
    return process.returncode


def wait_for(condition: object, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():  # type: ignore[operator]
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.02)


def episodes(db: Path) -> int:
    conn = sqlite3.connect(db)
    try:
        return int(conn.execute("SELECT count(*) FROM episodes").fetchone()[0])
    finally:
        conn.close()


# in-process ------------------------------------------------------------------------------


def test_second_holder_is_refused_with_the_holders_pid(tmp_path: Path) -> None:
    db = tmp_path / "a.db"
    with archive_lock(db):
        assert f'"pid": {os.getpid()}' in archive_lock_path(db).read_text()
        with pytest.raises(ArchiveLocked) as caught:
            archive_lock(db).acquire()
        message = str(caught.value)
        assert message.startswith(f"another run (pid {os.getpid()}, since 20")
        assert message.endswith(f") holds {db}")
    assert archive_lock_path(db).read_text() == ""  # released: no stale note left
    with archive_lock(db):
        pass


def test_acquire_waits_for_the_holder(tmp_path: Path) -> None:
    db = tmp_path / "a.db"
    first = archive_lock(db).acquire()
    released: list[float] = []

    def release() -> None:
        released.append(time.monotonic())
        first.release()

    threading.Timer(0.3, release).start()
    with archive_lock(db).acquire(wait=30):
        acquired = time.monotonic()
    assert released, "acquired while the holder still held the lock"
    assert acquired - released[0] < 10  # noticed the release soon (a wide bound: load)


def test_acquire_gives_up_after_wait(tmp_path: Path) -> None:
    db = tmp_path / "a.db"
    with archive_lock(db):
        start = time.monotonic()
        with pytest.raises(ArchiveLocked):
            archive_lock(db).acquire(wait=0.3)
        assert 0.3 <= time.monotonic() - start < 10  # at least the wait; wide: load


def test_lock_in_a_missing_directory_is_a_storage_error(tmp_path: Path) -> None:
    with pytest.raises(StorageError, match="cannot lock"):
        archive_lock(tmp_path / "nowhere" / "a.db").acquire()


# real processes --------------------------------------------------------------------------


def test_two_concurrent_runs_exactly_one_updates(tmp_path: Path, site: LoopbackSite) -> None:
    gate, answered = threading.Event(), list[float]()
    url = gated_feed(site, gate, answered)
    first = start_run(url, "--db", "a.db", cwd=tmp_path)
    try:
        wait_for(lambda: site.hits("/slow.xml") == 1)  # the first run holds the lock now
        second = start_run(url, "--db", "a.db", cwd=tmp_path)
        out, err = second.communicate(timeout=GATE_TIMEOUT - 5)
        # the second ended while the first still held the lock: it did not wait for it
        assert first.poll() is None
        assert answered == []
    finally:
        gate.set()
    assert second.returncode == 0
    assert out == ""
    (line,) = err.splitlines()
    assert line.startswith(f"podarchive: another run (pid {first.pid}, since ")
    assert line.endswith(") holds a.db; skipping")
    assert finish(first) == 0
    assert site.hits("/slow.xml") == 1
    assert episodes(tmp_path / "a.db") == 1


def test_a_killed_runs_lock_does_not_block_the_next(tmp_path: Path, site: LoopbackSite) -> None:
    gate, answered = threading.Event(), list[float]()
    url = gated_feed(site, gate, answered)
    victim = start_run(url, "--db", "a.db", cwd=tmp_path)
    try:
        wait_for(lambda: site.hits("/slow.xml") == 1)  # it holds the lock, waiting for us
        victim.send_signal(signal.SIGKILL)
        victim.communicate(timeout=10)
    finally:
        gate.set()
    assert victim.returncode == -signal.SIGKILL
    assert archive_lock_path(tmp_path / "a.db").read_text()  # the dead holder's note is left
    after = start_run(url, "--db", "a.db", cwd=tmp_path)
    out, err = after.communicate(timeout=30)
    assert (after.returncode, out, err) == (0, "", "")
    assert episodes(tmp_path / "a.db") == 1


def test_wait_queues_behind_the_holder_then_runs(tmp_path: Path, site: LoopbackSite) -> None:
    gate, answered = threading.Event(), list[float]()
    url = gated_feed(site, gate, answered)
    first = start_run(url, "--db", "a.db", cwd=tmp_path)
    try:
        wait_for(lambda: site.hits("/slow.xml") == 1)
        second = start_run(url, "--db", "a.db", "--wait", "60", cwd=tmp_path)
        time.sleep(1.0)  # let it reach the lock (if it is slower, it queues all the same)
        assert site.hits("/slow.xml") == 1  # it has not fetched: it waits behind the first
        assert second.poll() is None
    finally:
        gate.set()
    out, err = second.communicate(timeout=60)
    assert (second.returncode, out, err) == (0, "", "")
    assert finish(first) == 0
    assert site.hits("/slow.xml") == 2  # both updated, one after the other


def test_wait_gives_up_and_skips(tmp_path: Path, site: LoopbackSite) -> None:
    gate, answered = threading.Event(), list[float]()
    url = gated_feed(site, gate, answered)
    first = start_run(url, "--db", "a.db", cwd=tmp_path)
    try:
        wait_for(lambda: site.hits("/slow.xml") == 1)
        start = time.monotonic()
        second = start_run(url, "--db", "a.db", "--wait", "0.5", cwd=tmp_path)
        _, err = second.communicate(timeout=GATE_TIMEOUT - 5)
        assert first.poll() is None  # the first held the lock all along
    finally:
        gate.set()
    assert second.returncode == 0
    assert time.monotonic() - start >= 0.5  # a lower bound: a loaded machine only adds to it
    assert err.endswith("holds a.db; skipping\n")
    assert finish(first) == 0
    assert site.hits("/slow.xml") == 1


def test_reparse_while_a_run_holds_the_archive_fails_in_one_line(
    tmp_path: Path, site: LoopbackSite
) -> None:
    """reparse writes (and, once after an upgrade, fills tags): it takes the lock like run."""
    from click.testing import CliRunner

    from podarchive.cli import cli

    db = tmp_path / "a.db"
    site.serve("/f", FEED)
    runner = CliRunner()
    assert runner.invoke(cli, ["run", site.url("/f"), "--db", str(db)]).exit_code == 0
    before = db.read_bytes()
    with archive_lock(db).acquire():
        result = runner.invoke(cli, ["reparse", "--db", str(db)])
    assert result.exit_code == 1
    assert len(result.stderr.splitlines()) == 1
    assert "podarchive:" in result.stderr
    assert db.read_bytes() == before
    assert runner.invoke(cli, ["reparse", "--db", str(db)]).exit_code == 0  # once it is free
