"""(#15) Where a first ingest's CPU goes: ``update_feeds`` of N feeds x E episodes under cProfile.

Every feed is a ``feedgen.py`` feed (~5 KB HTML notes with 32 links an episode, pages off)
served from the loopback server; the run uses ``bench_settings(processes=1)``, so the pure
jobs run inline and every thread of this process is profiled (``threading.setprofile``
starts one ``cProfile.Profile`` per thread; the timer is ``time.thread_time_ns``, each
thread's own CPU, so time a thread waits for the GIL is not counted). Run:
``python benchmarks/profile_ingest.py [--feeds 20] [--episodes 300] [--top 25]``.

How the CPU is split without double counting: each function's *own* time (pstats
``tottime``, all threads merged) goes to exactly one stage, by the file the function lives
in (``RULES``: the first pattern that matches ``path:function`` wins). Functions whose file says
nothing about the stage (builtins such as ``lxml``'s ``feed`` or ``str.join``, bs4's
``element.py``, ``urllib.parse``, ``re``, ``json``) are *shared*: their own time is split
among their callers in proportion to the own time pstats records under each caller, recursively (a
shared caller passes it on to its own callers), so ``lxml``'s parsing counts for the bs4
tree build when bs4 calls it and for the feed scan when podcast_ns does. A few builtins are
named by what they are (``zlib.*``: compression, ``hashlib``: hashing, ``sqlite3``: sqlite).
FTS runs inside SQLite's statements (triggers), out of cProfile's sight: it is estimated
afterwards by inserting the archive's indexed columns into a fresh FTS5 table of the same
definition, timed without the profiler, and shown as a part of the sqlite stage.

The same ingest runs once more first without cProfile (a fresh archive): its CPU is the
real total, and each stage's share of the profiled time, applied to it, estimates its real
milliseconds per episode.
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import re
import sys
import tempfile
import threading
import time
from collections import defaultdict
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from common import bench_settings, fresh_archive, machine, schedules, show
from feedgen import FeedSpec, feed
from server import ServerProcess

from podarchive.update.run import update_feeds

# A pstats function key: (file, line, name).
Func = tuple[str, int, str]

#: (stage, regular expression on ``file:function``). First match wins; unmatched: shared.
RULES: list[tuple[str, str]] = [
    ("feedparser", r"/feedparser/|/sgmllib|/xml/sax/|/xml/dom/"),
    ("bs4 tree build", r"/podarchive/read/extract/soup\.py:(parse|start|end)$"),  # lean builder
    ("bs4 tree build", r"/bs4/__init__\.py|/bs4/builder/|/bs4/dammit\.py"),
    ("own walk (extract)", r"/podarchive/read/extract/"),
    ("URL work", r"/podarchive/core/urls\.py"),
    ("feed scan (lxml)", r"/podarchive/(podcast_ns|item_split)\.py"),
    ("parse (own)", r"/podarchive/(parse|feed_encoding|chapters)\.py"),
    ("row derivation", r"/podarchive/(rows|identity|reading|history)\.py"),
    ("sqlite (store)", r"/sqlite_utils/|/podarchive/store/|/sqlite3/"),
    ("fetch (http)", r"/httpx/|/httpcore/|/h11/|/podarchive/(fetch|netguard|fetch_for)\.py"),
    ("fetch (http)", r"/socket\.py|/ssl\.py|/selectors\.py|/http/|/email/|/idna/|/anyio/"),
]
#: Builtins known by name (stage, expression on the function's name).
NAMED: list[tuple[str, str]] = [
    ("compression", r"zlib\."),
    ("hashing", r"_hashlib|hashlib|openssl_"),
    ("sqlite (store)", r"sqlite3\."),
    ("fetch (http)", r"_socket\.|_ssl\.|select\.|<method '(recv|send|recv_into|sendall)'"),
]
#: Files whose functions are shared among their callers (library helpers of any stage).
SHARED = r"/bs4/element\.py|/bs4/filter\.py|/bs4/formatter\.py|/urllib/|/re/|/json/|/html/"
SHARED += r"|/encodings/|/codecs\.py|/functools\.py|/dataclasses\.py|/copy\.py|/typing\.py"
SHARED += r"|/abc\.py|/enum\.py|/datetime\.py|/_strptime\.py|/calendar\.py|/string\.py"
STAGES = [
    "feedparser",
    "feed scan (lxml)",
    "parse (own)",
    "bs4 tree build",
    "own walk (extract)",
    "URL work",
    "row derivation",
    "sqlite (store)",
    "compression",
    "hashing",
    "fetch (http)",
    "other",
]


def own_stage(func: Func) -> str | None:
    """The stage a function's own time belongs to, or None if it is shared by its callers."""
    path, _, name = func
    if path == "~":  # a builtin: by its name, else its callers'
        for stage, pattern in NAMED:
            if re.search(pattern, name):
                return stage
        return None
    path = path.replace("\\", "/")
    for stage, pattern in RULES:
        if re.search(pattern, f"{path}:{name}"):
            return stage
    if re.search(SHARED, path):
        return None
    return "other"


