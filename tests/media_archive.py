"""An archive with stored media, made as a run would leave it (no network): the ledger rows
through :class:`~podarchive.store.media.MediaMixin`, the bytes through
:class:`~podarchive.store.media_files.MediaFolder`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from podarchive.core.types import EpisodeWrite, FetchRecord
from podarchive.store import Archive, FeedSave
from podarchive.store.media_files import MediaFolder

NOW = "2026-12-02T12:00:00Z"
FEED = "https://ex.example/feed"


def payload_bytes(n: int, size: int = 4096) -> bytes:
    """``size`` bytes that differ for each ``n``."""
    return bytes((n * 7 + i) % 251 for i in range(size))


def media_archive(
    db: Path, bodies: dict[str, bytes], kind: str = "audio/mpeg", ext: str = ".mp3"
) -> dict[str, str]:
    """An archive at ``db`` with feed "Show" and one episode per key of ``bodies`` ("Episode
    KEY", enclosure ``https://cdn.example/KEY.mp3``), each with its body stored as version 1
    in ``media`` beside ``db``; returns key → SHA-256 (equal bodies share one payload)."""
    folder = MediaFolder(db.parent / "media")
    stored: dict[str, str] = {}
    with Archive(db) as archive:
        feed = archive.ensure_feed(FEED, "Show", NOW)
        episodes = [_episode(key, n, kind, ext) for n, key in enumerate(bodies)]
        archive.save_feed(
            FeedSave(
                feed.id, {"title": "Show"}, episodes, status=200, etag=None,
                last_modified=None, content_hash="h", now=NOW,
                records=[FetchRecord(FEED, "feed", NOW, 5, 200, 10)],
            )
        )  # fmt: skip
        ids = dict(archive.db.execute("SELECT key, id FROM episodes").fetchall())
        for key, body in bodies.items():
            partial = folder.partial_path(f"{ids[key]}-x")
            partial.write_bytes(body)
            payload = folder.commit(partial, ext)
            url = f"https://cdn.example/{key}{ext}"
            archive.record_payload(payload.sha256, payload.size, kind, ext, NOW)
            archive.record_media_fetch(
                ids[key], url, outcome="stored", now=NOW, status=200,
                moved=payload.size, sha256=payload.sha256,
            )  # fmt: skip
            archive.add_media_version(ids[key], url, payload.sha256, NOW)
            stored[key] = payload.sha256
    return stored


def _episode(key: str, n: int, kind: str, ext: str) -> EpisodeWrite:
    row: dict[str, Any] = {
        "guid": key, "title": f"Episode {key}", "published": f"2026-11-{n + 1:02d}T00:00:00Z",
        "enclosure_url": f"https://cdn.example/{key}{ext}", "enclosure_type": kind,
        "enclosure_length": 4096,
    }  # fmt: skip
    return EpisodeWrite(key=key, row=row, links=())


def stored_path(db: Path, sha256: str, ext: str = ".mp3") -> Path:
    """Where payload ``sha256`` is in the media folder beside ``db``."""
    return MediaFolder(db.parent / "media").path_of(sha256, ext)
