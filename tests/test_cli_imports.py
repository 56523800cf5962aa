"""What a command imports (#30): ``run`` from cron pays for its own modules only.

The group registers its commands by module name (``cli.LazyCommands``): a command's module,
and the libraries it uses, are imported when that command runs. Each test runs the console
entry point in a fresh interpreter and reads its ``sys.modules`` at the end.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from subprocess import CompletedProcess

import click
import pytest
from loopback import LoopbackSite, Reply

from podarchive.cli import COMMAND_MODULES, LazyCommands, cli

SRC = Path(__file__).resolve().parents[1] / "src"
#: Libraries no run needs: the other commands' (Datasette, WARC, BagIt, the daemon's
#: scheduler, the cluster's broker, the progress bar off a terminal).
NOT_FOR_RUN = ("datasette", "warcio", "bagit", "apscheduler", "redis", "rich", "uvicorn")
#: ...nor one whose feeds all answer 304: the parsers, the modules of the other commands, and
#: sqlite-utils (the migrations' library: an archive of the current schema does without it).
NOT_FOR_A_304 = (
    "feedparser",
    "bs4",
    "lxml",
    "podarchive.read.parse",
    "podarchive.cli.watch",
    "sqlite_utils",
    # the save of a changed feed, the media phase's downloads and its folder (#30)
    "podarchive.rules.episode_plan",
    "podarchive.update.media_jobs",
    "podarchive.net.download",
    "podarchive.store.media_files",
)
FEED = (
    b'<?xml version="1.0"?><rss version="2.0"><channel><title>T</title><item><title>E</title>'
    b'<guid>g1</guid><enclosure url="https://x.example/a.mp3" type="audio/mpeg" length="1"/>'
    b"</item></channel></rss>"
)
PROBE = """
import json, sys
from podarchive.cli import main
sys.argv = ["podarchive", *json.loads(sys.argv[1])]
try:
    main()
except SystemExit as e:
    code = e.code
from podarchive.read.deferred import Deferred  # stand-ins are not loaded modules
print(json.dumps([code, sorted(n for n, m in sys.modules.items() if not isinstance(m, Deferred))]))
"""


def _fresh_python(code: str, *args: str, cwd: Path | None = None) -> CompletedProcess[str]:
    """``python -c code args...`` in a fresh interpreter that sees only this checkout's src."""
    return subprocess.run(
        [sys.executable, "-c", code, *args],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=cwd,
        env={"PYTHONPATH": str(SRC), "PATH": "/usr/bin:/bin"},
        check=False,
    )


def _modules_after(*args: str, cwd: Path) -> tuple[int, set[str]]:
    """The exit code of ``podarchive ARGS``, and the modules it imported."""
    done = _fresh_python(PROBE, json.dumps(args), cwd=cwd)
    code, modules = json.loads(done.stdout.splitlines()[-1])
    return code, set(modules)


def _loaded(modules: set[str], names: tuple[str, ...]) -> list[str]:
    return sorted(n for n in names if any(m == n or m.startswith(f"{n}.") for m in modules))


def test_run_help_imports_no_other_command(tmp_path: Path) -> None:
    code, modules = _modules_after("run", "--help", cwd=tmp_path)
    assert code == 0
    assert _loaded(modules, (*NOT_FOR_RUN, "sqlite_utils")) == []
    others = {m for m, _ in COMMAND_MODULES.values()} - {"podarchive.cli.run"}
    assert sorted(modules & others) == []


def test_a_run_of_304s_imports_neither_parsers_nor_other_commands(
    tmp_path: Path, site: LoopbackSite
) -> None:
    site.routes["/f.xml"] = Reply(FEED, etag='"v1"')
    args = ("run", site.url("/f.xml"), "--no-pages", "--db", str(tmp_path / "a.db"))
    first, modules_first = _modules_after(*args, cwd=tmp_path)
    code, modules = _modules_after(*args, cwd=tmp_path)
    asked = [r.headers.get("if-none-match") for r in site.requests if r.path == "/f.xml"]
    assert (first, code, asked) == (0, 0, [None, '"v1"'])
    assert {"feedparser", "sqlite_utils"} <= modules_first  # parsed, migrated: the probe sees
    assert "podarchive.rules.episode_plan" in modules_first  # episodes written: so it sees
    assert _loaded(modules, NOT_FOR_RUN + NOT_FOR_A_304) == []


def test_the_checks_catch_an_eager_import(tmp_path: Path) -> None:
    """The probe sees a module a command imports: ``serve --help`` imports its module."""
    code, modules = _modules_after("serve", "--help", cwd=tmp_path)
    assert code == 0
    assert _loaded(modules, ("podarchive.cli.watch",)) == ["podarchive.cli.watch"]
    assert _loaded({"datasette.app", "lxml"}, NOT_FOR_RUN + NOT_FOR_A_304) == ["datasette", "lxml"]


def test_the_store_names_the_media_folder_without_importing_it() -> None:
    """``podarchive.store`` imports the media folder's module on the first use of one of its
    names, and gives the names themselves (#30)."""
    code = (
        "import sys, podarchive.store as store\n"
        "before = 'podarchive.store.media_files' in sys.modules\n"
        "from podarchive.store import MediaFolder, media_extension\n"
        "from podarchive.store.media_files import MediaFolder as real\n"
        "assert MediaFolder is real and callable(media_extension) and store.Fixity\n"
        "try:\n"
        "    store.no_such_name\n"
        "except AttributeError:\n"
        "    print('ok', before)\n"
    )
    done = _fresh_python(code)
    assert done.stdout.split() == ["ok", "False"], done.stderr


def test_the_console_script_freezes_what_its_command_imported() -> None:
    """``main`` imports the command with the collector paused, then freezes what exists
    (#30); an in-process look-up (CliRunner, the tests) pauses it only, freezing nothing."""
    code = (
        "import gc, sys\n"
        "from podarchive.cli import cli, main\n"
        "cli.commands['changes']\n"
        "looked_up = (gc.isenabled(), gc.get_freeze_count())\n"
        "sys.argv = ['podarchive', 'run', '--help']\n"
        "try:\n"
        "    main()\n"
        "except SystemExit:\n"
        "    pass\n"
        "print(looked_up, gc.isenabled(), 'podarchive.cli.run' in sys.modules,"
        " gc.get_freeze_count() > 10_000)\n"
    )
    done = _fresh_python(code)
    assert done.stdout.splitlines()[-1] == "(True, 0) True True True", done.stderr


def test_every_command_is_where_its_entry_says() -> None:
    assert sorted(cli.commands) == sorted(COMMAND_MODULES)
    for name, command in cli.commands.items():
        assert (command.name, COMMAND_MODULES[name][0]) == (name, command.callback.__module__)


def test_lazy_commands_is_a_mapping_of_commands() -> None:
    commands = LazyCommands({"run": ("podarchive.cli.run", "run")})
    extra = click.Command("extra")
    commands["extra"] = extra
    assert (list(commands), len(commands), "run" in commands) == (["run", "extra"], 2, True)
    assert commands["run"].name == "run"
    assert commands["extra"] is extra
    del commands["run"]
    assert list(commands) == ["extra"]
    with pytest.raises(KeyError):
        commands["run"]
    with pytest.raises(KeyError):
        del commands["nope"]
    wrong = LazyCommands({"run": ("podarchive.cli.run", "_finish")})
    with pytest.raises(TypeError, match="is not the command 'run'"):
        wrong["run"]
