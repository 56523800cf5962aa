"""``podarchive status``: the feeds' health and the daemon's heartbeat, as text or JSON.

Pure functions over what :meth:`Archive.feed_statuses` returns and what the daemon writes in
``<db>.daemon.json`` (plus the small atomic read/write of that file). ``now`` is always a
parameter. The JSON shape (``STATUS_FORMAT`` 1) is documented in docs/status.md::

    {"format": 1, "generated_at": ISO, "failing_for_seconds": N,
     "failing": [url, ...],                      # failing longer than the threshold
     "daemon": {"state": "running"|"dead"|"stopped"|"none", "live": bool, ...heartbeat},
     "feeds": [{"url", "name", "title", "fetch_url", "first_seen_at", "last_fetched_at",
                "last_success_at", "last_error", "last_error_at", "error_count",
                "next_due_at", "gone_at", "episodes", "pages_pending", "pages_failed",
                "pages_empty", "pages_missing", "page_errors", "transcripts_failing",
                "chapters_failing", "file_error", "file_errors", "kept_fewer",
                "pages_low_confidence", "media_errors", "failing"},
               ...],
     "last_audit": null | {"checked_at", "checked", "bytes", "damaged"}}

``transcripts_failing`` / ``chapters_failing`` count the listed files whose last fetch failed;
``file_error`` is the latest one's reason. ``page_errors`` / ``file_errors`` count the failing
pages and files by reason (:func:`reason_of`: ``{"blocked: private address": 9}``), commonest
first. ``kept_fewer`` is None, or the warning of a feed whose latest body read gave fewer
episodes than feedparser read items (``kept 9 of the 10 items feedparser read: …``); the
text shows it on a line of its own under the table. ``pages_low_confidence`` counts the
feed's archived pages whose notes were found with a confidence below
:data:`~podarchive.core.types.LOW_CONFIDENCE` (#24): a line of its own under the table too.
``media_errors`` counts the feed's media files whose last download failed, by reason (#26):
one line per feed under the table (:func:`media_lines`).

The same reasons, with what to do about each (:func:`fix_for`), make the line ``podarchive
run`` prints for a feed whose pages or files failed (:func:`problem_line`).
"""

from __future__ import annotations

import json
import os
import re
import tempfile
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from podarchive.core.clock import iso
from podarchive.core.errors import one_line, safe_label, safe_url
from podarchive.core.types import LOW_CONFIDENCE
from podarchive.rules.push import Subscription, push_line

STATUS_FORMAT = 1
HEARTBEAT_STALE = timedelta(seconds=60)  # no heartbeat for this long: the daemon is dead
_ERROR_WIDTH = 48


def heartbeat_path(db: Path) -> Path:
    return Path(f"{db}.daemon.json")


def parse_time(text: object) -> datetime | None:
    if not isinstance(text, str) or not text:
        return None
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        return None
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


# heartbeat --------------------------------------------------------------------------------


def write_heartbeat(path: Path, data: Mapping[str, Any]) -> None:
    """Replace ``path`` atomically (temp file in the same directory, then ``os.replace``)."""
    fd, temp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump(data, f, ensure_ascii=False, indent=1)
            f.write("\n")
        os.replace(temp, path)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise


def read_heartbeat(path: Path) -> dict[str, Any] | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def pid_alive(pid: object) -> bool:
    if not isinstance(pid, int) or pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # someone else's process: it exists
    return True


def daemon_state(heartbeat: Mapping[str, Any] | None, now: datetime) -> dict[str, Any]:
    """``state``: ``none`` (never ran), ``stopped`` (clean exit), ``running`` or ``dead``.

    Running means the pid is alive and the last heartbeat is recent: younger than
    :data:`HEARTBEAT_STALE` or three ticks, whichever is longer.
    """
    if heartbeat is None:
        return {"state": "none", "live": False}
    out: dict[str, Any] = dict(heartbeat)
    beat = parse_time(heartbeat.get("heartbeat_at"))
    tick = heartbeat.get("tick")
    stale = HEARTBEAT_STALE
    if isinstance(tick, int | float) and not isinstance(tick, bool) and tick > 0:
        stale = max(stale, timedelta(seconds=3 * tick))
    age = (now - beat).total_seconds() if beat else None
    out["heartbeat_age_seconds"] = round(age, 1) if age is not None else None
    if heartbeat.get("state") == "stopped":
        out.update(state="stopped", live=False)
    elif beat and now - beat < stale and pid_alive(heartbeat.get("pid")):
        out.update(state="running", live=True)
    else:
        out.update(state="dead", live=False)
    return out


