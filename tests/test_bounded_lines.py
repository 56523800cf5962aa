"""Issue #23 item 9: every message stays one short line, and what a feed lists stays bounded.

A 100 KB URL, a name or URL holding a newline or an escape sequence, an OPML file whose
``xmlUrl`` would print a fake ``podarchive:`` line, an item listing 3,000 transcripts: each
through the command line (CliRunner and a real subprocess), against loopback servers.
"""

from __future__ import annotations

import io
import json
import sqlite3
from pathlib import Path

import pytest
from commands import invoke
from loopback import LoopbackSite
from test_cli import podarchive

from podarchive.read.schedule_files import load_schedules
from podarchive.runtime.progress import BarProgress

LONG_URL = "http://127.0.0.1:1/" + "a" * 100_000  # nothing listens on port 1
FAKE = "podarchive: fake line"


def test_a_100_kb_url_gives_short_lines_and_status_json_keeps_it_whole(tmp_path: Path) -> None:
    db = str(tmp_path / "a.db")
    code, out, err = invoke("run", LONG_URL, "--db", db)
    assert (code, out) == (1, "")
    (line,) = err.splitlines()
    assert line.startswith("podarchive: http://127.0.0.1:1/aaa")
    assert "URL too long" in line
    assert len(line) < 600
    code, out, _ = invoke("status", "--db", db)
    assert code == 0
    assert max(len(line) for line in out.splitlines()) < 600
    assert len(out) < 2000
    code, out, _ = invoke("status", "--json", "--db", db)
    assert json.loads(out)["feeds"][0]["url"] == LONG_URL  # JSON keeps every value whole


def test_a_name_with_a_newline_and_escapes_prints_no_line_of_its_own(tmp_path: Path) -> None:
    (tmp_path / "evil.toml").write_text(
        f'[[feed]]\nurl = "http://127.0.0.1:1/feed"\nname = "Evil\\n{FAKE}\\u001b[31m\\u009b2J"\n',
        encoding="utf-8",
    )
    db = str(tmp_path / "a.db")
    code, _, err = invoke("run", "--schedules", str(tmp_path), "--db", db)
    assert code == 1
    (line,) = err.splitlines()
    assert line.startswith(f"podarchive: Evil\\n{FAKE}\\x1b[31m\\x9b2J: ")
    assert "\x1b" not in err
    assert "\x9b" not in err


def test_status_escapes_names_and_titles_and_its_json_escapes_c1_controls(
    tmp_path: Path, site: LoopbackSite
) -> None:
    body = (
        f'<?xml version="1.0"?><rss version="2.0"><channel><title>Evil&#10;{FAKE}&#x2028;x'
        "</title><item><title>One</title><guid>1</guid></item></channel></rss>"
    )
    site.serve("/feed.xml", body)
    site.serve("/named.xml", body)
    (tmp_path / "s").mkdir()
    (tmp_path / "s" / "named.toml").write_text(
        f'[[feed]]\nurl = "{site.url("/named.xml")}"\nname = "Named\\n{FAKE}\\u009b2J"\n',
        encoding="utf-8",
    )
    db = str(tmp_path / "a.db")
    code, _, err = invoke("run", site.url("/feed.xml"), "--db", db, "--no-pages")
    assert (code, err) == (0, "")
    code, _, err = invoke("run", "--schedules", str(tmp_path / "s"), "--db", db, "--no-pages")
    assert (code, err) == (0, "")
    code, out, _ = invoke("status", "--db", db)
    assert code == 0
    assert f"Evil\\n{FAKE}\\u2028x  " in out  # the title, for the feed without a name
    assert f"Named\\n{FAKE}\\x9b2J  " in out
    assert not any(line.startswith(FAKE) for line in out.splitlines())
    assert "\x9b" not in out
    code, out, _ = invoke("status", "--json", "--db", db)
    assert "\x9b" not in out
    assert "\\u009b" in out  # JSON's own escape: the value stays whole
    feeds = json.loads(out)["feeds"]
    assert {f["title"] for f in feeds} == {f"Evil\n{FAKE}\u2028x"}
    assert {f["name"] for f in feeds} == {None, f"Named\n{FAKE}\x9b2J"}


def _opml(*urls: str) -> bytes:
    outlines = "\n".join(
        f'<outline type="rss" text="f{i}" xmlUrl="{u}"/>' for i, u in enumerate(urls)
    )
    return (
        f'<?xml version="1.0"?>\n<opml version="2.0"><body>\n{outlines}\n</body></opml>\n'.encode()
    )


