"""The change feed reads only the rows a page can show (#28), and gives exactly what reading
the whole history gives: the latest N, the N after every cursor, from a date, of the whole
archive and of each podcast, with the current second held back. The archive: three podcasts
saved at four times (many changes in one second: ties the order breaks by kind and id),
episodes added, edited, their enclosures replaced, removed from the feed, podcasts edited."""

from __future__ import annotations

from pathlib import Path

import pytest

from podarchive.core.types import EpisodeWrite, FetchRecord
from podarchive.rules.changes import Change, select, to_changes
from podarchive.store import Archive, ArchiveReader, FeedSave
from podarchive.tasks import changes as tasks_changes
from podarchive.tasks.changes import ChangeQuery, read_changes

STAMPS = [f"2026-12-0{d}T10:00:00Z" for d in (1, 2, 3, 4)]
LATER = "2027-01-01T00:00:00Z"


def _episode(feed: int, n: int, stamp: int) -> EpisodeWrite:
    title = f"Episode {n}" + (" (fixed)" if stamp >= 1 and n % 3 == 0 else "")
    media = f"https://cdn.example/{feed}/{n}" + ("-v2" if stamp >= 2 and n % 4 == 1 else "")
    row = {
        "guid": f"f{feed}-e{n}", "title": title, "published": f"2020-01-{n + 1:02d}T00:00:00Z",
        "enclosure_url": f"{media}.mp3", "enclosure_type": "audio/mpeg", "notes_text": f"N{n}",
    }  # fmt: skip
    return EpisodeWrite(key=f"guid:f{feed}-e{n}", row=row, links=())


def _listed(feed: int, stamp: int) -> list[int]:
    count = 6 + 2 * stamp  # new episodes each time
    gone = {2, 5} if stamp >= 2 and feed != 2 else set()  # removed from the middle
    return [n for n in range(count) if n not in gone]


@pytest.fixture(scope="module")
def archive(tmp_path_factory: pytest.TempPathFactory) -> Path:
    db = tmp_path_factory.mktemp("bounds") / "archive.db"
    with Archive(db) as store:
        for stamp, now in enumerate(STAMPS):
            for feed in (1, 2, 3):
                url = f"https://feeds.example/{feed}.xml"
                state = store.ensure_feed(url, f"Show {feed}", now)
                title = f"Show {feed}" + (" (renamed)" if stamp == 3 and feed != 3 else "")
                store.save_feed(
                    FeedSave(
                        state.id, {"title": title},
                        [_episode(feed, n, stamp) for n in _listed(feed, stamp)],
                        status=200, etag=None, last_modified=None, content_hash=f"{feed}{now}",
                        now=now, records=[FetchRecord(url, "feed", now, 5, 200, 10)],
                    )
                )  # fmt: skip
    return db


def _everything(reader: ArchiveReader, feed_id: int | None, now: str) -> list[Change]:
    """The reference: the whole history read, then selected."""
    return select(to_changes(reader.change_rows(feed_id)), now=now)


def _ids(changes: list[Change]) -> list[str]:
    return [c.id for c in changes]


@pytest.mark.parametrize("named", [2000, 3])  # 3: many keys, the rows read by their times
@pytest.mark.parametrize("feed_id", [None, 1, 2])
@pytest.mark.parametrize("now", [LATER, STAMPS[2]])  # at STAMPS[2]: that second held back
def test_every_page_is_what_the_whole_history_gives(
    archive: Path, feed_id: int | None, now: str, named: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(tasks_changes, "NAMED_ROWS", named)
    with ArchiveReader.open_to_read(archive) as reader:
        every = _everything(reader, feed_id, now)
        kinds = {c.kind for c in every}
        assert len(every) > 10
        if now == LATER:
            assert {"episode-edited", "enclosure-replaced", "podcast-edited"} <= kinds
        assert all(c.at < now for c in every)
        for limit in (None, 1, 2, 3, 7, 50, len(every), len(every) + 1):
            size = len(every) if limit is None else limit
            latest = read_changes(reader, ChangeQuery(feed_id, limit=limit, now=now))
            assert _ids(latest) == _ids(every[-size:]), limit
            dated = read_changes(
                reader, ChangeQuery(feed_id, limit=limit, now=now, since=STAMPS[1])
            )
            assert _ids(dated) == _ids([c for c in every if c.at >= STAMPS[1]][:size])
            for i, change in enumerate(every):  # after each cursor
                query = ChangeQuery(feed_id, after=change.order, limit=limit, now=now)
                assert _ids(read_changes(reader, query)) == _ids(every[i + 1 : i + 1 + size])


def test_a_reader_walking_with_its_cursor_gets_each_change_once(archive: Path) -> None:
    with ArchiveReader.open_to_read(archive) as reader:
        every = _everything(reader, None, LATER)
        seen: list[Change] = []
        cursor = None
        while True:
            page = read_changes(
                reader,
                ChangeQuery(
                    after=cursor,
                    limit=4,
                    now=LATER,
                    since=None if cursor else "2026-01-01T00:00:00Z",
                ),
            )
            if not page:
                break
            seen.extend(page)
            cursor = page[-1].order
    assert _ids(seen) == _ids(every)
