"""Podping (#29): which feeds the Hive blockchain says were updated. Pure: dicts in, values out.

A podping is a ``custom_json`` operation on Hive whose ``id`` starts with ``pp_`` (e.g.
``pp_podcast_update``), signed with a posting key (``required_posting_auths``), whose ``json``
is ``{"version": "1.0", "medium": "podcast", "reason": "update", "iris": [...]}`` (or, from
older writers, ``{"urls": [...]}``). Only the accounts in the trusted writer list count: anyone
can post a ``pp_`` operation. Blocks come from ``block_api.get_block_range`` (operations as
``{"type": "custom_json_operation", "value": {...}}``) or the condenser API (operations as
``["custom_json", {...}]``); both are read. The first format (id ``podping``, reason
``feed_update``, ``urls``) is read too.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from podarchive.core.urls import normalize_url

#: The public Hive API nodes asked by default, in order (the next one when one fails).
DEFAULT_NODES = ("https://api.hive.blog", "https://api.deathwing.me", "https://hive-api.arcange.eu")
#: The accounts Podping's own writers post from (the Podcast Index's podping.aaa to .eee).
DEFAULT_WRITERS = ("podping.aaa", "podping.bbb", "podping.ccc", "podping.ddd", "podping.eee")
BLOCKS_PER_REQUEST = 50  # a block range asked for in one request
MAX_IRIS = 1000  # IRIs read from one operation at most (a writer batches ~130)
REASONS_TO_POLL = frozenset({"update", "live", "liveEnd"})
LEGACY_ID = (
    "podping"  # podping's first format: {"version": "0.x", "reason": "feed_update", "urls": [...]}
)


@dataclass(frozen=True, slots=True)
class Ping:
    """One podping: the block it is in, who signed it, the feeds (IRIs) it names."""

    block: int
    writer: str
    iris: tuple[str, ...]
    reason: str = "update"


@dataclass(frozen=True, slots=True)
class Span:
    """Blocks read in one pass: ``first`` to ``last``, and when ``last`` was made."""

    first: int
    last: int
    last_time: str | None
    pings: tuple[Ping, ...]


def head_block(result: object) -> int:
    """``head_block_number`` of ``condenser_api.get_dynamic_global_properties``'s result."""
    if isinstance(result, Mapping):
        head = result.get("head_block_number")
        if isinstance(head, int) and not isinstance(head, bool) and head > 0:
            return head
    raise ValueError("no head_block_number in the node's answer")


def next_range(cursor: int, head: int, cap: int) -> tuple[int, int] | None:
    """The blocks to read after ``cursor`` (start, count): at most ``cap``; None: up to date."""
    if head <= cursor:
        return None
    return cursor + 1, min(head - cursor, max(1, cap))


def read_span(start: int, result: object, writers: Collection[str]) -> Span:
    """The pings of ``block_api.get_block_range``'s result, whose first block is ``start``.

    Raises ValueError when the answer is not a list of blocks, or a block's number (the
    first 8 hex digits of its ``block_id``) is not the one expected, or it has no block."""
    blocks = result.get("blocks") if isinstance(result, Mapping) else result
    if not isinstance(blocks, list) or not blocks:
        raise ValueError("no blocks in the node's answer")
    trusted = frozenset(writers)
    pings: list[Ping] = []
    time = None
    for number, block in enumerate(blocks, start):
        if not isinstance(block, Mapping):
            raise ValueError(f"block {number} is not an object")
        found = _block_number(block)
        if found is not None and found != number:
            raise ValueError(f"asked for block {number}, the node gave {found}")
        pings.extend(block_pings(number, block, trusted))
        stamp = block.get("timestamp")
        time = stamp if isinstance(stamp, str) else None
    return Span(start, start + len(blocks) - 1, time, tuple(pings))


def _block_number(block: Mapping[str, Any]) -> int | None:
    block_id = block.get("block_id")
    if isinstance(block_id, str) and len(block_id) >= 8:
        try:
            return int(block_id[:8], 16)
        except ValueError:
            return None
    return None


def block_pings(number: int, block: Mapping[str, Any], writers: Collection[str]) -> list[Ping]:
    """The podpings in one block signed by one of ``writers``."""
    out = []
    transactions = block.get("transactions")
    for tx in transactions if isinstance(transactions, list) else ():
        operations = tx.get("operations") if isinstance(tx, Mapping) else None
        for op in operations if isinstance(operations, list) else ():
            ping = op_ping(number, op, writers)
            if ping is not None:
                out.append(ping)
    return out


def _custom_json(op: object) -> Mapping[str, Any] | None:
    if isinstance(op, Mapping) and op.get("type") == "custom_json_operation":
        value = op.get("value")
    elif isinstance(op, list) and len(op) == 2 and op[0] == "custom_json":
        value = op[1]
    else:
        return None
    return value if isinstance(value, Mapping) else None


def op_ping(number: int, op: object, writers: Collection[str]) -> Ping | None:
    """The ping ``op`` is, if it is a ``pp_`` custom_json signed by exactly one trusted writer."""
    value = _custom_json(op)
    if value is None:
        return None
    op_id = str(value.get("id", ""))
    signer = _signer(value, writers)
    if signer is None or not (op_id.startswith("pp_") or op_id == LEGACY_ID):
        return None
    data = _body(value.get("json"))
    if data is None:
        return None
    reason = data.get("reason", "update")
    reason = "update" if reason == "feed_update" and op_id == LEGACY_ID else reason
    if not isinstance(reason, str) or reason not in REASONS_TO_POLL:
        return None
    iris = _iris(data.get("iris", data.get("urls")))
    return Ping(number, signer, iris, reason) if iris else None


def _signer(value: Mapping[str, Any], writers: Collection[str]) -> str | None:
    """The one trusted posting-key signer; None for others, several, or an active key."""
    signers = value.get("required_posting_auths")
    if value.get("required_auths") or not isinstance(signers, list) or len(signers) != 1:
        return None
    return str(signers[0]) if signers[0] in writers else None


def _body(body: object) -> Mapping[str, Any] | None:
    try:
        data = json.loads(body) if isinstance(body, str) else body
    except (ValueError, RecursionError):
        return None
    return data if isinstance(data, Mapping) else None


def _iris(found: object) -> tuple[str, ...]:
    if isinstance(found, str):
        found = [found]
    if not isinstance(found, list):
        return ()
    return tuple(i.strip() for i in found[:MAX_IRIS] if isinstance(i, str) and i.strip())


def feeds_named(pings: Iterable[Ping], names: Sequence[tuple[str, str]]) -> list[str]:
    """The archived feeds (their schedule URLs) the pings name, in order, each once.

    ``names``: (a URL a feed is known by, the feed's URL): its own, where it is fetched from
    now, each move's old and new URL. A ping's IRI matches a name as written or normalized."""
    known: dict[str, str] = {}
    for name, feed in names:
        known.setdefault(name, feed)
        known.setdefault(normalize_url(name), feed)
    out: dict[str, None] = {}
    for ping in pings:
        for iri in ping.iris:
            found = known.get(iri) or known.get(normalize_url(iri))
            if found is not None:
                out[found] = None
    return list(out)
