"""The archive's changes as a feed (#28): stable ids, a total order, a cursor, readable diffs.

Pure: rows in (as :mod:`podarchive.store.change_reads` reads them: plain dicts), values out.
A :class:`Change` is one thing that happened to a podcast: an episode added, edited (its
title, notes, date…, each field with a side-by-side diff), its enclosure replaced, removed
from the feed or no longer listed, its web page or its notes there changed, a transcript or
chapters file revised, the media's bytes changed, the podcast's own title or description
edited, the feed moved or gone.

**Ids** are tag URIs (RFC 4151) made of what names the change in any copy of the archive: the
feed's configured URL, the episode's key, the kind, the time and what changed, hashed. Row ids
are not used (``reparse`` rewrites revision rows, ``reshard`` renumbers everything), so an id
is the same in every regeneration of the feed.

**Order and cursor.** Changes are ordered by ``(at, kind, id)``: the time the archive saw the
change (written by the archive's single writer at store time, so in commit order, to the
second), then the kind in :data:`KINDS`' order (a podcast is added before its episodes), then
the id. A :class:`Cursor` is that key for the last change a reader got; the next read gives
only what comes after it. Changes stamped in the current second are held back until it
is over (:func:`select`), since another may still be committed in that second with a smaller
id: so a reader polling with its cursor sees every change exactly once, in order.
"""

from __future__ import annotations

import difflib
import hashlib
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

from podarchive.core.errors import ConfigError

TAG = "tag:podarchive,2026:change/"
#: Every kind of change, in the words an entry's title uses.
KINDS: dict[str, str] = {  # in the order of one second's changes: the podcast's own first
    "podcast-added": "added to the archive",
    "podcast-edited": "podcast details edited",
    "feed-moved": "feed moved",
    "episode-added": "new episode",
    "episode-edited": "episode edited",
    "enclosure-replaced": "enclosure replaced",
    "media-changed": "the media file's bytes changed",
    "page-notes-edited": "notes on the episode's page edited",
    "page-changed": "the episode's page changed",
    "transcript-revised": "transcript revised",
    "chapters-revised": "chapters revised",
    "episode-removed": "episode removed from the feed",
    "episode-unlisted": "episode no longer listed",
    "feed-gone": "feed gone",
}
#: The fields an episode revision compares, with the labels a diff shows.
EPISODE_FIELDS = {
    "guid": "guid",
    "title": "title",
    "published": "published",
    "duration": "duration (seconds)",
    "enclosure_url": "enclosure",
    "enclosure_type": "enclosure type",
    "enclosure_length": "enclosure length (bytes)",
    "notes_text": "notes",
}
PAGE_FIELDS = {"page_notes_text": "notes on the page"}
FEED_FIELDS = {"title": "title", "author": "author", "image": "image", "description": "description"}
RANKS = {kind: rank for rank, kind in enumerate(KINDS)}  # the order of one second's changes
_STAMP = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z")
_DAY = re.compile(r"\d{4}-\d{2}-\d{2}")
_TOKEN = re.compile(r"(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z)/([a-z-]+/[0-9a-f]{16})")
MAX_DIFF_LINES = 2000  # lines of one field compared; longer texts are cut (and say so)


@dataclass(frozen=True, slots=True)
class Segment:
    """A piece of a line: ``changed`` when the other side differs there."""

    text: str
    changed: bool


@dataclass(frozen=True, slots=True)
class DiffRow:
    """One row of a side-by-side diff: ``tag`` is difflib's (equal, replace, delete, insert);
    a side is empty when the line is only on the other."""

    tag: str
    old: tuple[Segment, ...]
    new: tuple[Segment, ...]


@dataclass(frozen=True, slots=True)
class FieldDiff:
    """One field's old and new value, and their side-by-side diff."""

    field: str
    label: str
    old: str
    new: str
    rows: tuple[DiffRow, ...]


