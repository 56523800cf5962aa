"""Requests to a WebSub hub (#29): ``hub.mode=subscribe`` / ``unsubscribe`` as a form POST.

The hub's URL comes from a feed's body, so it is untrusted: the request goes through the
same guard as every fetch of a URL from feed content (:mod:`.netguard`: the address check at
the dial, the total deadline), unless the schedule lets the feed reach private hosts. No
redirect is followed; the answer's body is read to 4 KiB at most (for the log line).
"""

from __future__ import annotations

from urllib.parse import urlsplit

import httpx

from podarchive.core.errors import BlockedURL, FetchError, shorten
from podarchive.core.settings import Settings

from . import netguard
from .fetch import _tls_context

ANSWER_LIMIT = 4096


def hub_request(
    hub: str, form: dict[str, str], *, settings: Settings, trusted: bool = False
) -> tuple[int, str]:
    """POST ``form`` to ``hub``; its status and the start of its answer (one line).

    Raises :class:`FetchError` (one line) when the hub cannot be reached or is refused."""
    parts = urlsplit(hub)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise BlockedURL(f"blocked: not an http(s) hub URL: {shorten(hub)}", url=hub)
    blocked = None if trusted or settings.allow_private_hosts else netguard.is_private
    backend = netguard.GuardedBackend(netguard.system_resolver, blocked)
    limits = httpx.Limits(max_connections=1, max_keepalive_connections=0)
    transport = netguard.guarded_transport(backend, limits, _tls_context())
    timeout = httpx.Timeout(settings.connect_timeout, read=settings.read_timeout)
    headers = {"User-Agent": settings.user_agent}
    try:
        with (
            netguard.budget(settings.connect_timeout + settings.read_timeout),
            httpx.Client(transport=transport, timeout=timeout, trust_env=False) as client,
            client.stream("POST", hub, data=form, headers=headers) as response,
        ):
            answer = b""
            for chunk in response.iter_bytes():
                answer += chunk
                if len(answer) >= ANSWER_LIMIT:
                    break
            text = answer[:ANSWER_LIMIT].decode("utf-8", "replace")
            return response.status_code, " ".join(text.split())[:200]
    except FetchError as e:
        e.url = e.url or hub
        raise
    except httpx.HTTPError as e:
        raise FetchError(f"hub unreachable: {type(e).__name__}: {e}", url=hub) from e
