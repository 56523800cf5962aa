"""The C allocator's one setting that matters to a run's memory (glibc only; elsewhere none).

A run holds feed bodies of a few megabytes, a handful at a time, in up to eight threads.
glibc serves such blocks by ``mmap`` and gives them back on free, but after the first free
it raises its threshold to the block's size (up to 32 MiB), so later bodies come from
per-thread heaps that keep their high-water mark: measured 10–16 MB more resident per
process in a 20-feed first ingest, for nothing (#15). A fixed threshold keeps big blocks
mapped and returned; small objects are unaffected.
"""

from __future__ import annotations

import ctypes
import sys

M_MMAP_THRESHOLD = -3  # glibc's mallopt parameter number
THRESHOLD = 256 * 1024  # bytes: blocks this big and bigger are mapped, and unmapped on free


def return_big_blocks() -> bool:
    """Ask glibc to map blocks of :data:`THRESHOLD` and more; False where there is no glibc."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        # the process's own symbols, libc's among them: ``ctypes.util.find_library`` would
        # run ``ldconfig -p`` in a child process at every start (~40 ms of CPU, #30)
        libc = ctypes.CDLL(None)
        mallopt = libc.mallopt
    except (OSError, AttributeError):  # musl and others: no mallopt
        return False
    mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
    mallopt.restype = ctypes.c_int
    return bool(mallopt(M_MMAP_THRESHOLD, THRESHOLD))
