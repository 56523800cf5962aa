"""``serve``'s change feeds and revision pages (#28): the in-process client for the feeds, their
paging and refusals; a real ``podarchive serve`` in headless Chromium for a revision's page
(a screenshot, kept under the test's ``tmp_path``) and for a hostile one (no payload runs)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import feedparser
import pytest
from commands import query
from loopback import LoopbackSite
from test_changes import EXPECTED, T1, T2, build_edited, feed_xml, run_at
from test_serve import CHROMIUM, _chromium, _serving, get

pytest.importorskip("datasette.app", reason="datasette is not installed")

RAN = "XSS-RAN"


@pytest.fixture(scope="module")
def edited(tmp_path_factory: pytest.TempPathFactory) -> Path:
    db = tmp_path_factory.mktemp("changes-web") / "archive.db"
    with LoopbackSite() as site:
        build_edited(db, site)
    return db


def _revision(db: Path, title: str) -> int:
    return int(
        query(
            db,
            "SELECT r.id FROM episode_revisions r JOIN episodes e ON e.id = r.episode_id "
            f"WHERE e.title = '{title}'",  # noqa: S608
        )[0][0]
    )


def test_the_archive_and_each_podcast_have_change_feeds(edited: Path) -> None:
    response = get(edited, "/archive/-/changes.atom")
    assert response.headers["content-type"].startswith("application/atom+xml")
    assert response.headers["x-content-type-options"] == "nosniff"
    parsed = feedparser.parse(response.content)
    assert not parsed.bozo
    assert len(parsed.entries) == len(EXPECTED)
    revision = _revision(edited, "Alpha (corrected)")
    edit = next(e for e in parsed.entries if "episode edited" in e.title)
    assert edit.link == f"http://localhost/archive/-/changes/episode_revisions/{revision}"
    added = next(e for e in parsed.entries if "new episode" in e.title)
    assert re.fullmatch(r"http://localhost/archive/episodes/\d+", added.link)
    feed = get(edited, "/archive/-/podcasts/1/changes.json").json()
    assert [i["id"] for i in feed["items"]] == [e.id for e in parsed.entries]
    assert get(edited, "/archive/-/podcasts/2/changes.json").json()["items"] == []


def test_a_reader_pages_through_with_its_cursor(edited: Path) -> None:
    first = get(edited, "/archive/-/changes.json?since=2026-01-01&limit=5").json()
    assert len(first["items"]) == 5
    cursor = first["items"][-1]["_podarchive"]["cursor"]
    second = get(edited, f"/archive/-/changes.json?after={cursor}&limit=5").json()
    assert len(second["items"]) == len(EXPECTED) - 5
    assert "next_url" not in second  # the last page
    ids = [i["id"] for i in first["items"] + second["items"]]
    assert len(set(ids)) == len(EXPECTED)
    paged = get(
        edited,
        f"/archive/-/changes.json?after={first['items'][0]['_podarchive']['cursor']}&limit=2",
    )
    assert paged.json()["next_url"].startswith("http://localhost/archive/-/changes.json?after=")


def test_bad_requests_are_refused(edited: Path) -> None:
    assert "not a change cursor" in get(edited, "/archive/-/changes.atom?after=x", status=400).text
    get(edited, "/archive/-/changes/episode_revisions/999", status=404)
    get(edited, "/nothing/-/changes.atom", status=404)


def test_a_revision_page_shows_old_and_new_side_by_side(edited: Path) -> None:
    page = get(
        edited, f"/archive/-/changes/episode_revisions/{_revision(edited, 'Alpha (corrected)')}"
    ).text
    assert "<h1>Loop Radio: “Alpha (corrected)”: episode edited (title, notes)</h1>" in page
    assert "<th>Before</th><th>After</th>" in page
    assert (
        '<td class="side-old">Alpha</td><td class="side-new">Alpha<ins> (corrected)</ins></td>'
        in page
    )
    assert "<del>as it was</del>" in page
    assert "<ins>corrected</ins>" in page
    assert f'<time datetime="{T2}">' in page
    feed_revision = query(edited, "SELECT id FROM feed_revisions")[0][0]
    podcast = get(edited, f"/archive/-/changes/feed_revisions/{feed_revision}").text
    assert "<h2>Description</h2>" in podcast
    assert "A show about loops<ins>, and more</ins>." in podcast


def _episode_id(db: Path, title: str) -> int:
    return int(query(db, f"SELECT id FROM episodes WHERE title = '{title}'")[0][0])  # noqa: S608


def test_an_episode_page_links_its_history_to_the_revision_pages(edited: Path) -> None:
    episode = _episode_id(edited, "Alpha (corrected)")
    page = get(edited, f"/archive/episodes/{episode}").text
    history = page.split('<section id="history">')[1].split("</section>")[0]
    revision = _revision(edited, "Alpha (corrected)")
    link = f"/archive/-/changes/episode_revisions/{revision}"
    assert re.findall(r'href="([^"]+)"', history) == [link]
    assert f">{T2}</a>: title, notes changed in the feed</li>" in history
    shown = get(edited, link).text  # the link leads to the side-by-side page
    assert "Alpha<ins> (corrected)</ins>" in shown
    unedited = get(edited, f"/archive/episodes/{_episode_id(edited, 'Delta')}").text
    assert 'id="history"' not in unedited
    assert "<h1>Delta</h1>" in unedited


@pytest.fixture(scope="module")
def hostile(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An episode whose title and notes carry payloads, edited into other payloads."""
    db = tmp_path_factory.mktemp("changes-hostile") / "archive.db"

    def ran(n: int) -> str:
        return f"document.body.append('XSS'+'-RAN-{n}')"

    title = f"Evil &lt;img src=x onerror=&quot;{ran(1)}&quot;&gt;"
    notes = f'<p>Hi <script>{ran(2)}</script><img src=x onerror="{ran(3)}"></p>'
    notes2 = f'<p>Bye <svg onload="{ran(4)}"></svg> &lt;script&gt;{ran(5)}&lt;/script&gt;</p>'
    with LoopbackSite() as site:
        base = site.url("")
        items = {"e": (title, "Mon, 01 Jan 2024 00:00:00 +0000", "e.mp3", notes)}
        site.serve("/loop/feed.xml", feed_xml(base, items, "d"))
        run_at(db, site.url("/loop/feed.xml"), T1)
        items = {
            "e": (
                title + " &lt;script&gt;" + ran(6) + "&lt;/script&gt;",
                items["e"][1],
                "e.mp3",
                notes2,
            )
        }
        site.serve("/loop/feed.xml", feed_xml(base, items, "d"))
        run_at(db, site.url("/loop/feed.xml"), T2)
    return db


