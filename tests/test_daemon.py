"""`podarchive daemon`: its due times in-process, and the daemon as a real process."""

from __future__ import annotations

import json
import os
import re
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from conftest import FAST_ENV
from loopback import LoopbackSite, serve_pytorch

from podarchive.daemon.scheduler import CycleResult, Daemon, fingerprint
from podarchive.read.schedule_files import FeedSchedule, load_schedules
from podarchive.tasks.status import read_heartbeat

LOG_LINE = re.compile(
    r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3} (DEBUG|INFO|WARNING|ERROR) podarchive(\.daemon)?: \S"
)


def wait_for(condition: Callable[[], object], timeout: float = 15.0, what: str = "") -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what or condition}"
        time.sleep(0.05)


# in-process: the due times --------------------------------------------------------------


class FakeUpdate:
    def __init__(self) -> None:
        self.batches: list[list[str]] = []
        self.threads: set[str] = set()

    def __call__(self, feeds: Sequence[FeedSchedule], stop: threading.Event) -> CycleResult:
        self.threads.add(threading.current_thread().name)
        self.batches.append([f.url for f in feeds])
        return CycleResult(polled=len(feeds))


def feed(url: str, **kwargs: object) -> FeedSchedule:
    return FeedSchedule(url=url, **kwargs)  # type: ignore[arg-type]


@pytest.fixture
def running(tmp_path: Path) -> Callable[..., tuple[Daemon, FakeUpdate]]:
    daemons: list[tuple[Daemon, threading.Thread]] = []

    def start(feeds: list[FeedSchedule]) -> tuple[Daemon, FakeUpdate]:
        update = FakeUpdate()
        daemon = Daemon(load=lambda: feeds, update=update, watch=tmp_path, tick=0.05)
        thread = threading.Thread(target=daemon.run, args=(feeds,), kwargs={"signals": False})
        thread.start()
        daemons.append((daemon, thread))
        wait_for(lambda: set(daemon.due()) == {f.url for f in feeds}, what="due times")
        return daemon, update

    yield start
    for daemon, thread in daemons:
        daemon.request("stop")
        thread.join(timeout=10)
        assert not thread.is_alive()


def test_reload_diffs_jobs_and_leaves_unchanged_ones_alone(running) -> None:
    a = feed("https://a.example/f", every=timedelta(hours=1))
    b = feed("https://b.example/f", every=timedelta(hours=2))
    c = feed("https://c.example/f", every=None, cron="0 9 * * 1")
    daemon, update = running([a, b, c])
    started = datetime.now(UTC)
    wait_for(lambda: update.batches, what="the first cycle")
    assert update.batches[0] == [a.url, b.url, c.url]  # every feed at start: due ones update
    wait_for(lambda: min(daemon.due().values()) > started, what="the first cycle's end")
    before = daemon.due()
    assert before[a.url] >= started + timedelta(hours=1)  # by its schedule: the update said
    assert before[c.url].weekday() == 0  # nothing; crontab 1 = Monday
    nine = before[c.url].replace(hour=9, minute=0, second=0, microsecond=0)
    assert nine <= before[c.url] < nine + timedelta(minutes=5)  # 09:00 plus its jitter

    d = feed("https://d.example/f", every=timedelta(minutes=5))
    b_changed = feed(b.url, every=timedelta(minutes=30))
    a_renamed = feed(a.url, name="A", every=timedelta(hours=1))
    assert daemon.apply([a_renamed, b_changed, d]) == (1, 1, 1)  # added, removed, changed
    after = daemon.due()
    assert set(after) == {a.url, b.url, d.url}
    assert after[a.url] == before[a.url]  # untouched: keeps its due time
    assert after[b.url] < before[b.url]  # rescheduled on the new interval
    assert daemon.feeds[a.url].name == "A"  # the new settings are used on its next update
    wait_for(lambda: len(update.batches) >= 2, what="the second cycle")
    assert update.batches[1] == [b.url, d.url]  # new and changed feeds are asked for at once
    assert update.threads == {"podarchive-runner_0"}  # one thread (APScheduler's) calls update


