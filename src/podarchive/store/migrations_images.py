"""Migration v17 (issue #28): the podcasts' artwork and the episodes' images, kept like media.

An image belongs to its feed and is named by its URL there (``feeds.image``,
``episodes.image``): the same URL used by 300 of the feed's episodes is one download, one
state and one row per version; the rows that name it are its owners (their earlier values are
in the feed's history). The bytes are payloads of the media ledger (``media_payloads``, the
media folder): stored once whatever else refers to them. Every row names its feed, so
``reshard`` moves the rows with their feed (:mod:`.transplant`).

- ``image_files``: one row per feed, URL and payload (``version`` 1, 2… as the bytes changed,
  ``first_seen_at``, ``last_seen_at``); a changed image is a new version, the old one kept.
- ``image_fetches``: every download or re-check (as ``media_fetches``, by feed and URL).
- ``image_state``: the download's working state per feed and URL (as ``media_state``): the
  partial file to resume, the stored copy's validators, the next re-check, failures in a row.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import sqlite_utils


#: An image's download is due when its state has a next check.
IMAGE_DUE_STATE = "next_check_at IS NOT NULL"


def _image_files_v17(db: sqlite_utils.Database) -> None:
    """Issue #28: ``image_files``, ``image_fetches`` and ``image_state`` (no row changes)."""
    db.table("image_files").create(
        {
            "id": int, "feed_id": int, "url": str, "sha256": str, "version": int,
            "first_seen_at": str, "last_seen_at": str,
        },
        pk="id",
        not_null={"feed_id", "url", "sha256", "version", "first_seen_at", "last_seen_at"},
        foreign_keys=[("feed_id", "feeds", "id"), ("sha256", "media_payloads", "sha256")],
    )  # fmt: skip
    db.table("image_files").create_index(["feed_id", "url", "sha256"], unique=True)
    db.table("image_files").create_index(["url", "version"])
    db.table("image_files").create_index(["sha256"])
    db.table("image_fetches").create(
        {
            "id": int, "url": str, "feed_id": int, "final_url": str, "status": int,
            "etag": str, "last_modified": str, "headers": str, "fetched_at": str,
            "bytes": int, "sha256": str, "outcome": str, "error": str,
        },
        pk="id",
        not_null={"feed_id", "url", "fetched_at", "outcome"},
        foreign_keys=[("feed_id", "feeds", "id"), ("sha256", "media_payloads", "sha256")],
        defaults={"bytes": 0},
    )  # fmt: skip
    db.table("image_fetches").create_index(["feed_id", "url", "fetched_at"])
    db.table("image_state").create(
        {
            "id": int, "feed_id": int, "url": str, "partial_key": str, "validator": str,
            "partial_bytes": int, "etag": str, "last_modified": str, "next_check_at": str,
            "checks": int, "error_count": int, "last_error": str, "updated_at": str,
        },
        pk="id",
        not_null={"feed_id", "url", "partial_bytes", "checks", "error_count"},
        foreign_keys=[("feed_id", "feeds", "id")],
        defaults={"partial_bytes": 0, "checks": 0, "error_count": 0},
    )  # fmt: skip
    db.table("image_state").create_index(["feed_id", "url"], unique=True)
    db.execute(
        f"CREATE INDEX idx_image_state_due ON image_state (next_check_at) WHERE {IMAGE_DUE_STATE}"
    )
