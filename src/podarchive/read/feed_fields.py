"""Channel and Episode fields from feedparser's dicts and the podcast_ns scan.

:mod:`podarchive.read.parse` runs feedparser (this module never imports it) and hands its
dicts here, with :func:`parse_duration`. The choices between feedparser's reading and the raw
texts of :mod:`~.podcast_ns` (guid, link, notes, summary, explicit, categories, enclosure,
dates) are described in :mod:`podarchive.read.parse`.
"""

from __future__ import annotations

import re
import time
from collections.abc import Mapping
from typing import Any
from urllib.parse import urljoin

from podarchive.core.types import Channel, Enclosure, Episode
from podarchive.read.podcast_ns import ChannelScan, ItemScan

# feedparser's dicts; read with dict.get so its key aliases and deprecated fallbacks
# (e.g. ``updated_parsed`` -> ``published_parsed``, which warns) never trigger.
FPDict = Mapping[str, Any]


def fp_get(d: object, key: str) -> Any:
    """``d[key]`` straight from the dict, bypassing FeedParserDict's aliases; None if absent."""
    return dict.get(d, key) if isinstance(d, dict) else None


_DURATION = re.compile(r"([0-9]{1,10})(?::([0-9]{1,10}))?(?::([0-9]{1,10}))?(?:[.,][0-9]*)?", re.A)
_SMALL_INT = re.compile(r"[0-9]{1,9}", re.A)
_LENGTH = re.compile(r"[0-9]{1,18}", re.A)
_TRUE = frozenset({"yes", "true", "explicit"})
_FALSE = frozenset({"no", "false", "clean"})


def parse_duration(text: str | None) -> int | None:
    """Seconds from ``SS``, ``MM:SS`` or ``HH:MM:SS`` (fraction dropped); None if unreadable."""
    if text is None:
        return None
    match = _DURATION.fullmatch(text.strip())
    if match is None:
        return None
    seconds = 0
    for part in match.groups():
        if part is not None:
            seconds = seconds * 60 + int(part)
    return seconds


def read_channel(feed: FPDict, scan: ChannelScan | None, base_url: str | None = None) -> Channel:
    raw = scan or ChannelScan()
    owner = _mapping(feed, "publisher_detail")
    image = _mapping(feed, "image")
    return Channel(
        title=fp_str(feed, "title"),
        link=fp_str(feed, "link"),
        description=raw.description
        or raw.itunes_summary
        or raw.itunes_subtitle
        or fp_str(feed, "subtitle")
        or fp_str(feed, "summary"),
        author=raw.itunes_author or fp_str(feed, "author"),
        owner_name=fp_str(owner, "name"),
        owner_email=fp_str(owner, "email"),
        image=raw.itunes_image or fp_str(image, "href"),
        language=fp_str(feed, "language"),
        categories=raw.categories or _tag_terms(feed),
        explicit=_explicit(raw.explicit, feed) if scan else _fp_explicit(feed),
        type=_lower(fp_str(feed, "itunes_type")),
        podcast_guid=raw.guid,
        locked=_yes_no(raw.locked),
        funding=raw.funding,
        new_feed_url=raw.new_feed_url or fp_str(feed, "itunes_new-feed-url"),
        updated=_date(feed, "updated") or _date(feed, "published"),
        ttl=_positive_int(fp_str(feed, "ttl")),
        update_period=_lower(fp_str(feed, "sy_updateperiod")),
        update_frequency=_positive_int(fp_str(feed, "sy_updatefrequency")),
        complete=raw.complete,
        links=tuple(
            (rel, urljoin(base_url, href) if base_url else href) for rel, href in raw.links
        ),
        tags=raw.tags,
    )


def _positive_int(text: str | None) -> int | None:
    if text is None or not text.strip().isdigit():
        return None
    value = int(text.strip())
    return value if 0 < value < 10**9 else None


def _tag_terms(feed: FPDict) -> tuple[str, ...]:
    terms = (fp_str(tag, "term") for tag in _dicts(feed, "tags"))
    return tuple(dict.fromkeys(t for t in terms if t))


