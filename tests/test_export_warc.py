"""``podarchive export-warc`` (#27): the archive as WARC/1.1 records and a WACZ 1.1 package.

A loopback podcast (ten episodes with pages, a transcript and a chapters file; the feed
served gzipped, fetched three times with one change, the pages re-checked once) is archived
by real runs, then exported. What is checked: ``warcio check`` and ``wacz validate`` pass;
every capture is a response or revisit with its original status and headers and a payload
digest equal to the stored body's SHA-256; every body stored before captures existed is a
resource record; and pywb, in its own virtualenv on loopback, replays every feed and page URL
at the time of each capture, byte for byte (tests/pywb_replay.py).
"""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from export_podcast import EPISODES, archive_podcast, records
from loopback import LoopbackSite
from pywb_replay import Wayback, pywb_or_skip
from warcio.timeutils import iso_date_to_timestamp

from podarchive.cli import cli
from podarchive.core.types import Exchange
from podarchive.store import Archive


@pytest.fixture
def archived(tmp_path: Path, site: LoopbackSite) -> Path:
    return archive_podcast(tmp_path, site)


def _captures(db: Path) -> list[Any]:
    with Archive(db) as archive:
        return list(archive.captures())


def _uncaptured(db: Path) -> list[Any]:
    with Archive(db) as archive:
        return list(archive.uncaptured_bodies())


