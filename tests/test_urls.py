"""Tests for podarchive.core.urls."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from podarchive.core.urls import (
    CACHE_BUSTER_PARAMS,
    TRACKING_PARAMS,
    domain_of,
    http_link,
    http_link_parts,
    is_http_url,
    join_url,
    normalize_url,
    strip_cache_busters,
    strip_tracking_prefixes,
)

URL_ALPHABET = st.characters(codec="utf-8")  # no lone surrogates
url_like = st.one_of(
    st.text(URL_ALPHABET, max_size=60),
    st.builds(
        lambda scheme, host, rest: f"{scheme}://{host}{rest}",
        st.sampled_from(["http", "HTTPS", "https", "ftp", "mailto", ""]),
        st.text(st.sampled_from("aAbZ.-:@[]0123456789%"), max_size=20),
        st.text(st.sampled_from("/?&=#abc_%+ :.\t\n[]@"), max_size=30),
    ),
)


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("HTTP://WWW.Example.COM", "http://www.example.com/"),
        ("https://example.com:443/a", "https://example.com/a"),
        ("http://example.com:80/a", "http://example.com/a"),
        ("http://example.com:8080/a", "http://example.com:8080/a"),
        ("https://example.com/a#section", "https://example.com/a"),
        ("https://example.com/Path/Case", "https://example.com/Path/Case"),
        ("  https://example.com/a  ", "https://example.com/a"),
        ("https://example.com/?b=2&utm_source=x&a=1", "https://example.com/?b=2&a=1"),
        ("https://example.com/?UTM_Medium=x&fbclid=1&gclid=2", "https://example.com/"),
        ("https://example.com/?mc_cid=1&mc_eid=2&keep=3", "https://example.com/?keep=3"),
        ("https://example.com/?a=1&&b=2", "https://example.com/?a=1&b=2"),
        ("https://open.spotify.com/episode/x?si=abc", "https://open.spotify.com/episode/x"),
        ("https://www.youtube.com/watch?v=abc&si=x", "https://www.youtube.com/watch?v=abc"),
        ("https://youtu.be/abc?si=x&t=30", "https://youtu.be/abc?t=30"),
        ("https://example.com/?si=kept", "https://example.com/?si=kept"),
        ("https://User:Pw@Example.com/", "https://User:Pw@example.com/"),
        ("http://[::1]:80/x", "http://[::1]/x"),
        ("not a url", "not a url"),
        ("mailto:Someone@Example.com", "mailto:Someone@Example.com"),
        ("http://[broken", "http://[broken"),
    ],
)
def test_normalize_url(url: str, expected: str) -> None:
    assert normalize_url(url) == expected


def test_tracking_params_are_lower_case() -> None:
    assert all(name == name.lower() for name in TRACKING_PARAMS | CACHE_BUSTER_PARAMS)


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("https://www.Example.com:8443/x", "example.com"),
        ("http://sub.example.com", "sub.example.com"),
        ("https://user@www.example.org/", "example.org"),
        ("example.com/no-scheme", ""),
        ("", ""),
        ("http://[broken", ""),
    ],
)
def test_domain_of(url: str, expected: str) -> None:
    assert domain_of(url) == expected


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("https://example.com/", True),
        ("HTTP://example.com", True),
        ("ftp://example.com/", False),
        ("mailto:a@example.com", False),
        ("javascript:alert(1)", False),
        ("/relative/path", False),
        ("https://", False),
        ("http://[broken", False),
    ],
)
def test_is_http_url(url: str, expected: bool) -> None:
    assert is_http_url(url) is expected


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        (
            "https://dts.podtrac.com/redirect.mp3/example.com/ep1.mp3",
            "https://example.com/ep1.mp3",
        ),
        (
            "http://www.podtrac.com/pts/redirect.mp3/media.example.com/a.mp3?x=1",
            "http://media.example.com/a.mp3?x=1",
        ),
        (
            "https://dts.podtrac.com/redirect.m4a/chtbl.com/track/AB12C/traffic.libsyn.com/s/a.m4a",
            "https://traffic.libsyn.com/s/a.m4a",
        ),
        ("https://pdst.fm/e/cdn.example.com/a.mp3", "https://cdn.example.com/a.mp3"),
        ("https://op3.dev/e/https://cdn.example.com/a.mp3", "https://cdn.example.com/a.mp3"),
        ("https://op3.dev/e,pg=1234-abcd/cdn.example.com/a.mp3", "https://cdn.example.com/a.mp3"),
        (
            "https://verifi.podscribe.com/rss/p/cdn.example.com/a.mp3",
            "https://cdn.example.com/a.mp3",
        ),
        ("https://pfx.vpixl.com/abc123/cdn.example.com/a.mp3", "https://cdn.example.com/a.mp3"),
        ("https://arttrk.com/p/ABCDE/cdn.example.com/a.mp3", "https://cdn.example.com/a.mp3"),
        ("https://mgln.ai/e/123/cdn.example.com/a.mp3", "https://cdn.example.com/a.mp3"),
        ("https://claritaspod.com/measure/cdn.example.com/a.mp3", "https://cdn.example.com/a.mp3"),
        (
            "https://dts.podtrac.com/redirect.mp3/tracking.swap.fm/track/0bDc/"
            "stitcher.simplecastaudio.com/3bb6/audio/128/default.mp3?aid=rss_feed#t=0",
            "https://stitcher.simplecastaudio.com/3bb6/audio/128/default.mp3?aid=rss_feed#t=0",
        ),
        ("https://cdn.example.com/a.mp3", "https://cdn.example.com/a.mp3"),
        ("https://dts.podtrac.com/redirect.mp3/", "https://dts.podtrac.com/redirect.mp3/"),
        ("https://chtbl.com/track/X/not a host", "https://chtbl.com/track/X/not a host"),
        ("garbage", "garbage"),
    ],
)
def test_strip_tracking_prefixes(url: str, expected: str) -> None:
    assert strip_tracking_prefixes(url) == expected


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        (
            "https://cdn.simplecastaudio.com/x/default.mp3?aid=rss_feed&awEpisodeId=7&feed=Bq",
            "https://cdn.simplecastaudio.com/x/default.mp3?awEpisodeId=7",
        ),
        ("https://cdn.example.com/a.mp3?_=1700000000&cb=42", "https://cdn.example.com/a.mp3"),
        ("https://cdn.example.com/a.mp3?t=30", "https://cdn.example.com/a.mp3?t=30"),
        ("https://cdn.example.com/a.mp3?updated=1&x=1#f", "https://cdn.example.com/a.mp3?x=1#f"),
        ("https://cdn.example.com/a.mp3", "https://cdn.example.com/a.mp3"),
    ],
)
def test_strip_cache_busters(url: str, expected: str) -> None:
    assert strip_cache_busters(url) == expected


@given(url_like)
def test_normalize_url_is_idempotent(url: str) -> None:
    once = normalize_url(url)
    assert normalize_url(once) == once


@given(url_like)
def test_helpers_never_raise(url: str) -> None:
    assert isinstance(domain_of(url), str)
    assert isinstance(is_http_url(url), bool)
    assert isinstance(strip_tracking_prefixes(url), str)
    assert isinstance(strip_cache_busters(url), str)


@given(url_like)
def test_normalized_url_has_no_fragment_or_tracking(url: str) -> None:
    normalized = normalize_url(url)
    if is_http_url(normalized):
        assert "#" not in normalized
        assert "utm_" not in normalized.partition("?")[2].lower().split("=")[0]


@given(url_like)
def test_strip_tracking_prefixes_is_idempotent(url: str) -> None:
    once = strip_tracking_prefixes(url)
    assert strip_tracking_prefixes(once) == once


@given(url_like)
def test_domain_of_matches_normalized_url(url: str) -> None:
    if is_http_url(url):
        assert domain_of(normalize_url(url)) == domain_of(url)


def _http_link_by_parts(base: str | None, href: str) -> tuple[str, str, str] | None:
    """What a feed note's link was before #15: join_url, then http_link_parts of the result."""
    href = href.strip()
    if not href or href.startswith("#"):
        return None
    try:
        absolute = join_url(base, href) if base else href
    except ValueError:
        return None
    parts = http_link_parts(absolute)
    return None if parts is None else (absolute, *parts)


@settings(max_examples=500)
@given(
    st.one_of(st.none(), url_like, st.sampled_from(["https://e.com/a/b", "http://e.com/"])),
    st.one_of(url_like, st.sampled_from(["/x", "x/y", "//h.org/p", "?q=1", " HTTP://A.b/c "])),
)
def test_http_link_equals_join_then_parts(base: str | None, href: str) -> None:
    expected = _http_link_by_parts(base, href)
    assert http_link(base, href) == expected
    assert http_link(base, href) == expected  # remembered: the same answer