@dataclass(frozen=True, slots=True)
class Change:
    """One change of the archive. ``page``: the table and row id its own page shows
    (``serve``'s revision page), when it has one."""

    id: str
    at: str
    kind: str
    title: str
    summary: str
    podcast: str
    feed_url: str
    feed_id: int
    episode_id: int | None = None
    episode: str | None = None
    link: str | None = None
    diffs: tuple[FieldDiff, ...] = ()
    page: tuple[str, int] | None = None

    @property
    def order(self) -> Cursor:
        """Where this change is in the total order of changes."""
        return Cursor.of(self.at, self.id)

    @property
    def cursor(self) -> str:
        """The token a reader passes back to get what comes after this change."""
        return self.order.token


@dataclass(frozen=True, slots=True, order=True)
class Cursor:
    """Where a reader stopped: the order key of the last change it got (its time, its
    kind's rank in :data:`KINDS`, its id)."""

    at: str
    rank: int
    id: str

    @property
    def token(self) -> str:
        """The cursor as a reader passes it back (``--after``)."""
        return f"{self.at}/{self.id.removeprefix(TAG)}"

    @classmethod
    def of(cls, at: str, change_id: str) -> Cursor:
        kind = change_id.removeprefix(TAG).partition("/")[0]
        return cls(at, RANKS.get(kind, len(RANKS)), change_id)


def parse_cursor(token: str) -> Cursor:
    """A token printed by an earlier read (:attr:`Change.cursor`); ConfigError otherwise."""
    found = _TOKEN.fullmatch(token.strip())
    if found is None:
        raise ConfigError(
            f"not a change cursor: {token!r} (give the token an earlier read printed)"
        )
    return Cursor.of(found[1], TAG + found[2])


def parse_since(text: str) -> str | Cursor:
    """``--since``: a date (``2026-12-01``), a timestamp (``2026-12-01T10:00:00Z``) or a cursor
    token; the first two as a timestamp."""
    text = text.strip()
    if _DAY.fullmatch(text):
        return f"{text}T00:00:00Z"
    if _STAMP.fullmatch(text):
        return text
    if _TOKEN.fullmatch(text):
        return parse_cursor(text)
    raise ConfigError(f"--since {text!r}: give a date (2026-12-01), a timestamp or a cursor token")


def change_id(kind: str, *parts: object) -> str:
    """A stable tag URI for a change of ``kind`` named by ``parts``."""
    named = "\x1f".join("" if p is None else str(p) for p in (kind, *parts))
    return f"{TAG}{kind}/{hashlib.sha256(named.encode('utf-8')).hexdigest()[:16]}"


class Ordered(Protocol):
    """What has a place in the order of changes: a :class:`Change`, a :class:`ChangeKey`."""

    @property
    def at(self) -> str: ...

    @property
    def order(self) -> Cursor: ...


OrderedT = TypeVar("OrderedT", bound=Ordered)


def select(
    changes: Iterable[OrderedT],
    *,
    now: str,
    after: Cursor | None = None,
    since: str | None = None,
    limit: int | None = None,
) -> list[OrderedT]:
    """The changes a reader gets, oldest first: those after ``after`` (or from ``since``), none
    stamped at ``now`` or later (the current second may still get more), at most ``limit``:
    the first ones after a cursor or a date, else the latest ones."""
    kept = sorted(
        (
            c
            for c in changes
            if c.at < now
            and (after is None or c.order > after)
            and (since is None or c.at >= since)
        ),
        key=lambda c: c.order,
    )
    if limit is not None and len(kept) > limit:
        walking = after is not None or since is not None  # a reader going forward
        kept = kept[:limit] if walking else kept[-limit:]
    return kept


# diffs ---------------------------------------------------------------------------------------


def _text(value: object) -> str:
    return "" if value is None else str(value)


def _words(line: str) -> list[str]:
    return re.findall(r"\s+|\w+|[^\w\s]", line)


def _common(a: Sequence[str], b: Sequence[str]) -> tuple[int, int]:
    """How many tokens ``a`` and ``b`` share at their start, and then at their end."""
    head = 0
    while head < len(a) and head < len(b) and a[head] == b[head]:
        head += 1
    tail = 0
    while tail < len(a) - head and tail < len(b) - head and a[-1 - tail] == b[-1 - tail]:
        tail += 1
    return head, tail


