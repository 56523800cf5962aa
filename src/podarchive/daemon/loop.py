"""The waiting loop of the daemon and of the cluster's scheduler, and what wakes it.

:func:`run_loop` calls a step, which does the loop's work and says how long until the earliest
feed is due, then sleeps until then, at most one tick (:func:`podarchive.rules.wake.wake_delay`),
or until its wake-up is set. The daemon (:mod:`.scheduler`) steps through its own feeds' due
times; the cluster's scheduler (:mod:`podarchive.cluster.dispatch`) imports it too.

A wake-up is anything with ``wait(timeout) -> bool``: a :class:`threading.Event`, or a
:class:`Wakeup`, which a signal handler may also set (``Event.set`` in a signal handler can
deadlock on the lock its own ``wait`` holds; a self-pipe cannot).
"""

from __future__ import annotations

import contextlib
import os
import select
from collections.abc import Callable
from pathlib import Path
from typing import Protocol

from podarchive.rules.wake import settle, wake_delay

Fingerprint = tuple[tuple[str, int, int], ...]


class Waitable(Protocol):
    def wait(self, timeout: float | None = None) -> bool: ...


class Wakeup:
    """An event on a self-pipe: :meth:`set` from any thread or a signal handler (a push
    notification, a cycle's end, a reload request); :meth:`wait` wakes on it at once."""

    def __init__(self) -> None:
        self._read, self._write = os.pipe()
        self._closed = False
        os.set_blocking(self._read, False)
        os.set_blocking(self._write, False)

    def set(self) -> None:
        if self._closed:  # its descriptors may be another file's by now
            return
        with contextlib.suppress(OSError):  # pipe full: the loop is awake anyway; or closed
            os.write(self._write, b"!")

    def wait(self, timeout: float | None = None) -> bool:
        """Sleep until set or ``timeout`` seconds; True when it was set (and is now clear)."""
        poller = select.poll()  # not select.select: a descriptor past 1024 is fine
        poller.register(self._read, select.POLLIN)
        if not poller.poll(None if timeout is None else max(0.0, timeout) * 1000):
            return False
        with contextlib.suppress(BlockingIOError):
            os.read(self._read, 4096)
        return True

    def close(self) -> None:
        self._closed = True
        os.close(self._read)
        os.close(self._write)


def run_loop(
    step: Callable[[], float | None],
    *,
    wake: Waitable,
    tick: float,
    stopped: Callable[[], bool],
) -> None:
    """Until ``stopped()``: ``step()``, which returns the seconds until the earliest due time
    (None: nothing known to be due), then sleep until that time, one tick at most, or until
    ``wake`` is set."""
    while not stopped():
        until_due = step()
        if stopped():
            return
        wake.wait(wake_delay(until_due, tick))


def fingerprint(directory: Path) -> Fingerprint:
    """Names, mtimes and sizes of the schedule files: a change means "reload"."""
    try:
        paths = sorted(directory.glob("*.toml"))
    except OSError:
        return ()
    out = []
    for path in paths:
        try:
            stat = path.stat()
        except OSError:
            continue
        out.append((path.name, stat.st_mtime_ns, stat.st_size))
    return tuple(out)


class ScheduleWatch:
    """The schedule files' fingerprint, looked at once a tick: :meth:`changed` is True once
    a change has stayed the same for a whole tick (a file half written is not read)."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.reset()

    def reset(self) -> None:
        """The files as they are now are the ones loaded."""
        self._last: Fingerprint = fingerprint(self.directory)
        self._settling: Fingerprint | None = None

    def changed(self) -> bool:
        current = fingerprint(self.directory)
        self._last, self._settling, changed = settle(self._last, self._settling, current)
        return changed
