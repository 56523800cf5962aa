"""``Archive.save_feed`` takes its episodes as any iterable, consumed once, in order (#15).

A generator gives the same archive as a tuple of the same writes (every row of every table,
ids included), through first ingests, revisions, guid churn (also when the episode the new
guid matches is listed later in the body), removals, ``also_listed`` and tags; and it is
written a window at a time: the first episodes are in the archive before the last is drawn.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Iterable, Iterator
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest

from podarchive.core.types import EpisodeWrite, Link, SaveStats, Tag
from podarchive.store import Archive, FeedSave
from podarchive.store.episodes import WINDOW

PODCAST = "https://podcastindex.org/namespace/1.0"
COUNT = 2 * WINDOW + 37  # more than two windows


def write(
    i: int, *, key: str | None = None, title: str | None = None, media: int | None = None
) -> EpisodeWrite:
    """Episode ``i`` (newer for higher ``i``) as the feed gives it; ``media``: whose file."""
    key = key or f"k{i}"
    row = {
        "guid": key,
        "title": title or f"Episode {i}",
        "published": f"2020-01-01T00:00:00Z{i:05d}",
        "duration": 60 + i,
        "notes_html": f"<p>notes of {i} <a href='https://ex.example/{i}'>x</a></p>",
        "notes_text": f"notes of {i} x",
        "enclosure_url": f"https://cdn.example/{i if media is None else media}.mp3",
        "transcripts": json.dumps([{"url": f"https://ex.example/{i}.vtt", "type": "text/vtt"}]),
        "page_url": f"https://ex.example/ep/{i}",
    }
    links = (Link(0, f"https://ex.example/{i}", f"https://ex.example/{i}", "ex.example", "x"),)
    tags = (
        Tag(PODCAST, "person", (("role", "host"),), "Host", None, 0),
        Tag(PODCAST, "chapter", (("start", "0"),), None, 0, 0),
    )
    return EpisodeWrite(key, row, links, item_hash=f"{key}-{title}", tags=tags)


def bodies() -> list[tuple[list[EpisodeWrite], tuple[str, ...]]]:
    """(writes newest first, also_listed) of successive bodies of one feed."""
    first = [write(i) for i in reversed(range(COUNT))]
    second = [
        write(COUNT),  # a new episode
        write(COUNT + 1, key="churned-5", media=5),  # episode 5 under a new guid
        write(COUNT + 2, key="reuse-3", media=3),  # 3's file, but 3 is listed further down
        *(
            write(i, title="retitled" if i == 10 else None)
            for i in reversed(range(COUNT))
            if i != 5 and not 20 <= i < 30 and i >= 4  # 20-29 removed, 0-3 scrolled off
        ),
        write(3),
    ]
    # only the changed items parsed, the others listed by key (the item cache, #7)
    third = [write(12, title="retitled again"), write(COUNT + 3)]
    listed = tuple(e.key for e in second if e.key != "k12")
    return [(first, ()), (second, ()), (third, listed)]


def every_row(path: Path) -> dict[str, list[tuple[Any, ...]]]:
    with closing(sqlite3.connect(path)) as conn:
        tables = [
            name
            for (name,) in conn.execute(
                "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name"
            )
        ]
        return {t: sorted(conn.execute(f"SELECT * FROM [{t}]"), key=repr) for t in tables}


def archive_of(
    path: Path, shape: Callable[[list[EpisodeWrite]], Iterable[EpisodeWrite]]
) -> list[SaveStats]:
    stats = []
    with Archive(path) as archive:
        feed = archive.ensure_feed("https://ex.example/feed", "Show", "2026-12-01T00:00:00Z")
        for day, (writes, listed) in enumerate(bodies(), start=1):
            now = f"2026-12-0{day}T09:00:00Z"
            stats.append(
                archive.save_feed(FeedSave(
                    feed.id, {"title": "Show"}, shape(writes), status=200, etag=None,
                    last_modified=None, content_hash=f"h{day}", now=now, records=(),
                    also_listed=listed,
                ))
            )  # fmt: skip
    return stats


def generator(writes: list[EpisodeWrite]) -> Iterator[EpisodeWrite]:
    yield from writes


def test_a_generator_gives_the_archive_a_tuple_gives(tmp_path: Path) -> None:
    by_tuple = archive_of(tmp_path / "tuple.db", tuple)
    by_generator = archive_of(tmp_path / "generator.db", generator)
    assert by_generator == by_tuple
    assert by_tuple[0] == SaveStats(new=COUNT)
    # the new one and reuse-3 are new; churned-5 is episode 5 again; 10 retitled
    assert by_tuple[1] == SaveStats(new=2, changed=2, unchanged=COUNT - 15)
    assert every_row(tmp_path / "generator.db") == every_row(tmp_path / "tuple.db")
    with closing(sqlite3.connect(tmp_path / "tuple.db")) as conn:
        marks = dict(
            conn.execute(
                "SELECT key, CASE WHEN removed_from_feed_at IS NOT NULL THEN 'removed' "
                "WHEN unlisted_at IS NOT NULL THEN 'unlisted' END FROM episodes"
            ).fetchall()
        )
        revised = {
            key: changed
            for key, changed in conn.execute(
                "SELECT e.key, r.changed FROM episode_revisions r JOIN episodes e "
                "ON e.id = r.episode_id"
            )
        }
    assert "k5" not in marks  # one episode, its key renewed
    assert marks["churned-5"] is None
    assert marks["k3"] is None  # 3 is listed: reuse-3 is not 3 under a new guid
    assert marks["reuse-3"] is None
    assert {k for k, mark in marks.items() if mark == "removed"} == {f"k{i}" for i in range(20, 30)}
    assert {k for k, mark in marks.items() if mark == "unlisted"} == {"k0", "k1", "k2"}
    assert revised["churned-5"].startswith("guid,")  # a revision, not a new episode
    assert revised["k12"] == "title"
    assert revised["k10"] == "title"


class Drawn:
    """Writes drawn one by one, each noting how many episodes the archive held by then."""

    def __init__(self, archive: Archive, writes: list[EpisodeWrite]) -> None:
        self.archive, self.writes = archive, writes
        self.held: list[int] = []

    def __iter__(self) -> Iterator[EpisodeWrite]:
        for e in self.writes:
            self.held.append(self.archive.db.execute("SELECT count(*) FROM episodes").fetchone()[0])
            yield e

    def __len__(self) -> int:
        raise AssertionError("save_feed must not ask for the length")

    def __getitem__(self, index: int) -> EpisodeWrite:
        raise AssertionError("save_feed must not index the episodes")


@pytest.mark.parametrize("stored", [False, True])
def test_episodes_are_written_a_window_at_a_time(tmp_path: Path, stored: bool) -> None:
    writes, _ = bodies()[0]
    with Archive(tmp_path / "a.db") as archive:
        feed = archive.ensure_feed("https://ex.example/feed", "Show", "2026-12-01T00:00:00Z")
        if stored:  # a re-save: every episode rewritten, none new
            archive.save_feed(FeedSave(
                feed.id, {}, writes, status=200, etag=None, last_modified=None,
                content_hash="h0", now="2026-12-01T09:00:00Z", records=(),
            ))  # fmt: skip
            writes = [write(i, title=f"new title {i}") for i in reversed(range(COUNT))]
        drawn = Drawn(archive, writes)
        archive.save_feed(FeedSave(
            feed.id, {}, drawn, status=200, etag=None, last_modified=None, content_hash="h1",
            now="2026-12-02T09:00:00Z", records=(),
        ))  # fmt: skip
        if stored:
            revisions = archive.db.execute("SELECT count(*) FROM episode_revisions").fetchone()
            assert revisions == (COUNT,)
        else:
            # the first window is in the archive (same transaction) before the next is drawn
            assert drawn.held[WINDOW] == WINDOW
            assert drawn.held[-1] == 2 * WINDOW
            assert archive.count("episodes") == COUNT
