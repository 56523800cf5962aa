"""Backfill: a podcast's whole back catalogue, resumable and exactly-once.

For each feed, in named phases:

1. **feed** — the subscription document is updated as in a run (:func:`pipeline.fetch_feed`,
   :func:`pipeline.store_feed`); its last stored body gives the links to walk.
2. **archive** — ``atom:link rel="next"`` chains (paged feeds) and RFC 5005 ``prev-archive``
   chains are walked, loop-safe and bounded. Each document is stored in one transaction:
   its episodes through :meth:`Archive.save_archive_episodes` (never marking anything absent,
   never touching the feed's metadata or fetch state), its body as an ``archive`` snapshot
   and a ``backfill_pages`` row with its links and episode keys. A walk that is interrupted
   continues where it stopped: documents already stored in this walk (and RFC 5005 archive
   documents, which are immutable, in any walk) are not fetched again.
3. **site** (``site=True``) — the podcast's web site (``feeds.link``): its ``sitemap.xml``,
   else its paginated episode listing. Pages are matched to episodes by normalized URL;
   the others become ``page:<url>`` episodes marked ``found_on_site_at``.
4. **pages** — every episode page not yet archived, and those that failed, through
   :func:`pages.fetch_page` / :func:`pages.store_page` (one transaction per page).
5. **files** — every ``podcast:transcript`` and ``podcast:chapters`` file of the feed's
   episodes not yet read, and those that failed, through
   :func:`episode_files.fetch_file` / :func:`episode_files.store_file`, as a run fetches
   them (untrusted URLs; ``--limit`` counts pages only).

One :class:`Fetcher` serves the whole backfill, so the per-host limits, gap, retries,
Retry-After and address guard of runs apply. Setting ``stop`` ends the backfill gracefully:
nothing new is started, requests in flight finish and are stored (for at most ``grace``
seconds, or until ``abandon`` is set, then they are abandoned: counted as left, not as
done, by the report and the progress alike). ``dry_run`` fetches only the feed documents
(feed, archive and paged documents, site listings), writes nothing, and lists the pages and
files the real backfill would fetch: those the archive has due, and those of the episodes
it would store (the feed's own new ones included).
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from functools import partial
from typing import Protocol
from urllib.parse import parse_qsl, urlsplit, urlunsplit

import httpx

from podarchive.core.clock import Clock, iso, parse_iso, utcnow
from podarchive.core.errors import Abandoned, PodarchiveError, StorageError
from podarchive.core.settings import Settings
from podarchive.core.types import (
    DocumentKind,
    EpisodeWrite,
    FeedState,
    FetchRecord,
    FetchResult,
    FileKind,
    FileTask,
    PageTask,
    ParsedFeed,
    Row,
    Snapshot,
)
from podarchive.core.urls import normalize_url
from podarchive.net.fetch import Fetcher
from podarchive.net.fetch_for import get_for
from podarchive.read.extract import page_links, page_title, sitemap_entries
from podarchive.read.parse import parse_feed
from podarchive.read.rows import episode_writes
from podarchive.read.schedule_files import FeedSchedule
from podarchive.store import FILE_TABLES, ArchiveLike
from podarchive.update.files import FileOutcome, fetch_file, file_kinds, store_file
from podarchive.update.one_feed import fetch_feed, store_feed
from podarchive.update.pages import PageOutcome, count_page, fetch_page, store_page

log = logging.getLogger("podarchive")

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
    requests: int = 0
    failures: list[tuple[str, str]] = field(default_factory=list)  # (url, reason)
    would_fetch: list[str] = field(default_factory=list)  # dry run: the pages
    would_fetch_files: list[str] = field(default_factory=list)  # dry run: the files

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
class _Context:
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
class _Walk:
    """One feed's walk: what its phases read and add to, in place of loose accumulators."""

    schedule: FeedSchedule
    state: FeedState
    id: int | None  # the walk's row in backfill_walks; None in a dry run without one
    report: FeedBackfill
    seen: set[str]  # episode keys listed by the feed and the documents walked so far
    known: set[str] = field(default_factory=set)  # keys the archive has (set by the walk)
    planned: list[EpisodeWrite] = field(default_factory=list)  # dry run: episodes it would add


