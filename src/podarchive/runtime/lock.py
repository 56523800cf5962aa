"""One run at a time: an exclusive ``flock`` on a file beside the archive.

``<db>.lock`` is held by ``podarchive run`` for its archive work and by the daemon for each
update cycle; ``<db>.daemon.lock`` is held by a daemon for its whole life, so two daemons
never share one archive. The kernel releases a ``flock`` when its process dies, however it
dies, so a killed run never blocks the next one. The holder writes its pid and start time
into the file, for the messages of those who find it taken.

The file is never deleted: unlinking a lock file others may have opened would let two
processes each lock a different inode.
"""

from __future__ import annotations

import fcntl
import json
import os
import time
from pathlib import Path
from types import TracebackType

from podarchive.core.clock import now_iso
from podarchive.core.errors import ArchiveLocked, StorageError


def archive_lock_path(db: Path) -> Path:
    return Path(f"{db}.lock")


def daemon_lock_path(db: Path) -> Path:
    return Path(f"{db}.daemon.lock")


class FileLock:
    """An exclusive, non-reentrant lock on ``path``; use ``with FileLock(p).acquire(wait=5):``."""

    def __init__(self, path: Path, *, what: str = "another run", target: str | None = None):
        self.path = path
        self.what = what  # how a holder is named in messages
        self.target = target or str(path)
        self._fd: int | None = None

    @property
    def held(self) -> bool:
        return self._fd is not None

    def acquire(self, wait: float = 0.0, poll: float = 0.1) -> FileLock:
        """Take the lock, waiting up to ``wait`` seconds. Raises :class:`ArchiveLocked`."""
        if self._fd is not None:
            raise RuntimeError(f"{self.path} is already held by this process")
        deadline = time.monotonic() + max(0.0, wait)
        try:
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        except OSError as e:
            raise StorageError(f"cannot lock {self.target}: {e.strerror}: {self.path}") from e
        try:
            while True:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    left = deadline - time.monotonic()
                    if left <= 0:
                        raise ArchiveLocked(self.busy_message()) from None
                    time.sleep(min(poll, left))
            os.ftruncate(fd, 0)
            info = {"pid": os.getpid(), "since": now_iso()}
            os.write(fd, (json.dumps(info) + "\n").encode())
        except BaseException:
            os.close(fd)
            raise
        self._fd = fd
        return self

    def release(self) -> None:
        fd, self._fd = self._fd, None
        if fd is not None:
            try:
                os.ftruncate(fd, 0)  # while still held: never erases the next holder's note
            finally:
                os.close(fd)  # closing the only descriptor releases the flock

    def holder(self) -> dict[str, object] | None:
        """What the current holder wrote (pid, since), if anything readable."""
        try:
            data = json.loads(self.path.read_text(encoding="utf-8") or "null")
        except (OSError, ValueError):
            return None
        return data if isinstance(data, dict) else None

    def busy_message(self) -> str:
        info = self.holder()
        if info and "pid" in info:
            since = info.get("since", "?")
            return f"{self.what} (pid {info['pid']}, since {since}) holds {self.target}"
        return f"{self.what} holds {self.target}"

    def __enter__(self) -> FileLock:
        if self._fd is None:
            self.acquire()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.release()


def archive_lock(db: Path) -> FileLock:
    """The lock for archive work (``run``, each daemon cycle)."""
    return FileLock(archive_lock_path(db), target=str(db))


def daemon_lock(db: Path) -> FileLock:
    """Held by a daemon for its life: one daemon per archive."""
    return FileLock(daemon_lock_path(db), what="another daemon", target=str(db))
