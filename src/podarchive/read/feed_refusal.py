"""Why a feed body is refused (not a feed, or unreadable) and feedparser's problems as one line.

Pure: it reads feedparser's result dict and the :mod:`~.podcast_ns` scan, never feedparser
itself (:mod:`podarchive.read.parse` runs it).
"""

from __future__ import annotations

import re

from podarchive.core.errors import NotAFeed, ParseError, one_line
from podarchive.read.feed_fields import FPDict, fp_get
from podarchive.read.podcast_ns import ChannelScan, PodcastScan

_HTML_START = re.compile(
    rb"\A(?:\s|<!--.*?-->|<\?xml[^>]*>)*<(?:!doctype\s+html|html[\s>])", re.I | re.S
)
MAX_REASON = 300  # characters of a problem's description


def refuse_unusable(body: bytes, result: FPDict, scan: PodcastScan) -> None:
    """Raise when feedparser found no feed in the body; return when it is usable."""
    if fp_get(result, "entries"):
        return
    version = fp_get(result, "version") or ""
    bozo = bozo_exception(result)
    if version and (bozo is None or fp_get(result, "feed") or scan.channel != ChannelScan()):
        return
    if version:
        raise ParseError(_problem(bozo))
    raise _not_a_feed(body, scan.root, bozo)


def _not_a_feed(body: bytes, root: str | None, bozo: BaseException | None) -> ParseError:
    """What a body feedparser found no feed in is, as the error to raise."""
    if body[:2] == b"\x1f\x8b":
        return ParseError("not a feed: got gzip-compressed bytes (Content-Encoding not undone)")
    if _HTML_START.match(body[:4096]) or (root or "").lower() == "html":
        return NotAFeed("not a feed: got an HTML page")
    if body.lstrip()[:5] == b"%PDF-":
        return ParseError("not a feed: got a PDF document")
    if body.lstrip().lstrip(b"\xef\xbb\xbf")[:1] in (b"{", b"["):
        return ParseError("not a feed: got JSON (JSON Feed is not supported)")
    if root:
        return ParseError(f"not a feed: unknown root element <{root}>")
    if bozo is not None:
        return ParseError(_problem(bozo))
    return ParseError("not a feed: no RSS or Atom content")


def bozo_exception(result: FPDict) -> BaseException | None:
    if not fp_get(result, "bozo"):
        return None
    exc = fp_get(result, "bozo_exception")
    return exc if isinstance(exc, BaseException) else ValueError("unknown problem")


def recovered_warnings(result: FPDict) -> tuple[str, ...]:
    """The problem feedparser recovered from, as a warning line (none when it had none)."""
    exc = bozo_exception(result)
    return () if exc is None else (_problem(exc, recovered=True),)


def _problem(exc: BaseException | None, recovered: bool = False) -> str:
    """``malformed XML: ...`` for XML errors, ``unreadable feed: ...`` for the rest."""
    xml_error = callable(getattr(exc, "getMessage", None))
    kind = "malformed XML" if xml_error else "unreadable feed"
    if recovered:
        kind = "malformed XML, recovered" if xml_error else "feed problem"
    return f"{kind}: {_describe(exc)}"


def _describe(exc: BaseException | None) -> str:
    """One line naming what feedparser objected to.

    XML positions are left out: feedparser prepends its own XML declaration to bodies that
    lack one, so its line numbers can be off by one.
    """
    if exc is None:
        return "unknown problem"
    get_message = getattr(exc, "getMessage", None)
    return one_line_reason(get_message() if callable(get_message) else exc)


def one_line_reason(message: object) -> str:
    """``message`` on one line, cut to :data:`MAX_REASON` characters."""
    return one_line(str(message), MAX_REASON) or "no details"
