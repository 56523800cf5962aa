"""Provenance kept at capture (#27): every stored body's exchanges, as the server saw them.

A loopback podcast (tests/captures_site.py) is run three times: the first run stores the
feed, the pages (gzip-encoded; one behind a 302), the transcripts, the chapters files and
the media; the second gets a changed feed; the third a 304. Each capture is checked
against the server's request log (the request headers as sent) and, for a route that
writes its response by hand, against the exact bytes the server wrote.
"""

from __future__ import annotations

import hashlib
from collections import defaultdict
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from pathlib import Path

import pytest
from captures_site import RUNS, run_at, serve_podcast
from hypothesis import given
from hypothesis import strategies as st
from loopback import LoopbackSite

from podarchive.core.errors import StorageError
from podarchive.core.types import Capture, Exchange
from podarchive.store import Archive, MediaFolder
from podarchive.store.captures import (
    VOLATILE,
    _canonical,
    canonical_headers,
    join_volatile,
    split_volatile,
)

#: what the hand-written chapters route sends, header for header (order, case, duplicates)
RAW_HEADERS = (
    ("Content-TYPE", "application/json+chapters"),
    ("X-Dup", "one"),
    ("x-dup", "two"),
    ("ETag", '"raw-2"'),
    ("Content-Length", "0"),  # replaced with the body's length
)
RAW_BODY = b'{"version": "1.2.0", "chapters": [{"startTime": 0, "title": "By hand"}]}'


def raw_chapters(handler: BaseHTTPRequestHandler) -> None:
    """A response written byte for byte: an unusual reason phrase, duplicate headers."""
    headers = [(n, str(len(RAW_BODY)) if n == "Content-Length" else v) for n, v in RAW_HEADERS]
    head = "HTTP/1.1 200 Fine Thanks\r\n" + "".join(f"{n}: {v}\r\n" for n, v in headers)
    handler.wfile.write(head.encode("latin-1") + b"\r\n" + RAW_BODY)


def hang_up(handler: BaseHTTPRequestHandler) -> None:
    """No response: the connection closes unanswered."""
    handler.close_connection = True


@pytest.fixture(scope="module")
def history(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[LoopbackSite, Path]]:
    """The three runs, once for the module's tests (they only read)."""
    db = tmp_path_factory.mktemp("captures") / "archive.db"
    with LoopbackSite() as site:
        url = serve_podcast(site, 1)
        site.handle("/c/ep2.json", raw_chapters)
        run_at(db, url, RUNS[0])
        serve_podcast(site, 2)
        site.handle("/c/ep2.json", raw_chapters)
        run_at(db, url, RUNS[1])
        run_at(db, url, RUNS[2])
        yield site, db


def all_captures(db: Path) -> list[Capture]:
    with Archive(db) as archive:
        return list(archive.captures())


def path_of(url: str) -> str:
    return "/" + url.split("/", 3)[3]


def test_each_capture_has_the_request_headers_the_server_saw(
    history: tuple[LoopbackSite, Path],
) -> None:
    site, db = history
    captures = all_captures(db)
    seen = defaultdict(list)
    for request in site.requests:
        seen[request.path].append(request)
    sent = defaultdict(list)
    for capture in sorted(captures, key=lambda c: c.id):
        sent[path_of(capture.exchange.url)].append(capture)
    assert set(sent) == set(seen)  # every request answered is a capture, and no more
    for path, requests in seen.items():
        assert len(sent[path]) == len(requests), path
        for capture, request in zip(sent[path], requests, strict=True):
            exchange = capture.exchange
            assert exchange.method == request.method == "GET"
            assert {n.lower(): v for n, v in exchange.request_headers} == request.headers
            assert len(exchange.request_headers) == len(request.headers)
            assert exchange.remote_ip == "127.0.0.1"
            assert exchange.http_version == "HTTP/1.1"
            assert capture.software == "podarchive/0.1.0"


def test_the_response_headers_are_those_written_on_the_wire(
    history: tuple[LoopbackSite, Path],
) -> None:
    _, db = history
    (first, *_) = [c for c in all_captures(db) if c.exchange.url.endswith("/c/ep2.json")]
    exchange = first.exchange
    assert (exchange.status, exchange.reason) == (200, "Fine Thanks")
    expected = tuple(
        (n, str(len(RAW_BODY)) if n == "Content-Length" else v) for n, v in RAW_HEADERS
    )
    assert exchange.response_headers == expected
    assert first.content_type == "application/json+chapters"
    with Archive(db) as archive:
        assert first.body_ref is not None
        assert archive.capture_body(first.body_ref) == RAW_BODY


