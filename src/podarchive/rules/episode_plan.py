"""What a feed's save writes for its episodes, decided without a database. Pure.

Given the stored bookkeeping of a feed's episodes (by key: id, row hash, item hash, absence
marks, publish date; the fingerprint columns of the candidates for a new guid when asked for)
and the incoming episodes, a :class:`EpisodePlanner` returns plain records: which episode is
inserted, rewritten (a revision, when a tracked field changed) or kept, which stored episode
is re-keyed because it came back under a new guid (``history.ChurnIndex``), and which are
marked absent (``history.absence``) or listed again. The store applies them (the model is
reader's ``_update.Decider``).

The incoming episodes arrive in windows (a bounded part of a feed, #15). A new key is decided
at once unless a stored episode not listed so far may be the same episode under a new guid:
only the rest of the body can tell, so from that one on the steps wait for :meth:`finish`.
Either way the steps come in body order, and each incoming episode gets exactly one of
:class:`Insert`, :class:`Rewrite` or :class:`Keep` (a :class:`Rekey` before it when it is a
stored episode under a new key).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

from podarchive.core.types import EpisodeWrite, Row, SaveStats
from podarchive.rules.history import ChurnIndex, absence

AbsenceColumn = Literal["removed_from_feed_at", "unlisted_at"]


@dataclass(frozen=True, slots=True)
class Insert:
    """A new episode."""

    episode: EpisodeWrite
    digest: str


@dataclass(frozen=True, slots=True)
class Rewrite:
    """A stored episode whose row changed: rewritten, its earlier tracked values kept."""

    episode: EpisodeWrite
    digest: str
    previous: Row  # the stored row (the store may complete its columns before writing)


@dataclass(frozen=True, slots=True)
class Keep:
    """A stored episode whose row is unchanged: at most its raw item's hash is renewed."""

    episode: EpisodeWrite
    previous: Row
    item_hash: str | None  # the new item hash to store, None to leave it
    sync_tags: bool  # the raw item differs or is unknown: its extension elements may have


@dataclass(frozen=True, slots=True)
class Rekey:
    """A stored episode the body lists under a new key (guid churn): its row keeps its id."""

    episode_id: int
    old_key: str
    new_key: str


@dataclass(frozen=True, slots=True)
class MarkAbsent:
    episode_id: int
    column: AbsenceColumn


Step = Insert | Rewrite | Keep | Rekey


@dataclass(frozen=True, slots=True)
class Ending:
    """What :meth:`EpisodePlanner.finish` decides once the whole body is seen."""

    steps: list[Step]  # the steps that waited for the end of the body
    absent: list[MarkAbsent]
    listed_again: list[int]  # ids of stored episodes marked absent that the body lists
    stats: SaveStats


def keep(episode: EpisodeWrite, previous: Row) -> Keep:
    """An unchanged episode's raw item may still differ (another context, a migration)."""
    item_hash = episode.item_hash
    if item_hash is None:
        return Keep(episode, previous, None, sync_tags=True)
    if previous["item_hash"] != item_hash:
        return Keep(episode, previous, item_hash, sync_tags=True)
    return Keep(episode, previous, None, sync_tags=False)


def save_step(episode: EpisodeWrite, digest: str, previous: Row | None) -> Step:
    """Insert a new episode, rewrite a changed one, keep an unchanged one."""
    if previous is None:
        return Insert(episode, digest)
    if previous["row_hash"] == digest:
        return keep(episode, previous)
    return Rewrite(episode, digest, previous)


def absence_column(row: Row, dates: Sequence[str | None], complete: bool) -> AbsenceColumn | None:
    """The mark of a stored episode the body does not list; None when it gets none."""
    if row["removed_from_feed_at"] or row["unlisted_at"]:
        return None
    if row["key"].startswith("page:"):
        return None  # found on the site (backfill --site), never listed by the feed
    if absence(row["published"], dates, complete) == "removed":
        return "removed_from_feed_at"
    return "unlisted_at"


@dataclass(slots=True)
class _Counts:
    new: int = 0
    changed: int = 0
    unchanged: int = 0

    def add(self, steps: Iterable[Step]) -> None:
        for step in steps:
            if isinstance(step, Insert):
                self.new += 1
            elif isinstance(step, Rewrite):
                self.changed += 1
            elif isinstance(step, Keep):
                self.unchanged += 1


