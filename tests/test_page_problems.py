"""Issue #14: page problems are visible, every request is in the fetch log, a changed schedule
retries what failed at once, ``status`` reads without writing, clean exits, plain wording.

The PyTorch fixture's 9 episode pages and 6 files (4 transcripts, 2 chapters) are on the
loopback server, i.e. on a private address: without ``allow_private_hosts`` each is refused
before a request is made, which is exactly the measured case (a run exited 0 and said nothing).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import closing
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

import httpx
import pytest
from click.testing import CliRunner
from conftest import FAST_ENV
from loopback import FIXTURES, PYTORCH_MEDIA, PYTORCH_SITE, LoopbackSite

from podarchive.cli import cli
from podarchive.core.errors import FetchError, HostBackoff
from podarchive.core.settings import Settings
from podarchive.core.types import FetchRecord
from podarchive.net.fetch import Fetcher
from podarchive.read.schedule_files import FeedSchedule, load_schedule_file
from podarchive.store import SCHEMA_VERSION, Archive
from podarchive.tasks.status import fix_for, plural, problem_line, reason_of, reasons
from podarchive.update.run import update_feeds

REPO = Path(__file__).resolve().parents[1]
V7 = Path(__file__).parent / "fixtures" / "archives" / "v7.sqlite"
GUARDED = Settings(host_gap=0, retry_base=0.01, retries=0, allow_private_hosts=False)
ALLOWED = GUARDED.replace(allow_private_hosts=True)
PAGES, TRANSCRIPTS, CHAPTERS = 9, 4, 2  # what the PyTorch fixture links to
BLOCKED_LINE = (
    "podarchive: PyTorch: 9 pages, 4 transcripts and 2 chapters files blocked: private "
    "address; set allow_private_hosts = true in {source}\n"
)
INTERRUPTED = "podarchive: interrupted; what was stored is kept; the next run does the rest\n"


def invoke(*args: str, env: dict[str, str] | None = None) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False, env=env)
    return result.exit_code, result.stdout, result.stderr


def rows(db: Path, sql: str, *params: Any) -> list[tuple[Any, ...]]:
    with closing(sqlite3.connect(db)) as conn:
        return conn.execute(sql, params).fetchall()


def schedule_file(directory: Path, url: str, name: str = "PyTorch", **keys: Any) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / "pytorch.toml"
    text = f'[[feed]]\nurl = "{url}"\nname = "{name}"\n'
    for key, value in keys.items():
        text += f"{key} = {json.dumps(value)}\n"
    path.write_text(text, encoding="utf-8")
    return path


def serve_unresolvable(site: LoopbackSite) -> str:
    """The PyTorch feed with its pages and files on host names that do not resolve."""
    feed = (FIXTURES / "pytorch" / "feed.xml").read_bytes()
    feed = feed.replace(f"{PYTORCH_SITE}/episodes/".encode(), b"http://pages.podarchive.invalid/")
    feed = feed.replace(PYTORCH_MEDIA.encode(), b"http://media.podarchive.invalid/")
    site.serve("/dns/feed.xml", feed, content_type="text/xml; charset=utf-8")
    return site.url("/dns/feed.xml")


def media_hits(site: LoopbackSite) -> int:
    return sum(1 for r in site.requests if "/episodes/" in r.path or "/media/" in r.path)


def logged(db: Path, name: str, kind: str) -> int:
    return int(
        rows(
            db,
            "SELECT count(*) FROM fetches x JOIN feeds f ON f.id = x.feed_id "
            "WHERE f.name = ? AND x.kind = ?",
            name,
            kind,
        )[0][0]
    )


def failed(db: Path, name: str) -> dict[str, int]:
    """How many pages, transcripts and chapters files of the feed failed their last fetch."""
    join = "JOIN episodes e ON e.id = x.episode_id JOIN feeds f ON f.id = e.feed_id"
    return {
        "page": rows(
            db,
            "SELECT count(*) FROM episodes e JOIN feeds f ON f.id = e.feed_id "
            "WHERE f.name = ? AND e.page_status = 'failed'",
            name,
        )[0][0],
        "transcript": rows(
            db,
            f"SELECT count(*) FROM transcripts x {join} WHERE f.name = ? AND x.failures > 0",
            name,
        )[0][0],
        "chapters": rows(
            db,
            f"SELECT count(*) FROM chapter_files x {join} WHERE f.name = ? AND x.failures > 0",
            name,
        )[0][0],
    }


# every request is a row of the fetch log ------------------------------------------------------


def test_every_page_and_file_request_is_a_fetch_row_refused_ones_too(
    tmp_path: Path, site: LoopbackSite, pytorch_feed: str
) -> None:
    """Measured before: 392 pages failed and not one was in ``fetches``. A get refused before
    any request (a private address, a name that does not resolve) is one row now."""
    db = tmp_path / "a.db"
    feeds = [
        FeedSchedule(url=pytorch_feed, name="Blocked"),
        FeedSchedule(url=serve_unresolvable(site), name="DNS"),
    ]
    with Archive(db) as archive:
        report = update_feeds(archive, feeds, settings=GUARDED)
    assert all(f.ok for f in report.feeds)
    assert media_hits(site) == 0  # nothing reached the server but the two feeds
    for name in ("Blocked", "DNS"):
        counts = failed(db, name)
        assert counts == {"page": PAGES, "transcript": TRANSCRIPTS, "chapters": CHAPTERS}, name
        for kind, count in counts.items():
            assert logged(db, name, kind) == count, (name, kind)
    # each row carries the page's reason, its episode, and no status: no answer came
    assert rows(
        db,
        "SELECT DISTINCT x.status, x.error = e.page_error, x.episode_id = e.id, x.bytes "
        "FROM fetches x JOIN episodes e ON e.id = x.episode_id WHERE x.kind = 'page'",
    ) == [(None, 1, 1, 0)]
    errors = {e for (e,) in rows(db, "SELECT DISTINCT error FROM fetches WHERE kind = 'page'")}
    assert errors == {
        "blocked: private address 127.0.0.1",
        "cannot resolve pages.podarchive.invalid: Name or service not known (test)",
    }
    # allowed: one row per request the server saw, no more, no fewer
    before = {k: logged(db, "Blocked", k) for k in ("page", "transcript", "chapters")}
    with Archive(db) as archive:
        allowed = FeedSchedule(url=pytorch_feed, name="Blocked", allow_private_hosts=True)
        update_feeds(archive, [allowed], settings=GUARDED)
    served = {
        "page": sum(1 for r in site.requests if "/episodes/" in r.path),
        "transcript": sum(
            1 for r in site.requests if "/media/" in r.path and "chapters" not in r.path
        ),
        "chapters": sum(1 for r in site.requests if "/media/" in r.path and "chapters" in r.path),
    }
    assert served == {"page": PAGES, "transcript": TRANSCRIPTS, "chapters": CHAPTERS}
    for kind, count in served.items():
        assert logged(db, "Blocked", kind) - before[kind] == count, kind
    assert failed(db, "Blocked") == {"page": 0, "transcript": 0, "chapters": 0}


@pytest.mark.parametrize(
    ("url", "fetcher_kwargs", "error"),
    [
        ("http://127.0.0.1:9/page", {}, "blocked: private address 127.0.0.1"),
        ("ftp://example.org/page", {}, "blocked: not an http(s) URL: ftp://example.org/page"),
        # a caller's transport: the name is resolved before the request, as the guard asks
        (
            "http://nowhere.podarchive.invalid/page",
            {"transport": httpx.HTTPTransport()},
            "cannot resolve nowhere.podarchive.invalid: Name or service not known (test)",
        ),
    ],
    ids=["private-address", "scheme", "dns-before-request"],
)
def test_a_get_refused_before_any_request_leaves_one_row(
    url: str, fetcher_kwargs: dict[str, Any], error: str
) -> None:
    log: list[FetchRecord] = []
    with Fetcher(GUARDED, **fetcher_kwargs) as fetcher, pytest.raises(FetchError) as caught:
        fetcher.get(url, kind="page", trusted=False, log=log)
    assert str(caught.value) == error
    assert [(r.url, r.kind, r.status, r.bytes, r.error) for r in log] == [
        (url, "page", None, 0, error)
    ]


def test_a_host_that_asked_us_to_wait_leaves_one_row(site: LoopbackSite) -> None:
    site.serve("/page", "<html></html>", content_type="text/html")
    later = datetime.now(UTC) + timedelta(hours=1)
    log: list[FetchRecord] = []
    with (
        Fetcher(GUARDED, blocked_hosts={"127.0.0.1": later}) as fetcher,
        pytest.raises(HostBackoff),
    ):
        fetcher.get(site.url("/page"), kind="page", log=log)
    (record,) = log
    assert (record.status, (record.error or "")[:9]) == (None, "waiting: ")
    assert site.hits("/page") == 0


# a changed schedule retries what failed, at once ---------------------------------------------


def run_feed(db: Path, schedule: FeedSchedule, settings: Settings = GUARDED) -> Any:
    with Archive(db) as archive:
        return update_feeds(archive, [schedule], settings=settings).feeds[0]


def test_allowing_private_hosts_retries_the_blocked_pages_and_files_at_once(
    tmp_path: Path, site: LoopbackSite, pytorch_feed: str
) -> None:
    db = tmp_path / "a.db"
    first = run_feed(db, FeedSchedule(url=pytorch_feed, name="PyTorch"))
    assert (first.pages_failed, first.files_failed) == (PAGES, TRANSCRIPTS + CHAPTERS)
    again = run_feed(db, FeedSchedule(url=pytorch_feed, name="PyTorch"))
    assert (again.pages_failed, again.files_failed) == (0, 0)  # backing off: not asked
    assert logged(db, "PyTorch", "page") == PAGES
    # the schedule now allows private hosts: no waiting for the back-off (an hour and more)
    fixed = run_feed(db, FeedSchedule(url=pytorch_feed, name="PyTorch", allow_private_hosts=True))
    assert (fixed.pages_ok, fixed.pages_failed) == (PAGES, 0)
    assert (fixed.files_ok, fixed.files_failed) == (TRANSCRIPTS + CHAPTERS, 0)
    assert fixed.problems == []
    (stored,) = rows(db, "SELECT fetch_settings FROM feeds WHERE name = 'PyTorch'")[0]
    assert json.loads(stored) == {
        "allow_private_hosts": True, "chapters": True, "pages": True, "transcripts": True,
        "user_agent": None,
    }  # fmt: skip
    # unchanged since: the next run asks nothing again (the pages are archived)
    asked = media_hits(site)
    run_feed(db, FeedSchedule(url=pytorch_feed, name="PyTorch", allow_private_hosts=True))
    assert media_hits(site) == asked


def test_run_allow_private_hosts_counts_as_a_change_too(
    tmp_path: Path, site: LoopbackSite, pytorch_feed: str
) -> None:
    db = tmp_path / "a.db"
    run_feed(db, FeedSchedule(url=pytorch_feed, name="PyTorch"))
    fixed = run_feed(db, FeedSchedule(url=pytorch_feed, name="PyTorch"), settings=ALLOWED)
    assert (fixed.pages_ok, fixed.files_ok) == (PAGES, TRANSCRIPTS + CHAPTERS)


def test_a_new_user_agent_retries_pages_the_host_refused(
    tmp_path: Path, site: LoopbackSite, pytorch_feed: str
) -> None:
    pages = sorted((FIXTURES / "pytorch" / "pages").glob("*.html"))
    agents: list[str] = []

    def picky(body: bytes) -> Any:
        def handler(request: BaseHTTPRequestHandler) -> None:
            agents.append(request.headers.get("User-Agent", ""))
            ok = request.headers.get("User-Agent") == "Friendly/1.0"
            request.send_response(200 if ok else 403)
            request.send_header("Content-Type", "text/html; charset=utf-8")
            request.send_header("Content-Length", str(len(body) if ok else 0))
            request.end_headers()
            if ok:
                request.wfile.write(body)

        return handler

    for page in pages:
        site.handle(f"/pytorch/episodes/{page.stem}", picky(page.read_bytes()))
    db = tmp_path / "a.db"
    schedule = FeedSchedule(url=pytorch_feed, name="PyTorch", chapters=False, transcripts=False)
    refused = run_feed(db, schedule, ALLOWED)
    assert refused.pages_failed == PAGES
    assert {reason_of(e) for _, e in refused.problems} == {
        "HTTP 403 forbidden (the host may block unknown user agents)"
    }
    assert run_feed(db, schedule, ALLOWED).pages_failed == 0  # backing off
    assert len(agents) == PAGES
    friendly = run_feed(db, dataclasses.replace(schedule, user_agent="Friendly/1.0"), ALLOWED)
    assert (friendly.pages_ok, friendly.pages_failed) == (PAGES, 0)
    assert agents[PAGES:] == ["Friendly/1.0"] * PAGES


def test_turning_pages_on_again_retries_the_failed_pages_at_once(
    tmp_path: Path, site: LoopbackSite, pytorch_feed: str
) -> None:
    db = tmp_path / "a.db"
    run_feed(db, FeedSchedule(url=pytorch_feed, name="PyTorch"))
    assert logged(db, "PyTorch", "page") == PAGES
    run_feed(db, FeedSchedule(url=pytorch_feed, name="PyTorch", pages=False))
    assert logged(db, "PyTorch", "page") == PAGES  # pages off: none asked
    back = run_feed(db, FeedSchedule(url=pytorch_feed, name="PyTorch"))
    assert back.pages_failed == PAGES  # asked again at once (still blocked, so failed again)
    assert logged(db, "PyTorch", "page") == 2 * PAGES


def test_settings_never_seen_before_are_remembered_without_retrying(
    tmp_path: Path, site: LoopbackSite, pytorch_feed: str
) -> None:
    """An archive upgraded to schema 10 knows no settings yet: nothing is retried early."""
    db = tmp_path / "a.db"
    run_feed(db, FeedSchedule(url=pytorch_feed, name="PyTorch"))
    with closing(sqlite3.connect(db)) as conn, conn:
        conn.execute("UPDATE feeds SET fetch_settings = NULL")
    later = run_feed(db, FeedSchedule(url=pytorch_feed, name="PyTorch", allow_private_hosts=True))
    assert later.pages_ok == later.pages_failed == 0
    assert media_hits(site) == 0
    assert rows(db, "SELECT fetch_settings IS NOT NULL FROM feeds") == [(1,)]


# run says what failed, why, and what to do ---------------------------------------------------


def test_run_ends_with_one_line_per_feed_whose_pages_failed_and_exits_0(
    tmp_path: Path, site: LoopbackSite, pytorch_feed: str
) -> None:
    schedules, db = tmp_path / "schedules", tmp_path / "a.db"
    source = schedule_file(schedules, pytorch_feed)
    code, out, err = invoke("run", "--schedules", str(schedules), "--db", str(db))
    assert (code, out) == (0, "")
    assert err == BLOCKED_LINE.format(source=source)
    # nothing retried in the next run (back-off): nothing to say
    assert invoke("run", "--all", "--schedules", str(schedules), "--db", str(db)) == (0, "", "")
    # the fix it names works at once
    source.write_text(source.read_text() + "allow_private_hosts = true\n")
    assert invoke("run", "--all", "--schedules", str(schedules), "--db", str(db)) == (0, "", "")
    assert rows(db, "SELECT count(*) FROM episodes WHERE page_status = 'ok'") == [(PAGES,)]


def test_a_failed_feed_still_exits_1_beside_page_problems(
    tmp_path: Path, site: LoopbackSite, pytorch_feed: str
) -> None:
    db = tmp_path / "a.db"
    code, _, err = invoke("run", pytorch_feed, site.url("/gone.xml"), "--db", str(db))
    assert code == 1
    assert err.splitlines() == [
        f"podarchive: {site.url('/gone.xml')}: HTTP 404 not found",
        f"podarchive: {pytorch_feed}: 9 pages, 4 transcripts and 2 chapters files blocked: "
        "private address; run it with --allow-private-hosts, or schedule it with "
        "allow_private_hosts = true",
    ]


def test_run_verbose_logs_each_page_and_still_ends_with_the_line(
    tmp_path: Path, site: LoopbackSite, pytorch_feed: str
) -> None:
    schedules, db = tmp_path / "schedules", tmp_path / "a.db"
    source = schedule_file(schedules, pytorch_feed)
    code, _, err = invoke("run", "-v", "--schedules", str(schedules), "--db", str(db))
    assert code == 0
    assert err.count("blocked: private address 127.0.0.1") == PAGES + TRANSCRIPTS + CHAPTERS
    assert err.endswith(BLOCKED_LINE.format(source=source))


def test_unresolvable_and_missing_pages_get_their_own_fix(
    tmp_path: Path, site: LoopbackSite, pytorch_feed: str
) -> None:
    schedules, db = tmp_path / "schedules", tmp_path / "a.db"
    schedule_file(schedules, serve_unresolvable(site), name="Nowhere")
    code, _, err = invoke("run", "--schedules", str(schedules), "--db", str(db))
    assert code == 0
    assert err.splitlines() == [
        "podarchive: Nowhere: 9 pages, 4 transcripts and 2 chapters files failed: cannot resolve "
        "pages.podarchive.invalid (9 of 15); check the host name and the network"
    ]
    for page in (FIXTURES / "pytorch" / "pages").glob("*.html"):
        site.serve(f"/pytorch/episodes/{page.stem}", "gone", status=404, content_type="text/plain")
    schedule_file(schedules, pytorch_feed, allow_private_hosts=True, transcripts=False,
                  chapters=False)  # fmt: skip
    code, _, err = invoke("run", "--schedules", str(schedules), "--db", str(tmp_path / "b.db"))
    assert (code, err) == (
        0,
        "podarchive: PyTorch: 9 pages failed: HTTP 404 not found; nothing to do: retried with "
        "back-off\n",
    )


def test_pages_over_the_cap_name_the_setting_to_raise(
    tmp_path: Path, site: LoopbackSite, pytorch_feed: str
) -> None:
    schedules = tmp_path / "schedules"
    schedule_file(schedules, pytorch_feed, allow_private_hosts=True, transcripts=False,
                  chapters=False)  # fmt: skip
    code, _, err = invoke(
        "run", "--schedules", str(schedules), "--db", str(tmp_path / "a.db"),
        env={"PODARCHIVE_MAX_PAGE_BYTES": "1000"},
    )  # fmt: skip
    assert (code, err) == (
        0,
        "podarchive: PyTorch: 9 pages failed: body over 1000 bytes; raise max_page_bytes "
        "(PODARCHIVE_MAX_PAGE_BYTES)\n",
    )


@pytest.mark.parametrize(
    ("error", "reason"),
    [
        ("blocked: private address 10.0.0.5", "blocked: private address"),
        ("blocked: private address ::1", "blocked: private address"),
        ("cannot resolve a.example: Name or service not known", "cannot resolve a.example"),
        ("cannot connect: Connection refused", "cannot connect: Connection refused"),
        ("HTTP 404 not found", "HTTP 404 not found"),
        ("body over 10 MiB (decompressed)", "body over 10 MiB"),
        ("waiting: a.example asked us not to return before 2026-12-03T10:00:00Z",
         "waiting: a.example asked us to wait"),
        ("redirect loop at https://a.example/x", "redirect loop"),
        ("blocked: not an http(s) URL: ftp://a.example/x", "blocked: not an http(s) URL"),
        ("line one\nline two", "line one line two"),
    ],
)  # fmt: skip
def test_reason_of(error: str, reason: str) -> None:
    assert reason_of(error) == reason


def test_reasons_are_counted_commonest_first() -> None:
    assert reasons({
        "blocked: private address 10.0.0.1": 2, "HTTP 500 server error": 3,
        "blocked: private address 10.0.0.2": 2,
    }) == {"blocked: private address": 4, "HTTP 500 server error": 3}  # fmt: skip


@pytest.mark.parametrize(
    ("reason", "kinds", "source", "fix"),
    [
        ("blocked: private address", {"page"}, "s/x.toml",
         "set allow_private_hosts = true in s/x.toml"),
        ("blocked: private address", {"page"}, "",
         "run it with --allow-private-hosts, or schedule it with allow_private_hosts = true"),
        ("cannot resolve a.example", {"page"}, "s/x.toml", "check the host name and the network"),
        ("cannot connect: Connection refused", {"transcript"}, "", "check the host and the network"),
        ("timeout: no data for 30 s", {"page"}, "", "check the host and the network"),
        ("HTTP 500 server error", {"page"}, "", "nothing to do: retried with back-off"),
        ("HTTP 404 not found", {"chapters"}, "", "nothing to do: retried with back-off"),
        ("HTTP 403 forbidden (the host may block unknown user agents)", {"page"}, "s/x.toml",
         "if the host refuses unknown user agents, set user_agent in s/x.toml; otherwise "
         "nothing to do: retried with back-off"),
        ("body over 10 MiB", {"page"}, "", "raise max_page_bytes (PODARCHIVE_MAX_PAGE_BYTES)"),
        ("body over 20 MiB", {"transcript"}, "",
         "raise max_file_bytes (PODARCHIVE_MAX_FILE_BYTES)"),
        ("not a usable transcript", {"transcript"}, "", "retried with back-off"),
    ],
)  # fmt: skip
def test_fix_for(reason: str, kinds: set[str], source: str, fix: str) -> None:
    assert fix_for(reason, kinds, source) == fix


def test_problem_line() -> None:
    assert problem_line("X", [], "") is None
    assert problem_line("X", [("page", "HTTP 500 server error")], "") == (
        "X: 1 page failed: HTTP 500 server error; nothing to do: retried with back-off"
    )
    assert problem_line(
        "X",
        [("chapters", "blocked: private address 10.0.0.1"),
         ("page", "blocked: private address 10.0.0.2"),
         ("page", "cannot resolve a.example: Name or service not known")],
        "s/x.toml",
    ) == (
        "X: 2 pages and 1 chapters file failed: blocked: private address (2 of 3); "
        "set allow_private_hosts = true in s/x.toml"
    )  # fmt: skip


# status: the reasons, and reading without writing --------------------------------------------


def test_status_shows_the_commonest_reason_and_counts_them_by_reason(
    tmp_path: Path, site: LoopbackSite, pytorch_feed: str
) -> None:
    db = tmp_path / "a.db"
    run_feed(db, FeedSchedule(url=pytorch_feed, name="PyTorch"))
    code, out, _ = invoke("status", "--db", str(db))
    assert code == 0
    (row,) = [line for line in out.splitlines() if line.startswith("PyTorch")]
    assert "9 failed: blocked: private address" in row
    assert "4 transcripts, 2 chapters: blocked: private address" in row
    doc = json.loads(invoke("status", "--json", "--db", str(db))[1])
    (feed,) = doc["feeds"]
    assert feed["page_errors"] == {"blocked: private address": PAGES}
    assert feed["file_errors"] == {"blocked: private address": TRANSCRIPTS + CHAPTERS}


def snapshot(directory: Path) -> dict[str, tuple[int, str]]:
    """Each file beside the archive: its modification time and content hash."""
    return {
        p.name: (p.stat().st_mtime_ns, hashlib.sha256(p.read_bytes()).hexdigest())
        for p in sorted(directory.iterdir())
    }


def test_status_writes_nothing_not_even_beside_the_archive(
    tmp_path: Path, site: LoopbackSite, pytorch_feed: str
) -> None:
    folder = tmp_path / "archive"
    folder.mkdir()
    db = folder / "archive.db"
    run_feed(db, FeedSchedule(url=pytorch_feed, name="PyTorch"), ALLOWED)
    before = snapshot(folder)
    assert invoke("status", "--db", str(db))[0] == 0
    assert invoke("status", "--json", "--db", str(db))[0] == 0
    assert snapshot(folder) == before
    # while a writer has it open, with changes still in its WAL: they are read
    with closing(sqlite3.connect(db)) as writer:
        writer.execute("PRAGMA wal_autocheckpoint = 0")
        with writer:
            writer.execute("UPDATE feeds SET name = 'Renamed'")
        code, out, _ = invoke("status", "--db", str(db))
        assert code == 0
        assert "Renamed" in out


def test_status_reads_an_archive_of_an_older_schema_without_upgrading_it(
    tmp_path: Path,
) -> None:
    db = tmp_path / "archive.db"
    shutil.copy(V7, db)
    db.chmod(0o444)
    before = snapshot(tmp_path)
    code, out, err = invoke("status", "--json", "--db", str(db))
    assert err == ""
    names = {f["name"] for f in json.loads(out)["feeds"]}
    assert "PyTorch Developer Podcast" in names
    assert snapshot(tmp_path) == before
    with closing(sqlite3.connect(f"file:{db}?mode=ro", uri=True)) as conn:
        assert conn.execute("PRAGMA user_version").fetchone() == (7,)


# another user: status on an archive they may only read; add and run where they may not write


def as_other_user() -> list[str]:
    """A prefix running a command as a user who owns none of the test's files."""
    if os.geteuid() != 0:
        return []  # not root: permissions already hold for us
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        pytest.skip("running as root without setpriv: cannot test another user's permissions")
    prefix = [setpriv, "--reuid=nobody", "--regid=nogroup", "--clear-groups"]
    probe = subprocess.run(
        [*prefix, sys.executable, "-c", "import click, podarchive"],
        env={**os.environ, "PYTHONPATH": str(REPO / "src")},
        capture_output=True,
        timeout=60,
        check=False,
    )
    if probe.returncode != 0:  # e.g. a virtualenv in a folder only its owner may enter
        pytest.skip("another user cannot run this interpreter with podarchive's dependencies")
    return prefix