def _line_pair(old: str, new: str) -> tuple[tuple[Segment, ...], tuple[Segment, ...]]:
    """Two lines as segments, the words that differ marked. What the two share at their start
    and end is set aside before the words are matched: an edit of a long paragraph (its
    hundreds of words, each matched against each) costs the edit, not the paragraph."""
    a, b = _words(old), _words(new)
    head, tail = _common(a, b)
    left: list[Segment] = [Segment("".join(a[:head]), False)] if head else []
    right: list[Segment] = list(left)
    middle_a, middle_b = a[head : len(a) - tail], b[head : len(b) - tail]
    matcher = difflib.SequenceMatcher(None, middle_a, middle_b, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if i2 > i1:
            left.append(Segment("".join(middle_a[i1:i2]), tag != "equal"))
        if j2 > j1:
            right.append(Segment("".join(middle_b[j1:j2]), tag != "equal"))
    if tail:
        left.append(Segment("".join(a[len(a) - tail :]), False))
        right.append(Segment("".join(b[len(b) - tail :]), False))
    return tuple(left), tuple(right)


def side_by_side(old: str, new: str) -> tuple[DiffRow, ...]:
    """``old`` and ``new`` line by line; lines replaced are paired, their changed words marked."""
    a = old.splitlines()[:MAX_DIFF_LINES]
    b = new.splitlines()[:MAX_DIFF_LINES]
    rows: list[DiffRow] = []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if tag == "equal":
            rows.extend(
                DiffRow("equal", (Segment(x, False),), (Segment(x, False),)) for x in a[i1:i2]
            )
            continue
        olds, news = a[i1:i2], b[j1:j2]
        for k in range(max(len(olds), len(news))):
            if k < len(olds) and k < len(news):
                left, right = _line_pair(olds[k], news[k])
                rows.append(DiffRow("replace", left, right))
            elif k < len(olds):
                rows.append(DiffRow("delete", (Segment(olds[k], True),), ()))
            else:
                rows.append(DiffRow("insert", (), (Segment(news[k], True),)))
    return tuple(rows)


def field_diffs(
    old: Mapping[str, Any], new: Mapping[str, Any], fields: Mapping[str, str]
) -> tuple[FieldDiff, ...]:
    """The fields of ``fields`` whose values differ between ``old`` and ``new``."""
    diffs = []
    for name, label in fields.items():
        before, after = _text(old.get(name)), _text(new.get(name))
        if before != after:
            diffs.append(FieldDiff(name, label, before, after, side_by_side(before, after)))
    return tuple(diffs)


def unified(diff: FieldDiff) -> list[str]:
    """A field's change as plain lines: the old lines that went (``-``) and the new (``+``)."""
    lines = [f"{diff.label}:"]
    for row in diff.rows:
        if row.tag == "equal":
            continue
        if row.old:
            lines.append("- " + "".join(s.text for s in row.old))
        if row.new:
            lines.append("+ " + "".join(s.text for s in row.new))
    return lines


# rows → changes ------------------------------------------------------------------------------


def _side(row: Mapping[str, Any], prefix: str, fields: Iterable[str]) -> dict[str, Any]:
    return {name: row.get(prefix + name) for name in fields}


def _base(row: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "at": str(row["at"]),
        "podcast": str(row.get("podcast") or row["feed_url"]),
        "feed_url": str(row["feed_url"]),
        "feed_id": int(row["feed_id"]),
        "episode_id": row.get("episode_id"),
        "episode": row.get("episode_title"),
        "link": row.get("link"),
    }


def _quoted(title: object) -> str:
    return f"“{title}”" if title not in (None, "") else "an untitled episode"


def _revision_kind(row: Mapping[str, Any]) -> str:
    """An episode revision's kind: its page's notes edited, its enclosure replaced, or edited."""
    if (row.get("source") or "feed") == "page":
        return "page-notes-edited"
    changed = str(row.get("changed") or "").split(",")
    return "enclosure-replaced" if "enclosure" in changed else "episode-edited"


def row_change_id(row: Mapping[str, Any]) -> str:
    """The id of the change a row records (what :func:`to_changes` gives it), from the row's
    naming columns alone: ``kind``, ``at``, ``feed_url``, ``episode_key``, ``source``,
    ``changed``, ``extra``."""
    kind, at = str(row["kind"]), str(row["at"])
    if kind == "episode-revision":
        source = row.get("source") or "feed"
        return change_id(_revision_kind(row), row["feed_url"], row.get("episode_key"), source, at)
    if kind == "podcast-edited":
        return change_id(kind, row["feed_url"], at)
    if kind in KINDS:
        return change_id(kind, row["feed_url"], row.get("episode_key"), row.get("extra"), at)
    raise ValueError(f"unknown change kind {kind!r}")


@dataclass(frozen=True, slots=True)
class ChangeKey:
    """A change's place in the order, read without its content: the row that records it
    (``name``: its row kind, ``rowid``), its time and its id."""

    name: str
    rowid: int
    at: str
    id: str

    @property
    def order(self) -> Cursor:
        return Cursor.of(self.at, self.id)

    @classmethod
    def of(cls, row: Mapping[str, Any]) -> ChangeKey:
        return cls(str(row["kind"]), int(row["rowid"]), str(row["at"]), row_change_id(row))


def _episode_change(row: Mapping[str, Any]) -> Change:
    """An episode revision: edited, or its enclosure replaced, or its page's notes edited."""
    base = _base(row)
    source = row.get("source") or "feed"
    fields = PAGE_FIELDS if source == "page" else EPISODE_FIELDS
    diffs = field_diffs(_side(row, "old_", fields), _side(row, "new_", fields), fields)
    changed = [c for c in str(row.get("changed") or "").split(",") if c]
    kind = _revision_kind(row)
    labels = ", ".join(d.label for d in diffs) or ", ".join(changed) or "nothing readable"
    title = f"{base['podcast']}: {_quoted(base['episode'])}: "
    title += f"{KINDS[kind]} ({labels})"
    summary = "\n".join(line for d in diffs for line in unified(d))
    return Change(
        id=row_change_id(row), kind=kind, title=title, summary=summary, diffs=diffs,
        page=("episode_revisions", int(row["rowid"])), **base,
    )  # fmt: skip


def _feed_change(row: Mapping[str, Any]) -> Change:
    base = _base(row)
    diffs = field_diffs(
        _side(row, "old_", FEED_FIELDS), _side(row, "new_", FEED_FIELDS), FEED_FIELDS
    )
    labels = ", ".join(d.label for d in diffs) or str(row.get("changed") or "")
    return Change(
        id=row_change_id(row),
        kind="podcast-edited",
        title=f"{base['podcast']}: {KINDS['podcast-edited']} ({labels})",
        summary="\n".join(line for d in diffs for line in unified(d)),
        diffs=diffs,
        page=("feed_revisions", int(row["rowid"])),
        **base,
    )


def _simple(row: Mapping[str, Any], kind: str) -> Change:
    """A change told in one line: what happened, to which episode or feed."""
    base = _base(row)
    detail = row.get("detail")
    subject = _quoted(base["episode"]) if base["episode_id"] is not None else None
    title = f"{base['podcast']}: {KINDS[kind]}" + (f": {subject}" if subject else "")
    summary = f"{title}." + (f" {detail}" if detail else "")
    page = (str(row["table"]), int(row["rowid"])) if row.get("table") else None
    return Change(
        id=row_change_id(row), kind=kind, title=title, summary=summary, page=page, **base,
    )  # fmt: skip


def to_changes(rows: Iterable[Mapping[str, Any]]) -> list[Change]:
    """The change rows the store read, as changes (in no particular order)."""
    changes = []
    for row in rows:
        kind = str(row["kind"])
        if kind == "episode-revision":
            changes.append(_episode_change(row))
        elif kind == "podcast-edited":
            changes.append(_feed_change(row))
        elif kind in KINDS:
            changes.append(_simple(row, kind))
        else:
            raise ValueError(f"unknown change kind {kind!r}")
    return changes


def kinds_seen(changes: Sequence[Change]) -> list[str]:
    """The kinds of ``changes``, each once, in the order they first come."""
    return list(dict.fromkeys(c.kind for c in changes))
