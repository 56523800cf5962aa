"""The WebSub options of ``daemon`` (#29): --listen, --public-url, --push-every."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

import click

from podarchive.cli.common import UsageFailure
from podarchive.read.schedule_files import parse_interval

if TYPE_CHECKING:
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
