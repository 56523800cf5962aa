"""What a backfill is told, what it reports, and what its phases share while it runs.

:class:`BackfillOptions` (what to do), :class:`FeedBackfill` and :class:`BackfillReport`
(what was found, stored and failed, per feed), :class:`Progress` (where phases are shown),
and for the phases (:mod:`.backfill_walk`, :mod:`.backfill_site`, :mod:`.backfill_phases`):
:class:`Context` (one backfill) and :class:`Walk` (one feed's walk).
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol

from podarchive.core.clock import Clock, iso
from podarchive.core.settings import Settings
from podarchive.core.types import DocumentKind, EpisodeWrite, FeedState, FetchRecord
from podarchive.net.fetch import Fetcher
from podarchive.read.schedule_files import FeedSchedule
from podarchive.store import ArchiveLike

#: Most documents (archive/paged pages, site listings) one walk fetches per feed.
MAX_DOCUMENTS = 1000
#: The rels followed from a feed document, and the kind of document each leads to.
WALK_RELS: dict[str, DocumentKind] = {"next": "next", "prev-archive": "archive"}
SITE_PAGE_KEY = "page:"


class Progress(Protocol):
    """Where a backfill reports its phases (a progress bar, log lines, nothing)."""

    def start(self, label: str, phase: str, total: int | None) -> None: ...

    def advance(self, count: int = 1) -> None: ...

    def done(self) -> None: ...


class NoProgress:
    def start(self, label: str, phase: str, total: int | None) -> None:
        pass

    def advance(self, count: int = 1) -> None:
        pass

    def done(self) -> None:
        pass


@dataclass(frozen=True, slots=True)
class BackfillOptions:
    since: str | None = None  # ISO date: episodes/pages published on or after
    limit: int | None = None  # at most this many episode pages fetched
    dry_run: bool = False
    pages_only: bool = False  # no feed paging
    site: bool = False  # discover episodes on the podcast's web site
    max_documents: int = MAX_DOCUMENTS
    grace: float = 10.0  # seconds in-flight requests may take to finish after a stop


@dataclass(slots=True)
class FeedBackfill:
    """How one feed's backfill went (or, in a dry run, would go)."""

    url: str
    label: str
    error: str | None = None
    feed_episodes: int = 0  # listed by the subscription document
    documents_fetched: int = 0  # archive and paged documents requested
    documents_done_before: int = 0  # stored by an earlier (interrupted) backfill
    archive_new: int = 0  # episodes first found on archive/paged documents
    site_found: int = 0  # episode pages found on the site
    site_matched: int = 0  # ... that are feed episodes
    site_new: int = 0  # ... that are not
    pages_ok: int = 0
    pages_empty: int = 0
    pages_failed: int = 0
    pages_left: int = 0  # not fetched because of --limit or a stop
    files_ok: int = 0  # transcripts and chapters files read (or unchanged)
    files_failed: int = 0
    files_left: int = 0  # not fetched because of a stop
    media_stored: int = 0  # media files stored (or the same bytes found again)
    media_failed: int = 0
    media_left: int = 0  # not fetched: the budget, a stop, a full disk, or still partial
    media_bytes: int = 0  # bytes of media transferred
    requests: int = 0
    failures: list[tuple[str, str]] = field(default_factory=list)  # (url, reason)
    would_fetch: list[str] = field(default_factory=list)  # dry run: the pages
    would_fetch_files: list[str] = field(default_factory=list)  # dry run: the files
    would_fetch_media: int = 0  # dry run: media files within the budget ...
    would_fetch_media_bytes: int = 0  # ... and their declared bytes

    @property
    def pages_fetched(self) -> int:
        return self.pages_ok + self.pages_empty + self.pages_failed

    @property
    def files_fetched(self) -> int:
        return self.files_ok + self.files_failed


@dataclass(slots=True)
class BackfillReport:
    feeds: list[FeedBackfill] = field(default_factory=list)
    stopped: bool = False
    dry_run: bool = False

    @property
    def failed(self) -> list[FeedBackfill]:
        return [f for f in self.feeds if f.error]

    @property
    def requests(self) -> int:
        return sum(f.requests for f in self.feeds)


@dataclass(slots=True)
class Context:
    """One backfill: what every phase of every feed uses."""

    archive: ArchiveLike | None  # None: a dry run without an archive file
    fetcher: Fetcher
    options: BackfillOptions
    settings: Settings
    clock: Clock
    stop: threading.Event
    progress: Progress
    budget: list[int]  # pages still allowed by --limit (one shared counter)
    abandon: threading.Event  # set after stop: give up what is in flight now

    @property
    def writing(self) -> bool:
        return self.archive is not None and not self.options.dry_run

    def now(self) -> str:
        return iso(self.clock())


@dataclass(slots=True)
class Walk:
    """One feed's walk: what its phases read and add to, in place of loose accumulators."""

    schedule: FeedSchedule
    state: FeedState
    id: int | None  # the walk's row in backfill_walks; None in a dry run without one
    report: FeedBackfill
    seen: set[str]  # episode keys listed by the feed and the documents walked so far
    known: set[str] = field(default_factory=set)  # keys the archive has (set by the walk)
    planned: list[EpisodeWrite] = field(default_factory=list)  # dry run: episodes it would add


def record(
    ctx: Context,
    walk: Walk,
    url: str,
    *,
    kind: DocumentKind,
    status: str,
    records: list[FetchRecord],
    error: str | None = None,
    links: Sequence[tuple[str, str]] = (),
    keys: Sequence[str] = (),
) -> None:
    """Store a walked document's outcome (a ``backfill_pages`` row), when writing."""
    if ctx.writing and ctx.archive is not None and walk.id is not None:
        ctx.archive.record_backfill_page(
            walk.state.id,
            walk.id,
            url,
            kind=kind,
            status=status,
            now=ctx.now(),
            records=records,
            error=error,
            links=links,
            keys=keys,
        )


def on_or_after(published: object, since: str | None) -> bool:
    """Whether something published then is wanted by --since (undated things always are)."""
    return since is None or not published or str(published) >= since


def walk_links(links: Sequence[Sequence[str]]) -> list[tuple[DocumentKind, str]]:
    """The links of a document a walk follows, with the kind of document each leads to."""
    return [(WALK_RELS[rel], href) for rel, href in links if rel in WALK_RELS]
