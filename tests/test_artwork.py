"""A podcast's artwork and its episodes' images kept like media (issue #28), end to end: a
loopback podcast with channel artwork and per-episode images (real PNG files made here; two
episodes share one image, one image is a 404), ``run`` with ``media = true``, then the pages
of ``serve`` (Datasette's client, and a headless Chromium on a real server once the
publisher is gone)."""

from __future__ import annotations

import asyncio
import hashlib
import sqlite3
import struct
import zlib
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from click.testing import CliRunner
from loopback import LoopbackSite
from test_serve import CHROMIUM, _chromium, _serving

import podarchive.rules.media
from podarchive.cli import cli
from podarchive.web.serve import make_datasette

pytest.importorskip("datasette.app", reason="datasette is not installed")

ART_RGB = (214, 40, 160)  # the artwork's colour, looked for in the screenshot


def png(width: int, height: int, rgb: tuple[int, int, int], stripe: int = 0) -> bytes:
    """A real PNG (8-bit RGB): ``rgb`` with a white stripe every ``stripe`` rows (0: none)."""
    rows = []
    for y in range(height):
        colour = (255, 255, 255) if stripe and y % stripe == 0 else rgb
        rows.append(b"\x00" + bytes(colour) * width)
    raw = zlib.compress(b"".join(rows), 9)

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", raw) + chunk(b"IEND", b"")


