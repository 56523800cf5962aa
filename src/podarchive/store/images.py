"""The images' ledger (#28): each podcast's artwork and each episode's own image, kept like
media: versions by feed and URL (``image_files``), every fetch (``image_fetches``) and the
download's state (``image_state``) of migration 17; the bytes are payloads of the media
ledger (``media_payloads``), files of the media folder. Every write is one transaction.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING

from podarchive.core.types import FetchRecord, Row

from .base import Connection
from .media import MediaState, MediaTask, insert_fetch, read_state, write_state
from .migrations_images import IMAGE_DUE_STATE

_STATE_FIELDS = tuple(MediaState.__dataclass_fields__)
#: The feed's images: its artwork, then its episodes' own images (not the artwork again),
#: each URL once, web URLs only.
_CANDIDATES = (
    "WITH c (url, published) AS ("
    "SELECT f.image, '9999' FROM feeds f WHERE f.id = ? "
    "UNION ALL SELECT e.image, max(coalesce(e.published, e.first_seen_at)) FROM episodes e "
    "JOIN feeds f ON f.id = e.feed_id WHERE e.feed_id = ? AND e.image IS NOT f.image "
    "GROUP BY e.image) "
)
_STORED = "EXISTS (SELECT 1 FROM image_files i WHERE i.feed_id = ? AND i.url = c.url)"
_DUE = (
    f"{_CANDIDATES}SELECT c.url, max(c.published), {_STORED}, "
    f"{', '.join(f's.{f}' for f in _STATE_FIELDS)} "
    "FROM c LEFT JOIN image_state s ON s.feed_id = ? AND s.url = c.url "
    "WHERE (c.url LIKE 'http://%' OR c.url LIKE 'https://%') AND ("
    f"(s.{IMAGE_DUE_STATE} AND s.next_check_at <= ?) OR (s.url IS NULL AND NOT {_STORED}) "
    f"OR (? AND {_STORED})) GROUP BY c.url ORDER BY max(c.published) DESC, c.url"
)


class ImagesMixin(Connection):
    """The images' ledger of :class:`~podarchive.store.Archive`."""

    if TYPE_CHECKING:  # what it uses of the other mixins (Archive combines them)
        # FetchLogMixin
        def _log(
            self,
            records: Iterable[FetchRecord],
            *,
            feed_id: int | None,
            episode_id: int | None = None,
        ) -> None: ...

    def images_due(self, feed_id: int, now: str, *, recheck: bool = False) -> list[MediaTask]:
        """The feed's images due now (its artwork first, then its episodes' images, newest
        first): never stored and not yet tried, or whose ``next_check_at`` has come; with
        ``recheck`` every stored one too. Each a task of ``source`` "image", episode id 0."""
        tasks = []
        params = [feed_id, feed_id, feed_id, feed_id, now, feed_id, recheck, feed_id]
        for row in self.db.execute(_DUE, params).fetchall():
            url, _, stored, *state = row
            has_state = state[_STATE_FIELDS.index("checks")] is not None
            tasks.append(
                MediaTask(
                    0,
                    url,
                    None,
                    None,
                    None,
                    bool(stored),
                    MediaState(*state) if has_state else MediaState(),
                    "image",
                )
            )
        return tasks

    def record_image_fetch(
        self,
        feed_id: int,
        url: str,
        *,
        outcome: str,
        now: str,
        final_url: str | None = None,
        status: int | None = None,
        etag: str | None = None,
        last_modified: str | None = None,
        headers: Mapping[str, str] | None = None,
        moved: int = 0,
        sha256: str | None = None,
        error: str | None = None,
        records: Iterable[FetchRecord] = (),
    ) -> int:
        """One fetch of feed ``feed_id``'s image ``url`` (as
        :meth:`~.media.MediaMixin.record_media_fetch`); its requests go to the fetch log."""
        with self.transaction():
            self._log(records, feed_id=feed_id)
            return insert_fetch(
                self.db,
                "image_fetches",
                "feed_id",
                feed_id,
                url,
                [
                    final_url,
                    status,
                    etag,
                    last_modified,
                    headers,
                    now,
                    moved,
                    sha256,
                    outcome,
                    error,
                ],
            )

    def add_image_version(self, feed_id: int, url: str, sha256: str, now: str) -> int:
        """The version number of payload ``sha256`` as feed ``feed_id``'s image ``url``: bytes
        seen before keep their number (only ``last_seen_at`` moves), new bytes get the next
        one."""
        key = [feed_id, url, sha256]
        with self.transaction():
            found = self.db.execute(
                "SELECT version FROM image_files WHERE feed_id = ? AND url = ? AND sha256 = ?", key
            ).fetchone()
            if found:
                self.db.execute(
                    "UPDATE image_files SET last_seen_at = ? WHERE feed_id = ? AND url = ? "
                    "AND sha256 = ?",
                    [now, *key],
                )
                return int(found[0])
            (latest,) = self.db.execute(
                "SELECT coalesce(max(version), 0) FROM image_files WHERE feed_id = ? AND url = ?",
                [feed_id, url],
            ).fetchone()
            self.db.execute(
                "INSERT INTO image_files (feed_id, url, sha256, version, first_seen_at, "
                "last_seen_at) VALUES (?, ?, ?, ?, ?, ?)",
                [*key, latest + 1, now, now],
            )
        return int(latest) + 1

    def image_versions(self, feed_id: int, url: str) -> list[Row]:
        """The stored versions of feed ``feed_id``'s image ``url``, oldest first (the columns of
        :meth:`~.media.MediaMixin.media_versions`)."""
        return self._rows(
            "SELECT i.version, i.sha256, p.size, p.ext, p.content_type, i.first_seen_at, "
            "i.last_seen_at FROM image_files i JOIN media_payloads p ON p.sha256 = i.sha256 "
            "WHERE i.feed_id = ? AND i.url = ? ORDER BY i.version",
            feed_id,
            url,
        )

    def drop_image_version(self, feed_id: int, url: str, sha256: str) -> int:
        """Forget payload ``sha256`` as a version of feed ``feed_id``'s image ``url``; returns
        how many images' and episodes' versions still use the payload (0: its file may go)."""
        with self.transaction():
            self.db.execute(
                "DELETE FROM image_files WHERE feed_id = ? AND url = ? AND sha256 = ?",
                [feed_id, url, sha256],
            )
            (left,) = self.db.execute(
                "SELECT (SELECT count(*) FROM image_files WHERE sha256 = ?) + "
                "(SELECT count(*) FROM episode_media WHERE sha256 = ?)",
                [sha256, sha256],
            ).fetchone()
        return int(left)

    def image_state(self, feed_id: int, url: str) -> MediaState | None:
        """The download state of feed ``feed_id``'s image ``url``; None before its first
        attempt."""
        return read_state(self.db, "image_state", "feed_id", feed_id, url)

    def set_image_state(self, feed_id: int, url: str, state: MediaState, now: str) -> None:
        """Write the whole download state of feed ``feed_id``'s image ``url``."""
        with self.transaction():
            write_state(self.db, "image_state", "feed_id", feed_id, url, state, now)