def daemon_line(state: Mapping[str, Any], now: datetime) -> str:
    kind = state["state"]
    if kind == "none":
        return "daemon: not running (no heartbeat file)"
    beat = parse_time(state.get("heartbeat_at"))
    since = _ago(beat, now) if beat else "never"
    if kind == "stopped":
        stopped = parse_time(state.get("stopped_at"))
        return f"daemon: stopped {_ago(stopped, now) if stopped else ''} (pid {state.get('pid')})"
    if kind == "dead":
        return f"daemon: DEAD (pid {state.get('pid')}, last heartbeat {since})"
    feeds = state.get("feeds")
    scheduled = plural(feeds, "feed") if isinstance(feeds, int) else f"{feeds or '?'} feeds"
    line = (
        f"daemon: running (pid {state.get('pid')}, since {state.get('started_at')}), "
        f"heartbeat {since}: {state.get('activity', '?')}; {scheduled} scheduled"
    )
    cycle = state.get("last_cycle")
    if isinstance(cycle, Mapping):
        line += f"; last cycle {cycle.get('finished_at', '?')}: {cycle.get('summary', '')}"
    return line


# feeds ------------------------------------------------------------------------------------


def is_failing(feed: Mapping[str, Any], now: datetime, threshold: timedelta) -> bool:
    """Failing for longer than ``threshold``: errors now, and no success since (or since it was
    first seen) for longer than that. Gone feeds (410) are not polled any more: not failing."""
    if not feed.get("error_count") or feed.get("gone_at"):
        return False
    since = parse_time(feed.get("last_success_at")) or parse_time(feed.get("first_seen_at"))
    return since is None or now - since > threshold