def backfill(
    archive: ArchiveLike | None,
    schedules: Iterable[FeedSchedule],
    *,
    options: BackfillOptions | None = None,
    settings: Settings | None = None,
    transport: httpx.BaseTransport | None = None,
    clock: Clock = utcnow,
    stop: threading.Event | None = None,
    progress: Progress | None = None,
    abandon: threading.Event | None = None,
) -> BackfillReport:
    """Backfill each feed of ``schedules`` in turn. Never raises for a feed's failure.

    After ``stop``, setting ``abandon`` (a second Ctrl-C) gives up the pages and files in
    flight at once instead of after ``options.grace``; the report still counts what was
    stored.

    ``archive`` may be read-only (:meth:`Archive.open_read_only`) or None with
    ``options.dry_run``.
    """
    options = options or BackfillOptions()
    settings = settings or Settings()
    if archive is None and not options.dry_run:
        raise ValueError("backfill needs an archive unless it is a dry run")
    report = BackfillReport(dry_run=options.dry_run)
    stop = stop or threading.Event()
    blocks = {}
    if archive is not None:
        blocks = {
            host: until
            for host, stamp in archive.host_blocks(iso(clock())).items()
            if (until := parse_iso(stamp)) is not None
        }
    limit = options.limit if options.limit is not None else -1
    with Fetcher(settings, transport=transport, blocked_hosts=blocks) as fetcher:
        ctx = _Context(
            archive, fetcher, options, settings, clock, stop, progress or NoProgress(), [limit],
            abandon or threading.Event(),
        )  # fmt: skip
        for schedule in schedules:
            if stop.is_set():
                break
            report.feeds.append(_backfill_feed(ctx, schedule))
        if ctx.writing and archive is not None:
            archive.save_host_blocks(
                {host: iso(until) for host, until in fetcher.blocked_hosts.items()}, ctx.now()
            )
    report.stopped = stop.is_set()
    return report


def _backfill_feed(ctx: _Context, schedule: FeedSchedule) -> FeedBackfill:
    report = FeedBackfill(schedule.url, schedule.label)
    try:
        state, body = _feed_phase(ctx, schedule, report)
        if body is None or ctx.stop.is_set():
            return report
        walk_id = None
        if ctx.writing and ctx.archive is not None:
            walk_id = ctx.archive.open_walk(state.id) or ctx.archive.start_walk(state.id, ctx.now())
        elif ctx.archive is not None:
            walk_id = ctx.archive.open_walk(state.id)
        parsed = parse_feed(body.body, body.headers, url=body.final_url)
        writes, _ = episode_writes(parsed, body.final_url)
        report.feed_episodes = len(writes)
        walk = _Walk(schedule, state, walk_id, report, seen={w.key for w in writes})
        if not ctx.writing:  # the real run stores the feed's episodes first: plan them too
            archive = ctx.archive
            known = archive.episode_keys(state.id) if archive is not None and state.id else set()
            walk.planned.extend(w for w in writes if w.key not in known)
        complete = True
        if not ctx.options.pages_only:
            complete = _walk(ctx, walk, parsed.channel.links)
        if ctx.options.site and not ctx.stop.is_set():
            site = parsed.channel.link
            if site:
                complete &= _site_phase(ctx, walk, site)
            else:
                report.failures.append((schedule.url, "--site: the feed names no web site"))
        if not ctx.stop.is_set():
            _pages_phase(ctx, walk)
        if not ctx.stop.is_set():
            _files_phase(ctx, walk)
        if complete and walk_id is not None and ctx.writing and not ctx.stop.is_set():
            assert ctx.archive is not None
            ctx.archive.finish_walk(walk_id, ctx.now())
    except Abandoned:
        pass  # a stop: nothing half-done was stored
    except StorageError:
        raise  # the archive itself (damaged, full): not one feed's failure
    except PodarchiveError as e:
        report.error = str(e)
    return report


# feed -----------------------------------------------------------------------------------


