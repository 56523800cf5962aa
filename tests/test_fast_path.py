"""The item cache (issue #7) changes what is parsed, never what is archived.

Each feed of the corpus (03-real-feeds) and the fixtures is archived twice over the same
sequence of bodies (original, lastBuildDate-only change, one new item, one edited item):
once with the item cache, once forced to parse everything; the archives must be the same
by natural keys. Skipped for the corpus when ../shared/corpus is absent.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from loopback import FIXTURES, LoopbackSite
from test_history import keyed_dump

from podarchive.core.settings import Settings
from podarchive.read import item_split
from podarchive.read.schedule_files import FeedSchedule
from podarchive.store import Archive
from podarchive.update.run import update_feeds

BUILD_DATE = re.compile(rb"<lastBuildDate>[^<]*</lastBuildDate>")
FIRST_TITLE = re.compile(rb"(<item[\s>].*?<title[^>]*>)", re.S)


MAX_CORPUS_BYTES = 60_000  # 10 archive runs per feed: larger feeds make this minutes long


class Clock:
    def __init__(self) -> None:
        self.now = datetime(2024, 1, 1, tzinfo=UTC)

    def __call__(self) -> datetime:
        self.now += timedelta(minutes=1)
        return self.now


def bodies(original: bytes) -> list[bytes]:
    """The original, a lastBuildDate-only change, one new item on top, one item edited."""
    if BUILD_DATE.search(original):
        dated = BUILD_DATE.sub(
            b"<lastBuildDate>Tue, 02 Jan 2024 10:00:00 GMT</lastBuildDate>", original
        )
    else:
        dated = original.replace(
            b"<channel>",
            b"<channel><lastBuildDate>Tue, 02 Jan 2024 10:00:00 GMT</lastBuildDate>",
            1,
        )
    split = item_split.split_items(dated)
    if split is None:
        return [original, dated]
    a, b = split.spans[0]
    first = dated[a:b]
    new = re.sub(rb"(<guid[^>]*>)", rb"\1new-", first, count=1)
    new = FIRST_TITLE.sub(rb"\1NEW ", new, count=1)
    added = dated[:a] + new + b"\n" + dated[a:]
    edited = FIRST_TITLE.sub(rb"\1EDITED ", added[: a + len(new) + 1], count=1)
    edited = (
        added[:a] + FIRST_TITLE.sub(rb"\1EDITED ", new, count=1) + b"\n" + added[a + len(new) + 1 :]
    )
    return [original, dated, added, edited, added]


def archive_sequence(tmp: Path, site: LoopbackSite, sequence: list[bytes], cache: bool) -> Path:
    db = tmp / f"cache-{cache}.db"
    clock = Clock()
    settings = Settings(host_gap=0, item_cache=cache, retries=0)
    with Archive(db) as archive:
        for body in sequence:
            site.serve("/feed", body)
            update_feeds(
                archive,
                [
                    FeedSchedule(
                        url=site.url("/feed"),
                        name="f",
                        pages=False,
                        transcripts=False,
                        chapters=False,
                    )
                ],
                settings=settings,
                clock=clock,
            )
    return db


def same_archives(tmp: Path, site: LoopbackSite, original: bytes) -> bool:
    sequence = bodies(original)
    fast = keyed_dump(archive_sequence(tmp, site, sequence, True))
    full = keyed_dump(archive_sequence(tmp, site, sequence, False))
    for table in fast:
        if fast[table] != full[table] and table == "feeds":
            diff = {
                k: (v, full[table][0][k])
                for k, v in fast[table][0].items()
                if v != full[table][0][k]
            }
            raise AssertionError(f"feeds differ: {diff}")
    assert fast == full
    return len(sequence) > 2


def test_fixture_feed_fast_path_equals_full_parse(tmp_path: Path, site: LoopbackSite) -> None:
    assert same_archives(tmp_path, site, (FIXTURES / "pytorch" / "feed.xml").read_bytes())


def test_fast_path_parses_only_new_items(
    tmp_path: Path, site: LoopbackSite, monkeypatch: pytest.MonkeyPatch
) -> None:
    import podarchive.read.parse as reading  # read_feed takes parse_feed from there per call

    seen: list[int] = []
    real = reading.parse_feed

    def counting(body: bytes, *args: object, **kwargs: object) -> object:
        parsed = real(body, *args, **kwargs)  # type: ignore[arg-type]
        seen.append(len(parsed.episodes))
        return parsed

    monkeypatch.setattr(reading, "parse_feed", counting)  # small runs parse inline
    sequence = bodies((FIXTURES / "pytorch" / "feed.xml").read_bytes())
    db = archive_sequence(tmp_path, site, sequence, True)
    total = len(item_split.split_items(sequence[0]).spans)  # type: ignore[union-attr]
    assert seen == [total, 0, 1, 1, 1]  # full, none, the new one, the edited one, it reverted
    with Archive(db) as archive:
        assert archive.count("episodes") == total + 1
        assert (
            archive.db.execute(
                "SELECT count(*) FROM episodes WHERE removed_from_feed_at IS NOT NULL OR unlisted_at IS NOT NULL"
            ).fetchone()[0]
            == 0
        )


@pytest.mark.slow
@pytest.mark.corpus
def test_corpus_fast_path_equals_full_parse(
    corpus: Path, tmp_path: Path, site: LoopbackSite
) -> None:
    files = sorted(
        p
        for p in (corpus / "03-real-feeds").rglob("*")
        if p.is_file()
        and p.suffix in (".xml", ".rss", ".atom")
        # 10 archive runs per feed: the few multi-megabyte feeds would take minutes
        and p.stat().st_size <= MAX_CORPUS_BYTES
    )
    # every third file: ten archive runs per feed over all of them take minutes, and a third
    # still covers every source folder of the corpus
    files = files[::3]
    assert files
    split = 0
    for index, path in enumerate(files):
        folder = tmp_path / str(index)
        folder.mkdir()
        split += same_archives(folder, site, path.read_bytes())
    assert split > len(files) / 3  # the fast path was exercised on most of them
