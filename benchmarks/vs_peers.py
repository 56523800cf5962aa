"""(#15) podarchive beside reader and feed-to-sqlite: whole processes, whole process trees.

Each tool runs as a user would run it, as its own process on the same loopback feeds (one
``ServerProcess``), a fresh archive each round, in rounds that alternate the order of the
tools (P R F, F R P, ...):

* podarchive: ``python -m podarchive run --all`` (this interpreter) with a schedule file of
  the feeds (pages, transcripts and chapters off, private hosts allowed) and the settings of
  ``common.bench_settings()`` given as ``PODARCHIVE_<SETTING>`` environment variables;
* reader 3.26: ``peers/reader_run.py`` (``update_feeds(workers=8, scheduled=False)``), the
  feeds added beforehand, untimed;
* feed-to-sqlite 0.6.2: its CLI, every URL on one command line (it has no conditional GET,
  so no no-change re-poll).

The peers live in their own virtualenvs, created here on first use under ``--venvs``
(default ``~/.cache/podarchive-bench/peers/<tool>-<version>/``) and reused while their pins
match. A peer that cannot be installed is left out with one line.

Every measured process goes through ``peers/measure.py``: wall to the main process's exit;
CPU of the whole tree from ``getrusage(RUSAGE_CHILDREN)`` in a *child subreaper*, so the
fork server and worker processes that podarchive's main process never waits for are counted
(cross-checked against per-process ``/proc/<pid>/stat`` samples every 20 ms); peak RSS as
the largest sampled sum of RSS over the tree, or the main process's ``VmHWM`` if larger.
Archive size is the database plus its ``-wal``. podarchive's modules are byte-compiled first,
as pip leaves an installed package and reader's (``common.compile_podarchive``). The
no-change re-poll runs the same command again: every feed answers 304. Each run is verified
(exit code, every entry stored, the server's request and 304 counts) or the benchmark stops:
a failing tool gives no figure.

``--import-case`` (#30) measures instead a first ``run`` after ``podarchive import`` of an
OPML file of 100 and 1,000 feeds (``--import-feeds``), podarchive alone: the store's CPU per
episode at each size, and with ``--check`` the largest within 1.2x the smallest
(``import_case.py``).

``--check`` compares with the targets of #15 and #30 and exits 1 on any FAIL: peak RSS of the
tree (120 MB up to 10 feeds, 150 MB up to 100, 250 MB below 1,000 feeds, 300 MB from 1,000,
600 MB for ``--single``; ``--ceiling-mb`` overrides), and against reader (medians over rounds,
same run): CPU <= reader's, archive <= 1.5x reader's, no-change wall and CPU >= 3x faster. The
CPU of one unchanged poll (<= 1.0 ms) is ``unchanged_poll.py --check``'s. Reader targets
asked for (reader in ``--peers``) but not measurable (reader not installed) are a FAIL; with
``--peers none`` they are not asked. A run that fails or does not store every entry stops the
benchmark with exit 2.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sqlite3
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import NoReturn

from common import bench_settings, compile_podarchive, machine, show
from feedgen import FeedSpec, feed
from server import ServerProcess

from podarchive.core.settings import Settings

HERE = Path(__file__).parent
MEASURE = HERE / "peers" / "measure.py"
READER_RUN = HERE / "peers" / "reader_run.py"
PINS = {
    "reader": ["reader==3.26", "sgmllib3k==1.0.0"],  # reader's feedparser imports sgmllib
    "feed-to-sqlite": ["feed-to-sqlite==0.6.2"],
}
DEFAULT_VENVS = Path.home() / ".cache" / "podarchive-bench" / "peers"
SINGLE_PARAGRAPHS = 2  # 50,000 items of 16 paragraphs would be 250 MB, beyond max_feed_bytes
MB = 1e6


# ---------------------------------------------------------------- arguments


def arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--feeds", type=int, default=100)
    parser.add_argument("--episodes", type=int, default=300)
    parser.add_argument("--single", type=int, metavar="N", help="one feed of N items instead")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument(
        "--peers",
        help="comma-separated: reader,feed-to-sqlite (the default; none with --single) or none",
    )
    parser.add_argument("--venvs", type=Path, default=DEFAULT_VENVS, help="peers' virtualenvs")
    parser.add_argument("--check", action="store_true", help="exit 1 if a target is missed")
    parser.add_argument("--ceiling-mb", type=float, help="peak RSS ceiling for --check")
    parser.add_argument("--smoke", action="store_true", help="3 feeds x 5 episodes, 1 round")
    parser.add_argument(
        "--import-case",
        action="store_true",
        help="(#30) OPML import then first run, podarchive only: store CPU per episode by size",
    )
    parser.add_argument("--import-feeds", default="100,1000", help="sizes for --import-case")
    parser.add_argument(
        "--reference", action="store_true", help="--import-case: also with no run counted big"
    )
    args = parser.parse_args()
    if args.smoke:
        args.feeds, args.episodes, args.rounds = 3, 5, 1
        args.import_feeds = "2,4"
        args.single = 200 if args.single else None
    if args.peers is None:
        args.peers = "none" if args.single else "reader,feed-to-sqlite"
    args.peers = [] if args.peers == "none" else args.peers.split(",")
    unknown = set(args.peers) - set(PINS)
    if unknown:
        parser.error(f"unknown peer {sorted(unknown)[0]!r} (reader, feed-to-sqlite or none)")
    return args


def ceiling_mb(args: argparse.Namespace) -> float:
    if args.ceiling_mb is not None:
        return float(args.ceiling_mb)
    if args.single:
        return 600.0
    if args.feeds <= 10:
        return 120.0  # #30: a 10-feed run's tree
    if args.feeds <= 100:
        return 150.0  # #30: a 100-feed first ingest
    return 300.0 if args.feeds >= 1000 else 250.0


# ---------------------------------------------------------------- peers' virtualenvs


def venv_dir(root: Path, tool: str) -> Path:
    version = PINS[tool][0].split("==")[1]
    return root / f"{tool}-{version}"


def peer_venv(root: Path, tool: str, install: bool) -> Path | None:
    """The tool's virtualenv with its pins, created if ``install``; None if there is none."""
    where = venv_dir(root, tool)
    pins = "\n".join(PINS[tool])
    marker = where / "pins.txt"
    if marker.is_file() and marker.read_text() == pins and (where / "bin/python").exists():
        return where
    if not install:
        print(f"{tool}: no virtualenv at {where} (not installed in --smoke): left out")
        return None
    print(f"{tool}: installing {' '.join(PINS[tool])} into {where} ...", flush=True)
    try:
        subprocess.run([sys.executable, "-m", "venv", "--clear", str(where)], check=True)
        subprocess.run(
            [str(where / "bin/python"), "-m", "pip", "install", "-q", *PINS[tool]],
            check=True,
            capture_output=True,
            timeout=900,
        )
    except (subprocess.SubprocessError, OSError) as e:
        print(f"{tool}: could not be installed ({type(e).__name__}): left out")
        return None
    marker.write_text(pins)
    return where