def _feed_phase(
    ctx: _Context, schedule: FeedSchedule, report: FeedBackfill
) -> tuple[FeedState, FetchResult | None]:
    """Update the subscription document as a run does; return its last known body."""
    archive = ctx.archive
    ctx.progress.start(report.label, "feed", 1)
    try:
        if ctx.writing and archive is not None:
            state = archive.ensure_feed(schedule.url, schedule.name, ctx.now())
            outcome = fetch_feed(ctx.fetcher, schedule, state)
            report.requests += len(outcome.records)
            if isinstance(outcome.error, Abandoned):
                raise outcome.error
            feed_report = store_feed(archive, outcome, ctx.clock(), ctx.settings)
            if feed_report.error:
                report.failures.append((schedule.url, feed_report.error))
            stored = archive.latest_feed_body(state.id)
            if stored is not None:
                body, url, content_type = stored
                headers = {"content-type": content_type} if content_type else {}
                return state, FetchResult(
                    url=url, final_url=url, status=200, headers=headers, body=body
                )
            if feed_report.error:
                report.error = feed_report.error
                return state, None
        else:
            known = archive.feed_state(schedule.url) if archive is not None else None
            state = known or FeedState(0, schedule.url, None, None, None, 0)
        records: list[FetchRecord] = []
        try:  # a dry run, or an archive without a snapshot of this feed: fetch it plainly
            url, trusted = state.current_url, state.fetch_trusted  # trusted unless moved by content
            result = get_for(ctx.fetcher, schedule, url, records, kind="feed", trusted=trusted)
        finally:
            report.requests += len(records)
        return state, result
    finally:
        ctx.progress.advance()
        ctx.progress.done()


# archive and paged documents ----------------------------------------------------------


def _walk(ctx: _Context, walk: _Walk, links: Sequence[tuple[str, str]]) -> bool:
    """Follow next / prev-archive links breadth first. True when the walk reached its ends."""
    state, report = walk.state, walk.report
    queue = _walk_links(links)
    visited = {normalize_url(state.current_url)}
    walk.known = ctx.archive.episode_keys(state.id) if ctx.archive is not None else set()
    complete = True
    count = 0
    ctx.progress.start(report.label, "archive pages", None)
    try:
        while queue:
            if ctx.stop.is_set():
                return False
            kind, url = queue.pop(0)
            if normalize_url(url) in visited:
                continue
            visited.add(normalize_url(url))
            if count >= ctx.options.max_documents:
                report.failures.append((url, f"walk stopped after {count} documents"))
                return False
            count += 1
            earlier = ctx.archive.backfill_page(state.id, url) if ctx.archive is not None else None
            if earlier is not None and _done(earlier, walk.id, ctx.options.since):
                report.documents_done_before += 1
                walk.seen.update(earlier["episode_keys"])
                queue.extend(_walk_links(earlier["links"]))
                ctx.progress.advance()
                continue
            followed = _fetch_document(ctx, walk, kind, url, earlier)
            ctx.progress.advance()
            if followed is None:
                complete = False
            else:
                queue.extend(followed)
        return complete
    finally:
        ctx.progress.done()


def _walk_links(links: Sequence[Sequence[str]]) -> list[tuple[DocumentKind, str]]:
    return [(WALK_RELS[rel], href) for rel, href in links if rel in WALK_RELS]


def _done(earlier: Row, walk_id: int | None, since: str | None) -> bool:
    """Whether a document stored before need not be fetched again."""
    status: str = earlier["status"]
    same_walk: bool = earlier["walk_id"] == walk_id
    if status == "ok":
        return earlier["kind"] == "archive" or same_walk
    if status == "partial" and same_walk:
        stored_since = earlier["since"]
        return since is not None and isinstance(stored_since, str) and since >= stored_since
    return False