@pytest.fixture
def shared_dir() -> Iterator[Path]:
    """A directory anyone may enter (pytest's tmp_path is private to its owner)."""
    path = Path(tempfile.mkdtemp(prefix="podarchive-shared-"))
    path.chmod(0o755)
    try:
        yield path
    finally:
        for p in [path, *path.rglob("*")]:
            if p.is_dir():
                p.chmod(0o755)
        shutil.rmtree(path)


def podarchive(
    *args: str, cwd: Path, prefix: list[str] | None = None, timeout: float = 60
) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PODARCHIVE_")}
    env.update(FAST_ENV)
    env["PYTHONPATH"] = str(REPO / "src")
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    return subprocess.run(
        [*(prefix or []), sys.executable, "-m", "podarchive", *args],
        cwd=cwd, capture_output=True, text=True, timeout=timeout, env=env,
        stdin=subprocess.DEVNULL,
    )  # fmt: skip


def read_only_archive(shared_dir: Path, pytorch_feed: str) -> Path:
    """The PyTorch archive in a folder, both read-only: what another user can only read."""
    folder = shared_dir / "archive"
    folder.mkdir()
    db = folder / "archive.db"
    run_feed(db, FeedSchedule(url=pytorch_feed, name="PyTorch"), ALLOWED)
    db.chmod(0o444)
    folder.chmod(0o555)
    return db


