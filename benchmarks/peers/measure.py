"""Run one command and measure its whole process tree: wall, CPU, peak RSS (stdlib only).

``python measure.py OUT.json LOG -- CMD...`` runs CMD (stdout and stderr to LOG) and writes
one JSON object to OUT.json. It is the parent of the measured process and nothing else, so
``vs_peers.py`` runs it once per measured command.

CPU: this process makes itself a *child subreaper* (``prctl(PR_SET_CHILD_SUBREAPER)``), so
a descendant orphaned by its parent's exit (multiprocessing's fork server, which the
archiver never waits for, and any worker it leaves) is re-parented here instead of to
init. After CMD exits, every remaining descendant is waited for. ``getrusage(
RUSAGE_CHILDREN)`` then holds the user+system CPU of every process of the tree: each one
was waited for by its parent (the fork server reaps its workers) or by us. Without the
subreaper the fork server's and the workers' CPU would be missing from it.

Cross-check: a thread samples ``/proc/<pid>/stat`` (utime + stime, the process's own) of
every descendant every ``INTERVAL`` seconds; the sum of each process's last sample is a
lower bound of the tree's CPU (it misses at most the last interval of each process), and
is reported beside the rusage figure as ``cpu_sampled``.

Memory: the same samples sum ``VmRSS`` over the tree (``rss_tree_peak_mb``). Shared pages,
such as what workers share with the fork server, count once per process, so this errs
high; ``pss_tree_peak_mb``, the largest sum of ``Pss`` at every fifth sample, shares them
out (and may miss a short peak). ``main_hwm_mb`` is the main process's own peak
(``ru_maxrss`` from ``wait4``: its ``VmHWM`` at exit). ``wall`` ends when CMD exits;
``wall_tree`` when the last descendant has.
"""

from __future__ import annotations

import ctypes
import json
import os
import resource
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

INTERVAL = 0.02  # seconds between samples of the tree
PR_SET_CHILD_SUBREAPER = 36
LEFTOVER_GRACE = 120.0  # seconds the tree may outlive CMD before it is killed
TICK = os.sysconf("SC_CLK_TCK")
PAGE_KB = os.sysconf("SC_PAGESIZE") // 1024
RESCAN = 5  # samples between two scans of /proc for new processes of the tree


@dataclass
class Samples:
    rss_peak_kb: int = 0
    processes_peak: int = 0
    count: int = 0
    cpu_ticks: dict[int, int] = field(default_factory=dict)  # pid → last utime + stime
    hwm_kb: dict[int, int] = field(default_factory=dict)  # pid → last VmHWM
    pss_peak_kb: int = 0  # largest sum of Pss over the tree, at the rescans


def become_subreaper() -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_CHILD_SUBREAPER) failed")


def parents() -> dict[int, int]:
    """pid → parent pid of every process (one read of /proc/<pid>/stat each)."""
    out: dict[int, int] = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                stat = Path(f"/proc/{name}/stat").read_bytes()
            except OSError:
                continue
            out[int(name)] = int(stat[stat.rindex(b")") + 2 :].split()[1])
    return out


def descendants(root: int) -> list[int]:
    children: dict[int, list[int]] = {}
    for pid, ppid in parents().items():
        children.setdefault(ppid, []).append(pid)
    found, todo = [], [root]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


def read_process(pid: int) -> tuple[int, int] | None:
    """(utime + stime ticks, resident kB) of ``pid``; None once it is gone."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_bytes()
        statm = Path(f"/proc/{pid}/statm").read_bytes()
    except OSError:
        return None
    fields = stat[stat.rindex(b")") + 2 :].split()
    ticks = int(fields[11]) + int(fields[12])  # utime, stime (fields 14, 15 of stat)
    return ticks, int(statm.split()[1]) * PAGE_KB


def read_kb(path: str, key: str) -> int:
    """The kB figure of ``key`` (``VmHWM:``, ``Pss:``) in a /proc file; 0 once it is gone."""
    try:
        for line in Path(path).read_text().splitlines():
            if line.startswith(key):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


def sample(samples: Samples, tree: list[int]) -> None:
    total, alive = 0, 0
    for pid in tree:
        figures = read_process(pid)
        if figures is None:
            continue
        samples.cpu_ticks[pid], rss = figures
        if rss:  # a zombie has no memory left
            total += rss
            alive += 1
    samples.count += 1
    samples.rss_peak_kb = max(samples.rss_peak_kb, total)
    samples.processes_peak = max(samples.processes_peak, alive)


def sampler(samples: Samples, stop: threading.Event) -> None:
    """Sample the tree every INTERVAL; look for new processes every RESCAN samples."""
    tree: list[int] = []
    while not stop.wait(INTERVAL):
        if samples.count % RESCAN == 0:
            tree = descendants(os.getpid())
            for pid in tree:
                hwm = read_kb(f"/proc/{pid}/status", "VmHWM:")
                samples.hwm_kb[pid] = max(samples.hwm_kb.get(pid, 0), hwm)
            pss = sum(read_kb(f"/proc/{pid}/smaps_rollup", "Pss:") for pid in tree)
            samples.pss_peak_kb = max(samples.pss_peak_kb, pss)
        sample(samples, tree)


def reap_rest(deadline: float) -> int:
    """Wait for every remaining descendant (killed after ``deadline``); how many there were."""
    reaped = 0
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return reaped
        if pid:
            reaped += 1
            continue
        if time.monotonic() > deadline:
            for stray in descendants(os.getpid()):
                os.kill(stray, 9)
        time.sleep(0.01)


def measure(command: list[str], log: Path) -> dict[str, object]:
    become_subreaper()
    samples, stop = Samples(), threading.Event()
    watcher = threading.Thread(target=sampler, args=(samples, stop), daemon=True)
    with log.open("wb") as out:
        start = time.perf_counter()
        proc = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT)
        watcher.start()
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
        proc.returncode = os.waitstatus_to_exitcode(status)
        leftovers = reap_rest(time.monotonic() + LEFTOVER_GRACE)
        wall_tree = time.perf_counter() - start
    stop.set()
    watcher.join()
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    me = resource.getrusage(resource.RUSAGE_SELF)
    return {
        "returncode": proc.returncode,
        "wall": wall,
        "wall_tree": wall_tree,
        "cpu": children.ru_utime + children.ru_stime,
        "cpu_main": usage.ru_utime + usage.ru_stime,
        "cpu_sampled": sum(samples.cpu_ticks.values()) / TICK,
        "rss_tree_peak_mb": samples.rss_peak_kb / 1024,
        "pss_tree_peak_mb": samples.pss_peak_kb / 1024,
        "main_hwm_mb": usage.ru_maxrss / 1024,
        "hwm_sum_mb": sum(samples.hwm_kb.values()) / 1024,
        "processes": len(samples.cpu_ticks),
        "processes_peak": samples.processes_peak,
        "orphans_reaped": leftovers,
        "samples": samples.count,
        "sampler_cpu": me.ru_utime + me.ru_stime,
        "hwm_by_process_mb": [round(kb / 1024, 1) for _, kb in sorted(samples.hwm_kb.items())],
    }


def main() -> None:
    out, log, dashes, *command = sys.argv[1:]
    if dashes != "--" or not command:
        sys.exit("usage: measure.py OUT.json LOG -- CMD...")
    Path(out).write_text(json.dumps(measure(command, Path(log))))


if __name__ == "__main__":
    main()
