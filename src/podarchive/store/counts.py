"""Reading the whole archive: row counts, a dump for comparisons, ``podarchive status``.

Read-only queries: the writer :class:`~podarchive.store.Archive` has them, and so has
:class:`~podarchive.store.reader.ArchiveReader`, the archive opened to read only.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from podarchive.core.types import LOW_CONFIDENCE

from .base import Connection


class StatusMixin(Connection):
    """Reads across feeds, for ``status``, tests and tools."""

    def count(self, table: str) -> int:
        total: int = self.db.execute(f"SELECT count(*) FROM [{table}]").fetchone()[0]
        return total

    def dump(
        self, *, skip: Sequence[str] = ("fetches", "captures", "header_sets")
    ) -> dict[str, list[tuple[Any, ...]]]:
        """Every row of every table, ordered, for comparing archives in tests and tools; by
        default not the logs of requests (``fetches``, and the captures with their header
        sets, #27), which every poll adds to."""
        out: dict[str, list[tuple[Any, ...]]] = {}
        for table in sorted(self.db.table_names()):
            if table in skip or table.startswith("episodes_fts"):
                continue
            out[table] = [tuple(r) for r in self.db.execute(f"SELECT * FROM [{table}] ORDER BY 1")]
        return out

    def feed_statuses(self) -> list[dict[str, Any]]:
        """One dict per feed for ``podarchive status``: its state, episode and page counts,
        why its pages and files fail (``page_errors``, ``file_errors``: each error as
        stored, with how many of them give it) and ``kept_fewer``: the warning of the fetch
        whose body, the feed's latest read, gave fewer episodes than items (#23), if so;
        ``pages_low_confidence``: its archived pages whose notes were found with a confidence
        below :data:`~podarchive.core.types.LOW_CONFIDENCE` (#24)."""
        page_errors, file_errors, media_errors = self._failure_counts()
        cursor = self.db.execute(
            "SELECT f.id, f.url, f.name, f.title, f.fetch_url, f.first_seen_at, f.last_fetched_at, "
            "f.last_success_at, f.last_status, f.last_error, f.last_error_at, f.error_count, "
            "f.next_due_at, f.gone_at, "
            "(SELECT count(*) FROM episodes e WHERE e.feed_id = f.id) AS episodes, "
            "(SELECT count(*) FROM episodes e WHERE e.feed_id = f.id "
            " AND e.page_status = 'pending') AS pages_pending, "
            "(SELECT count(*) FROM episodes e WHERE e.feed_id = f.id "
            " AND e.page_status = 'failed') AS pages_failed, "
            "(SELECT count(*) FROM episodes e WHERE e.feed_id = f.id "
            " AND e.page_status = 'empty') AS pages_empty, "
            "(SELECT count(*) FROM episodes e WHERE e.feed_id = f.id AND e.page_status = 'ok' "
            f" AND e.page_confidence < {LOW_CONFIDENCE!r}) AS pages_low_confidence, "
            f"{_failing_files('transcripts')} AS transcripts_failing, "
            f"{_failing_files('chapter_files')} AS chapters_failing, "
            f"(SELECT error FROM ({_file_errors('transcripts')} UNION ALL "
            f"{_file_errors('chapter_files')}) ORDER BY fetched_at DESC LIMIT 1) AS file_error, "
            f"{_KEPT_FEWER} AS kept_fewer "
            "FROM feeds f ORDER BY coalesce(f.name, f.title, f.url), f.id"
        )
        names = [d[0] for d in cursor.description]
        out = []
        for row in cursor.fetchall():
            feed = dict(zip(names, row, strict=True))
            feed_id = feed.pop("id")
            feed["page_errors"] = page_errors.get(feed_id, {})
            feed["file_errors"] = file_errors.get(feed_id, {})
            feed["media_errors"] = media_errors.get(feed_id, {})
            out.append(feed)
        return out

    def _failure_counts(self) -> tuple[ByFeed, ByFeed, ByFeed]:
        """Per feed: the errors of its failing pages (never archived, or whose last re-check
        failed), of its failing listed files and of its episodes' media whose last download
        failed (#26), each with how many give it."""
        pages = self.db.execute(
            "SELECT feed_id, page_error, count(*) FROM episodes WHERE page_error IS NOT NULL "
            "AND (page_status = 'failed' OR (page_status = 'ok' AND page_failures > 0)) "
            "GROUP BY feed_id, page_error"
        ).fetchall()
        files = self.db.execute(
            " UNION ALL ".join(
                f"SELECT e.feed_id, x.error, count(*) FROM {table} x "
                "JOIN episodes e ON e.id = x.episode_id WHERE x.failures > 0 "
                "AND x.unlisted_at IS NULL AND x.error IS NOT NULL GROUP BY e.feed_id, x.error"
                for table in ("transcripts", "chapter_files")
            )
        ).fetchall()
        media = self.db.execute(
            "SELECT e.feed_id, s.last_error, count(*) FROM media_state s "
            "JOIN episodes e ON e.id = s.episode_id WHERE s.error_count > 0 "
            "AND s.last_error IS NOT NULL GROUP BY e.feed_id, s.last_error"
        ).fetchall()
        return _by_feed(pages), _by_feed(files), _by_feed(media)


# The feed's latest fetch warning (idx_fetches_warning), while it is one of the warnings of
# the feed's latest body read (feeds.warnings: set whenever a body is read, kept on a 304).
_KEPT_FEWER = (
    "(SELECT x.warning FROM (SELECT warning FROM fetches WHERE feed_id = f.id "
    "AND warning IS NOT NULL ORDER BY started_at DESC, id DESC LIMIT 1) x WHERE x.warning IN "
    "(SELECT value FROM json_each(CASE WHEN json_valid(f.warnings) THEN f.warnings END)))"
)


ByFeed = dict[int, dict[str, int]]  # feed id → error → how many give it


def _by_feed(rows: Sequence[tuple[int, str, int]]) -> ByFeed:
    out: ByFeed = {}
    for feed_id, error, count in rows:
        errors = out.setdefault(feed_id, {})
        errors[error] = errors.get(error, 0) + count
    return out


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
