"""What the application layer (update/, tasks/) needs of an archive, as Protocols.

:class:`ArchiveLike` is the writer as the pipeline and the tasks use it; :class:`ArchiveReads`
the read-only queries (``podarchive status``, the web layer), which
:class:`~podarchive.store.reader.ArchiveReader` has without any writer method. The concrete
:class:`~podarchive.store.Archive` is both; tests may hand the application layer anything
shaped like them.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager
from types import TracebackType
from typing import Any, Protocol, Self

from podarchive.core.types import (
    BodyRef,
    Capture,
    CaptureKind,
    EpisodeWrite,
    Exchange,
    FeedHistory,
    FeedState,
    FetchRecord,
    FileKind,
    FileTask,
    KeptBody,
    Link,
    PageHow,
    PageNotes,
    PageTask,
    Row,
    SaveStats,
    Snapshot,
    UncapturedBody,
)  # fmt: skip

from .feed_history import KnownItems
from .feeds import FeedSave, UnchangedPoll
from .media import MediaState, MediaTask


class ArchiveReads(Protocol):
    """The read-only queries of an archive."""

    def __enter__(self) -> Self: ...
    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        tb: TracebackType | None,
    ) -> None: ...
    def close(self) -> None: ...
    def feed_state(self, url: str) -> FeedState | None: ...
    def feeds(self) -> list[tuple[int, str, str | None]]: ...
    def feed_statuses(self) -> list[dict[str, Any]]: ...
    def count(self, table: str) -> int: ...


class ArchiveLike(Protocol):
    """The archive as update/ and tasks/ use it: :class:`~podarchive.store.Archive`'s
    methods they call, with its signatures (mypy checks that ``Archive`` is one)."""

    def add_media_version(self, episode_id: int, url: str, sha256: str, now: str) -> int: ...
    def add_site_episode(self, feed_id: int, key: str, url: str, now: str) -> bool: ...
    def audit_queue(self, limit_bytes: int | None = None) -> list[Row]: ...
    def backfill_page(self, feed_id: int, url: str) -> Row | None: ...
    def capture_body(self, body_ref: BodyRef) -> bytes: ...
    def captures(
        self,
        feed_ids: Collection[int] | None = None,
        since: str | None = None,
        kinds: Collection[str] | None = None,
    ) -> Iterator[Capture]: ...
    def backfill_page_tasks(
        self, feed_id: int, since: str | None
    ) -> list[tuple[PageTask, str]]: ...
    def clear_redirects(self, feed_id: int) -> None: ...
    def drop_media_version(self, episode_id: int, url: str, sha256: str) -> int: ...
    def deferred_link_indexes(self) -> AbstractContextManager[None]: ...
    def ensure_feed(self, url: str, name: str | None, now: str) -> FeedState: ...
    def named_states(self, urls: Collection[str]) -> dict[str, tuple[FeedState, str | None]]: ...
    def episode_keys(self, feed_id: int) -> set[str]: ...
    def episodes_with_page_bodies(self, feed_id: int) -> list[tuple[int, str | None]]: ...
    def feed_state(self, url: str) -> FeedState | None: ...
    def feed_states(self) -> dict[str, FeedState]: ...
    def feeds(self) -> list[tuple[int, str, str | None]]: ...
    def feeds_without_tags(self) -> list[tuple[int, str, str | None]]: ...
    def fetch_settings(self, feed_id: int) -> str | None: ...
    def files_to_fetch(
        self,
        feed_id: int,
        now: str,
        kinds: Iterable[FileKind],
        *,
        everything: bool = False,
        failing: bool = False,
    ) -> list[FileTask]: ...
    def finish_walk(self, walk_id: int, now: str) -> None: ...
    def host_blocks(self, now: str) -> dict[str, str]: ...
    def import_history(self, feed_id: int, history: FeedHistory) -> SaveStats: ...
    def ingest_counts(self, urls: Collection[str]) -> tuple[int, int]: ...
    def known_items(self) -> KnownItems | None: ...
    def latest_feed_body(self, feed_id: int) -> tuple[bytes, str, str | None] | None: ...
    def media_due(
        self, feed_id: int, now: str, *, recheck: bool = False, alternates: bool = False
    ) -> list[MediaTask]: ...
    def media_links(self, sha256: str) -> list[Row]: ...
    def images_due(self, feed_id: int, now: str, *, recheck: bool = False) -> list[MediaTask]: ...
    def image_versions(self, feed_id: int, url: str) -> list[Row]: ...
    def add_image_version(self, feed_id: int, url: str, sha256: str, now: str) -> int: ...
    def drop_image_version(self, feed_id: int, url: str, sha256: str) -> int: ...
    def set_image_state(self, feed_id: int, url: str, state: MediaState, now: str) -> None: ...
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
    ) -> int: ...
    def media_state(self, episode_id: int, url: str) -> MediaState | None: ...
    def media_versions(self, episode_id: int, url: str) -> list[Row]: ...
    def mark_tags_filled(self, feed_id: int, now: str) -> None: ...
    def move_feed(
        self, feed_id: int, old_url: str, new_url: str, reason: str, now: str
    ) -> None: ...
    def open_walk(self, feed_id: int) -> int | None: ...
    def page_age(self, episode_id: int) -> tuple[str | None, str | None]: ...
    def page_bodies_cover_history(self, episode_id: int) -> bool: ...
    def page_index(self, feed_id: int) -> list[tuple[int, str, str | None, str | None]]: ...
    def page_observations(self, episode_id: int) -> list[tuple[str, KeptBody]]: ...
    def pages_to_fetch(self, feed_id: int) -> list[PageTask]: ...
    def pages_to_recheck(
        self, feed_id: int, now: str, *, everything: bool = False, failing: bool = False
    ) -> list[PageTask]: ...
    def rebuild_page_history(
        self, episode_id: int, versions: Sequence[tuple[str, PageNotes]]
    ) -> bool: ...
    def record_backfill_page(
        self,
        feed_id: int,
        walk_id: int,
        url: str,
        *,
        kind: str,
        status: str,
        now: str,
        records: Iterable[FetchRecord] = (),
        error: str | None = None,
        since: str | None = None,
        etag: str | None = None,
        last_modified: str | None = None,
        links: Sequence[tuple[str, str]] = (),
        keys: Sequence[str] = (),
        episodes: Sequence[EpisodeWrite] = (),
        seen: frozenset[str] = frozenset(),
        snapshot: Snapshot | None = None,
    ) -> SaveStats: ...
    def record_feed_error(
        self,
        feed_id: int,
        error: str,
        status: int | None,
        now: str,
        records: Iterable[FetchRecord],
        *,
        gone: bool = False,
    ) -> None: ...
    def record_feed_unchanged(
        self,
        feed_id: int,
        *,
        status: int,
        etag: str | None,
        last_modified: str | None,
        now: str,
        records: Iterable[FetchRecord],
    ) -> None: ...
    def store_unchanged(self, poll: UnchangedPoll) -> None: ...
    def record_captures(
        self,
        exchanges: Sequence[Exchange],
        *,
        kind: CaptureKind,
        feed_id: int | None,
        episode_id: int | None = None,
        body_sha256: str | None = None,
        body_size: int | None = None,
    ) -> list[int]: ...
    def record_file(
        self,
        task: FileTask,
        *,
        status: str,
        now: str,
        records: Iterable[FetchRecord],
        next_check_at: str,
        error: str | None = None,
        body: KeptBody | None = None,
        parsed: Any = None,
        etag: str | None = None,
        last_modified: str | None = None,
    ) -> None: ...
    def record_fixity(
        self, sha256: str, expected: str, found: str | None, outcome: str, now: str
    ) -> None: ...
    def record_media_fetch(
        self,
        episode_id: int,
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
        feed_id: int | None = None,
    ) -> int: ...
    def record_page(
        self,
        task: PageTask,
        *,
        status: str,
        now: str,
        records: Iterable[FetchRecord],
        error: str | None = None,
        extractor: str | None = None,
        notes_html: str | None = None,
        notes_text: str | None = None,
        links: Sequence[Link] = (),
        etag: str | None = None,
        last_modified: str | None = None,
        body: KeptBody | None = None,
        recheck_at: str | None = None,
        how: PageHow | None = None,
    ) -> None: ...
    def record_payload(
        self, sha256: str, size: int, content_type: str | None, ext: str, now: str
    ) -> bool: ...
    def record_redirect(self, feed_id: int, status: int, target: str, now: str) -> None: ...
    def redirect_sightings(self, feed_id: int) -> list[tuple[str, str]]: ...
    def replay_observations(
        self, feed_id: int
    ) -> list[tuple[str, bytes, str, str | None, str]]: ...
    def save_feed(self, save: FeedSave) -> SaveStats: ...
    def save_host_blocks(self, blocks: Mapping[str, str], now: str) -> None: ...
    def set_fetch_settings(self, feed_id: int, settings: str) -> None: ...
    def set_media_state(self, episode_id: int, url: str, state: MediaState, now: str) -> None: ...
    def set_schedule_state(
        self, feed_id: int, *, next_due_at: str | None, not_before: str | None = None
    ) -> None: ...
    def set_site_episode_title(self, episode_id: int, title: str) -> None: ...
    def set_warnings(self, feed_id: int, warnings: Sequence[str]) -> None: ...
    def start_walk(self, feed_id: int, now: str) -> int: ...
    def transaction(self) -> AbstractContextManager[None]: ...
    def uncaptured_bodies(
        self, feed_ids: Collection[int] | None = None, since: str | None = None
    ) -> Iterator[UncapturedBody]: ...
    def with_feed_notes(self, tasks: Sequence[PageTask]) -> list[PageTask]: ...
