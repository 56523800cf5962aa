"""Streaming, resumable media downloads: one URL into a partial file, through Fetcher's guards.

:func:`download` GETs a media URL with the same client, address guard (every redirect hop of
an untrusted URL), per-host turns, total deadline (``netguard.budget``), fetch records (one
:class:`FetchRecord` per request, kind ``media``) and error translation as
:meth:`Fetcher.get`; it reaches Fetcher's protected helpers as a sibling in ``net``. Unlike
``get`` it never holds the body: chunks go straight to the partial file, which is fsynced when
the transfer ends, however it ends (a stop, the deadline, a dropped connection, Abandoned).
The body is never decoded (``Accept-Encoding: identity``): the bytes stored are the bytes sent.

Resume: a partial file with bytes in it is continued with ``Range`` + ``If-Range`` (the
validator, an ETag or Last-Modified, of the response that wrote it). The validator is kept
beside the partial file (``<partial>.validator``, see :func:`validator_path`) so that a run
killed mid-transfer resumes the next time without the caller storing anything; it is removed
when the file is complete. A 200 to a Range (the server ignores ranges, or the validator
changed) rewrites the file from byte 0 (``restarted``); a 206 that does not start where the
file ends, or a 416 whose total is not the file's size, discards it and asks once more from 0.
"""

from __future__ import annotations

import os
import re
import threading
import time
from contextlib import closing
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO
from urllib.parse import urlsplit

import httpx

from podarchive.core.clock import now_iso, utcnow
from podarchive.core.errors import (
    Abandoned,
    BodyTooLarge,
    FetchError,
    FetchTimeout,
    HTTPStatusError,
    RedirectError,
    shorten,
)
from podarchive.core.types import Exchange, FetchRecord
from podarchive.net import netguard
from podarchive.net.fetch import (
    REDIRECT_STATUSES,
    Fetcher,
    _bad_url,
    _first_line,
    _record,
    _status_reason,
)
from podarchive.net.wire import _format_size, exchange_of
from podarchive.rules.policy import parse_retry_after