def frozen(venv: Path) -> str:
    done = subprocess.run(
        [str(venv / "bin/python"), "-m", "pip", "freeze", "--disable-pip-version-check"],
        capture_output=True,
        text=True,
        check=False,
    )
    return ", ".join(done.stdout.split())


# ---------------------------------------------------------------- the tools


@dataclass
class Tool:
    """How to set up, run, re-poll and count one tool in a working directory."""

    name: str
    setup: Callable[[Path, list[str]], None]
    command: Callable[[Path, list[str]], list[str]]
    count: Callable[[Path], int]
    archive: str
    repoll: bool
    env: dict[str, str] = field(default_factory=dict)


def settings_env() -> dict[str, str]:
    """``bench_settings()`` as the environment variables a user would set."""
    bench, default = bench_settings(), Settings()
    return {
        f"PODARCHIVE_{f.name.upper()}": str(getattr(bench, f.name))
        for f in fields(Settings)
        if getattr(bench, f.name) != getattr(default, f.name)
    }


def write_schedule(work: Path, urls: list[str]) -> None:
    (work / "schedules").mkdir()
    tables = [
        f'[[feed]]\nurl = "{u}"\nevery = "1h"\npages = false\ntranscripts = false\n'
        "chapters = false\nallow_private_hosts = true\n"
        for u in urls
    ]
    (work / "schedules" / "bench.toml").write_text("\n".join(tables))


