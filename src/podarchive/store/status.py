"""Reading the whole archive: row counts, a dump for comparisons, ``podarchive status``."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .base import Connection


class StatusMixin(Connection):
    """Reads across feeds, for ``status``, tests and tools."""

    def count(self, table: str) -> int:
        total: int = self.db.execute(f"SELECT count(*) FROM [{table}]").fetchone()[0]
        return total

    def dump(self, *, skip: Sequence[str] = ("fetches",)) -> dict[str, list[tuple[Any, ...]]]:
        """Every row of every table, ordered, for comparing archives in tests and tools."""
        out: dict[str, list[tuple[Any, ...]]] = {}
        for table in sorted(self.db.table_names()):
            if table in skip or table.startswith("episodes_fts"):
                continue
            out[table] = [tuple(r) for r in self.db.execute(f"SELECT * FROM [{table}] ORDER BY 1")]
        return out

    def feed_statuses(self) -> list[dict[str, Any]]:
        """One dict per feed for ``podarchive status``: its state, episode and page counts."""
        cursor = self.db.execute(
            "SELECT f.url, f.name, f.title, f.fetch_url, f.first_seen_at, f.last_fetched_at, "
            "f.last_success_at, f.last_status, f.last_error, f.last_error_at, f.error_count, "
            "f.next_due_at, f.gone_at, "
            "(SELECT count(*) FROM episodes e WHERE e.feed_id = f.id) AS episodes, "
            "(SELECT count(*) FROM episodes e WHERE e.feed_id = f.id "
            " AND e.page_status = 'pending') AS pages_pending, "
            "(SELECT count(*) FROM episodes e WHERE e.feed_id = f.id "
            " AND e.page_status = 'failed') AS pages_failed, "
            "(SELECT count(*) FROM episodes e WHERE e.feed_id = f.id "
            " AND e.page_status = 'empty') AS pages_empty, "
            f"{_failing_files('transcripts')} AS transcripts_failing, "
            f"{_failing_files('chapter_files')} AS chapters_failing, "
            f"(SELECT error FROM ({_file_errors('transcripts')} UNION ALL "
            f"{_file_errors('chapter_files')}) ORDER BY fetched_at DESC LIMIT 1) AS file_error "
            "FROM feeds f ORDER BY coalesce(f.name, f.title, f.url), f.id"
        )
        names = [d[0] for d in cursor.description]
        return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]


def _failing_files(table: str) -> str:
    """How many of the feed's listed files of ``table`` failed their last fetch."""
    return (
        f"(SELECT count(*) FROM {table} x JOIN episodes e ON e.id = x.episode_id "
        "WHERE e.feed_id = f.id AND x.failures > 0 AND x.unlisted_at IS NULL)"
    )


def _file_errors(table: str) -> str:
    return (
        f"SELECT x.error, x.fetched_at FROM {table} x JOIN episodes e ON e.id = x.episode_id "
        "WHERE e.feed_id = f.id AND x.failures > 0 AND x.unlisted_at IS NULL"
    )
