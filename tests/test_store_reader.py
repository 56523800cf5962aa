"""The read-only archive (``store.ArchiveReader``) and the Protocols the application layer
types its archive with (``store.protocol``)."""

from __future__ import annotations

import inspect
from pathlib import Path

from podarchive.store import Archive, ArchiveLike, ArchiveReader, ArchiveReads, base


def test_open_to_read_gives_the_reader_without_writer_methods(tmp_path: Path) -> None:
    path = tmp_path / "a.db"
    with Archive(path) as archive:
        archive.ensure_feed("https://ex.example/feed", "Show", "2026-12-01T00:00:00Z")
    with Archive.open_to_read(path) as reader:
        assert isinstance(reader, ArchiveReader)
        assert [url for _, url, _ in reader.feeds()] == ["https://ex.example/feed"]
        state = reader.feed_state("https://ex.example/feed")
        assert state is not None
        assert state.fetch_trusted
        assert reader.count("feeds") == 1
        assert [s["url"] for s in reader.feed_statuses()] == ["https://ex.example/feed"]
        for writer_only in ("save_feed", "ensure_feed", "record_page", "move_feed"):
            assert not hasattr(reader, writer_only), writer_only


def test_every_public_member_of_the_reader_is_translated() -> None:
    wrapper = base._translated(len).__code__
    for name in (n for n in dir(ArchiveReader) if not n.startswith("_")):
        member = inspect.getattr_static(ArchiveReader, name)
        if isinstance(member, property):
            member = member.fget
        member = getattr(member, "__func__", member)
        assert getattr(member, "__code__", None) is wrapper, name


def test_the_protocols_name_only_what_the_concrete_classes_have() -> None:
    for protocol, classes in ((ArchiveLike, [Archive]), (ArchiveReads, [Archive, ArchiveReader])):
        names = [n for n in vars(protocol) if not n.startswith("_") or n in ("__enter__",)]
        assert names
        for cls in classes:
            for name in names:
                assert callable(getattr(cls, name)), (protocol.__name__, cls.__name__, name)