def test_feeds_not_due_are_asked_for_again_when_due(tmp_path: Path) -> None:
    a = feed("https://a.example/f", every=timedelta(hours=1))
    calls: list[float] = []

    def update(feeds: Sequence[FeedSchedule], stop: threading.Event) -> CycleResult:
        calls.append(time.monotonic())
        due = datetime.now(UTC) + timedelta(seconds=0.3)
        return CycleResult(not_due=1, waiting={a.url: due}) if len(calls) == 1 else CycleResult(1)

    daemon = Daemon(load=lambda: [a], update=update, watch=tmp_path, tick=0.05)
    thread = threading.Thread(target=daemon.run, args=([a],), kwargs={"signals": False})
    thread.start()
    try:
        wait_for(lambda: len(calls) >= 2, timeout=60, what="the deferred feed")
        # not before it is due (0.3 s), and not an hour later at its next trigger: a bound
        # this wide holds on a loaded machine
        assert 0.2 < calls[1] - calls[0] < 60
    finally:
        daemon.request("stop")
        thread.join(timeout=10)


def test_a_failing_update_does_not_end_the_daemon(tmp_path: Path) -> None:
    a = feed("https://a.example/f")

    def update(feeds: Sequence[FeedSchedule], stop: threading.Event) -> CycleResult:
        raise OSError("disk on fire")

    beat = tmp_path / "hb.json"
    daemon = Daemon(load=lambda: [a], update=update, watch=tmp_path, heartbeat=beat, tick=0.05)
    thread = threading.Thread(target=daemon.run, args=([a],), kwargs={"signals": False})
    thread.start()
    try:
        wait_for(lambda: (read_heartbeat(beat) or {}).get("last_cycle"), what="a cycle")
        cycle = (read_heartbeat(beat) or {})["last_cycle"]
        assert cycle["skipped"] == "error: disk on fire"
        assert thread.is_alive()
    finally:
        daemon.request("stop")
        thread.join(timeout=10)
    assert (read_heartbeat(beat) or {})["state"] == "stopped"


def test_fingerprint_sees_added_changed_and_removed_files(tmp_path: Path) -> None:
    assert fingerprint(tmp_path) == ()
    (tmp_path / "a.toml").write_text("x")
    (tmp_path / "notes.txt").write_text("ignored")
    first = fingerprint(tmp_path)
    assert [name for name, _, _ in first] == ["a.toml"]
    (tmp_path / "a.toml").write_text("xy")
    assert fingerprint(tmp_path) != first
    (tmp_path / "a.toml").unlink()
    assert fingerprint(tmp_path) == ()
    assert fingerprint(tmp_path / "missing") == ()


# the real process ------------------------------------------------------------------------


def schedule(path: Path, url: str, name: str, every: str = "1s") -> None:
    path.write_text(
        f'[[feed]]\nurl = "{url}"\nname = "{name}"\nevery = "{every}"\nallow_private_hosts = true\n'
    )


class DaemonProcess:
    def __init__(self, schedules: Path, db: Path) -> None:
        env = {k: v for k, v in os.environ.items() if not k.startswith("PODARCHIVE_")}
        env.update(FAST_ENV)
        self.process = subprocess.Popen(
            [sys.executable, "-m", "podarchive", "daemon", "--schedules", str(schedules),
             "--db", str(db), "--tick", "0.2", "--allow-private-hosts", "--allow-fast"],
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )  # fmt: skip
        self.lines: list[str] = []
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.process.stderr is not None
        for line in self.process.stderr:
            self.lines.append(line.rstrip("\n"))

    def logged(self, text: str) -> list[str]:
        return [line for line in list(self.lines) if text in line]

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
        self.process.communicate(timeout=10)
        self._reader.join(timeout=5)


def count(db: Path, sql: str) -> int:
    if not db.exists():
        return 0
    conn = sqlite3.connect(db, timeout=10)
    try:
        return int(conn.execute(sql).fetchone()[0])
    except sqlite3.OperationalError:  # not created yet
        return 0
    finally:
        conn.close()


