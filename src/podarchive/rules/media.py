"""Episode media (#26), the pure rules: which files an episode's media job fetches, when an
archived file is re-checked, which versions the cap drops, and the run's byte budget.

Plain values in, plain values out; no I/O, no clock (``now`` is passed in):

- :func:`wanted_media`: the episode's enclosure when its type is one of the schedule's
  ``media_types`` (``audio/*``, ``video/*``; a missing or generic type is guessed from the URL's
  extension), plus its ``podcast:alternateEnclosure`` sources when ``media_alternates``; nothing
  for an episode published before ``media_since``; a declared length over ``media_max_bytes``
  is listed with the reason it is skipped.
- :func:`next_media_check`: re-checks at 1 day, 1 week and 1 month after archiving, then
  never, unless ``--recheck-media`` (due now).
- :func:`versions_to_drop`: the ``media_versions`` cap keeps the first and the latest version.
- :class:`Budget`: the per-run media byte budget (``PODARCHIVE_MEDIA_BUDGET``), thread-safe.
- :func:`image_target`, :func:`image_extension`: a podcast's artwork or an episode's image
  (#28) as one more file of the media phase, at most :data:`IMAGE_MAX_BYTES`, and the
  extension it is stored with (raster images only: an SVG may hold scripts, it is stored
  without one and never shown from the archive).
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from posixpath import splitext
from typing import Literal
from urllib.parse import unquote, urlsplit

from podarchive.core.errors import shorten
from podarchive.core.mediatype import parse_content_type
from podarchive.core.records import record
from podarchive.core.settings import GiB
from podarchive.core.types import Enclosure

MAX_MEDIA_BYTES = 1024 * GiB  # the ceiling of media_max_bytes (1 TiB)
MAX_MEDIA_VERSIONS = 1000  # the ceiling of media_versions
MediaKind = Literal["audio", "video"]
MEDIA_KINDS: tuple[MediaKind, ...] = ("audio", "video")
DEFAULT_MAX_BYTES = 2 * GiB
DEFAULT_VERSIONS = 3
#: A file's extension → what it holds, for an enclosure without a usable type.
EXTENSION_KINDS: dict[str, MediaKind] = {
    **dict.fromkeys((".mp3", ".m4a", ".aac", ".ogg", ".opus", ".wav", ".flac"), "audio"),
    **dict.fromkeys((".mp4", ".m4v", ".mov", ".webm"), "video"),
}
#: Types that say nothing about what a file holds: guessed from the URL as a missing one is.
GENERIC_TYPES = frozenset({"", "application/octet-stream", "binary/octet-stream"})
#: Re-checks of an archived file, as ages after it was archived; after the last, never.
RECHECK_AGES: tuple[timedelta, ...] = (timedelta(days=1), timedelta(days=7), timedelta(days=30))


#: The most bytes an image (a podcast's artwork, an episode's image) may have (#28).
IMAGE_MAX_BYTES = 20 * 1024 * 1024
#: An image's media type → the extension it is stored with: raster types a browser shows.
IMAGE_EXTENSIONS = {
    "image/png": ".png", "image/jpeg": ".jpg", "image/jpg": ".jpg", "image/pjpeg": ".jpg",
    "image/gif": ".gif", "image/webp": ".webp", "image/avif": ".avif",
}  # fmt: skip
#: An image URL's extension → the one it is stored with, for a missing or generic type.
IMAGE_URL_EXTENSIONS = {
    ".png": ".png", ".jpg": ".jpg", ".jpeg": ".jpg", ".gif": ".gif", ".webp": ".webp",
    ".avif": ".avif",
}  # fmt: skip


@record
class MediaChoice:
    """A feed's media keys in its schedule entry (defaults: no media)."""

    media: bool = False
    media_types: frozenset[MediaKind] = frozenset(MEDIA_KINDS)
    media_alternates: bool = False
    media_since: date | None = None
    media_max_bytes: int = DEFAULT_MAX_BYTES
    media_versions: int = DEFAULT_VERSIONS


@record
class MediaTarget:
    """One file an episode's media job fetches (``skipped`` None), or would but for a reason."""

    url: str
    content_type: str | None  # as the feed declares it (None: not declared)
    length: int | None  # as the feed declares it (None: not declared, or not a number ≥ 0)
    kind: MediaKind | Literal["image"]
    source: Literal["enclosure", "alternate", "image"] = "enclosure"
    skipped: str | None = None  # why it is not fetched (one line)