def _fetch_document(
    ctx: _Context, walk: _Walk, kind: DocumentKind, url: str, earlier: Row | None
) -> list[tuple[DocumentKind, str]] | None:
    """Fetch, parse and store one archive document; the links to follow, None if it failed."""
    records: list[FetchRecord] = []
    etag = str(earlier["etag"]) if earlier and earlier["etag"] and ctx.writing else None
    modified = (
        str(earlier["last_modified"])
        if earlier and earlier["last_modified"] and ctx.writing
        else None
    )
    try:
        result = get_for(
            ctx.fetcher, walk.schedule, url, records, kind="feed", etag=etag, last_modified=modified
        )
        walk.report.documents_fetched += 1
        if result.not_modified and earlier is not None:
            links = [(str(r), str(h)) for r, h in earlier["links"]]
            keys = [str(k) for k in earlier["episode_keys"]]
            _record(ctx, walk, url, kind=kind, status="ok", records=records, links=links, keys=keys)
            walk.seen.update(keys)
            return _walk_links(links)
        parsed = parse_feed(result.body, result.headers, url=result.final_url)
    except Abandoned:
        raise
    except PodarchiveError as e:
        walk.report.requests += len(records)
        walk.report.failures.append((url, str(e)))
        _record(ctx, walk, url, kind=kind, status="failed", records=records, error=str(e))
        return None
    walk.report.requests += len(records)
    return _store_document(ctx, walk, kind, url, result, parsed, records)


def _store_document(
    ctx: _Context,
    walk: _Walk,
    kind: DocumentKind,
    url: str,
    result: FetchResult,
    parsed: ParsedFeed,
    records: list[FetchRecord],
) -> list[tuple[DocumentKind, str]]:
    """Store a fetched document's episodes on or after --since (a dry run plans the new ones)."""
    writes, _ = episode_writes(parsed, result.final_url)
    since = ctx.options.since
    kept = [w for w in writes if _on_or_after(w.row.get("published"), since)]
    links = list(parsed.channel.links)
    keys = [w.key for w in kept]
    status = "ok" if len(kept) == len(writes) else "partial"
    fresh = frozenset(walk.seen)
    if ctx.writing:
        assert ctx.archive is not None
        assert walk.id is not None
        stats = ctx.archive.record_backfill_page(
            walk.state.id,
            walk.id,
            url,
            kind=kind,
            status=status,
            now=ctx.now(),
            records=records,
            since=since if status == "partial" else None,
            etag=result.etag,
            last_modified=result.last_modified,
            links=links,
            keys=keys,
            episodes=kept,
            seen=fresh,
            snapshot=Snapshot(result.body, result.final_url, result.content_type),
        )
        walk.report.archive_new += stats.new
    else:
        new = [w for w in kept if w.key not in fresh and w.key not in walk.known]
        walk.planned.extend(new)
        walk.report.archive_new += len(new)
    walk.known.update(keys)
    walk.seen.update(keys)
    dated = [str(w.row["published"]) for w in writes if w.row.get("published")]
    if since is not None and dated and min(dated) < since:
        return []  # it reaches back past --since: everything further back is older still
    return _walk_links(links)


def _record(
    ctx: _Context,
    walk: _Walk,
    url: str,
    *,
    kind: DocumentKind,
    status: str,
    records: list[FetchRecord],
    error: str | None = None,
    links: Sequence[tuple[str, str]] = (),
    keys: Sequence[str] = (),
) -> None:
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


def _on_or_after(published: object, since: str | None) -> bool:
    return since is None or not published or str(published) >= since


# the podcast's web site -----------------------------------------------------------------


def _site_phase(ctx: _Context, walk: _Walk, site: str) -> bool:
    """Find episode pages on the site; add those the feed lacks. True when nothing failed."""
    state, report, planned = walk.state, walk.report, walk.planned
    ctx.progress.start(report.label, "site", None)
    try:
        found, complete = _discover(ctx, walk, site)
    finally:
        ctx.progress.done()
    index: dict[str, int] = {}
    if ctx.archive is not None and state.id:
        for episode_id, _key, page_url, link in ctx.archive.page_index(state.id):
            for candidate in (page_url, link):
                if candidate:
                    index.setdefault(normalize_url(candidate), episode_id)
    for url in found:
        report.site_found += 1
        normalized = normalize_url(url)
        if normalized in index or any(
            normalize_url(p.row.get("page_url") or "") == normalized for p in planned
        ):
            report.site_matched += 1
            continue
        key = SITE_PAGE_KEY + normalized
        if ctx.writing:
            assert ctx.archive is not None
            if ctx.archive.add_site_episode(state.id, key, url, ctx.now()):
                report.site_new += 1
        else:
            planned.append(EpisodeWrite(key, {"page_url": url}, ()))
            report.site_new += 1
        index[normalized] = -1
    return complete