def read_episode(entry: FPDict, scan: ItemScan | None) -> Episode:
    raw = scan or ItemScan()
    notes = raw.content_encoded or raw.description or _fp_notes(entry)
    return Episode(
        guid=raw.guid or fp_str(entry, "id"),
        title=fp_str(entry, "title"),
        link=_episode_link(entry, raw.guid),
        published=_date(entry, "published"),
        updated=_date(entry, "updated"),
        summary=_summary(entry, raw, notes),
        notes_html=notes,
        duration=parse_duration(fp_str(entry, "itunes_duration")),
        season=_small_int(fp_str(entry, "itunes_season")) or _small_int(raw.season),
        number=_small_int(fp_str(entry, "itunes_episode")) or _small_int(raw.episode),
        episode_type=_lower(fp_str(entry, "itunes_episodetype")),
        explicit=_explicit(raw.explicit, entry) if scan else _fp_explicit(entry),
        image=fp_str(_mapping(entry, "image"), "href"),
        enclosure=_enclosure(entry),
        transcripts=raw.transcripts,
        chapters=raw.chapters,
        persons=raw.persons,
        tags=raw.tags,
    )


def _episode_link(entry: FPDict, raw_guid: str | None = None) -> str | None:
    """The alternate link; a guid feedparser copied into ``link`` only if it is a URL.

    feedparser resolves that copy against the feed URL, so ``<guid>ep-1</guid>`` would
    become ``https://host/ep-1``: it is the guid as written (``raw_guid``) that must be an
    absolute http(s) URL.
    """
    alternates = (
        c for c in _dicts(entry, "links") if (fp_get(c, "rel") or "alternate") == "alternate"
    )
    for candidate in alternates:
        if href := fp_str(candidate, "href"):
            return href
    link = fp_str(entry, "link")
    if link is None or link != fp_str(entry, "id"):
        return link
    written = (raw_guid or link).lower()
    return link if written.startswith(("http://", "https://")) else None


def _fp_notes(entry: FPDict) -> str | None:
    """feedparser's idea of the notes: its longest HTML content, else its summary."""
    html = [
        value
        for c in _dicts(entry, "content")
        if str(fp_get(c, "type") or "").endswith("html") and (value := fp_str(c, "value"))
    ]
    return max(html, key=len) if html else fp_str(entry, "summary")


def _summary(entry: FPDict, raw: ItemScan, notes: str | None) -> str | None:
    fp_summary = fp_str(entry, "summary")
    return (
        raw.itunes_summary
        or raw.itunes_subtitle
        or fp_str(entry, "subtitle")
        or (fp_summary if fp_summary != notes else None)
    )


def _enclosure(entry: FPDict) -> Enclosure | None:
    """The first audio/video enclosure, else the first that is not an image or text."""
    candidates = [
        link for link in _dicts(entry, "links") if fp_get(link, "rel") == "enclosure"
    ] + _dicts(entry, "media_content")
    typed = [(c, (fp_str(c, "type") or "").lower()) for c in candidates if fp_str(c, "href", "url")]
    for wanted in (_is_media, _is_not_document):
        for candidate, mime in typed:
            if wanted(mime):
                return Enclosure(
                    url=fp_str(candidate, "href", "url") or "",
                    type=mime or None,
                    length=_length(fp_str(candidate, "length", "filesize")),
                )
    return None


def _is_media(mime: str) -> bool:
    return mime.startswith(("audio/", "video/"))


def _is_not_document(mime: str) -> bool:
    return not mime.startswith(("image/", "text/"))


def _length(text: str | None) -> int | None:
    """A byte count, or None for anything but a positive integer."""
    value = int(text) if text and _LENGTH.fullmatch(text) else 0
    return value or None


def fp_str(d: FPDict, *keys: str) -> str | None:
    """The first of ``keys`` holding a non-blank string, stripped."""
    for key in keys:
        value = fp_get(d, key)
        if isinstance(value, str) and value.strip():
            return value.strip()
    return None


def _mapping(d: FPDict, key: str) -> FPDict:
    value = fp_get(d, key)
    return value if isinstance(value, dict) else {}


