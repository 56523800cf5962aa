"""``podarchive check`` as a use case: check an archive, repair its full-text index if asked
and if nothing else is damaged, and say what was found and what to do (pure lines).

The checks themselves are :func:`podarchive.store.check_archive`'s; this module decides
whether a repair may run (only the FTS tables damaged), runs it under the archive lock, and
words the report (:func:`check_lines`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from podarchive.core.errors import ArchiveLocked
from podarchive.runtime.lock import archive_lock
from podarchive.store import Archive, Problem, check_archive
from podarchive.tasks.status import plural

#: The checks of the database itself: a problem found by one of them is not the index's alone.
DATABASE_CHECKS = ("integrity_check", "foreign_key_check")


@dataclass(slots=True)
class CheckReport:
    """What ``check`` found (after a repair, if one ran) and what it did."""

    db: Path
    tables: list[str]  # the full-text (FTS5) tables checked
    problems: list[Problem]
    rebuilt: list[str] = field(default_factory=list)  # FTS tables rebuilt by --repair-fts
    refused: bool = False  # --repair-fts asked of an archive damaged beyond its index

    @property
    def sound(self) -> bool:
        return not self.problems


def check(
    db: Path, *, repair_fts: bool = False, on_rebuilt: Callable[[str], None] | None = None
) -> CheckReport:
    """Check the archive at ``db``; with ``repair_fts``, rebuild its damaged full-text
    tables from the episodes when nothing else is damaged, under the archive lock (held by
    another run: :class:`ArchiveLocked`), then check it again. ``on_rebuilt`` is told each
    table as soon as it is rebuilt."""
    tables, problems = check_archive(db)
    broken = sorted({p.check for p in problems if p.check in tables})
    if not (repair_fts and broken):
        return CheckReport(db, tables, problems)
    if len(broken) != len({p.check for p in problems}):
        return CheckReport(db, tables, problems, refused=True)
    try:
        lock = archive_lock(db).acquire()
    except ArchiveLocked as e:
        raise ArchiveLocked(f"{e}; not repairing now") from e
    with lock, Archive(db) as archive:
        for table in broken:
            archive.rebuild_fts(table)
            if on_rebuilt is not None:
                on_rebuilt(table)
    tables, problems = check_archive(db)
    return CheckReport(db, tables, problems, rebuilt=broken)


def rebuilt_line(db: Path, table: str) -> str:
    return f"{db}: {table} rebuilt"


def check_lines(report: CheckReport) -> list[str]:
    """What ``check`` prints after any repair: a refusal, the verdict, the problems, advice."""
    db = report.db
    lines = []
    if report.refused:
        lines.append(f"{db}: not rebuilding the full-text index of a damaged archive")
    if report.sound:
        fts = [f"{t} integrity-check" for t in report.tables]
        checks = ", ".join([*DATABASE_CHECKS, *fts])
        return [*lines, f"{db}: sound ({checks})"]
    count = len(report.problems)
    lines.append(f"{db}: DAMAGED, {plural(count, 'problem')}")
    lines += [f"  {p.check}: {p.text}" for p in report.problems]
    return lines + advice(db, report.problems, repaired=bool(report.rebuilt))


def advice(db: Path, problems: list[Problem], *, repaired: bool) -> list[str]:
    """What to do about ``problems``: restore or recover; for the search index alone, rebuild."""
    if all(p.check not in DATABASE_CHECKS for p in problems):
        if repaired:
            return []
        return [
            "what to do: only the full-text index is damaged; rebuild it from the episodes:",
            f"  podarchive check --repair-fts --db {db}",
        ]
    return [
        f"what to do: restore {db} from a backup, or recover what SQLite can still read:",
        f'  sqlite3 {db} ".recover" | sqlite3 recovered.db',
        "  then run 'podarchive check --db recovered.db' and use it in place of the archive",
    ]
