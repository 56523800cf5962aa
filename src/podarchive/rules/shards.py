"""Which shard a feed lives in, and where the shards' archives are. Pure: names and numbers.

A feed belongs to shard ``shard_of(url, n)``: a stable hash (SHA-256) of the feed's
configured URL, exactly as its schedule gives it (the archive's ``feeds.url``, its
identity), modulo the number of shards. Python's ``hash()`` is salted per process and would
scatter feeds differently in every worker; SHA-256 gives the same shard on every machine
and every release.

Shard ``k`` of ``n`` is the archive ``shard-<k>-of-<n>.db`` in the shard directory. The
number of shards is in the name, so a worker started with the wrong number opens a file of
its own instead of writing into another layout's, and ``reshard`` writes the new layout
beside the old one, which it never changes.
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

from podarchive.core.errors import ConfigError

MAX_SHARDS = 4096
_NAME = re.compile(r"^shard-(\d+)-of-(\d+)\.db$")


def shard_of(url: str, shards: int) -> int:
    """The shard of the feed whose configured URL is ``url``, in ``range(shards)``."""
    check_shards(shards)
    digest = hashlib.sha256(url.encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big") % shards


def check_shards(shards: int) -> int:
    """``shards`` if it is a usable number of shards, else :class:`ConfigError`."""
    if not 1 <= shards <= MAX_SHARDS:
        raise ConfigError(f"the number of shards must be 1 to {MAX_SHARDS}, not {shards}")
    return shards


def check_shard(shard: int, shards: int) -> int:
    """``shard`` if it is one of ``shards`` shards, else :class:`ConfigError`."""
    check_shards(shards)
    if not 0 <= shard < shards:
        raise ConfigError(f"shard {shard} does not exist: there are {shards} (0 to {shards - 1})")
    return shard


def shard_name(shard: int, shards: int) -> str:
    """``shard-2-of-4.db``."""
    check_shard(shard, shards)
    return f"shard-{shard}-of-{shards}.db"


def shard_path(directory: Path, shard: int, shards: int) -> Path:
    return Path(directory) / shard_name(shard, shards)


def parse_shard_name(name: str) -> tuple[int, int] | None:
    """``"shard-2-of-4.db"`` → ``(2, 4)``; anything else → None."""
    match = _NAME.match(name)
    if match is None:
        return None
    shard, shards = int(match.group(1)), int(match.group(2))
    if not 1 <= shards <= MAX_SHARDS or not 0 <= shard < shards:
        return None
    return shard, shards


def shard_layouts(directory: Path) -> dict[int, list[Path]]:
    """Number of shards → the shard archives of that layout present in ``directory``
    (sorted by shard; a layout may be incomplete)."""
    found: dict[int, dict[int, Path]] = {}
    if not Path(directory).is_dir():
        return {}
    for path in Path(directory).iterdir():
        parsed = parse_shard_name(path.name)
        if parsed is not None and path.is_file():
            found.setdefault(parsed[1], {})[parsed[0]] = path
    return {n: [paths[k] for k in sorted(paths)] for n, paths in sorted(found.items())}


def find_shards(directory: Path, shards: int | None = None) -> list[Path]:
    """The archives of the layout of ``shards`` shards in ``directory`` (every one present;
    a shard whose worker never ran has no file yet). With ``shards`` None, the one layout
    there is; :class:`ConfigError` when there is none, or several to choose from."""
    layouts = shard_layouts(directory)
    if shards is not None:
        check_shards(shards)
        if shards not in layouts:
            raise ConfigError(f"no archive of a {shards}-shard layout in {directory}")
        return layouts[shards]
    if not layouts:
        raise ConfigError(f"no shard archives (shard-K-of-N.db) in {directory}")
    if len(layouts) > 1:
        sizes = " and ".join(str(n) for n in layouts)
        raise ConfigError(f"{directory} holds layouts of {sizes} shards: give --shards N")
    return next(iter(layouts.values()))