def png_pixels(data: bytes) -> tuple[int, int, list[bytes]]:
    """A screenshot's pixels: (width, height, rows of RGB(A) bytes); 8-bit RGB or RGBA only."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat, width = 8, b"", 0
    height = depth = channels = 0
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos : pos + 4])
        kind, body = data[pos + 4 : pos + 8], data[pos + 8 : pos + 8 + length]
        if kind == b"IHDR":
            width, height, depth, colour = struct.unpack(">IIBB", body[:10])
            channels = {2: 3, 6: 4}[colour]
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    assert depth == 8
    raw, stride, rows = zlib.decompress(idat), width * channels, []
    previous = bytearray(stride)
    for y in range(height):
        kind, line = (
            raw[y * (stride + 1)],
            bytearray(raw[y * (stride + 1) + 1 : (y + 1) * (stride + 1)]),
        )
        for i in range(stride):
            left = line[i - channels] if i >= channels else 0
            up, corner = previous[i], previous[i - channels] if i >= channels else 0
            if kind == 1:
                line[i] = (line[i] + left) & 255
            elif kind == 2:
                line[i] = (line[i] + up) & 255
            elif kind == 3:
                line[i] = (line[i] + (left + up) // 2) & 255
            elif kind == 4:
                p = left + up - corner
                pa, pb, pc = abs(p - left), abs(p - up), abs(p - corner)
                near = left if pa <= pb and pa <= pc else up if pb <= pc else corner
                line[i] = (line[i] + near) & 255
        rows.append(bytes(line))
        previous = line
    return width, channels, rows


ART = png(160, 160, ART_RGB, stripe=16)
SHARED = png(64, 64, (30, 90, 200))  # the image of episodes 0 and 1
OWN = png(48, 48, (20, 160, 60))  # episode 2's


def sha(body: bytes) -> str:
    return hashlib.sha256(body).hexdigest()


def served_path(body: bytes) -> str:
    digest = sha(body)
    return f"/-/media/{digest[:2]}/{digest[2:4]}/{digest}.png"


@pytest.fixture
def site() -> Iterator[LoopbackSite]:
    with LoopbackSite() as server:
        yield server


def podcast(site: LoopbackSite) -> str:
    """The feed: artwork, episodes 0 and 1 sharing one image, 2 its own, 3 a 404 image, 4 the
    artwork again (not a second image); each with a small audio file."""
    site.serve("/art.png", ART, etag='"art1"', content_type="image/png")
    site.serve("/shared.png", SHARED, etag='"s1"', content_type="image/png")
    site.serve("/own.png", OWN, etag='"o1"', content_type="image/png")
    images = ["/shared.png", "/shared.png", "/own.png", "/gone.png", "/art.png"]
    items = []
    for i, image in enumerate(images):
        site.serve(f"/m/{i}.mp3", bytes([i]) * 1000, etag=f'"m{i}"', content_type="audio/mpeg")
        items.append(
            f"<item><guid>ep-{i}</guid><title>Episode {i}</title>"
            f"<pubDate>{10 - i:02d} Jan 2024 10:00:00 GMT</pubDate>"
            f'<itunes:image href="{site.url(image)}"/>'
            f'<enclosure url="{site.url(f"/m/{i}.mp3")}" length="1000" type="audio/mpeg"/></item>'
        )
    feed = (
        '<?xml version="1.0"?><rss version="2.0" '
        'xmlns:itunes="http://www.itunes.com/dtds/podcast-1.0.dtd"><channel><title>Show</title>'
        f'<itunes:image href="{site.url("/art.png")}"/>{"".join(items)}</channel></rss>'
    )
    site.serve("/feed.xml", feed, etag='"f1"')
    return site.url("/feed.xml")


def schedule(tmp_path: Path, url: str) -> Path:
    directory = tmp_path / "schedules"
    directory.mkdir(exist_ok=True)
    (directory / "show.toml").write_text(
        f'[[feed]]\nurl = "{url}"\nname = "Show"\npages = false\nmedia = true\n'
        "allow_private_hosts = true\n"
    )
    return directory


def run(schedules: Path, db: Path, *extra: str) -> tuple[int, str]:
    args = ["run", "--all", *extra, "--schedules", str(schedules), "--db", str(db)]
    result = CliRunner().invoke(cli, args, catch_exceptions=False)
    return result.exit_code, result.stderr


def rows(db: Path, sql: str) -> list[tuple[object, ...]]:
    with sqlite3.connect(db) as conn:
        return conn.execute(sql).fetchall()


def image_requests(site: LoopbackSite, since: int = 0) -> list[tuple[str, dict[str, str]]]:
    return [(r.path, r.headers) for r in site.requests[since:] if r.path.endswith(".png")]


def page(db: Path, path: str) -> httpx.Response:
    async def fetch() -> httpx.Response:
        response: httpx.Response = await make_datasette(db).client.get(path)
        return response

    response = asyncio.run(fetch())
    assert response.status_code == 200, response.text[:2000]
    return response


@pytest.fixture
def archived(tmp_path: Path, site: LoopbackSite) -> tuple[Path, Path]:
    """The podcast run once with media; (archive, schedules)."""
    schedules, db = schedule(tmp_path, podcast(site)), tmp_path / "a.db"
    code, err = run(schedules, db)
    assert code == 0, err
    return db, schedules


def test_each_image_is_stored_once_by_its_sha256(
    archived: tuple[Path, Path], site: LoopbackSite, tmp_path: Path
) -> None:
    db, _ = archived
    stored = {row[0] for row in rows(db, "SELECT sha256 FROM media_payloads WHERE ext = '.png'")}
    assert stored == {sha(ART), sha(SHARED), sha(OWN)}
    for body in (ART, SHARED, OWN):
        digest = sha(body)
        assert (
            tmp_path / "media" / digest[:2] / digest[2:4] / f"{digest}.png"
        ).read_bytes() == body
    assert sorted(rows(db, "SELECT url, sha256, version FROM image_files")) == sorted(
        [
            (site.url("/art.png"), sha(ART), 1),
            (site.url("/shared.png"), sha(SHARED), 1),
            (site.url("/own.png"), sha(OWN), 1),
        ]
    )
    # the shared image and the artwork (also episode 4's) were each asked once
    assert sorted(path for path, _ in image_requests(site)) == [
        "/art.png", "/gone.png", "/own.png", "/shared.png",
    ]  # fmt: skip
    outcomes = dict(rows(db, "SELECT url, outcome FROM image_fetches"))
    assert outcomes[site.url("/gone.png")] == "failed"
    assert list(outcomes.values()).count("stored") == 3
    # provenance: each stored image's exchange is a capture linked to its payload
    captured = {r[0] for r in rows(db, "SELECT body_sha256 FROM captures WHERE kind = 'media'")}
    assert {sha(ART), sha(SHARED), sha(OWN)} <= captured
    # every episode's audio too: the images did not take their place
    assert rows(db, "SELECT count(*) FROM episode_media") == [(5,)]


def test_a_404_image_is_one_line_and_not_a_feed_failure(tmp_path: Path, site: LoopbackSite) -> None:
    schedules, db = schedule(tmp_path, podcast(site)), tmp_path / "a.db"
    code, err = run(schedules, db)
    assert code == 0, err
    lines = [line for line in err.splitlines() if "Show" in line and "media" in line]
    assert len(lines) == 1, err
    assert "404" in lines[0], err
    assert rows(db, "SELECT error_count, last_error FROM feeds") == [(0, None)]
    state = rows(db, "SELECT error_count, next_check_at IS NOT NULL FROM image_state "
                     f"WHERE url = '{site.url('/gone.png')}'")  # fmt: skip  # noqa: S608
    assert state == [(1, 1)]  # tried again later, after a back-off


def test_a_second_run_asks_nothing_and_a_recheck_asks_conditionally(
    archived: tuple[Path, Path], site: LoopbackSite
) -> None:
    db, schedules = archived
    before = len(site.requests)
    assert run(schedules, db)[0] == 0
    assert image_requests(site, before) == []  # not due: no request at all
    before = len(site.requests)
    assert run(schedules, db, "--recheck-media")[0] == 0
    again = image_requests(site, before)
    assert sorted(path for path, _ in again) == ["/art.png", "/own.png", "/shared.png"]
    assert all("if-none-match" in headers for _, headers in again)
    assert rows(db, "SELECT count(*) FROM image_fetches WHERE outcome = 'unchanged'") == [(3,)]
    assert rows(db, "SELECT count(*) FROM image_files") == [(3,)]


def test_a_changed_image_is_a_new_version_and_the_old_one_stays(
    archived: tuple[Path, Path], site: LoopbackSite, tmp_path: Path
) -> None:
    db, schedules = archived
    new_art = png(160, 160, (250, 200, 0))
    site.serve("/art.png", new_art, etag='"art2"', content_type="image/png")
    assert run(schedules, db, "--recheck-media")[0] == 0
    versions = rows(db, f"SELECT version, sha256 FROM image_files WHERE url = '{site.url('/art.png')}' "
                        "ORDER BY version")  # fmt: skip  # noqa: S608
    assert versions == [(1, sha(ART)), (2, sha(new_art))]
    for body in (ART, new_art):
        digest = sha(body)
        assert (tmp_path / "media" / digest[:2] / digest[2:4] / f"{digest}.png").exists()
    html = page(db, f"/a/feeds/{rows(db, 'SELECT id FROM feeds')[0][0]}").text
    assert f'src="{served_path(new_art)}"' in html


def test_the_pages_show_the_archived_copies(
    archived: tuple[Path, Path], site: LoopbackSite
) -> None:
    db, _ = archived
    feed_id = rows(db, "SELECT id FROM feeds")[0][0]
    html = page(db, f"/a/feeds/{feed_id}").text
    assert f'<img class="podcast-art art-archived" src="{served_path(ART)}"' in html
    assert site.url("/art.png") not in html
    cards = page(db, "/a/feeds").text
    assert f'<img class="podcast-art art-archived" src="{served_path(ART)}"' in cards
    episodes = dict(rows(db, "SELECT title, id FROM episodes"))
    shared = page(db, f"/a/episodes/{episodes['Episode 1']}").text
    assert f'src="{served_path(SHARED)}"' in shared
    gone = page(db, f"/a/episodes/{episodes['Episode 3']}").text
    assert f'src="{site.url("/gone.png")}"' in gone  # not kept: the publisher's URL
    assert 'referrerpolicy="no-referrer"' in gone
    image = page(db, served_path(ART))
    assert image.content == ART
    assert image.headers["content-type"] == "image/png"


def test_without_the_media_folder_served_the_pages_show_the_publishers_url(
    archived: tuple[Path, Path], site: LoopbackSite, tmp_path: Path
) -> None:
    db, _ = archived
    (tmp_path / "media").rename(tmp_path / "elsewhere")
    html = page(db, f"/a/feeds/{rows(db, 'SELECT id FROM feeds')[0][0]}").text
    assert f'<img class="podcast-art" src="{site.url("/art.png")}"' in html


@pytest.mark.slow
@pytest.mark.skipif(CHROMIUM is None, reason="no chromium installed (.ci/run installs it)")
def test_chromium_shows_the_archived_artwork_once_the_publisher_is_gone(
    tmp_path: Path, site: LoopbackSite
) -> None:
    schedules, db = schedule(tmp_path, podcast(site)), tmp_path / "a.db"
    assert run(schedules, db)[0] == 0
    site.__exit__(None, None, None)  # the publisher's host goes away
    feed_id = rows(db, "SELECT id FROM feeds")[0][0]
    with _serving(db) as base:
        url = f"{base}/a/feeds/{feed_id}"
        dom = _chromium(tmp_path, "--dump-dom", url)
        assert dom.returncode == 0, dom.stderr.decode()[-2000:]
        assert f'src="{served_path(ART)}"' in dom.stdout.decode()
        shot = tmp_path / "podcast.png"
        result = _chromium(tmp_path, f"--screenshot={shot}", "--window-size=1000,700", url)
        assert result.returncode == 0, result.stderr.decode()[-2000:]
    width, channels, lines = png_pixels(shot.read_bytes())
    art = bytes(ART_RGB)
    painted = sum(
        line[i : i + 3] == art for line in lines for i in range(0, width * channels, channels)
    )
    # the 160×160 artwork, less its white stripes (one row in 16): 24,000 pixels, not a
    # broken-image icon
    assert painted >= 20_000, painted


def test_an_image_over_the_cap_is_cut_off_and_an_svg_is_never_shown_from_the_archive(
    tmp_path: Path, site: LoopbackSite, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(podarchive.rules.media, "IMAGE_MAX_BYTES", 10_000)
    url = podcast(site)
    big = SHARED + bytes(range(256)) * 60  # 15 kB: trailing bytes after the PNG's end
    site.serve("/shared.png", big, content_type="image/png")
    svg = b'<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>'
    site.serve("/art.png", svg, content_type="image/svg+xml")
    assert len(big) > 10_000
    schedules, db = schedule(tmp_path, url), tmp_path / "a.db"
    code, err = run(schedules, db)
    assert code == 0, err
    outcomes = dict(rows(db, "SELECT url, outcome FROM image_fetches"))
    assert outcomes[site.url("/shared.png")] == "failed"  # over the cap
    assert outcomes[site.url("/art.png")] == "stored"  # kept as sent, without an extension
    assert rows(
        db, "SELECT ext FROM media_payloads WHERE sha256 = ?".replace("?", f"'{sha(svg)}'")
    ) == [("",)]
    html = page(db, f"/a/feeds/{rows(db, 'SELECT id FROM feeds')[0][0]}").text
    assert f'<img class="podcast-art" src="{site.url("/art.png")}"' in html  # not the archive's
    assert rows(db, "SELECT error_count FROM feeds") == [(0,)]