def split_by_stage(stats: dict[Func, Any]) -> dict[str, float]:
    """Seconds of own time per stage; a shared function's go to its callers' stages."""
    memo: dict[Func, dict[str, float]] = {}

    def shares(func: Func, seen: frozenset[Func]) -> dict[str, float]:
        """Fractions of ``func``'s own time per stage (they sum to 1)."""
        if func in memo:
            return memo[func]
        stage = own_stage(func)
        if stage is not None:
            result = {stage: 1.0}
        else:
            callers = stats[func][4] if func in stats else {}
            # pstats keeps, per caller, this function's own time under that caller
            weights = {c: v[2] for c, v in callers.items() if c not in seen}
            total = sum(weights.values())
            if total <= 0:  # too short to measure: by calls instead
                weights = {c: float(v[1]) for c, v in callers.items() if c not in seen}
                total = sum(weights.values())
            if total <= 0:
                result = {"other": 1.0}
            else:
                mixed: dict[str, float] = defaultdict(float)
                for caller, weight in weights.items():
                    for s, part in shares(caller, seen | {func}).items():
                        mixed[s] += part * weight / total
                result = dict(mixed)
        if not seen:  # only memoise answers that did not depend on the path taken
            memo[func] = result
        return result

    out: dict[str, float] = defaultdict(float)
    for func, (_, _, tottime, _, _) in stats.items():
        for stage, part in shares(func, frozenset()).items():
            out[stage] += tottime * part
    return dict(out)


class ThreadProfiles:
    """One cProfile per thread: this one, and every thread started while active."""

    def __init__(self) -> None:
        self.profiles: list[cProfile.Profile] = []
        self._lock = threading.Lock()

    def _new(self) -> cProfile.Profile:
        profile = cProfile.Profile(time.thread_time_ns, 1e-9)
        with self._lock:
            self.profiles.append(profile)
        return profile

    def _start_in_thread(self, *_: object) -> None:
        sys.setprofile(None)  # this thread's hook; threads started later still get theirs
        self._new().enable()

    def __enter__(self) -> ThreadProfiles:
        threading.setprofile(self._start_in_thread)
        self._main = self._new()
        self._main.enable()
        return self

    def __exit__(self, *exc: object) -> None:
        self._main.disable()
        threading.setprofile(None)  # type: ignore[arg-type]

    def stats(self) -> dict[Func, Any]:
        merged: pstats.Stats | None = None
        for profile in self.profiles:
            profile.create_stats()
            if not profile.stats:  # type: ignore[attr-defined]
                continue
            if merged is None:
                merged = pstats.Stats(profile)
            else:
                merged.add(profile)
        return merged.stats if merged is not None else {}  # type: ignore[attr-defined]


def forget_derived() -> None:
    """Empty the caches of derived notes and URLs (memoised functions of podarchive's)."""
    import podarchive.core.urls
    import podarchive.read.extract.text

    for module in (podarchive.read.extract.text, podarchive.core.urls):
        for value in vars(module).values():
            if callable(getattr(value, "cache_clear", None)):
                value.cache_clear()


def fts_estimate(path: Path) -> float:
    """Seconds to index the archive's episodes in a fresh FTS5 table like the archive's."""
    import sqlite3

    db = sqlite3.connect(path)
    try:
        rows = db.execute(
            "SELECT rowid, title, summary, notes_text, page_notes_text FROM episodes"
        ).fetchall()
        db.execute(
            "CREATE VIRTUAL TABLE temp.fts_probe USING fts5"
            "(title, summary, notes_text, page_notes_text, tokenize='porter')"
        )
        start = time.thread_time()
        with db:
            db.executemany(
                "INSERT INTO temp.fts_probe (rowid, title, summary, notes_text, page_notes_text)"
                " VALUES (?, ?, ?, ?, ?)",
                rows,
            )
        return time.thread_time() - start
    finally:
        db.close()


