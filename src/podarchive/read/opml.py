"""OPML subscription lists: read one to import its feeds, write one to export the schedule.

Pure: bytes in, values out. :func:`parse_opml` reads OPML 1.0 and 2.0 as podcast apps write
them: every ``<outline>`` with an ``xmlUrl`` (any case: ``xmlurl``, ``xmlURL``) and a ``type``
of ``rss`` (or ``atom``, or none) is a feed, at any depth; the outlines around it are its
categories. :func:`render_opml` writes OPML 2.0 that podcast apps accept and that
:func:`parse_opml` reads back unchanged, a feed's podarchive settings (``every``, ``pages``…)
included as ``podarchive:every="30m"`` attributes in the :data:`PODARCHIVE_NS` namespace
(apps ignore them). :class:`ImportSorter` sorts an import's feeds into new ones, feeds
already scheduled, duplicates within the file and URLs that cannot be scheduled (not
http(s), a control character or white space inside).

The parser is lxml's, hardened as :mod:`podarchive.read.podcast_ns`'s: it never resolves external
entities, loads a DTD or touches the network, keeps ``huge_tree`` off, and does not recover
from broken XML. A file that declares entities is refused; so is one nested deeper than
libxml2 allows without ``huge_tree`` (:data:`MAX_DEPTH` outlines). Every problem is one
:class:`~podarchive.core.errors.OpmlError` with a one-line reason.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from email.utils import format_datetime
from typing import Literal
from urllib.parse import urlsplit

from lxml import etree

from podarchive.core.errors import OpmlError, one_line, safe_label, safe_url
from podarchive.core.urls import feed_url_problem
from podarchive.read.podcast_ns import hardened_parser

MAX_OPML_BYTES = 20 * 1024 * 1024  # far above any subscription list
#: ``type`` values of a feed outline (compared lower-case; an outline without one counts too).
FEED_TYPES = frozenset({"rss", "atom", ""})
FEED_ROOTS = frozenset({"rss", "feed", "rdf"})  # what a feed given by mistake starts with
#: The namespace of a feed outline's podarchive settings (``podarchive:every="30m"``).
PODARCHIVE_NS = "https://github.com/podarchive/podarchive/ns/opml/1.0"
#: Outlines nested deeper than this (under <opml><body>) pass libxml2's depth limit of 256
#: elements (without ``huge_tree``, which stays off): such a file is refused.
MAX_DEPTH = 254
# Characters XML 1.0 cannot hold (C0 controls but tab/LF/CR, surrogates, U+FFFE/U+FFFF).
_NOT_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")

Verdict = Literal["new", "scheduled", "duplicate", "skipped"]


@dataclass(frozen=True, slots=True)
class OpmlFeed:
    """One feed of an OPML file: its URL, its name (``title`` or ``text``; None when it has
    none, or only its URL), the names of the outlines around it, outermost first, and its
    podarchive settings as written (``(("every", "30m"), ("pages", "false"))``)."""

    url: str
    title: str | None = None
    category: tuple[str, ...] = ()
    line: int | None = field(default=None, compare=False)  # where it is in the file
    options: tuple[tuple[str, str], ...] = ()


def parse_opml(body: bytes) -> list[OpmlFeed]:
    """The feeds of an OPML file, in document order (duplicates and every URL scheme
    included: :class:`ImportSorter` judges them). Raises OpmlError."""
    if len(body) > MAX_OPML_BYTES:
        raise OpmlError(f"over {MAX_OPML_BYTES // (1024 * 1024)} MiB; not a subscription list")
    if not body.strip():
        raise OpmlError("empty file")
    root = _parse(body)
    name = _local(root)
    if name != "opml":
        if name in FEED_ROOTS:
            raise OpmlError(f"not OPML but a feed (<{name}>); schedule it with podarchive add")
        raise OpmlError(f"not OPML: the document is <{name}>, not <opml>")
    body_el = next((el for el in _children(root) if _local(el) == "body"), None)
    if body_el is None:
        raise OpmlError("not OPML: no <body>")
    feeds = list(_walk(body_el))
    if not feeds:
        raise OpmlError("no feeds in it (no <outline> with an xmlUrl)")
    return feeds


def _parse(body: bytes) -> etree._Element:
    parser = hardened_parser(recover=False)
    try:
        root = etree.fromstring(body, parser)
    except etree.XMLSyntaxError as e:
        if "Excessive depth" in str(e.msg):
            raise OpmlError(
                f"outlines nested more than {MAX_DEPTH} deep (line {e.lineno}); "
                "podarchive reads OPML up to that depth"
            ) from e
        raise OpmlError(f"not XML: {one_line(str(e.msg or e))}") from e
    except (etree.LxmlError, ValueError, LookupError) as e:
        raise OpmlError(f"not XML: {one_line(str(e))}") from e
    dtd = root.getroottree().docinfo.internalDTD
    if dtd is not None and any(True for _ in dtd.iterentities()):
        raise OpmlError("declares XML entities (<!ENTITY>); no OPML needs them, refusing it")
    return root


def _local(el: etree._Element) -> str:
    return str(etree.QName(el).localname).lower()


def _children(el: etree._Element) -> list[etree._Element]:
    return [child for child in el if isinstance(child.tag, str)]


def _attributes(el: etree._Element) -> dict[str, str]:
    """Attributes without a namespace, by lower-case name (``xmlUrl``, ``xmlurl``…)."""
    found: dict[str, str] = {}
    for key, value in el.attrib.items():
        if not key.startswith("{"):
            found.setdefault(key.lower(), value)
    return found


def _options(el: etree._Element) -> tuple[tuple[str, str], ...]:
    """The outline's podarchive settings: its attributes in :data:`PODARCHIVE_NS`."""
    prefix = f"{{{PODARCHIVE_NS}}}"
    return tuple(
        (key.removeprefix(prefix), value)
        for key, value in el.attrib.items()
        if key.startswith(prefix)
    )


