"""Media downloads (net/download.py) against a real Range-serving server on 127.0.0.1."""

from __future__ import annotations

import hashlib
import ipaddress
import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from pathlib import Path

import pytest
from loopback import LoopbackSite, MediaFile

from podarchive.core.errors import BlockedURL, BodyTooLarge, HTTPStatusError
from podarchive.core.settings import Settings
from podarchive.core.types import FetchRecord
from podarchive.net.download import download, validator_path
from podarchive.net.fetch import Fetcher

FAST = Settings(connect_timeout=2, read_timeout=5, deadline=30, retries=0, host_gap=0)
LOCAL = FAST.replace(allow_private_hosts=True)  # the loopback server is a private address
BODY = os.urandom(1_000_000)
SRC = Path(__file__).resolve().parents[1] / "src"


@pytest.fixture
def fetcher() -> Iterator[Fetcher]:
    with Fetcher(LOCAL) as f:
        yield f


def serve(site: LoopbackSite, media: MediaFile, path: str = "/ep.mp3") -> str:
    site.handle(path, media)
    return site.url(path)


def test_full_download_writes_the_exact_bytes(
    site: LoopbackSite, fetcher: Fetcher, tmp_path: Path
) -> None:
    media = MediaFile(BODY)
    records: list[FetchRecord] = []
    partial = tmp_path / "part" / "ep"
    d = download(fetcher, serve(site, media), partial, records=records, max_bytes=10**7)
    assert (d.status, d.complete, d.received, d.size, d.total) == (
        200,
        True,
        len(BODY),
        *[len(BODY)] * 2,
    )
    assert d.etag == '"m1"'
    assert not d.restarted
    assert d.stopped is None
    assert partial.read_bytes() == BODY
    assert not validator_path(partial).exists()  # complete: nothing left to resume
    assert [(r.kind, r.status, r.bytes, r.error) for r in records] == [
        ("media", 200, len(BODY), None)
    ]
    request = site.requests[-1]
    assert request.headers["accept-encoding"] == "identity"
    assert "range" not in request.headers


def test_resume_sends_only_the_remainder(
    site: LoopbackSite, fetcher: Fetcher, tmp_path: Path
) -> None:
    media = MediaFile(BODY)
    partial = tmp_path / "ep"
    partial.write_bytes(BODY[:300_000])
    d = download(
        fetcher, serve(site, media), partial, records=[], max_bytes=10**7, resume_validator='"m1"'
    )
    assert (d.status, d.complete, d.received, d.size, d.restarted) == (
        206,
        True,
        700_000,
        len(BODY),
        False,
    )
    assert [(s.range, s.if_range, s.status, s.bytes) for s in media.sent] == [
        ("bytes=300000-", '"m1"', 206, 700_000)
    ]
    assert partial.read_bytes() == BODY
    assert not validator_path(partial).exists()  # complete


def test_validator_given_by_the_caller_is_kept_for_the_next_resume(
    site: LoopbackSite, fetcher: Fetcher, tmp_path: Path
) -> None:
    media = MediaFile(BODY)
    url, partial = serve(site, media), tmp_path / "ep"
    partial.write_bytes(BODY[:100_000])
    stop = threading.Event()
    media.after_first_chunk = stop.set
    media.gap = 0.01
    first = download(
        fetcher, url, partial, records=[], max_bytes=10**7, resume_validator='"m1"', stop=stop
    )
    assert (first.status, first.stopped) == (206, "stopped")
    assert validator_path(partial).read_text() == '"m1"'
    media.gap = 0
    d = download(fetcher, url, partial, records=[], max_bytes=10**7)
    assert (d.status, d.complete, d.size) == (206, True, len(BODY))
    assert partial.read_bytes() == BODY


def test_server_that_ignores_range_restarts_from_zero(
    site: LoopbackSite, fetcher: Fetcher, tmp_path: Path
) -> None:
    media = MediaFile(BODY, ranges=False)
    partial = tmp_path / "ep"
    partial.write_bytes(BODY[:300_000])
    d = download(
        fetcher, serve(site, media), partial, records=[], max_bytes=10**7, resume_validator='"m1"'
    )
    assert (d.status, d.complete, d.restarted, d.received) == (200, True, True, len(BODY))
    assert media.sent[0].range == "bytes=300000-"
    assert partial.read_bytes() == BODY  # not the old prefix followed by the whole body


