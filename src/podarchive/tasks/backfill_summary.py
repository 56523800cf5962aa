"""What ``podarchive backfill`` says about a :class:`BackfillReport`, as lines of text.

Pure: no click, no output. :func:`summary_lines` is the summary on stdout (per feed:
episodes per source, pages, files, failures; then the requests); :func:`ending` the lines
for stderr and the exit code (130 when stopped, 1 when a feed failed, else 0).
"""

from __future__ import annotations

from podarchive.core.errors import one_line, safe_url
from podarchive.tasks.backfill_model import BackfillReport, FeedBackfill
from podarchive.tasks.status import plural

#: The exit code of a backfill that was stopped (Ctrl-C) and of one where a feed failed.
EXIT_STOPPED, EXIT_FAILED = 130, 1


def summary_lines(report: BackfillReport) -> list[str]:
    """The summary on stdout: per feed, episodes per source, pages, failures."""
    lines = [line for f in report.feeds for line in feed_lines(f, dry_run=report.dry_run)]
    if report.dry_run:
        more = sum(len(f.would_fetch) + len(f.would_fetch_files) for f in report.feeds)
        lines.append(
            f"dry run: {plural(report.requests, 'request')} made for the feed documents; "
            f"{plural(more, 'more request', 'more requests')} for episode pages, transcripts "
            "and chapters; nothing written"
        )
    else:
        lines.append(plural(report.requests, "request"))
    return lines


def ending(report: BackfillReport) -> tuple[list[str], int]:
    """The lines for stderr after the summary, and the exit code."""
    if report.stopped:
        return ["podarchive: interrupted; run backfill again to continue"], EXIT_STOPPED
    if report.failed:
        lines = [f"podarchive: {f.label}: {one_line(f.error or '')}" for f in report.failed]
        return lines, EXIT_FAILED
    return [], 0


def feed_lines(f: FeedBackfill, *, dry_run: bool) -> list[str]:
    """One feed's part of the summary: its label, then indented lines."""
    lines = [f"{f.label}:"]
    if f.error:
        lines.append(f"  failed: {one_line(f.error)}")
    lines.append(
        f"  episodes: {f.feed_episodes} in the feed, {f.archive_new} new from "
        f"{plural(f.documents_fetched, 'archive/paged document')} fetched"
        + (f" ({f.documents_done_before} done before)" if f.documents_done_before else "")
    )
    if f.site_found or f.site_new:
        lines.append(
            f"  site: {plural(f.site_found, 'episode page')} found, {f.site_matched} in "
            f"the feed, {f.site_new} new"
        )
    lines += _would_fetch_lines(f) if dry_run else _fetched_lines(f)
    lines += [f"  failure: {safe_url(url)}: {one_line(reason)}" for url, reason in f.failures]
    return lines


def _would_fetch_lines(f: FeedBackfill) -> list[str]:
    """A dry run: each page and file it would fetch, and how many."""
    lines = [f"  would fetch {safe_url(url)}" for url in [*f.would_fetch, *f.would_fetch_files]]
    lines.append(f"  pages: would fetch {len(f.would_fetch)}")
    if f.would_fetch_files:
        lines.append(f"  transcripts and chapters: would fetch {len(f.would_fetch_files)}")
    if f.would_fetch_media or f.media_left:
        lines.append(
            f"  media: would fetch {plural(f.would_fetch_media, 'file')}, "
            f"{f.would_fetch_media_bytes} bytes declared"
            + (f" ({f.media_left} more over the budget)" if f.media_left else "")
        )
    return lines


def _fetched_lines(f: FeedBackfill) -> list[str]:
    """The pages and files fetched, how they went, and how many are left."""
    lines = [
        f"  pages: fetched {f.pages_fetched} ({f.pages_ok} ok, {f.pages_empty} without "
        f"notes, {f.pages_failed} failed)" + (f", {f.pages_left} left" if f.pages_left else "")
    ]
    if f.files_fetched or f.files_left:
        lines.append(
            f"  transcripts and chapters: fetched {f.files_fetched} ({f.files_ok} read, "
            f"{f.files_failed} failed)" + (f", {f.files_left} left" if f.files_left else "")
        )
    if f.media_stored or f.media_failed or f.media_left:
        lines.append(
            f"  media: stored {f.media_stored}, {f.media_failed} failed, {f.media_bytes} "
            "bytes moved" + (f", {f.media_left} left" if f.media_left else "")
        )
    return lines
