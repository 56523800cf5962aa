"""The command line, through CliRunner and as real subprocesses."""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path

import pytest
from commands import invoke, podarchive
from loopback import LoopbackSite

from podarchive import __version__
from podarchive.cli import cli

REPO = Path(__file__).resolve().parents[1]


def count(db: Path, table: str) -> int:
    conn = sqlite3.connect(db)
    try:
        return int(conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0])
    finally:
        conn.close()


def test_version() -> None:
    assert invoke("--version") == (0, f"podarchive, version {__version__}\n", "")


@pytest.mark.parametrize("command", [[], *[[name] for name in sorted(cli.commands)]])
def test_every_command_has_help(command: list[str]) -> None:
    code, out, _ = invoke(*command, "--help")
    assert code == 0
    assert "Usage: " in out
    assert len(out.splitlines()) > 3


def test_run_adhoc_url_is_quiet_and_archives(tmp_path: Path, pytorch_feed: str) -> None:
    db = tmp_path / "a.db"
    code, out, err = invoke("run", pytorch_feed, "--db", str(db), "--allow-private-hosts")
    assert (code, out, err) == (0, "", "")
    assert count(db, "episodes") == 9
    assert count(db, "links") > 9


def test_run_verbose_logs_each_feed(tmp_path: Path, pytorch_feed: str) -> None:
    code, _, err = invoke(
        "run", "-v", pytorch_feed, "--db", str(tmp_path / "a.db"), "--allow-private-hosts"
    )
    assert code == 0
    assert f"{pytorch_feed}: 9 new, 0 changed, 0 unchanged episodes; pages: 9 ok" in err


def test_run_exit_1_and_one_line_per_failed_feed(
    tmp_path: Path, site: LoopbackSite, pytorch_feed: str
) -> None:
    db = tmp_path / "a.db"
    code, out, err = invoke(
        "run",
        site.url("/gone"),
        pytorch_feed,
        site.url("/also-gone"),
        "--db",
        str(db),
        "--allow-private-hosts",
    )
    assert code == 1
    assert out == ""
    assert sorted(err.splitlines()) == [
        f"podarchive: {site.url('/also-gone')}: HTTP 404 not found",
        f"podarchive: {site.url('/gone')}: HTTP 404 not found",
    ]
    assert count(db, "episodes") == 9


def test_run_reads_schedules_and_writes_archive_db_by_default(
    tmp_path: Path, pytorch_feed: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "schedules").mkdir()
    (tmp_path / "schedules" / "show.toml").write_text(
        f'[[feed]]\nurl = "{pytorch_feed}"\nname = "Show"\nallow_private_hosts = true\n'
    )
    assert invoke("run") == (0, "", "")
    assert count(tmp_path / "archive.db", "episodes") == 9


