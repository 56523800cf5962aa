"""Plain data passed between the pipeline's stages. Leaf: the stdlib and ``core.records``.

Every value is immutable. Timestamps are ISO 8601 UTC strings (``2022-06-06T13:00:00Z``).
"""

from __future__ import annotations

import pickle
import zlib
from collections.abc import Collection, Iterable, Iterator, Sequence
from dataclasses import field
from typing import Any, Literal

from podarchive.core.records import record

LinkSource = Literal["feed", "page"]
Row = dict[str, Any]  # one archive row, column → value
#: What a request in the fetch log asked for (``fetches.kind``): a feed document (the
#: subscription, an ``itunes:new-feed-url`` candidate, a backfill archive/paged document), a
#: web page (an episode's, a backfill sitemap or listing), or a transcript or chapters file.
FetchKind = Literal["feed", "page", "transcript", "chapters"]
#: A file an episode points to, fetched and parsed into rows (issue #12).
FileKind = Literal["transcript", "chapters"]
#: A transcript's or chapters file's state (``transcripts.status``, ``chapter_files.status``).
FileStatus = Literal["pending", "ok", "empty", "failed"]
#: An episode page's state in the archive (``episodes.page_status``).
PageStatus = Literal["pending", "ok", "empty", "failed"]
#: What storing one page outcome did: a page status, or ``not_modified`` (a 304).
PageResult = Literal["ok", "not_modified", "empty", "failed"]
#: A document a backfill walk stores (``backfill_pages.kind``): a ``rel="next"`` page of a
#: paged feed, an RFC 5005 ``prev-archive`` document, or a site sitemap/listing.
DocumentKind = Literal["next", "archive", "site"]


@record
class Link:
    """One ``<a href>`` in a piece of show notes, in document order."""

    position: int
    url: str  # absolute
    normalized_url: str  # lower-case host, no fragment, tracking parameters removed
    domain: str  # host without "www."
    text: str  # anchor text, whitespace collapsed

    def __reduce__(self) -> tuple[Any, ...]:
        # dataclasses' own pickling of a frozen slotted class calls fields() per object:
        # a third of what an episode's 32 links cost to leave a worker process (#15)
        return (Link, (self.position, self.url, self.normalized_url, self.domain, self.text))


@record
class Enclosure:
    """An episode's ``<enclosure>``: its media file."""

    url: str
    type: str | None = None
    length: int | None = None


@record
class Transcript:
    """``podcast:transcript``."""

    url: str
    type: str | None = None
    language: str | None = None
    rel: str | None = None


@record
class Chapters:
    """``podcast:chapters``."""

    url: str
    type: str | None = None


@record
class Person:
    """``podcast:person``."""

    name: str
    role: str | None = None
    group: str | None = None
    href: str | None = None
    img: str | None = None


@record
class Funding:
    """``podcast:funding``."""

    url: str
    text: str | None = None


@record
class Tag:
    """One element outside RSS's own vocabulary (``podcast:*``, ``psc:*``, ``media:*``…), kept
    losslessly (#13). A scope's tags are flattened in document order: ``parent`` is the index
    of the parent element in the same tuple (None at the top, a direct child of the channel
    or item); descendants of a captured element are captured too, whatever their namespace."""

    namespace: str  # the namespace URI as written ("" for an unqualified child)
    name: str  # the local name
    attributes: tuple[tuple[str, str], ...] = ()  # as written, in order; "{uri}local" if namespaced
    text: str | None = None  # the element's own text (not its children's), stripped; None if empty
    parent: int | None = None
    position: int = 0  # among its parent's captured children (or the scope's top-level tags)

    def __reduce__(self) -> tuple[Any, ...]:  # as Link's
        fields = (self.namespace, self.name, self.attributes, self.text, self.parent)
        return (Tag, (*fields, self.position))


