"""``podarchive run`` shows its progress on a terminal (issue #28): feeds done of those to poll,
pages and files fetched, bytes read, with backfill's progress component; nothing of it off a
terminal (cron, pipes) nor under ``-q``.

The terminal is a real pseudo-terminal (``pty``) around a real ``python -m podarchive run``
of the PyTorch fixture on a loopback site.
"""

from __future__ import annotations

import fcntl
import io
import os
import pty
import re
import struct
import subprocess
import sys
import termios
from pathlib import Path

import pytest
from loopback import LoopbackSite, serve_pytorch

from podarchive.runtime.progress import RunProgress, make_run_progress

PROGRESS = "pages and files"


def _in_a_terminal(args: list[str], cwd: Path) -> tuple[int, str]:
    """Run ``args`` with stdin, stdout and stderr on a pseudo-terminal of 140 columns; its exit
    status and everything it wrote."""
    main, side = pty.openpty()
    fcntl.ioctl(side, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 140, 0, 0))
    env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "COLUMNS", "LINES")}
    proc = subprocess.Popen(
        args, stdin=side, stdout=side, stderr=side, cwd=cwd, env={**env, "TERM": "xterm"}
    )
    os.close(side)
    chunks = []
    while True:
        try:
            chunk = os.read(main, 65536)
        except OSError:  # EIO: the terminal's other side is closed
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(main)
    text = b"".join(chunks).decode("utf-8", "replace")
    return proc.wait(timeout=120), re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", text)  # no colours


def _run(db: Path, url: str, *extra: str) -> list[str]:
    return [
        sys.executable, "-m", "podarchive", "run", url, "--db", str(db),
        "--schedules", str(db.parent / "schedules"), "--allow-private-hosts", *extra,
    ]  # fmt: skip


@pytest.fixture
def site() -> LoopbackSite:
    with LoopbackSite() as running:
        yield running


def test_run_on_a_terminal_shows_its_progress(site: LoopbackSite, tmp_path: Path) -> None:
    url = serve_pytorch(site)
    status, shown = _in_a_terminal(_run(tmp_path / "a.db", url), tmp_path)
    assert status == 0, shown
    assert PROGRESS in shown
    assert "1/1 feeds" in shown  # the one feed, done
    files = sum(1 for r in site.requests if "/episodes/" in r.path or "/media/" in r.path)
    assert f"{files} pages and files" in shown
    assert " kB" in shown or " MB" in shown


def test_run_under_q_or_off_a_terminal_shows_none(site: LoopbackSite, tmp_path: Path) -> None:
    url = serve_pytorch(site)
    status, shown = _in_a_terminal(_run(tmp_path / "a.db", url, "-q"), tmp_path)
    assert status == 0, shown
    assert PROGRESS not in shown
    cron = subprocess.run(
        _run(tmp_path / "b.db", url), capture_output=True, text=True, timeout=120, check=False
    )
    assert cron.returncode == 0, cron.stderr
    assert PROGRESS not in cron.stdout + cron.stderr
    quiet = subprocess.run(
        _run(tmp_path / "c.db", url, "-q"), capture_output=True, text=True, timeout=120, check=False
    )
    assert (cron.stdout, cron.stderr.replace("c.db", "b.db")) == (
        quiet.stdout,
        quiet.stderr.replace("c.db", "b.db"),
    )  # nothing extra under cron


def test_run_progress_counts_feeds_files_and_bytes() -> None:
    assert make_run_progress(io.StringIO()) is None  # not a terminal
    stream = io.StringIO()
    with RunProgress(stream) as progress:
        progress.begin(2)
        progress.stored("feed", 1500)
        progress.stored("file", 2000)
        progress.stored("file", 500)
        progress.stored("feed", 1000)
    assert (progress.files, progress.bytes) == (2, 5000)
    assert "2/2 feeds · 2 pages and files · 5.0 kB" in stream.getvalue()
