"""The CLI as the tests run it: in-process through CliRunner, or as a real subprocess."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from contextlib import closing
from pathlib import Path

from click.testing import CliRunner
from conftest import FAST_ENV

from podarchive.cli import cli


def invoke(*args: str) -> tuple[int, str, str]:
    """``podarchive ARGS`` in-process: (exit code, stdout, stderr)."""
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


def podarchive(*args: str, cwd: Path, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    """``python -m podarchive ARGS`` as a real process, with the suite's fast politeness and
    none of the caller's other PODARCHIVE_ settings."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PODARCHIVE_")}
    env.update(FAST_ENV)
    return subprocess.run(
        [sys.executable, "-m", "podarchive", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
        stdin=subprocess.DEVNULL,
    )


def query(db: Path, sql: str) -> list[tuple[object, ...]]:
    """The rows of one SQL query on the archive at ``db``."""
    with closing(sqlite3.connect(db)) as conn:
        return conn.execute(sql).fetchall()
