"""Feed and page bytes → what the archive stores, as jobs that can run in parallel. Pure.

:func:`read_feed` parses one document (a whole body, or its skeleton with some of its items,
see :class:`~podarchive.read.item_split.FeedSplit`) and derives the episode rows. It runs in a
worker process when a run is big (:mod:`podarchive.runtime.cpu`), so its result is small and
picklable: the channel, the rows, and the keys and guids of the items, not the parsed feed.

:func:`read_items` reads the new items of a split body in chunks and merges them, or says
that only a parse of the whole body can decide (warnings, duplicate keys, a proposed feed
move: anything whose meaning depends on the other items).

The parsers (feedparser, Beautiful Soup: about 15 MB) are imported by the first job
that needs them, not with this module (#30): the run's process imports it to name the jobs
and to cut a body into chunks, and once worker processes parse, it never loads them.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from podarchive.core.identity import episode_key
from podarchive.core.mediatype import parse_content_type
from podarchive.core.types import (
    Channel,
    EpisodeWrite,
    EpisodeWrites,
    PageNotes,
    ParsedChapters,
    ParsedTranscript,
)
from podarchive.read.chapter_formats import parse_chapters_json
from podarchive.rules.policy import PodcastIdentity

if TYPE_CHECKING:
    from podarchive.read.item_split import FeedSplit

#: Bytes of items per chunk when a split body is read by several worker processes. A
#: process keeps the high-water mark of its largest parse: measured on 300-episode feeds,
#: 512 KB chunks took a parsing process from 40 to 63 MB, 128 KB ones to 53 MB, for no more
#: CPU (#30).
CHUNK_BYTES = 128 * 1024


@dataclass(frozen=True, slots=True)
class FeedRead:
    """One parsed document, as the archive needs it."""

    channel: Channel
    warnings: tuple[str, ...]
    keys: tuple[str, ...]  # episode key of every item, in document order (duplicates too)
    guids: frozenset[str]
    writes: EpisodeWrites  # one per distinct key, first kept
    duplicates: tuple[str, ...]  # warnings about items that repeat a key
    recovered: bool = False  # the parser recovered from an error: no evidence of removals
    kept_fewer: str | None = None  # fewer episodes than feedparser read items (#23)

    @property
    def identity(self) -> PodcastIdentity:
        return PodcastIdentity(self.channel.podcast_guid, self.channel.title, self.guids)


@dataclass(frozen=True, slots=True)
class ItemsRead:
    """The new items of a split body, read without the known ones."""

    read: FeedRead  # writes carry their item hashes
    listed: tuple[str, ...]  # keys of the known items, not parsed again


def read_feed(
    document: bytes,
    headers: Mapping[str, str] | None,
    url: str,
    hashes: Sequence[str] | None = None,
) -> FeedRead:
    """Parse ``document`` and derive its rows (raises ParseError like parse_feed).

    ``hashes``: the raw hash of each item of ``document``, in order (from its
    :class:`~podarchive.read.item_split.FeedSplit`), to carry in the writes.
    """
    from podarchive.read.parse import parse_feed  # see the module's note on imports
    from podarchive.read.rows import episode_writes

    parsed = parse_feed(document, headers, url=url)
    writes, duplicates = episode_writes(parsed, url)
    keys = tuple(episode_key(e) for e in parsed.episodes)
    nested, repeated = parsed.entries_nested, len(parsed.episodes) - len(writes)
    return FeedRead(
        channel=parsed.channel,
        warnings=parsed.warnings,
        keys=keys,
        guids=frozenset(e.guid for e in parsed.episodes if e.guid),
        writes=EpisodeWrites(_hashed(writes, keys, hashes)),
        duplicates=tuple(duplicates),
        recovered=parsed.recovered,
        kept_fewer=kept_fewer(parsed.entries_read, len(writes), nested, repeated),
    )


def kept_fewer(read: int, kept: int, nested: int, repeated: int) -> str | None:
    """The warning when fewer episodes are kept than feedparser read items, and why; None
    when none is lost. ``nested``: items inside an extension element (a ``podcast:liveItem``'s),
    ``repeated``: items whose episode key an earlier item has."""
    if kept >= read:
        return None
    why = [f"{nested:,} inside an extension element"] if nested else []
    if repeated:
        why.append(f"{repeated:,} repeating an earlier item's episode key")
    if (rest := read - kept - nested - repeated) > 0:
        why.append(f"{rest:,} not read as episodes")
    return f"kept {kept:,} of the {read:,} items feedparser read: {', '.join(why)}"


def _hashed(
    writes: Sequence[EpisodeWrite], keys: Sequence[str], hashes: Sequence[str] | None
) -> Sequence[EpisodeWrite]:
    """Each write with the hash of its item (the first of items sharing its key); unchanged
    when the hashes do not match the items one for one."""
    if hashes is None or len(keys) != len(hashes):
        return writes
    by_key: dict[str, str] = {}
    for key, digest in zip(keys, hashes, strict=True):
        by_key.setdefault(key, digest)
    return [dataclasses.replace(w, item_hash=by_key.get(w.key)) for w in writes]


def read_page(
    body: bytes, url: str, content_type: str | None, feed_notes: str | None = None
) -> PageNotes:
    """The show notes of an episode page (:func:`~podarchive.read.extract.extract_page`), found
    with the episode's notes in its feed (``feed_notes``), when it has any."""
    from podarchive.read.extract import extract_page  # see the module's note on imports

    return extract_page(body, url, content_type=content_type, feed_notes=feed_notes)


def read_transcript(
    body: bytes, url: str, content_type: str | None, declared_type: str | None
) -> ParsedTranscript:
    """A transcript's segments. The server's Content-Type when it names a transcript format,
    else the feed's ``type`` attribute (with the server's charset, if it gave one).
    """
    from podarchive.read.transcript_formats import MEDIA_TYPES, parse_transcript

    media_type, charset = parse_content_type(content_type)
    if media_type not in MEDIA_TYPES and declared_type:
        content_type = f"{declared_type}; charset={charset}" if charset else declared_type
    return parse_transcript(body, content_type, url)


def read_chapters(body: bytes, url: str) -> ParsedChapters:
    """A ``podcast:chapters`` JSON file's chapters (links resolved against its URL)."""
    return parse_chapters_json(body, url)


#: Reads documents, each given with its items' hashes, by :func:`read_feed` (in parallel or
#: not); takes an iterable so documents can be cut only as workers are ready for them.
Reader = Callable[[Iterable[tuple[bytes, Sequence[str]]], int], list[FeedRead]]


def read_items(split: FeedSplit, known: Mapping[str, str], read_all: Reader) -> ItemsRead | None:
    """Read the items of ``split`` whose hash is not in ``known`` (hash → key).

    The new items are cut into documents of about :data:`CHUNK_BYTES` (the skeleton with a
    run of items each), which ``read_all`` reads with :func:`read_feed` (given the bytes of
    items they hold, in all). None when a parse of the whole body must decide.
    """
    fresh = [i for i, digest in enumerate(split.hashes) if digest not in known]
    groups = _chunks(split, fresh)
    documents = ((split.document(group), [split.hashes[i] for i in group]) for group in groups)
    reads = read_all(documents, sum(b - a for a, b in (split.spans[i] for i in fresh)))
    if any(_disagrees(read, group) for read, group in zip(reads, groups, strict=True)):
        return None
    fresh_set = set(fresh)
    listed = tuple(known[d] for i, d in enumerate(split.hashes) if i not in fresh_set)
    merged = _merged(reads, listed)
    return None if merged is None else ItemsRead(merged, listed)


def _merged(reads: Sequence[FeedRead], listed: Sequence[str]) -> FeedRead | None:
    """The partial reads as one (keys in order); None when a key repeats, among them or in
    ``listed`` (the keys of the known items)."""
    keys = [key for read in reads for key in read.keys]
    if len({*keys, *listed}) != len(keys) + len(listed):
        return None  # keys shared between items: only the whole document orders them
    return dataclasses.replace(
        reads[0],
        keys=tuple(keys),
        guids=frozenset().union(*(r.guids for r in reads)),
        writes=EpisodeWrites.join(r.writes for r in reads),
    )


def with_item_hashes(read: FeedRead, split: FeedSplit | None) -> tuple[EpisodeWrite, ...]:
    """The writes of a whole-body read, each with the hash of its item (first of duplicates)."""
    hashes = split.hashes if split is not None else None
    return tuple(_hashed(tuple(read.writes), read.keys, hashes))


def _disagrees(read: FeedRead, group: Sequence[int]) -> bool:
    """Whether a partial read may differ from what the whole body would give."""
    return bool(
        read.warnings
        or read.duplicates
        or read.kept_fewer
        or read.channel.new_feed_url
        or len(read.keys) != len(group)
        or len(read.writes) != len(group)
    )


def _chunks(split: FeedSplit, indexes: Sequence[int]) -> list[list[int]]:
    """``indexes`` in document order, cut into runs of about :data:`CHUNK_BYTES` of items."""
    groups: list[list[int]] = [[]]
    size = 0
    for i in indexes:
        a, b = split.spans[i]
        if groups[-1] and size + (b - a) > CHUNK_BYTES:
            groups.append([])
            size = 0
        groups[-1].append(i)
        size += b - a
    return groups


def forget_memos() -> None:
    """Empty this process's memos of derived notes and URL work (#30): a worker process runs
    this after each job. They serve repeats within a document (a chunk of items); kept
    across jobs, they held 4-6 MB of every worker, its largest share besides the parsers,
    for notes that differ from one chunk, and one feed, to the next."""
    from podarchive.core.urls import forget_link_memo
    from podarchive.read.extract.text import forget_derived

    forget_derived()
    forget_link_memo()


def loaded_modules() -> frozenset[str]:
    """The names of the modules this process has imported (what a worker costs, #30)."""
    import sys

    return frozenset(name for name, module in sys.modules.items() if module is not None)