def podarchive_tool() -> Tool:
    return Tool(
        name="podarchive",
        setup=lambda work, urls: write_schedule(work, urls),
        command=lambda work, urls: [
            *(sys.executable, "-m", "podarchive", "run", "--all"),
            *("--schedules", str(work / "schedules"), "--db", str(work / "pod.db")),
        ],
        count=lambda db: count_rows(db, ["episodes"]),
        archive="pod.db",
        repoll=True,
        env=settings_env(),
    )


def reader_tool(venv: Path) -> Tool:
    python = str(venv / "bin/python")

    def setup(work: Path, urls: list[str]) -> None:
        (work / "urls.txt").write_text("\n".join(urls))
        subprocess.run(
            [python, str(READER_RUN), str(work / "reader.sqlite"), "add", str(work / "urls.txt")],
            check=True,
        )

    return Tool(
        name="reader",
        setup=setup,
        command=lambda work, urls: [python, str(READER_RUN), str(work / "reader.sqlite"), "update"],
        count=lambda db: count_rows(db, ["entries"]),
        archive="reader.sqlite",
        repoll=True,
    )


def feed_to_sqlite_tool(venv: Path) -> Tool:
    return Tool(
        name="feed-to-sqlite",
        setup=lambda work, urls: None,
        command=lambda work, urls: [str(venv / "bin/feed-to-sqlite"), str(work / "f2s.db"), *urls],
        count=lambda db: count_rows(db, None),
        archive="f2s.db",
        repoll=False,
    )


def count_rows(db: Path, tables: list[str] | None) -> int:
    """Rows of ``tables``; None: of every table but ``feeds`` (feed-to-sqlite's per feed)."""
    with sqlite3.connect(db) as conn:
        if tables is None:
            names = conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'").fetchall()
            tables = [n for (n,) in names if n != "feeds" and not n.startswith("sqlite_")]
        total = sum(conn.execute(f'SELECT count(*) FROM "{t}"').fetchone()[0] for t in tables)
    conn.close()
    return int(total)


# ---------------------------------------------------------------- measuring


@dataclass
class Run:
    tool: str
    round: int
    wall: float
    cpu: float
    cpu_sampled: float
    cpu_main: float
    rss_tree_mb: float
    pss_tree_mb: float
    main_hwm_mb: float
    processes: int
    sampler_cpu: float
    size_mb: float = 0.0
    repoll_wall: float | None = None
    repoll_cpu: float | None = None

    @property
    def peak_mb(self) -> float:
        """The tree's peak: the sampled sum, or the main process's own peak if larger."""
        return max(self.rss_tree_mb, self.main_hwm_mb)


def measured(command: list[str], work: Path, env: dict[str, str], label: str) -> dict[str, float]:
    """Run ``command`` under measure.py; its figures. Stops the benchmark if it failed."""
    out, log = work / f"{label}.json", work / f"{label}.log"
    subprocess.run(
        [sys.executable, str(MEASURE), str(out), str(log), "--", *command],
        cwd=work,
        env=os.environ | env,
        check=True,
        timeout=4 * 3600,
    )
    figures: dict[str, float] = json.loads(out.read_text())
    if figures["returncode"] != 0:
        tail = log.read_text(errors="replace")[-2000:]
        stop(f"{work.name} {label}: exit {figures['returncode']}\n{tail}")
    return figures


def stop(message: str) -> NoReturn:
    """A run failed or did not do its work: no figure from it; exit 2 (1 is a missed target)."""
    print(f"vs_peers: {message}", file=sys.stderr)
    sys.exit(2)


def archive_mb(path: Path) -> float:
    return sum(p.stat().st_size for p in (path, Path(f"{path}-wal")) if p.exists()) / MB


def verify(label: str, got: tuple[int, int], want: tuple[int, int], entries: int, n: int) -> None:
    """Stop unless the server saw ``want`` (requests, 304s) and ``n`` entries are stored."""
    if got != want or entries != n:
        stop(
            f"{label}: FAILED verification: (requests, 304s) {got}, expected {want}; "
            f"{entries} entries stored, expected {n}"
        )