def test_status_works_for_a_user_who_may_only_read_the_archive(
    shared_dir: Path, site: LoopbackSite, pytorch_feed: str
) -> None:
    prefix = as_other_user()
    db = read_only_archive(shared_dir, pytorch_feed)
    folder = db.parent
    before = snapshot(folder)
    result = podarchive("status", "--db", str(db), cwd=shared_dir, prefix=prefix)
    assert (result.returncode, result.stderr) == (0, "")
    assert result.stdout.startswith("FEED")
    assert "PyTorch" in result.stdout
    assert snapshot(folder) == before


def test_add_into_an_unwritable_directory_is_one_line_and_exit_1(shared_dir: Path) -> None:
    prefix = as_other_user()
    schedules = shared_dir / "schedules"
    schedules.mkdir()
    schedules.chmod(0o555)
    result = podarchive(
        "add", "https://x.example/feed.xml", "--no-check", "--name", "X", "--schedules",
        str(schedules), cwd=shared_dir, prefix=prefix,
    )  # fmt: skip
    assert result.returncode == 1
    assert result.stderr == f"podarchive: cannot write {schedules / 'x.toml'}: Permission denied\n"
    nested = podarchive(
        "add", "https://x.example/feed.xml", "--no-check", "--schedules",
        str(schedules / "more"), cwd=shared_dir, prefix=prefix,
    )  # fmt: skip
    assert nested.returncode == 1
    assert nested.stderr == f"podarchive: cannot make {schedules / 'more'}: Permission denied\n"
    assert list(schedules.iterdir()) == []