def test_run_with_no_feeds_scheduled_says_how_to_add_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "schedules").mkdir()
    (tmp_path / "schedules" / "notes.txt").write_text("not a schedule file")
    assert invoke("run") == (
        0,
        "",
        "podarchive: no feeds scheduled in schedules; add one with: podarchive add URL\n",
    )  # exit 0: a cron job set up before the first feed is not failing
    assert not (tmp_path / "archive.db").exists()
    (tmp_path / "mine").mkdir()
    assert invoke("run", "--schedules", "mine", "--all")[2] == (
        "podarchive: no feeds scheduled in mine; add one with: "
        "podarchive add URL --schedules mine\n"
    )
    # no directory at all: a usage error (a mistyped --schedules), with the same advice
    code, out, err = invoke("run", "--schedules", "nowhere")
    assert (code, out) == (2, "")
    assert err == (
        "podarchive: error: nowhere: no such schedules directory "
        "('podarchive add URL --schedules nowhere' makes it; or give --schedules DIR)\n"
    )


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["run", "--schedules", "nowhere"],
            "podarchive: error: nowhere: no such schedules directory",
        ),
        (["run", "ftp://example.com/feed"], "Invalid value for URL"),
        (["run", "--frobnicate"], "No such option"),
        (["add", "https://x.example/f", "--every", "often", "--no-check"], "bad interval"),
        (["add", "https://x.example/f", "--cron", "* * *", "--no-check"], "cron needs 5 fields"),
        (["add", "https://x.example/f", "--cron", "* * * * *", "--every", "1h"], "not both"),
        (["add", "not a url"], "not an http(s) URL"),
    ],
)
def test_usage_and_config_errors_exit_2(
    tmp_path: Path, args: list[str], message: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    code, _, err = invoke(*args)
    assert code == 2
    assert message in err
    assert "Traceback" not in err


def test_bad_schedule_file_exit_2_names_file_and_key(tmp_path: Path) -> None:
    (tmp_path / "bad.toml").write_text(
        '[[feed]]\nurl = "https://x.example/f"\nevery = "1 fortnight"\n'
    )
    code, _, err = invoke("run", "--schedules", str(tmp_path), "--db", str(tmp_path / "a.db"))
    assert code == 2
    assert err.strip() == (
        f"podarchive: error: {tmp_path / 'bad.toml'}: feed[0].every: bad interval '1 fortnight' "
        "(use e.g. 90s, 30m, 1h, 1h30m, 2d, 1w)"
    )
    assert not (tmp_path / "a.db").exists()


def test_not_an_archive_is_a_one_line_failure(tmp_path: Path, pytorch_feed: str) -> None:
    db = tmp_path / "a.db"
    db.write_bytes(b"not a database at all" * 50)
    code, _, err = invoke("run", pytorch_feed, "--db", str(db))
    assert code == 1
    assert err == (
        f"podarchive: {db} is not a podarchive archive (not an SQLite database); "
        "refusing to change it\n"
    )
    assert db.read_bytes() == b"not a database at all" * 50


def test_add_writes_a_schedule_and_refuses_duplicates(tmp_path: Path) -> None:
    schedules = tmp_path / "schedules"
    code, out, _ = invoke(
        "add",
        "https://x.example/feed.xml",
        "--every",
        "30m",
        "--name",
        "X Show",
        "--no-check",
        "--schedules",
        str(schedules),
    )
    assert code == 0
    assert out == f"added https://x.example/feed.xml to {schedules / 'x-show.toml'}\n"
    assert (schedules / "x-show.toml").read_text() == (
        '[[feed]]\nurl = "https://x.example/feed.xml"\nname = "X Show"\n'
        'every = "30m"\npages = true\n'
    )
    code, _, err = invoke(
        "add", "https://x.example/feed.xml", "--no-check", "--schedules", str(schedules)
    )
    assert code == 2
    assert "already scheduled" in err


def test_add_for_a_url_already_scheduled_updates_the_options_given(tmp_path: Path) -> None:
    schedules = tmp_path / "schedules"
    where = ["--schedules", str(schedules)]
    assert invoke("add", "https://x.example/feed.xml", "--name", "X", "--no-check", *where)[0] == 0
    path = schedules / "x.toml"
    # no fetch (x.example does not resolve here): the entry is updated, in one line
    code, out, err = invoke("add", "https://X.example/feed.xml", "--allow-private-hosts", *where)
    assert (code, err) == (0, "")
    assert out == (
        f"updated https://x.example/feed.xml in {path}: allow_private_hosts = true "
        "(other settings kept)\n"
    )
    assert path.read_text() == (
        '[[feed]]\nurl = "https://x.example/feed.xml"\nname = "X"\nevery = "1h"\n'
        "pages = true\nallow_private_hosts = true\n"
    )
    code, out, _ = invoke("add", "https://x.example/feed.xml", "--allow-private-hosts", *where)
    assert (code, out) == (
        0,
        f"https://x.example/feed.xml is already scheduled in {path} with these settings; "
        "nothing changed\n",
    )
    # a file of several feeds: only that entry changes; the others and the comments stay
    shared = schedules / "shared.toml"
    shared.write_text(
        '# my feeds\n[[feed]]\nurl = "https://a.example/f"\ncron = "0 * * * *"\n'
        '# the next one\n\n[[feed]]\nurl = "https://b.example/f"\nname = "B"\n'
    )
    code, out, _ = invoke("add", "https://a.example/f", "--every", "2h", "--no-pages", *where)
    assert (code, out) == (
        0,
        f'updated https://a.example/f in {shared}: every = "2h", pages = false '
        "(other settings kept)\n",
    )
    assert shared.read_text() == (
        '# my feeds\n[[feed]]\nurl = "https://a.example/f"\nevery = "2h"\npages = false\n'
        '# the next one\n\n[[feed]]\nurl = "https://b.example/f"\nname = "B"\n'
    )
    assert sorted(p.name for p in schedules.iterdir()) == ["shared.toml", "x.toml"]


def test_add_updates_a_feed_found_on_a_page_when_it_is_scheduled(
    tmp_path: Path, site: LoopbackSite, pytorch_feed: str
) -> None:
    site.serve(
        "/show",
        f'<html><head><link rel="alternate" type="application/rss+xml" href="{pytorch_feed}">'
        "</head><body></body></html>",
        content_type="text/html",
    )
    assert invoke("add", pytorch_feed, "--name", "Show", "--schedules", str(tmp_path))[0] == 0
    code, out, _ = invoke(
        "add", site.url("/show"), "--allow-private-hosts", "--schedules", str(tmp_path)
    )
    assert code == 0
    assert out.splitlines() == [
        f"found the feed {pytorch_feed} on {site.url('/show')}",
        f"updated {pytorch_feed} in {tmp_path / 'show.toml'}: allow_private_hosts = true "
        "(other settings kept)",
    ]


def test_add_checks_the_feed_and_names_it(tmp_path: Path, pytorch_feed: str) -> None:
    code, out, err = invoke("add", pytorch_feed, "--schedules", str(tmp_path))
    assert (code, err) == (0, "")
    path = tmp_path / "pytorch-developer-podcast.toml"
    assert out == f"added {pytorch_feed} to {path}\n"
    assert 'name = "PyTorch Developer Podcast"' in path.read_text()


def test_add_discovers_the_feed_from_a_web_page(
    tmp_path: Path, site: LoopbackSite, pytorch_feed: str
) -> None:
    site.serve(
        "/show",
        f'<html><head><link rel="alternate" type="application/rss+xml" href="{pytorch_feed}">'
        "</head><body><h1>The show</h1></body></html>",
        content_type="text/html",
    )
    code, out, _ = invoke(
        "add", site.url("/show"), "--allow-private-hosts", "--schedules", str(tmp_path)
    )
    assert code == 0
    assert out.splitlines()[0] == f"found the feed {pytorch_feed} on {site.url('/show')}"
    assert f'url = "{pytorch_feed}"' in (tmp_path / "pytorch-developer-podcast.toml").read_text()


def test_add_refuses_a_page_without_a_feed(tmp_path: Path, site: LoopbackSite) -> None:
    site.serve("/page", "<html><body><p>Hello</p></body></html>", content_type="text/html")
    code, _, err = invoke("add", site.url("/page"), "--schedules", str(tmp_path))
    assert code == 1
    assert err == "podarchive: not a feed, and the page announces no working feed\n"
    assert not list(tmp_path.glob("*.toml"))


# real processes ----------------------------------------------------------------------------


def test_subprocess_run_then_run_again(tmp_path: Path, pytorch_feed: str) -> None:
    first = podarchive("run", pytorch_feed, "--allow-private-hosts", cwd=tmp_path)
    assert (first.returncode, first.stdout, first.stderr) == (0, "", "")
    assert count(tmp_path / "archive.db", "episodes") == 9
    second = podarchive("run", "-v", pytorch_feed, "--allow-private-hosts", cwd=tmp_path)
    assert second.returncode == 0
    assert f"{pytorch_feed}: unchanged" in second.stderr


def test_subprocess_add_then_run(tmp_path: Path, pytorch_feed: str) -> None:
    added = podarchive("add", pytorch_feed, "--every", "1h", "--name", "PyTorch", cwd=tmp_path)
    assert added.returncode == 0, added.stderr
    assert (tmp_path / "schedules" / "pytorch.toml").exists()
    run = podarchive("run", "--allow-private-hosts", cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    assert count(tmp_path / "archive.db", "episodes") == 9


def test_subprocess_unreachable_feed_fails_cleanly_and_keeps_the_archive(
    tmp_path: Path, pytorch_feed: str
) -> None:
    """Like the default schedule on a machine without internet: one line, exit 1, no harm."""
    assert podarchive("run", pytorch_feed, "--allow-private-hosts", cwd=tmp_path).returncode == 0
    schedules = tmp_path / "schedules"
    schedules.mkdir()
    (schedules / "offline.toml").write_text(
        '[[feed]]\nurl = "https://feeds.podarchive.invalid/OB5FkIl8"\nname = "Offline"\n'
    )
    start = time.monotonic()
    result = podarchive("run", cwd=tmp_path, timeout=30)
    assert time.monotonic() - start < 20
    assert result.returncode == 1
    assert result.stdout == ""
    (line,) = result.stderr.splitlines()
    assert line.startswith("podarchive: Offline: cannot ")
    assert count(tmp_path / "archive.db", "episodes") == 9


def test_subprocess_bad_command_line(tmp_path: Path) -> None:
    result = podarchive("run", "--db", cwd=tmp_path)
    assert result.returncode == 2
    assert "Traceback" not in result.stderr
    assert "requires an argument" in result.stderr


def test_schedule_user_agent_is_sent(tmp_path: Path, site: LoopbackSite) -> None:
    site.serve("/f.xml", "<rss version='2.0'><channel><title>T</title></channel></rss>")
    (tmp_path / "s.toml").write_text(
        f'[[feed]]\nurl = "{site.url("/f.xml")}"\nuser_agent = "Friendly/2.0"\n'
    )
    code, _, err = invoke("run", "--schedules", str(tmp_path), "--db", str(tmp_path / "a.db"))
    assert (code, err) == (0, "")
    assert site.requests[0].headers["user-agent"] == "Friendly/2.0"
