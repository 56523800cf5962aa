"""The feeds a WebSub notification or a podping made due (#29), until a cycle takes them."""

from __future__ import annotations

import threading
from collections.abc import Collection


class PushedFeeds:
    """Feed URLs made due from another thread; each taken once by the cycle that polls it."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._urls: set[str] = set()

    def add(self, url: str) -> None:
        with self._lock:
            self._urls.add(url)

    def take(self, urls: Collection[str]) -> set[str]:
        """Of ``urls``, those made due (taken: asked once)."""
        with self._lock:
            taken = self._urls & set(urls)
            self._urls -= taken
        return taken

    def put_back(self, urls: Collection[str]) -> None:
        """A cycle that could not poll them: due again."""
        with self._lock:
            self._urls.update(urls)