def test_add_where_a_file_is_in_the_way_is_one_line_and_exit_1(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("")
    code, out, err = invoke(
        "add", "https://x.example/f", "--no-check", "--schedules", str(tmp_path / "file" / "s")
    )
    assert (code, out) == (1, "")
    assert err == f"podarchive: cannot make {tmp_path / 'file' / 's'}: Not a directory\n"


def test_run_into_an_unwritable_archive_folder_is_one_line_and_exit_1(
    shared_dir: Path, site: LoopbackSite, pytorch_feed: str
) -> None:
    prefix = as_other_user()
    folder = shared_dir / "archive"
    folder.mkdir()
    folder.chmod(0o555)
    db = folder / "archive.db"
    result = podarchive("run", pytorch_feed, "--db", str(db), cwd=shared_dir, prefix=prefix)
    assert result.returncode == 1
    (line,) = result.stderr.splitlines()
    assert line.startswith(f"podarchive: cannot lock {db}: Permission denied")
    assert list(folder.iterdir()) == []
    code, _, err = invoke("run", pytorch_feed, "--db", str(folder / "file.db" / "archive.db"))
    assert code == 1
    assert len(err.splitlines()) == 1
    assert "Traceback" not in err


# Ctrl-C -----------------------------------------------------------------------------------


class Hanging:
    """A route that answers only when released (at the end of the test)."""

    def __init__(self) -> None:
        self.asked = threading.Event()
        self.release = threading.Event()

    def __call__(self, request: BaseHTTPRequestHandler) -> None:
        self.asked.set()
        self.release.wait(60)
        try:
            request.send_response(503)
            request.send_header("Content-Length", "0")
            request.end_headers()
        except OSError:
            pass


@pytest.fixture
def hanging(site: LoopbackSite) -> Iterator[Hanging]:
    route = Hanging()
    site.handle("/slow.xml", route)
    yield route
    route.release.set()


def wait_for(condition: Any, what: str, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)


def spawn(*args: str, cwd: Path) -> subprocess.Popen[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PODARCHIVE_")}
    env.update(FAST_ENV)
    return subprocess.Popen(
        [sys.executable, "-m", "podarchive", *args], cwd=cwd, env=env, text=True,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL,
    )  # fmt: skip


def episodes_in(db: Path) -> int:
    try:
        with closing(sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5)) as conn:
            return int(conn.execute("SELECT count(*) FROM episodes").fetchone()[0])
    except sqlite3.Error:
        return 0


def test_ctrl_c_stops_a_run_with_exit_130_one_line_and_keeps_what_was_stored(
    tmp_path: Path, site: LoopbackSite, pytorch_feed: str, hanging: Hanging
) -> None:
    db = tmp_path / "archive.db"
    process = spawn("run", pytorch_feed, site.url("/slow.xml"), "--allow-private-hosts",
                    cwd=tmp_path)  # fmt: skip
    try:
        wait_for(lambda: hanging.asked.is_set(), "the slow feed's request")
        wait_for(lambda: episodes_in(db) == PAGES, "the fast feed to be stored")
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=15)
    finally:
        process.kill()
    assert (process.returncode, out, err) == (130, "", INTERRUPTED)
    check = podarchive("check", "--db", str(db), cwd=tmp_path)
    assert check.returncode == 0, check.stdout
    assert episodes_in(db) == PAGES
    # the abandoned feed is not the feed's failure: nothing recorded, the next run redoes it
    assert rows(db, "SELECT error_count FROM feeds WHERE url = ?", site.url("/slow.xml")) == [(0,)]
    assert rows(db, "SELECT count(*) FROM fetches WHERE url = ?", site.url("/slow.xml")) == [(0,)]
    assert not Path(f"{db}-wal").exists() or Path(f"{db}-wal").stat().st_size == 0


