"""The only sqlite-utils user: the archive's schema, migrations and writes.

:class:`Archive` is one facade mixed from one module per concern (the model is reader's
``_storage``). Each mixin builds only on :class:`Connection` and reaches the others only
through ``self``: what it uses of them it declares (``if TYPE_CHECKING:`` signatures, which
mypy checks against the real ones where :class:`Archive` combines them):

- ``schema``: the frozen per-version column lists, the numbered migrations, trigger and
  index SQL; ``files``: what is at a path (refusals, before any write); ``check``:
  ``podarchive check``; ``base``: the connection, migrate, transactions, upkeep, and the
  translation of every sqlite3 error into a one-line :class:`StorageError`;
- ``feeds`` (moves, hosts), ``episodes`` (upserts, revisions, absence, links),
  ``snapshots`` (raw bodies), ``feed_history`` (``reparse``; :class:`KnownItems`),
  ``backfill``, ``pages``, ``fetch_log`` and ``status``; ``documents`` (raw page,
  transcript and chapters bodies), ``episode_files`` (the transcript and chapters files an
  episode lists), ``transcripts`` (segments) and ``chapters``;
- ``media`` (the media ledger: payloads, fetches, versions, fixity, download state) and
  ``media_files`` (the content-addressed media folder itself, no SQLite);
- ``captures`` (#27: every stored body's HTTP exchanges, header sets kept once each);
- ``transplant``: feeds copied between archives with their whole history (``reshard``).

The store imports only ``podarchive.core.errors``, ``types``, ``rules.history`` and
``rules.episode_plan`` (the pure decisions of a feed save) (never fetch, pipeline or cli).
"""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import TYPE_CHECKING, Any

from podarchive.core.types import (
    EpisodeWrite,
    FeedHistory,
    FeedState,
    FetchRecord,
    PageTask,
    Row,
    SaveStats,
    Snapshot,
)

from .archive_path import (
    APPLICATION_ID,
    BUSY_TIMEOUT,
    SQLITE_MAGIC,
    FileInfo,
    check_file,
    inspect_file,
    refusal,
    storage_error,
)
from .backfill_records import BackfillMixin
from .base import (
    CHECKPOINT_WAIT_MS,
    QUICK_CHECK_EVERY,
    WAL_SIZE_LIMIT,
    Connection,
    storage_errors,
)
from .captures import SOFTWARE, CapturesMixin, canonical_headers
from .change_reads import ChangeReadsMixin
from .chapters import ChaptersMixin
from .check import CHECK_LIMIT, Problem, check_archive, fts_tables
from .counts import StatusMixin
from .documents import DocumentsMixin
from .episode_files import FILE_TABLES, EpisodeFilesMixin
from .episode_pages import PagesMixin
from .episodes import (
    BOOKKEEPING_COLUMNS,
    CHURN_COLUMNS,
    INSERT_EPISODE,
    INSERT_LINK,
    INSERTED_COLUMNS,
    READ_CHUNK,
    REVISION_COLUMNS,
    STORED_TRACKED,
    WIDE_TRACKED,
    EpisodesMixin,
    row_hash,
)
from .feed_history import HISTORY_EPISODE_COLUMNS, FeedHistoryMixin, KnownItems
from .feed_reads import FEED_STATE_COLUMNS, FeedReadsMixin
from .feeds import FeedSave, FeedsMixin, UnchangedPoll
from .fetch_log import FetchLogMixin
from .images import ImagesMixin
from .media import MediaMixin, MediaState, MediaTask
from .page_transcripts import PAGE_FORMAT, PageTranscriptsMixin
from .podping import PodpingCursor, PodpingMixin
from .protocol import ArchiveLike, ArchiveReads
from .push import PushMixin
from .reader import ArchiveReader
from .schema import (
    BOOKKEEPING_INDEX,
    EPISODE_COLUMNS,
    FEED_META_COLUMNS,
    FILE_STATE_COLUMNS,
    FILES_DUE,
    FTS_UPDATE_TRIGGER,
    MIGRATIONS,
    PAGE_RECHECK,
    PAGES_DUE,
    PAGES_DUE_INDEX,
    SCHEMA_VERSION,
    V1_EPISODE_COLUMNS,
    V1_FEED_META_COLUMNS,
    Migration,
)
from .snapshots import MAX_DELTA_DEPTH, SnapshotsMixin
from .tags import TagsMixin
from .transcripts import TranscriptsMixin
from .transplant import (
    Transplanted,
    archive_version,
    content_keys,
    feed_urls,
    table_counts,
    transplant,
)

