"""Property tests of podarchive.rules.episode_plan: a feed save's decisions, without SQLite.

A small model applies a plan to the stored bookkeeping the way the store does; hypothesis
draws stored episodes (some marked absent, some found on the site) and bodies that list some
of them again, some under a new guid, and some new ones.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from podarchive.core.types import EpisodeWrite, Row
from podarchive.rules.episode_plan import (
    Ending,
    Insert,
    Keep,
    Rekey,
    Rewrite,
    Step,
    plan_episodes,
)

NOW = "2026-12-06T00:00:00Z"
FIELDS = ("title", "published", "duration", "enclosure_url")
TITLES = st.sampled_from([None, "One", "Two"])
DATES = st.sampled_from([None, "2026-01-01", "2026-02-01", "2026-03-01"])
DURATIONS = st.sampled_from([None, 60, 120])
MEDIA = st.sampled_from([None, "https://m.example/1.mp3", "https://m.example/2.mp3?t=1"])
HASHES = st.sampled_from(["h1", "h2"])
ITEMS = st.sampled_from([None, "i1", "i2"])
MARKS = st.sampled_from([None, "2026-01-05T00:00:00Z"])
STORED_KEYS = ["guid:a", "guid:b", "guid:c", "guid:d", "guid:e", "page:https://s.example/p"]
BODY_KEYS = ["guid:a", "guid:b", "guid:c", "guid:x", "guid:y", "guid:z"]


def fields() -> st.SearchStrategy[dict[str, Any]]:
    return st.fixed_dictionaries(
        {"title": TITLES, "published": DATES, "duration": DURATIONS, "enclosure_url": MEDIA}
    )


@st.composite
def stored_rows(draw: st.DrawFn) -> dict[str, Row]:
    keys = draw(st.lists(st.sampled_from(STORED_KEYS), unique=True))
    rows: dict[str, Row] = {}
    for number, key in enumerate(sorted(keys), start=1):
        removed, unlisted = draw(MARKS), draw(MARKS)
        rows[key] = {
            "id": number, "key": key, "row_hash": draw(HASHES), "item_hash": draw(ITEMS),
            "removed_from_feed_at": removed, "unlisted_at": None if removed else unlisted,
            **draw(fields()),
        }  # fmt: skip
    return rows


@st.composite
def bodies(draw: st.DrawFn) -> list[EpisodeWrite]:
    keys = draw(st.lists(st.sampled_from(BODY_KEYS), unique=True))
    return [
        EpisodeWrite(key, {**draw(fields()), "hash": draw(HASHES)}, (), draw(ITEMS)) for key in keys
    ]


def digest(episode: EpisodeWrite) -> str:
    return str(episode.row["hash"])


def windows(body: Sequence[EpisodeWrite], size: int) -> list[list[EpisodeWrite]]:
    return [list(body[at : at + size]) for at in range(0, len(body), size)]


def apply(stored: dict[str, Row], steps: Sequence[Step], ending: Ending) -> dict[str, Row]:
    """The stored bookkeeping after the plan, as the store writes it."""
    by_id = {int(row["id"]): dict(row) for row in stored.values()}
    next_id = max(by_id, default=0) + 1
    for step in steps:
        if isinstance(step, Insert):
            by_id[next_id] = {
                "id": next_id, "key": step.episode.key, "row_hash": step.digest,
                "item_hash": step.episode.item_hash, "removed_from_feed_at": None,
                "unlisted_at": None, **{f: step.episode.row.get(f) for f in FIELDS},
            }  # fmt: skip
            next_id += 1
        elif isinstance(step, Rekey):
            assert by_id[step.episode_id]["key"] == step.old_key
            by_id[step.episode_id]["key"] = step.new_key
        elif isinstance(step, Rewrite):
            row = by_id[int(step.previous["id"])]
            row.update({f: step.episode.row.get(f) for f in FIELDS})
            row.update(row_hash=step.digest, item_hash=step.episode.item_hash)
        elif step.item_hash is not None:
            by_id[int(step.previous["id"])]["item_hash"] = step.item_hash
    for mark in ending.absent:
        by_id[mark.episode_id][mark.column] = NOW
    for episode_id in ending.listed_again:
        by_id[episode_id].update(removed_from_feed_at=None, unlisted_at=None)
    applied = {str(row["key"]): row for row in by_id.values()}
    assert len(applied) == len(by_id), "two episodes of a feed under one key"
    return applied


def saves(steps: Sequence[Step]) -> list[Insert | Rewrite | Keep]:
    return [s for s in steps if not isinstance(s, Rekey)]


def is_marked(row: Row) -> bool:
    return bool(row["removed_from_feed_at"] or row["unlisted_at"])


plans = given(
    stored=stored_rows(),
    body=bodies(),
    also_listed=st.lists(st.sampled_from(STORED_KEYS), max_size=3),
    complete=st.booleans(),
    mark_absent=st.booleans(),
    size=st.integers(1, 4),
)


@plans
@settings(max_examples=200, deadline=None)
def test_every_incoming_episode_is_saved_once_in_body_order(
    stored: dict[str, Row],
    body: list[EpisodeWrite],
    also_listed: list[str],
    complete: bool,
    mark_absent: bool,
    size: int,
) -> None:
    steps, ending = plan_episodes(
        stored, windows(body, size), digest,
        also_listed=also_listed, complete=complete, mark_absent=mark_absent,
    )  # fmt: skip
    assert [s.episode.key for s in saves(steps)] == [e.key for e in body]
    for step in saves(steps):
        previous = stored.get(step.episode.key)
        if isinstance(step, Insert):
            assert previous is None
        elif previous is not None:  # else: re-keyed
            assert step.previous["id"] == previous["id"]
            assert isinstance(step, Keep) == (previous["row_hash"] == digest(step.episode))
    skipped = {k for k in also_listed if k in stored} - {e.key for e in body}
    kinds = [type(s) for s in steps]
    assert ending.stats.new == kinds.count(Insert)
    assert ending.stats.changed == kinds.count(Rewrite)
    assert ending.stats.unchanged == kinds.count(Keep) + len(skipped)


@plans
@settings(max_examples=200, deadline=None)
def test_key_changes_move_a_stored_row_the_body_no_longer_lists(
    stored: dict[str, Row],
    body: list[EpisodeWrite],
    also_listed: list[str],
    complete: bool,
    mark_absent: bool,
    size: int,
) -> None:
    steps, ending = plan_episodes(
        stored, windows(body, size), digest,
        also_listed=also_listed, complete=complete, mark_absent=mark_absent,
    )  # fmt: skip
    listed = {e.key for e in body} | set(also_listed)
    rekeys = [(at, s) for at, s in enumerate(steps) if isinstance(s, Rekey)]
    assert len({s.old_key for _, s in rekeys}) == len(rekeys)
    for at, rekey in rekeys:
        assert rekey.old_key in stored
        assert rekey.old_key not in listed
        assert rekey.new_key not in stored
        assert stored[rekey.old_key]["id"] == rekey.episode_id
        after = steps[at + 1]
        assert not isinstance(after, Rekey | Insert)
        assert (after.episode.key, after.previous["id"]) == (rekey.new_key, rekey.episode_id)
    applied = apply(stored, steps, ending)  # no row lost, none doubled
    assert {r["id"] for r in stored.values()} <= {r["id"] for r in applied.values()}
    assert len(applied) == len(stored) + ending.stats.new


@plans
@settings(max_examples=200, deadline=None)
def test_absence_marks_only_stored_episodes_the_body_does_not_list(
    stored: dict[str, Row],
    body: list[EpisodeWrite],
    also_listed: list[str],
    complete: bool,
    mark_absent: bool,
    size: int,
) -> None:
    steps, ending = plan_episodes(
        stored, windows(body, size), digest,
        also_listed=also_listed, complete=complete, mark_absent=mark_absent,
    )  # fmt: skip
    listed = {e.key for e in body} | set(also_listed)
    rekeyed = {s.old_key for s in steps if isinstance(s, Rekey)}
    expected = {
        row["id"]
        for key, row in stored.items()
        if key not in listed | rekeyed and not key.startswith("page:") and not is_marked(row)
    }
    marked = [m.episode_id for m in ending.absent]
    assert len(marked) == len(set(marked))
    assert set(marked) == (expected if mark_absent else set())
    if complete:
        assert {m.column for m in ending.absent} <= {"removed_from_feed_at"}
    again = {row["id"] for key, row in stored.items() if key in listed and is_marked(row)}
    assert set(ending.listed_again) == again


@plans
@settings(max_examples=200, deadline=None)
def test_the_plan_does_not_depend_on_the_windows(
    stored: dict[str, Row],
    body: list[EpisodeWrite],
    also_listed: list[str],
    complete: bool,
    mark_absent: bool,
    size: int,
) -> None:
    options: dict[str, Any] = {
        "also_listed": also_listed, "complete": complete, "mark_absent": mark_absent,
    }  # fmt: skip
    steps, ending = plan_episodes(stored, windows(body, size), digest, **options)
    whole, at_once = plan_episodes(stored, [body], digest, **options)
    # which steps waited for the end of the body may differ; not what they are
    assert steps == whole
    assert (ending.absent, ending.listed_again, ending.stats) == (
        at_once.absent, at_once.listed_again, at_once.stats,
    )  # fmt: skip


@plans
@settings(max_examples=200, deadline=None)
def test_planning_the_same_body_again_writes_nothing(
    stored: dict[str, Row],
    body: list[EpisodeWrite],
    also_listed: list[str],
    complete: bool,
    mark_absent: bool,
    size: int,
) -> None:
    options: dict[str, Any] = {
        "also_listed": also_listed, "complete": complete, "mark_absent": mark_absent,
    }  # fmt: skip
    steps, ending = plan_episodes(stored, windows(body, size), digest, **options)
    applied = apply(stored, steps, ending)
    again, second = plan_episodes(applied, windows(body, size), digest, **options)
    assert all(isinstance(s, Keep) and s.item_hash is None for s in again)
    # tags are re-synced (a no-op when equal) only when the raw item is unknown
    assert all(s.sync_tags == (s.episode.item_hash is None) for s in saves(again))
    assert second.absent == []
    # an episode back under a new guid keeps the absence mark it had until the next save
    # (as before the planner): only such marks are cleared by the second save
    rekeyed = {s.episode_id for s in steps if isinstance(s, Rekey)}
    assert set(second.listed_again) <= {i for i in rekeyed if is_marked(applied_by_id(applied, i))}
    assert second.stats.new == second.stats.changed == 0


def applied_by_id(applied: dict[str, Row], episode_id: int) -> Row:
    return next(row for row in applied.values() if row["id"] == episode_id)


def test_a_new_guid_for_a_dropped_episode_is_a_key_change() -> None:
    stored: dict[str, Row] = {
        "guid:old": {
            "id": 7, "key": "guid:old", "row_hash": "h1", "item_hash": "i1",
            "removed_from_feed_at": None, "unlisted_at": None, "title": "One",
            "published": "2026-01-01", "duration": 60, "enclosure_url": "https://m.example/1.mp3",
        },
    }  # fmt: skip
    new = EpisodeWrite(
        "guid:new", {"enclosure_url": "https://m.example/1.mp3?cb=2", "hash": "h2"}, (), "i2"
    )
    steps, ending = plan_episodes(stored, [[new]], digest)
    assert steps == [Rekey(7, "guid:old", "guid:new"), Rewrite(new, "h2", stored["guid:old"])]
    assert ending.absent == []
    assert ending.stats.changed == 1
