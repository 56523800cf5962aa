"""(#30) Peak memory of a run's whole process tree for a small and a mid-sized first ingest.

``python -m podarchive run --all`` of N loopback feeds (feedgen, 300 episodes each, notes of
their own: ``vs_peers.serve_feeds``) into a fresh archive, measured by ``peers/measure.py``
(the largest sampled sum of RSS over the tree, or the main process's ``VmHWM`` if larger;
PSS beside it), for N = 10 and 100 by default. Each is run twice per round, in alternating
order:

* ``sized``: the default settings, the CPU lane sized to the run (``runtime.cpu.lane_plan``:
  a run of a few feeds parses in its own process);
* ``pool``: the reference, ``PODARCHIVE_PROCESSES=2``: worker processes once a megabyte of
  markup is read, whatever the run's size (every run did so before #30).

Every run is verified (exit code, every episode stored, the server's request count) or the
benchmark stops with exit 2. ``--check`` exits 1 unless the sized run's tree stays under
120 MB for 10 feeds and 150 MB for 100 (the targets of #30; other sizes have none).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from pathlib import Path

from common import machine, show
from server import ServerProcess
from vs_peers import Run, Tool, code_state, podarchive_tool, run_tool, serve_feeds

TARGETS_MB = {10: 120.0, 100: 150.0}


def arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--sizes", default="10,100", help="feed counts, comma-separated")
    parser.add_argument("--episodes", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--lanes", default="sized,pool", help="variants to run, comma-separated")
    parser.add_argument("--check", action="store_true", help="exit 1 if a target is missed")
    parser.add_argument("--smoke", action="store_true", help="3 feeds x 5 episodes, 1 round")
    args = parser.parse_args()
    args.sizes = [int(s) for s in args.sizes.split(",")]
    if args.smoke:
        args.sizes, args.episodes, args.rounds = [3], 5, 1
    return args


def variants() -> list[Tool]:
    sized = podarchive_tool()
    sized.name = "sized"
    pool = podarchive_tool()
    pool.name = "pool"
    pool.env = {**pool.env, "PODARCHIVE_PROCESSES": "2"}
    return [sized, pool]


def main() -> None:
    args = arguments()
    print(f"run_memory: {args.sizes} feeds x {args.episodes} episodes; {machine()}")
    print(f"podarchive at {code_state()}")
    results: dict[tuple[int, str], list[Run]] = {}
    tools = [t for t in variants() if t.name in args.lanes.split(",")]
    with ServerProcess(lifetime=6 * 3600) as srv, tempfile.TemporaryDirectory() as tmp:
        feeds = argparse.Namespace(single=None, feeds=max(args.sizes), episodes=args.episodes)
        urls = serve_feeds(srv, feeds)
        for rnd in range(args.rounds):
            for size in args.sizes:
                order = tools if rnd % 2 == 0 else tools[::-1]
                for tool in order:
                    print(f"{size} feeds, {tool.name}:", flush=True)
                    place = Path(tmp) / f"r{rnd}-{size}-{tool.name}"
                    run = run_tool(tool, srv, urls[:size], size * args.episodes, place, rnd)
                    results.setdefault((size, tool.name), []).append(run)
    report(results, args)


def report(results: dict[tuple[int, str], list[Run]], args: argparse.Namespace) -> None:
    rows = [("feeds", "lane", "wall s", "CPU s", "tree peak MB", "PSS MB", "main MB", "procs")]
    for (size, name), runs in results.items():
        rows.append(
            (
                str(size),
                name,
                f"{statistics.median(r.wall for r in runs):.1f}",
                f"{statistics.median(r.cpu for r in runs):.1f}",
                f"{max(r.peak_mb for r in runs):.0f}",
                f"{max(r.pss_tree_mb for r in runs):.0f}",
                f"{max(r.main_hwm_mb for r in runs):.0f}",
                str(max(r.processes for r in runs)),
            )
        )
    print(f"\nmedians over {args.rounds} round(s) (peaks: the largest)")
    show(rows)
    if not args.check:
        return
    failed = False
    print("\ntargets (#30):")
    for size in args.sizes:
        if size not in TARGETS_MB:
            continue
        peak, limit = max(r.peak_mb for r in results[size, "sized"]), TARGETS_MB[size]
        failed |= peak > limit
        verdict = "PASS" if peak <= limit else "FAIL"
        print(f"  {verdict}: {size} feeds, tree peak {peak:.0f} MB <= {limit:.0f} MB")
    if failed:
        sys.exit(1)


if __name__ == "__main__":
    main()