def _discover(ctx: _Context, walk: _Walk, site: str) -> tuple[list[str], bool]:
    """Episode page URLs from the site's sitemap.xml, else from its episode listing."""
    parts = urlsplit(site)
    origin = urlunsplit((parts.scheme, parts.netloc, "", "", ""))
    prefix = _episodes_path(parts.path)
    found: dict[str, None] = {}
    complete = True
    sitemap = _site_document(ctx, walk, origin + "/sitemap.xml")
    if sitemap is not None:
        documents, children = sitemap
        queue = list(children)
        entries = list(documents)
        fetched = 0
        while queue and fetched < ctx.options.max_documents and not ctx.stop.is_set():
            child = _site_document(ctx, walk, queue.pop(0))
            fetched += 1
            if child is None:
                complete = False
                continue
            entries.extend(child[0])
        for url, lastmod in entries:
            if _is_episode_url(url, parts.netloc, prefix) and _on_or_after(
                lastmod, ctx.options.since
            ):
                found.setdefault(url)
    if found:
        return list(found), complete
    listing = origin + prefix
    queue, visited = [listing], set[str]()
    while queue and len(visited) < ctx.options.max_documents and not ctx.stop.is_set():
        url = queue.pop(0)
        if normalize_url(url) in visited:
            continue
        visited.add(normalize_url(url))
        links = _site_document(ctx, walk, url, listing=True)
        if links is None:
            complete = False
            continue
        for candidate, _ in links[0]:
            if _is_episode_url(candidate, parts.netloc, prefix):
                found.setdefault(candidate)
        queue.extend(u for u in links[1] if normalize_url(u) not in visited)
    return list(found), complete


def _site_document(
    ctx: _Context, walk: _Walk, url: str, *, listing: bool = False
) -> tuple[list[tuple[str, str | None]], list[str]] | None:
    """A sitemap (entries, child sitemaps) or listing page (episode links, next pages).

    Stored as a ``site`` document of the walk, so a resumed backfill does not fetch it
    again. None when it cannot be had (a missing sitemap is no failure: the listing is tried).
    """
    state, report = walk.state, walk.report
    earlier = (
        ctx.archive.backfill_page(state.id, url) if ctx.archive is not None and state.id else None
    )
    if earlier is not None and earlier["status"] == "ok" and earlier["walk_id"] == walk.id:
        stored = [(str(r), str(h)) for r, h in earlier["links"]]
        ctx.progress.advance()
        return _split_site_links(stored)
    records: list[FetchRecord] = []
    try:
        result = get_for(ctx.fetcher, walk.schedule, url, records, kind="page")
    except Abandoned:
        raise  # a stop: not done, so not counted as done
    except PodarchiveError as e:
        ctx.progress.advance()
        report.requests += len(records)
        if listing:
            report.failures.append((url, str(e)))
        _record(ctx, walk, url, kind="site", status="failed", records=records, error=str(e))
        return None
    ctx.progress.advance()
    report.requests += len(records)
    if listing:
        base = urlsplit(url)
        links = []
        for rel, href in page_links(
            result.body, result.final_url, content_type=result.content_type
        ):
            target = urlsplit(href)
            is_next = "next" in rel.split() or (
                target.path == base.path and any(k == "page" for k, _ in parse_qsl(target.query))
            )
            links.append(("listing" if is_next else "page", href))
    else:
        pages, children = sitemap_entries(result.body)
        links = [("sitemap", c) for c in children] + [
            (f"page {m or ''}".strip(), u) for u, m in pages
        ]
    _record(ctx, walk, url, kind="site", status="ok", records=records, links=links)
    return _split_site_links(links)


