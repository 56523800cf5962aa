"""The push options of ``daemon`` (#29): WebSub (--listen, --public-url, --push-every) and
podping (--podping and its settings)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

import click

from podarchive.cli.common import UsageFailure
from podarchive.read.schedule_files import parse_interval

if TYPE_CHECKING:
    from podarchive.daemon.podping import PodpingOptions
    from podarchive.daemon.service import PushOptions

F = TypeVar("F", bound=Callable[..., Any])


def push_options(f: F) -> F:
    f = click.option(
        "--push-every",
        default="1d",
        show_default=True,
        metavar="INTERVAL",
        help="While a feed's WebSub subscription is live, poll it at most this often "
        "(never less often than its schedule; polling stays the fallback).",
    )(f)
    f = click.option(
        "--public-url",
        metavar="URL",
        help="The address hubs reach --listen at (e.g. behind a reverse proxy): "
        "callbacks are URL/websub/<token>.",
    )(f)
    return click.option(
        "--listen",
        metavar="HOST:PORT",
        help="Serve the WebSub callbacks here and subscribe to the hubs feeds name "
        "(needs --public-url; see docs/push.md).",
    )(f)


def push_settings(
    listen: str | None, public_url: str | None, push_every: str
) -> PushOptions | None:
    """The daemon's push options; None without --listen. Both or neither (exit 2)."""
    from podarchive.daemon.service import PushOptions

    if listen is None and public_url is None:
        return None
    if listen is None or public_url is None:
        raise UsageFailure("--listen and --public-url go together")
    if not public_url.lower().startswith(("http://", "https://")):
        raise UsageFailure(f"--public-url must be an http(s) URL, not {public_url!r}")
    try:
        every = parse_interval(push_every)
    except ValueError as e:
        raise UsageFailure(f"--push-every: {e}") from e
    return PushOptions(listen=listen, public_url=public_url, push_every=every)


def podping_options(f: F) -> F:
    """``--podping`` and its settings; the command takes them as ``**podping_args``."""
    from podarchive.cli.common import Number
    from podarchive.rules.podping import DEFAULT_NODES, DEFAULT_WRITERS

    f = click.option(
        "--podping-timeout",
        type=Number(0.1, 600),
        default=10.0,
        show_default=True,
        metavar="SECONDS",
        help="How long one request to a Hive node may take in all before the next is asked.",
    )(f)
    f = click.option(
        "--podping-every",
        type=Number(0.05, 600),
        default=3.0,
        show_default=True,
        metavar="SECONDS",
        help="How often to ask a Hive node for new blocks (Hive makes one every 3 s).",
    )(f)
    f = click.option(
        "--podping-catch-up",
        type=click.IntRange(1, 100_000),
        default=200,
        show_default=True,
        metavar="BLOCKS",
        help="Blocks read in one pass at most when behind (the next pass follows at once).",
    )(f)
    f = click.option(
        "--podping-writer",
        multiple=True,
        metavar="ACCOUNT",
        help="A Hive account whose podpings are trusted (repeatable; default: "
        + ", ".join(DEFAULT_WRITERS)
        + ").",
    )(f)
    f = click.option(
        "--podping-node",
        multiple=True,
        metavar="URL",
        help="A Hive API node to read blocks from, in order (repeatable; default: "
        + ", ".join(DEFAULT_NODES)
        + ").",
    )(f)
    return click.option(
        "--podping",
        is_flag=True,
        help="Watch Hive for podpings: a ping naming an archived feed makes it due now "
        "(at most once per 5 minutes; see docs/push.md).",
    )(f)


def podping_settings(
    podping: bool,
    podping_node: tuple[str, ...],
    podping_writer: tuple[str, ...],
    podping_catch_up: int,
    podping_every: float,
    podping_timeout: float,
) -> PodpingOptions | None:
    """The daemon's podping options; None without --podping (a bad node URL: exit 2)."""
    from podarchive.daemon.podping import PodpingOptions
    from podarchive.net.hive import node_problem
    from podarchive.rules.podping import DEFAULT_NODES, DEFAULT_WRITERS

    if not podping:
        if podping_node or podping_writer:
            raise UsageFailure("--podping-node and --podping-writer need --podping")
        return None
    for node in podping_node:
        problem = node_problem(node)
        if problem is not None:
            raise UsageFailure(f"--podping-node: {problem}")
    for writer in podping_writer:
        if not writer or len(writer) > 16 or not writer.replace(".", "").replace("-", "").isalnum():
            raise UsageFailure(f"--podping-writer: not a Hive account name: {writer!r}")
    return PodpingOptions(
        nodes=podping_node or DEFAULT_NODES,
        writers=tuple(w.lower() for w in podping_writer) or DEFAULT_WRITERS,
        every=podping_every,
        catch_up=podping_catch_up,
        timeout=podping_timeout,
    )