def run_tool(
    tool: Tool, srv: ServerProcess, urls: list[str], entries: int, work: Path, rnd: int
) -> Run:
    """One fresh first ingest (and the no-change re-poll) of ``tool``, measured and verified:
    ``entries`` items in all must be stored."""
    work.mkdir(parents=True)
    tool.setup(work, urls)
    feeds = len(urls)
    before = srv.counts()
    first = measured(tool.command(work, urls), work, tool.env, "first")
    after = srv.counts()
    db = work / tool.archive
    size = archive_mb(db)
    verify(
        f"{tool.name} round {rnd + 1}", delta(before, after), (feeds, 0), tool.count(db), entries
    )
    run = Run(
        tool=tool.name,
        round=rnd,
        wall=first["wall"],
        cpu=first["cpu"],
        cpu_sampled=first["cpu_sampled"],
        cpu_main=first["cpu_main"],
        rss_tree_mb=first["rss_tree_peak_mb"],
        pss_tree_mb=first["pss_tree_peak_mb"],
        main_hwm_mb=first["main_hwm_mb"],
        processes=int(first["processes"]),
        sampler_cpu=first["sampler_cpu"],
        size_mb=size,
    )
    if tool.repoll:
        again = measured(tool.command(work, urls), work, tool.env, "repoll")
        got = delta(after, srv.counts())
        verify(f"{tool.name} re-poll round {rnd + 1}", got, (feeds, feeds), tool.count(db), entries)
        run.repoll_wall, run.repoll_cpu = again["wall"], again["cpu"]
    print(progress(run, first), flush=True)
    return run


def delta(before: tuple[int, int], after: tuple[int, int]) -> tuple[int, int]:
    return after[0] - before[0], after[1] - before[1]


def progress(run: Run, first: dict[str, float]) -> str:
    line = (
        f"  round {run.round + 1} {run.tool}: {run.wall:.1f} s wall, CPU {run.cpu:.1f} s "
        f"(main process {run.cpu_main:.1f} s; /proc samples {run.cpu_sampled:.1f} s), "
        f"{run.processes} processes, tree peak RSS {run.rss_tree_mb:.0f} MB "
        f"(PSS {run.pss_tree_mb:.0f} MB; main VmHWM {run.main_hwm_mb:.0f} MB; "
        f"VmHWM by process {first['hwm_by_process_mb']}), archive {run.size_mb:.1f} MB; "
        f"sampler CPU {run.sampler_cpu:.2f} s; load {load_average()}"
    )
    if run.repoll_wall is not None:
        line += f"; no-change {run.repoll_wall:.2f} s wall, {run.repoll_cpu:.2f} s CPU"
    return line


def load_average() -> str:
    """The 1-minute load average: other work on the machine shows here."""
    try:
        return Path("/proc/loadavg").read_text().split()[0]
    except OSError:
        return "?"


# ---------------------------------------------------------------- the feeds


def serve_feeds(srv: ServerProcess, args: argparse.Namespace) -> list[str]:
    """Put the feeds on the server in batches (never all bodies in memory here); their URLs."""
    if args.single:
        specs = [FeedSpec(name="single", episodes=args.single, paragraphs=SINGLE_PARAGRAPHS)]
    else:
        specs = [FeedSpec(name=f"p{k}", episodes=args.episodes) for k in range(args.feeds)]
    for start in range(0, len(specs), 20):
        srv.set({f"/{s.name}.xml": own_notes(s) for s in specs[start : start + 20]})
    return [srv.url(f"/{s.name}.xml") for s in specs]


def own_notes(spec: FeedSpec) -> bytes:
    """feedgen's feed with notes and links no other feed has: feedgen's depend on the episode
    number only, so every feed would repeat the others' and flatter a tool that remembers
    notes and URLs it derived (podarchive keeps the last 256 notes, 4,096 URLs); real feeds
    share footers, not notes."""
    own = feed(spec).replace(b"Lorem ipsum", f"Lorem {spec.name}".encode())
    return own.replace(b"/topic/", f"/{spec.name}/topic/".encode()).replace(
        b"/ref/", f"/{spec.name}/ref/".encode()
    )


# ---------------------------------------------------------------- report


def span(values: Iterable[float], fmt: str) -> str:
    vs = list(values)
    low, high = fmt.format(min(vs)), fmt.format(max(vs))
    return low if low == high else f"{low}–{high}"


