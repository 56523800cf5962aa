"""A run's client keeps the cookies servers set, and reads only responses that set one (#30)."""

from __future__ import annotations

import http.cookiejar
from http.server import BaseHTTPRequestHandler

import pytest
from loopback import LoopbackSite

from podarchive.core.settings import Settings
from podarchive.net.fetch import Fetcher

FAST = Settings(connect_timeout=2, read_timeout=1, deadline=3, retries=0, host_gap=0)


def test_a_cookie_set_is_sent_back_and_plain_answers_are_not_read_for_cookies(
    site: LoopbackSite, monkeypatch: pytest.MonkeyPatch
) -> None:
    read: list[str] = []
    extract = http.cookiejar.CookieJar.extract_cookies

    def counting(jar: http.cookiejar.CookieJar, response: object, request: object) -> None:
        read.append(request.get_full_url())  # type: ignore[attr-defined]
        extract(jar, response, request)  # type: ignore[arg-type]

    monkeypatch.setattr(http.cookiejar.CookieJar, "extract_cookies", counting)

    def sets_cookie(h: BaseHTTPRequestHandler) -> None:
        h.send_response(200)
        h.send_header("Set-Cookie", "session=abc; Path=/")
        h.send_header("Content-Length", "6")
        h.end_headers()
        h.wfile.write(b"<rss/>")

    site.serve("/plain", b"<rss/>", etag='"v1"')
    site.handle("/login", sets_cookie)
    with Fetcher(FAST) as fetcher:
        assert fetcher.get(site.url("/plain"), etag='"v1"').not_modified
        fetcher.get(site.url("/login"))
        fetcher.get(site.url("/plain"))
    assert read == [site.url("/login")]  # only the answer that set a cookie was read for one
    assert [r.headers.get("cookie") for r in site.requests] == [None, None, "session=abc"]
