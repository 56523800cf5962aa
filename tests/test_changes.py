"""The change feed (#28): a loopback podcast archived by the real pipeline, then edited (a
title and notes), an episode removed from the middle, an enclosure replaced and the podcast's
description edited; each change listed exactly once, in order, with ids that stay the same
when the feed is written again (and after ``reparse`` rewrote the revision rows); a cursor
that gives a cron job each change once. Runs use a fixed clock (no sleeps)."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

import feedparser
import pytest
from commands import invoke, podarchive, query
from loopback import LoopbackSite

from podarchive.core.errors import ConfigError
from podarchive.core.settings import Settings
from podarchive.read.schedule_files import FeedSchedule
from podarchive.rules.changes import (
    TAG,
    Change,
    Cursor,
    Segment,
    parse_cursor,
    parse_since,
    select,
    side_by_side,
)
from podarchive.store import Archive
from podarchive.update.run import update_feeds

SETTINGS = Settings(
    connect_timeout=2, read_timeout=2, deadline=10, allow_private_hosts=True, host_gap=0,
    retry_base=0.01, retries=0,
)  # fmt: skip
T1, T2, T3 = "2026-12-01T10:00:00Z", "2026-12-02T10:00:00Z", "2026-12-03T10:00:00Z"
NOTES_A = "<p>First paragraph.</p><p>Second paragraph, as it was.</p>"
NOTES_A2 = "<p>First paragraph.</p><p>Second paragraph, corrected.</p>"
ITEMS = {
    "a": ("Alpha", "Mon, 01 Jan 2024 00:00:00 +0000", "a.mp3", NOTES_A),
    "b": ("Bravo", "Mon, 08 Jan 2024 00:00:00 +0000", "b.mp3", "<p>Bee notes.</p>"),
    "c": ("Charlie", "Mon, 15 Jan 2024 00:00:00 +0000", "c.mp3", "<p>Sea notes.</p>"),
    "d": ("Delta", "Mon, 22 Jan 2024 00:00:00 +0000", "d.mp3", "<p>Dee notes.</p>"),
}
EDITED = {
    "a": ("Alpha (corrected)", ITEMS["a"][1], "a.mp3", NOTES_A2),
    "b": ("Bravo", ITEMS["b"][1], "b-fixed.mp3", "<p>Bee notes.</p>"),
    "d": ITEMS["d"],
}  # c is gone from the middle: removed


def feed_xml(base: str, items: dict[str, tuple[str, str, str, str]], description: str) -> str:
    body = "".join(
        f"<item><guid>{guid}</guid><title>{title}</title><pubDate>{date}</pubDate>"
        f"<link>{base}/ep/{guid}</link>"
        f'<enclosure url="{base}/media/{media}" type="audio/mpeg" length="1234"/>'
        f"<description><![CDATA[{notes}]]></description></item>"
        for guid, (title, date, media, notes) in items.items()
    )
    return (
        '<?xml version="1.0" encoding="utf-8"?><rss version="2.0"><channel>'
        f"<title>Loop Radio</title><link>{base}/</link><description>{description}</description>"
        f"{body}</channel></rss>"
    )


def clock(stamp: str) -> Callable[[], datetime]:
    moment = datetime.strptime(stamp, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)
    return lambda: moment


def run_at(db: Path, url: str, stamp: str) -> None:
    with Archive(db) as archive:
        report = update_feeds(
            archive,
            [FeedSchedule(url=url, name="Loop Radio", pages=False)],
            settings=SETTINGS,
            clock=clock(stamp),
        )
    assert [f.error for f in report.feeds] == [None]


def build_edited(db: Path, site: LoopbackSite) -> str:
    """The podcast at T1, then edited at T2; returns its feed URL."""
    base = site.url("")
    site.serve("/loop/feed.xml", feed_xml(base, ITEMS, "A show about loops."))
    url = site.url("/loop/feed.xml")
    run_at(db, url, T1)
    site.serve("/loop/feed.xml", feed_xml(base, EDITED, "A show about loops, and more."))
    run_at(db, url, T2)
    return url


@pytest.fixture(scope="module")
def edited(tmp_path_factory: pytest.TempPathFactory) -> Path:
    db = tmp_path_factory.mktemp("changes") / "archive.db"
    with LoopbackSite() as site:
        build_edited(db, site)
    return db


EXPECTED = [
    (T1, "podcast-added", None),
    (T1, "episode-added", "Alpha"),
    (T1, "episode-added", "Bravo"),
    (T1, "episode-added", "Charlie"),
    (T1, "episode-added", "Delta"),
    (T2, "podcast-edited", None),
    (T2, "episode-edited", "Alpha (corrected)"),
    (T2, "enclosure-replaced", "Bravo"),
    (T2, "episode-removed", "Charlie"),
]


def _entries(db: Path, *args: str) -> tuple[list[dict[str, object]], str]:
    out = db.parent / "changes.atom"
    code, stdout, stderr = invoke("changes", "--db", str(db), "-o", str(out), *args)
    assert (code, stderr) == (0, ""), stderr
    parsed = feedparser.parse(out.read_bytes())
    assert not parsed.bozo, parsed.bozo_exception
    return parsed.entries, stdout.strip()


def _kinds(entries: list[dict[str, object]]) -> list[tuple[str, str, str | None]]:
    found = []
    for entry in entries:
        tags = {t["scheme"]: t["term"] for t in entry["tags"]}  # type: ignore[attr-defined]
        title = str(entry["title"])
        quoted = re.search(r"“(.*?)”", title)
        found.append((str(entry["published"])[:19] + "Z", tags["tag:podarchive,2026:kind"],
                      quoted[1] if quoted else None))  # fmt: skip
    return sorted(found, key=lambda f: (f[0], EXPECTED.index(f) if f in EXPECTED else 99))


def test_each_change_is_listed_once_in_order_with_stable_ids(edited: Path) -> None:
    entries, cursor = _entries(edited)
    assert [(e[0].replace("+00:00", ""), e[1], e[2]) for e in _kinds(entries)] == EXPECTED
    times_and_kinds = [
        (str(e["published"]), next(t["term"] for t in e["tags"] if "kind" in t["scheme"]))
        for e in entries
    ]
    assert times_and_kinds == sorted(times_and_kinds, key=lambda k: k[0])  # oldest first
    ids = [str(e["id"]) for e in entries]
    assert len(set(ids)) == len(ids) == len(EXPECTED)
    assert all(i.startswith(TAG) for i in ids)
    assert cursor == entries[-1]["tags"][1]["term"]  # type: ignore[index]
    again, _ = _entries(edited)
    assert [str(e["id"]) for e in again] == ids  # regenerated: the same ids, the same order


def test_an_edit_reads_as_a_diff(edited: Path) -> None:
    entries, _ = _entries(edited)
    edit = next(e for e in entries if "episode edited" in str(e["title"]))
    assert edit["title"] == "Loop Radio: “Alpha (corrected)”: episode edited (title, notes)"
    content = str(edit["content"][0]["value"])  # type: ignore[index]
    assert "<del>Alpha</del>" in content
    assert "<ins>Alpha (corrected)</ins>" in content
    assert "<del>Second paragraph, as it was.</del>" in content
    assert "<ins>Second paragraph, corrected.</ins>" in content
    replaced = next(e for e in entries if "enclosure replaced" in str(e["title"]))
    assert "b.mp3</del>" in str(replaced["content"][0]["value"])  # type: ignore[index]
    assert "b-fixed.mp3</ins>" in str(replaced["content"][0]["value"])  # type: ignore[index]
    podcast = next(e for e in entries if "podcast details edited" in str(e["title"]))
    assert "A show about loops, and more." in str(podcast["content"][0]["value"])  # type: ignore[index]


def test_a_cursor_gives_each_change_once(tmp_path: Path) -> None:
    db = tmp_path / "archive.db"
    with LoopbackSite() as site:
        url = build_edited(db, site)
        first, cursor = _entries(db, "--since", "2000-01-01", "--limit", "4")
        assert len(first) == 4  # the first four
        latest, _ = _entries(db, "--limit", "4")
        assert [e["id"] for e in latest] != [e["id"] for e in first]  # without: the latest
        rest, cursor = _entries(db, "--after", cursor)
        assert len(rest) == len(EXPECTED) - 4
        assert {str(e["id"]) for e in first}.isdisjoint(str(e["id"]) for e in rest)
        none, same = _entries(db, "--after", cursor)
        assert (none, same) == ([], cursor)  # nothing new: the same cursor back
        more = dict(EDITED, d=("Delta", ITEMS["d"][1], "d.mp3", "<p>Dee notes, longer.</p>"))
        site.serve("/loop/feed.xml", feed_xml(site.url(""), more, "A show about loops, and more."))
        run_at(db, url, T3)
        (new,), _ = _entries(db, "--since", cursor)  # --since takes a cursor too
        assert new["title"] == "Loop Radio: “Delta”: episode edited (notes)"
        assert str(new["published"]).startswith("2026-12-03T10:00:00")
    by_date, _ = _entries(db, "--since", "2026-12-03")
    assert [str(e["id"]) for e in by_date] == [str(new["id"])]


def test_ids_survive_reparse(tmp_path: Path) -> None:
    db = tmp_path / "archive.db"
    with LoopbackSite() as site:
        build_edited(db, site)
    before, _ = _entries(db)
    revisions = query(db, "SELECT id FROM episode_revisions ORDER BY id")
    assert invoke("reparse", "--db", str(db))[0] == 0
    after, _ = _entries(db)
    assert [str(e["id"]) for e in after] == [str(e["id"]) for e in before]
    assert revisions  # (reparse rebuilt them: the ids do not depend on row ids)


def test_one_podcast_json_and_stdout(edited: Path, tmp_path: Path) -> None:
    out = tmp_path / "loop.json"
    code, stdout, _ = invoke(
        "changes", "--db", str(edited), "--podcast", "Loop Radio", "-o", str(out)
    )
    assert code == 0
    document = json.loads(out.read_text("utf-8"))
    assert document["version"] == "https://jsonfeed.org/version/1.1"
    assert [i["_podarchive"]["kind"] for i in document["items"]] == [k for _, k, _ in EXPECTED]
    assert stdout.strip() == document["items"][-1]["_podarchive"]["cursor"]
    code, stdout, _ = invoke("changes", "--db", str(edited), "--format", "json", "-o", "-")
    assert code == 0
    assert json.loads(stdout)["items"] == document["items"]


def test_mistakes_are_one_line(edited: Path, tmp_path: Path) -> None:
    out = str(tmp_path / "x.atom")
    assert invoke("changes", "--db", str(edited), "--after", "nope", "-o", out)[0] == 2
    code, _, err = invoke("changes", "--db", str(edited), "--since", "yesterday", "-o", out)
    assert (code, err.count("\n")) == (2, 1)
    code, _, err = invoke("changes", "--db", str(edited), "--podcast", "Nobody", "-o", out)
    assert (code, err.count("\n")) == (1, 1)
    assert "no podcast 'Nobody'" in err
    code, _, err = invoke("changes", "--db", str(tmp_path / "none.db"), "-o", out)
    assert (code, err) == (1, f"podarchive: no archive at {tmp_path / 'none.db'}\n")


def test_the_command_as_a_process(edited: Path, tmp_path: Path) -> None:
    out = tmp_path / "all.atom"
    done = podarchive("changes", "--db", str(edited), "-o", str(out), cwd=tmp_path)
    assert (done.returncode, done.stderr) == (0, "")
    assert re.fullmatch(r"2026-12-02T10:00:00Z/[a-z-]+/[0-9a-f]{16}\n", done.stdout)
    assert len(feedparser.parse(out.read_bytes()).entries) == len(EXPECTED)


# the pure rules ----------------------------------------------------------------------------


def _change(at: str, kind: str, n: int) -> Change:
    return Change(f"{TAG}{kind}/{n:016x}", at, kind, "t", "s", "p", "u", 1)


def test_select_orders_holds_back_the_current_second_and_pages() -> None:
    changes = [
        _change(T2, "episode-removed", 1),
        _change(T2, "episode-added", 2),
        _change(T1, "episode-edited", 3),
        _change(T3, "episode-added", 4),
    ]
    assert [c.id[-1] for c in select(changes, now="2027")] == ["3", "2", "1", "4"]
    assert [c.id[-1] for c in select(changes, now=T3)] == ["3", "2", "1"]  # T3 not over yet
    after = parse_cursor(changes[1].cursor)
    assert [c.id[-1] for c in select(changes, now="2027", after=after)] == ["1", "4"]
    assert [c.id[-1] for c in select(changes, now="2027", after=after, limit=1)] == ["1"]
    assert [c.id[-1] for c in select(changes, now="2027", limit=1)] == ["4"]  # the latest


def test_cursors_and_dates() -> None:
    token = _change(T2, "episode-added", 2).cursor
    assert parse_cursor(token) == Cursor.of(T2, f"{TAG}episode-added/{2:016x}")
    assert parse_since(token) == parse_cursor(token)
    assert parse_since("2026-12-01") == "2026-12-01T00:00:00Z"
    assert parse_since(T3) == T3
    for bad in ("", "2026-13", "2026-12-01T10:00:00Z/episode-added/xyz"):
        with pytest.raises(ConfigError, match="--since"):
            parse_since(bad)


def test_side_by_side_pairs_lines_and_marks_words() -> None:
    rows = side_by_side("one\ntwo words here\nthree", "one\ntwo new words here\nfour\nfive")
    assert [r.tag for r in rows] == ["equal", "replace", "replace", "insert"]
    assert "".join(s.text for s in rows[1].new) == "two new words here"
    assert "".join(s.text for s in rows[1].new if s.changed).strip() == "new"
    assert not any(s.changed for s in rows[1].old)
    assert rows[3].old == ()


@pytest.fixture
def hostile(tmp_path: Path) -> Path:
    db = tmp_path / "archive.db"
    with LoopbackSite() as site:
        evil = "Evil &lt;script&gt;document.title='XSS'+'-RAN'&lt;/script&gt;"
        base = site.url("")
        items = {"e": (evil, ITEMS["a"][1], "e.mp3", "<p>x<script>alert(1)</script></p>")}
        site.serve("/loop/feed.xml", feed_xml(base, items, "d"))
        run_at(db, site.url("/loop/feed.xml"), T1)
        items = {"e": (evil + " &lt;img src=x onerror=alert(2)&gt;", *items["e"][1:])}
        site.serve("/loop/feed.xml", feed_xml(base, items, "d"))
        run_at(db, site.url("/loop/feed.xml"), T2)
    return db


def test_hostile_titles_stay_text_in_the_change_feed(hostile: Path) -> None:
    entries, _ = _entries(hostile)
    raw = (hostile.parent / "changes.atom").read_text("utf-8")
    assert "<script" not in raw
    assert "<img" not in raw
    edit = next(e for e in entries if "episode edited" in str(e["title"]))
    content = str(edit["content"][0]["value"])  # type: ignore[index]
    assert "&lt;img src=x onerror=alert(2)&gt;" in content  # text, escaped in the HTML
    assert "<img" not in content


def test_moves_gone_feeds_and_new_media_bytes_are_changes_too(tmp_path: Path) -> None:
    """The kinds a loopback run does not make here, recorded as a run would record them."""
    from media_archive import NOW, media_archive, payload_bytes

    db = tmp_path / "archive.db"
    media_archive(db, {"a": payload_bytes(1)})
    with Archive(db) as archive:
        (episode,) = archive.db.execute("SELECT id FROM episodes").fetchone()
        archive.record_payload("ab" * 32, 10, "audio/mpeg", ".mp3", T3)
        assert archive.add_media_version(episode, "https://cdn.example/a.mp3", "ab" * 32, T3) == 2
        archive.move_feed(1, "https://ex.example/feed", "https://new.example/feed", "301", T3)
        archive.record_feed_error(1, "HTTP 410 gone", 410, "2026-12-04T10:00:00Z", [], gone=True)
    entries, _ = _entries(db)
    kinds = [next(t["term"] for t in e["tags"] if "kind" in t["scheme"]) for e in entries]
    assert kinds == ["podcast-added", "episode-added", "feed-moved", "media-changed", "feed-gone"]
    assert str(entries[0]["published"]).startswith(NOW[:19])
    moved = str(entries[2]["content"][0]["value"])  # type: ignore[index]
    assert "https://new.example/feed" in moved
    assert "version 2" in str(entries[3]["content"][0]["value"])  # type: ignore[index]


def test_an_edit_in_a_long_paragraph_marks_only_the_edit() -> None:
    words = [f"w{i % 37}" for i in range(400)]  # words that repeat, as prose does
    old = " ".join(words)
    new = " ".join([*words[:200], "inserted", *words[200:300], *words[301:]])
    (row,) = side_by_side(old, new)
    assert row.tag == "replace"
    assert "".join(s.text for s in row.old) == old
    assert "".join(s.text for s in row.new) == new
    assert [s.text.strip() for s in row.new if s.changed] == ["inserted"]
    assert [s.text.strip() for s in row.old if s.changed] == [words[300]]
    assert side_by_side("Alpha", "Alpha (corrected)")[0].new == (
        Segment("Alpha", False),
        Segment(" (corrected)", True),
    )