def test_an_opml_url_with_a_newline_is_skipped_and_prints_no_fake_line(tmp_path: Path) -> None:
    subscriptions = tmp_path / "subs.opml"
    subscriptions.write_bytes(
        _opml(
            f"http://127.0.0.1:1/feed&#10;{FAKE}",
            "http://127.0.0.1:1/csi&#x9b;2J",
            "http://127.0.0.1:1/ok",
        )
    )
    imported = podarchive("import", "subs.opml", "--no-check", cwd=tmp_path)
    assert (imported.returncode, imported.stderr) == (0, "")
    assert imported.stdout.splitlines() == [
        f"skipped: http://127.0.0.1:1/feed\\n{FAKE} (line 3: a control character in the URL)",
        "skipped: http://127.0.0.1:1/csi\\x9b2J (line 4: a control character in the URL)",
        "scheduled: http://127.0.0.1:1/ok (f2)",
        "subs.opml: 1 scheduled in schedules/import-subs.toml, 0 already scheduled, "
        "0 duplicates, 0 failed, 2 skipped",
    ]
    assert [f.url for f in load_schedules(tmp_path / "schedules")] == ["http://127.0.0.1:1/ok"]
    ran = podarchive("run", cwd=tmp_path)
    assert ran.returncode == 1
    assert [line.split(":")[0] for line in ran.stderr.splitlines()] == ["podarchive"]


@pytest.mark.parametrize(
    ("url", "problem"),
    [
        ("http://x.example/feed\n" + FAKE, "a control character in the URL"),
        ("http://x.example/\x1b[31mfeed", "a control character in the URL"),
        ("http://x.example/a feed", "white space in the URL (write a space as %20)"),
    ],
)
def test_add_and_schedule_files_refuse_such_urls_in_one_line(
    tmp_path: Path, url: str, problem: str
) -> None:
    code, out, err = invoke("add", url, "--no-check", "--schedules", str(tmp_path / "s"))
    assert (code, out) == (2, "")
    (line,) = err.splitlines()
    assert line.startswith(f"podarchive: error: {problem}: 'http://x.example/")
    assert not (tmp_path / "s").exists()
    text = url.replace("\n", "\\n").replace("\x1b", "\\u001b")
    (tmp_path / "bad.toml").write_text(f'[[feed]]\nurl = "{text}"\n', encoding="utf-8")
    code, _, err = invoke("run", "--schedules", str(tmp_path), "--db", str(tmp_path / "a.db"))
    assert code == 2
    (line,) = err.splitlines()
    assert line.startswith(f"podarchive: error: {tmp_path / 'bad.toml'}: feed[0].url: {problem}")


def _many_transcripts_feed(site: LoopbackSite, count: int) -> str:
    base = site.url("")
    listed = "".join(
        f'<podcast:transcript url="{base}/t/{n}.vtt" type="text/vtt"/>' for n in range(count)
    )
    for n in range(count):
        site.serve(f"/t/{n}.vtt", f"WEBVTT\n\n00:00:01.000 --> 00:00:02.000\nline {n}\n",
                   content_type="text/vtt")  # fmt: skip
    site.serve(
        "/feed.xml",
        '<?xml version="1.0"?><rss version="2.0" '
        'xmlns:podcast="https://podcastindex.org/namespace/1.0"><channel><title>Many</title>'
        f"<item><title>One</title><guid>1</guid>{listed}</item></channel></rss>",
    )
    return site.url("/feed.xml")


def _file_requests(site: LoopbackSite, since: int = 0) -> list[str]:
    return [r.path for r in site.requests[since:] if r.path.startswith("/t/")]


def test_an_item_listing_3000_transcripts_costs_at_most_20_requests_per_check(
    tmp_path: Path, site: LoopbackSite
) -> None:
    feed = _many_transcripts_feed(site, 3000)
    db = tmp_path / "a.db"
    args = ("run", "-v", feed, "--db", str(db), "--no-pages", "--allow-private-hosts")
    code, _, err = invoke(*args)
    assert code == 0
    warning = "item 1 lists 3,000 podcast:transcript files: the first 20 kept"
    assert f"{feed}: warning: {warning}" in err
    assert sorted(_file_requests(site)) == sorted(f"/t/{n}.vtt" for n in range(20))
    conn = sqlite3.connect(db)
    try:
        assert conn.execute("SELECT count(*) FROM transcripts").fetchone() == (20,)
        (warnings,) = conn.execute("SELECT warnings FROM feeds").fetchone()
    finally:
        conn.close()
    assert warning in json.loads(warnings)
    before = len(site.requests)
    code, _, err = invoke(*args, "--recheck-pages")  # every listed file again, due or not
    assert code == 0
    assert len(_file_requests(site, before)) == 20


def test_a_name_with_rich_markup_is_text_in_backfills_progress_bars() -> None:
    """On a terminal a feed's name was read as rich markup: ``[/b]`` raised MarkupError."""
    stream = io.StringIO()
    with BarProgress(stream) as bars:
        bars.start("[/bold] Evil [red]", "feed", 1)
        bars.advance()
        bars.done()
    assert "[/bold] Evil [red]: feed" in stream.getvalue()
