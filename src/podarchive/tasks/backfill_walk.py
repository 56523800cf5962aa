"""The backfill's **archive** phase: paged feeds and RFC 5005 archives, walked.

``atom:link rel="next"`` chains (paged feeds) and RFC 5005 ``prev-archive`` chains are
followed breadth first, loop-safe and bounded. Each document is stored in one transaction:
its episodes through :meth:`Archive.save_archive_episodes` (never marking anything absent,
never touching the feed's metadata or fetch state), its body as an ``archive`` snapshot and
a ``backfill_pages`` row with its links and episode keys. A walk that is interrupted
continues where it stopped: documents already stored in this walk (and RFC 5005 archive
documents, which are immutable, in any walk) are not fetched again.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

from podarchive.core.errors import Abandoned, PodarchiveError
from podarchive.core.types import (
    DocumentKind,
    EpisodeWrite,
    FetchRecord,
    FetchResult,
    ParsedFeed,
    Row,
    SaveStats,
    Snapshot,
)
from podarchive.core.urls import normalize_url
from podarchive.net.fetch_for import get_for
from podarchive.read.parse import parse_feed
from podarchive.read.rows import episode_writes
from podarchive.tasks.backfill_model import Context, Walk, on_or_after, record, walk_links


def walk_documents(ctx: Context, walk: Walk, links: Sequence[tuple[str, str]]) -> bool:
    """Follow next / prev-archive links breadth first. True when the walk reached its ends."""
    state, report = walk.state, walk.report
    queue = walk_links(links)
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
                queue.extend(walk_links(earlier["links"]))
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
    ctx: Context, walk: Walk, kind: DocumentKind, url: str, earlier: Row | None
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
            record(ctx, walk, url, kind=kind, status="ok", records=records, links=links, keys=keys)
            _capture(ctx, walk, result)
            walk.seen.update(keys)
            return walk_links(links)
        parsed = parse_feed(result.body, result.headers, url=result.final_url)
    except Abandoned:
        raise
    except PodarchiveError as e:
        walk.report.requests += len(records)
        walk.report.failures.append((url, str(e)))
        record(ctx, walk, url, kind=kind, status="failed", records=records, error=str(e))
        return None
    walk.report.requests += len(records)
    return _store_document(ctx, walk, kind, url, result, parsed, records)


def _store_document(
    ctx: Context,
    walk: Walk,
    kind: DocumentKind,
    url: str,
    result: FetchResult,
    parsed: ParsedFeed,
    records: list[FetchRecord],
) -> list[tuple[DocumentKind, str]]:
    """Store a fetched document's episodes on or after --since (a dry run plans the new ones)."""
    writes, _ = episode_writes(parsed, result.final_url)
    since = ctx.options.since
    kept = [w for w in writes if on_or_after(w.row.get("published"), since)]
    links = list(parsed.channel.links)
    keys = [w.key for w in kept]
    fresh = frozenset(walk.seen)
    if ctx.writing:
        partial = len(kept) != len(writes)
        walk.report.archive_new += _save_document(
            ctx, walk, kind, url, result, records, kept, links, partial=partial, seen=fresh
        )
    else:
        new = [w for w in kept if w.key not in fresh and w.key not in walk.known]
        walk.planned.extend(new)
        walk.report.archive_new += len(new)
    walk.known.update(keys)
    walk.seen.update(keys)
    dated = [str(w.row["published"]) for w in writes if w.row.get("published")]
    if since is not None and dated and min(dated) < since:
        return []  # it reaches back past --since: everything further back is older still
    return walk_links(links)


def _save_document(
    ctx: Context,
    walk: Walk,
    kind: DocumentKind,
    url: str,
    result: FetchResult,
    records: list[FetchRecord],
    kept: list[EpisodeWrite],
    links: list[tuple[str, str]],
    *,
    partial: bool,
    seen: frozenset[str],
) -> int:
    """Store the document, its snapshot and its episodes in one go; how many were new."""
    assert ctx.archive is not None
    assert walk.id is not None
    with ctx.archive.transaction():
        stats = _save_page(ctx, walk, kind, url, result, records, kept, links, partial, seen)
        _capture(ctx, walk, result)
    return stats.new


def _capture(ctx: Context, walk: Walk, result: FetchResult) -> None:
    """The document's exchanges (#27): its body, when one came, is its ``archive`` snapshot."""
    if not ctx.writing or ctx.archive is None:
        return
    body = None if result.not_modified else hashlib.sha256(result.body).hexdigest()
    ctx.archive.record_captures(
        result.exchanges,
        kind="backfill",
        feed_id=walk.state.id,
        body_sha256=body,
        body_size=None if body is None else len(result.body),
    )


def _save_page(
    ctx: Context,
    walk: Walk,
    kind: DocumentKind,
    url: str,
    result: FetchResult,
    records: list[FetchRecord],
    kept: list[EpisodeWrite],
    links: list[tuple[str, str]],
    partial: bool,
    seen: frozenset[str],
) -> SaveStats:
    assert ctx.archive is not None
    assert walk.id is not None
    return ctx.archive.record_backfill_page(
        walk.state.id,
        walk.id,
        url,
        kind=kind,
        status="partial" if partial else "ok",
        now=ctx.now(),
        records=records,
        since=ctx.options.since if partial else None,
        etag=result.etag,
        last_modified=result.last_modified,
        links=links,
        keys=[w.key for w in kept],
        episodes=kept,
        seen=seen,
        snapshot=Snapshot(result.body, result.final_url, result.content_type),
    )