if TYPE_CHECKING:
    from .media_files import Fixity, MediaFolder, Payload, media_extension

#: The media folder's names, imported on first use: a run without media never needs them
#: (#30). (``transplant`` stays eager: a lazy name equal to its module's would be the module
#: once ``podarchive.store.transplant`` is imported.)
_LAZY = dict.fromkeys(("Fixity", "MediaFolder", "Payload", "media_extension"), "media_files")


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(importlib.import_module(f"{__name__}.{_LAZY[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "APPLICATION_ID",
    "BOOKKEEPING_COLUMNS",
    "BOOKKEEPING_INDEX",
    "BUSY_TIMEOUT",
    "SOFTWARE",
    "CHECKPOINT_WAIT_MS",
    "CHECK_LIMIT",
    "CHURN_COLUMNS",
    "EPISODE_COLUMNS",
    "FEED_META_COLUMNS",
    "FEED_STATE_COLUMNS",
    "FILES_DUE",
    "FILE_STATE_COLUMNS",
    "FILE_TABLES",
    "PAGE_FORMAT",
    "FTS_UPDATE_TRIGGER",
    "HISTORY_EPISODE_COLUMNS",
    "INSERTED_COLUMNS",
    "INSERT_EPISODE",
    "INSERT_LINK",
    "MAX_DELTA_DEPTH",
    "MIGRATIONS",
    "PAGES_DUE",
    "PAGE_RECHECK",
    "PAGES_DUE_INDEX",
    "QUICK_CHECK_EVERY",
    "READ_CHUNK",
    "REVISION_COLUMNS",
    "SCHEMA_VERSION",
    "SQLITE_MAGIC",
    "STORED_TRACKED",
    "V1_EPISODE_COLUMNS",
    "V1_FEED_META_COLUMNS",
    "WAL_SIZE_LIMIT",
    "WIDE_TRACKED",
    "Archive",
    "ArchiveLike",
    "ArchiveReader",
    "ArchiveReads",
    "CapturesMixin",
    "DocumentsMixin",
    "EpisodeFilesMixin",
    "EpisodeWrite",
    "FeedHistory",
    "FeedSave",
    "UnchangedPoll",
    "FeedState",
    "FetchRecord",
    "Fixity",
    "FileInfo",
    "KnownItems",
    "MediaFolder",
    "MediaMixin",
    "MediaState",
    "MediaTask",
    "Migration",
    "PageTask",
    "Payload",
    "PodpingCursor",
    "Problem",
    "Row",
    "SaveStats",
    "Snapshot",
    "Transplanted",
    "archive_version",
    "check_archive",
    "canonical_headers",
    "check_file",
    "content_keys",
    "feed_urls",
    "fts_tables",
    "inspect_file",
    "media_extension",
    "refusal",
    "row_hash",
    "storage_error",
    "table_counts",
    "transplant",
]


@storage_errors
class Archive(
    FeedsMixin,
    FeedReadsMixin,
    PagesMixin,
    BackfillMixin,
    FeedHistoryMixin,
    EpisodesMixin,
    EpisodeFilesMixin,
    PageTranscriptsMixin,
    TranscriptsMixin,
    ChaptersMixin,
    DocumentsMixin,
    TagsMixin,
    SnapshotsMixin,
    FetchLogMixin,
    MediaMixin,
    ImagesMixin,
    CapturesMixin,
    StatusMixin,
    ChangeReadsMixin,
    PushMixin,
    PodpingMixin,
    Connection,
):
    """An open archive file. Not thread-safe: the pipeline keeps it on one thread.

    Every public method and property raises :class:`StorageError` (:class:`ArchiveDamaged`
    when SQLite reports corruption), never a sqlite3 error.
    """

    @classmethod
    def open_to_read(cls, path: Path | str) -> ArchiveReader:
        """The archive at ``path`` to read only: an :class:`ArchiveReader` (its read-only
        queries, none of the writer's methods; see :meth:`ArchiveReader.open_to_read`)."""
        return ArchiveReader.open_to_read(path)


if TYPE_CHECKING:  # mypy checks that the concrete classes are what the Protocols say

    def _shapes(
        writer: Archive, reader: ArchiveReader
    ) -> tuple[ArchiveLike, ArchiveReads, ArchiveReads]:
        return writer, writer, reader
