"""(#30) Where an archive's bytes go: per table and per index, from SQLite's ``dbstat``.

``disk_usage.py --db PATH`` prints the objects of an existing archive, largest first, with
their share of the file. Without ``--db`` it builds one first: podarchive's ``run --all`` on
the synthetic feeds of ``vs_peers.py`` (``--feeds`` x ``--episodes``, each feed with notes
and links of its own) on loopback, and, if reader 3.26's virtualenv exists under
``--venvs`` (``vs_peers.py`` creates it; ``--install`` here too), reader on the same feeds,
then prints both and the ratio of the files. Issue #30 asks for the ratio "with search kept":
reader keeps no search index until it is enabled, then keeps it in a second file
(``<db>.search``); a copy of reader's database with search enabled and updated is measured too,
both files counted. ``--keep DIR`` keeps the archives built.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
from pathlib import Path

from common import show
from feedgen import FeedSpec
from server import ServerProcess
from vs_peers import (
    DEFAULT_VENVS,
    READER_RUN,
    own_notes,
    peer_venv,
    settings_env,
    write_schedule,
)

MB = 1e6


def arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--db", type=Path, help="an existing archive: measure it only")
    parser.add_argument("--feeds", type=int, default=100)
    parser.add_argument("--episodes", type=int, default=100)
    parser.add_argument("--top", type=int, default=25)
    parser.add_argument("--venvs", type=Path, default=DEFAULT_VENVS, help="peers' virtualenvs")
    parser.add_argument("--install", action="store_true", help="install reader if missing")
    parser.add_argument("--keep", type=Path, help="copy the archives built into this folder")
    parser.add_argument("--smoke", action="store_true", help="3 feeds x 5 episodes")
    args = parser.parse_args()
    if args.smoke:
        args.feeds, args.episodes = 3, 5
    return args


def file_bytes(path: Path) -> int:
    """The database and its ``-wal``, as a user's disk sees them (and reader's search file)."""
    paths = [Path(f"{path}{tail}") for tail in ("", "-wal", ".search", ".search-wal")]
    return sum(p.stat().st_size for p in paths if p.exists())


def objects(path: Path) -> list[tuple[str, int, int]]:
    """(table or index, bytes, pages) of every object, largest first, from ``dbstat``."""
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        rows = conn.execute(
            "SELECT name, sum(pgsize), count(*) FROM dbstat GROUP BY name ORDER BY 2 DESC"
        ).fetchall()
    finally:
        conn.close()
    return [(str(n), int(b), int(p)) for n, b, p in rows]


def report(label: str, path: Path, top: int) -> int:
    """Print the ``top`` objects of ``path`` and their share; the file's bytes."""
    stats = objects(path)
    total = sum(b for _, b, _ in stats)
    size = file_bytes(path)
    print(f"\n{label}: {path.name}, {size / MB:.2f} MB on disk ({total / MB:.2f} MB in pages)")
    rows = [("object", "MB", "share", "pages")]
    for name, nbytes, pages in stats[:top]:
        rows.append((name, f"{nbytes / MB:.2f}", f"{100 * nbytes / total:.1f}%", str(pages)))
    rest = stats[top:]
    if rest:
        rest_bytes = sum(b for _, b, _ in rest)
        rows.append((f"({len(rest)} more)", f"{rest_bytes / MB:.2f}", "", ""))
    show(rows)
    return size


def build(args: argparse.Namespace, work: Path) -> dict[str, Path]:
    """podarchive's archive (and reader's, if its virtualenv is there) of the same feeds."""
    specs = [FeedSpec(name=f"p{k}", episodes=args.episodes) for k in range(args.feeds)]
    built: dict[str, Path] = {}
    with ServerProcess(lifetime=3 * 3600) as srv:
        for start in range(0, len(specs), 20):
            srv.set({f"/{s.name}.xml": own_notes(s) for s in specs[start : start + 20]})
        urls = [srv.url(f"/{s.name}.xml") for s in specs]
        pod = work / "podarchive"
        pod.mkdir()
        write_schedule(pod, urls)
        command = [sys.executable, "-m", "podarchive", "run", "--all"]
        command += ["--schedules", str(pod / "schedules"), "--db", str(pod / "pod.db")]
        subprocess.run(command, env=_env(), check=True, capture_output=True)
        built["podarchive"] = pod / "pod.db"
        venv = peer_venv(args.venvs, "reader", args.install)
        if venv is not None:
            built["reader"] = _reader(venv, work / "reader", urls)
            built["reader with search"] = _reader_search(venv, built["reader"])
    return built


def _env() -> dict[str, str]:
    return dict(os.environ) | settings_env()


def _reader(venv: Path, work: Path, urls: list[str]) -> Path:
    work.mkdir()
    (work / "urls.txt").write_text("\n".join(urls))
    db = work / "reader.sqlite"
    python = str(venv / "bin/python")
    subprocess.run([python, str(READER_RUN), str(db), "add", str(work / "urls.txt")], check=True)
    subprocess.run([python, str(READER_RUN), str(db), "update"], check=True)
    return db


#: reader's search enabled and filled, in reader's own python (its API, 3.26).
READER_SEARCH = (
    "import sys; from reader import make_reader; r = make_reader(sys.argv[1]); "
    "r.enable_search(); r.update_search(); r.close()"
)


def _reader_search(venv: Path, db: Path) -> Path:
    """A copy of reader's database with search enabled (its index in ``<copy>.search``)."""
    copy = db.with_name("reader-search.sqlite")
    for tail in ("", "-wal"):
        if Path(f"{db}{tail}").exists():
            shutil.copy(f"{db}{tail}", f"{copy}{tail}")
    subprocess.run([str(venv / "bin/python"), "-c", READER_SEARCH, str(copy)], check=True)
    return copy


def main() -> None:
    args = arguments()
    if args.db:
        report("archive", args.db, args.top)
        return
    print(f"disk_usage: {args.feeds} feeds x {args.episodes} episodes on loopback")
    with tempfile.TemporaryDirectory() as tmp:
        built = build(args, Path(tmp))
        sizes = {name: report(name, path, args.top) for name, path in built.items()}
        if "reader" in sizes:
            print(f"\npodarchive / reader: {sizes['podarchive'] / sizes['reader']:.2f}x")
            ratio = sizes["podarchive"] / sizes["reader with search"]
            print(f"podarchive / reader with search (both files): {ratio:.2f}x")
        else:
            print("\nreader: not installed (vs_peers.py or --install creates it): ours only")
        if args.keep:
            args.keep.mkdir(parents=True, exist_ok=True)
            for name, path in built.items():
                for p in (path, Path(f"{path}-wal"), Path(f"{path}.search")):
                    if p.exists():
                        shutil.copy(p, args.keep / f"{name.replace(' ', '-')}-{p.name}")


if __name__ == "__main__":
    main()
