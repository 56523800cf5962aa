"""export-warc's mapping of captures to records (#27): responses, both revisit forms,
redirect hops and request records, on an archive whose captures are recorded as a run
records them (``Archive.record_captures``, with the bodies the loopback runs stored).

The feed is captured four times: its first body, the same body again (an
identical-payload-digest revisit), a 304 (a server-not-modified revisit) and its changed
body; an episode page comes through a redirect. pywb replays each at its time.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from export_podcast import archive_podcast, records
from loopback import LoopbackSite
from pywb_replay import Wayback, pywb_or_skip
from warcio.timeutils import iso_date_to_timestamp

from podarchive.cli import cli
from podarchive.core.types import Exchange
from podarchive.store import Archive

REQUEST = (("Host", "127.0.0.1"), ("Accept-Encoding", "gzip"), ("User-Agent", "podarchive"))
PROFILE = "http://netpreserve.org/warc/1.1/revisit/"


def _exchange(url: str, at: str, status: int, headers: tuple[tuple[str, str], ...]) -> Exchange:
    reason = {200: "OK", 301: "Moved Permanently", 304: "Not Modified"}[status]
    return Exchange("GET", url, REQUEST, "HTTP/1.1", status, reason, headers, "127.0.0.1", at)


def _gzipped(kind: str, etag: str) -> tuple[tuple[str, str], ...]:
    return (("Content-Type", kind), ("Content-Encoding", "gzip"), ("Content-Length", "99"),
            ("ETag", etag))  # fmt: skip


@pytest.fixture
def archived(tmp_path: Path, site: LoopbackSite) -> Path:
    return archive_podcast(tmp_path, site)


@pytest.fixture(scope="session")
def pywb() -> Path:
    return pywb_or_skip()


@pytest.fixture
def captured(archived: Path) -> dict[str, Any]:
    """The archive with the feed's and one page's exchanges recorded; what was recorded."""
    with Archive(archived) as archive:
        feed_id, feed_url = archive.db.execute("SELECT id, url FROM feeds").fetchone()
        snaps = archive.db.execute("SELECT hash, size FROM snapshots ORDER BY id").fetchall()
        (first, first_size), (changed, changed_size) = snaps
        page = archive.db.execute(
            "SELECT e.id, d.url, d.hash, d.size FROM episodes e JOIN documents d "
            "ON d.id = e.page_document_id WHERE e.guid = 'ep3'"
        ).fetchone()
        feed_head = _gzipped("application/rss+xml", '"f1"')
        record = archive.record_captures
        times = ["2020-01-02T10:00:00Z", "2020-01-02T11:00:00Z", "2020-01-02T12:00:00Z",
                 "2020-01-02T13:00:00Z"]  # fmt: skip
        record([_exchange(feed_url, times[0], 200, feed_head)], kind="feed", feed_id=feed_id,
               body_sha256=first, body_size=first_size)  # fmt: skip
        record([_exchange(feed_url, times[1], 200, feed_head)], kind="feed", feed_id=feed_id,
               body_sha256=first, body_size=first_size)  # fmt: skip
        record([_exchange(feed_url, times[2], 304, (("ETag", '"f1"'),))], kind="feed",
               feed_id=feed_id)  # fmt: skip
        record([_exchange(feed_url, times[3], 200, _gzipped("application/rss+xml", '"f2"'))],
               kind="feed", feed_id=feed_id, body_sha256=changed, body_size=changed_size)  # fmt: skip
        old = page[1].replace("/ep3", "/old/ep3")
        hop = _exchange(old, times[0], 301, (("Location", page[1]), ("Content-Length", "0")))
        answer = _exchange(page[1], times[0], 200, (("Content-Type", "text/html"),))
        record([hop, answer], kind="page", feed_id=feed_id, episode_id=page[0],
               body_sha256=page[2], body_size=page[3])  # fmt: skip
        bodies = {sha: archive.capture_body(c.body_ref) for c in archive.captures()
                  if c.body_ref is not None for sha in [c.body_sha256]}  # fmt: skip
    return {"feed": feed_url, "times": times, "first": first, "changed": changed,
            "page": page[1], "old": old, "page_sha": page[2], "bodies": bodies}  # fmt: skip


def _export(db: Path, out: Path) -> None:
    result = CliRunner().invoke(cli, ["export-warc", str(out), "--db", str(db)])
    assert result.exit_code == 0, result.output


def _at(found: list[dict[str, Any]], url: str, date: str, kind: str) -> dict[str, Any]:
    (record,) = [r for r in found if r["type"] == kind
                 and r["headers"].get("WARC-Target-URI") == url
                 and r["headers"]["WARC-Date"] == date]  # fmt: skip
    return record


def test_captures_become_responses_revisits_and_requests(
    archived: Path,
    captured: dict[str, Any],
    tmp_path: Path,
) -> None:
    _export(archived, tmp_path / "out.warc.gz")
    found = records(tmp_path / "out.warc.gz")
    feed, t = captured["feed"], captured["times"]
    first = _at(found, feed, t[0], "response")
    assert first["headers"]["WARC-Payload-Digest"] == f"sha256:{captured['first']}"
    assert hashlib.sha256(first["payload"]).hexdigest() == captured["first"]
    assert ("X-Archive-Orig-Content-Encoding", "gzip") in first["http"]
    assert ("Content-Length", str(len(first["payload"]))) in first["http"]
    assert not [n for n, _ in first["http"] if n == "Content-Encoding"]
    again = _at(found, feed, t[1], "revisit")
    assert again["headers"]["WARC-Profile"] == PROFILE + "identical-payload-digest"
    assert again["headers"]["WARC-Refers-To"] == first["headers"]["WARC-Record-ID"]
    assert again["headers"]["WARC-Payload-Digest"] == f"sha256:{captured['first']}"
    same = _at(found, feed, t[2], "revisit")
    assert same["status"] == 304
    assert same["headers"]["WARC-Profile"] == PROFILE + "server-not-modified"
    assert same["headers"]["WARC-Refers-To"] == again["headers"]["WARC-Record-ID"]
    changed = _at(found, feed, t[3], "response")
    assert hashlib.sha256(changed["payload"]).hexdigest() == captured["changed"]
    hop = _at(found, captured["old"], t[0], "response")
    assert (hop["status"], hop["payload"]) == (301, b"")
    for record in (first, again, same, changed, hop):
        request = [r for r in found if r["type"] == "request"
                   and r["headers"].get("WARC-Concurrent-To") == record["headers"]["WARC-Record-ID"]]  # fmt: skip
        assert len(request) == 1
        assert ("Accept-Encoding", "gzip") in request[0]["http"]


@pytest.fixture
def wayback(
    pywb: Path, archived: Path, captured: dict[str, Any], tmp_path: Path
) -> Iterator[Wayback]:
    _export(archived, tmp_path / "replay.wacz")
    server = Wayback(pywb, tmp_path / "pywb", tmp_path / "replay.wacz")
    try:
        yield server
    finally:
        server.close()


def test_pywb_replays_each_capture_at_its_time(captured: dict[str, Any], wayback: Wayback) -> None:
    feed, t, bodies = captured["feed"], captured["times"], captured["bodies"]
    stamp = [iso_date_to_timestamp(x) for x in t]
    assert wayback.get(stamp[0], feed)[::2] == (200, bodies[captured["first"]])
    assert wayback.get(stamp[1], feed)[::2] == (200, bodies[captured["first"]])  # the revisit
    assert wayback.get(stamp[2], feed)[0] == 304  # as the server said
    assert wayback.get(stamp[3], feed)[::2] == (200, bodies[captured["changed"]])
    assert wayback.get(stamp[0], captured["page"])[::2] == (200, bodies[captured["page_sha"]])
    status, headers, _ = wayback.get(stamp[0], captured["old"])
    assert status == 301
    assert captured["page"] in headers.get("Location", "")


def test_the_episode_page_links_to_its_captures(archived: Path, captured: dict[str, Any]) -> None:
    import asyncio
    import re

    from podarchive.web.serve import make_datasette

    with Archive(archived) as archive:
        (episode_id,) = archive.db.execute("SELECT id FROM episodes WHERE guid = 'ep3'").fetchone()

    async def pages() -> tuple[str, list[dict[str, Any]]]:
        ds = make_datasette(archived)
        html = (await ds.client.get(f"/archive/episodes/{episode_id}")).text
        (href,) = re.findall(r'<a href="([^"]*captures[^"]*)">How it was fetched', html)
        href = href.replace("&amp;", "&")
        rows = (
            await ds.client.get(href.replace("/captures?", "/captures.json?_shape=array&"))
        ).json()
        return href, rows

    href, rows = asyncio.run(pages())
    assert href == f"/archive/captures?episode_id={episode_id}"
    fetched = [(r["url"], r["status"], r["started_at"]) for r in rows]
    assert (captured["old"], 301, captured["times"][0]) in fetched
    assert (captured["page"], 200, captured["times"][0]) in fetched
    assert {r["episode_id"] for r in rows} == {episode_id}


def test_since_keeps_only_later_captures(
    archived: Path, captured: dict[str, Any], tmp_path: Path
) -> None:
    out = tmp_path / "later.warc.gz"
    result = CliRunner().invoke(
        cli, ["export-warc", str(out), "--db", str(archived), "--since", "2020-01-03"]
    )
    assert result.exit_code == 0, result.output
    found = records(out)
    dates = {
        r["headers"]["WARC-Date"] for r in found if r["type"] in ("response", "revisit", "request")
    }
    with Archive(archived) as archive:
        runs = {c.exchange.started_at for c in archive.captures(since="2020-01-03T00:00:00Z")}
    assert dates == runs
    assert not dates & set(captured["times"])
    episodes = [
        r
        for r in found
        if r["headers"].get("WARC-Target-URI", "").startswith("urn:podarchive:episode:")
    ]
    assert len(episodes) == 10  # the feed was captured since then: all its episodes
