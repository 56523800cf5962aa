"""The content-addressed media folder (issue #26): commit, dedup, audits, a full disk."""

from __future__ import annotations

import errno
import hashlib
import os
from pathlib import Path

import pytest

from podarchive.core.errors import MediaStoreError, StorageError
from podarchive.store import Fixity, MediaFolder, media_extension
from podarchive.store.media_files import hash_file, media_errors

AUDIO = bytes(range(256)) * 5000  # 1.28 MB: more than one hashing chunk


def download(folder: MediaFolder, key: str, body: bytes) -> Path:
    partial = folder.partial_path(key)
    partial.write_bytes(body)
    return partial


def test_commit_stores_the_bytes_under_their_sha256(tmp_path: Path) -> None:
    folder = MediaFolder(tmp_path / "media")
    partial = download(folder, "7-0123456789abcdef", AUDIO)
    assert partial == tmp_path / "media" / ".partial" / "7-0123456789abcdef"
    payload = folder.commit(partial, ".mp3")
    sha = hashlib.sha256(AUDIO).hexdigest()
    assert (payload.sha256, payload.size, payload.new) == (sha, len(AUDIO), True)
    assert payload.path == tmp_path / "media" / sha[:2] / sha[2:4] / f"{sha}.mp3"
    assert payload.path == folder.path_of(sha, ".mp3")
    assert payload.path.read_bytes() == AUDIO
    assert not partial.exists()
    assert hash_file(payload.path) == (sha, len(AUDIO))


def test_the_same_bytes_twice_are_stored_once(tmp_path: Path) -> None:
    folder = MediaFolder(tmp_path / "media")
    first = folder.commit(download(folder, "1-aaaa", AUDIO), ".mp3")
    stat = first.path.stat()
    second = folder.commit(download(folder, "2-bbbb", AUDIO), ".mp3")
    assert (second.sha256, second.path, second.new) == (first.sha256, first.path, False)
    assert not folder.partial_path("2-bbbb").exists()  # the duplicate download is removed
    assert first.path.stat().st_mtime_ns == stat.st_mtime_ns  # the stored file is untouched
    files = [p for p in (tmp_path / "media").rglob("*") if p.is_file()]
    assert files == [first.path]


def test_an_empty_payload_is_a_payload(tmp_path: Path) -> None:
    folder = MediaFolder(tmp_path / "media")
    payload = folder.commit(download(folder, "3-empty", b""), "")
    assert payload.sha256 == hashlib.sha256(b"").hexdigest()
    assert payload.size == 0
    assert folder.verify(payload.sha256) == Fixity("ok", payload.sha256)


