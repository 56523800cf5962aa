"""The backfill's **site** phase (``site=True``): episodes found on the podcast's web site.

The site is the feed's ``link`` (``feeds.link``): its ``sitemap.xml``, else its paginated
episode listing. Pages are matched to episodes by normalized URL; the others become
``page:<url>`` episodes marked ``found_on_site_at``. Every sitemap and listing page is stored
as a ``site`` document of the walk, so a resumed backfill does not fetch it again.
"""

from __future__ import annotations

from collections.abc import Sequence
from urllib.parse import parse_qsl, urlsplit, urlunsplit

from podarchive.core.errors import Abandoned, PodarchiveError
from podarchive.core.types import EpisodeWrite, FetchRecord, FetchResult
from podarchive.core.urls import normalize_url
from podarchive.net.fetch_for import get_for
from podarchive.read.extract import page_links, sitemap_entries
from podarchive.tasks.backfill_model import SITE_PAGE_KEY, Context, Walk, on_or_after, record

#: A site document's links: (episode page URL, its date if any), and the documents to read next.
SiteLinks = tuple[list[tuple[str, str | None]], list[str]]


def site_phase(ctx: Context, walk: Walk, site: str) -> bool:
    """Find episode pages on the site; add those the feed lacks. True when nothing failed."""
    state, report, planned = walk.state, walk.report, walk.planned
    ctx.progress.start(report.label, "site", None)
    try:
        found, complete = _discover(ctx, walk, site)
    finally:
        ctx.progress.done()
    index = _page_index(ctx, walk)
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


def _page_index(ctx: Context, walk: Walk) -> dict[str, int]:
    """The feed's episodes by normalized page URL and link."""
    index: dict[str, int] = {}
    if ctx.archive is not None and walk.state.id:
        for episode_id, _key, page_url, link in ctx.archive.page_index(walk.state.id):
            for candidate in (page_url, link):
                if candidate:
                    index.setdefault(normalize_url(candidate), episode_id)
    return index


def _discover(ctx: Context, walk: Walk, site: str) -> tuple[list[str], bool]:
    """Episode page URLs from the site's sitemap.xml, else from its episode listing."""
    parts = urlsplit(site)
    origin = urlunsplit((parts.scheme, parts.netloc, "", "", ""))
    prefix = _episodes_path(parts.path)
    found, complete = _from_sitemap(ctx, walk, origin, parts.netloc, prefix)
    if found:
        return found, complete
    listed, listed_complete = _from_listing(ctx, walk, origin, parts.netloc, prefix)
    return listed, complete and listed_complete


def _from_sitemap(
    ctx: Context, walk: Walk, origin: str, netloc: str, prefix: str
) -> tuple[list[str], bool]:
    """The episode pages the sitemap (and its child sitemaps) lists; True when all were read."""
    sitemap = _site_document(ctx, walk, origin + "/sitemap.xml")
    if sitemap is None:
        return [], True  # no sitemap is no failure: the listing is tried
    entries, queue = list(sitemap[0]), list(sitemap[1])
    complete = True
    fetched = 0
    while queue and fetched < ctx.options.max_documents and not ctx.stop.is_set():
        child = _site_document(ctx, walk, queue.pop(0))
        fetched += 1
        if child is None:
            complete = False
            continue
        entries.extend(child[0])
    found = dict.fromkeys(
        url
        for url, lastmod in entries
        if _is_episode_url(url, netloc, prefix) and on_or_after(lastmod, ctx.options.since)
    )
    return list(found), complete


def _from_listing(
    ctx: Context, walk: Walk, origin: str, netloc: str, prefix: str
) -> tuple[list[str], bool]:
    """The episode pages the site's paginated listing links to; True when all were read."""
    listing = origin + prefix
    queue, visited = [listing], set[str]()
    found: dict[str, None] = {}
    complete = True
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
            if _is_episode_url(candidate, netloc, prefix):
                found.setdefault(candidate)
        queue.extend(u for u in links[1] if normalize_url(u) not in visited)
    return list(found), complete


def _site_document(
    ctx: Context, walk: Walk, url: str, *, listing: bool = False
) -> SiteLinks | None:
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
        record(ctx, walk, url, kind="site", status="failed", records=records, error=str(e))
        return None
    ctx.progress.advance()
    report.requests += len(records)
    links = _listing_links(url, result) if listing else _sitemap_links(result)
    record(ctx, walk, url, kind="site", status="ok", records=records, links=links)
    return _split_site_links(links)


def _listing_links(url: str, result: FetchResult) -> list[tuple[str, str]]:
    """A listing page's links: ("listing", its next pages) and ("page", the others)."""
    base = urlsplit(url)
    links = []
    for rel, href in page_links(result.body, result.final_url, content_type=result.content_type):
        target = urlsplit(href)
        is_next = "next" in rel.split() or (
            target.path == base.path and any(k == "page" for k, _ in parse_qsl(target.query))
        )
        links.append(("listing" if is_next else "page", href))
    return links


def _sitemap_links(result: FetchResult) -> list[tuple[str, str]]:
    """A sitemap's links: ("sitemap", its child sitemaps) and ("page <lastmod>", its pages)."""
    pages, children = sitemap_entries(result.body)
    return [("sitemap", c) for c in children] + [(f"page {m or ''}".strip(), u) for u, m in pages]


def _split_site_links(links: Sequence[tuple[str, str]]) -> SiteLinks:
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