@record
class Channel:
    """The podcast itself: what a feed says about the show."""

    title: str | None = None
    link: str | None = None  # the show's web site
    description: str | None = None
    author: str | None = None
    owner_name: str | None = None
    owner_email: str | None = None
    image: str | None = None
    language: str | None = None
    categories: tuple[str, ...] = ()
    explicit: bool | None = None
    type: str | None = None  # itunes:type: episodic | serial
    podcast_guid: str | None = None
    locked: bool | None = None
    funding: tuple[Funding, ...] = ()
    new_feed_url: str | None = None  # itunes:new-feed-url
    updated: str | None = None
    ttl: int | None = None  # RSS <ttl>, minutes
    update_period: str | None = None  # sy:updatePeriod: hourly, daily, weekly, ...
    update_frequency: int | None = None  # sy:updateFrequency: times per period
    complete: bool = False  # RFC 5005 fh:complete: absent episodes were removed
    links: tuple[tuple[str, str], ...] = ()  # atom:link (rel, absolute href): next, prev-archive…
    tags: tuple[Tag, ...] = ()  # the channel's extension elements, losslessly (#13)


@record
class Episode:
    """One ``<item>``/``<entry>`` of a feed, as parsed (before identity is assigned)."""

    guid: str | None = None
    title: str | None = None
    link: str | None = None  # the episode's web page
    published: str | None = None
    updated: str | None = None
    summary: str | None = None  # short plain-ish summary (itunes:summary / subtitle)
    notes_html: str | None = None  # content:encoded, else description; raw, unsanitised
    duration: int | None = None  # seconds
    season: int | None = None
    number: int | None = None  # itunes:episode
    episode_type: str | None = None  # full | trailer | bonus
    explicit: bool | None = None
    image: str | None = None
    enclosure: Enclosure | None = None
    transcripts: tuple[Transcript, ...] = ()
    chapters: tuple[Chapters, ...] = ()
    persons: tuple[Person, ...] = ()
    simple_chapters: tuple[Chapter, ...] = ()  # Podlove Simple Chapters (psc:chapters), parsed
    tags: tuple[Tag, ...] = ()  # the item's extension elements, losslessly (#13)


@record
class ParsedFeed:
    """Everything :func:`podarchive.read.parse.parse_feed` read from one feed body."""

    channel: Channel
    episodes: tuple[Episode, ...]
    version: str = ""  # feedparser's format name, e.g. "rss20", "atom10"
    warnings: tuple[str, ...] = ()  # e.g. the XML error feedparser recovered from
    recovered: bool = False  # feedparser had to recover from an error: items may be missing
    entries_read: int = 0  # the items/entries feedparser read in the body
    entries_nested: int = 0  # of those, inside an extension element: no episodes


@record
class PageNotes:
    """Show notes read from an episode's page by :func:`~podarchive.read.extract.extract_page`."""

    html: str  # the notes as an HTML fragment
    text: str  # the notes as plain text
    links: tuple[Link, ...]
    extractor: str  # which extractor found them: "simplecast", "generic", ...
    # How they were found (issue #24); left out of equality, so older comparisons hold.
    #: "feed-match", "json-ld", "open-graph", "app-state", "simplecast", "generic"
    method: str = field(default="", compare=False)
    evidence: str = field(default="", compare=False)  # a short account of what matched
    confidence: float = field(default=0.0, compare=False)  # 0..1: how sure the extractor is
    #: The page's own transcript, kept out of the notes; None when the page shows none.
    transcript: tuple[PageTranscriptSegment, ...] | None = field(default=None, compare=False)


@record
class PageTranscriptSegment:
    """One line of a transcript shown on an episode page."""

    start: float | None  # seconds from the start, where the page gives a time
    text: str
    speaker: str | None = None


@record
class Redirect:
    """One redirect hop of a fetch."""

    status: int
    url: str  # the URL that answered with the redirect
    location: str  # where it pointed (absolute)