def _split_site_links(
    links: Sequence[tuple[str, str]],
) -> tuple[list[tuple[str, str | None]], list[str]]:
    pages: list[tuple[str, str | None]] = []
    more: list[str] = []
    for rel, href in links:
        if rel in ("sitemap", "listing"):
            more.append(href)
        else:
            pages.append((href, rel.removeprefix("page").strip() or None))
    return pages, more


def _episodes_path(path: str) -> str:
    """The site's episode listing path: ``/episodes`` (or the link's own, if it names one)."""
    segments = [s for s in path.split("/") if s]
    if "episodes" in segments:
        return "/" + "/".join(segments[: segments.index("episodes") + 1])
    return "/" + "/".join([*segments, "episodes"])


def _is_episode_url(url: str, netloc: str, prefix: str) -> bool:
    parts = urlsplit(url)
    if parts.netloc.lower() != netloc.lower() or parts.query:
        return False
    rest = parts.path[len(prefix) :].strip("/") if parts.path.startswith(prefix + "/") else ""
    return bool(rest) and not rest.startswith("page/")


# episode pages --------------------------------------------------------------------------


def _pages_phase(ctx: _Context, walk: _Walk) -> None:
    """Every episode page not yet archived, and those that failed, on or after --since (a
    dry run counts those of the episodes it would have stored too)."""
    schedule, state, report = walk.schedule, walk.state, walk.report
    tasks: list[tuple[PageTask, str]] = []
    if ctx.archive is not None and state.id:
        tasks = ctx.archive.backfill_page_tasks(state.id, ctx.options.since)
    if not schedule.pages:
        tasks = [t for t in tasks if t[1].startswith(SITE_PAGE_KEY)]
    if not ctx.writing:
        urls = [t.url for t, _ in tasks] + [
            str(p.row["page_url"])
            for p in walk.planned
            if p.row.get("page_url")
            and (schedule.pages or p.key.startswith(SITE_PAGE_KEY))
            and _on_or_after(p.row.get("published"), ctx.options.since)
        ]
        allowed = _take(ctx, len(urls))
        report.would_fetch = urls[:allowed]
        report.pages_left = len(urls) - allowed
        return
    allowed = _take(ctx, len(tasks))
    report.pages_left = len(tasks) - allowed
    tasks = tasks[:allowed]
    if not tasks:
        return
    archive = ctx.archive
    assert archive is not None

    def job(task: PageTask, key: str) -> Callable[[], bool]:
        outcome = fetch_page(ctx.fetcher, task, schedule)
        return lambda: _store_page(archive, outcome, key, ctx.now(), report)

    ctx.progress.start(report.label, "episode pages", len(tasks))
    try:
        report.pages_left += _fetch_each(ctx, [partial(job, task, key) for task, key in tasks])
    finally:
        ctx.progress.done()


def _take(ctx: _Context, wanted: int) -> int:
    """How many of ``wanted`` pages --limit still allows (and count them off)."""
    if ctx.budget[0] < 0:
        return wanted
    allowed = min(wanted, ctx.budget[0])
    ctx.budget[0] -= allowed
    return allowed


def _fetch_each(ctx: _Context, jobs: list[Callable[[], Callable[[], bool]]]) -> int:
    """Run ``jobs`` (each fetches in the pool and gives back how to store what it got:
    False when it was abandoned) with at most ``per_host`` in flight, storing each on this
    thread as it arrives; how many were not done (a stop: not started, or abandoned).
    Progress counts only what was stored, so it says what the summary says."""
    width = max(1, min(ctx.settings.per_host, ctx.settings.concurrency))
    pending: set[Future[Callable[[], bool]]] = set()
    todo = list(reversed(jobs))
    left = 0
    stopped_at: float | None = None
    with ThreadPoolExecutor(width, "podarchive-backfill") as pool:
        try:
            while todo or pending:
                while todo and len(pending) < width and not ctx.stop.is_set():
                    pending.add(pool.submit(todo.pop()))
                if ctx.stop.is_set():
                    stopped_at = stopped_at or time.monotonic()
                    late = time.monotonic() - stopped_at > ctx.options.grace
                    if late or ctx.abandon.is_set():
                        ctx.fetcher.abort()
                    if not pending:
                        break
                done, pending = wait(pending, timeout=0.1, return_when=FIRST_COMPLETED)
                for future in done:
                    if future.result()():
                        ctx.progress.advance()
                    else:
                        left += 1
        finally:
            left += len(todo)
    return left


