"""GET a URL on behalf of a feed's schedule: the one door every fetch phase goes through.

:func:`get_for` sends the schedule's User-Agent and lets its ``allow_private_hosts`` reach
private hosts; a URL taken from feed content (pages, transcripts, chapters) is untrusted, so
the address guard holds at every hop. :func:`blame_last` pins a failure found after the last
request (a parse error, a redirect loop) on that request in the fetch log.
"""

from __future__ import annotations

import dataclasses
from typing import Protocol

from podarchive.core.errors import PodarchiveError
from podarchive.core.types import FetchKind, FetchRecord, FetchResult
from podarchive.net.fetch import Fetcher
from podarchive.read.schedule_files import FeedSchedule


def get_for(
    fetcher: Fetcher,
    schedule: FeedSchedule,
    url: str,
    records: list[FetchRecord],
    *,
    kind: FetchKind,
    etag: str | None = None,
    last_modified: str | None = None,
    trusted: bool = False,
) -> FetchResult:
    """GET ``url`` on behalf of ``schedule``; every request is appended to ``records``.

    The schedule's ``user_agent`` is sent and its ``allow_private_hosts`` lets the URL reach
    private hosts. The URL is untrusted (taken from feed content: the address guard holds at
    every hop) unless ``trusted``: a feed's URL as a person configured it, or where its
    hosts' own permanent redirects moved it (``FeedState.fetch_trusted``).
    """
    return fetcher.get(
        url,
        kind=kind,
        etag=etag,
        last_modified=last_modified,
        trusted=trusted,
        user_agent=schedule.user_agent,
        allow_private_hosts=schedule.allow_private_hosts,
        log=records,
    )


def blame_last(records: list[FetchRecord], error: PodarchiveError) -> list[FetchRecord]:
    """A failure found after the last request (a parse error, a redirect loop) is its error."""
    if records and records[-1].error is None:
        return [*records[:-1], dataclasses.replace(records[-1], error=str(error))]
    return records


class Archived(Protocol):
    """Something fetched before: a page or file task, with the validators it was served with."""

    @property
    def url(self) -> str: ...
    @property
    def etag(self) -> str | None: ...
    @property
    def last_modified(self) -> str | None: ...


def get_again(
    fetcher: Fetcher,
    schedule: FeedSchedule,
    task: Archived,
    records: list[FetchRecord],
    *,
    kind: FetchKind,
) -> FetchResult:
    """A conditional GET (untrusted) of a page or file, with its stored ETag/Last-Modified."""
    return get_for(
        fetcher,
        schedule,
        task.url,
        records,
        kind=kind,
        etag=task.etag,
        last_modified=task.last_modified,
    )
