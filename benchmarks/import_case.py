"""(#30) ``vs_peers.py --import-case``: a first ingest after an OPML import, the store's CPU.

For each size (``--import-feeds``, default 100 and 1,000 feeds of ``--episodes`` each, the
feeds of ``vs_peers``: feedgen's with notes and links of their own), in a fresh directory:
``python -m podarchive import FEEDS.opml --no-check --allow-private-hosts`` (the outlines say
pages, transcripts and chapters off), then the first ``run --all`` through
``store_cpu_run.py`` (the CLI in one process, the archive's methods timed on the run's thread;
the settings of ``common.bench_settings()`` from the environment). Printed per size: the
store's CPU per episode (every ``Archive`` call of the run's thread, the deferred indexes'
rebuild included), the run process's CPU per episode (its threads; not its parser
processes), whether the run deferred the
links' indexes, and with ``--reference`` the same run with no run counted big (indexes and
summary triggers kept in place: what main did). Each run is verified (exit 0, every episode
stored, one request per feed) or the benchmark stops with exit 2. podarchive only: reader
and feed-to-sqlite have no OPML import to compare.

``--check``: the largest size's store CPU per episode within 1.2x the smallest's (flat).
"""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import subprocess
import sys
import tempfile
from pathlib import Path
from xml.sax.saxutils import quoteattr

from feedgen import FeedSpec
from server import ServerProcess
from vs_peers import load_average, own_notes, settings_env, stop

HERE = Path(__file__).parent
RUNNER = HERE / "store_cpu_run.py"
FLAT = 1.2  # --check: the largest size's store CPU per episode <= FLAT x the smallest's
NS = "https://github.com/podarchive/podarchive/ns/opml/1.0"


def write_opml(path: Path, urls: list[str]) -> None:
    off = 'podarchive:pages="false" podarchive:transcripts="false" podarchive:chapters="false"'
    outlines = "\n".join(
        f'  <outline type="rss" text="Show {k}" xmlUrl={quoteattr(u)} {off}/>'
        for k, u in enumerate(urls)
    )
    path.write_text(
        f'<?xml version="1.0"?>\n<opml version="2.0" xmlns:podarchive="{NS}">'
        f"<head><title>bench</title></head><body>\n{outlines}\n</body></opml>\n"
    )


def one_size(srv: ServerProcess, urls: list[str], episodes: int, work: Path, plain: bool) -> dict:
    """Import ``urls`` into a fresh schedules folder, then the first run; its figures."""
    work.mkdir(parents=True)
    opml, schedules, db = work / "feeds.opml", work / "schedules", work / "pod.db"
    write_opml(opml, urls)
    schedules.mkdir()
    done = subprocess.run(
        [sys.executable, "-m", "podarchive", "import", str(opml), "--no-check"]
        + ["--allow-private-hosts", "--schedules", str(schedules)],
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        stop(f"import of {len(urls)} feeds: exit {done.returncode}\n{done.stderr[-2000:]}")
    env = os.environ | settings_env() | ({"BENCH_NO_DEFER": "1"} if plain else {})
    out = work / "figures.json"
    before = srv.counts()[0]
    run = subprocess.run(
        [sys.executable, str(RUNNER), str(out), "run", "--all"]
        + ["--schedules", str(schedules), "--db", str(db)],
        env=env,
        capture_output=True,
        text=True,
        check=False,
        timeout=4 * 3600,
    )
    figures = json.loads(out.read_text()) if out.exists() else {"returncode": run.returncode}
    if figures["returncode"] != 0 or run.returncode != 0:
        stop(f"run of {len(urls)} feeds: exit {figures['returncode']}\n{run.stderr[-2000:]}")
    with sqlite3.connect(db) as conn:
        stored = conn.execute("SELECT count(*) FROM episodes").fetchone()[0]
    conn.close()
    requests = srv.counts()[0] - before
    if stored != len(urls) * episodes or requests != len(urls):
        stop(f"{len(urls)} feeds: {stored} episodes stored, {requests} requests: not all")
    figures["episodes"] = stored
    return figures


def run_import_case(args: argparse.Namespace) -> None:
    sizes = sorted({int(n) for n in args.import_feeds.split(",")})
    print(
        f"vs_peers --import-case: OPML import then first run of {sizes} feeds x "
        f"{args.episodes} episodes; settings {settings_env()}"
    )
    rows = []
    with ServerProcess(lifetime=6 * 3600) as srv:
        specs = [FeedSpec(name=f"p{k}", episodes=args.episodes) for k in range(max(sizes))]
        for start in range(0, len(specs), 20):
            srv.set({f"/{s.name}.xml": own_notes(s) for s in specs[start : start + 20]})
        urls = [srv.url(f"/{s.name}.xml") for s in specs]
        with tempfile.TemporaryDirectory() as tmp:
            for n in sizes:
                for plain in (False, True) if args.reference else (False,):
                    label = f"{n}{'-plain' if plain else ''}"
                    f = one_size(srv, urls[:n], args.episodes, Path(tmp) / label, plain)
                    row = {
                        "feeds": n,
                        "plain": plain,
                        "episodes": f["episodes"],
                        "deferred": f["deferred"],
                        "store_ms_per_episode": 1000 * f["store_cpu"] / f["episodes"],
                        "process_ms_per_episode": 1000 * f["cpu"] / f["episodes"],
                        "store_calls_elsewhere": f["store_calls_elsewhere"],
                    }
                    rows.append(row)
                    print(f"  {json.dumps(row)}; load {load_average()}", flush=True)
    report(rows, sizes, args.check)


def report(rows: list[dict], sizes: list[int], check: bool) -> None:
    print("\nfeeds  episodes  indexes         store CPU ms/episode  run process CPU ms/episode")
    for r in rows:
        how = ("deferred" if r["deferred"] else "kept") + (" (ref.)" if r["plain"] else "")
        print(
            f"{r['feeds']:>5}  {r['episodes']:>8}  {how:<14}  "
            f"{r['store_ms_per_episode']:>20.3f}  {r['process_ms_per_episode']:>26.3f}"
        )
    ours = {r["feeds"]: r for r in rows if not r["plain"]}
    small, large = ours.get(sizes[0]), ours.get(sizes[-1])
    if small is None or large is None or len(sizes) < 2:
        return
    ratio = large["store_ms_per_episode"] / small["store_ms_per_episode"]
    ok = ratio <= FLAT
    print(
        f"\n{'PASS' if ok else 'FAIL'}: store CPU per episode at {sizes[-1]:,} feeds "
        f"{ratio:.2f}x the one at {sizes[0]:,} (<= {FLAT}x)"
    )
    if check and not ok:
        sys.exit(1)