def test_changed_validator_restarts_with_the_new_bytes(
    site: LoopbackSite, fetcher: Fetcher, tmp_path: Path
) -> None:
    new = os.urandom(400_000)
    media = MediaFile(new, etag='"m2"')
    partial = tmp_path / "ep"
    partial.write_bytes(BODY[:500_000])  # longer than the new file
    d = download(
        fetcher, serve(site, media), partial, records=[], max_bytes=10**7, resume_validator='"m1"'
    )
    assert (d.status, d.complete, d.restarted, d.etag) == (200, True, True, '"m2"')
    assert media.sent[0].if_range == '"m1"'
    assert partial.read_bytes() == new


def test_whole_partial_file_answered_416_is_complete(
    site: LoopbackSite, fetcher: Fetcher, tmp_path: Path
) -> None:
    media = MediaFile(BODY)
    partial = tmp_path / "ep"
    partial.write_bytes(BODY)
    d = download(
        fetcher, serve(site, media), partial, records=[], max_bytes=10**7, resume_validator='"m1"'
    )
    assert (d.status, d.complete, d.received, d.size, d.total) == (
        416,
        True,
        0,
        len(BODY),
        len(BODY),
    )
    assert partial.read_bytes() == BODY


def test_conditional_recheck_304_writes_nothing(
    site: LoopbackSite, fetcher: Fetcher, tmp_path: Path
) -> None:
    media = MediaFile(BODY)
    partial = tmp_path / "ep"
    d = download(fetcher, serve(site, media), partial, records=[], max_bytes=10**7, etag='"m1"')
    assert (d.status, d.not_modified, d.complete, d.received) == (304, True, False, 0)
    assert not partial.exists()
    assert site.requests[-1].headers["if-none-match"] == '"m1"'


def test_404_raises_like_fetcher_get(site: LoopbackSite, fetcher: Fetcher, tmp_path: Path) -> None:
    records: list[FetchRecord] = []
    with pytest.raises(HTTPStatusError, match="HTTP 404 not found") as caught:
        download(fetcher, site.url("/gone.mp3"), tmp_path / "ep", records=records, max_bytes=10**7)
    assert caught.value.status == 404
    assert [(r.status, r.error) for r in records] == [(404, "HTTP 404 not found")]
    assert not (tmp_path / "ep").exists()


def only_public(address: ipaddress.IPv4Address | ipaddress.IPv6Address) -> bool:
    """Everything but 127.0.0.2 is "private" (as in test_fetch_attacks.py)."""
    return str(address) != "127.0.0.2"


def test_redirect_to_a_private_address_is_refused(site: LoopbackSite, tmp_path: Path) -> None:
    media = MediaFile(BODY)
    secret = serve(site, media)  # 127.0.0.1: private here

    def redirect(h: BaseHTTPRequestHandler) -> None:
        h.send_response(302)
        h.send_header("Location", secret)
        h.send_header("Content-Length", "0")
        h.end_headers()

    with LoopbackSite("127.0.0.2") as public, Fetcher(FAST, address_blocked=only_public) as f:
        public.handle("/ep.mp3", redirect)
        records: list[FetchRecord] = []
        with pytest.raises(BlockedURL, match="private address 127.0.0.1"):
            download(f, public.url("/ep.mp3"), tmp_path / "ep", records=records, max_bytes=10**7)
        assert media.sent == []
        assert [r.status for r in records] == [302]
        d = download(
            f,
            public.url("/ep.mp3"),
            tmp_path / "ep",
            records=records,
            max_bytes=10**7,
            allow_private_hosts=True,
        )
        assert d.complete
        assert d.final_url == secret
        assert (tmp_path / "ep").read_bytes() == BODY


@pytest.mark.parametrize("length", [True, False], ids=["content-length", "streaming"])
def test_over_max_bytes_raises_and_removes_the_partial(
    site: LoopbackSite, fetcher: Fetcher, tmp_path: Path, length: bool
) -> None:
    media = MediaFile(BODY, length=length)
    partial = tmp_path / "ep"
    records: list[FetchRecord] = []
    with pytest.raises(BodyTooLarge, match="body over 500000 bytes"):
        download(fetcher, serve(site, media), partial, records=records, max_bytes=500_000)
    assert not partial.exists()
    assert not validator_path(partial).exists()
    # refused from Content-Length before a byte was written, or as soon as the cap was passed
    assert [r.error for r in records] == ["body over 500000 bytes"]
    assert records[0].bytes == 0 if length else 500_000 < records[0].bytes <= 500_000 + (1 << 16)