@record
class FetchResult:
    """The outcome of one successful HTTP exchange (2xx or 304)."""

    url: str  # the URL asked for
    final_url: str  # after redirects
    status: int
    headers: dict[str, str] = field(default_factory=dict)  # lower-case names
    body: bytes = b""
    elapsed_ms: int = 0
    redirects: tuple[Redirect, ...] = ()
    #: every hop's request and response head, in order: the redirects', then the answer's
    #: (#27); the last one's body is ``body`` (decoded: see :attr:`Exchange.content_encoding`)
    exchanges: tuple[Exchange, ...] = ()

    @property
    def not_modified(self) -> bool:
        return self.status == 304

    @property
    def etag(self) -> str | None:
        return self.headers.get("etag")

    @property
    def last_modified(self) -> str | None:
        return self.headers.get("last-modified")

    @property
    def content_type(self) -> str | None:
        return self.headers.get("content-type")


# --- records the pipeline and the archive exchange ------------------------------------


@record
class Exchange:
    """One HTTP request and its response's head, as sent and as received (#27 provenance):
    what a WARC ``request``/``response`` record pair needs besides the body. Header lists
    keep the wire's order, case and duplicates; ``response_headers`` are those received,
    before any ``Content-Encoding`` was undone (the stored body is the decoded one)."""

    method: str
    url: str
    request_headers: tuple[tuple[str, str], ...]
    http_version: str  # "HTTP/1.1", "HTTP/2"
    status: int
    reason: str
    response_headers: tuple[tuple[str, str], ...]
    remote_ip: str | None
    started_at: str  # ISO 8601 UTC, when the request was sent

    @property
    def content_encoding(self) -> str | None:
        """The response's ``Content-Encoding`` (None: the body came as it is stored)."""
        for name, value in self.response_headers:
            if name.lower() == "content-encoding" and value.strip().lower() != "identity":
                return value.strip()
        return None


#: What a capture's body is (``captures.kind``, #27): the kind of fetch that stored it, a
#: backfill walk's archive document, or an episode's media file.
CaptureKind = Literal["feed", "page", "transcript", "chapters", "media", "backfill"]
#: Where a capture's body is kept: ``("snapshot", id)``, ``("document", id)`` (the exact
#: bytes: :meth:`Archive.capture_body`) or ``("media", sha256)`` (a file in the media folder).
BodyRef = tuple[str, int | str]


@record
class Capture:
    """One HTTP exchange the archive recorded when it stored (or re-confirmed) a body (#27).

    ``body_sha256`` is the SHA-256 (hex) of the body as stored, i.e. after any
    ``Content-Encoding`` was undone (``exchange.content_encoding`` says what it was); it is
    None for an exchange without a body (a redirect hop, a 304). ``body_ref`` is where those
    exact bytes are kept; None when the body was received but not kept (a page whose notes
    were current: the bytes are gone, the digest and size remain)."""

    id: int
    kind: CaptureKind
    feed_id: int | None
    episode_id: int | None
    exchange: Exchange
    body_sha256: str | None
    body_size: int | None
    body_ref: BodyRef | None
    software: str | None
    content_type: str | None = None  # of the body, from the response's headers
    media_ext: str | None = None  # a media body's file extension in the media folder


@record
class UncapturedBody:
    """A body stored before #27 (no capture row): what is known of how it was fetched.

    ``headers`` are the response headers known for it (validators from the rows beside
    it; a media fetch's whole ``headers`` JSON), lower-case names; ``sha256`` is the SHA-256
    of exactly the bytes :meth:`Archive.capture_body` returns for ``body_ref`` (media: of
    the payload file)."""

    kind: CaptureKind
    feed_id: int | None
    episode_id: int | None
    url: str
    fetched_at: str
    content_type: str | None
    headers: tuple[tuple[str, str], ...]
    sha256: str
    size: int
    body_ref: BodyRef
    media_ext: str | None = None


@record
class FetchRecord:
    """One HTTP request as the fetch log keeps it."""

    url: str
    kind: str
    started_at: str
    ms: int
    status: int | None
    bytes: int
    error: str | None = None
    warning: str | None = None  # a feed body read with fewer episodes kept than items (#23)


#: ``feed_moves.reason`` of a move that feed content asked for: after it, the feed's URL is
#: no longer one a person configured, and is fetched untrusted (issue #23).
MOVED_BY_CONTENT = "itunes:new-feed-url"