def test_the_history_as_captures_with_bodies_where_they_are_stored(
    history: tuple[LoopbackSite, Path],
) -> None:
    _, db = history
    captures = all_captures(db)
    by_kind = defaultdict(list)
    for capture in captures:
        by_kind[capture.kind].append((path_of(capture.exchange.url), capture.exchange.status))
    assert by_kind["feed"] == [("/feed.xml", 200), ("/feed.xml", 200), ("/feed.xml", 304)]
    # episode 1's link answers a 302 first: the hop, then the page (304 once re-checked)
    assert sorted(by_kind["page"]) == [
        ("/ep/1", 302), ("/ep/1", 302), ("/episodes/1", 200), ("/episodes/1", 304),
        ("/episodes/2", 200),
    ]  # fmt: skip
    assert sorted(by_kind["media"]) == [
        ("/m/ep1.mp3", 200), ("/m/ep1.mp3", 304), ("/m/ep2.mp3", 200), ("/m/ep2.mp3", 304)
    ]  # fmt: skip
    assert len(by_kind["transcript"]) == len(by_kind["chapters"]) == 2
    assert [c.started_at for c in (x.exchange for x in captures)] == sorted(
        c.exchange.started_at for c in captures
    )
    for capture in captures:
        ok = capture.exchange.status == 200
        assert (capture.body_sha256 is not None) == ok == (capture.body_ref is not None)
        assert (capture.body_size is not None) == ok
    hop = next(c for c in captures if c.exchange.status == 302)
    assert dict((n.lower(), v) for n, v in hop.exchange.response_headers)["location"] == (
        "/episodes/1"
    )


def test_every_body_digest_is_the_sha256_of_the_stored_bytes(
    history: tuple[LoopbackSite, Path],
) -> None:
    _, db = history
    folder = MediaFolder(db.parent / "media")
    with Archive(db) as archive:
        for capture in archive.captures():
            if capture.body_ref is None:
                continue
            where, key = capture.body_ref
            if where == "media":
                assert capture.media_ext == ".mp3"
                data = folder.path_of(str(key), capture.media_ext).read_bytes()
                with pytest.raises(StorageError, match="not kept in the archive file"):
                    archive.capture_body(capture.body_ref)
            else:
                data = archive.capture_body(capture.body_ref)
            assert hashlib.sha256(data).hexdigest() == capture.body_sha256
            assert len(data) == capture.body_size
        assert list(archive.uncaptured_bodies()) == []  # every body has its capture


def test_a_gzip_encoded_page_is_stored_decoded_and_its_encoding_kept(
    history: tuple[LoopbackSite, Path],
) -> None:
    _, db = history
    pages = [c for c in all_captures(db) if c.kind == "page" and c.exchange.status == 200]
    assert len(pages) == 2
    with Archive(db) as archive:
        for page in pages:
            assert page.exchange.content_encoding == "gzip"
            assert ("Content-Encoding", "gzip") in page.exchange.response_headers
            assert page.body_ref is not None
            body = archive.capture_body(page.body_ref)
            assert body.startswith(b"<!DOCTYPE html>")
            # the Content-Length on the wire was the compressed size, not the stored one
            length = dict(page.exchange.response_headers)["Content-Length"]
            assert int(length) != len(body)
    others = [c for c in all_captures(db) if c.kind != "page"]
    assert all(c.exchange.content_encoding is None for c in others)


def test_header_sets_are_kept_once_each(history: tuple[LoopbackSite, Path]) -> None:
    _, db = history
    captures = all_captures(db)
    # a response's volatile values (Date, Age…) are the capture's own, not its header set's:
    # two responses a second apart share one set
    lists = {c.exchange.request_headers for c in captures}
    lists |= {split_volatile(c.exchange.response_headers)[0] for c in captures}
    with Archive(db) as archive:
        (sets,) = archive.db.execute("SELECT count(*) FROM header_sets").fetchone()
        (used,) = archive.db.execute(
            "SELECT count(*) FROM (SELECT request_headers_id FROM captures "
            "UNION SELECT response_headers_id FROM captures)"
        ).fetchone()
    assert sets == used == len(lists) < 2 * len(captures)


