"""The backfill's **media** phase (#26): the audio and video of old episodes too.

For a feed with ``media = true``, after its pages and files: every episode's media not yet
stored (and those whose retry is due), newest first, through the run's media phase
(:class:`podarchive.update.media.MediaPhase`: resume, commit, ledger, version cap) within
the run's byte budget (``media_budget``). A dry run fetches nothing: it counts the files and
bytes (from the enclosures' declared lengths) it would fetch, of the episodes the archive
has due and of those it would store, within the same budget.
"""

from __future__ import annotations

from podarchive.core.types import Enclosure
from podarchive.rules.media import wanted_media
from podarchive.tasks.backfill_model import Context, Walk, on_or_after
from podarchive.update.media import MediaPhase, media_folder
from podarchive.update.media_feed import MediaFeed, published_at, task_files


def media_phase(ctx: Context, walk: Walk) -> None:
    """Fetch (or, in a dry run, count) the feed's media, newest episode first."""
    schedule, report = walk.schedule, walk.report
    if not schedule.media:
        return
    if not ctx.writing:
        _count(ctx, walk)
        return
    archive = ctx.archive
    assert archive is not None
    folder = media_folder(archive, ctx.settings)
    if folder is None or not walk.state.id:
        return
    feed = MediaFeed(schedule, walk.state.id, report.label)
    ctx.progress.start(report.label, "media", None)
    try:
        phase = MediaPhase(archive, ctx.fetcher, folder, ctx.settings, ctx.clock, ctx.stop)
        media = phase.run([feed])
    finally:
        ctx.progress.done()
    report.media_stored += media.stored + media.unchanged
    report.media_failed += media.failed
    report.media_left += media.partial + media.left
    report.media_bytes += media.moved
    report.failures += media.failures


def _count(ctx: Context, walk: Walk) -> None:
    """A dry run: the files and declared bytes the backfill would fetch, within the budget."""
    choice, report = walk.schedule.media_choice(), walk.report
    offered: list[tuple[tuple[Enclosure | None, list[Enclosure]], str | None]] = []
    if ctx.archive is not None and walk.state.id:
        due = ctx.archive.media_due(walk.state.id, ctx.now(), alternates=choice.media_alternates)
        offered += [(task_files(task), task.published) for task in due]
    for planned in walk.planned:
        row = planned.row
        if row.get("enclosure_url") and on_or_after(row.get("published"), ctx.options.since):
            length = row.get("enclosure_length")
            planned_file = Enclosure(
                str(row["enclosure_url"]),
                row.get("enclosure_type"),
                length if isinstance(length, int) else None,
            )
            offered.append(((planned_file, []), row.get("published")))
    offered.sort(key=lambda item: str(item[1] or ""), reverse=True)  # newest first
    budget = ctx.settings.media_budget
    for (enclosure, alternates), published in offered:
        for target in wanted_media(enclosure, alternates, published_at(published), choice):
            if target.skipped:
                continue
            size = target.length or 0
            if report.would_fetch_media_bytes + size > budget:
                report.media_left += 1
                continue
            report.would_fetch_media += 1
            report.would_fetch_media_bytes += size