def test_ctrl_c_during_add_is_exit_130_and_one_line(
    tmp_path: Path, site: LoopbackSite, hanging: Hanging
) -> None:
    process = spawn("add", site.url("/slow.xml"), "--schedules", "schedules", cwd=tmp_path)
    try:
        wait_for(lambda: hanging.asked.is_set(), "the feed's request")
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=15)
    finally:
        process.kill()
    assert (process.returncode, out, err) == (130, "", "podarchive: interrupted\n")
    assert not (tmp_path / "schedules").exists()


def test_a_keyboard_interrupt_anywhere_in_a_command_is_exit_130_never_aborted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def interrupted(*args: Any, **kwargs: Any) -> Any:
        raise KeyboardInterrupt

    monkeypatch.setattr("podarchive.cli.run.update_feeds", interrupted)
    code, out, err = invoke("run", "https://x.example/feed.xml", "--db", str(tmp_path / "a.db"))
    assert (code, out, err) == (130, "", "podarchive: interrupted\n")
    monkeypatch.setattr("podarchive.tasks.discover.find_feed", interrupted)
    code, _, err = invoke("add", "https://x.example/feed.xml", "--schedules", str(tmp_path))
    assert (code, err) == (130, "podarchive: interrupted\n")


# run URL uses the URL's schedule entry -------------------------------------------------------