def test_filters_by_feed_time_and_kind(history: tuple[LoopbackSite, Path]) -> None:
    _, db = history
    with Archive(db) as archive:
        everything = list(archive.captures())
        assert list(archive.captures(feed_ids=[1])) == everything
        assert list(archive.captures(feed_ids=[2])) == []
        since = everything[-1].exchange.started_at  # the wall clock's, as in the fetch log
        later = list(archive.captures(since=since))
        assert later
        assert later == everything[len(everything) - len(later) :]
        assert all(c.exchange.started_at >= since for c in later)
        media = list(archive.captures(kinds=["media"]))
        assert {c.kind for c in media} == {"media"}
        assert len(media) == 4


def test_a_failed_request_is_no_capture(tmp_path: Path) -> None:
    """A request that got no response stays in the fetch log only."""
    db = tmp_path / "archive.db"
    with LoopbackSite() as site:
        url = serve_podcast(site, 1)
        site.handle("/t/ep1.vtt", hang_up)
        report = run_at(db, url, RUNS[0])
    assert report.feeds[0].files_failed == 1
    with Archive(db) as archive:
        urls = [c.exchange.url for c in archive.captures()]
        (logged,) = archive.db.execute(
            "SELECT count(*) FROM fetches WHERE url LIKE '%/t/ep1.vtt' AND error IS NOT NULL"
        ).fetchone()
    assert logged >= 1
    assert not [u for u in urls if u.endswith("/t/ep1.vtt")]
    assert [u for u in urls if u.endswith("/t/ep2.vtt")]


# the values that change on every response stay with the capture ------------------------

header_lists = st.lists(
    st.tuples(
        st.sampled_from(["Date", "date", "ETag", "X-Request-Id", "Server", "Set-Cookie", "Age"]),
        st.text(max_size=12),
    ),
    max_size=8,
)


@given(headers=header_lists)
def test_volatile_values_split_off_and_back_exactly(headers: list[tuple[str, str]]) -> None:
    template, values = split_volatile(headers)
    assert join_volatile(template, values) == tuple(headers)
    assert all(v is None for n, v in template if n.lower() in VOLATILE)


@given(first=header_lists, second=header_lists)
def test_a_remembered_header_encoding_is_the_encoding_of_those_headers(
    first: list[tuple[str, str]], second: list[tuple[str, str]]
) -> None:
    """(#30) A header tuple's encoding is remembered between polls: whatever came before,
    each list gets its own JSON and digest, as computed afresh, tuple or list alike."""
    for headers in (first, second, first):
        text, digest = canonical_headers(tuple(headers))
        assert (text, digest) == _canonical(headers) == canonical_headers(headers)
        assert digest == hashlib.sha256(text.encode("utf-8", "surrogatepass")).digest()
    assert (canonical_headers(tuple(first)) == canonical_headers(tuple(second))) == (
        first == second
    )


def test_polls_that_differ_only_in_date_and_request_id_share_one_header_set(
    tmp_path: Path,
) -> None:
    """An hourly 304 answers the same headers but for its Date and the CDN's request id: the
    capture keeps those two values, the header set is stored once, and each capture reads
    back exactly what it received."""

    def answer(hour: int) -> Exchange:
        return Exchange(
            "GET", "https://ex.example/feed", (("Accept", "*/*"),), "HTTP/1.1", 304,
            "Not Modified",
            (("Date", f"Sun, 06 Dec 2026 {hour:02d}:00:00 GMT"), ("ETag", '"f1"'),
             ("X-Request-Id", f"req-{hour}"), ("Cache-Control", "max-age=60")),
            "127.0.0.1", f"2026-12-06T{hour:02d}:00:00Z",
        )  # fmt: skip

    with Archive(tmp_path / "a.db") as archive:
        feed_id = archive.ensure_feed("https://ex.example/feed", None, "2026-12-06T00:00:00Z").id
        for hour in range(24):
            archive.record_captures([answer(hour)], kind="feed", feed_id=feed_id)
        (sets,) = archive.db.execute("SELECT count(*) FROM header_sets").fetchone()
        read = [c.exchange for c in archive.captures()]
    assert sets == 2  # the request's and the response's, for 24 polls
    assert read == [answer(hour) for hour in range(24)]