def report(
    feeds: Sequence[Mapping[str, Any]],
    heartbeat: Mapping[str, Any] | None,
    now: datetime,
    threshold: timedelta,
    last_audit: Mapping[str, Any] | None = None,
    *,
    push: Sequence[Subscription] = (),
    podping: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The ``--json`` document (see the module docstring); ``last_audit``: the archive's
    latest fixity audit (``podarchive audit``), if any; ``push``: the WebSub subscriptions
    (#29), each feed's as its ``push`` (None: not pushed)."""
    rows = []
    pushed = {sub.feed_url: sub for sub in push}
    for feed in feeds:
        row = dict(feed)
        sub = pushed.get(str(feed.get("url")))
        row["push"] = None if sub is None else _push_state(sub)
        row["pages_missing"] = sum(int(feed.get(k) or 0) for k in _PAGE_KEYS)
        row["page_errors"] = reasons(feed.get("page_errors") or {})
        row["file_errors"] = reasons(feed.get("file_errors") or {})
        row["media_errors"] = reasons(feed.get("media_errors") or {})
        row["failing"] = is_failing(feed, now, threshold)
        rows.append(row)
    return {
        "format": STATUS_FORMAT,
        "generated_at": iso(now),
        "failing_for_seconds": int(threshold.total_seconds()),
        "failing": [row["url"] for row in rows if row["failing"]],
        "daemon": daemon_state(heartbeat, now),
        "feeds": rows,
        "last_audit": dict(last_audit) if last_audit else None,
        "podping": dict(podping) if podping else None,
    }


_PAGE_KEYS = ("pages_pending", "pages_failed", "pages_empty")
COLUMNS = (
    "FEED", "LAST SUCCESS", "ERRORS", "LAST ERROR", "NEXT DUE", "EPISODES", "PAGES MISSING",
    "FILES FAILING", "MOVED/GONE",
)  # fmt: skip


def render_table(doc: Mapping[str, Any], now: datetime) -> str:
    """A plain aligned text table, one feed per line, then the daemon's line."""
    lines = feed_lines(doc["feeds"], now)
    if not doc["feeds"]:
        lines.append("(no feeds in the archive yet)")
    lines.extend(warning_lines(doc["feeds"]))
    lines.extend(media_lines(doc["feeds"]))
    lines.extend(push_lines(doc["feeds"]))
    lines.append("")
    lines.append(daemon_line(doc["daemon"], now))
    if doc.get("last_audit"):
        lines.append(audit_line(doc["last_audit"], now))
    if doc.get("podping"):
        lines.append(podping_line(doc["podping"], now))
    lines.extend(failing_lines(doc))
    return "\n".join(lines) + "\n"


def feed_lines(feeds: Sequence[Mapping[str, Any]], now: datetime) -> list[str]:
    """The table's lines: its header, then one line per feed."""
    rows = [COLUMNS] + [_cells(feed, now) for feed in feeds]
    widths = [max(len(row[i]) for row in rows) for i in range(len(COLUMNS))]
    return [
        "  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip()
        for row in rows
    ]


def warning_lines(feeds: Sequence[Mapping[str, Any]]) -> list[str]:
    """One line per feed whose latest body lost episodes (``kept_fewer``), then one per feed
    with pages whose notes are low-confidence, under the table."""
    lines = [
        f"warning: {_name(f)}: {one_line(f['kept_fewer'])}" for f in feeds if f.get("kept_fewer")
    ]
    lines.extend(
        f"low confidence: {_name(f)}: {plural(n, 'page')} whose notes were found with a "
        f"confidence below {LOW_CONFIDENCE} (episodes.page_evidence says why)"
        for f in feeds
        if (n := int(f.get("pages_low_confidence") or 0))
    )
    return lines


def audit_line(audit: Mapping[str, Any], now: datetime) -> str:
    """``last audit: 2h ago: 12 files (1.2 GB), 1 damaged``: the latest fixity audit."""
    at = parse_time(audit.get("checked_at"))
    when = _ago(at, now) if at else "?"
    checked = plural(int(audit.get("checked") or 0), "file")
    damaged = int(audit.get("damaged") or 0)
    found = f"{damaged} damaged (run 'podarchive audit' for which)" if damaged else "all intact"
    return f"last audit: {when}: {checked} ({size_text(int(audit.get('bytes') or 0))}), {found}"


def podping_line(cursor: Mapping[str, Any], now: datetime) -> str:
    """``podping: block 91000123 (made 2026-12-06T12:00:00), read 4s ago`` (#29)."""
    line = f"podping: block {cursor.get('block')}"
    if cursor.get("block_time"):
        line += f" (made {cursor['block_time']})"
    read = parse_time(cursor.get("updated_at"))
    return line + (f", read {_ago(read, now)}" if read else "")


def size_text(size: int) -> str:
    """``12.5 MB``, ``980 bytes``: decimal units, one decimal."""
    if size < 1000:
        return plural(size, "byte")
    value, unit = float(size), "bytes"
    for larger in ("kB", "MB", "GB", "TB"):
        if value < 1000:
            break
        value, unit = value / 1000, larger
    return f"{value:.1f} {unit}"


def media_lines(feeds: Sequence[Mapping[str, Any]]) -> list[str]:
    """One line per feed and reason its episodes' media failed the last download (#26),
    commonest first: ``media: Show: 2 files failing: HTTP 404 Not Found; retried with
    back-off``."""
    lines = []
    for feed in feeds:
        errors = feed.get("media_errors")
        if not isinstance(errors, Mapping):
            continue
        for reason, count in errors.items():  # commonest first (report's reasons)
            lines.append(
                f"media: {_name(feed)}: {plural(int(count), 'file')} failing: "
                f"{_cut(str(reason))}; retried with back-off"
            )
    return lines


def _push_state(sub: Subscription) -> dict[str, Any]:
    return {
        "state": sub.state,
        "hub": sub.hub,
        "topic": sub.topic,
        "lease_until": sub.lease_until,
        "last_notified_at": sub.last_notified_at,
        "notifications": sub.notifications,
        "last_error": sub.last_error,
        "line": push_line(sub),
    }


def push_lines(feeds: Sequence[Mapping[str, Any]]) -> list[str]:
    """One line per feed with a WebSub subscription (#29): ``push: Show: subscribed until
    …, last notification …`` (feeds without one are polled only, and not listed)."""
    return [
        f"push: {_name(f)}: {one_line(f['push']['line'].removeprefix('push: '))}"
        for f in feeds
        if isinstance(f.get("push"), Mapping)
    ]


def failing_lines(doc: Mapping[str, Any]) -> list[str]:
    if not doc["failing"]:
        return []
    days = _span(timedelta(seconds=doc["failing_for_seconds"]))
    return [f"failing for more than {days}: {plural(len(doc['failing']), 'feed')}"]


def _name(feed: Mapping[str, Any]) -> str:
    """The feed's name, title or URL, escaped and shortened (one line)."""
    named = feed.get("name") or feed.get("title")
    return safe_label(str(named)) if named else safe_url(str(feed["url"]))


def _cells(feed: Mapping[str, Any], now: datetime) -> tuple[str, ...]:
    """The feed's cells: names, URLs and errors escaped and shortened (one line each)."""
    name = _name(feed)
    if feed.get("failing"):
        name = f"! {name}"
    success = parse_time(feed.get("last_success_at"))
    error = _cut(str(feed.get("last_error") or "")) if feed.get("error_count") else ""
    due = parse_time(feed.get("next_due_at"))
    return (
        name,
        _ago(success, now) if success else "never",
        str(feed.get("error_count") or 0),
        error or "-",
        "-" if feed.get("gone_at") else (_until(due, now) if due else "now"),
        str(feed.get("episodes") or 0),
        _pages_cell(feed) or "-",
        _files_failing(feed) or "-",
        _moved_cell(feed) or "-",
    )


def _pages_cell(feed: Mapping[str, Any]) -> str:
    """``2 pending, 9 failed: blocked: private address``: the pages still missing, by
    state, with the commonest reason they fail."""
    pages = ", ".join(f"{feed[k]} {k.removeprefix('pages_')}" for k in _PAGE_KEYS if feed.get(k))
    if pages and (commonest := _commonest(feed.get("page_errors"))):
        pages += f": {commonest}"
    return pages


def _moved_cell(feed: Mapping[str, Any]) -> str:
    """``gone 2024-05-01; moved to https://…``: a 410 and a permanent redirect."""
    moved = []
    if feed.get("gone_at"):
        moved.append(f"gone {str(feed['gone_at'])[:10]}")
    if feed.get("fetch_url"):
        moved.append(f"moved to {safe_url(str(feed['fetch_url']))}")
    return "; ".join(moved)


def _files_failing(feed: Mapping[str, Any]) -> str:
    """``1 transcript, 1 chapters: HTTP 500 …``: failing files and the latest reason."""
    counts = []
    if n := feed.get("transcripts_failing"):
        counts.append(plural(n, "transcript"))
    if n := feed.get("chapters_failing"):
        counts.append(f"{n} chapters")
    if not counts:
        return ""
    error = _commonest(feed.get("file_errors")) or _cut(str(feed.get("file_error") or ""))
    return ", ".join(counts) + (f": {error}" if error else "")


def _commonest(counts: object) -> str:
    if not isinstance(counts, Mapping) or not counts:
        return ""
    return _cut(str(max(counts, key=lambda r: counts[r])))


def _cut(error: str) -> str:
    """An error for a table cell: on one line, at most ``_ERROR_WIDTH`` characters."""
    return one_line(error, _ERROR_WIDTH)


# C1 controls and the line separators, which JSON may hold raw (C0 ones it always escapes).
_JSON_RAW = re.compile("[\x7f-\x9f\u2028\u2029]")


def json_text(doc: Mapping[str, Any]) -> str:
    """``doc`` as indented JSON with every value whole; control characters are escaped
    (``\\u001b``, ``\\u009b``) so that no value can drive the terminal it is printed on."""
    text = json.dumps(doc, indent=2, ensure_ascii=False)
    return _JSON_RAW.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def _span(delta: timedelta) -> str:
    seconds = int(abs(delta.total_seconds()))
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size:
            return f"{seconds // size}{unit}"
    return f"{seconds}s"


def _ago(moment: datetime, now: datetime) -> str:
    return f"{_span(now - moment)} ago" if moment <= now else f"in {_span(moment - now)}"


def _until(moment: datetime, now: datetime) -> str:
    return f"in {_span(moment - now)}" if moment > now else "now"


def plural(count: int, word: str, many: str | None = None) -> str:
    """``1 feed``, ``2 feeds``; ``many`` for irregular plurals (``body``, ``bodies``)."""
    return f"{count} {word if count == 1 else (many or word + 's')}"


# why pages and files fail, and what to do -------------------------------------------------

_REASON_RULES: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(pattern), replacement)
    for pattern, replacement in (
        (r"^blocked: private address\b.*", "blocked: private address"),
        (r"^blocked: not an http\(s\) URL\b.*", "blocked: not an http(s) URL"),
        (r"^(cannot resolve [^:\s]+).*", r"\1"),
        (r"^waiting: (\S+) asked us not to return before .*", r"waiting: \1 asked us to wait"),
        (r"^(body over [\d.]+ \S+) \(decompressed\)$", r"\1"),
        (r"^(redirect loop) at .*", r"\1"),
        (r"^(bad URL: [^:]+): .*", r"\1"),
    )
)