@dataclass(slots=True)
class EpisodePlanner:
    """Plans one feed body's episode writes, a window at a time.

    ``stored`` are the feed's episodes by key (at least their bookkeeping columns); ``also
    listed`` are keys the body lists whose items were not parsed (known unchanged, #7).
    For each window: :meth:`take` it (it returns the stored rows whose fingerprint columns
    must be filled in before planning, once), then :meth:`steps`; at the end :meth:`finish`.
    """

    stored: dict[str, Row]
    also_listed: Collection[str] = ()
    complete: bool = False
    mark_absent: bool = True
    _skipped: list[str] = field(default_factory=list)
    _unseen: dict[str, Row] = field(default_factory=dict)
    _seen: set[str] = field(default_factory=set)
    _dates: list[str | None] = field(default_factory=list)
    _churn: ChurnIndex | None = None
    _index_now: bool = False
    _window: list[tuple[EpisodeWrite, str]] = field(default_factory=list)
    _waiting: list[tuple[EpisodeWrite, str]] | None = None
    _counts: _Counts = field(default_factory=_Counts)

    def __post_init__(self) -> None:
        self._skipped = [k for k in dict.fromkeys(self.also_listed) if k in self.stored]
        listed_before = set(self._skipped)
        self._unseen = {k: v for k, v in self.stored.items() if k not in listed_before}

    def take(self, window: Sequence[EpisodeWrite], digests: Sequence[str]) -> list[Row]:
        """Take the next window in; return the stored rows that may be the window's new
        keys under a new guid, when their fingerprints are needed (once per body)."""
        for episode in window:
            self._seen.add(episode.key)
            self._dates.append(episode.row.get("published"))
            if self._unseen.pop(episode.key, None) is not None and self._churn is not None:
                self._churn.discard(episode.key)
        self._window = list(zip(window, digests, strict=True))
        if self._waiting is not None:
            self._waiting.extend(self._window)
            self._window = []
            return []
        self._index_now = (
            self._churn is None
            and bool(self._unseen)
            and any(e.key not in self.stored for e in window)
        )
        return list(self._unseen.values()) if self._index_now else []

    def steps(self) -> list[Step]:
        """The steps of the window taken last that need not wait for the end of the body."""
        if self._index_now:
            self._churn = ChurnIndex(self._unseen)
            self._index_now = False
        steps: list[Step] = []
        for at, (episode, digest) in enumerate(self._window):
            previous = self.stored.get(episode.key)
            if previous is None and self._unseen and self._may_be_churned(episode):
                self._waiting = self._window[at:]
                break
            steps.append(save_step(episode, digest, previous))
        self._window = []
        self._counts.add(steps)
        return steps

    def _may_be_churned(self, episode: EpisodeWrite) -> bool:
        assert self._churn is not None
        return self._churn.find(episode.row) is not None

    def finish(self) -> Ending:
        """The waiting steps, the absence marks and the stats, once the body is all seen."""
        skipped = [k for k in self._skipped if k not in self._seen]
        steps = [step for e, d in self._waiting or () for step in self._waited(e, d)]
        self._counts.add(steps)
        absent = self._absent(skipped) if self.mark_absent else []
        listed = self._seen.union(skipped)
        again = [
            row["id"]
            for key, row in self.stored.items()
            if key in listed and (row["removed_from_feed_at"] or row["unlisted_at"])
        ]
        counts = self._counts
        stats = SaveStats(counts.new, counts.changed, counts.unchanged + len(skipped))
        return Ending(steps, absent, again, stats)

    def _absent(self, skipped: Sequence[str]) -> list[MarkAbsent]:
        """The marks of the stored episodes the body does not list (nor ``also_listed``)."""
        dates = [*self._dates, *(self.stored[k]["published"] for k in skipped)]
        return [
            MarkAbsent(row["id"], column)
            for row in self._unseen.values()
            if (column := absence_column(row, dates, self.complete)) is not None
        ]

    def _waited(self, episode: EpisodeWrite, digest: str) -> list[Step]:
        """A waiting episode's steps: now ``unseen`` is what the body does not list."""
        previous = self.stored.get(episode.key)
        if previous is not None or not self._unseen:
            return [save_step(episode, digest, previous)]
        assert self._churn is not None
        churned = self._churn.find(episode.row)
        if churned is None:
            return [save_step(episode, digest, None)]
        self._churn.discard(churned)
        previous = self._unseen.pop(churned)
        self.stored.pop(churned)
        rekey = Rekey(previous["id"], churned, episode.key)
        return [rekey, save_step(episode, digest, previous)]


def plan_episodes(
    stored: Mapping[str, Row],
    windows: Iterable[Sequence[EpisodeWrite]],
    digest: Callable[[EpisodeWrite], str],
    *,
    also_listed: Collection[str] = (),
    complete: bool = False,
    mark_absent: bool = True,
) -> tuple[list[Step], Ending]:
    """The whole plan of a body, its stored rows complete: every step in order, and the end.

    ``digest`` gives an incoming episode's row hash. ``stored`` is not changed.
    """
    planner = EpisodePlanner(
        {k: dict(v) for k, v in stored.items()}, also_listed, complete, mark_absent
    )
    steps: list[Step] = []
    for window in windows:
        planner.take(window, [digest(e) for e in window])
        steps.extend(planner.steps())
    ending = planner.finish()
    return [*steps, *ending.steps], ending
