"""What counts as a change, the same episode under a new guid, or a removal. Pure.

The archive keeps what a podcast published, including what it later changed or took down:

* an episode's *tracked* fields (:data:`TRACKED`) changing is a revision: the earlier values
  are kept in ``episode_revisions``; other fields (images, persons, …) are just updated;
* an item arriving with a new guid whose media file (tracking prefixes and cache busters
  stripped), or whose title + publish date + duration, matches an episode that is no longer in
  the feed under its old guid is that episode: the guid change is a revision, not a new episode;
* an episode absent from a feed marked RFC 5005 ``fh:complete`` was removed. In an ordinary
  feed it was removed only if it is newer than the oldest episode still listed (it fell out of
  the middle); older ones merely scrolled off a feed truncated to its latest N items and are
  "no longer listed".
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any, Literal

from podarchive.core.identity import media_identity

TRACKED: dict[str, tuple[str, ...]] = {
    "guid": ("guid",),
    "title": ("title",),
    "published": ("published",),
    "duration": ("duration",),
    "enclosure": ("enclosure_url", "enclosure_type", "enclosure_length"),
    "notes": ("notes_html",),
}
FEED_TRACKED = ("title", "author", "image", "description")
Absence = Literal["removed", "unlisted"]


def changed_fields(old: Mapping[str, Any], new: Mapping[str, Any]) -> list[str]:
    """Names (keys of :data:`TRACKED`) of the tracked fields that differ.

    A value differs unless it only fills in replacement characters (:func:`filled_in`).
    """
    return [
        name
        for name, cols in TRACKED.items()
        if any(_differs(old.get(c), new.get(c)) for c in cols)
    ]


def changed_feed_fields(old: Mapping[str, Any], new: Mapping[str, Any]) -> list[str]:
    return [c for c in FEED_TRACKED if _differs(old.get(c), new.get(c))]


def _differs(old: object, new: object) -> bool:
    if old == new:
        return False
    return not (isinstance(old, str) and isinstance(new, str) and filled_in(old, new))


#: Characters one U+FFFD may stand for: a bad byte sequence is one to four bytes.
FILL = 4
_REPLACED = re.compile("(\ufffd+)")
_MAX_POSITIONS = 256  # candidate positions kept while matching; beyond that: a change


def filled_in(old: str, new: str) -> bool:
    """Whether ``new`` is ``old`` with its U+FFFD characters replaced by what they stood for.

    A publisher fixing a byte the archive could not decode is not a revision: each run of
    U+FFFD in ``old`` may stand for up to :data:`FILL` characters per U+FFFD in ``new``
    (none, if the fix dropped a stray byte); everything else must be the same. The reverse
    (new U+FFFD where ``old`` had text) is a change: it loses text.
    """
    if "\ufffd" not in old:
        return False
    literal, *rest = _REPLACED.split(old)
    if not new.startswith(literal):
        return False
    positions = {len(literal)}
    for run, literal in zip(rest[::2], rest[1::2], strict=True):
        positions = {
            at + gap + len(literal)
            for at in positions
            for gap in range(FILL * len(run) + 1)
            if new.startswith(literal, at + gap)
        }
        if not positions or len(positions) > _MAX_POSITIONS:
            return False
    return len(new) in positions


def _fingerprints(row: Mapping[str, Any]) -> list[tuple[str, ...]]:
    prints: list[tuple[str, ...]] = []
    if row.get("enclosure_url"):
        prints.append(("media", media_identity(str(row["enclosure_url"]))))
    if row.get("title") and row.get("published") and row.get("duration") is not None:
        prints.append(
            ("tpd", str(row["title"]).strip(), str(row["published"]), str(row["duration"]))
        )
    return prints


def find_churned(new: Mapping[str, Any], candidates: Mapping[str, Mapping[str, Any]]) -> str | None:
    """The key of the candidate that ``new`` is, under a new guid; None when there is none.

    ``candidates`` are stored episodes of the feed that the current body does not list under
    their own key. The first matching candidate in key order wins, so the choice is
    deterministic.
    """
    return ChurnIndex(candidates).find(new)


class ChurnIndex:
    """:func:`find_churned` for many lookups: each candidate is fingerprinted once, lazily.

    Candidates can be added and dropped between lookups (an episode found churned is no
    longer a candidate); a lookup costs the new row's fingerprints, not a pass over all.
    """

    def __init__(self, candidates: Mapping[str, Mapping[str, Any]]) -> None:
        self._pending = dict(candidates)  # not fingerprinted yet
        self._prints: dict[str, list[tuple[str, ...]]] = {}
        self._keys: dict[tuple[str, ...], set[str]] = {}

    def add(self, key: str, row: Mapping[str, Any]) -> None:
        self.discard(key)
        self._pending[key] = row

    def discard(self, key: str) -> None:
        self._pending.pop(key, None)
        for fingerprint in self._prints.pop(key, ()):
            self._keys[fingerprint].discard(key)

    def find(self, new: Mapping[str, Any]) -> str | None:
        """The smallest candidate key sharing a fingerprint with ``new``."""
        self._index_pending()
        if not self._prints:
            return None
        found = [key for fp in _fingerprints(new) for key in self._keys.get(fp, ())]
        return min(found, default=None)

    def _index_pending(self) -> None:
        while self._pending:
            key, row = self._pending.popitem()
            self._prints[key] = _fingerprints(row)
            for fingerprint in self._prints[key]:
                self._keys.setdefault(fingerprint, set()).add(key)


def absence(
    published: str | None, listed_published: Sequence[str | None], complete: bool
) -> Absence:
    """Why an archived episode is missing from the feed's current body."""
    if complete:
        return "removed"
    dates = [d for d in listed_published if d]
    if published and dates and published >= min(dates):
        return "removed"
    return "unlisted"