def reason_of(error: str) -> str:
    """An error as stored, without what differs between pages of one cause (the address,
    the time, the URL): ``blocked: private address 10.0.0.5`` → ``blocked: private
    address``, ``cannot resolve example.com: Name or service not known`` → ``cannot
    resolve example.com``."""
    text = one_line(error, 120)
    for pattern, replacement in _REASON_RULES:
        if pattern.match(text):
            return pattern.sub(replacement, text, count=1)
    return text


def reasons(errors: Mapping[str, int]) -> dict[str, int]:
    """Errors as stored with their counts → reasons with their counts, commonest first."""
    counts: Counter[str] = Counter()
    for error, count in errors.items():
        counts[reason_of(str(error))] += int(count)
    return dict(sorted(counts.items(), key=lambda item: (-item[1], item[0])))


_NETWORK = ("cannot connect", "timeout", "connection broken", "truncated")


def fix_for(reason: str, kinds: Iterable[str], source: str) -> str:
    """What to do about ``reason`` (from :func:`reason_of`), for pages or files (``kinds``:
    ``page``, ``transcript``, ``chapters``) of a feed scheduled in ``source`` (``""``: a feed
    given on the command line)."""
    where = f"in {source}" if source else "in its schedule entry"
    if reason == "blocked: private address":
        if source:
            return f"set allow_private_hosts = true {where}"
        return "run it with --allow-private-hosts, or schedule it with allow_private_hosts = true"
    if reason.startswith("cannot resolve"):
        return "check the host name and the network"
    if reason.startswith(_NETWORK):
        return "check the host and the network"
    if reason.startswith("body over"):
        caps = []
        if "page" in kinds:
            caps.append("max_page_bytes (PODARCHIVE_MAX_PAGE_BYTES)")
        if set(kinds) - {"page", "media"}:
            caps.append("max_file_bytes (PODARCHIVE_MAX_FILE_BYTES)")
        if "media" in kinds:
            caps.append(f"media_max_bytes {where}")
        return "raise " + " and ".join(caps)
    if reason.startswith("HTTP 403"):
        return (
            f"if the host refuses unknown user agents, set user_agent {where}; "
            "otherwise nothing to do: retried with back-off"
        )
    if reason.startswith("HTTP "):
        return "nothing to do: retried with back-off"
    if reason.startswith("waiting:"):
        return "nothing to do: retried once the host allows it"
    return "retried with back-off"


