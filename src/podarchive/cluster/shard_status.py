"""``podarchive status --shards-dir DIR``: every shard's feeds in one report, and the workers.

Pure: it is given each shard's feed statuses (read from its archive) and, with
``--broker``, the workers' heartbeats and queue lengths (read from the broker), and builds
the same document and table as a single archive's ``status``, each feed marked with its
shard, plus one line per shard: its feeds, its worker (alive or not) and its queue.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime, timedelta
from typing import Any

from podarchive.core.clock import iso
from podarchive.rules.push import Subscription
from podarchive.tasks.status import (
    failing_lines,
    feed_lines,
    parse_time,
    plural,
    push_lines,
    report,
    warning_lines,
)

WORKER_STALE = timedelta(seconds=15)  # a worker beats every 2 s: silent this long, it is gone


def worker_state(beat: Mapping[str, Any] | None, now: datetime) -> dict[str, Any]:
    """``{"alive": bool, …the heartbeat}``; a stopped or silent worker is not alive."""
    if beat is None:
        return {"alive": False}
    seen = parse_time(beat.get("seen_at"))
    alive = seen is not None and now - seen < WORKER_STALE and not beat.get("stopped")
    return {**beat, "alive": alive}


def cluster_report(
    shards: int,
    feeds_by_shard: Mapping[int, Sequence[Mapping[str, Any]] | None],
    now: datetime,
    threshold: timedelta,
    *,
    workers: Mapping[int, Mapping[str, Any]] | None = None,
    queued: Mapping[int, int] | None = None,
    broker: str | None = None,
    push: Sequence[Subscription] = (),
) -> dict[str, Any]:
    """The ``--json`` document: ``status``'s, its feeds from every shard (each with its
    ``shard``), ``daemon`` replaced by ``cluster`` (the shards, their workers and queues,
    when the broker was asked). ``feeds_by_shard[k]`` is None for a shard with no archive;
    ``push``: the scheduler's WebSub subscriptions, from the broker (#29)."""
    feeds = [
        {**feed, "shard": shard}
        for shard, rows in sorted(feeds_by_shard.items())
        for feed in rows or ()
    ]
    doc = report(feeds, None, now, threshold, push=push)
    del doc["daemon"]
    detail = []
    for shard in range(shards):
        rows = feeds_by_shard.get(shard)
        entry: dict[str, Any] = {
            "shard": shard,
            "archive": rows is not None,
            "feeds": len(rows or ()),
            "failing": sum(1 for f in doc["feeds"] if f["shard"] == shard and f["failing"]),
        }
        if workers is not None:
            entry["worker"] = worker_state(workers.get(shard), now)
        if queued is not None:
            entry["queued"] = queued.get(shard, 0)
        detail.append(entry)
    doc["cluster"] = {"shards": shards, "broker": broker, "detail": detail}
    doc["workers_missing"] = [
        e["shard"] for e in detail if "worker" in e and not e["worker"]["alive"]
    ]
    return doc


def render_cluster(doc: Mapping[str, Any], now: datetime) -> str:
    """``status``'s table of every shard's feeds, then one line per shard."""
    lines = feed_lines(doc["feeds"], now) if doc["feeds"] else ["(no feeds in any shard yet)"]
    lines.extend(warning_lines(doc["feeds"]))
    lines.extend(push_lines(doc["feeds"]))
    lines.append("")
    shards = doc["cluster"]["shards"]
    lines.extend(_shard_line(entry, shards, now) for entry in doc["cluster"]["detail"])
    lines.extend(failing_lines(doc))
    return "\n".join(lines) + "\n"


def _shard_line(entry: Mapping[str, Any], shards: int, now: datetime) -> str:
    head = f"shard {entry['shard']} of {shards}: "
    if entry["archive"]:
        head += f"{plural(entry['feeds'], 'feed')}, {entry['failing']} failing"
    else:
        head += "no archive yet"
    parts = [head]
    worker = entry.get("worker")
    if worker is not None:
        parts.append(_worker_text(worker, now))
    if "queued" in entry:
        parts.append(f"{plural(entry['queued'], 'message')} queued")
    return "; ".join(parts)


def _worker_text(worker: Mapping[str, Any], now: datetime) -> str:
    if "seen_at" not in worker:
        return "no worker has run"
    seen = parse_time(worker.get("seen_at"))
    ago = f"{int((now - seen).total_seconds())} s ago" if seen else "at an unknown time"
    where = f"pid {worker.get('pid')} on {worker.get('host')}"
    counts = (
        f"{worker.get('polled', 0)} polled, {worker.get('failed', 0)} failed, "
        f"{worker.get('skipped', 0)} skipped"
    )
    if worker["alive"]:
        return f"worker {where}, seen {ago} ({counts})"
    state = "stopped" if worker.get("stopped") else "silent"
    return f"NO WORKER: the last ({where}) {state} since {iso(seen) if seen else '?'} ({counts})"
