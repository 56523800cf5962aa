"""Rebuild feeds from their stored snapshots, without the network.

After a parser improvement, ``podarchive reparse`` replays every distinct body a feed was
parsed from, in the order it was seen and with the times it was seen, into a scratch
archive, and adopts the result: episodes, their feed notes and links, revisions, removal
marks and the feed's metadata. Archive pages stored by ``backfill`` are replayed as archive
pages: their episodes only, never marking anything absent nor touching the feed's metadata.
Episode pages are replayed from their kept raw bodies (schema 8, issue #12): every body an
episode's page served, in order, through the current extractor, rebuilding the page notes,
page links and page revisions, with the episode's feed notes to find them by; how they
were found (method, evidence, confidence) and the page's own transcript come from the
latest body with notes. A page archived before schema 8, whose notes are older than
any kept body, is left as it is. With an unchanged parser and extractor the archive comes
out the same as the original runs made it.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, field

from podarchive.core.errors import ConfigError, ExtractError, ParseError, safe_label, safe_url
from podarchive.core.types import PageNotes, SaveStats
from podarchive.read.jobs import read_page
from podarchive.read.parse import parse_feed
from podarchive.read.rows import channel_row, episode_writes
from podarchive.store import Archive, ArchiveLike, FeedSave
from podarchive.tasks.status import plural


@dataclass(slots=True)
class ReparseReport:
    url: str
    label: str
    bodies: int = 0
    stats: SaveStats = field(default_factory=SaveStats)
    skipped: list[str] = field(default_factory=list)  # bodies that no longer parse
    pages: int = 0  # episode pages replayed from their kept bodies
    pages_changed: int = 0  # … whose notes, links or revisions came out different
    pages_kept: int = 0  # pages archived before their bodies were kept: left as they are


def reparse(archive: ArchiveLike, feeds: Sequence[str] = ()) -> list[ReparseReport]:
    """Rebuild the named feeds (URL or name), or every feed with snapshots."""
    known = archive.feeds()
    chosen = [f for f in known if not feeds or f[1] in feeds or f[2] in feeds]
    missing = [name for name in feeds if not any(name in (url, label) for _, url, label in known)]
    if missing:
        raise ConfigError(f"no such feed in the archive: {safe_label(missing[0])}")
    reports = []
    for feed_id, url, name in chosen:
        report = _reparse_one(archive, feed_id, url, name)
        _replay_pages(archive, feed_id, report)
        reports.append(report)
    return reports


def report_line(r: ReparseReport) -> str:
    """What ``podarchive reparse`` says about one feed, on stdout."""
    s = r.stats
    episodes = "episode" if s.new + s.changed + s.unchanged == 1 else "episodes"
    return (
        f"{r.label}: {plural(r.bodies, 'body', 'bodies')} replayed; {s.new} new, "
        f"{s.changed} changed, {s.unchanged} unchanged {episodes}; "
        f"{plural(r.pages, 'page')} re-read ({r.pages_changed} changed, {r.pages_kept} "
        "kept as they were)"
    )


def skipped_lines(r: ReparseReport) -> list[str]:
    """What ``podarchive reparse`` says on stderr about one feed: the bodies it skipped."""
    return [f"podarchive: {r.label}: skipped a body seen {problem}" for problem in r.skipped]


def fill_tags(archive: ArchiveLike, now: str) -> list[ReparseReport]:
    """Once after the upgrade to schema 9: the feeds archived before it are rebuilt from their
    snapshots, which fills their ``tags`` (every version) like a fresh archive's (#13)."""
    reports = []
    for feed_id, url, name in archive.feeds_without_tags():
        reports.append(_reparse_one(archive, feed_id, url, name))
        archive.mark_tags_filled(feed_id, now)
    return reports


def _replay_pages(archive: ArchiveLike, feed_id: int, report: ReparseReport) -> None:
    """Re-extract every kept page body of the feed's episodes and rebuild their page side."""
    for episode_id, feed_notes in archive.episodes_with_page_bodies(feed_id):
        if not archive.page_bodies_cover_history(episode_id):
            report.pages_kept += 1
            continue
        versions: list[tuple[str, PageNotes]] = []
        for seen_at, body in archive.page_observations(episode_id):
            try:
                notes = read_page(body.body, body.url, body.content_type, feed_notes)
            except ExtractError:
                continue  # no notes in this body: the earlier ones stay current
            versions.append((seen_at, notes))
        report.pages += 1
        report.pages_changed += archive.rebuild_page_history(episode_id, versions)


def _reparse_one(archive: ArchiveLike, feed_id: int, url: str, name: str | None) -> ReparseReport:
    report = ReparseReport(url, safe_label(name) if name else safe_url(url))
    observations = archive.replay_observations(feed_id)
    if not observations:
        return report
    with Archive(":memory:") as scratch:
        scratch_id = scratch.ensure_feed(url, name, observations[0][0]).id
        seen: set[str] = set()  # keys of the last feed body and the archive pages after it
        for seen_at, body, body_url, content_type, kind in observations:
            headers = {"content-type": content_type} if content_type else {}
            try:
                parsed = parse_feed(body, headers, url=body_url)
            except ParseError as e:
                report.skipped.append(f"{seen_at}: {e}")
                continue
            writes, _ = episode_writes(parsed, body_url)
            if kind == "archive":  # a backfilled archive page: its episodes only
                scratch.save_archive_episodes(
                    scratch_id, writes, seen=frozenset(seen), now=seen_at, source=body_url
                )
                seen.update(w.key for w in writes)
                report.bodies += 1
                continue
            seen = {w.key for w in writes}
            scratch.save_feed(
                FeedSave(
                    scratch_id,
                    channel_row(parsed.channel),
                    writes,
                    status=200,
                    etag=None,
                    last_modified=None,
                    content_hash=hashlib.sha256(body).hexdigest(),
                    now=seen_at,
                    records=[],
                    complete=parsed.channel.complete,
                    mark_absent=not parsed.recovered,
                    channel_tags=parsed.channel.tags,
                )
            )
            report.bodies += 1
        history = scratch.export_history(scratch_id)
    report.stats = archive.import_history(feed_id, history)
    return report