COLUMNS: list[tuple[str, Callable[[Run], float | None], str]] = [
    ("first update, wall s", lambda r: r.wall, "{:.1f}"),
    ("CPU s (tree)", lambda r: r.cpu, "{:.1f}"),
    ("peak RSS MB (tree)", lambda r: r.peak_mb, "{:.0f}"),
    ("main process MB", lambda r: r.main_hwm_mb, "{:.0f}"),
    ("archive MB", lambda r: r.size_mb, "{:.1f}"),
    ("no-change wall s", lambda r: r.repoll_wall, "{:.2f}"),
    ("no-change CPU s", lambda r: r.repoll_cpu, "{:.2f}"),
]


def median(runs: list[Run], get: Callable[[Run], float | None]) -> float | None:
    values = [v for v in map(get, runs) if v is not None]
    return statistics.median(values) if values else None


def table(by_tool: dict[str, list[Run]]) -> None:
    rows = [("tool", *(c[0] for c in COLUMNS))]
    for name, runs in by_tool.items():
        cells = []
        for _, get, fmt in COLUMNS:
            values = [v for v in map(get, runs) if v is not None]
            cells.append(span(values, fmt) if values else "–")
        rows.append((name, *cells))
    if "podarchive" in by_tool and "reader" in by_tool:
        ratios = []
        for _, get, _ in COLUMNS:
            ours, theirs = median(by_tool["podarchive"], get), median(by_tool["reader"], get)
            ratios.append(f"{ours / theirs:.2f}x" if ours is not None and theirs else "–")
        rows.append(("podarchive / reader (medians)", *ratios))
    show(rows)


def dbstat(path: Path, top: int = 15) -> list[tuple[str, float]]:
    with sqlite3.connect(path) as conn:
        rows = conn.execute(
            "SELECT name, sum(pgsize) FROM dbstat GROUP BY name ORDER BY 2 DESC"
        ).fetchall()
    conn.close()
    return [(str(n), s / MB) for n, s in rows[:top]]


def dbstat_side_by_side(archives: dict[str, Path]) -> None:
    stats = {name: dbstat(path) for name, path in archives.items() if path.exists()}
    print("\ndbstat of the last round's archives (MB by table or index, largest first):")
    rows = [tuple(h for name in stats for h in (name, "MB"))]
    for i in range(max(len(s) for s in stats.values())):
        row: list[str] = []
        for s in stats.values():
            row += [s[i][0], f"{s[i][1]:.1f}"] if i < len(s) else ["", ""]
        rows.append(tuple(row))
    show(rows)


# ---------------------------------------------------------------- targets


def checks(args: argparse.Namespace, by_tool: dict[str, list[Run]]) -> list[tuple[str, str]]:
    """(PASS/FAIL/..., what) for each target of #15 and #30."""
    pod = by_tool["podarchive"]
    limit = ceiling_mb(args)
    peak = max(r.peak_mb for r in pod)
    out = [(verdict(peak <= limit), f"peak RSS of the tree {peak:.0f} MB <= {limit:.0f} MB")]
    if "reader" not in args.peers:
        return [*out, ("not asked", "reader comparisons (--peers without reader)")]
    if "reader" not in by_tool:
        return [*out, ("FAIL", "reader comparisons could not be made (reader not available)")]
    ours: dict[str, float] = {}
    theirs: dict[str, float] = {}
    for key, get in (
        ("cpu", lambda r: r.cpu),
        ("size", lambda r: r.size_mb),
        ("wall0", lambda r: r.repoll_wall),
        ("cpu0", lambda r: r.repoll_cpu),
    ):
        ours[key] = median(pod, get) or 0.0
        theirs[key] = median(by_tool["reader"], get) or 0.0
    speed_wall = theirs["wall0"] / ours["wall0"]
    speed_cpu = theirs["cpu0"] / ours["cpu0"]
    return out + [
        (
            verdict(ours["cpu"] <= theirs["cpu"]),
            f"first-ingest CPU {ours['cpu']:.1f} s <= reader's {theirs['cpu']:.1f} s",
        ),
        (
            verdict(ours["size"] <= ARCHIVE_RATIO * theirs["size"]),
            f"archive {ours['size']:.1f} MB <= {ARCHIVE_RATIO} x reader's {theirs['size']:.1f} MB "
            f"({ours['size'] / theirs['size']:.2f}x)",
        ),
        (verdict(speed_wall >= 3), f"no-change wall: reader / podarchive {speed_wall:.2f}x >= 3x"),
        (verdict(speed_cpu >= 3), f"no-change CPU: reader / podarchive {speed_cpu:.2f}x >= 3x"),
    ]