def test_run_url_uses_its_schedule_entry(
    tmp_path: Path, site: LoopbackSite, pytorch_feed: str
) -> None:
    schedules, db = tmp_path / "schedules", tmp_path / "a.db"
    schedule_file(schedules, pytorch_feed, name="Scheduled Name", pages=False,
                  transcripts=False, chapters=False, user_agent="Entry/1.0")  # fmt: skip
    shouted = pytorch_feed.replace("http://127.0.0.1", "HTTP://127.0.0.1")  # the same feed
    code, _, err = invoke("run", shouted, "--schedules", str(schedules), "--db", str(db))
    assert (code, err) == (0, "")
    assert rows(db, "SELECT url, name FROM feeds") == [(pytorch_feed, "Scheduled Name")]
    assert media_hits(site) == 0  # pages = false, from the entry
    assert site.requests[0].headers["user-agent"] == "Entry/1.0"


# add writes every option it is given ---------------------------------------------------------


def test_add_writes_every_option_into_the_schedule(tmp_path: Path) -> None:
    code, out, err = invoke(
        "add", "https://x.example/feed.xml", "--no-check", "--name", "X Show", "--every", "30m",
        "--no-pages", "--allow-private-hosts", "--user-agent", 'Friendly/1.0 "quoted"',
        "--page-every", "2d", "--no-transcripts", "--no-chapters", "--schedules", str(tmp_path),
    )  # fmt: skip
    assert (code, err) == (0, "")
    path = tmp_path / "x-show.toml"
    assert path.read_text() == (
        '[[feed]]\nurl = "https://x.example/feed.xml"\nname = "X Show"\nevery = "30m"\n'
        'pages = false\npage_every = "2d"\ntranscripts = false\nchapters = false\n'
        'allow_private_hosts = true\nuser_agent = "Friendly/1.0 \\"quoted\\""\n'
    )
    (feed,) = load_schedule_file(path)
    assert feed == FeedSchedule(
        url="https://x.example/feed.xml", name="X Show", every=timedelta(minutes=30),
        pages=False, user_agent='Friendly/1.0 "quoted"', allow_private_hosts=True,
        page_every=timedelta(days=2), transcripts=False, chapters=False, source=str(path),
    )  # fmt: skip


