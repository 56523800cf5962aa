"""What every command shares: the one-line failures and their exit codes, logging, options.

Exit codes: 0 every feed succeeded; 1 a feed (or the archive) failed, one line per
failure on stderr; 2 a usage or configuration error; 130 Ctrl-C; a run stopped by SIGTERM
143, by SIGHUP 129 (128 + the signal's number).
"""

from __future__ import annotations

import errno
import logging
import math
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import wraps
from pathlib import Path
from typing import Any, TypeVar

import click
from click.types import FloatParamType

from podarchive.core.errors import (
    ConfigError,
    PodarchiveError,
    escape_controls,
    shorten,
)
from podarchive.core.settings import Settings, settings_from_env
from podarchive.runtime.lock import FileLock
from podarchive.store import check_file
from podarchive.tasks.status import json_text

F = TypeVar("F", bound=Callable[..., Any])
DEFAULT_DB = Path("archive.db")
DEFAULT_SCHEDULES = Path("schedules")


class UsageFailure(click.ClickException):
    """A configuration problem: one line on stderr, exit 2."""

    exit_code = 2

    def show(self, file: Any = None) -> None:
        click.echo(f"podarchive: error: {escape_controls(self.message)}", err=True)


class Number(FloatParamType):
    """An option's number from ``low`` to ``high`` (``what`` it is: seconds by default). Out
    of range (NaN and infinity too, which click's FloatRange lets through: ``--tick inf``
    ended the daemon in a traceback, #23) is one line and exit 2."""

    name = "number"

    def __init__(self, low: float, high: float, what: str = "a number of seconds") -> None:
        self.low, self.high, self.what = low, high, what

    def convert(self, value: Any, param: click.Parameter | None, ctx: Any) -> float:
        try:
            number = float(value)
        except (TypeError, ValueError):
            number = math.nan
        if not self.low <= number <= self.high:
            option = param.opts[0] if param is not None and param.opts else "value"
            raise UsageFailure(
                f"{option}: {shorten(str(value), 40)!r} is not {self.what} "
                f"from {_number(self.low)} to {_number(self.high)}"
            )
        return number


def _number(value: float) -> str:
    return str(int(value)) if value == int(value) else f"{value:g}"


MAX_TICK = 3600.0  # the longest --tick: the heartbeat and the schedule files' check


class CommandFailure(click.ClickException):
    """The command ran but failed: one line on stderr, exit 1."""

    exit_code = 1

    def show(self, file: Any = None) -> None:
        click.echo(f"podarchive: {escape_controls(self.message)}", err=True)


class Interrupted(CommandFailure):
    """Ctrl-C: one line on stderr (never click's "Aborted!"), exit 130."""

    exit_code = 130


INTERRUPTED = "interrupted"
#: What stopped a run, as its one line says it (exit 128 + the signal's number).
STOPPED_BY = {
    signal.SIGINT: INTERRUPTED,
    signal.SIGTERM: "terminated (SIGTERM)",
    signal.SIGHUP: "hung up (SIGHUP)",
}


class OneLineFormatter(logging.Formatter):
    """Each message on one line: control characters in it escaped, so that a name or URL
    from a feed can start no log line of its own (a traceback after it is kept as it is)."""

    def formatMessage(self, record: logging.LogRecord) -> str:
        record.message = escape_controls(record.message)
        return super().formatMessage(record)


def _setup_logging(verbose: int) -> None:
    level = logging.WARNING if verbose == 0 else logging.INFO if verbose == 1 else logging.DEBUG
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(OneLineFormatter("%(asctime)s %(levelname)s %(message)s"))
    root = logging.getLogger("podarchive")
    root.handlers[:] = [handler]
    root.setLevel(level)
    root.propagate = False


def run_settings(allow_private_hosts: bool) -> Settings:
    """Settings from the environment, with ``--allow-private-hosts`` applied."""
    settings = settings_from_env()
    return settings.replace(allow_private_hosts=True) if allow_private_hosts else settings


def verbosity(command: F) -> F:
    """``-v`` on every command (repeat for more)."""

    @click.option("-v", "--verbose", count=True, help="Log each feed (-vv for debugging).")
    @wraps(command)
    def wrapper(*args: Any, verbose: int, **kwargs: Any) -> Any:
        _setup_logging(
            verbose + (click.get_current_context().find_root().params.get("verbose") or 0)
        )
        return command(*args, **kwargs)

    return wrapper  # type: ignore[return-value]