def podarchive(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "podarchive", *args],
        capture_output=True,
        text=True,
        timeout=30,
        stdin=subprocess.DEVNULL,
    )


def test_daemon_process(tmp_path: Path, site: LoopbackSite) -> None:
    schedules, db = tmp_path / "schedules", tmp_path / "archive.db"
    schedules.mkdir()
    pytorch = serve_pytorch(site)
    schedule(schedules / "pytorch.toml", pytorch, "PyTorch")
    daemon = DaemonProcess(schedules, db)
    try:
        # it archives the feed
        wait_for(lambda: count(db, "SELECT count(*) FROM episodes") == 9, what="9 episodes")
        wait_for(lambda: site.hits("/pytorch/feed.xml") >= 2, what="a second poll")

        # an episode that appears later on the server shows up in the archive
        feed_xml = site.routes["/pytorch/feed.xml"]
        new_item = (
            "<item><guid>late-1</guid><title>A late episode</title>"
            "<description>Arrived later.</description></item>"
        )
        body = feed_xml.body.replace(b"<item>", new_item.encode() + b"<item>", 1)  # type: ignore[union-attr]
        site.serve("/pytorch/feed.xml", body, etag='"feed-v2"', content_type="text/xml")
        wait_for(lambda: count(db, "SELECT count(*) FROM episodes") == 10, what="the new one")

        # a schedule file added while it runs is picked up
        site.serve("/other.xml", '<rss version="2.0"><channel><title>Other</title>'
                   "<item><guid>o-1</guid><title>O</title></item></channel></rss>")  # fmt: skip
        schedule(schedules / "other.toml", site.url("/other.xml"), "Other")
        wait_for(lambda: site.hits("/other.xml") >= 1, what="the added feed")
        wait_for(lambda: daemon.logged("schedules reloaded (schedule files changed): 2 feeds"))

        # a broken file is logged (file and key) and the last good schedule keeps running
        broken = schedules / "broken.toml"
        broken.write_text('[[feed]]\nurl = "https://x.example/f"\nevery = "1 fortnight"\n')
        wait_for(lambda: daemon.logged("schedules not reloaded"), what="the error line")
        (error,) = daemon.logged("schedules not reloaded")
        assert (
            "ERROR podarchive.daemon: schedules not reloaded (schedule files changed): "
            f"{broken}: feed[0].every: bad interval '1 fortnight'"
        ) in error
        assert error.endswith("keeping the last good schedule (2 feeds)")
        hits = site.hits("/pytorch/feed.xml"), site.hits("/other.xml")
        wait_for(
            lambda: site.hits("/pytorch/feed.xml") > hits[0] and site.hits("/other.xml") > hits[1],
            what="both feeds still polled",
        )
        broken.unlink()
        wait_for(lambda: len(daemon.logged("schedules reloaded (schedule files changed)")) == 2)

        # SIGHUP reloads, even a change the file check cannot see (same size and mtime)
        other = schedules / "other.toml"
        stat = other.stat()
        other.write_text(other.read_text().replace('every = "1s"', 'every = "2s"'))
        os.utime(other, ns=(stat.st_atime_ns, stat.st_mtime_ns))
        daemon.process.send_signal(signal.SIGHUP)
        wait_for(lambda: daemon.logged("schedules reloaded (SIGHUP): 2 feeds; 0 added, 0 "
                                       "removed, 1 changed"), what="the SIGHUP reload")  # fmt: skip

        # the heartbeat says it is alive; status shows it
        beat = read_heartbeat(Path(f"{db}.daemon.json"))
        assert beat is not None
        assert (beat["pid"], beat["state"], beat["feeds"]) == (daemon.process.pid, "running", 2)
        shown = podarchive("status", "--db", str(db))
        assert shown.returncode == 0, shown.stderr
        assert f"daemon: running (pid {daemon.process.pid}, since " in shown.stdout
        shown_json = json.loads(podarchive("status", "--json", "--db", str(db)).stdout)
        assert shown_json["daemon"]["live"] is True

        # SIGTERM: exit 0 quickly, nothing lost
        daemon.process.send_signal(signal.SIGTERM)
        start = time.monotonic()
        daemon.process.wait(timeout=30)
        assert time.monotonic() - start < 9  # did not wait out the runner's 10 s join
        assert daemon.process.returncode == 0
    finally:
        daemon.stop()

    assert count(db, "SELECT count(*) FROM episodes WHERE feed_id = 1") == 10  # PyTorch
    assert count(db, "SELECT count(*) FROM episodes WHERE feed_id = 2") == 1  # Other
    assert count(db, "SELECT count(*) FROM episodes WHERE page_status = 'ok'") == 9
    conn = sqlite3.connect(db)
    try:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    finally:
        conn.close()
    final = read_heartbeat(Path(f"{db}.daemon.json"))
    assert final is not None
    assert final["state"] == "stopped"
    assert "daemon: stopped" in podarchive("status", "--db", str(db)).stdout

    # the log: every line in one format, one line per feed update
    assert all(LOG_LINE.match(line) for line in daemon.lines), daemon.lines
    assert daemon.lines[0].endswith(f"daemon started (pid {daemon.process.pid}): 1 feed from "
                                    f"{schedules}, tick 0.2s")  # fmt: skip
    assert daemon.lines[-1].endswith("INFO podarchive.daemon: stopped")
    updates = re.compile(r"INFO podarchive: PyTorch: (\d+ new, |unchanged$)")
    logged = sum(1 for line in daemon.lines if updates.search(line))
    assert 0 <= site.hits("/pytorch/feed.xml") - logged <= 1  # one abandoned at SIGTERM at most
    other_updates = sum(1 for line in daemon.lines if "INFO podarchive: Other: " in line)
    assert 0 <= site.hits("/other.xml") - other_updates <= 1


