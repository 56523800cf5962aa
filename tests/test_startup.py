"""A cron run whose feeds answer 304 never loads the parsers (issue #15: start-up counts).

The parsing stack (feedparser, lxml, BeautifulSoup) loads on the first body that changed,
soupsieve (CSS selectors, which podarchive never uses) not even then, and httpx's own
command-line client (rich, pygments) never: checked in real processes, by the modules each one
ended with (a module's stand-in, ``podarchive.read.deferred``, is not the module).
"""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

from conftest import FAST_ENV

PARSERS = (
    "feedparser",
    "lxml",
    "bs4",
    "podarchive.read.parse",
    "podarchive.read.extract",
)
NEVER = ("rich", "pygments", "httpx._main", "soupsieve")
SHOW_MODULES = (
    "import atexit, sys\n"
    "names = {names!r}\n"
    "real = lambda n: bool(sys.modules.get(n)) and type(sys.modules[n]).__name__ != 'Deferred'\n"
    "atexit.register(lambda: print('LOADED', sorted(n for n in names if real(n))))\n"
    "from podarchive.cli import main\n"
    "sys.argv = ['podarchive', *{args!r}]\n"
    "main()\n"
)


def loaded(*args: str, cwd: Path) -> tuple[int, list[str], str]:
    """Run the CLI in a fresh interpreter; its exit code, the watched modules it loaded, stderr."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PODARCHIVE_")}
    env.update(FAST_ENV)
    code = SHOW_MODULES.format(names=PARSERS + NEVER, args=list(args))
    done = subprocess.run(
        [sys.executable, "-c", code],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
        stdin=subprocess.DEVNULL,
    )
    line = next(x for x in done.stdout.splitlines() if x.startswith("LOADED"))
    return done.returncode, ast.literal_eval(line.removeprefix("LOADED ")), done.stderr


def test_help_loads_no_parser(tmp_path: Path) -> None:
    assert loaded("--help", cwd=tmp_path)[:2] == (0, [])


def test_a_run_of_unchanged_feeds_loads_no_parser(tmp_path: Path, pytorch_feed: str) -> None:
    args = ("run", "--no-pages", "-v", pytorch_feed, "--allow-private-hosts")
    code, modules, _ = loaded(*args, cwd=tmp_path)
    assert code == 0
    assert set(modules) == set(PARSERS)  # the guard: a changed feed does load them
    code, modules, stderr = loaded(*args, cwd=tmp_path)
    assert code == 0
    assert f"{pytorch_feed}: unchanged" in stderr
    assert modules == []