def _dicts(d: FPDict, key: str) -> list[FPDict]:
    value = fp_get(d, key)
    return [v for v in value if isinstance(v, dict)] if isinstance(value, list) else []


def _date(d: FPDict, key: str) -> str | None:
    """feedparser's reading of date ``key`` as ``YYYY-MM-DDTHH:MM:SSZ`` (UTC), None when
    it has none or it is unreadable (:func:`unreadable_date`)."""
    st = fp_get(d, key + "_parsed")
    if not isinstance(st, time.struct_time) or unreadable_date(d, key) is not None:
        return None
    return (
        f"{st.tm_year:04d}-{st.tm_mon:02d}-{st.tm_mday:02d}"
        f"T{st.tm_hour:02d}:{st.tm_min:02d}:{st.tm_sec:02d}Z"
    )


def unreadable_date(d: FPDict, key: str) -> str | None:
    """The text of a date feedparser read whose year is not written plainly; else None.

    feedparser's struct_time hides how it got its year: ``-0001-01-01`` comes out as 2000,
    a 20-digit year as 2012. A year counts when it is in 1..9999 and the text shows it as
    a 1-4 digit number (a 2-digit one read either as 19xx or 20xx), unsigned, not part of
    a time, or as the start of a compact ``YYYYMMDD…`` date. Time zones may move the
    date across a new year: the year after on 31 December, the year before on 1 January.
    """
    st = fp_get(d, key + "_parsed")
    if not isinstance(st, time.struct_time):
        return None
    text = fp_get(d, key)
    if not isinstance(text, str) or not text.strip():
        return None  # feedparser's loose parser can lose the text: nothing to judge by
    year = st.tm_year
    if 1 <= year <= 9999 and _shows(text, f"{year:04d}"):  # the usual case, quickly
        return None
    allowed = {year}
    if (st.tm_mon, st.tm_mday) == (12, 31):
        allowed.add(year + 1)
    elif (st.tm_mon, st.tm_mday) == (1, 1):
        allowed.add(year - 1)
    if 1 <= year <= 9999 and any(
        not allowed.isdisjoint(_years(run)) for run in _YEAR_RUN.findall(text)
    ):
        return None
    return text


# A run of digits not inside a larger number, not part of a time (``13:00``), not signed.
_YEAR_RUN = re.compile(r"(?<![0-9:])(?<!(?<![0-9A-Za-z])[+-])([0-9]+)(?![0-9:])", re.A)


def _shows(text: str, run: str) -> bool:
    """Whether the first ``run`` in ``text`` is a whole :data:`_YEAR_RUN`."""
    at = text.find(run)
    match = _YEAR_RUN.match(text, at) if at >= 0 else None
    return match is not None and match.group(1) == run


def _years(run: str) -> tuple[int, ...]:
    """The years a run of digits can stand for."""
    if len(run) <= 4:
        value = int(run)
        return (value, 1900 + value, 2000 + value) if len(run) == 2 else (value,)
    if len(run) == 6:
        return (1900 + int(run[:2]), 2000 + int(run[:2]))
    return (int(run[:4]),) if len(run) in (8, 12, 14) else ()


def _small_int(text: str | None) -> int | None:
    if text is None:
        return None
    text = text.strip()
    return int(text) if _SMALL_INT.fullmatch(text) else None


def _lower(text: str | None) -> str | None:
    return text.lower() if text else None


def _explicit(raw: str | None, d: FPDict) -> bool | None:
    """``itunes:explicit`` from its raw text: yes/true/explicit, no/false/clean, else None."""
    if raw is None:
        return _fp_explicit(d)
    value = raw.strip().lower()
    return True if value in _TRUE else False if value in _FALSE else None


def _fp_explicit(d: FPDict) -> bool | None:
    """feedparser's own reading (right for yes/clean; "true"/"false" come out as None)."""
    value = fp_get(d, "itunes_explicit")
    return value if isinstance(value, bool) else None


def _yes_no(raw: str | None) -> bool | None:
    value = (raw or "").strip().lower()
    return True if value in ("yes", "true") else False if value in ("no", "false") else None