def test_the_warc_checks_and_every_body_is_a_record(archived: Path, tmp_path: Path) -> None:
    out = tmp_path / "export"
    result = CliRunner().invoke(
        cli, ["export-warc", str(out), "--db", str(archived)],
        env={"PODARCHIVE_OPERATOR": "Ada Archivist <ada@example.org>"},
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    warc = tmp_path / "export.warc.gz"
    assert "wrote" in result.output
    assert warc.exists()
    check = subprocess.run(
        [sys.executable, "-c", "from warcio.cli import main; main()", "check", "-v", str(warc)],
        capture_output=True, text=True,
    )  # fmt: skip
    assert check.returncode == 0, check.stdout + check.stderr
    found = records(warc)
    assert found[0]["type"] == "warcinfo"
    assert b"software: podarchive/" in found[0]["payload"]
    assert b"operator: Ada Archivist <ada@example.org>" in found[0]["payload"]
    _every_capture_is_a_record(archived, found)
    _every_old_body_is_a_resource(archived, found)


def _every_capture_is_a_record(db: Path, found: list[dict[str, Any]]) -> None:
    """Captures and request records come in the same order; each request's
    ``WARC-Concurrent-To`` is its capture's response or revisit."""
    by_id = {r["headers"]["WARC-Record-ID"]: r for r in found}
    requests = [r for r in found if r["type"] == "request"]
    captures = _captures(db)
    assert len(requests) == len(captures) > 0
    for capture, request in zip(captures, requests, strict=True):
        ex: Exchange = capture.exchange
        record = by_id[request["headers"]["WARC-Concurrent-To"]]
        assert record["type"] in ("response", "revisit"), (ex.url, ex.status)
        assert record["headers"]["WARC-Target-URI"] == ex.url
        assert record["headers"]["WARC-Date"] == ex.started_at
        assert record["status"] == ex.status
        kept = [(n, v) for n, v in ex.response_headers if n.lower() not in _WIRE]
        assert [(n, v) for n, v in record["http"] if not n.startswith("X-Archive-Orig-")
                and n.lower() != "content-length"] == kept  # fmt: skip
        assert request["http"] == list(ex.request_headers)
        if capture.body_sha256 is not None:
            digest = record["headers"]["WARC-Payload-Digest"]
            assert digest == f"sha256:{capture.body_sha256}"
        if record["type"] == "response" and capture.body_sha256:
            assert hashlib.sha256(record["payload"]).hexdigest() == capture.body_sha256


_WIRE = ("content-encoding", "transfer-encoding", "content-length", "content-range")


def _every_old_body_is_a_resource(db: Path, found: list[dict[str, Any]]) -> None:
    resources = {
        (r["headers"]["WARC-Target-URI"], r["headers"]["WARC-Payload-Digest"]): r
        for r in found
        if r["type"] == "resource"
    }
    for body in _uncaptured(db):
        record = resources[(body.url, f"sha256:{body.sha256}")]
        assert hashlib.sha256(record["payload"]).hexdigest() == body.sha256


def test_the_wacz_validates_and_lists_the_feed_and_pages(archived: Path, tmp_path: Path) -> None:
    wacz = tmp_path / "podcast.wacz"
    done = subprocess.run(
        [sys.executable, "-m", "podarchive", "export-warc", str(wacz), "--db", str(archived),
         "--podcast", "Loopback Talks"],
        capture_output=True, text=True,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    valid = subprocess.run(
        [sys.executable, "-m", "wacz", "validate", "-f", str(wacz)], capture_output=True, text=True
    )
    assert valid.returncode == 0, valid.stdout + valid.stderr
    with zipfile.ZipFile(wacz) as z:
        names = set(z.namelist())
        pages = [json.loads(line) for line in z.read("pages/pages.jsonl").splitlines()]
        package = json.loads(z.read("datapackage.json"))
    assert {"datapackage.json", "indexes/index.cdx.gz", "pages/pages.jsonl"} <= names
    assert all(r["hash"].startswith("sha256:") for r in package["resources"])
    urls = {p["url"] for p in pages[1:]}
    assert any(u.endswith("/feed.xml") for u in urls)
    assert {u.rsplit("/", 1)[1] for u in urls if "/ep" in u} == {f"ep{n}" for n in range(1, 11)}


def test_an_unknown_podcast_is_one_line(archived: Path, tmp_path: Path) -> None:
    result = CliRunner().invoke(
        cli, ["export-warc", str(tmp_path / "x.wacz"), "--db", str(archived), "--podcast", "Nope"]
    )
    assert result.exit_code == 2
    assert "no podcast named 'Nope'" in result.output
    assert not list(tmp_path.glob("x*"))


@pytest.fixture(scope="session")
def pywb() -> Path:
    return pywb_or_skip()


@pytest.fixture
def wayback(pywb: Path, archived: Path, tmp_path: Path) -> Iterator[Wayback]:
    wacz = tmp_path / "replay.wacz"
    result = CliRunner().invoke(cli, ["export-warc", str(wacz), "--db", str(archived)])
    assert result.exit_code == 0, result.output
    server = Wayback(pywb, tmp_path / "pywb", wacz)
    try:
        yield server
    finally:
        server.close()


def test_pywb_replays_every_feed_and_page_byte_for_byte(archived: Path, wayback: Wayback) -> None:
    """Each capture of the feed and of the pages at its own time: a 200 with the stored bytes
    (a response, or a revisit of an identical body), a 304 as the 304 it was."""
    expected: list[tuple[str, str, int, bytes | None]] = []
    with Archive(archived) as archive:
        bodies = {b.sha256: archive.capture_body(b.body_ref) for b in archive.uncaptured_bodies()}
        expected += [(b.url, b.fetched_at, 200, bodies[b.sha256])
                     for b in archive.uncaptured_bodies() if b.kind in ("feed", "page")]  # fmt: skip
        captures = list(archive.captures(kinds=("feed", "page")))
        for c in captures:
            if c.body_ref is not None:
                bodies[str(c.body_sha256)] = archive.capture_body(c.body_ref)
    for c in captures:
        ex = c.exchange
        if ex.status == 304:
            expected.append((ex.url, ex.started_at, 304, None))
        elif ex.status == 200 and c.body_sha256 in bodies:
            expected.append((ex.url, ex.started_at, 200, bodies[str(c.body_sha256)]))
    assert len({(url, at) for url, at, _, _ in expected}) == len(expected)  # one per second
    feed_versions = {body for url, _, _, body in expected if url.endswith("/feed.xml") and body}
    assert len(feed_versions) == 2  # the first and the changed feed
    assert len({url for url, _, _, _ in expected if "/ep" in url}) == EPISODES
    assert any(status == 304 for _, _, status, _ in expected)  # the re-checks
    for url, at, status, body in expected:
        replayed = wayback.get(iso_date_to_timestamp(at), url)
        assert replayed[0] == status, (url, at)
        if body is not None:
            assert replayed[2] == body, (url, at)