def test_daemon_refuses_a_bad_schedule_at_start_and_a_second_daemon(
    tmp_path: Path, site: LoopbackSite
) -> None:
    schedules, db = tmp_path / "schedules", tmp_path / "archive.db"
    schedules.mkdir()
    (schedules / "bad.toml").write_text('[[feed]]\nurl = "https://x.example/f"\nevry = "1h"\n')
    bad = podarchive("daemon", "--schedules", str(schedules), "--db", str(db))
    assert bad.returncode == 2
    assert bad.stderr == f"podarchive: error: {schedules / 'bad.toml'}: feed[0].evry: unknown key\n"
    (schedules / "bad.toml").unlink()
    site.serve("/f.xml", '<rss version="2.0"><channel><title>F</title></channel></rss>')
    schedule(schedules / "f.toml", site.url("/f.xml"), "F", every="1h")
    first = DaemonProcess(schedules, db)
    try:
        wait_for(lambda: site.hits("/f.xml") == 1, what="the first daemon's poll")
        second = podarchive("daemon", "--schedules", str(schedules), "--db", str(db))
        assert second.returncode == 1
        assert second.stderr.startswith(
            f"podarchive: another daemon (pid {first.process.pid}, since "
        )
        assert second.stderr.endswith(f") holds {db}\n")
        run = podarchive("run", "--schedules", str(schedules), "--db", str(db))
        assert (run.returncode, run.stderr) == (0, "")  # between cycles: a run slips in
        first.process.send_signal(signal.SIGINT)  # Ctrl-C in the foreground: exit 130
        assert first.process.wait(timeout=10) == 130
    finally:
        first.stop()
    assert load_schedules(schedules)  # untouched


# #23: no schedule file ends a running daemon; the heartbeat says what the first cycle does --

BAD_FILES = [
    ('[[feed]]\nurl = "https://x.example/a"\nevery = "3000000d"\n', "feed[0].every: interval"),
    ('[[feed]]\nurl = "https://x.example/b"\npage_every = "99999999999999w"\n', "page_every"),
    ('[[feed]]\nurl = "https://x.example/c"\ncron = "0 0 30 2 *"\n', "never fires"),
    ("[[feed]]\nurl = [" + "[" * 50_000 + "\n", "not valid TOML: nested too deeply"),
    ("[[feed]]\nsize = " + "9" * 5000 + "\n", "not valid TOML: Exceeds the limit"),
    ('[[feed]]\nurl = "https://x.example/d"\nuser_agent = "a\\r\\nX-Evil: 1"\n', "user_agent"),
]


