"""`podarchive status`: the feeds table, --json, the exit code for monitoring, the heartbeat."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from conftest import FAST_ENV
from loopback import LoopbackSite

from podarchive.core.clock import iso
from podarchive.core.settings import Settings
from podarchive.read.schedule_files import FeedSchedule
from podarchive.store import Archive
from podarchive.tasks.status import daemon_state, heartbeat_path, write_heartbeat
from podarchive.update.run import update_feeds

SETTINGS = Settings(retries=0, host_gap=0, allow_private_hosts=True)
NOW = datetime.now(UTC).replace(microsecond=0)  # the fixture archive's clock


def rss(title: str, items: str) -> bytes:
    return (
        f'<?xml version="1.0"?><rss version="2.0"><channel><title>{title}</title>{items}'
        "</channel></rss>".encode()
    )


ITEM = "<item><guid>{guid}</guid><title>{guid}</title>{link}</item>"


def status(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PODARCHIVE_")}
    env.update(FAST_ENV)
    return subprocess.run(
        [sys.executable, "-m", "podarchive", "status", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=30,
        env=env,
        stdin=subprocess.DEVNULL,
    )


@pytest.fixture
def archive_db(tmp_path: Path, site: LoopbackSite) -> Path:
    """Healthy (2 episodes, one page missing), Broken (failing for two days), Ended (410)."""
    page = site.url("/pages/one")
    site.serve("/pages/one", "<html><body><article>" + "Notes. " * 20 + "</article></body></html>",
               content_type="text/html")  # fmt: skip
    healthy_items = ITEM.format(guid="h-1", link=f"<link>{page}</link>") + ITEM.format(
        guid="h-2", link=f"<link>{site.url('/pages/missing')}</link>"
    )
    site.serve("/healthy.xml", rss("Healthy", healthy_items))
    site.serve("/broken.xml", rss("Broken", ITEM.format(guid="b-1", link="")))
    site.serve("/ended.xml", rss("Ended", ITEM.format(guid="e-1", link="")))
    feeds = [
        FeedSchedule(url=site.url("/healthy.xml"), name="Healthy"),
        FeedSchedule(url=site.url("/broken.xml"), name="Broken"),
        FeedSchedule(url=site.url("/ended.xml"), name="Ended"),
    ]
    db = tmp_path / "archive.db"
    with Archive(db) as archive:
        moment = NOW - timedelta(hours=50)
        update_feeds(archive, feeds, settings=SETTINGS, clock=lambda: moment)
        site.serve("/broken.xml", "oops", status=500, content_type="text/plain")
        site.serve("/ended.xml", "gone", status=410, content_type="text/plain")
        for hours in (49, 25, 1):
            moment = NOW - timedelta(hours=hours)
            update_feeds(archive, feeds, settings=SETTINGS, clock=lambda m=moment: m)
    return db


def test_table_lists_each_feed_and_exits_1_for_a_long_failing_feed(archive_db: Path) -> None:
    result = status(cwd=archive_db.parent)
    assert result.returncode == 1, result.stderr
    assert result.stderr == ""
    lines = result.stdout.splitlines()
    assert lines[0].split("  ")[0] == "FEED"
    for column in ("LAST SUCCESS", "ERRORS", "LAST ERROR", "NEXT DUE", "EPISODES", "PAGES MISSING"):
        assert column in lines[0]
    rows = {line.split()[0] if not line.startswith("!") else line.split()[1]: line
            for line in lines[1:4]}  # fmt: skip
    assert set(rows) == {"Broken", "Ended", "Healthy"}
    assert rows["Broken"].startswith("! Broken")  # marked: failing longer than the threshold
    assert "2d ago" in rows["Broken"]  # its last success, 50 hours ago
    assert "HTTP 500" in rows["Broken"]
    assert "1h ago" in rows["Healthy"]
    assert "1 failed: HTTP 404 not found" in rows["Healthy"]
    assert "gone 20" in rows["Ended"]
    assert not rows["Ended"].startswith("!")  # gone feeds are not polled: not "failing"
    assert lines[-2] == "daemon: not running (no heartbeat file)"
    assert lines[-1] == "failing for more than 1d: 1 feed"


def test_a_higher_threshold_exits_0(archive_db: Path) -> None:
    result = status("--failing-for", "3d", cwd=archive_db.parent)
    assert result.returncode == 0, result.stderr
    assert "failing for more than" not in result.stdout


def test_json(archive_db: Path) -> None:
    result = status("--json", "--db", str(archive_db), cwd=archive_db.parent)
    assert result.returncode == 1
    doc = json.loads(result.stdout)
    assert doc["format"] == 1
    assert doc["failing_for_seconds"] == 86400
    assert doc["daemon"] == {"state": "none", "live": False}
    feeds = {f["name"]: f for f in doc["feeds"]}
    assert doc["failing"] == [feeds["Broken"]["url"]]
    broken, healthy, ended = feeds["Broken"], feeds["Healthy"], feeds["Ended"]
    assert broken["error_count"] == 3
    assert broken["last_error"] == "HTTP 500 server error"
    assert broken["last_success_at"] == iso(NOW - timedelta(hours=50))
    assert broken["failing"] is True
    assert broken["episodes"] == 1
    assert healthy | {"url": None, "next_due_at": None, "first_seen_at": None} == {
        "url": None,
        "name": "Healthy",
        "title": "Healthy",
        "fetch_url": None,
        "first_seen_at": None,
        "last_fetched_at": iso(NOW - timedelta(hours=1)),
        "last_success_at": iso(NOW - timedelta(hours=1)),
        "last_status": 200,
        "last_error": None,
        "last_error_at": None,
        "error_count": 0,
        "next_due_at": None,
        "gone_at": None,
        "episodes": 2,
        "pages_pending": 0,
        "pages_failed": 1,
        "pages_empty": 0,
        "pages_missing": 1,
        "page_errors": {"HTTP 404 not found": 1},
        "transcripts_failing": 0,
        "chapters_failing": 0,
        "file_error": None,
        "file_errors": {},
        "kept_fewer": None,
        "pages_low_confidence": 0,
        "media_errors": {},
        "push": None,
        "failing": False,
    }
    assert healthy["next_due_at"] > healthy["last_success_at"]
    assert ended["gone_at"] == iso(NOW - timedelta(hours=49))
    assert ended["failing"] is False


def test_bad_threshold_and_missing_archive(tmp_path: Path) -> None:
    bad = status("--failing-for", "soon", cwd=tmp_path)
    assert bad.returncode == 2
    assert "bad interval" in bad.stderr
    missing = status(cwd=tmp_path)
    assert (missing.returncode, missing.stderr) == (1, "podarchive: no archive at archive.db\n")
    assert not (tmp_path / "archive.db").exists()


def test_a_stale_heartbeat_is_reported_dead(archive_db: Path) -> None:
    now = datetime.now(UTC)
    write_heartbeat(
        heartbeat_path(archive_db),
        {
            "pid": os.getpid(),
            "state": "running",
            "started_at": iso(now - timedelta(days=1)),
            "heartbeat_at": iso(now - timedelta(minutes=10, seconds=20)),
            "activity": "idle",
            "tick": 2,
        },
    )
    result = status("--failing-for", "3d", cwd=archive_db.parent)
    assert result.returncode == 0
    assert result.stdout.splitlines()[-1] == (
        f"daemon: DEAD (pid {os.getpid()}, last heartbeat 10m ago)"
    )
    doc = json.loads(status("--json", "--failing-for", "3d", cwd=archive_db.parent).stdout)
    assert doc["daemon"]["state"] == "dead"
    assert doc["daemon"]["live"] is False


def dead_pid() -> int:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


@pytest.mark.parametrize(
    ("beat", "state"),
    [
        ({"pid": os.getpid(), "heartbeat_at": iso(NOW), "state": "running"}, "running"),
        ({"pid": os.getpid(), "heartbeat_at": iso(NOW - timedelta(seconds=61))}, "dead"),
        ({"pid": os.getpid(), "heartbeat_at": iso(NOW - timedelta(seconds=61)), "tick": 30},
         "running"),  # three ticks of 30 s: still fresh
        ({"pid": "x", "heartbeat_at": iso(NOW)}, "dead"),
        ({"pid": os.getpid(), "heartbeat_at": "garbage"}, "dead"),
        ({"pid": os.getpid(), "heartbeat_at": iso(NOW), "state": "stopped"}, "stopped"),
        (None, "none"),
    ],
)  # fmt: skip
def test_daemon_state(beat: dict | None, state: str) -> None:
    assert daemon_state(beat, NOW)["state"] == state


def test_a_dead_pid_with_a_fresh_heartbeat_is_dead() -> None:
    beat = {"pid": dead_pid(), "heartbeat_at": iso(NOW), "state": "running"}
    assert daemon_state(beat, NOW) | {"heartbeat_age_seconds": 0} == {
        **beat,
        "heartbeat_age_seconds": 0,
        "state": "dead",
        "live": False,
    }