def top_functions(stats: dict[Func, Any], count: int) -> Iterable[tuple[str, ...]]:
    ranked = sorted(stats.items(), key=lambda kv: kv[1][2], reverse=True)[:count]
    for (path, line, name), (_, calls, tottime, _, _) in ranked:
        short = path if path == "~" else "/".join(Path(path).parts[-2:]) + f":{line}"
        stage = own_stage((path, line, name)) or "shared"
        yield (f"{tottime:.2f}", f"{calls:,}", stage, f"{short} {name}"[:100])


def body(name: str, episodes: int, distinct: bool) -> bytes:
    """A feedgen feed; ``distinct``: no episode's notes equal another feed's."""
    data = feed(FeedSpec(name, episodes))
    return data.replace(b"Lorem ipsum", f"Lorem {name}".encode()) if distinct else data


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--smoke", action="store_true", help="tiny sizes, a few seconds")
    parser.add_argument("--feeds", type=int, default=20)
    parser.add_argument("--episodes", type=int, default=300)
    parser.add_argument("--top", type=int, default=25, help="functions by own time to list")
    parser.add_argument(
        "--distinct-notes",
        action="store_true",
        help="make every feed's notes its own (feedgen's depend on the episode number only)",
    )
    args = parser.parse_args()
    feeds, episodes = (2, 30) if args.smoke else (args.feeds, args.episodes)
    print(machine())
    same = "each feed's own" if args.distinct_notes else "episode i's the same in every feed"
    print(f"first ingest of {feeds} feeds x {episodes} episodes, pages off, processes=1")
    print(f"notes: {same}\n")
    with ServerProcess(lifetime=1800) as srv, tempfile.TemporaryDirectory() as tmp:
        names = [f"p{k:03d}" for k in range(feeds)]
        srv.set({f"/{n}": body(n, episodes, args.distinct_notes) for n in names})
        urls = [srv.url(f"/{n}") for n in names]
        settings = bench_settings(processes=1)
        plain = fresh_archive(Path(tmp), "plain.db")  # the same run, not profiled, first
        cpu = time.process_time()
        update_feeds(plain, schedules(urls), settings=settings)
        plain_cpu = time.process_time() - cpu
        plain.close()
        forget_derived()  # the same notes again: the profiled run must derive them afresh
        archive = fresh_archive(Path(tmp))
        cpu = time.process_time()
        wall = time.perf_counter()
        with ThreadProfiles() as profiles:
            report = update_feeds(archive, schedules(urls), settings=settings)
        cpu = time.process_time() - cpu
        wall = time.perf_counter() - wall
        if report.failed:
            raise SystemExit(f"{len(report.failed)} feeds failed: {report.failed[0]}")
        stored = archive.db.execute("SELECT count(*) FROM episodes").fetchone()[0]
        archive.close()
        if stored != feeds * episodes:
            raise SystemExit(f"{stored} episodes stored, {feeds * episodes} expected")
        fts = fts_estimate(Path(tmp) / "archive.db")
    stats = profiles.stats()
    split = split_by_stage(stats)
    profiled = sum(split.values())
    n = feeds * episodes
    scale = plain_cpu / profiled  # profiled seconds -> seconds of the run without cProfile
    print(f"without cProfile: {plain_cpu:.2f} s CPU, {plain_cpu / n * 1000:.3f} ms/episode")
    print(f"under cProfile: {wall:.2f} s wall, {cpu:.2f} s CPU ({profiled:.2f} s in profiled")
    print("  threads); 'est. ms/ep' scales each stage's share to the run without cProfile (the")
    print("  profiler inflates many small calls more than a few long ones: a rough guide)")
    print(f"episodes stored: {stored:,}\n")
    rows = [("stage", "profiled s", "share", "est. ms/ep")]
    for stage in STAGES:
        seconds = split.get(stage, 0.0)
        share = seconds / profiled
        rows.append((stage, f"{seconds:.2f}", f"{share:.1%}", f"{seconds * scale / n * 1000:.3f}"))
        if stage == "sqlite (store)":
            rows.append(("  of which FTS (est.)", "-", "-", f"{fts / n * 1000:.3f}"))
    rows.append(("total", f"{profiled:.2f}", "100%", f"{plain_cpu / n * 1000:.3f}"))
    show(rows)
    print(f"\ntop {args.top} functions by own time (s, calls, stage, where)")
    show([("own s", "calls", "stage", "function"), *top_functions(stats, args.top)])


if __name__ == "__main__":
    main()
