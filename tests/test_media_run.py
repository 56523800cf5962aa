"""The media phase of a run (#26), end to end through the CLI on loopback podcasts.

127.0.0.2 plays a public host and 127.0.0.1 a private one (as in test_moved_feed_trust), so
one enclosure is refused by the address guard while the others are fetched.
"""

from __future__ import annotations

import errno
import hashlib
import ipaddress
import os
import random
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from functools import partial
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from click.testing import CliRunner
from conftest import FAST_ENV
from loopback import LoopbackSite, MediaFile, _send

import podarchive.tasks.backfill
import podarchive.update.run
from podarchive.cli import cli
from podarchive.net.fetch import Fetcher
from podarchive.store.media_files import MediaFolder, media_error

PUBLIC = "127.0.0.2"
SRC = Path(__file__).resolve().parents[1] / "src"
SIZE = 200_000  # bytes of each episode's file


def only_public(address: ipaddress.IPv4Address | ipaddress.IPv6Address) -> bool:
    """The test's address check: everything but 127.0.0.2 is "private"."""
    return str(address) != PUBLIC


@pytest.fixture(autouse=True)
def _guard_as_if_public(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(
        podarchive.update.run, "Fetcher", partial(Fetcher, address_blocked=only_public)
    )


@pytest.fixture
def public() -> Iterator[LoopbackSite]:
    with LoopbackSite(PUBLIC) as server:
        yield server


@pytest.fixture
def private() -> Iterator[LoopbackSite]:
    with LoopbackSite() as server:
        yield server


def invoke(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


def feed_xml(enclosures: list[tuple[str, int]]) -> bytes:
    """A feed with one episode per enclosure (URL, declared length), the first newest."""
    items = "".join(
        f"<item><guid>ep-{i}</guid><title>Episode {i}</title>"
        f"<pubDate>{(20 - i) % 28 + 1:02d} Jan 2024 10:00:00 GMT</pubDate>"
        f'<enclosure url="{url}" length="{length}" type="audio/mpeg"/></item>'
        for i, (url, length) in enumerate(enclosures)
    )
    return (f'<?xml version="1.0"?><rss version="2.0"><channel><title>Show</title>{items}'
            "</channel></rss>").encode()  # fmt: skip


def schedule(tmp_path: Path, url: str, extra: str = "") -> Path:
    directory = tmp_path / "schedules"
    directory.mkdir(exist_ok=True)
    (directory / "show.toml").write_text(
        f'[[feed]]\nurl = "{url}"\nname = "Show"\npages = false\nmedia = true\n{extra}'
    )
    return directory


def rows(db: Path, sql: str) -> list[tuple[object, ...]]:
    with sqlite3.connect(db) as conn:
        return conn.execute(sql).fetchall()


def media_paths(site: LoopbackSite, since: int = 0) -> list[str]:
    return [r.path for r in site.requests[since:] if r.path.startswith("/m/")]


def podcast(public: LoopbackSite, private: LoopbackSite) -> tuple[str, dict[int, bytes]]:
    """20 episodes: 1 and 2 share one payload (two URLs), 3's server ignores Range, 4 is a
    404, 5 is on the private host. Returns the feed URL and each reachable episode's bytes."""
    bodies = {i: random.Random(i).randbytes(SIZE) for i in range(20)}
    bodies[2] = bodies[1]
    enclosures = []
    for i in range(20):
        path = f"/m/ep{i}.mp3"
        if i == 5:
            private.handle(path, MediaFile(bodies[i]))
            enclosures.append((private.url(path), SIZE))
            continue
        if i != 4:
            public.handle(path, MediaFile(bodies[i], etag=f'"e{i}"', ranges=i != 3))
        enclosures.append((public.url(path), SIZE))
    public.serve("/feed.xml", feed_xml(enclosures), etag='"f1"')
    del bodies[4], bodies[5]
    return public.url("/feed.xml"), bodies


def test_a_run_stores_every_reachable_payload_once_and_reports_the_failures(
    tmp_path: Path, public: LoopbackSite, private: LoopbackSite
) -> None:
    url, bodies = podcast(public, private)
    schedules, db = schedule(tmp_path, url), tmp_path / "a.db"
    code, _, err = invoke("run", "--all", "--schedules", str(schedules), "--db", str(db))
    assert code == 0, err
    # one line for the feed's failing media, naming both reasons
    assert err.count("podarchive: Show: 2 media files failed") == 1, err
    stored = {sha for (sha,) in rows(db, "SELECT sha256 FROM media_payloads")}
    assert stored == {hashlib.sha256(b).hexdigest() for b in bodies.values()}
    assert len(stored) == 17  # 18 reachable episodes, two of them the same bytes
    folder = tmp_path / "media"
    for body in bodies.values():
        sha = hashlib.sha256(body).hexdigest()
        assert (folder / sha[:2] / sha[2:4] / f"{sha}.mp3").read_bytes() == body
    assert len([p for p in folder.rglob("*.mp3")]) == 17
    assert rows(db, "SELECT count(*) FROM episode_media") == [(18,)]
    assert not list((folder / ".partial").iterdir())
    fetches = dict(rows(db, "SELECT outcome, count(*) FROM media_fetches GROUP BY outcome"))
    assert fetches == {"stored": 18, "failed": 2}
    assert rows(db, "SELECT status FROM media_fetches WHERE url LIKE '%ep4.mp3'") == [(404,)]

    code, out, _ = invoke("status", "--db", str(db))
    media_lines = [line for line in out.splitlines() if line.startswith("media:")]
    assert len(media_lines) == 2, out  # one line each: the 404 and the private address
    assert any(line.startswith("media: Show: 1 file failing: HTTP 404") for line in media_lines)
    assert any("1 file failing: blocked: private address" in line for line in media_lines)
    # every media request is in the fetch log too, with its episode
    logged = rows(db, "SELECT count(*) FROM fetches WHERE kind = 'media' AND episode_id > 0")
    assert logged[0][0] >= 20

    # nothing new: no media request at all; asked to re-check: only conditional ones (304)
    before = len(public.requests)
    assert invoke("run", "--all", "--schedules", str(schedules), "--db", str(db))[0] == 0
    assert media_paths(public, before) == []
    assert invoke(
        "run", "--all", "--recheck-media", "--schedules", str(schedules), "--db", str(db)
    )[0] == 0  # fmt: skip
    again = [r for r in public.requests[before:] if r.path.startswith("/m/")]
    assert len(again) == 18 == len(set(media_paths(public, before)))
    assert all("if-none-match" in r.headers for r in again)
    assert rows(db, "SELECT count(*) FROM media_fetches WHERE outcome = 'unchanged'") == [(18,)]
    assert rows(db, "SELECT count(*) FROM media_payloads") == [(17,)]


def changing(h: BaseHTTPRequestHandler) -> None:
    """A host that inserts new ads on every download: new bytes each time, no validator."""
    _send(h, 200, os.urandom(5000), {"Content-Type": "audio/mpeg"})


def test_bytes_that_change_on_every_request_keep_at_most_media_versions(
    tmp_path: Path, public: LoopbackSite
) -> None:
    public.handle("/m/ads.mp3", changing)
    public.serve("/feed.xml", feed_xml([(public.url("/m/ads.mp3"), 5000)]))
    schedules = schedule(tmp_path, public.url("/feed.xml"), "media_versions = 2\n")
    db = tmp_path / "a.db"
    for _ in range(5):
        args = ("run", "--all", "--recheck-media", "--schedules", str(schedules), "--db", str(db))
        assert invoke(*args)[0] == 0
    assert public.hits("/m/ads.mp3") == 5
    versions = rows(db, "SELECT version FROM episode_media ORDER BY version")
    assert versions == [(1,), (5,)]  # the first and the latest
    kept = {sha for (sha,) in rows(db, "SELECT sha256 FROM episode_media")}
    files = {p.stem for p in (tmp_path / "media").rglob("*.mp3")}
    assert files == kept


def test_the_budget_stops_new_downloads_with_one_line(
    tmp_path: Path, public: LoopbackSite, private: LoopbackSite, monkeypatch: pytest.MonkeyPatch
) -> None:
    url, _ = podcast(public, private)
    monkeypatch.setenv("PODARCHIVE_MEDIA_BUDGET", str(3 * SIZE))
    monkeypatch.setenv("PODARCHIVE_MEDIA_CONCURRENCY", "1")
    schedules, db = schedule(tmp_path, url), tmp_path / "a.db"
    code, _, err = invoke("run", "--all", "--schedules", str(schedules), "--db", str(db))
    assert code == 0
    assert err.count("budget") == 1, err
    assert rows(db, "SELECT count(*) FROM media_fetches") == [(3,)]
    # newest first: episodes 0, 1 and 2 (1 and 2 the same bytes)
    assert rows(db, "SELECT count(*) FROM media_payloads") == [(2,)]


def test_a_sigkilled_run_resumes_the_download_and_stores_the_exact_bytes(
    tmp_path: Path, public: LoopbackSite
) -> None:
    body = os.urandom(50 * 1024 * 1024)
    media = MediaFile(body, chunk=1 << 20)
    media.hold_at = 30 * 1024 * 1024  # the server pauses there until the run is killed
    public.handle("/m/big.mp3", media)
    public.serve("/feed.xml", feed_xml([(public.url("/m/big.mp3"), len(body))]))
    schedules = schedule(tmp_path, public.url("/feed.xml"), "allow_private_hosts = true\n")
    db = tmp_path / "a.db"
    env = {k: v for k, v in os.environ.items() if not k.startswith("PODARCHIVE_")}
    env.update(FAST_ENV, PYTHONPATH=str(SRC))
    args = ["run", "--all", "--schedules", str(schedules), "--db", str(db)]
    child = subprocess.Popen([sys.executable, "-m", "podarchive", *args], env=env, cwd=tmp_path)
    try:
        assert media.held.wait(60), "the run never got 30 MB"
        deadline = time.monotonic() + 30
        partials = tmp_path / "media" / ".partial"
        while not any(p.stat().st_size > 25 * 1024 * 1024 for p in partials.glob("*-*")):
            assert time.monotonic() < deadline, "the partial file never passed half"
            time.sleep(0.01)
        child.kill()
        assert child.wait(10) == -9
    finally:
        child.kill()
        media.release.set()
    code, _, err = invoke(*args)
    assert code == 0, err
    second = media.sent[-1]
    assert second.range is not None
    assert second.status == 206
    assert second.bytes <= 0.55 * len(body)
    sha = hashlib.sha256(body).hexdigest()
    assert (tmp_path / "media" / sha[:2] / sha[2:4] / f"{sha}.mp3").read_bytes() == body
    assert rows(db, "SELECT sha256 FROM episode_media") == [(sha,)]


def test_backfill_dry_run_counts_the_media_then_backfill_fetches_it(
    tmp_path: Path, public: LoopbackSite, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(
        podarchive.tasks.backfill, "Fetcher", partial(Fetcher, address_blocked=only_public)
    )
    monkeypatch.setenv("PODARCHIVE_MEDIA_CONCURRENCY", "1")  # the order of the requests
    bodies = [random.Random(i).randbytes(1000 * (i + 1)) for i in range(3)]
    for i, body in enumerate(bodies):
        public.handle(f"/m/ep{i}.mp3", MediaFile(body))
    enclosures = [(public.url(f"/m/ep{i}.mp3"), len(b)) for i, b in enumerate(bodies)]
    public.serve("/feed.xml", feed_xml(enclosures))
    schedules, db = schedule(tmp_path, public.url("/feed.xml")), tmp_path / "a.db"
    args = ("backfill", "--schedules", str(schedules), "--db", str(db))
    code, out, err = invoke(*args, "--dry-run")
    assert code == 0, err
    assert "  media: would fetch 3 files, 6000 bytes declared" in out.splitlines()
    assert media_paths(public) == []
    code, out, err = invoke(*args)
    assert code == 0, err
    assert "  media: stored 3, 0 failed, 6000 bytes moved" in out.splitlines()
    # newest first: the feed lists episode 0 first
    assert media_paths(public) == ["/m/ep0.mp3", "/m/ep1.mp3", "/m/ep2.mp3"]
    stored = {sha for (sha,) in rows(db, "SELECT sha256 FROM media_payloads")}
    assert stored == {hashlib.sha256(b).hexdigest() for b in bodies}


def test_a_full_disk_stops_media_with_one_line_and_loses_nothing_else(
    tmp_path: Path, public: LoopbackSite, private: LoopbackSite, monkeypatch: pytest.MonkeyPatch
) -> None:
    url, bodies = podcast(public, private)

    def full(self: MediaFolder, partial: Path, ext: str, **_: object) -> None:
        raise media_error(OSError(errno.ENOSPC, "No space left on device"), "store a media file")

    commit = MediaFolder.commit
    monkeypatch.setattr(MediaFolder, "commit", full)
    schedules, db = schedule(tmp_path, url), tmp_path / "a.db"
    code, _, err = invoke("run", "--all", "--schedules", str(schedules), "--db", str(db))
    assert code == 0, err
    assert err.count("no more media this run") == 1, err
    assert rows(db, "SELECT count(*) FROM episodes") == [(20,)]  # the feed is stored whole
    assert rows(db, "SELECT count(*) FROM media_payloads") == [(0,)]
    assert rows(db, "SELECT count(*) FROM media_state WHERE error_count > 0") == [(0,)]
    assert len(media_paths(public)) <= 2  # media_concurrency: no new download after it
    # room again: the next run commits the complete partial files without moving them again
    monkeypatch.setattr(MediaFolder, "commit", commit)
    before = len(public.requests)
    assert invoke("run", "--all", "--schedules", str(schedules), "--db", str(db))[0] == 0
    assert rows(db, "SELECT count(*) FROM media_payloads") == [(17,)]
    resumed = [r for r in public.requests[before:] if r.path in ("/m/ep0.mp3", "/m/ep1.mp3")]
    assert resumed
    assert all("range" in r.headers for r in resumed)


@pytest.mark.parametrize("alternates", [False, True])
def test_media_alternates_fetches_the_alternate_enclosure_sources(
    tmp_path: Path, public: LoopbackSite, alternates: bool
) -> None:
    mp3, opus = random.Random(1).randbytes(3000), random.Random(2).randbytes(2000)
    public.handle("/m/ep.mp3", MediaFile(mp3))
    public.handle("/m/ep.opus", MediaFile(opus))
    item = (
        f'<item><guid>ep</guid><title>Episode</title><enclosure url="{public.url("/m/ep.mp3")}"'
        ' length="3000" type="audio/mpeg"/><podcast:alternateEnclosure type="audio/opus" '
        f'length="2000"><podcast:source uri="{public.url("/m/ep.opus")}"/>'
        "</podcast:alternateEnclosure></item>"
    )
    public.serve(
        "/feed.xml",
        (
            '<?xml version="1.0"?><rss version="2.0" '
            'xmlns:podcast="https://podcastindex.org/namespace/1.0"><channel><title>Show'
            f"</title>{item}</channel></rss>"
        ).encode(),
    )
    extra = f"media_alternates = {str(alternates).lower()}\n"
    schedules, db = schedule(tmp_path, public.url("/feed.xml"), extra), tmp_path / "a.db"
    code, _, err = invoke("run", "--all", "--schedules", str(schedules), "--db", str(db))
    assert code == 0, err
    expected = {public.url("/m/ep.mp3"): hashlib.sha256(mp3).hexdigest()}
    if alternates:
        expected[public.url("/m/ep.opus")] = hashlib.sha256(opus).hexdigest()
    assert dict(rows(db, "SELECT url, sha256 FROM episode_media")) == expected
    stored = {sha for (sha,) in rows(db, "SELECT sha256 FROM media_payloads")}
    assert stored == set(expected.values())
    # each once (two downloads at a time: in either order)
    assert sorted(media_paths(public)) == sorted(urlsplit(u).path for u in expected)
    # a second run with nothing new asks for no media at all
    before = len(public.requests)
    assert invoke("run", "--all", "--schedules", str(schedules), "--db", str(db))[0] == 0
    assert media_paths(public, before) == []
