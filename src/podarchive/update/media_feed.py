"""What a run's media phase is given and reads, light: a feed whose media is to be fetched
(:class:`MediaFeed`) and a due task's files and date. Shared by the phase
(:mod:`podarchive.update.media`), its downloads (:mod:`podarchive.update.media_jobs`) and the
backfill's media, without importing the downloads (#30).
"""

from __future__ import annotations

from datetime import datetime

from podarchive.core.clock import parse_iso
from podarchive.core.records import record
from podarchive.core.types import Enclosure
from podarchive.read.schedule_files import FeedSchedule
from podarchive.rules.media import alternate_sources
from podarchive.store import MediaTask


@record
class MediaFeed:
    """A stored feed whose media is to be fetched in this run."""

    schedule: FeedSchedule
    feed_id: int
    label: str


def task_files(task: MediaTask) -> tuple[Enclosure | None, list[Enclosure]]:
    """A due task as :func:`~podarchive.rules.media.wanted_media` takes it: the episode's
    enclosure, or one of its alternate enclosure sources
    (:func:`~podarchive.rules.media.alternate_sources`)."""
    if task.source == "alternate":
        return None, alternate_sources(task.content_type, task.length, [(task.url, None)])
    return Enclosure(task.url, task.content_type, task.length), []


def published_at(text: object) -> datetime | None:
    """An episode's stored publish time as a datetime (None: none, or not a date)."""
    try:
        return parse_iso(str(text)) if text else None
    except ValueError:
        return None
