"""A run's bookkeeping per feed: the tallies and log lines of its pages and files, and the
fingerprint of the settings its pages and files were fetched with."""

from __future__ import annotations

import functools
import json
import logging

from podarchive import USER_AGENT
from podarchive.core.errors import one_line, safe_url
from podarchive.core.settings import Settings
from podarchive.core.types import PageResult
from podarchive.read.schedule_files import FeedSchedule
from podarchive.update.files import FileOutcome
from podarchive.update.one_feed import FeedReport
from podarchive.update.pages import PageOutcome, count_page

log = logging.getLogger("podarchive")


def fetch_settings(schedule: FeedSchedule, settings: Settings) -> str:
    """The settings a feed's pages and files are fetched with, as JSON (kept per feed).

    Effective values: ``allow_private_hosts`` from the schedule or the run
    (``--allow-private-hosts``), a user agent given by the schedule or the environment.
    """
    agent = schedule.user_agent or (
        settings.user_agent if settings.user_agent != USER_AGENT else None
    )
    private = schedule.allow_private_hosts or settings.allow_private_hosts
    return _settings_json(private, agent, schedule.pages, schedule.transcripts, schedule.chapters)


@functools.lru_cache(maxsize=256)  # a handful of distinct values in a run (#30)
def _settings_json(
    private: bool, agent: str | None, pages: bool, transcripts: bool, chapters: bool
) -> str:
    values = {
        "allow_private_hosts": private,
        "user_agent": agent,
        "pages": pages,
        "transcripts": transcripts,
        "chapters": chapters,
    }
    return json.dumps(values, sort_keys=True, ensure_ascii=False)


def changed_settings(before: str, now: str) -> list[str]:
    try:
        old = json.loads(before)
    except ValueError:
        old = {}
    new = json.loads(now)
    return sorted(k for k in new if not isinstance(old, dict) or old.get(k) != new[k])


def count_page_outcome(report: FeedReport, status: PageResult, outcome: PageOutcome) -> None:
    report.pages_pending -= 1
    if count_page(report, status):
        log.info("%s: page %s: %s", report.label, safe_url(outcome.task.url), outcome.error)
    if status == "failed":
        report.problems.append(("page", str(outcome.error)))


def count_file(report: FeedReport, status: PageResult, outcome: FileOutcome) -> None:
    report.pages_pending -= 1
    if status == "failed":
        report.files_failed += 1
        report.problems.append((outcome.task.kind, str(outcome.error)))
        url = safe_url(outcome.task.url)
        log.info("%s: %s %s: %s", report.label, outcome.task.kind, url, outcome.error)
    else:
        report.files_ok += 1


def log_feed(report: FeedReport) -> None:
    if report.error:
        log.info("%s: failed: %s", report.label, report.error)
    elif report.not_modified:
        log.info("%s: unchanged", report.label)
    else:
        s = report.stats
        log.info(
            "%s: %d new, %d changed, %d unchanged episodes; pages: %d ok, %d empty, %d failed",
            *(report.label, s.new, s.changed, s.unchanged),
            *(report.pages_ok, report.pages_empty, report.pages_failed),
        )
        if report.files_ok or report.files_failed:
            log.info(
                "%s: transcripts and chapters: %d read, %d failed",
                *(report.label, report.files_ok, report.files_failed),
            )
    if report.moved_to:
        moved = safe_url(report.moved_to)
        log.warning("%s: moved to %s (update its schedule file)", report.label, moved)
    for warning in report.warnings:
        log.info("%s: warning: %s", report.label, one_line(warning))
