"""``podarchive status``: the feeds' health and the daemon's heartbeat, as text or JSON.

Pure functions over what :meth:`Archive.feed_statuses` returns and what the daemon writes in
``<db>.daemon.json`` (plus the small atomic read/write of that file). ``now`` is always a
parameter. The JSON shape (``STATUS_FORMAT`` 1) is documented in the README::

    {"format": 1, "generated_at": ISO, "failing_for_seconds": N,
     "failing": [url, ...],                      # failing longer than the threshold
     "daemon": {"state": "running"|"dead"|"stopped"|"none", "live": bool, ...heartbeat},
     "feeds": [{"url", "name", "title", "fetch_url", "first_seen_at", "last_fetched_at",
                "last_success_at", "last_error", "last_error_at", "error_count",
                "next_due_at", "gone_at", "episodes", "pages_pending", "pages_failed",
                "pages_empty", "pages_missing", "transcripts_failing", "chapters_failing",
                "file_error", "failing"}, ...]}

``transcripts_failing`` / ``chapters_failing`` count the listed files whose last fetch failed;
``file_error`` is the latest one's reason.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from podarchive.clock import iso

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
    line = (
        f"daemon: running (pid {state.get('pid')}, since {state.get('started_at')}), "
        f"heartbeat {since}: {state.get('activity', '?')}; "
        f"{state.get('feeds', '?')} feed(s) scheduled"
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
) -> dict[str, Any]:
    """The ``--json`` document (see the module docstring)."""
    rows = []
    for feed in feeds:
        row = dict(feed)
        row["pages_missing"] = sum(int(feed.get(k) or 0) for k in _PAGE_KEYS)
        row["failing"] = is_failing(feed, now, threshold)
        rows.append(row)
    return {
        "format": STATUS_FORMAT,
        "generated_at": iso(now),
        "failing_for_seconds": int(threshold.total_seconds()),
        "failing": [row["url"] for row in rows if row["failing"]],
        "daemon": daemon_state(heartbeat, now),
        "feeds": rows,
    }


_PAGE_KEYS = ("pages_pending", "pages_failed", "pages_empty")
COLUMNS = (
    "FEED", "LAST SUCCESS", "ERRORS", "LAST ERROR", "NEXT DUE", "EPISODES", "PAGES MISSING",
    "FILES FAILING", "MOVED/GONE",
)  # fmt: skip


def render_table(doc: Mapping[str, Any], now: datetime) -> str:
    """A plain aligned text table, one feed per line, then the daemon's line."""
    lines = []
    rows = [COLUMNS] + [_cells(feed, now) for feed in doc["feeds"]]
    widths = [max(len(row[i]) for row in rows) for i in range(len(COLUMNS))]
    for row in rows:
        lines.append("  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip())
    if not doc["feeds"]:
        lines.append("(no feeds in the archive yet)")
    lines.append("")
    lines.append(daemon_line(doc["daemon"], now))
    if doc["failing"]:
        days = _span(timedelta(seconds=doc["failing_for_seconds"]))
        lines.append(f"failing for more than {days}: {len(doc['failing'])} feed(s)")
    return "\n".join(lines) + "\n"


def _cells(feed: Mapping[str, Any], now: datetime) -> tuple[str, ...]:
    name = str(feed.get("name") or feed.get("title") or feed["url"])
    if feed.get("failing"):
        name = f"! {name}"
    success = parse_time(feed.get("last_success_at"))
    error = str(feed.get("last_error") or "") if feed.get("error_count") else ""
    if len(error) > _ERROR_WIDTH:
        error = error[: _ERROR_WIDTH - 1] + "…"
    due = parse_time(feed.get("next_due_at"))
    pages = ", ".join(
        f"{feed[k]} {k.removeprefix('pages_')}" for k in _PAGE_KEYS if feed.get(k)
    )  # e.g. "2 pending, 1 failed"
    moved = []
    files = _files_failing(feed)
    if feed.get("gone_at"):
        moved.append(f"gone {str(feed['gone_at'])[:10]}")
    if feed.get("fetch_url"):
        moved.append(f"moved to {feed['fetch_url']}")
    return (
        name,
        _ago(success, now) if success else "never",
        str(feed.get("error_count") or 0),
        error or "-",
        "-" if feed.get("gone_at") else (_until(due, now) if due else "now"),
        str(feed.get("episodes") or 0),
        pages or "-",
        files or "-",
        "; ".join(moved) or "-",
    )


def _files_failing(feed: Mapping[str, Any]) -> str:
    """``1 transcript, 1 chapters: HTTP 500 …``: failing files and the latest reason."""
    counts = []
    if n := feed.get("transcripts_failing"):
        counts.append(f"{n} transcript{'' if n == 1 else 's'}")
    if n := feed.get("chapters_failing"):
        counts.append(f"{n} chapters")
    if not counts:
        return ""
    error = str(feed.get("file_error") or "")
    if len(error) > _ERROR_WIDTH:
        error = error[: _ERROR_WIDTH - 1] + "…"
    return ", ".join(counts) + (f": {error}" if error else "")


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
