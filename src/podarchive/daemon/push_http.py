"""The WebSub callback endpoint (#29): a tiny ASGI app served by uvicorn on its own thread.

Its only routes are ``GET /websub/<token>`` (a hub's verification of intent: the challenge
echoed, or 404) and ``POST /websub/<token>`` (a content distribution: 202 whether or not
its signature is valid, 404 for an unknown token). Anything else is 404; a body over
:data:`MAX_BODY` is 413; uvicorn bounds headers, keep-alive and concurrency. uvicorn is
imported here only (the ``push`` extra; Datasette brings it too).
"""

from __future__ import annotations

import socket
import threading
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any
from urllib.parse import parse_qsl

from podarchive.core.errors import ConfigError
from podarchive.daemon.push import PushManager

MAX_BODY = 1 << 20  # a notification's body: 1 MiB at most (it is evidence only)
PREFIX = "/websub/"
Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]


def websub_app(push: PushManager) -> Callable[[Scope, Receive, Send], Awaitable[None]]:
    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            while True:
                message = await receive()
                if message["type"] == "lifespan.startup":
                    await send({"type": "lifespan.startup.complete"})
                elif message["type"] == "lifespan.shutdown":
                    await send({"type": "lifespan.shutdown.complete"})
                    return
        if scope["type"] != "http":
            return
        path: str = scope.get("path", "")
        token = path[len(PREFIX) :] if path.startswith(PREFIX) else ""
        if not token or "/" in token or len(token) > 64:
            await _reply(send, 404)
            return
        if scope["method"] == "GET":
            await _verify(push, token, scope, send)
        elif scope["method"] == "POST":
            await _notify(push, token, scope, receive, send)
        else:
            await _reply(send, 405)

    return app


async def _verify(push: PushManager, token: str, scope: Scope, send: Send) -> None:
    query = dict(parse_qsl(scope.get("query_string", b"").decode("latin-1")))
    if query.get("hub.mode") == "denied":
        await _reply(send, 200 if push.denied(token, query) else 404)
        return
    challenge = push.verify(token, query)
    if challenge is None:
        await _reply(send, 404)
    else:
        await _reply(send, 200, challenge.encode())


async def _notify(
    push: PushManager, token: str, scope: Scope, receive: Receive, send: Send
) -> None:
    if not push.known(token):
        await _reply(send, 404)
        return
    headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
    length = headers.get("content-length", "0")
    if not length.isdigit() or int(length) > MAX_BODY:
        await _reply(send, 413)
        return
    body = b""
    while True:
        message = await receive()
        body += message.get("body", b"")
        if len(body) > MAX_BODY:
            await _reply(send, 413)
            return
        if not message.get("more_body"):
            break
    signature, kind = headers.get("x-hub-signature"), headers.get("content-type")
    await _reply(send, push.notify(token, signature, body, kind))


async def _reply(send: Send, status: int, body: bytes = b"") -> None:
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [(b"content-type", b"text/plain"), (b"content-length", b"%d" % len(body))],
        }
    )
    await send({"type": "http.response.body", "body": body})


class PushServer:
    """uvicorn serving :func:`websub_app` on ``host:port``, on a thread of its own."""

    def __init__(self, push: PushManager, listen: str) -> None:
        host, _, port = listen.rpartition(":")
        if not host or not port.isdigit():
            raise ConfigError(f"--listen wants HOST:PORT, not {listen!r}")
        try:
            self._socket = socket.create_server((host.strip("[]"), int(port)))
        except OSError as e:
            raise ConfigError(f"cannot listen on {listen}: {e.strerror or e}") from e
        import uvicorn

        config = uvicorn.Config(
            websub_app(push),
            log_level="warning",
            lifespan="off",
            timeout_keep_alive=5,
            limit_concurrency=64,
            h11_max_incomplete_event_size=16 * 1024,
            access_log=False,
        )
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(
            target=self._server.run,
            kwargs={"sockets": [self._socket]},
            name="podarchive-websub",
            daemon=True,
        )

    @property
    def port(self) -> int:
        return int(self._socket.getsockname()[1])

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._server.should_exit = True
        self._thread.join(timeout=10)
        self._socket.close()
