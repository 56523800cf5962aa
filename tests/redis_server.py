"""A real Redis server for the cluster tests: Debian's ``redis-server`` on 127.0.0.1.

Each server runs in its own directory on a free port, without persistence (a restart
loses everything, as a broker crash without persistence would), and is stopped by the
test. Without ``redis-server`` on PATH the tests skip, unless ``PODARCHIVE_REQUIRE_REDIS``
is set (``.ci/run`` sets it, having installed the server): there, its absence fails.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time
from pathlib import Path

import pytest


def redis_binary() -> str:
    found = shutil.which("redis-server")
    if found is None:
        if os.environ.get("PODARCHIVE_REQUIRE_REDIS"):
            pytest.fail("redis-server is not installed, and PODARCHIVE_REQUIRE_REDIS is set")
        pytest.skip("redis-server is not installed (Debian: apt-get install redis-server)")
    return found


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class RedisServer:
    """``with RedisServer(tmp_path) as server:``; ``server.url`` is its address."""

    def __init__(self, directory: Path) -> None:
        self.binary = redis_binary()
        self.directory = directory
        directory.mkdir(parents=True, exist_ok=True)
        self.port = _free_port()
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        args = [
            self.binary,
            "--bind", "127.0.0.1",
            "--port", str(self.port),
            "--dir", str(self.directory),
            "--save", "",
            "--appendonly", "no",
            "--protected-mode", "yes",
            "--logfile", str(self.directory / "redis.log"),
        ]  # fmt: skip
        self.process = subprocess.Popen(args, stdin=subprocess.DEVNULL)
        self._wait_ready()

    def _wait_ready(self) -> None:
        for _ in range(300):  # up to ~30 s on a loaded machine; ready in milliseconds here
            assert self.process is not None
            if self.process.poll() is not None:
                log = (self.directory / "redis.log").read_text(errors="replace")[-2000:]
                raise RuntimeError(f"redis-server exited: {log}")
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=1) as s:
                    s.sendall(b"PING\r\n")
                    if s.recv(16).startswith(b"+PONG"):
                        return
            except OSError:
                pass
            time.sleep(0.1)
        raise RuntimeError("redis-server did not answer PING")

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(15)
        self.process = None

    def restart(self) -> None:
        """Stopped and started again on the same port: everything it held is lost."""
        self.stop()
        self.start()

    def __enter__(self) -> RedisServer:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