def test_stop_event_ends_the_transfer_keeping_the_bytes_then_it_resumes(
    site: LoopbackSite, fetcher: Fetcher, tmp_path: Path
) -> None:
    media = MediaFile(BODY, chunk=1 << 14)
    media.gap = 0.01  # the server sends slowly
    stop = threading.Event()
    media.after_first_chunk = stop.set
    partial = tmp_path / "ep"
    url = serve(site, media)
    d = download(fetcher, url, partial, records=[], max_bytes=10**7, stop=stop)
    assert (d.stopped, d.complete) == ("stopped", False)
    assert 0 < d.size < len(BODY)
    assert partial.read_bytes() == BODY[: d.size]
    # the next call resumes with the validator kept beside the partial file
    again = download(fetcher, url, partial, records=[], max_bytes=10**7)
    assert (again.status, again.complete, again.received) == (206, True, len(BODY) - d.size)
    assert media.sent[-1].range == f"bytes={d.size}-"
    assert partial.read_bytes() == BODY


def test_deadline_ends_the_transfer_keeping_the_bytes(site: LoopbackSite, tmp_path: Path) -> None:
    media = MediaFile(BODY)
    media.hold_at = 200_000  # then the server waits: only the deadline can end the call
    partial = tmp_path / "ep"
    records: list[FetchRecord] = []
    try:
        with Fetcher(LOCAL.replace(deadline=0.5)) as f:
            d = download(f, serve(site, media), partial, records=records, max_bytes=10**7)
    finally:
        media.release.set()
    assert (d.stopped, d.complete) == ("deadline", False)
    assert 0 < d.size < len(BODY)
    assert partial.read_bytes() == BODY[: d.size]
    assert records[-1].error == "ended early: deadline"


KILLED_CHILD = """
import sys
from pathlib import Path
from podarchive.core.settings import Settings
from podarchive.net.download import download
from podarchive.net.fetch import Fetcher
with Fetcher(Settings(deadline=120, retries=0, host_gap=0)) as f:
    download(f, sys.argv[1], Path(sys.argv[2]), records=[], max_bytes=1 << 30, trusted=True)
"""


def test_sigkilled_download_resumes_with_the_rest_and_exact_bytes(
    site: LoopbackSite, fetcher: Fetcher, tmp_path: Path
) -> None:
    body = os.urandom(50 * 1024 * 1024)
    media = MediaFile(body, chunk=1 << 20)
    media.hold_at = 30 * 1024 * 1024  # the server pauses there until the child is killed
    url, partial = serve(site, media), tmp_path / "ep"
    child = subprocess.Popen(
        [sys.executable, "-c", KILLED_CHILD, url, str(partial)],
        env={**os.environ, "PYTHONPATH": str(SRC)},
    )
    try:
        assert media.held.wait(60), "the child never got 30 MB"
        deadline = time.monotonic() + 30
        while not (partial.exists() and partial.stat().st_size > 25 * 1024 * 1024):
            assert time.monotonic() < deadline, "the partial file never passed 25 MB"
            time.sleep(0.01)
        child.kill()
        assert child.wait(10) == -9
    finally:
        child.kill()
        media.release.set()
    kept = partial.stat().st_size
    d = download(fetcher, url, partial, records=[], max_bytes=1 << 30)  # validator kept on disk
    assert (d.status, d.complete, d.received) == (206, True, len(body) - kept)
    second = media.sent[-1]
    assert second.range == f"bytes={kept}-"
    assert second.if_range == '"m1"'
    assert second.bytes <= 0.55 * len(body)
    assert hashlib.sha256(partial.read_bytes()).digest() == hashlib.sha256(body).digest()


def test_partial_longer_than_the_file_416_asks_again_from_zero(
    site: LoopbackSite, fetcher: Fetcher, tmp_path: Path
) -> None:
    media = MediaFile(BODY)
    partial = tmp_path / "ep"
    partial.write_bytes(BODY + b"junk")
    records: list[FetchRecord] = []
    d = download(
        fetcher,
        serve(site, media),
        partial,
        records=records,
        max_bytes=10**7,
        resume_validator='"m1"',
    )
    assert (d.status, d.complete, d.restarted, d.received) == (200, True, True, len(BODY))
    assert [(s.range, s.status) for s in media.sent] == [
        (f"bytes={len(BODY) + 4}-", 416),
        (None, 200),
    ]
    assert [r.error for r in records] == ["resume refused: asking again from byte 0", None]
    assert partial.read_bytes() == BODY