def test_add_checks_with_the_user_agent_it_writes(tmp_path: Path, site: LoopbackSite) -> None:
    site.serve("/f.xml", "<rss version='2.0'><channel><title>T</title></channel></rss>")
    code, _, err = invoke(
        "add", site.url("/f.xml"), "--user-agent", "Friendly/1.0", "--schedules", str(tmp_path)
    )
    assert (code, err) == (0, "")
    assert site.requests[0].headers["user-agent"] == "Friendly/1.0"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--page-every", "10m"], "--page-every: page_every must be at least 60 minutes"),
        (["--page-every", "often"], "--page-every: bad interval"),
        (["--user-agent", " "], "--user-agent"),
    ],
)
def test_add_refuses_bad_option_values(tmp_path: Path, args: list[str], message: str) -> None:
    code, _, err = invoke("add", "https://x.example/f", "--no-check", *args,
                          "--schedules", str(tmp_path))  # fmt: skip
    assert code == 2
    assert message in err
    assert not list(tmp_path.iterdir())


# wording ------------------------------------------------------------------------------------


MINE = ("run", "add", "daemon", "status", "serve", "reparse", "backfill", "check")


@pytest.mark.parametrize("command", [[], *[[name] for name in MINE]])
def test_help_shows_no_backticks(command: list[str]) -> None:
    code, out, _ = invoke(*command, "--help")
    assert code == 0
    assert "`" not in out


