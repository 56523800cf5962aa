"""The only rich user: progress of a backfill or a run, as bars on a terminal or log lines off one.

:func:`make_progress` picks :class:`BarProgress` (a rich bar per phase with counts, rate and
ETA) when the stream is a terminal, else :class:`LineProgress` (a line when a phase starts
and one when it ends: pipes, cron and tests).
"""

from __future__ import annotations

import time
from typing import IO

from rich.console import Console
from rich.markup import escape
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    ProgressColumn,
    SpinnerColumn,
    Task,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.progress import Progress as RichProgress
from rich.text import Text


def _bars(stream: IO[str], *columns: ProgressColumn) -> RichProgress:
    """A spinner, the phase's name, a bar and "done/total", then ``columns``, on ``stream``."""
    return RichProgress(
        SpinnerColumn(),
        TextColumn("[progress.description]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        *columns,
        console=Console(file=stream),
        transient=False,
    )


class _RateColumn(ProgressColumn):
    def render(self, task: Task) -> Text:
        speed = task.finished_speed or task.speed
        return Text(f"{speed:.1f}/s" if speed else "", style="progress.data.speed")


class BarProgress:
    """One rich progress bar per phase, on ``stream`` (a terminal)."""

    def __init__(self, stream: IO[str]) -> None:
        self._bars = _bars(
            stream, _RateColumn(), TimeElapsedColumn(), TextColumn("ETA"), TimeRemainingColumn()
        )
        self._task: TaskID | None = None

    def __enter__(self) -> BarProgress:
        self._bars.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._bars.stop()

    def start(self, label: str, phase: str, total: int | None) -> None:
        # a feed's name is text, not rich markup ("[/b]" in it would raise MarkupError)
        self._task = self._bars.add_task(escape(f"{label}: {phase}"), total=total)

    def advance(self, count: int = 1) -> None:
        if self._task is not None:
            self._bars.advance(self._task, count)

    def done(self) -> None:
        if self._task is not None:
            task = next(t for t in self._bars.tasks if t.id == self._task)
            self._bars.update(self._task, total=task.completed)
        self._task = None


class LineProgress:
    """A line on ``stream`` when a phase starts and when it ends."""

    def __init__(self, stream: IO[str]) -> None:
        self._stream = stream
        self._phase = ""
        self._count = 0
        self._started = 0.0

    def __enter__(self) -> LineProgress:
        return self

    def __exit__(self, *exc: object) -> None:
        pass

    def start(self, label: str, phase: str, total: int | None) -> None:
        self._phase, self._count, self._started = f"{label}: {phase}", 0, time.monotonic()
        if total is None or total > 1:
            todo = "" if total is None else f" ({total} to fetch)"
            print(f"podarchive: {self._phase}{todo}", file=self._stream, flush=True)

    def advance(self, count: int = 1) -> None:
        self._count += count

    def done(self) -> None:
        if self._phase.endswith(": feed"):
            return
        seconds = time.monotonic() - self._started
        rate = f", {self._count / seconds:.1f}/s" if seconds > 0 and self._count else ""
        print(
            f"podarchive: {self._phase}: {self._count} done in {seconds:.1f} s{rate}",
            file=self._stream,
            flush=True,
        )


def make_progress(stream: IO[str]) -> BarProgress | LineProgress:
    return BarProgress(stream) if stream.isatty() else LineProgress(stream)


def _size(count: float) -> str:
    for unit in ("B", "kB", "MB", "GB"):
        if count < 1000 or unit == "GB":
            return f"{count:.0f} {unit}" if unit == "B" else f"{count:.1f} {unit}"
        count /= 1000
    return f"{count:.1f} GB"  # pragma: no cover


class RunProgress:
    """A run's progress on a terminal (issue #28), with backfill's bar: feeds done of those
    to poll, then how many pages and files were fetched and how many bytes came in.

    :meth:`begin` with the feeds to poll, :meth:`stored` once per feed, page or file
    stored (``kind`` ``feed`` or another), with the bytes its requests read."""

    def __init__(self, stream: IO[str]) -> None:
        self._bars = _bars(
            stream,
            TextColumn("feeds · {task.fields[files]} pages and files · {task.fields[size]}"),
            TimeElapsedColumn(),
        )
        self._task: TaskID | None = None
        self.files = 0
        self.bytes = 0

    def __enter__(self) -> RunProgress:
        self._bars.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._bars.stop()

    def begin(self, feeds: int) -> None:
        self._task = self._bars.add_task("podarchive run", total=feeds, files=0, size=_size(0))

    def stored(self, kind: str, nbytes: int) -> None:
        if self._task is None:
            return
        self.bytes += nbytes
        if kind != "feed":
            self.files += 1
        self._bars.update(
            self._task,
            advance=1 if kind == "feed" else 0,
            files=self.files,
            size=_size(self.bytes),
        )


def make_run_progress(stream: IO[str], *, quiet: bool = False) -> RunProgress | None:
    """A :class:`RunProgress` on ``stream`` when it is a terminal and not ``quiet``; None
    (nothing shown) otherwise: cron, pipes, ``-q``."""
    return None if quiet or not stream.isatty() else RunProgress(stream)
