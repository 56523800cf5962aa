"""The archived copy of an episode's media on its Datasette page (issue #26), and the media
folder served by ``podarchive serve``: real archives in tmp_path, ledger rows made through
MediaMixin and the bytes through MediaFolder (no network)."""

from __future__ import annotations

import asyncio
import io
import math
import shutil
import struct
import wave
from pathlib import Path

import httpx
import pytest
from commands import invoke, query
from hypothesis import given
from hypothesis import strategies as st
from media_archive import media_archive, payload_bytes, stored_path
from test_serve import CHROMIUM, _chromium, _serving, get

from podarchive.store import Archive
from podarchive.web.media_route import UNSATISFIABLE, byte_range
from podarchive.web.serve import make_datasette

pytest.importorskip("datasette.app", reason="datasette is not installed")


def wav_bytes(seconds: float = 2.0, rate: int = 8000) -> bytes:
    """A real WAV file: a 440 Hz tone (a browser plays it and knows its length)."""
    frames = b"".join(
        struct.pack("<h", int(12000 * math.sin(2 * math.pi * 440 * n / rate)))
        for n in range(int(seconds * rate))
    )
    out = io.BytesIO()
    with wave.open(out, "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(rate)
        w.writeframes(frames)
    return out.getvalue()


def episode_id(db: Path, key: str) -> int:
    return int(query(db, f"SELECT id FROM episodes WHERE key = '{key}'")[0][0])  # noqa: S608


@pytest.fixture
def wav_archive(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    db = tmp_path / "archive.db"
    return db, media_archive(db, {"a": wav_bytes(), "b": wav_bytes(1.0)}, "audio/wav", ".wav")


def test_the_episode_page_shows_the_archived_copy_with_a_player(
    wav_archive: tuple[Path, dict[str, str]],
) -> None:
    db, stored = wav_archive
    html = get(db, f"/archive/episodes/{episode_id(db, 'a')}").text
    sha = stored["a"]
    src = f"/-/media/{sha[:2]}/{sha[2:4]}/{sha}.wav"
    assert "<h2>The archived copy</h2>" in html
    assert (
        f'<audio class="archived-player" controls preload="metadata" src="{src}"></audio>' in html
    )
    assert "<video" not in html
    assert f"<code>{sha}</code>" in html
    size = len(wav_bytes())
    assert f"({size:,} bytes), audio/wav" in html
    assert 'Version 1</a> of the publisher\'s <a href="https://cdn.example/a.wav">' in html
    assert f'href="/archive/media_payloads/{sha}"' in html
    assert "not audited yet" in html
    assert stored["b"] not in html  # another episode's payload
    served = get(db, src)
    assert served.content == stored_path(db, sha, ".wav").read_bytes()
    assert served.headers["content-type"].startswith("audio/")


def test_the_page_shows_each_versions_last_audit(wav_archive: tuple[Path, dict[str, str]]) -> None:
    db, stored = wav_archive
    assert invoke("audit", "--db", str(db))[0] == 0
    html = get(db, f"/archive/episodes/{episode_id(db, 'a')}").text
    assert 'class="archived-audit audit-ok">ok (20' in html
    path = stored_path(db, stored["a"], ".wav")
    data = bytearray(path.read_bytes())
    data[-1] ^= 0xFF
    path.write_bytes(bytes(data))
    assert invoke("audit", "--db", str(db))[0] == 1
    html = get(db, f"/archive/episodes/{episode_id(db, 'a')}").text
    assert 'class="archived-audit audit-mismatch">mismatch (20' in html


def test_a_video_gets_a_video_player(tmp_path: Path) -> None:
    db = tmp_path / "archive.db"
    stored = media_archive(db, {"v": payload_bytes(5)}, "video/mp4", ".mp4")
    html = get(db, f"/archive/episodes/{episode_id(db, 'v')}").text
    sha = stored["v"]
    src = f"/-/media/{sha[:2]}/{sha[2:4]}/{sha}.mp4"
    assert f'<video class="archived-player" controls preload="metadata" src="{src}">' in html
    assert "<audio" not in html


def test_without_the_media_folder_nothing_is_served_and_the_page_says_so(
    wav_archive: tuple[Path, dict[str, str]],
) -> None:
    db, stored = wav_archive
    shutil.rmtree(db.parent / "media")
    html = get(db, f"/archive/episodes/{episode_id(db, 'a')}").text
    assert f"<code>{stored['a']}</code>" in html
    assert "<audio" not in html
    assert "The media folder is not served here" in html
    sha = stored["a"]
    get(db, f"/-/media/{sha[:2]}/{sha[2:4]}/{sha}.wav", status=404)


def test_the_mount_serves_nothing_outside_the_media_folder(
    wav_archive: tuple[Path, dict[str, str]],
) -> None:
    db, _ = wav_archive
    partial = db.parent / "media" / ".partial"
    partial.mkdir(exist_ok=True)
    (partial / "7-abc").write_bytes(b"half a download")
    for path in (
        "/-/media/../archive.db",
        "/-/media/%2e%2e/archive.db",
        "/-/media/nothing.wav",
        "/-/media/.partial/7-abc",  # a download in progress is not a stored copy
    ):
        response = asyncio.run(_follow(db, path))  # "%2e%2e" is redirected to a table path
        assert response.status_code == 404, path
        assert b"SQLite format" not in response.content
        assert b"half a download" not in response.content


async def _follow(db: Path, path: str) -> httpx.Response:
    response: httpx.Response = await make_datasette(db).client.get(path, follow_redirects=True)
    return response


def test_an_episode_without_media_has_no_archived_section(
    wav_archive: tuple[Path, dict[str, str]],
) -> None:
    db, stored = wav_archive
    b = episode_id(db, "b")
    with Archive(db) as archive:
        assert archive.drop_media_version(b, "https://cdn.example/b.wav", stored["b"]) == 0
    html = get(db, f"/archive/episodes/{b}").text
    assert "Episode b" in html
    assert "The archived copy" not in html


@pytest.mark.slow
@pytest.mark.skipif(CHROMIUM is None, reason="no chromium installed (.ci/run installs it)")
def test_headless_chromium_shows_the_player(
    wav_archive: tuple[Path, dict[str, str]], tmp_path: Path
) -> None:
    db, stored = wav_archive
    invoke("audit", "--db", str(db))
    with _serving(db) as base:
        url = f"{base}/archive/episodes/{episode_id(db, 'a')}"
        dom = _chromium(tmp_path, "--virtual-time-budget=3000", "--dump-dom", url)
        assert dom.returncode == 0, dom.stderr.decode()[-2000:]
        assert f"/-/media/{stored['a'][:2]}/" in dom.stdout.decode()
        shot = tmp_path / "screenshots" / "episode-media.png"
        shot.parent.mkdir()
        result = _chromium(
            tmp_path, "--virtual-time-budget=3000", f"--screenshot={shot}",
            "--window-size=1280,1000", url,
        )  # fmt: skip
    assert result.returncode == 0, result.stderr.decode()[-2000:]
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert shot.stat().st_size > 20_000


# byte ranges: a player seeks without downloading the whole file -----------------------


def _get_with(db: Path, path: str, headers: dict[str, str]) -> httpx.Response:
    async def fetch() -> httpx.Response:
        response: httpx.Response = await make_datasette(db).client.get(path, headers=headers)
        return response

    return asyncio.run(fetch())


def test_the_media_mount_answers_byte_ranges(wav_archive: tuple[Path, dict[str, str]]) -> None:
    db, stored = wav_archive
    sha = stored["a"]
    src = f"/-/media/{sha[:2]}/{sha[2:4]}/{sha}.wav"
    data = stored_path(db, sha, ".wav").read_bytes()
    size = len(data)

    whole = _get_with(db, src, {})
    assert whole.status_code == 200
    assert whole.content == data
    assert whole.headers["accept-ranges"] == "bytes"
    assert whole.headers["etag"] == f'"{sha}"'

    for asked, first, last in (
        ("bytes=100-199", 100, 199),
        ("bytes=1000-", 1000, size - 1),
        ("bytes=-500", size - 500, size - 1),
        (f"bytes=10-{size + 999}", 10, size - 1),  # an end past the file: up to its end
    ):
        part = _get_with(db, src, {"Range": asked})
        assert part.status_code == 206, asked
        assert part.content == data[first : last + 1], asked
        assert part.headers["content-range"] == f"bytes {first}-{last}/{size}", asked
        assert int(part.headers["content-length"]) == last - first + 1

    past = _get_with(db, src, {"Range": f"bytes={size}-"})
    assert past.status_code == 416
    assert past.headers["content-range"] == f"bytes */{size}"
    assert past.content == b""

    several = _get_with(db, src, {"Range": "bytes=0-1,5-6"})  # answered with the whole file
    assert several.status_code == 200
    assert several.content == data

    cached = _get_with(db, src, {"If-None-Match": f'"{sha}"'})
    assert cached.status_code == 304
    assert cached.content == b""


@given(
    size=st.integers(0, 5000),
    first=st.none() | st.integers(0, 6000),
    last=st.none() | st.integers(0, 6000),
)
def test_a_byte_range_is_always_inside_the_file(
    size: int, first: int | None, last: int | None
) -> None:
    header = f"bytes={'' if first is None else first}-{'' if last is None else last}"
    wanted = byte_range(header, size)
    if wanted is None or wanted == UNSATISFIABLE:
        return
    start, end = wanted
    assert 0 <= start <= end < size
    if first is not None:
        assert start == first
    elif last is not None:
        assert end - start + 1 == min(last, size)


@pytest.mark.slow
@pytest.mark.skipif(CHROMIUM is None, reason="no chromium installed (.ci/run installs it)")
def test_headless_chromium_can_seek_in_the_served_file(
    wav_archive: tuple[Path, dict[str, str]], tmp_path: Path
) -> None:
    """A browser's audio element says the whole file is seekable only when the server answers
    byte ranges (without them, only what it has loaded)."""
    db, stored = wav_archive
    sha = stored["a"]
    with _serving(db) as base:
        page = tmp_path / "seek.html"
        page.write_text(
            f'<audio id="a" preload="metadata" src="{base}/-/media/{sha[:2]}/{sha[2:4]}/{sha}.wav">'
            "</audio><p id='out'>waiting</p><script>"
            "const a = document.getElementById('a');"
            "a.addEventListener('loadedmetadata', () => {"
            "  const s = a.seekable;"
            "  document.getElementById('out').textContent ="
            "    'seekable ' + s.length + ' ' + (s.length ? s.end(0).toFixed(1) : '-')"
            "    + ' duration ' + a.duration.toFixed(1);"
            "});</script>"
        )
        dom = _chromium(tmp_path, "--virtual-time-budget=5000", "--dump-dom", page.as_uri())
    assert dom.returncode == 0, dom.stderr.decode()[-2000:]
    assert "seekable 1 2.0 duration 2.0" in dom.stdout.decode()