def _label(text: str | None) -> str | None:
    folded = " ".join((text or "").split())
    return folded or None


def _walk(body: etree._Element) -> Iterable[OpmlFeed]:
    """Every feed outline under ``body``, in document order (without recursion)."""
    stack: list[tuple[etree._Element, tuple[str, ...]]] = [
        (el, ()) for el in reversed(_children(body))
    ]
    while stack:
        el, category = stack.pop()
        if _local(el) != "outline":
            continue
        attrs = _attributes(el)
        name = _label(attrs.get("title")) or _label(attrs.get("text"))
        url = attrs.get("xmlurl", "").strip()
        if url and attrs.get("type", "").strip().lower() in FEED_TYPES:
            title = None if name == url else name
            yield OpmlFeed(url, title, category, el.sourceline, _options(el))
        inner = (*category, name) if name else category
        stack.extend((child, inner) for child in reversed(_children(el)))


def render_opml(feeds: Iterable[OpmlFeed], title: str, now: datetime) -> bytes:
    """OPML 2.0, UTF-8: a head with ``title`` and ``dateCreated`` (``now``, RFC 822), and one
    ``<outline type="rss" text=… title=… xmlUrl=… podarchive:…=…/>`` per feed, inside an
    outline per category (``xmlns:podarchive`` is declared when a feed has settings).

    A feed without a name gets its URL as ``text`` (OPML requires one) and no ``title``.
    Characters XML cannot hold become U+FFFD.
    """
    feeds = list(feeds)
    nsmap = {"podarchive": PODARCHIVE_NS} if any(f.options for f in feeds) else None
    root = etree.Element("opml", version="2.0", nsmap=nsmap)
    head = etree.SubElement(root, "head")
    etree.SubElement(head, "title").text = _xml(title)
    etree.SubElement(head, "dateCreated").text = format_datetime(now.astimezone(UTC), usegmt=True)
    body = etree.SubElement(root, "body")
    folders: dict[tuple[str, ...], etree._Element] = {(): body}
    for feed in feeds:
        for depth in range(1, len(feed.category) + 1):
            path = feed.category[:depth]
            if path not in folders:
                name = _xml(path[-1])
                folders[path] = etree.SubElement(
                    folders[path[:-1]], "outline", {"text": name, "title": name}
                )
        attrs = {"type": "rss", "text": _xml(feed.title or feed.url)}
        if feed.title:
            attrs["title"] = _xml(feed.title)
        attrs["xmlUrl"] = _xml(feed.url)
        for key, value in feed.options:
            attrs[f"{{{PODARCHIVE_NS}}}{key}"] = _xml(value)
        etree.SubElement(folders[feed.category], "outline", attrs)
    xml = etree.tostring(root, encoding="UTF-8", pretty_print=True)
    return b'<?xml version="1.0" encoding="UTF-8"?>\n' + bytes(xml)


def _xml(text: str) -> str:
    return _NOT_XML.sub("\ufffd", text)


# importing -----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Sorted:
    """What an import does with one feed, and the line that says so."""

    feed: OpmlFeed
    verdict: Verdict
    where: str = ""  # the schedule file (scheduled), the first line (duplicate), why (skipped)

    @property
    def line(self) -> str:
        """One line: its URL and name escaped and shortened (:func:`safe_url`)."""
        at = f"line {self.feed.line}" if self.feed.line else ""
        url = safe_url(self.feed.url)
        if self.verdict == "scheduled":
            return f"already scheduled: {url} (in {self.where})"
        if self.verdict == "duplicate":
            first = f"; first on {self.where}" if self.where else ""
            return f"duplicate: {url} ({at or 'again'}{first})"
        if self.verdict == "skipped":
            return f"skipped: {url} ({at + ': ' if at else ''}{self.where})"
        name = f" ({safe_label(self.feed.title)})" if self.feed.title else ""
        return f"scheduled: {url}{name}"


class ImportSorter:
    """Sorts an import's feeds, in file order: ``skipped`` (not a URL to schedule:
    :func:`~podarchive.core.urls.feed_url_problem`), ``duplicate`` (its URL came earlier in this
    import), ``scheduled`` (it is in a schedule file already), else ``new``. URLs are
    compared with the scheme and host lower-cased."""

    def __init__(self, scheduled: Mapping[str, str]) -> None:
        """``scheduled``: every scheduled feed URL → the file it is in."""
        self._scheduled = {url_key(url): source for url, source in scheduled.items()}
        self._seen: dict[str, int | None] = {}

    def sort(self, feed: OpmlFeed) -> Sorted:
        problem = feed_url_problem(feed.url)
        if problem is not None:
            return Sorted(feed, "skipped", problem)
        key = url_key(feed.url)
        if key in self._seen:
            line = self._seen[key]
            return Sorted(feed, "duplicate", f"line {line}" if line else "")
        self._seen[key] = feed.line
        if key in self._scheduled:
            return Sorted(feed, "scheduled", self._scheduled[key])
        return Sorted(feed, "new")


def url_key(url: str) -> str:
    """``url`` with its scheme and host lower-cased (they are case-insensitive)."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return url
    return parts._replace(scheme=parts.scheme.lower(), netloc=parts.netloc.lower()).geturl()
