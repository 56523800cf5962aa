"""A run, daemon or worker that is killed takes its worker processes with it (#23, item 6).

Each test starts the real command against a loopback server: a big feed (over the CPU
lane's threshold with ``processes`` 2, so the parser workers start) and a feed that never
answers (so the command is mid-work when the signal comes). Then the signal, and every
process the command had started must be gone, and its stdout and stderr closed: a cron job
or a wrapper reading them waits for nothing. SIGTERM and SIGHUP end a run with one line.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import FAST_ENV
from loopback import LoopbackSite
from redis_server import RedisServer
from test_cpu import big_feed, needs_two_cores
from test_page_problems import Hanging, episodes_in, wait_for

ITEMS = 400  # about 1.4 MB of items: over the lane's 1 MB, parsed in worker processes
KEPT = "what was stored is kept; the next run does the rest"
PATIENCE = 20.0  # seconds the processes may take to go, on a loaded machine

pytestmark = [
    needs_two_cores,
    pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="no /proc"),
]


def proc_stats() -> dict[int, tuple[int, str, str]]:
    """Every process: pid → (parent pid, state, start time), from /proc/*/stat."""
    stats = {}
    for path in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = path.read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue  # gone meanwhile
        stats[int(path.parent.name)] = (int(fields[1]), fields[0], fields[19])
    return stats


def descendants(pid: int) -> dict[int, str]:
    """The processes ``pid`` started, and theirs: pid → start time (against pid reuse)."""
    stats = proc_stats()
    found: dict[int, str] = {}
    parents = [pid]
    while parents:
        parent = parents.pop()
        for child, (ppid, _, started) in stats.items():
            if ppid == parent and child not in found:
                found[child] = started
                parents.append(child)
    return found


def alive(processes: dict[int, str]) -> list[int]:
    """Those of ``processes`` still running (a zombie holds no files: it is gone)."""
    stats = proc_stats()
    return [
        pid
        for pid, started in processes.items()
        if pid in stats and stats[pid][2] == started and stats[pid][1] != "Z"
    ]


def has_workers(pid: int) -> bool:
    """``pid`` has started a parser worker: a process multiprocessing spawned (its command
    line ends in ``--multiprocessing-fork``), not only the resource tracker."""
    for child in descendants(pid):
        try:
            argv = Path(f"/proc/{child}/cmdline").read_bytes().split(b"\0")
        except OSError:
            continue  # gone meanwhile
        if b"--multiprocessing-fork" in argv:
            return True
    return False


@pytest.fixture
def hanging(site: LoopbackSite) -> Iterator[Hanging]:
    route = Hanging()
    site.handle("/slow.xml", route)
    yield route
    route.release.set()


@pytest.fixture
def big(site: LoopbackSite) -> str:
    site.serve("/big.xml", big_feed(ITEMS))
    return site.url("/big.xml")


class Commands:
    """The podarchive processes of one test; whatever is left of them (and of the processes
    they started) is killed at its end."""

    def __init__(self, cwd: Path) -> None:
        self.cwd = cwd
        self.started: list[subprocess.Popen[str]] = []
        self.children: dict[int, str] = {}

    def start(self, *args: str) -> subprocess.Popen[str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith("PODARCHIVE_")}
        env.update(FAST_ENV, PODARCHIVE_PROCESSES="2")
        process = subprocess.Popen(
            [sys.executable, "-m", "podarchive", *args], cwd=self.cwd, env=env, text=True,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL,
        )  # fmt: skip
        self.started.append(process)
        return process

    def kill_and_wait(self, process: subprocess.Popen[str], signum: int) -> tuple[str, str]:
        """Send ``signum``; wait (bounded) until the pipes of ``process`` reach EOF and
        every process it had started is gone. Its stdout and stderr."""
        children = descendants(process.pid)
        self.children.update(children)
        process.send_signal(signum)
        try:
            out, err = process.communicate(timeout=PATIENCE)
        except subprocess.TimeoutExpired:
            pytest.fail(f"stdout/stderr still open, held by {alive(children)} of {children}")
        wait_for(lambda: not alive(children), "the worker processes to go", PATIENCE)
        return out, err

    def close(self) -> None:
        for process in self.started:
            self.children.update(descendants(process.pid))
        for pid in alive(self.children):  # what main leaves behind: this test's processes
            os.kill(pid, signal.SIGKILL)
        for process in self.started:
            process.kill()
            process.wait()
            for stream in (process.stdout, process.stderr):
                assert stream is not None
                stream.close()


@pytest.fixture
def commands(tmp_path: Path) -> Iterator[Commands]:
    started = Commands(tmp_path)
    yield started
    started.close()


def mid_work(process: subprocess.Popen[str], db: Path, hanging: Hanging) -> None:
    """Wait until ``process`` has stored the big feed (its parser workers are up) and is
    fetching the slow one."""
    wait_for(hanging.asked.is_set, "the slow feed's request")
    wait_for(lambda: episodes_in(db) == ITEMS, "the big feed stored")
    wait_for(lambda: has_workers(process.pid), "the parser workers")


def hanging_url(big: str) -> str:
    return big.replace("/big.xml", "/slow.xml")


def write_schedules(directory: Path, big: str) -> None:
    directory.mkdir()
    (directory / "feeds.toml").write_text(
        "".join(
            f'[[feed]]\nurl = "{url}"\nname = "{name}"\nevery = "1h"\npages = false\n\n'
            for url, name in ((big, "big"), (hanging_url(big), "slow"))
        )
    )


@pytest.mark.parametrize(
    ("signum", "code", "name"),
    [(signal.SIGTERM, 143, "terminated (SIGTERM)"), (signal.SIGHUP, 129, "hung up (SIGHUP)")],
)
def test_sigterm_or_sighup_ends_a_run_with_one_line_and_its_workers_go(
    tmp_path: Path,
    commands: Commands,
    big: str,
    hanging: Hanging,
    signum: int,
    code: int,
    name: str,
) -> None:
    process = commands.start("run", big, hanging_url(big), "--no-pages")
    mid_work(process, tmp_path / "archive.db", hanging)
    out, err = commands.kill_and_wait(process, signum)
    assert (process.returncode, out, err) == (code, "", f"podarchive: {name}; {KEPT}\n")
    assert episodes_in(tmp_path / "archive.db") == ITEMS


def test_a_sigkilled_run_takes_its_workers_with_it(
    tmp_path: Path, commands: Commands, big: str, hanging: Hanging
) -> None:
    process = commands.start("run", big, hanging_url(big), "--no-pages")
    mid_work(process, tmp_path / "archive.db", hanging)
    commands.kill_and_wait(process, signal.SIGKILL)
    assert process.returncode == -signal.SIGKILL
    assert episodes_in(tmp_path / "archive.db") == ITEMS


@pytest.mark.parametrize(("signum", "code"), [(signal.SIGTERM, 0), (signal.SIGKILL, -9)])
def test_a_stopped_or_killed_daemon_takes_its_workers_with_it(
    tmp_path: Path, commands: Commands, big: str, hanging: Hanging, signum: int, code: int
) -> None:
    write_schedules(tmp_path / "schedules", big)
    process = commands.start("daemon", "--tick", "0.2")
    mid_work(process, tmp_path / "archive.db", hanging)
    commands.kill_and_wait(process, signum)
    assert process.returncode == code


@pytest.mark.parametrize(("signum", "code"), [(signal.SIGTERM, 0), (signal.SIGKILL, -9)])
def test_a_stopped_or_killed_cluster_worker_takes_its_workers_with_it(
    tmp_path: Path, commands: Commands, big: str, hanging: Hanging, signum: int, code: int
) -> None:
    write_schedules(tmp_path / "schedules", big)
    with RedisServer(tmp_path / "redis") as redis:
        broker = ("--broker", redis.url)
        scheduler = commands.start("scheduler", *broker, "--shards", "1", "--tick", "0.2")
        worker = commands.start("worker", *broker, "--shard", "0")
        mid_work(worker, tmp_path / "shards" / "shard-0-of-1.db", hanging)
        commands.kill_and_wait(worker, signum)
        commands.kill_and_wait(scheduler, signal.SIGTERM)
    assert worker.returncode == code
