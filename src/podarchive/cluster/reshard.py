"""``podarchive reshard``: the feeds re-homed, with their whole history, in a new layout.

The new layout (``shard-K-of-M.db``) is written beside the old one, which is never changed:
each old shard's archive lock is held (a running worker holds it: stop the workers first),
its file is read through a read-only attachment, and every feed is copied, with every row
that belongs to it, into the new shard ``shard_of(url, M)``
(:func:`podarchive.store.transplant`). Each new shard is built as
``shard-K-of-M.db.partial`` and verified (rows per table equal the sum over the old shards;
the shared bodies and hosts, the union of theirs) before any is renamed into place; a
failure on the way deletes the partial files and leaves the directory as it was. The new
shards' locks are held meanwhile, so a worker of the new layout started early waits.

Removing the old layout, once the new one serves, is left to the operator.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Iterator, Mapping
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path

from podarchive.core.errors import ArchiveLocked, ConfigError, StorageError
from podarchive.rules.shards import (
    check_shards,
    find_shards,
    parse_shard_name,
    shard_layouts,
    shard_of,
    shard_path,
)
from podarchive.runtime.lock import archive_lock
from podarchive.store import (
    SCHEMA_VERSION,
    Archive,
    archive_version,
    content_keys,
    feed_urls,
    table_counts,
    transplant,
)

PARTIAL = ".partial"
#: Verified as sets of keys, not counts: a body, a media payload or a capture's header set (#27)
#: two feeds share may now be in
#: two shards (with its audits), and every shard has every host.
SHARED_TABLES = (
    "documents",
    "snapshots",
    "header_sets",
    "hosts",
    "media_payloads",
    "fixity_events",
)


@dataclass(frozen=True, slots=True)
class ReshardReport:
    """What a reshard did: the layouts, feeds per new shard, rows per table, time."""

    old_shards: int
    new_shards: int
    feeds: tuple[int, ...]  # feeds moved into each new shard, by shard
    rows: Mapping[str, int]  # rows copied per table, over every new shard
    seconds: float
    paths: tuple[Path, ...]  # the new shards' archives

    @property
    def feeds_moved(self) -> int:
        return sum(self.feeds)


def partial_path(path: Path) -> Path:
    return Path(f"{path}{PARTIAL}")


def _remove(path: Path) -> None:
    for leftover in (path, Path(f"{path}-wal"), Path(f"{path}-shm"), Path(f"{path}-journal")):
        with contextlib.suppress(FileNotFoundError):
            leftover.unlink()


def _layout_of(paths: list[Path]) -> int:
    parsed = parse_shard_name(paths[0].name)
    assert parsed is not None  # find_shards lists only shard names
    return parsed[1]


def _lock_all(stack: ExitStack, paths: list[Path], old: int) -> None:
    for path in paths:
        lock = archive_lock(path)
        try:
            lock.acquire()
        except ArchiveLocked as e:
            raise ArchiveLocked(
                f"{e}: stop the workers (and any run or daemon) of the {old}-shard layout "
                "before resharding"
            ) from e
        stack.callback(lock.release)


def reshard(directory: Path, shards: int, *, from_shards: int | None = None) -> ReshardReport:
    """Re-home every feed of the layout in ``directory`` (of ``from_shards`` shards, or the
    only one there) into a new layout of ``shards`` shards, beside it.

    :class:`ConfigError` when the new layout is the old one or already has files;
    :class:`ArchiveLocked` when a worker holds an old shard; :class:`StorageError` when an
    old shard is at another schema version, or the new shards do not hold exactly the old
    ones' rows (nothing is renamed into place then, and no partial file stays).
    """
    started = time.perf_counter()
    directory = Path(directory)
    check_shards(shards)
    old_paths = find_shards(directory, from_shards)
    old = _layout_of(old_paths)
    if shards == old:
        raise ConfigError(f"{directory} is already in {old} shards: nothing to reshard")
    if shards in shard_layouts(directory):
        raise ConfigError(
            f"{directory} already holds archives of a {shards}-shard layout: move them away "
            "before resharding into it"
        )
    new_paths = [shard_path(directory, k, shards) for k in range(shards)]
    with ExitStack() as stack:
        _lock_all(stack, old_paths, old)
        _lock_all(stack, new_paths, shards)  # a worker of the new layout waits for us
        for path in old_paths:
            version = archive_version(path)
            if version != SCHEMA_VERSION:
                raise StorageError(
                    f"{path} has schema version {version}, not {SCHEMA_VERSION}: run this "
                    "podarchive's worker (or 'podarchive run') on it once, then reshard"
                )
        plan = _plan(old_paths, shards)
        with _partials(new_paths) as partials:
            rows, feeds = _build(old_paths, partials, plan)
            _verify(old_paths, partials)
            _publish(partials, new_paths)
    return ReshardReport(
        old_shards=old,
        new_shards=shards,
        feeds=tuple(feeds),
        rows=rows,
        seconds=time.perf_counter() - started,
        paths=tuple(new_paths),
    )


def _plan(old_paths: list[Path], shards: int) -> dict[Path, list[list[str]]]:
    """Old shard → the URLs of its feeds, by new shard. A feed in two old shards is refused."""
    plan: dict[Path, list[list[str]]] = {}
    seen: dict[str, Path] = {}
    for path in old_paths:
        plan[path] = [[] for _ in range(shards)]
        for url in feed_urls(path):
            if url in seen:
                raise StorageError(
                    f"{url} is a feed of both {seen[url]} and {path}: remove it from one "
                    "before resharding"
                )
            seen[url] = path
            plan[path][shard_of(url, shards)].append(url)
    return plan


@contextlib.contextmanager
def _partials(new_paths: list[Path]) -> Iterator[list[Path]]:
    """The new shards' partial files, each a fresh archive; all deleted on the way out
    (they are renamed into place before a clean exit)."""
    partials = [partial_path(p) for p in new_paths]
    try:
        for partial in partials:
            _remove(partial)  # a crashed reshard's: we hold the new layout's locks
            Archive(partial).close()
        yield partials
    finally:
        for partial in partials:
            _remove(partial)


def _build(
    old_paths: list[Path], partials: list[Path], plan: dict[Path, list[list[str]]]
) -> tuple[dict[str, int], list[int]]:
    rows: dict[str, int] = {}
    feeds = [0] * len(partials)
    for k, partial in enumerate(partials):
        for n, path in enumerate(old_paths):
            last = n == len(old_paths) - 1
            done = transplant(path, partial, plan[path][k], orphans=k == 0, check=last, bulk=True)
            feeds[k] += done.feeds
            for table, count in done.rows.items():
                if table not in SHARED_TABLES:
                    rows[table] = rows.get(table, 0) + count
    for partial in partials:
        Archive(partial).close()  # its lookup indexes built again, its WAL mode back
        for table, count in table_counts(partial).items():
            if table in SHARED_TABLES:
                rows[table] = rows.get(table, 0) + count
    return dict(sorted(rows.items())), feeds


def _verify(old_paths: list[Path], partials: list[Path]) -> None:
    """The new shards hold exactly the old ones' rows: per table, the same number in all;
    the shared bodies (by hash) and hosts, the same set in all (a body two feeds share may
    now be in two shards, and every shard has every host)."""
    before: dict[str, int] = {}
    after: dict[str, int] = {}
    keys_before: dict[str, set[str]] = {t: set() for t in SHARED_TABLES}
    keys_after: dict[str, set[str]] = {t: set() for t in SHARED_TABLES}
    for paths, counts, keys in ((old_paths, before, keys_before), (partials, after, keys_after)):
        for path in paths:
            for table, count in table_counts(path).items():
                counts[table] = counts.get(table, 0) + count
            for table, found in content_keys(path).items():
                keys[table] |= found
    for table in sorted(set(before) | set(after)):
        if table in SHARED_TABLES:
            if keys_before[table] != keys_after[table]:
                lost = len(keys_before[table] - keys_after[table])
                raise StorageError(
                    f"reshard check failed: the new shards' {table} differ from the old "
                    f"ones' ({lost} missing); nothing was changed"
                )
        elif before.get(table, 0) != after.get(table, 0):
            raise StorageError(
                f"reshard check failed: {after.get(table, 0)} {table} rows in the new shards, "
                f"{before.get(table, 0)} in the old; nothing was changed"
            )


def _publish(partials: list[Path], new_paths: list[Path]) -> None:
    """Each partial file into place, never over a file that appeared meanwhile (then the
    ones already placed are taken back)."""
    placed: list[Path] = []
    try:
        for partial, path in zip(partials, new_paths, strict=True):
            for side in ("-wal", "-shm"):
                if Path(f"{partial}{side}").exists():
                    raise StorageError(f"{partial} is still open elsewhere; nothing was changed")
            try:
                os.link(partial, path)
            except FileExistsError:
                raise StorageError(
                    f"{path} appeared while resharding (a worker of the new layout?); "
                    "nothing was changed"
                ) from None
            placed.append(path)
    except BaseException:
        for path in placed:
            _remove(path)
        raise
