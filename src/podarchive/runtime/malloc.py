"""The C allocator's one setting that matters to a run's memory (glibc only; elsewhere none).

A run holds feed bodies of a few megabytes, a handful at a time, in up to eight threads.
glibc serves such blocks by ``mmap`` and gives them back on free, but after the first free
it raises its threshold to the block's size (up to 32 MiB), so later bodies come from
per-thread heaps that keep their high-water mark: measured 10–16 MB more resident per
process in a 20-feed first ingest, for nothing (#15). A fixed threshold keeps big blocks
mapped and returned; small objects are unaffected.

Two more (#30): at most :data:`ARENAS` malloc arenas, not eight per core (a run's fetch
threads each got one, each keeping its own freed blocks), and :func:`give_back`, which a
worker process calls after each job to return the pages its parse freed, so that two
workers' high-water marks do not add up in the run's memory.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import sys

M_MMAP_THRESHOLD = -3  # glibc's mallopt parameter numbers
M_ARENA_MAX = -8
THRESHOLD = 256 * 1024  # bytes: blocks this big and bigger are mapped, and unmapped on free
ARENAS = 2  # malloc arenas of a process at most (glibc's default: 8 per core)
_libc: ctypes.CDLL | None = None


def _glibc() -> ctypes.CDLL | None:
    """The C library, where it has ``mallopt`` and ``malloc_trim`` (glibc), else None."""
    global _libc
    if _libc is None and sys.platform.startswith("linux"):
        try:
            libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
            libc.mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
            libc.mallopt.restype = ctypes.c_int
            libc.malloc_trim.argtypes = [ctypes.c_size_t]
            libc.malloc_trim.restype = ctypes.c_int
        except (OSError, AttributeError):  # musl and others: no mallopt
            return None
        _libc = libc
    return _libc


def return_big_blocks() -> bool:
    """Ask glibc to map blocks of :data:`THRESHOLD` and more, and to keep :data:`ARENAS`
    arenas at most; False where there is no glibc."""
    libc = _glibc()
    if libc is None:
        return False
    libc.mallopt(M_ARENA_MAX, ARENAS)
    return bool(libc.mallopt(M_MMAP_THRESHOLD, THRESHOLD))


def give_back() -> bool:
    """Return the free pages at the top of the heap and inside it to the system (glibc's
    ``malloc_trim``); whether some were. False where there is no glibc."""
    libc = _glibc()
    return bool(libc.malloc_trim(0)) if libc is not None else False
