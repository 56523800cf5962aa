"""The content-addressed media folder: payloads under their SHA-256, partial downloads, audits.

A payload lives at ``<root>/ab/cd/<sha256><ext>`` (the first two pairs of hex digits as
folders), written once and never rewritten: :meth:`MediaFolder.commit` hashes a complete
partial file (``<root>/.partial/<key>``), fsyncs it and renames it into place, or removes it
when the same bytes are stored already (dedup); the folder is fsynced after. No SQLite here:
the ledger is :mod:`.media`'s. Every ``OSError`` becomes a one-line :class:`MediaStoreError`
(a full disk says so, with ``disk_full`` set).
"""

from __future__ import annotations

import errno
import hashlib
import os
import re
import shutil
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Literal
from urllib.parse import urlsplit

from podarchive.core.errors import MediaStoreError

CHUNK = 1 << 20  # bytes read at a time while hashing
PARTIAL = ".partial"
_SHA256 = re.compile(r"[0-9a-f]{64}")
_EXT = re.compile(r"\.[a-z0-9]{1,5}")

#: media type → the extension a payload of it is stored with
MEDIA_EXTENSIONS = {
    "audio/mpeg": ".mp3", "audio/mp3": ".mp3", "audio/mpeg3": ".mp3", "audio/x-mpeg": ".mp3",
    "audio/mp4": ".m4a", "audio/x-m4a": ".m4a", "audio/m4a": ".m4a", "audio/aac": ".aac",
    "audio/x-aac": ".aac", "audio/ogg": ".ogg", "audio/vorbis": ".ogg", "audio/opus": ".opus",
    "audio/flac": ".flac", "audio/x-flac": ".flac", "audio/wav": ".wav", "audio/x-wav": ".wav",
    "audio/webm": ".weba", "video/mp4": ".mp4", "video/x-m4v": ".m4v", "video/quicktime": ".mov",
    "video/webm": ".webm", "video/ogg": ".ogv", "video/mpeg": ".mpeg", "application/ogg": ".ogg",
}  # fmt: skip
_KNOWN_EXTENSIONS = frozenset(MEDIA_EXTENSIONS.values()) | {".mpga", ".oga"}


def media_extension(content_type: str | None, url: str | None = None) -> str:
    """The extension to store a payload with: from its media type, else from the URL's path
    when it is a known media extension, else ``""``."""
    media_type = (content_type or "").split(";")[0].strip().lower()
    if media_type in MEDIA_EXTENSIONS:
        return MEDIA_EXTENSIONS[media_type]
    if url:
        suffix = os.path.splitext(urlsplit(url).path)[1].lower()
        if suffix in _KNOWN_EXTENSIONS:
            return suffix
    return ""


@dataclass(frozen=True, slots=True)
class Payload:
    """A payload in the folder: its SHA-256, size, path, and whether this commit stored it
    (``new``) or found the same bytes there already."""

    sha256: str
    size: int
    path: Path
    new: bool


@dataclass(frozen=True, slots=True)
class Fixity:
    """An audit of one stored payload: ``found`` is the SHA-256 of its bytes now (None when
    the file is missing)."""

    outcome: Literal["ok", "mismatch", "missing"]
    found: str | None


def hash_file(path: Path, chunk: int = CHUNK) -> tuple[str, int]:
    """The SHA-256 (hex) and size of the file at ``path``, read ``chunk`` bytes at a time."""
    digest = hashlib.sha256()
    size = 0
    with open(path, "rb") as f:
        while block := f.read(chunk):
            digest.update(block)
            size += len(block)
    return digest.hexdigest(), size


def media_error(e: OSError, doing: str) -> MediaStoreError:
    """The one-line error for an ``OSError`` while ``doing`` something to the media folder."""
    if e.errno in (errno.ENOSPC, errno.EDQUOT):
        where = f" ({e.filename})" if e.filename else ""
        return MediaStoreError(
            f"the disk of the media folder is full{where}: {doing} stopped; free space and "
            "run again (the partial download is kept)",
            disk_full=True,
        )
    reason = e.strerror or str(e)
    where = f" {e.filename}" if e.filename else ""
    return MediaStoreError(f"cannot {doing}{where}: {reason}")


@contextmanager
def media_errors(doing: str) -> Iterator[None]:
    """Translate an ``OSError`` raised inside into :func:`media_error`."""
    try:
        yield
    except OSError as e:
        raise media_error(e, doing) from e


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


class MediaFolder:
    """The media folder at ``root`` (created on the first write). ``owner`` names the
    archive whose partial downloads go in ``.partial/<owner>/``: archives sharing one folder
    (a cluster's shards) share payloads, never a partial file, whose keys are per archive."""

    def __init__(self, root: Path | str, owner: str = "") -> None:
        self.root = Path(root)
        if owner and (owner.startswith(".") or "/" in owner or "\\" in owner):
            raise MediaStoreError(f"not an archive name for partial files: {owner!r}")
        self.partials = self.root / PARTIAL / owner if owner else self.root / PARTIAL

    def partial_path(self, key: str) -> Path:
        """Where the partial download named ``key`` (e.g. ``f"{episode_id}-{url_hash}"``) is
        written; its folder is created."""
        if not key or "/" in key or "\\" in key or key.startswith("."):
            raise MediaStoreError(f"not a partial file name: {key!r}")
        folder = self.partials
        with media_errors("create the media folder"):
            folder.mkdir(parents=True, exist_ok=True)
        return folder / key

    def path_of(self, sha256: str, ext: str = "") -> Path:
        """Where the payload ``sha256`` with extension ``ext`` is (or would be) stored."""
        if not _SHA256.fullmatch(sha256) or (ext and not _EXT.fullmatch(ext)):
            raise MediaStoreError(f"not a payload name: {sha256!r} {ext!r}")
        return self.root / sha256[:2] / sha256[2:4] / f"{sha256}{ext}"

    def commit(
        self, partial: Path, ext: str, *, fsync: Callable[[int], None] = os.fsync
    ) -> Payload:
        """Store the complete download at ``partial`` under its SHA-256: fsynced, then renamed
        into place, or removed when the same bytes are stored already. The stored file is
        never rewritten."""
        with media_errors("store a media file"):
            sha256, size = hash_file(partial)
            with open(partial, "rb") as f:
                fsync(f.fileno())
            target = self.path_of(sha256, ext)
            if target.exists():
                partial.unlink()
                return Payload(sha256, size, target, new=False)
            target.parent.mkdir(parents=True, exist_ok=True)
            os.replace(partial, target)  # the same file system: the partial folder is inside
            _fsync_dir(target.parent)
            _fsync_dir(partial.parent)
        return Payload(sha256, size, target, new=True)

    def verify(self, sha256: str, ext: str = "") -> Fixity:
        """Re-hash the stored payload: ``ok``, ``mismatch`` (its bytes changed) or ``missing``."""
        path = self.path_of(sha256, ext)
        try:
            found, _ = hash_file(path)
        except FileNotFoundError:
            return Fixity("missing", None)
        except OSError as e:
            raise media_error(e, "read a media file") from e
        return Fixity("ok" if found == sha256 else "mismatch", found)

    def free_bytes(self) -> int:
        """The bytes free on the media folder's disk (of its nearest existing ancestor)."""
        path = self.root
        while not path.exists() and path != path.parent:
            path = path.parent
        with media_errors("read the free space of the media folder"):
            return shutil.disk_usage(path).free