_THINGS = (("page", "page", "pages"), ("transcript", "transcript", "transcripts"),
           ("chapters", "chapters file", "chapters files"),
           ("media", "media file", "media files"))  # fmt: skip


def problem_line(label: str, problems: Sequence[tuple[str, str]], source: str) -> str | None:
    """One line for a feed whose pages or files failed: how many, the commonest reason and
    its fix, e.g. ``PyTorch: 9 pages blocked: private address; set allow_private_hosts =
    true in schedules/x.toml``. ``problems``: (kind, error) of each failure."""
    if not problems:
        return None
    by_reason = Counter(reason_of(error) for _, error in problems)
    top, count = max(by_reason.items(), key=lambda item: (item[1], -len(item[0])))
    kinds = Counter(kind for kind, _ in problems)
    things = [plural(kinds[k], one, many) for k, one, many in _THINGS if kinds[k]]
    what = things[0] if len(things) == 1 else f"{', '.join(things[:-1])} and {things[-1]}"
    if count < len(problems):
        what = f"{what} failed: {top} ({count} of {len(problems)})"
    elif top.startswith("blocked:"):
        what = f"{what} {top}"
    else:
        what = f"{what} failed: {top}"
    top_kinds = {kind for kind, error in problems if reason_of(error) == top}
    return f"{label}: {what}; {fix_for(top, top_kinds, source)}"
