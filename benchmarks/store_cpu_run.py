"""(#30) ``podarchive <args>`` in this process, the archive's own CPU on the run's thread timed.

``python benchmarks/store_cpu_run.py OUT.json run --all --schedules DIR --db DB`` runs the
CLI as ``python -m podarchive`` would (same entry point, same settings from the environment)
and writes to OUT.json: ``store_cpu`` (the thread CPU of every public method of
``Archive`` called on the main thread, the run's one writer; nested calls counted once; a
big run's dropping and rebuilding of the links' indexes included), ``store_calls_elsewhere``
(calls on other threads, not timed: 0 is expected), ``deferred`` (whether the run deferred
the links' indexes), ``cpu`` (this process's, all threads; its parser processes,
which it never waits for, are not counted) and the exit code.
``BENCH_NO_DEFER=1`` makes no run big (the reference: the indexes kept in place).
"""

from __future__ import annotations

import inspect
import json
import os
import resource
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import wraps
from pathlib import Path
from typing import Any

from podarchive.cli import main as podarchive_main
from podarchive.store import Archive
from podarchive.update import big_ingest

state = {"cpu": 0.0, "depth": 0, "elsewhere": 0, "deferred": False}


@contextmanager
def timing() -> Iterator[None]:
    """Count the block's thread CPU unless an outer timed call already does."""
    if state["depth"]:
        yield
        return
    state["depth"] = 1
    start = time.thread_time()
    try:
        yield
    finally:
        state["cpu"] += time.thread_time() - start
        state["depth"] = 0


def timed(method: Callable[..., Any]) -> Callable[..., Any]:
    @wraps(method)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        if threading.current_thread() is not threading.main_thread():
            state["elsewhere"] += 1
            return method(*args, **kwargs)
        with timing():
            return method(*args, **kwargs)

    return wrapper


def timed_deferral(method: Callable[..., Any]) -> Callable[..., Any]:
    """``deferred_link_indexes``: its entering (the drop) and leaving (the rebuild) timed."""

    @contextmanager
    def wrapper(self: Archive) -> Iterator[None]:
        inner = method(self)
        with timing():
            inner.__enter__()
        state["deferred"] = True
        try:
            yield
        except BaseException:
            with timing():
                if not inner.__exit__(*sys.exc_info()):
                    raise
        else:
            with timing():
                inner.__exit__(None, None, None)

    return wrapper


def instrument() -> None:
    for name, member in list(vars(Archive).items()):
        if name.startswith("_") or not inspect.isfunction(member):
            continue
        wrap = timed_deferral if name == "deferred_link_indexes" else timed
        setattr(Archive, name, wrap(member))
    if os.environ.get("BENCH_NO_DEFER") == "1":
        big_ingest.is_big = lambda new_feeds, archived_feeds: False  # type: ignore[assignment]


def main() -> None:
    out = Path(sys.argv[1])
    sys.argv = ["podarchive", *sys.argv[2:]]
    instrument()
    code: int | str | None = 0
    try:
        podarchive_main()
    except SystemExit as e:
        code = e.code
    usage = resource.getrusage(resource.RUSAGE_SELF)  # all threads; not the parser processes
    figures = {
        "returncode": code or 0,
        "store_cpu": state["cpu"],
        "store_calls_elsewhere": state["elsewhere"],
        "deferred": state["deferred"],
        "cpu": usage.ru_utime + usage.ru_stime,
    }
    out.write_text(json.dumps(figures))


if __name__ == "__main__":
    main()
