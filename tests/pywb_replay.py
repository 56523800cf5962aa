"""pywb, the Webrecorder replay server, run from its own virtualenv on loopback (#27).

pywb pins redis 2.10.6, which the cluster extra cannot share, so it never enters the
project's venv: :func:`pywb_bin` finds a virtualenv's ``bin`` folder holding ``wayback`` and
``wb-manager`` (env ``PODARCHIVE_TEST_PYWB``, else a cache folder, built there once with
``python -m venv`` and ``pip install pywb==2.10.0``), and :class:`Wayback` adds a WACZ to a
collection and serves it on 127.0.0.1 while a test asks for archived URLs in identity mode
(``/<coll>/<14-digit timestamp>id_/<url>``: the archived bytes, not rewritten).
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

PYWB_VERSION = "2.10.0"
CACHE = Path.home() / ".cache" / "podarchive-tests" / f"pywb-{PYWB_VERSION}"
COLLECTION = "podcasts"


def pywb_bin() -> tuple[Path | None, str]:
    """(the ``bin`` folder of a virtualenv with pywb, "") or (None, why there is none)."""
    given = os.environ.get("PODARCHIVE_TEST_PYWB")
    if given:
        folder = Path(given)
        if (folder / "wayback").exists() and (folder / "wb-manager").exists():
            return folder, ""
        return None, f"PODARCHIVE_TEST_PYWB={given} holds no wayback and wb-manager"
    folder = CACHE / "bin"
    if (folder / "wayback").exists() and (folder / "wb-manager").exists():
        return folder, ""
    return _build(CACHE)


def pywb_or_skip() -> Path:
    """:func:`pywb_bin`, or the test skipped with the reason there is none."""
    import pytest

    folder, why = pywb_bin()
    if folder is None:
        pytest.skip(why)
    return folder


def _build(root: Path) -> tuple[Path | None, str]:
    """A fresh virtualenv at ``root`` with pywb installed (about a minute, once)."""
    root.parent.mkdir(parents=True, exist_ok=True)
    steps = (
        [sys.executable, "-m", "venv", str(root)],
        [str(root / "bin" / "python"), "-m", "pip", "install", "-q", f"pywb=={PYWB_VERSION}"],
    )
    for step in steps:
        done = subprocess.run(step, capture_output=True, text=True, timeout=900)
        if done.returncode != 0:
            tail = (done.stderr or done.stdout).strip().splitlines()[-1:] or ["failed"]
            return None, f"pywb {PYWB_VERSION} cannot be installed: {tail[0]}"
    return root / "bin", ""


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Wayback:
    """``wayback`` serving the collection made of one WACZ (``wb-manager add --unpack-wacz``,
    which uses the WACZ's own CDXJ index), on 127.0.0.1 at a free port."""

    def __init__(self, bin_dir: Path, root: Path, wacz: Path) -> None:
        self.bin_dir, self.root = bin_dir, root
        root.mkdir(parents=True, exist_ok=True)
        self._manager("init", COLLECTION)
        self._manager("add", "--unpack-wacz", COLLECTION, str(wacz))
        self.port = _free_port()
        self.log = (root / "wayback.log").open("wb")
        self.process = subprocess.Popen(
            [str(bin_dir / "wayback"), "-b", "127.0.0.1", "-p", str(self.port)],
            cwd=root, stdout=self.log, stderr=subprocess.STDOUT,
        )  # fmt: skip
        self._wait_ready()

    def _manager(self, *args: str) -> None:
        subprocess.run(
            [str(self.bin_dir / "wb-manager"), *args], cwd=self.root, check=True,
            capture_output=True, timeout=300,
        )  # fmt: skip

    def _wait_ready(self) -> None:
        for _ in range(600):  # at most a minute on a loaded machine
            if self.process.poll() is not None:
                raise RuntimeError(f"wayback exited: {(self.root / 'wayback.log').read_text()}")
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.5):
                    return
            except OSError:
                time.sleep(0.1)
        raise RuntimeError("wayback did not start listening")

    def get(self, timestamp: str, url: str) -> tuple[int, dict[str, str], bytes]:
        """What pywb replays for ``url`` at ``timestamp`` (14 digits), identity mode."""
        address = f"http://127.0.0.1:{self.port}/{COLLECTION}/{timestamp}id_/{url}"
        opener = urllib.request.build_opener(_NoRedirect)
        try:
            with opener.open(address, timeout=60) as reply:
                return reply.status, dict(reply.headers.items()), reply.read()
        except urllib.error.HTTPError as e:
            return e.code, dict(e.headers.items()), e.read()

    def close(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self.log.close()


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: object, **kwargs: object) -> None:
        return None