KIND = "media"
_RANGE = re.compile(r"bytes\s+(\d+)-(\d+)/(\d+|\*)\s*$", re.IGNORECASE)
_UNSATISFIED = re.compile(r"bytes\s+\*/(\d+)\s*$", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class Download:
    """What one :func:`download` call did to the partial file."""

    status: int  # the final HTTP status (200, 206, 304, 416)
    final_url: str
    headers: dict[str, str]  # the final response's headers, lower-case names
    received: int  # bytes written to the partial file by this call
    size: int  # bytes now in the partial file
    total: int | None  # the full length (Content-Length or the Content-Range total)
    complete: bool  # size == total, or no total given and the body ended cleanly
    not_modified: bool = False  # a 304 to a conditional re-check: nothing written
    restarted: bool = False  # bytes already in the partial file were discarded
    stopped: str | None = None  # "stopped" (the stop event) or "deadline": ended early
    etag: str | None = None
    last_modified: str | None = None
    #: every response of this call, in order (redirect hops, a refused resume, the final
    #: answer), as sent and received (#27); the body is the partial file's bytes
    exchanges: tuple[Exchange, ...] = ()


class _Restart(Exception):
    """The resume cannot go on (a 416 or a 206 at the wrong offset): ask again from 0."""


@dataclass(slots=True)
class _Job:
    """What every request of one :func:`download` shares; ``offset`` is where writing resumes."""

    partial: Path
    headers: dict[str, str]
    trusted: bool
    max_bytes: int
    records: list[FetchRecord]
    stop: threading.Event | None
    chunk: int
    offset: int = 0
    discarded: bool = False  # the partial file's bytes were (or will be) thrown away
    received: int = field(default=0)
    exchanges: list[Exchange] = field(default_factory=list)


def validator_path(partial: Path) -> Path:
    """Where the validator of the response that wrote ``partial`` is kept."""
    return partial.with_name(partial.name + ".validator")


def discard(partial: Path) -> None:
    """Remove a partial file and its validator (a download given up, or committed)."""
    for path in (partial, validator_path(partial)):
        path.unlink(missing_ok=True)


def download(
    fetcher: Fetcher,
    url: str,
    partial: Path,
    *,
    records: list[FetchRecord],
    max_bytes: int,
    trusted: bool = False,
    user_agent: str | None = None,
    allow_private_hosts: bool = False,
    etag: str | None = None,
    last_modified: str | None = None,
    resume_validator: str | None = None,
    stop: threading.Event | None = None,
    deadline: float | None = None,
    chunk: int = 1 << 16,
) -> Download:
    """GET ``url`` into ``partial``, resuming what it holds; every request goes to ``records``.

    ``etag``/``last_modified`` make a conditional re-check when there is nothing to resume
    (a 304 is ``not_modified``). ``resume_validator`` overrides the validator kept beside the
    partial file. ``stop`` (checked after each chunk) and the deadline (``deadline`` seconds,
    default ``settings.deadline``) end the transfer early keeping what was written. More than
    ``max_bytes`` raises BodyTooLarge and removes the partial file; a 4xx/5xx raises
    HTTPStatusError, as :meth:`Fetcher.get` does; a refused URL raises BlockedURL.
    """
    settings = fetcher.settings
    trusted = trusted or allow_private_hosts or settings.allow_private_hosts
    job = _Job(partial, {}, trusted, max_bytes, records, stop, chunk)
    _plan(job, user_agent, etag, last_modified, resume_validator)
    logged, started_at, start = len(records), now_iso(), time.monotonic()
    try:
        with netguard.budget(deadline or settings.deadline):
            try:
                return _follow(fetcher, url, job)
            except _Restart:
                return _from_zero(fetcher, url, job)
    except Abandoned:
        raise
    except FetchError as e:
        if len(records) == logged:  # refused before a request was sent: a row all the same
            records.append(_record(e.url or url, KIND, started_at, start, None, 0, str(e)))
        raise


def _from_zero(fetcher: Fetcher, url: str, job: _Job) -> Download:
    """Ask once more without Range: the partial file's bytes are rewritten from byte 0."""
    job.offset, job.discarded = 0, True
    for name in ("Range", "If-Range"):
        job.headers.pop(name, None)
    try:
        return _follow(fetcher, url, job)
    except _Restart as e:  # a 206 or 416 to a request without Range
        raise FetchError("partial answer to a request for the whole file", url=url) from e


def _plan(
    job: _Job,
    user_agent: str | None,
    etag: str | None,
    last_modified: str | None,
    resume_validator: str | None,
) -> None:
    """The first request's headers: a resume (Range + If-Range), else a conditional GET."""
    headers = job.headers
    headers.update({"Accept": "*/*", "Accept-Encoding": "identity"})
    if user_agent:
        headers["User-Agent"] = user_agent
    have = job.partial.stat().st_size if job.partial.exists() else 0
    validator = resume_validator or _saved_validator(job.partial)
    if have and validator:
        job.offset = have
        headers.update({"Range": f"bytes={have}-", "If-Range": validator})
        return
    job.discarded = have > 0  # bytes that cannot be resumed without a validator
    if etag:
        headers["If-None-Match"] = etag
    if last_modified:
        headers["If-Modified-Since"] = last_modified


def _follow(fetcher: Fetcher, url: str, job: _Job) -> Download:
    """Follow redirects from ``url``, each hop checked and recorded, to the final answer."""
    seen, current, hops = {url}, url, 0
    while True:
        fetcher._check_url(current, job.trusted)
        fetcher._hosts.check(urlsplit(current).hostname or "")
        answer = _exchange(fetcher, current, job)
        if isinstance(answer, Download):
            return answer
        hops += 1
        if answer in seen:
            raise RedirectError(f"redirect loop at {shorten(answer)}", url=url)
        if hops > fetcher.settings.max_redirects:
            raise RedirectError(f"more than {fetcher.settings.max_redirects} redirects", url=url)
        seen.add(answer)
        current = answer


def _exchange(fetcher: Fetcher, url: str, job: _Job) -> Download | str:
    """One request, recorded: a Download, or a redirect's target URL."""
    if fetcher._abort.is_set():
        raise Abandoned(url=url)
    started_at, start = now_iso(), time.monotonic()
    status: int | None = None
    job.received = 0
    client = fetcher._clients[job.trusted]
    host = urlsplit(url).hostname or ""

    def log(error: str | None) -> None:
        job.records.append(_record(url, KIND, started_at, start, status, job.received, error))

    try:
        request = client.build_request("GET", url, headers=job.headers)
        with fetcher._turn(host) as sent, closing(client.send(request, stream=True)) as r:
            sent()
            status = r.status_code
            job.exchanges.append(exchange_of(request, r, started_at))
            answer = _answer(fetcher, url, r, job)
    except httpx.InvalidURL as e:
        error: FetchError = _bad_url(e, url)
        log(str(error))
        raise error from e
    except FetchError as e:
        e.url = e.url or url
        log(str(e))
        raise
    except _Restart:
        log("resume refused: asking again from byte 0")
        raise
    except httpx.HTTPError as e:
        if fetcher._abort.is_set():
            raise Abandoned(url=url) from e
        error = fetcher._translate(e, url)
        log(str(error))
        raise error from e
    except Exception as e:  # e.g. "the client has been closed" after abort()
        if fetcher._abort.is_set():
            raise Abandoned(url=url) from e
        log(f"{type(e).__name__}: {_first_line(e)}")
        raise
    stopped = answer.stopped if isinstance(answer, Download) else None
    log(f"ended early: {stopped}" if stopped else None)
    return answer


def _answer(fetcher: Fetcher, url: str, r: httpx.Response, job: _Job) -> Download | str:
    """Read one response: a redirect's target, or its body written to the partial file."""
    headers = {k.lower(): v for k, v in r.headers.items()}
    status = r.status_code
    if status in REDIRECT_STATUSES and "location" in headers:
        return fetcher._redirect_target(url, headers["location"])
    if status == 304:
        size = job.partial.stat().st_size if job.partial.exists() else 0
        return _result(r, headers, job, size, None, complete=False, not_modified=True)
    if status == 416:
        return _unsatisfied(r, headers, job)
    if status >= 400 or status < 200:
        raise _refused(fetcher, url, status, headers)
    start, total = _body_start(status, headers, job)
    if total is not None and total > job.max_bytes:
        discard(job.partial)
        raise BodyTooLarge(f"body over {_format_size(job.max_bytes)}")
    return _stream(fetcher, r, headers, job, start, total)


def _refused(fetcher: Fetcher, url: str, status: int, headers: dict[str, str]) -> HTTPStatusError:
    """A 4xx/5xx as :meth:`Fetcher.get` reports it; a Retry-After blocks the host."""
    retry_after = headers.get("retry-after")
    until = parse_retry_after(retry_after, utcnow())
    if status in (429, 503) and until is not None:
        fetcher._hosts.block(urlsplit(url).hostname or "", until)
    return HTTPStatusError(status, _status_reason(status), url=url, retry_after=retry_after)


def _body_start(status: int, headers: dict[str, str], job: _Job) -> tuple[int, int | None]:
    """Where a 2xx body goes in the partial file, and the file's full length if known."""
    if status == 206:
        start, total = _content_range(headers.get("content-range", ""))
        if not job.offset or start != job.offset:
            raise _Restart()
        return start, total
    # a whole body: the server ignored the Range, or the validator changed
    job.discarded = job.discarded or job.offset > 0
    job.offset = 0
    return 0, _content_length(headers)


def _unsatisfied(r: httpx.Response, headers: dict[str, str], job: _Job) -> Download:
    """A 416: the partial file is already whole when the total is its size; else restart."""
    match = _UNSATISFIED.match(headers.get("content-range", "").strip())
    total = int(match.group(1)) if match else None
    if not job.offset or total != job.offset:
        raise _Restart()
    validator_path(job.partial).unlink(missing_ok=True)
    return _result(r, headers, job, job.offset, total, complete=True)


def _stream(
    fetcher: Fetcher,
    r: httpx.Response,
    headers: dict[str, str],
    job: _Job,
    start: int,
    total: int | None,
) -> Download:
    """Write the body from byte ``start`` of the partial file, chunk by chunk, then fsync."""
    job.partial.parent.mkdir(parents=True, exist_ok=True)
    _save_validator(job.partial, headers, keep_old=start > 0)
    stopped: str | None = None
    with open(job.partial, "r+b" if start else "wb") as f:
        f.seek(start)
        f.truncate()
        try:
            stopped = _copy(fetcher, r, f, job, start)
        except BodyTooLarge:
            f.close()
            discard(job.partial)
            raise
        finally:
            if not f.closed:
                f.flush()
                os.fsync(f.fileno())
    size = start + job.received
    complete = stopped is None and (total is None or size == total)
    if complete:
        validator_path(job.partial).unlink(missing_ok=True)
    return _result(r, headers, job, size, total, complete=complete, stopped=stopped)


def _copy(fetcher: Fetcher, r: httpx.Response, f: BinaryIO, job: _Job, start: int) -> str | None:
    """Copy the raw body into ``f``; returns why it ended early ("stopped", "deadline")."""
    budget = netguard.current_budget()
    try:
        for data in r.iter_raw(job.chunk):
            f.write(data)
            job.received += len(data)
            if start + job.received > job.max_bytes:
                raise BodyTooLarge(f"body over {_format_size(job.max_bytes)}")
            if fetcher._abort.is_set():
                raise Abandoned()
            if job.stop is not None and job.stop.is_set():
                return "stopped"
            if budget is not None:
                budget.check()
    except FetchTimeout:
        if budget is None or budget.left() > 0:
            raise  # a chunk's read timeout, not the deadline: a failure, the partial kept
        return "deadline"
    return None


def _result(
    r: httpx.Response,
    headers: dict[str, str],
    job: _Job,
    size: int,
    total: int | None,
    *,
    complete: bool,
    not_modified: bool = False,
    stopped: str | None = None,
) -> Download:
    return Download(
        status=r.status_code,
        final_url=str(r.url),
        headers=headers,
        received=job.received,
        size=size,
        total=total,
        complete=complete,
        not_modified=not_modified,
        restarted=job.discarded and not not_modified,
        stopped=stopped,
        etag=headers.get("etag"),
        last_modified=headers.get("last-modified"),
        exchanges=tuple(job.exchanges),
    )


def _content_range(value: str) -> tuple[int | None, int | None]:
    """``bytes a-b/t`` → (a, t); t is None for ``*``; (None, None) when unreadable."""
    match = _RANGE.match(value.strip())
    if not match:
        return None, None
    total = match.group(3)
    return int(match.group(1)), None if total == "*" else int(total)


def _content_length(headers: dict[str, str]) -> int | None:
    declared = headers.get("content-length", "").strip()
    return int(declared) if declared.isdigit() else None


def _saved_validator(partial: Path) -> str | None:
    try:
        text = validator_path(partial).read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError):
        return None
    return text or None


def strong_validator(etag: str | None, last_modified: str | None) -> str | None:
    """What a resume of a body sends as If-Range: its strong ETag, else its Last-Modified."""
    return etag if etag and not etag.startswith("W/") else last_modified


def _save_validator(partial: Path, headers: dict[str, str], *, keep_old: bool) -> None:
    """Keep the body's validator (a strong ETag, else Last-Modified) beside it; with none,
    remove the old one unless ``keep_old`` (a 206 continues the body the old one names)."""
    validator = strong_validator(headers.get("etag"), headers.get("last-modified"))
    path = validator_path(partial)
    if not validator:
        if not keep_old:
            path.unlink(missing_ok=True)
        return
    with open(path, "w", encoding="utf-8") as f:
        f.write(validator)
        f.flush()
        os.fsync(f.fileno())
