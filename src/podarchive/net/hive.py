"""JSON-RPC 2.0 calls to a Hive API node, for podping (#29).

A node's URL is configuration, but its answers are not trusted: each request goes through
the guard every fetch of an outside URL goes through (:mod:`.netguard`: the address check at
the dial unless private hosts are allowed, and one total deadline), follows no redirect, and
reads at most :data:`ANSWER_LIMIT` bytes of the answer.
"""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import urlsplit

import httpx

from podarchive.core.errors import BlockedURL, FetchError, shorten
from podarchive.core.settings import Settings

from . import netguard
from .fetch import _tls_context

ANSWER_LIMIT = 16 * 1024 * 1024  # 50 full blocks are ~5 MiB


def node_problem(url: str) -> str | None:
    """Why ``url`` cannot be a Hive API node (None: it can)."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return f"not an http(s) URL: {url!r}"
    return None


def hive_call(node: str, method: str, params: Any, *, settings: Settings, timeout: float) -> Any:
    """``method(params)`` on ``node``: the answer's ``result``.

    Raises :class:`FetchError` (one line) when the node cannot be reached, hangs past
    ``timeout`` seconds in all, answers too much, not JSON, or a JSON-RPC error."""
    problem = node_problem(node)
    if problem is not None:
        raise BlockedURL(f"blocked: {problem}", url=node)
    blocked = None if settings.allow_private_hosts else netguard.is_private
    backend = netguard.GuardedBackend(netguard.system_resolver, blocked)
    limits = httpx.Limits(max_connections=1, max_keepalive_connections=0)
    transport = netguard.guarded_transport(backend, limits, _tls_context())
    request = {"jsonrpc": "2.0", "method": method, "params": params, "id": 1}
    headers = {"User-Agent": settings.user_agent, "Content-Type": "application/json"}
    try:
        with (
            netguard.budget(timeout),
            httpx.Client(
                transport=transport, timeout=httpx.Timeout(timeout), trust_env=False
            ) as client,
            client.stream(
                "POST", node, content=json.dumps(request).encode(), headers=headers
            ) as response,
        ):
            if response.status_code != 200:
                raise FetchError(f"node answered HTTP {response.status_code}", url=node)
            body = bytearray()
            for chunk in response.iter_bytes():
                body += chunk
                if len(body) > ANSWER_LIMIT:
                    raise FetchError(f"node answered more than {ANSWER_LIMIT} bytes", url=node)
    except FetchError as e:
        e.url = e.url or node
        raise
    except httpx.HTTPError as e:
        raise FetchError(f"node unreachable: {type(e).__name__}: {e}", url=node) from e
    return _result(node, bytes(body))


def _result(node: str, body: bytes) -> Any:
    try:
        answer = json.loads(body)
    except ValueError as e:
        raise FetchError(f"node answered no JSON: {shorten(str(e))}", url=node) from e
    if not isinstance(answer, dict):
        raise FetchError("node answered no JSON-RPC object", url=node)
    if answer.get("error") is not None:
        error = answer["error"]
        message = error.get("message") if isinstance(error, dict) else error
        raise FetchError(f"node error: {shorten(str(message))}", url=node)
    if "result" not in answer:
        raise FetchError("node answered no result", url=node)
    return answer["result"]
