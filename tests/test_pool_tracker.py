"""A run's worker pool starts no resource tracker, and leaves no semaphore behind (#30).

Checked in a fresh interpreter (another test in this process may have started a tracker):
the pool's processes are its workers only, its jobs run, and once it is shut down and
collected the semaphores' names are gone from ``/dev/shm``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = """
import gc, json, os, sys
from multiprocessing import resource_tracker
from podarchive.runtime.pool import SafePool, lean_spawn

pool = SafePool(2, mp_context=lean_spawn())
results = list(pool.map(abs, [-1, -2, -3]))
names = [q._semlock.name for q in (pool._result_queue._rlock, pool._call_queue._sem)]
children = []
for pid in os.listdir("/proc"):
    if pid.isdigit():
        try:
            stat = open(f"/proc/{pid}/stat").read()
            cmd = open(f"/proc/{pid}/cmdline").read().replace("\\0", " ")
        except OSError:
            continue
        if int(stat[stat.rindex(")") + 2:].split()[1]) == os.getpid():
            children.append(cmd)
pool.shutdown(wait=True)
del pool
gc.collect()
print(json.dumps({
    "results": results,
    "children": children,
    "tracker": resource_tracker._resource_tracker._pid,
    "names": names,
}))
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc and /dev/shm")
def test_the_pool_runs_without_a_resource_tracker(tmp_path: Path) -> None:
    src = str(Path(__file__).resolve().parents[1] / "src")
    env = os.environ | {"PYTHONPATH": src}
    out = subprocess.run(
        [sys.executable, "-c", SCRIPT], capture_output=True, text=True, env=env, timeout=120
    )
    assert out.returncode == 0, out.stderr
    assert out.stderr == ""  # no "leaked semaphore" warning
    seen = json.loads(out.stdout)
    assert seen["results"] == [1, 2, 3]
    assert seen["tracker"] is None
    assert len(seen["children"]) == 2
    assert all("spawn_main" in cmd for cmd in seen["children"])
    assert not any("resource_tracker" in cmd for cmd in seen["children"])
    for name in seen["names"]:
        assert not Path("/dev/shm", "sem." + name.lstrip("/")).exists()