def test_verify_finds_a_flipped_byte_and_a_deleted_file(tmp_path: Path) -> None:
    folder = MediaFolder(tmp_path / "media")
    payload = folder.commit(download(folder, "4-x", AUDIO), ".m4a")
    assert folder.verify(payload.sha256, ".m4a") == Fixity("ok", payload.sha256)
    damaged = bytearray(AUDIO)
    damaged[len(AUDIO) // 2] ^= 0x01
    payload.path.write_bytes(bytes(damaged))
    assert folder.verify(payload.sha256, ".m4a") == Fixity(
        "mismatch", hashlib.sha256(bytes(damaged)).hexdigest()
    )
    payload.path.unlink()
    assert folder.verify(payload.sha256, ".m4a") == Fixity("missing", None)


def test_names_that_could_leave_the_folder_are_refused(tmp_path: Path) -> None:
    folder = MediaFolder(tmp_path / "media")
    for key in ("", "../x", "a/b", ".hidden"):
        with pytest.raises(MediaStoreError):
            folder.partial_path(key)
    for sha, ext in (("../" + "a" * 61, ""), ("A" * 64, ""), ("a" * 64, "/../x")):
        with pytest.raises(MediaStoreError):
            folder.path_of(sha, ext)


def test_a_full_disk_is_one_line_that_says_so(tmp_path: Path) -> None:
    folder = MediaFolder(tmp_path / "media")
    partial = download(folder, "5-full", AUDIO)

    def full(fd: int) -> None:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    with pytest.raises(MediaStoreError) as caught:
        folder.commit(partial, ".mp3", fsync=full)
    assert isinstance(caught.value, StorageError)
    assert caught.value.disk_full
    assert "disk of the media folder is full" in str(caught.value)
    assert "\n" not in str(caught.value)
    assert partial.read_bytes() == AUDIO  # nothing lost: the download stays to commit later
    assert not [p for p in (tmp_path / "media").rglob("*.mp3")]


def test_a_write_that_fills_the_disk_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What the download side does: write its partial file inside ``media_errors``."""
    real_write = os.write

    def write(fd: int, data: bytes) -> int:
        if len(data) > 1000:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real_write(fd, data)

    folder = MediaFolder(tmp_path / "media")
    partial = folder.partial_path("6-w")
    monkeypatch.setattr(os, "write", write)

    def write_partial() -> None:
        with media_errors("write a media file"):
            fd = os.open(partial, os.O_WRONLY | os.O_CREAT)
            try:
                os.write(fd, AUDIO)
            finally:
                os.close(fd)

    with pytest.raises(MediaStoreError) as caught:
        write_partial()
    assert caught.value.disk_full
    assert "disk of the media folder is full" in str(caught.value)


def test_other_errors_are_one_line_naming_the_file(tmp_path: Path) -> None:
    folder = MediaFolder(tmp_path / "media")
    with pytest.raises(MediaStoreError) as caught:
        folder.commit(folder.partial_path("7-none"), ".mp3")  # no such partial file
    assert not caught.value.disk_full
    assert str(caught.value).startswith("cannot store a media file ")
    assert "7-none" in str(caught.value)


def test_free_bytes_before_and_after_the_folder_exists(tmp_path: Path) -> None:
    folder = MediaFolder(tmp_path / "media" / "deep")
    assert folder.free_bytes() > 0  # the nearest existing ancestor's disk
    folder.partial_path("8-z")
    assert folder.free_bytes() > 0


@pytest.mark.parametrize(
    ("content_type", "url", "ext"),
    [
        ("audio/mpeg", None, ".mp3"),
        ("Audio/MPEG; charset=binary", "https://x.example/a.m4a", ".mp3"),
        ("audio/x-m4a", None, ".m4a"),
        ("video/mp4", None, ".mp4"),
        ("audio/ogg", None, ".ogg"),
        ("application/octet-stream", "https://x.example/show/ep1.MP3?x=1", ".mp3"),
        (None, "https://x.example/ep.opus", ".opus"),
        (None, "https://x.example/ep.php?f=a.mp3", ""),
        ("application/octet-stream", "https://x.example/ep", ""),
        (None, None, ""),
    ],
)
def test_the_extension_comes_from_the_type_then_the_url(
    content_type: str | None, url: str | None, ext: str
) -> None:
    assert media_extension(content_type, url) == ext


def test_archives_sharing_a_folder_share_payloads_never_a_partial_file(tmp_path: Path) -> None:
    """Two shards' downloads with the same key (their episode ids are per archive) go to
    partial files of their own; the payload they both commit is stored once."""
    shard0 = MediaFolder(tmp_path / "media", owner="shard-0-of-2")
    shard1 = MediaFolder(tmp_path / "media", owner="shard-1-of-2")
    first, second = download(shard0, "3-abcd", AUDIO), download(shard1, "3-abcd", AUDIO)
    assert first != second
    assert first.parent == tmp_path / "media" / ".partial" / "shard-0-of-2"
    assert shard0.commit(first, ".mp3").new
    again = shard1.commit(second, ".mp3")
    assert not again.new
    assert again.path == shard0.path_of(again.sha256, ".mp3")
    for bad in (".hidden", "a/b", "..", "a\\b"):
        with pytest.raises(MediaStoreError):
            MediaFolder(tmp_path / "media", owner=bad)
