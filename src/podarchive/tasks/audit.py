"""Fixity audits (``podarchive audit``): re-hash the stored media payloads, record each check.

:func:`audit` takes the payloads never audited, then the oldest audited, as many as fit in a
byte budget (or all of them), re-hashes each file in the media folder
(:meth:`~podarchive.store.media_files.MediaFolder.verify`) and records a fixity event for
each (``ok``, ``mismatch`` or ``missing``; its payload row keeps the last outcome). Every
event of one audit has the audit's start time as its ``checked_at``: ``status`` reads the last
audit as the events of the latest time. Also the lines the command prints
(:func:`damaged_line`, :func:`summary_line`) and :func:`parse_size` for ``--budget``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from podarchive.core.errors import safe_label
from podarchive.core.types import Row
from podarchive.store import Archive
from podarchive.store.media_files import MediaFolder
from podarchive.tasks.status import plural, size_text

_UNITS = {
    "": 1, "b": 1, "k": 1000, "kb": 1000, "m": 1000**2, "mb": 1000**2, "g": 1000**3,
    "gb": 1000**3, "t": 1000**4, "tb": 1000**4, "kib": 1024, "mib": 1024**2,
    "gib": 1024**3, "tib": 1024**4,
}  # fmt: skip
_SIZE = re.compile(r"\s*(\d+(?:\.\d+)?)\s*([a-z]*)\s*", re.IGNORECASE)


def parse_size(text: str) -> int:
    """A number of bytes from ``500MB``, ``2GiB``, ``1.5 G`` or ``1048576`` (decimal units
    for kB/MB/GB/TB, binary for KiB/MiB/GiB/TiB); ValueError for anything else."""
    match = _SIZE.fullmatch(text)
    unit = match.group(2).lower() if match else None
    if match is None or unit not in _UNITS:
        raise ValueError(f"{text!r} is not a size (bytes, or e.g. 500MB, 2GiB)")
    return int(float(match.group(1)) * _UNITS[unit])


@dataclass(frozen=True, slots=True)
class Damaged:
    """A payload whose check failed: ``outcome`` mismatch or missing, ``found`` its SHA-256
    now (None when missing), the file it should be, and the episodes it is a version of
    (``title``, ``feed``, ``episode_id``, ``version``)."""

    sha256: str
    outcome: str
    found: str | None
    path: Path
    episodes: list[Row]


@dataclass(slots=True)
class AuditReport:
    """What one audit did: when (``checked_at``), files and bytes checked, the damaged ones,
    and how many stored payloads it left for the next audit."""

    checked_at: str
    checked: int = 0
    bytes: int = 0
    damaged: list[Damaged] = field(default_factory=list)
    left: int = 0


def audit(archive: Archive, folder: MediaFolder, *, budget: int | None, now: str) -> AuditReport:
    """Re-hash the payloads due (never audited first, then the oldest audit), within
    ``budget`` bytes (None: all of them; at least one is checked), recording a fixity event
    for each at ``now``."""
    everything = archive.audit_queue()
    queue = everything if budget is None else archive.audit_queue(budget)
    report = AuditReport(checked_at=now, left=len(everything) - len(queue))
    for row in queue:
        sha256, ext = row["sha256"], row["ext"] or ""
        fixity = folder.verify(sha256, ext)
        archive.record_fixity(sha256, sha256, fixity.found, fixity.outcome, now)
        report.checked += 1
        report.bytes += int(row["size"])
        if fixity.outcome != "ok":
            report.damaged.append(
                Damaged(
                    sha256, fixity.outcome, fixity.found, folder.path_of(sha256, ext),
                    archive.media_links(sha256),
                )
            )  # fmt: skip
    return report


def damaged_line(damaged: Damaged) -> str:
    """``mismatch: media/ab/cd/abcd….mp3 (SHA-256 now 1234…): "Episode" (Feed)``: the file
    and every episode it is a version of, on one line."""
    episodes = "; ".join(
        f'"{safe_label(str(e["title"] or "untitled"))}" ({safe_label(str(e["feed"]))})'
        for e in damaged.episodes
    )
    now = f" (SHA-256 now {damaged.found[:16]}…)" if damaged.found else ""
    what = "damaged" if damaged.outcome == "mismatch" else damaged.outcome
    return f"{what}: {safe_label(str(damaged.path), 300)}{now}: {episodes or 'no episode'}"


def summary_line(report: AuditReport) -> str:
    """``audited 3 files (12.5 MB): 1 damaged; 2 files left for the next audit``."""
    line = f"audited {plural(report.checked, 'file')} ({size_text(report.bytes)})"
    line += f": {len(report.damaged)} damaged" if report.damaged else ": all intact"
    if report.left:
        line += f"; {plural(report.left, 'file')} left for the next audit"
    return line