# #15 asked 1.3x on feeds without notes; #30 asks 1.5x on feeds whose episodes carry notes and
# links of their own (``own_notes``), links and search kept.
ARCHIVE_RATIO = 1.5


def verdict(ok: bool) -> str:
    return "PASS" if ok else "FAIL"


# ---------------------------------------------------------------- main


def tools_for(args: argparse.Namespace) -> list[Tool]:
    tools = [podarchive_tool()]
    for name in args.peers:
        venv = peer_venv(args.venvs, name, install=not args.smoke)
        if venv is None:
            continue
        print(f"{name}: {venv} ({frozen(venv)})")
        tools.append(reader_tool(venv) if name == "reader" else feed_to_sqlite_tool(venv))
    return tools


def code_state() -> str:
    """The commit, and a digest of uncommitted changes in src/: the code a round measures."""

    def git(*argv: str) -> str:
        done = subprocess.run(
            ["git", "-C", str(HERE.parent), *argv], capture_output=True, check=False
        )
        return done.stdout.decode(errors="replace").strip()

    state = git("rev-parse", "--short", "HEAD") or "?"
    changes = git("diff", "HEAD", "--", "src")
    if changes:
        state += " + uncommitted src changes " + hashlib.sha1(changes.encode()).hexdigest()[:8]
    return state


def plural(n: int, word: str) -> str:
    return f"{n} {word}" + ("" if n == 1 else "s")


def describe(args: argparse.Namespace) -> str:
    if args.single:
        return f"one feed of {args.single:,} items ({SINGLE_PARAGRAPHS} paragraphs of notes each)"
    return f"{args.feeds:,} feeds x {args.episodes:,} episodes"


def main() -> None:
    args = arguments()
    if args.import_case:
        from import_case import run_import_case

        run_import_case(args)
        return
    if args.venvs.resolve().is_relative_to(HERE.parent.resolve()):
        sys.exit("--venvs must be outside the repository")
    print(f"vs_peers: {describe(args)}, {plural(args.rounds, 'round')}; {machine()}")
    print(f"podarchive at {code_state()}; settings {settings_env()}")
    print(compile_podarchive())
    tools = tools_for(args)
    entries = args.single or args.feeds * args.episodes
    by_tool: dict[str, list[Run]] = {t.name: [] for t in tools}
    codes: list[str] = []  # podarchive's code at the start of each round
    with ServerProcess(lifetime=6 * 3600) as srv, tempfile.TemporaryDirectory() as tmp:
        urls = serve_feeds(srv, args)
        work = Path(tmp)
        for rnd in range(args.rounds):
            order = tools if rnd % 2 == 0 else tools[::-1]
            codes.append(code_state())
            print(f"round {rnd + 1}: {' '.join(t.name for t in order)}; podarchive at {codes[-1]}")
            for tool in order:
                place = work / f"r{rnd}" / tool.name
                by_tool[tool.name].append(run_tool(tool, srv, urls, entries, place, rnd))
            if rnd < args.rounds - 1:
                subprocess.run(["rm", "-rf", str(work / f"r{rnd}")], check=True)
        print(f"\n{describe(args)}; ranges are min–max over {plural(args.rounds, 'round')}")
        table(by_tool)
        if len(set(codes)) > 1:
            print(f"NOTE: podarchive's code changed between rounds ({' / '.join(codes)})")
        last = work / f"r{args.rounds - 1}"
        dbstat_side_by_side({t.name: last / t.name / t.archive for t in tools if t.repoll})
    if args.check:
        results = checks(args, by_tool)
        print("\ntargets (#15):")
        for mark, what in results:
            print(f"  {mark}: {what}")
        if any(mark == "FAIL" for mark, _ in results):
            sys.exit(1)


if __name__ == "__main__":
    main()