@record
class FeedState:
    """What the archive remembers about a feed between runs."""

    id: int
    url: str  # as the user configured it: the feed's identity
    etag: str | None
    last_modified: str | None
    content_hash: str | None
    error_count: int
    fetch_url: str | None = None  # where it lives now, after a move
    gone_at: str | None = None
    not_before: str | None = None
    last_fetched_at: str | None = None
    ttl: int | None = None
    update_period: str | None = None
    update_frequency: int | None = None
    #: ``current_url`` is the configured URL or was reached from it by its hosts' own
    #: permanent redirects only: fetched trusted. False after a move by feed content.
    fetch_trusted: bool = True
    redirects: bool = True  # feed_redirects may hold sightings (#30: if none, none to clear)
    fetch_settings: str | None = None  # its pages' and files' fetch settings, as last stored

    @property
    def current_url(self) -> str:
        return self.fetch_url or self.url


@record
class EpisodeWrite:
    """One parsed episode, ready to store: its identity key, columns and feed-note links."""

    key: str
    row: Row
    links: tuple[Link, ...]
    item_hash: str | None = None  # the raw item's hash (item_split.split_items), if known
    tags: tuple[Tag, ...] = ()  # the item's extension elements (#13), synced when its bytes change


class EpisodeWrites(Collection[EpisodeWrite]):
    """A parsed feed's episode writes, in order; what a worker process sends the writer.

    Parsed episodes take about five times their feed's bytes as Python objects (notes HTML
    and text, a few dozen links each). Pickled to leave a worker process, they travel and
    wait for the archive writer as one zlib-compressed pickle a chunk, about a tenth of
    that, and are unpacked a chunk at a time as the writer iterates: so what a run holds
    follows the feeds in flight, not their parsed size (#15). Made in the calling process,
    they stay plain objects and cost nothing.
    """

    __slots__ = ("_count", "_items", "_packs")

    def __init__(
        self, items: Iterable[EpisodeWrite] = (), *, packs: Sequence[bytes] = (), count: int = 0
    ) -> None:
        self._items = tuple(items)
        self._packs = tuple(packs)
        self._count = len(self._items) + count

    @classmethod
    def join(cls, parts: Iterable[EpisodeWrites]) -> EpisodeWrites:
        """The writes of ``parts``, in order, left packed where they are packed."""
        joined = cls()
        for part in parts:
            if part._items:  # plain parts are packed, to keep one order
                part = cls(packs=(_pack(part._items),), count=len(part._items))
            joined = cls(packs=(*joined._packs, *part._packs), count=joined._count + part._count)
        return joined

    def __len__(self) -> int:
        return self._count

    def __iter__(self) -> Iterator[EpisodeWrite]:
        for pack in self._packs:
            yield from _unpack(pack)
        yield from self._items

    def __contains__(self, write: object) -> bool:
        return any(w == write for w in self)

    def __reduce__(self) -> tuple[Any, ...]:
        packs = (*self._packs, _pack(self._items)) if self._items else self._packs
        return (_packed_writes, (packs, self._count))


def _pack(items: Sequence[EpisodeWrite]) -> bytes:
    return zlib.compress(pickle.dumps(tuple(items), protocol=pickle.HIGHEST_PROTOCOL), 1)


def _unpack(pack: bytes) -> tuple[EpisodeWrite, ...]:
    items: tuple[EpisodeWrite, ...] = pickle.loads(zlib.decompress(pack))
    return items


def _packed_writes(packs: tuple[bytes, ...], count: int) -> EpisodeWrites:
    return EpisodeWrites(packs=packs, count=count)


@record
class Snapshot:
    """A raw feed body as fetched, for provenance and ``reparse``."""

    body: bytes
    url: str
    content_type: str | None
    # the items' place in ``body`` and hash (item_split.FeedSplit): kept as a delta on a match
    items_from: int | None = None
    items_to: int | None = None
    items_hash: str | None = None
    # (start offset, hash) of the items region from its k-th item on, k = 0, 1, …
    regions: tuple[tuple[int, str], ...] = ()