def translate_errors(command: F) -> F:
    """Library errors become one-line messages with the right exit code, never tracebacks:
    a file or directory that cannot be written is exit 1, Ctrl-C exit 130."""

    @wraps(command)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return command(*args, **kwargs)
        except ConfigError as e:
            raise UsageFailure(str(e)) from e
        except PodarchiveError as e:
            raise CommandFailure(str(e)) from e
        except KeyboardInterrupt as e:  # a second Ctrl-C, or one before the work started
            raise Interrupted(INTERRUPTED) from e
        except OSError as e:
            if e.errno == errno.EPIPE:
                raise  # stdout closed early (| head): click's own business
            raise CommandFailure(_os_error(e)) from e

    return wrapper  # type: ignore[return-value]


def _os_error(e: OSError) -> str:
    """``archive/archive.db.checked: Permission denied``: the file and the reason."""
    reason = e.strerror or str(e) or type(e).__name__
    return f"{e.filename}: {reason}" if e.filename else reason


@contextmanager
def _stop_on_signals(stop: threading.Event) -> Iterator[list[signal.Signals]]:
    """The first Ctrl-C, SIGTERM or SIGHUP sets ``stop`` (the work in flight is given up,
    what was stored is kept) and is put in the list; a second of the same ends the process
    at once (Ctrl-C: KeyboardInterrupt; the others: their default action)."""
    seen: list[signal.Signals] = []

    def on_signal(number: int, frame: Any) -> None:
        if not seen:
            seen.append(signal.Signals(number))
        stop.set()
        again = signal.default_int_handler if number == signal.SIGINT else signal.SIG_DFL
        signal.signal(number, again)

    previous = {number: signal.signal(number, on_signal) for number in STOPPED_BY}
    try:
        yield seen
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)


def archive_option(help: str) -> Callable[[F], F]:
    """``--db``, with what the command does with the file."""
    return click.option(
        "--db",
        "db_path",
        type=click.Path(dir_okay=False, path_type=Path),
        default=DEFAULT_DB,
        show_default=True,
        help=help,
    )


db_option = archive_option("The archive file (created if there is none yet).")
private_hosts_option = click.option(
    "--allow-private-hosts",
    is_flag=True,
    help="Let URLs taken from feeds (episode pages, discovered feeds, site pages) reach "
    "loopback and private addresses.",
)
allow_fast_option = click.option(
    "--allow-fast",
    is_flag=True,
    help="Accept schedules polling more often than once a minute (for tests).",
)


def tick_option(default: float, help: str) -> Callable[[F], F]:
    """``--tick``: how often a long-running command looks around (``help`` says for what)."""
    return click.option(
        "--tick",
        type=Number(0.05, MAX_TICK),
        default=default,
        show_default=True,
        metavar="SECONDS",
        help=help,
    )


schedules_option = click.option(
    "--schedules",
    "schedules_dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=DEFAULT_SCHEDULES,
    show_default=True,
    help="Directory of schedule files (*.toml).",
)


DAEMON_LOG_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"


def _daemon_logging() -> None:
    """INFO by default (one line per feed update), DEBUG with -v; no colours, one line each."""
    root = logging.getLogger("podarchive")
    extra = root.level <= logging.DEBUG  # -vv: APScheduler's own INFO lines too
    root.setLevel(logging.DEBUG if root.level <= logging.INFO else logging.INFO)
    formatter = OneLineFormatter(DAEMON_LOG_FORMAT)
    for handler in root.handlers:
        handler.setFormatter(formatter)
    aps = logging.getLogger("apscheduler")
    aps.handlers[:] = list(root.handlers)
    aps.setLevel(logging.INFO if extra else logging.WARNING)
    aps.propagate = False


def shards_layout_options(help: str) -> Callable[[F], F]:
    """``--shards-dir DIR`` (a cluster's shard archives, instead of ``--db``; ``help`` says
    what the command does with them) and ``--shards N`` (which layout, when DIR holds
    several): ``status`` and ``serve``."""

    def decorate(command: F) -> F:
        command = click.option(
            "--shards",
            type=click.IntRange(1, 4096),
            metavar="N",
            help="With --shards-dir holding several layouts: the one of N shards.",
        )(command)
        return click.option(
            "--shards-dir", type=click.Path(file_okay=False, path_type=Path), help=help
        )(command)

    return decorate


def show_status(
    doc: dict[str, Any], as_json: bool, table: Callable[[], str], *, failing: bool
) -> None:
    """``status``'s report: ``doc`` as JSON, or ``table()``; exit 1 when ``failing``."""
    if as_json:
        click.echo(json_text(doc))
    else:
        click.echo(table(), nl=False)
    if failing:
        sys.exit(1)


def _locked(db_path: Path) -> FileLock:
    """The archive's lock for a command that must not wait: held by another run, the command
    fails in one line. A foreign database gets no lock file beside it."""
    from podarchive.core.errors import ArchiveLocked
    from podarchive.runtime.lock import archive_lock

    check_file(db_path)
    try:
        return archive_lock(db_path).acquire()
    except ArchiveLocked as e:
        raise CommandFailure(str(e)) from e