def _store_page(
    archive: ArchiveLike, outcome: PageOutcome, key: str, now: str, report: FeedBackfill
) -> bool:
    """Store one page's outcome; False when it was abandoned (a stop: nothing recorded)."""
    report.requests += len(outcome.records)
    if isinstance(outcome.error, Abandoned):
        return False  # the next backfill fetches it
    with archive.transaction():
        status = store_page(archive, outcome, now)
        if (
            key.startswith(SITE_PAGE_KEY)
            and outcome.result is not None
            and outcome.notes is not None
        ):
            title = page_title(outcome.result.body, content_type=outcome.result.content_type)
            if title:
                archive.set_site_episode_title(outcome.task.episode_id, title)
    if count_page(report, status):
        report.failures.append((outcome.task.url, str(outcome.error)))
    return True


# transcripts and chapters files -------------------------------------------------------------


def _files_phase(ctx: _Context, walk: _Walk) -> None:
    """The transcripts and chapters files of the feed's episodes not yet read, and those
    that failed, on or after --since: fetched as a run fetches them (untrusted: the address
    guard, the same per-host politeness), stored one by one. A dry run counts them, with
    those of the episodes it would have stored."""
    schedule, report, since = walk.schedule, walk.report, ctx.options.since
    kinds = file_kinds(schedule)
    tasks: list[FileTask] = []
    if ctx.archive is not None and walk.state.id and kinds:
        due = ctx.archive.files_to_fetch(walk.state.id, ctx.now(), kinds, failing=True)
        tasks = [t for t in due if t.status in ("pending", "failed")]
        tasks = [t for t in tasks if _on_or_after(t.published, since)]
    if not ctx.writing:
        report.would_fetch_files = [t.url for t in tasks] + [
            url
            for p in walk.planned
            if _on_or_after(p.row.get("published"), since)
            for url in _listed_files(p.row, kinds)
        ]
        return
    if not tasks:
        return
    archive = ctx.archive
    assert archive is not None

    def job(task: FileTask) -> Callable[[], bool]:
        outcome = fetch_file(ctx.fetcher, task, schedule)
        return lambda: _store_file(archive, outcome, ctx.now(), report)

    ctx.progress.start(report.label, "transcripts and chapters", len(tasks))
    try:
        report.files_left = _fetch_each(ctx, [partial(job, t) for t in tasks])
    finally:
        ctx.progress.done()


def _store_file(archive: ArchiveLike, outcome: FileOutcome, now: str, report: FeedBackfill) -> bool:
    """Store one file's outcome; False when it was abandoned (a stop: nothing recorded)."""
    report.requests += len(outcome.records)
    if isinstance(outcome.error, Abandoned):
        return False
    if store_file(archive, outcome, now) == "failed":
        report.files_failed += 1
        report.failures.append((outcome.task.url, str(outcome.error)))
    else:
        report.files_ok += 1
    return True


def _listed_files(row: Row, kinds: Sequence[FileKind]) -> list[str]:
    """The URLs of the files of ``kinds`` an episode row lists (its JSON ``transcripts`` and
    ``chapters`` columns), once each, as the store lists them to fetch."""
    urls: list[str] = []
    for kind in kinds:
        try:
            items = json.loads(row.get(FILE_TABLES[kind][1]) or "[]")
        except ValueError:
            continue
        listed = (
            [i.get("url") for i in items if isinstance(i, dict)] if isinstance(items, list) else []
        )
        urls += dict.fromkeys(url for url in listed if isinstance(url, str) and url)
    return urls


__all__ = [
    "MAX_DOCUMENTS",
    "BackfillOptions",
    "BackfillReport",
    "FeedBackfill",
    "NoProgress",
    "Progress",
    "backfill",
]