def test_help_of_the_real_commands_shows_no_backticks(tmp_path: Path) -> None:
    for command in ("", *MINE):
        result = podarchive(*([command] if command else []), "--help", cwd=tmp_path)
        assert result.returncode == 0, result.stderr
        assert "Usage: " in result.stdout
        assert "`" not in result.stdout, command


@pytest.mark.parametrize("command", MINE)
def test_verbose_is_offered_only_where_it_logs(command: str) -> None:
    out = invoke(command, "--help")[1]
    assert ("--verbose" in out) == (command in ("run", "daemon", "reparse", "backfill"))


@pytest.mark.parametrize("command", ["status", "serve", "reparse", "check"])
def test_db_help_does_not_promise_to_create_the_archive(command: str) -> None:
    out = " ".join(invoke(command, "--help")[1].split())
    assert "--db FILE" in out or "--db PATH" in out
    assert "created on first run" not in out
    assert "created if" not in out


@pytest.mark.parametrize(
    ("count", "word", "many", "text"),
    [(0, "feed", None, "0 feeds"), (1, "feed", None, "1 feed"), (2, "feed", None, "2 feeds"),
     (1, "body", "bodies", "1 body"), (3, "body", "bodies", "3 bodies")],
)  # fmt: skip
def test_plural(count: int, word: str, many: str | None, text: str) -> None:
    assert plural(count, word, many) == text


def test_one_feed_not_due_is_said_in_the_singular(
    tmp_path: Path, site: LoopbackSite, pytorch_feed: str
) -> None:
    schedules, db = tmp_path / "schedules", tmp_path / "a.db"
    schedule_file(schedules, pytorch_feed, allow_private_hosts=True)
    assert invoke("run", "--schedules", str(schedules), "--db", str(db))[0] == 0
    code, _, err = invoke("run", "-v", "--schedules", str(schedules), "--db", str(db))
    assert code == 0
    assert err.rstrip().endswith("INFO 1 feed not due yet")


def test_reparse_of_one_body_says_body(
    tmp_path: Path, site: LoopbackSite, pytorch_feed: str
) -> None:
    db = tmp_path / "a.db"
    run_feed(db, FeedSchedule(url=pytorch_feed, name="PyTorch"), ALLOWED)
    code, out, _ = invoke("reparse", "--db", str(db))
    assert code == 0
    assert out.startswith("PyTorch: 1 body replayed; 0 new, 0 changed, 9 unchanged episodes; ")
    real = podarchive("reparse", "--db", str(db), cwd=tmp_path)
    assert (real.returncode, real.stderr) == (0, "")
    assert real.stdout == out


# schema 10 ------------------------------------------------------------------------------------


def test_the_v7_archive_gains_fetch_settings_empty_and_keeps_every_row(tmp_path: Path) -> None:
    db = tmp_path / "archive.db"
    shutil.copy(V7, db)
    with closing(sqlite3.connect(db)) as conn:
        feeds_before = conn.execute("SELECT * FROM feeds ORDER BY id").fetchall()
    with Archive(db) as archive:
        assert archive.schema_version == SCHEMA_VERSION >= 10
        feeds = archive.db.execute("SELECT * FROM feeds ORDER BY id").fetchall()
        columns = [c.name for c in archive.db.table("feeds").columns]
        assert archive.db.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
    assert columns[-1] == "fetch_settings"
    assert [row[-1] for row in feeds] == [None, None]
    # every other value as it was (migration 9 only filled tags_filled_at, which stays NULL)
    assert [row[: len(feeds_before[0])] for row in feeds] == feeds_before


def test_serve_works_for_a_user_who_may_only_read_the_archive(
    shared_dir: Path, site: LoopbackSite, pytorch_feed: str
) -> None:
    """Another user browses the archive: served immutable, nothing written beside it."""
    import socket
    import time

    import httpx

    prefix = as_other_user()
    db = read_only_archive(shared_dir, pytorch_feed)
    folder = db.parent
    before = snapshot(folder)
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    env = {k: v for k, v in os.environ.items() if not k.startswith("PODARCHIVE_")}
    env.update(PYTHONPATH=str(REPO / "src"), PYTHONDONTWRITEBYTECODE="1")
    proc = subprocess.Popen(
        [*prefix, sys.executable, "-m", "podarchive", "serve", "--db", str(db),
         "--port", str(port)],
        cwd=shared_dir, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 30
        while True:
            assert proc.poll() is None, proc.communicate()[1].decode()
            try:
                answer = httpx.get(
                    f"http://127.0.0.1:{port}/archive/episodes.json?_shape=array", timeout=2
                )
                break
            except httpx.TransportError:
                assert time.monotonic() < deadline, "podarchive serve did not start in 30 s"
                time.sleep(0.1)
        assert answer.status_code == 200
        assert len(answer.json()) == 9
    finally:
        proc.terminate()
        proc.communicate(timeout=10)
    assert snapshot(folder) == before