def check_media_types(value: object) -> tuple[MediaKind, ...]:
    """A schedule's ``media_types``: a list of ``"audio"`` and ``"video"`` (or one of them, or
    both comma-separated, as text), not empty; returned in :data:`MEDIA_KINDS`' order, once
    each. Anything else is a ValueError (one line)."""
    if isinstance(value, str):
        value = [part.strip() for part in value.split(",")]
    expected = 'must be a list of "audio" and "video"'
    if not isinstance(value, list) or not value:
        raise ValueError(expected)
    for item in value:
        if item not in MEDIA_KINDS:
            shown = shorten(str(item), 20) if isinstance(item, str) else type(item).__name__
            raise ValueError(f"{expected}, not {shown!r}")
    return tuple(kind for kind in MEDIA_KINDS if kind in value)


def check_media_since(value: object) -> date:
    """A schedule's ``media_since``: a TOML date (``2024-01-31``) or such text; a date with a
    time, or anything else, is a ValueError."""
    if isinstance(value, date) and not isinstance(value, datetime):
        return value
    if isinstance(value, str) and re.fullmatch(r"[0-9]{4}-[0-9]{2}-[0-9]{2}", value.strip()):
        try:
            return date.fromisoformat(value.strip())
        except ValueError:
            pass  # 2024-02-30
    shown = f", not {shorten(value, 30)!r}" if isinstance(value, str) else ""
    raise ValueError(f"must be a date (YYYY-MM-DD){shown}")


def check_media_count(key: str, value: object) -> int:
    """``media_max_bytes`` (1 to :data:`MAX_MEDIA_BYTES`) or ``media_versions`` (1 to
    :data:`MAX_MEDIA_VERSIONS`): a whole number in range, else a ValueError."""
    high = MAX_MEDIA_BYTES if key == "media_max_bytes" else MAX_MEDIA_VERSIONS
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= high:
        raise ValueError(f"must be a whole number from 1 to {high}")
    return value


def media_kind(content_type: str | None, url: str) -> MediaKind | None:
    """``audio`` or ``video`` by the declared type (``audio/*``, ``video/*``); a missing or
    generic type (:data:`GENERIC_TYPES`) by the URL path's extension (:data:`EXTENSION_KINDS`);
    None for anything else (a PDF, a torrent, an unknown extension)."""
    media_type, _ = parse_content_type(content_type)
    if media_type not in GENERIC_TYPES:
        major = media_type.partition("/")[0]
        return major if major in ("audio", "video") else None  # type: ignore[return-value]
    try:
        path = urlsplit(url).path
    except ValueError:
        return None
    return EXTENSION_KINDS.get(splitext(unquote(path))[1].lower())


def alternate_sources(
    content_type: str | None, length: int | None, sources: Iterable[tuple[str, str | None]]
) -> list[Enclosure]:
    """One ``podcast:alternateEnclosure`` (its ``type``, ``length`` and ``podcast:source``
    children as ``(uri, contentType)``) as the files :func:`wanted_media` takes: a source's
    own contentType overrides the enclosure's type."""
    return [Enclosure(uri, source_type or content_type, length) for uri, source_type in sources]


def wanted_media(
    episode_enclosure: Enclosure | None,
    alternates: Sequence[Enclosure],
    published: datetime | date | None,
    choice: MediaChoice,
) -> list[MediaTarget]:
    """The files the media job fetches for one episode, enclosure first, each URL once.

    Nothing unless ``choice.media``; nothing when ``choice.media_since`` is set and the episode
    was published before that day or its date is unknown (``published`` None: the caller may
    pass when it was first seen). Alternates (:func:`alternate_sources`) only with
    ``media_alternates``. A file of a kind not in ``media_types`` is left out; one declaring a
    length over ``media_max_bytes`` is listed with ``skipped`` saying so.
    """
    if not choice.media or not _published_in_time(published, choice.media_since):
        return []
    offered = [("enclosure", episode_enclosure)] if episode_enclosure is not None else []
    if choice.media_alternates:
        offered += [("alternate", alternate) for alternate in alternates]
    targets: list[MediaTarget] = []
    seen: set[str] = set()
    for source, enclosure in offered:
        target = _target(enclosure, source, choice)  # type: ignore[arg-type]
        if target is not None and target.url not in seen:
            seen.add(target.url)
            targets.append(target)
    return targets


def _published_in_time(published: datetime | date | None, since: date | None) -> bool:
    if since is None:
        return True
    if published is None:
        return False
    day = published.date() if isinstance(published, datetime) else published
    return day >= since