def test_hostile_payloads_stay_text_on_the_revision_page_and_in_the_feed(hostile: Path) -> None:
    (revision,) = query(hostile, "SELECT id FROM episode_revisions")[0]
    page = get(hostile, f"/archive/-/changes/episode_revisions/{revision}").text
    assert "<script>document" not in page
    assert "<img src=x" not in page
    assert "&lt;script&gt;document.body.append" in page
    atom = get(hostile, "/archive/-/changes.atom").text
    assert "<script" not in atom
    assert "<img" not in atom
    assert json.loads(get(hostile, "/archive/-/changes.json").text)["items"]


@pytest.mark.slow
@pytest.mark.skipif(CHROMIUM is None, reason="no chromium installed (.ci/run installs it)")
def test_headless_chromium_sees_a_revision_page(
    edited: Path, hostile: Path, tmp_path: Path
) -> None:
    shots = tmp_path / "screenshots"
    shots.mkdir()
    with _serving(edited) as base:
        url = f"{base}/archive/-/changes/episode_revisions/{_revision(edited, 'Alpha (corrected)')}"
        shot = shots / "revision.png"
        done = _chromium(tmp_path, f"--screenshot={shot}", "--window-size=1280,900", url)
        assert done.returncode == 0, done.stderr.decode()[-2000:]
        assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        assert shot.stat().st_size > 20_000  # a rendered page, not a blank one
        dom = _chromium(tmp_path, "--virtual-time-budget=3000", "--dump-dom", url).stdout.decode()
        assert "<th>Before</th><th>After</th>" in dom
        assert "Alpha<ins> (corrected)</ins>" in dom
    (revision,) = query(hostile, "SELECT id FROM episode_revisions")[0]
    with _serving(hostile) as base:
        url = f"{base}/archive/-/changes/episode_revisions/{revision}"
        dom = _chromium(tmp_path, "--virtual-time-budget=3000", "--dump-dom", url).stdout.decode()
        assert "<h1>" in dom
        assert RAN not in dom  # no payload ran (each would have written the marker)
        atom_url = f"{base}/archive/-/changes.atom"
        dom = _chromium(
            tmp_path, "--virtual-time-budget=3000", "--dump-dom", atom_url
        ).stdout.decode()
        assert RAN not in dom


@pytest.mark.slow
@pytest.mark.skipif(CHROMIUM is None, reason="no chromium installed (.ci/run installs it)")
def test_headless_chromium_sees_an_episode_history(edited: Path, tmp_path: Path) -> None:
    """The episode's page in a real browser: its History list (a screenshot under the test's
    ``tmp_path``), and the revision page its link leads to."""
    episode = _episode_id(edited, "Alpha (corrected)")
    with _serving(edited) as base:
        url = f"{base}/archive/episodes/{episode}#history"
        shot = tmp_path / "episode-history.png"
        done = _chromium(tmp_path, f"--screenshot={shot}", "--window-size=1280,1400", url)
        assert done.returncode == 0, done.stderr.decode()[-2000:]
        assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        assert shot.stat().st_size > 20_000  # a rendered page, not a blank one
        dom = _chromium(tmp_path, "--virtual-time-budget=3000", "--dump-dom", url).stdout.decode()
        history = dom.split('<section id="history">')[1].split("</section>")[0]
        (link,) = re.findall(r'href="([^"]+)"', history)
        assert (
            link == f"/archive/-/changes/episode_revisions/{_revision(edited, 'Alpha (corrected)')}"
        )
        dom = _chromium(
            tmp_path, "--virtual-time-budget=3000", "--dump-dom", base + link
        ).stdout.decode()
        assert "Alpha<ins> (corrected)</ins>" in dom
