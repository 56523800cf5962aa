"""URL helpers: normalisation, domains, tracking clean-up. Pure stdlib, never raises.

Every function takes any string and returns a best-effort answer: a URL that cannot be
parsed comes back stripped but otherwise unchanged.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from urllib.parse import SplitResult, unquote_plus, urljoin, urlsplit, urlunsplit

#: Query parameters that only track the click, removed everywhere (compared case-insensitively).
#: Any parameter starting with ``utm_`` is removed as well.
TRACKING_PARAMS: frozenset[str] = frozenset(
    {
        "fbclid",  # Facebook
        "gclid",  # Google Ads
        "gclsrc",  # Google Ads
        "dclid",  # Google Display (DoubleClick)
        "gbraid",  # Google Ads (iOS)
        "wbraid",  # Google Ads (iOS)
        "msclkid",  # Microsoft Ads
        "mc_cid",  # Mailchimp campaign
        "mc_eid",  # Mailchimp subscriber
        "igshid",  # Instagram share
        "igsh",  # Instagram share (newer)
        "yclid",  # Yandex
        "twclid",  # Twitter/X Ads
        "ttclid",  # TikTok Ads
        "li_fat_id",  # LinkedIn
        "_hsenc",  # HubSpot
        "_hsmi",  # HubSpot
        "__hssc",  # HubSpot
        "__hstc",  # HubSpot
        "__hsfp",  # HubSpot
        "mkt_tok",  # Marketo
        "oly_anon_id",  # Omeda
        "oly_enc_id",  # Omeda
        "vero_id",  # Vero
        "vero_conv",  # Vero
        "_gl",  # Google cross-domain linker
        "ref_src",  # Twitter/X embeds
        "ref_url",  # Twitter/X embeds
    }
)

#: Query parameters that track only on particular sites (host without "www." → names).
HOST_TRACKING_PARAMS: dict[str, frozenset[str]] = {
    "open.spotify.com": frozenset({"si"}),  # share id
    "youtube.com": frozenset({"si"}),  # share id
    "m.youtube.com": frozenset({"si"}),
    "music.youtube.com": frozenset({"si"}),
    "youtu.be": frozenset({"si"}),
    "twitter.com": frozenset({"s", "t"}),  # share source and share token
    "x.com": frozenset({"s", "t"}),
}

#: Query parameters on media (enclosure) URLs that vary per request or per delivery channel
#: without changing the file. Deliberately short: ``t`` is *not* here (often a start time).
CACHE_BUSTER_PARAMS: frozenset[str] = frozenset(
    {
        "_",  # jQuery-style cache buster (a timestamp)
        "cb",  # ad servers' "cache buster" (random number)
        "cachebuster",  # explicit cache buster
        "cache_buster",  # explicit cache buster
        "nocache",  # explicit cache buster
        "updated",  # upload/refresh timestamp some hosts append to enclosures
        "aid",  # Simplecast/AdsWizz delivery channel: rss_feed, embed, ...
        "feed",  # Simplecast: the id of the feed that delivered the URL
    }
)

#: Analytics redirect prefixes put in front of enclosure URLs (``https://<prefix><real host>/…``).
#: Each is a regular expression matched case-insensitively right after ``scheme://``.
TRACKING_PREFIXES: tuple[str, ...] = (
    r"(?:dts\.|www\.)?podtrac\.com/(?:pts/)?redirect\.[a-z0-9]+/",  # Podtrac
    r"play\.podtrac\.com/[^/]+/",  # Podtrac (per-show)
    r"chtbl\.com/track/[^/]+/",  # Chartable
    r"chrt\.fm/track/[^/]+/",  # Chartable (later domain)
    r"pdst\.fm/e/",  # Podsights
    r"prfx\.byspotify\.com/e/",  # Spotify Ad Analytics (Podsights' successor)
    r"op3\.dev/e(?:,[^/]*)?/",  # OP3, also op3.dev/e,pg=<guid>/
    r"(?:verifi\.podscribe\.com|pscrb\.fm)/rss/p/",  # Podscribe
    r"pfx\.vpixl\.com/[^/]+/",  # Veritone
    r"arttrk\.com/p/[^/]+/",  # Artsai
    r"mgln\.ai/e/[^/]+/",  # Magellan AI
    r"claritaspod\.com/measure/",  # Claritas
    r"tracking\.swap\.fm/track/[^/]+/",  # Swap.fm
    r"pdcn\.co/e/",  # Podcorn
    r"media\.blubrry\.com/[^/]+/(?:p/)?",  # Blubrry statistics
)

DEFAULT_PORTS: dict[str, str] = {"http": "80", "https": "443"}

_PREFIX_RE = re.compile(r"(https?)://(?:" + "|".join(TRACKING_PREFIXES) + r")(.*)", re.I | re.S)
_LOOKS_LIKE_HOST_RE = re.compile(
    r"(?:https?://)?[a-z0-9-]+(?:\.[a-z0-9-]+)+(?::\d+)?(?:[/?]|$)", re.I
)
_MAX_PREFIX_HOPS = 10


def normalize_url(url: str) -> str:
    """Lower-case scheme and host, drop default port and fragment, remove tracking parameters.

    The remaining query parameters keep their order and spelling; an empty path becomes "/".
    Only URLs with a scheme and a host are rewritten; anything else comes back stripped.
    """
    url = url.strip()
    try:
        parts = urlsplit(url)
    except ValueError:
        return url
    if not parts.scheme or not parts.netloc:
        return url
    return _normalized(parts, _host_of(parts.netloc))


def http_link_parts(url: str) -> tuple[str, str] | None:
    """``(normalize_url(url), domain_of(url))`` if :func:`is_http_url`, else None.

    The three answers from one split: show notes carry dozens of links each.
    """
    try:
        parts = urlsplit(url.strip())
    except ValueError:
        return None
    host = _host_of(parts.netloc)
    if parts.scheme not in DEFAULT_PORTS or not host:
        return None
    return _normalized(parts, host), _without_www(host)


def join_url(base: str, href: str) -> str:
    """``urljoin(base, href)``, taking a shortcut for an absolute http(s) ``href``.

    For such an href urljoin returns it unchanged when its scheme differs from the base's, else
    it re-assembles the href's own parts (re-splitting any ``;params``, hence the fallback).
    Raises ValueError where urljoin does, splitting the base first as it does.
    """
    if base and href:
        base_scheme = urlsplit(base).scheme
        parts = urlsplit(href)
        if _is_plain_absolute(parts):
            return urlunsplit(parts) if parts.scheme == base_scheme else href
    return urljoin(base, href)


def http_link(base: str | None, href: str) -> tuple[str, str, str] | None:
    """``(absolute, normalize_url(absolute), domain_of(absolute))`` of a link's ``href``.

    ``absolute`` is ``href`` (stripped) joined to ``base`` (:func:`join_url`; ``href`` as it is
    without a base); None for an empty or in-page (``#…``) href, a join that raises, and
    anything that is not :func:`is_http_url` then. An absolute http(s) href, the usual case,
    depends on the base only through its scheme: its answer is remembered (templated links
    recur across a feed's episodes).
    """
    href = href.strip()
    if not href or href[0] == "#":
        return None
    base_scheme: str | None = None
    if base:
        try:
            base_scheme = urlsplit(base).scheme
        except ValueError:
            return None
    known = _absolute_http_link(href, base_scheme)
    if known is not _RELATIVE or base is None:
        return known
    try:
        absolute = urljoin(base, href)  # base is set: without one every href is "absolute"
    except ValueError:
        return None
    return _http_parts(absolute, None)


_RELATIVE = ("", "", "")  # never an answer: an absolute URL is never empty


def forget_link_memo() -> None:
    """Empty the cache of absolute links' URL work (what a worker keeps between jobs, #30)."""
    _absolute_http_link.cache_clear()


@functools.lru_cache(maxsize=4096)
def _absolute_http_link(href: str, base_scheme: str | None) -> tuple[str, str, str] | None:
    """:func:`http_link` of a stripped href, or ``_RELATIVE`` when it needs the base itself."""
    try:
        parts = urlsplit(href)
    except ValueError:
        return None  # join_url (with a base) and is_http_url (without) refuse it too
    if base_scheme is None:
        return _http_parts(href, parts)
    if not _is_plain_absolute(parts):
        return _RELATIVE
    if parts.scheme != base_scheme:
        return _http_parts(href, parts)
    absolute = urlunsplit(parts)
    return _http_parts(absolute, parts if absolute == href else None)


def _http_parts(absolute: str, parts: SplitResult | None) -> tuple[str, str, str] | None:
    """``(absolute, *http_link_parts(absolute))``; ``parts``: ``urlsplit(absolute.strip())``."""
    if parts is None:
        try:
            parts = urlsplit(absolute.strip())
        except ValueError:
            return None
    host = _host_of(parts.netloc)
    if parts.scheme not in DEFAULT_PORTS or not host:
        return None
    return absolute, _normalized(parts, host), _without_www(host)


def _is_plain_absolute(parts: SplitResult) -> bool:
    """An http(s) URL with a host and no ``;params``: joining leaves it as it is."""
    return parts.scheme in DEFAULT_PORTS and bool(parts.netloc) and ";" not in parts.path


def domain_of(url: str) -> str:
    """The URL's host, lower-case, without port and without a leading "www." ("" if none)."""
    try:
        netloc = urlsplit(url.strip()).netloc
    except ValueError:
        return ""
    return _without_www(_host_of(netloc))


def is_http_url(url: str) -> bool:
    """Whether ``url`` is an absolute http(s) URL with a host."""
    try:
        parts = urlsplit(url.strip())
    except ValueError:
        return False
    return parts.scheme in DEFAULT_PORTS and bool(_host_of(parts.netloc))


_CONTROL_CHARACTER = re.compile("[\x00-\x1f\x7f-\x9f]")


def feed_url_problem(url: str) -> str | None:
    """Why ``url`` (stripped) cannot be a configured feed URL, or None: not absolute http(s),
    or a control character or white space inside it (a newline would also split every
    message that names the feed)."""
    if _CONTROL_CHARACTER.search(url):
        return "a control character in the URL"
    if not is_http_url(url):
        return "not an http(s) URL"
    if any(c.isspace() for c in url):
        return "white space in the URL (write a space as %20)"
    return None


def strip_tracking_prefixes(url: str) -> str:
    """Remove podcast analytics redirect prefixes (Podtrac, Chartable, OP3, …), even chained.

    ``https://dts.podtrac.com/redirect.mp3/chtbl.com/track/X/example.com/a.mp3`` becomes
    ``https://example.com/a.mp3``. The query string stays: it belongs to the real URL.
    """
    url = url.strip()
    for _ in range(_MAX_PREFIX_HOPS):
        match = _PREFIX_RE.fullmatch(url)
        if match is None or not _LOOKS_LIKE_HOST_RE.match(match[2]):
            break
        scheme, rest = match[1].lower(), match[2]
        url = rest if re.match(r"https?://", rest, re.I) else f"{scheme}://{rest}"
    return url


def strip_cache_busters(url: str) -> str:
    """Remove the per-request query parameters in :data:`CACHE_BUSTER_PARAMS` from a media URL."""
    url = url.strip()
    try:
        parts = urlsplit(url)
    except ValueError:
        return url
    query = _filter_query(parts.query, lambda name: name in CACHE_BUSTER_PARAMS)
    if query == parts.query:
        return url
    return urlunsplit(parts._replace(query=query))


def _normalized(parts: SplitResult, host: str) -> str:
    """:func:`normalize_url` of a URL with a scheme and a host (``host``: lower-cased)."""
    netloc = _normalize_netloc(parts.netloc, parts.scheme)
    query = _filter_query(parts.query, lambda name: _is_tracking_param(name, host))
    # stripped again: dropping a fragment or parameter can expose trailing whitespace
    return urlunsplit((parts.scheme, netloc, parts.path or "/", query, "")).strip()


def _filter_query(query: str, should_drop: Callable[[str], bool]) -> str:
    """The query without the parameters whose decoded, lower-cased name ``should_drop``."""
    if not query:
        return ""
    kept = [
        pair
        for pair in query.split("&")
        if pair.strip() and not should_drop(unquote_plus(pair.partition("=")[0]).lower())
    ]
    return "&".join(kept)


def _is_tracking_param(name: str, host: str) -> bool:
    if name.startswith("utm_") or name in TRACKING_PARAMS:
        return True
    return name in HOST_TRACKING_PARAMS.get(_without_www(host), frozenset())


def _split_netloc(netloc: str) -> tuple[str, str, str]:
    """``user:pw@Host:port`` → (``user:pw@``, ``Host``, ``port``), tolerating oddities."""
    userinfo, at, hostport = netloc.rpartition("@")
    if hostport.startswith("["):
        host, bracket, after = hostport.partition("]")
        host += bracket
        port = after[1:] if after.startswith(":") else ""
    else:
        host, colon, port = hostport.partition(":")
        if not colon:
            port = ""
    return userinfo + at, host, port


def _host_of(netloc: str) -> str:
    return _split_netloc(netloc)[1].lower()


def _normalize_netloc(netloc: str, scheme: str) -> str:
    userinfo, host, port = _split_netloc(netloc)
    if port.lstrip("0") == DEFAULT_PORTS.get(scheme):
        port = ""
    return userinfo + host.lower() + (f":{port}" if port else "")


def _without_www(host: str) -> str:
    return host[4:] if host.startswith("www.") else host