def _target(
    enclosure: Enclosure, source: Literal["enclosure", "alternate"], choice: MediaChoice
) -> MediaTarget | None:
    url = enclosure.url.strip() if enclosure.url else ""
    kind = media_kind(enclosure.type, url) if url else None
    if kind is None or kind not in choice.media_types:
        return None
    length = enclosure.length
    if isinstance(length, bool) or not isinstance(length, int) or length < 0:
        length = None
    skipped = None
    if length is not None and length > choice.media_max_bytes:
        skipped = f"declares {length} bytes, over media_max_bytes ({choice.media_max_bytes})"
    return MediaTarget(url, enclosure.type, length, kind, source, skipped)


def next_media_check(
    archived_at: datetime,
    checks_done: int,
    now: datetime,
    recheck: bool,
    *,
    last_checked: datetime | None = None,
) -> datetime | None:
    """When an archived media file is next re-checked (a conditional request), or None: never.

    The age rule: at 1 day, 1 week and 1 month after ``archived_at`` (:data:`RECHECK_AGES`),
    then never. ``checks_done`` re-checks were made so far; an age already passed at
    ``last_checked`` (a late re-check) is not made again. The time returned may be in the
    past: due. ``recheck`` (``--recheck-media``) makes the file due ``now`` whatever its age.
    """
    if recheck:
        return now
    for age in RECHECK_AGES[max(checks_done, 0) :]:
        try:
            due = archived_at + age
        except OverflowError:
            return None
        if last_checked is None or due > last_checked:
            return due
    return None


def versions_to_drop(versions: Sequence[tuple[int, str]], cap: int) -> list[str]:
    """The payloads (SHA-256) of an episode's media versions that the cap ``media_versions``
    drops, oldest first.

    ``versions`` are ``(version number, sha256)``. Kept: the first (never dropped), the latest,
    then the newest others until ``cap`` versions are kept (``cap`` 1 keeps the first only).
    A payload still kept under another version number is never listed.
    """
    ordered = sorted(versions)
    if len(ordered) <= max(cap, 1):
        return []
    first, rest = ordered[0], ordered[1:]
    kept_rest = rest[len(rest) - max(cap - 1, 0) :] if cap > 1 else []
    kept = {first[1]} | {sha for _, sha in kept_rest}
    dropped: list[str] = []
    for _, sha in ordered:
        if sha not in kept and sha not in dropped:
            dropped.append(sha)
    return dropped


@dataclass(slots=True)
class Budget:
    """The bytes a run may still download for media (``PODARCHIVE_MEDIA_BUDGET``); shared by
    the run's download threads (a lock guards it)."""

    limit_bytes: int
    _spent: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    def take(self, n: int) -> bool:
        """Spend ``n`` bytes if that many are left (True); else spend nothing (False)."""
        if n < 0:
            raise ValueError(f"cannot take {n} bytes")
        with self._lock:
            if self._spent + n > self.limit_bytes:
                return False
            self._spent += n
            return True

    def give_back(self, n: int) -> None:
        """Return ``n`` bytes taken but not used (a download that ended short of its
        reservation); never more than was spent."""
        with self._lock:
            self._spent -= min(max(n, 0), self._spent)

    @property
    def left(self) -> int:
        with self._lock:
            return max(self.limit_bytes - self._spent, 0)

    @property
    def spent(self) -> int:
        with self._lock:
            return self._spent


def image_target(url: str) -> MediaTarget:
    """An image (a podcast's artwork, an episode's image) as a file of the media phase: its
    length unknown until sent (cut off past :func:`image_max_bytes`)."""
    return MediaTarget(url.strip(), None, None, "image", "image")


def image_max_bytes(media_max_bytes: int) -> int:
    """The most bytes one image may have for a feed whose files may have ``media_max_bytes``."""
    return min(IMAGE_MAX_BYTES, media_max_bytes)


def image_extension(content_type: str | None, url: str | None) -> str:
    """The extension an image is stored with: by its raster media type
    (:data:`IMAGE_EXTENSIONS`), else (a missing or generic type) by its URL's; ``""`` for
    anything else (an SVG, an HTML error page), which the pages never show from the archive."""
    media_type, _ = parse_content_type(content_type)
    if media_type in IMAGE_EXTENSIONS:
        return IMAGE_EXTENSIONS[media_type]
    if media_type not in GENERIC_TYPES or not url:
        return ""
    try:
        path = urlsplit(url).path
    except ValueError:
        return ""
    return IMAGE_URL_EXTENSIONS.get(splitext(unquote(path))[1].lower(), "")