def test_a_bad_file_written_into_a_running_daemons_schedules_leaves_it_running(
    tmp_path: Path, site: LoopbackSite
) -> None:
    schedules, db = tmp_path / "schedules", tmp_path / "archive.db"
    schedules.mkdir()
    site.serve("/good.xml", '<rss version="2.0"><channel><title>Good</title>'
               "<item><guid>g-1</guid><title>G</title></item></channel></rss>")  # fmt: skip
    schedule(schedules / "good.toml", site.url("/good.xml"), "Good")
    daemon = DaemonProcess(schedules, db)
    try:
        wait_for(lambda: site.hits("/good.xml") >= 1, what="the first poll")
        bad = schedules / "bad.toml"
        for n, (text, problem) in enumerate(BAD_FILES, start=1):
            bad.write_text(text)
            wait_for(lambda n=n: len(daemon.logged("schedules not reloaded")) == n, what=problem)
            line = daemon.logged("schedules not reloaded")[-1]
            assert (
                f"ERROR podarchive.daemon: schedules not reloaded (schedule files changed): {bad}: "
                in line
            )
            assert problem in line
            assert line.endswith("keeping the last good schedule (1 feed)")
            assert len(line) < 1200
            assert daemon.process.poll() is None  # alive
            polls = site.hits("/good.xml")
            wait_for(lambda polls=polls: site.hits("/good.xml") > polls, what="the good feed")
        bad.unlink()
        wait_for(lambda: daemon.logged("schedules reloaded (schedule files changed): 1 feed"))
        shown = podarchive("status", "--db", str(db))
        assert f"daemon: running (pid {daemon.process.pid}, since " in shown.stdout
        daemon.process.send_signal(signal.SIGTERM)
        assert daemon.process.wait(timeout=30) == 0
    finally:
        daemon.stop()
    assert not [line for line in daemon.lines if "Traceback" in line]
    assert all(LOG_LINE.match(line) for line in daemon.lines), daemon.lines


def test_status_shows_the_daemon_busy_during_its_first_cycle(
    tmp_path: Path, site: LoopbackSite
) -> None:
    schedules, db = tmp_path / "schedules", tmp_path / "archive.db"
    schedules.mkdir()
    release = threading.Event()
    asked = threading.Event()
    body = b'<rss version="2.0"><channel><title>Slow</title></channel></rss>'

    def slow(handler: Any) -> None:  # holds the response until the test has looked
        asked.set()
        release.wait(60)
        handler.send_response(200)
        handler.send_header("Content-Type", "application/xml")
        handler.send_header("Content-Length", str(len(body)))
        handler.end_headers()
        handler.wfile.write(body)

    site.handle("/slow.xml", slow)
    schedule(schedules / "slow.toml", site.url("/slow.xml"), "Slow", every="1h")
    daemon = DaemonProcess(schedules, db)
    try:
        assert asked.wait(30), "the daemon never asked for the feed"
        beat = Path(f"{db}.daemon.json")
        first = read_heartbeat(beat) or {}
        wait_for(lambda: (read_heartbeat(beat) or {}).get("heartbeat_at") != first.get(
            "heartbeat_at"), what="a heartbeat written while the response is held")  # fmt: skip
        shown = podarchive("status", "--db", str(db))
        assert f"daemon: running (pid {daemon.process.pid}, since " in shown.stdout
        assert "updating 1 feed; 1 feed scheduled" in shown.stdout, shown.stdout
        assert (read_heartbeat(beat) or {})["last_cycle"] is None  # still the first cycle
        release.set()
        wait_for(lambda: ((read_heartbeat(beat) or {}).get("last_cycle") or {}).get("polled"),
                 what="the first cycle's end")  # fmt: skip
        wait_for(lambda: (read_heartbeat(beat) or {}).get("activity") == "idle", what="idle")
    finally:
        release.set()
        daemon.stop()
