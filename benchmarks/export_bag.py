"""(#27) ``podarchive export-bag`` of an archive with ~1 GB of media, beside ``cp -r`` +
``sha256sum`` of the same files.

An archive is made once in a temporary folder (``--tmp``, default the system's): one feed,
``--files`` episodes, each with a media payload of ``--file-mib`` MiB of random bytes
(default 16 × 64 MiB = 1 GiB), stored in the media folder and the ledger as a run leaves
them. Then, alternated round by round (``--rounds``, default 3):

1. ``python -m podarchive export-bag BAG --db archive.db`` (SHA-256 manifests), a child
   process measured with ``os.wait4``: wall seconds, CPU seconds (user + system) and peak
   resident set (``ru_maxrss``);
2. the same with ``--sha512`` (SHA-256 and SHA-512 manifests);
3. the reference: ``cp -r media COPY`` then ``sha256sum`` of every copied file (one
   process, all files as arguments), each a child measured the same way (walls and CPU
   added, the larger peak RSS). Children run under GNU ``time`` when it is installed (their
   own peak RSS; see :func:`measured`).

Each bag (and copy) is deleted after its round. The page cache is warm for all of them
(the files were just written; the machine's is not dropped): the figures compare the
work, not the disk. Medians are printed; nothing is asserted.

Run: ``python benchmarks/export_bag.py`` (``--smoke``: 4 files of 1 MiB, one round).
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

MiB = 1 << 20
SRC = Path(__file__).resolve().parents[1] / "src"
NOW = "2026-12-06T12:00:00Z"


@dataclass(frozen=True, slots=True)
class Figures:
    wall: float
    cpu: float
    rss_mb: float


TIME = Path("/usr/bin/time")  # GNU time: a child's own peak RSS (see measured)


def measured(args: list[str], **kwargs: object) -> Figures:
    """Run ``args`` as a child and measure it (wall, its CPU, its peak RSS).

    Through GNU time when it is installed: a child spawned from this (larger) process
    reports this process's peak RSS as its own floor in ``os.wait4``, which would hide
    ``cp``'s and ``sha256sum``'s few MB; GNU time's children start small.
    """
    with tempfile.NamedTemporaryFile("r", suffix=".time") as out:
        wrapped = [str(TIME), "-f", "%e %U %S %M", "-o", out.name, *args] if TIME.exists() else args
        start = time.perf_counter()
        proc = subprocess.Popen(wrapped, **kwargs)  # type: ignore[call-overload]
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
        if os.waitstatus_to_exitcode(status) != 0:
            raise SystemExit(f"{args[:3]} exited {os.waitstatus_to_exitcode(status)}")
        if TIME.exists():
            _, user, system, rss_kb = out.read().split()[-4:]
            return Figures(wall, float(user) + float(system), int(rss_kb) / 1024)
    return Figures(wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024)


def make_archive(root: Path, files: int, size: int) -> Path:
    """An archive at ``root/archive.db`` with ``files`` episodes, each with a stored media
    payload of ``size`` random bytes in ``root/media``."""
    from podarchive.core.types import EpisodeWrite, FetchRecord
    from podarchive.store import Archive, FeedSave
    from podarchive.store.media_files import MediaFolder

    db = root / "archive.db"
    folder = MediaFolder(root / "media")
    feed_url = "https://bench.example/feed"
    with Archive(db) as archive:
        feed = archive.ensure_feed(feed_url, "Bench", NOW)
        episodes = [
            EpisodeWrite(key=f"e{i}", row={"guid": f"e{i}", "title": f"Episode {i}",
                         "enclosure_url": f"https://cdn.example/{i}.mp3"}, links=())
            for i in range(files)
        ]  # fmt: skip
        archive.save_feed(
            FeedSave(
                feed.id, {"title": "Bench"}, episodes, status=200, etag=None,
                last_modified=None, content_hash="h", now=NOW,
                records=[FetchRecord(feed_url, "feed", NOW, 5, 200, 10)],
            )
        )  # fmt: skip
        ids = dict(archive.db.execute("SELECT key, id FROM episodes").fetchall())
        for i in range(files):
            partial = folder.partial_path(f"{i}-bench")
            with open(partial, "wb") as f:
                for _ in range(0, size, MiB):
                    f.write(os.urandom(min(MiB, size)))
            payload = folder.commit(partial, ".mp3", fsync=lambda fd: None)
            url = f"https://cdn.example/{i}.mp3"
            archive.record_payload(payload.sha256, payload.size, "audio/mpeg", ".mp3", NOW)
            archive.add_media_version(ids[f"e{i}"], url, payload.sha256, NOW)
    return db


def export(db: Path, bag: Path, *extra: str) -> Figures:
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    args = [sys.executable, "-m", "podarchive", "export-bag", str(bag), "--db", str(db), *extra]
    figures = measured(args, env=env, stdout=subprocess.DEVNULL)
    shutil.rmtree(bag)
    return figures


def reference(media: Path, copy: Path) -> Figures:
    cp = measured(["cp", "-r", str(media), str(copy)])
    files = sorted(str(p) for p in copy.rglob("*.mp3"))
    sums = measured(["sha256sum", *files], stdout=subprocess.DEVNULL)
    shutil.rmtree(copy)
    return Figures(cp.wall + sums.wall, cp.cpu + sums.cpu, max(cp.rss_mb, sums.rss_mb))


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--smoke", action="store_true", help="4 files of 1 MiB, one round")
    parser.add_argument("--files", type=int, default=16)
    parser.add_argument("--file-mib", type=int, default=64)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--tmp", type=Path, default=None)
    args = parser.parse_args()
    if args.smoke:
        args.files, args.file_mib, args.rounds = 4, 1, 1
    sys.path.insert(0, str(SRC))
    with tempfile.TemporaryDirectory(dir=args.tmp, prefix="bag-bench-") as tmp:
        root = Path(tmp)
        (root / "archive").mkdir()
        db = make_archive(root / "archive", args.files, args.file_mib * MiB)
        total = sum(p.stat().st_size for p in (root / "archive" / "media").rglob("*.mp3"))
        results: dict[str, list[Figures]] = {"export-bag": [], "export-bag --sha512": [],
                                             "cp -r + sha256sum": []}  # fmt: skip
        for n in range(args.rounds):
            results["export-bag"].append(export(db, root / f"bag{n}"))
            results["export-bag --sha512"].append(export(db, root / f"bag{n}x", "--sha512"))
            results["cp -r + sha256sum"].append(reference(root / "archive" / "media", root / "cp"))
        report(results, total, args)


def report(results: dict[str, list[Figures]], total: int, args: argparse.Namespace) -> None:
    gb = total / 1e9
    print(f"media: {args.files} files, {total / MiB:.0f} MiB; {args.rounds} round(s), medians")
    print(f"{'':22} {'wall s':>8} {'MB/s':>8} {'CPU s':>8} {'CPU s/GB':>9} {'peak RSS MB':>12}")
    for name, figures in results.items():
        wall = statistics.median(f.wall for f in figures)
        cpu = statistics.median(f.cpu for f in figures)
        rss = max(f.rss_mb for f in figures)
        print(
            f"{name:22} {wall:8.2f} {total / 1e6 / wall:8.0f} {cpu:8.2f} {cpu / gb:9.2f} "
            f"{rss:12.1f}"
        )
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"(this script's own peak RSS: {own:.0f} MB; the children's are above)")


if __name__ == "__main__":
    main()