@record
class KeptBody:
    """A raw page, transcript or chapters body as fetched, to keep once (``documents``)."""

    body: bytes
    hash: str  # SHA-256, hex
    url: str
    content_type: str | None

    @classmethod
    def of(cls, body: bytes, url: str, content_type: str | None) -> KeptBody:
        import hashlib  # here: a parse worker need not load OpenSSL (#30)

        return cls(body, hashlib.sha256(body).hexdigest(), url, content_type)


@record
class FeedHistory:
    """One feed's feed-derived state, keyed by episode key rather than row ids."""

    meta: Row
    feed_revisions: list[Row]
    episodes: list[Row]
    revisions: list[Row]  # feed-side episode revisions, with their old id as "revision"
    links: list[Row]  # feed links; "revision" is the old revision id, or None when current
    tags: list[Row] = field(default_factory=list)  # every version; "key" None: the channel's


@record
class SaveStats:
    """How many episodes a feed's save added, changed and left as they were."""

    new: int = 0
    changed: int = 0
    unchanged: int = 0


@record
class PageTask:
    """An episode page to fetch (new, failed, or due for a re-check)."""

    episode_id: int
    feed_id: int
    url: str
    etag: str | None
    last_modified: str | None
    status: str | None = None
    attempts: int = 0
    fetched_at: str | None = None  # the last attempt
    # re-checks of archived pages (#12): what the policy needs to set the next one
    published: str | None = None
    first_seen_at: str | None = None
    failures: int = 0  # consecutive failed re-checks
    document_id: int | None = None  # the page body archived last
    feed_notes: str | None = None  # the episode's notes in its feed (HTML), to find the page's


#: Page notes found with less confidence than this are counted by ``podarchive status``.
LOW_CONFIDENCE = 0.5


@record
class PageHow:
    """How a page's notes were found, as stored beside them (issue #24)."""

    method: str
    evidence: str
    confidence: float
    transcript: tuple[PageTranscriptSegment, ...] | None = None

    @classmethod
    def of(cls, notes: PageNotes) -> PageHow:
        return cls(notes.method, notes.evidence, notes.confidence, notes.transcript)


@record
class FileTask:
    """A transcript or chapters file to fetch (new, failed, or due for a re-check)."""

    kind: FileKind
    file_id: int  # transcripts.id or chapter_files.id
    episode_id: int
    feed_id: int
    url: str
    declared_type: str | None  # the feed's ``type`` attribute
    etag: str | None = None
    last_modified: str | None = None
    status: str | None = None
    attempts: int = 0
    failures: int = 0  # consecutive failures since the file was last read
    fetched_at: str | None = None
    published: str | None = None  # the episode's, for the re-check policy
    first_seen_at: str | None = None
    document_id: int | None = None  # the body archived last


@record
class TranscriptSegment:
    """One time-coded passage of a transcript, in document order (seconds from the start)."""

    start: float | None
    end: float | None
    speaker: str | None
    text: str


@record
class ParsedTranscript:
    """What :func:`~podarchive.read.transcript_formats.parse_transcript` read from one body."""

    format: str  # "srt", "vtt", "json", "html" or "text"
    segments: tuple[TranscriptSegment, ...]
    warnings: tuple[str, ...] = ()


@record
class Chapter:
    """One chapter (``podcast:chapters`` JSON or Podlove Simple Chapters): times in seconds
    from the start, ``url`` and ``image`` absolute http(s); ``toc`` False is a JSON ``"toc":
    false`` chapter, a change inside the one before it (searchable, not in a contents list)."""

    start: float
    end: float | None = None
    title: str | None = None
    url: str | None = None
    image: str | None = None
    toc: bool = True


@record
class ParsedChapters:
    """What :mod:`~podarchive.read.chapter_formats` read: chapters by start, and what it skipped."""

    chapters: tuple[Chapter, ...]
    format: str  # "json" (podcast:chapters) or "psc" (Podlove Simple Chapters)
    version: str | None = None  # the JSON "version", as given
    skipped: int = 0  # entries that were not a usable chapter
    warnings: tuple[str, ...] = ()
