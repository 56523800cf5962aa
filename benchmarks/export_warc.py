"""(#27) ``podarchive export-warc`` of a multi-GB archive: flat memory, and speed beside
warcio's own writer writing the same records in the same run.

1. An archive is made with ``--files`` media payloads adding up to ``--size`` bytes (default
   2 GiB), each recorded as a capture (one GET, its 200 and headers) the way a run records
   one: the bytes come from a 1 MiB random block, never held whole.
2. podarchive: ``python -m podarchive export-warc OUT.warc.gz`` in a child process: wall,
   MB/s of payload, and its peak resident set (``os.wait4``). Done for the whole archive and
   for an archive an eighth of its size (``--podcast`` picks one of the two shows): the peak
   must not grow with the export's size.
3. The reference, in the same run, alternated with 2 round by round (ABBA, ``--rounds``,
   medians): a child process that writes the same
   records (a response with the same HTTP head and the streamed file, and a request) with
   warcio's ``WARCWriter`` directly (its default digests: it reads each file twice, as
   podarchive does for the block digest). Same gzip, same files, same disk.

4. The same archive as a WACZ (index, pages, datapackage hashes: the WARC read twice more).

Nothing is asserted: the figures are printed. Run: ``python benchmarks/export_warc.py``
(``--smoke``: 8 MiB in 4 files, seconds).
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SRC = Path(__file__).resolve().parent.parent / "src"
sys.path.insert(0, str(SRC))

from podarchive.core.types import Exchange  # noqa: E402
from podarchive.store import Archive  # noqa: E402
from podarchive.store.media_files import MediaFolder  # noqa: E402

MiB = 1024 * 1024
NOW = "2026-12-06T10:00:00Z"
REQUEST = (("Host", "cdn.example"), ("User-Agent", "podarchive"), ("Accept", "*/*"))


def make_archive(root: Path, size: int, files: int) -> list[tuple[str, str, int]]:
    """An archive at ``root/archive.db`` with media in ``root/media``: shows "Big" (7/8 of
    the files) and "Small" (1/8); returns (url, path, size) of every payload."""
    block = random.Random(27).randbytes(MiB)
    folder = MediaFolder(root / "media")
    each = size // files
    made = []
    with Archive(root / "archive.db") as archive:
        small = max(1, files // 8)
        feeds = {
            "Big": archive.ensure_feed("https://big.example/feed", "Big", NOW).id,
            "Small": archive.ensure_feed("https://small.example/feed", "Small", NOW).id,
        }
        for n in range(files):
            partial = folder.partial_path(f"bench-{n}")
            with partial.open("wb") as f:
                f.write(n.to_bytes(8, "big"))  # every file its own bytes
                for written in range(8, each, MiB):
                    f.write(block[: min(MiB, each - written)])
            payload = folder.commit(partial, ".mp3")
            archive.record_payload(payload.sha256, payload.size, "audio/mpeg", ".mp3", NOW)
            url = f"https://cdn.example/{n}.mp3"
            head = (("Content-Type", "audio/mpeg"), ("Content-Length", str(payload.size)))
            at = f"2026-12-06T10:{n // 60:02d}:{n % 60:02d}Z"
            exchange = Exchange("GET", url, REQUEST, "HTTP/1.1", 200, "OK", head, None, at)
            archive.record_captures(
                [exchange], kind="media", feed_id=feeds["Small" if n < small else "Big"],
                body_sha256=payload.sha256, body_size=payload.size,
            )  # fmt: skip
            made.append((url, str(payload.path), payload.size))
    return made


def child(args: list[str]) -> tuple[float, float]:
    """Run ``args``; (wall seconds, its peak resident set in MB)."""
    start = time.perf_counter()
    process = subprocess.Popen(args, stdout=subprocess.DEVNULL)
    _, status, usage = os.wait4(process.pid, 0)
    wall = time.perf_counter() - start
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"failed: {' '.join(args)}")
    return wall, usage.ru_maxrss / 1024


def reference(out: str, listing: str) -> None:
    """warcio's own writer, the same records: a response (same head, the file streamed)
    and a request for every payload in ``listing`` (url, path, size per line)."""
    from warcio.statusandheaders import StatusAndHeaders
    from warcio.warcwriter import WARCWriter

    with open(out, "wb") as stream:
        writer = WARCWriter(stream, gzip=True, warc_version="WARC/1.1")
        for line in Path(listing).read_text().splitlines():
            url, path, size = line.split("\t")
            head = [("Content-Type", "audio/mpeg"), ("Content-Length", size)]
            with open(path, "rb") as body:
                response = writer.create_warc_record(
                    url, "response", payload=body, length=int(size),
                    http_headers=StatusAndHeaders("200 OK", head, protocol="HTTP/1.1"),
                )  # fmt: skip
                writer.write_record(response)
            request = writer.create_warc_record(
                url, "request",
                http_headers=StatusAndHeaders("GET / HTTP/1.1", list(REQUEST), protocol=""),
            )  # fmt: skip
            writer.write_record(request)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=2048, help="MiB of media (default 2048)")
    parser.add_argument("--files", type=int, default=16)
    parser.add_argument("--rounds", type=int, default=2, help="alternated rounds (default 2)")
    parser.add_argument("--smoke", action="store_true", help="8 MiB in 4 files, one round")
    parser.add_argument("--tmp", default=None, help="where the archive and exports go")
    parser.add_argument("--reference", nargs=2, metavar=("OUT", "LISTING"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.reference:
        reference(*args.reference)
        return
    size, files = (8 * MiB, 4) if args.smoke else (args.size * MiB, args.files)
    if args.smoke:
        args.rounds = 1
    with tempfile.TemporaryDirectory(dir=args.tmp) as temp:
        root = Path(temp)
        made = make_archive(root, size, files)
        listing = root / "listing.tsv"
        listing.write_text("".join(f"{u}\t{p}\t{s}\n" for u, p, s in made))
        total = sum(s for _, _, s in made) / 1e6
        small = sum(s for _, _, s in made[: max(1, files // 8)]) / 1e6
        ours = [sys.executable, "-m", "podarchive", "export-warc"]
        db = ["--db", str(root / "archive.db")]
        os.environ["PYTHONPATH"] = str(SRC)
        out = str(root / "out.warc.gz")
        small_out = str(root / "small.warc.gz")
        commands = {
            "podarchive export-warc, 1/8": [*ours, small_out, *db, "--podcast", "Small"],
            "podarchive export-warc, all": [*ours, out, *db],
            "warcio WARCWriter, same records": [sys.executable, __file__, "--reference", out,
                                                str(listing)],
        }  # fmt: skip
        runs: dict[str, list[tuple[float, float]]] = {name: [] for name in commands}
        sizes: dict[str, int] = {}
        for n in range(args.rounds):  # ABBA: the machine's load falls on both alike
            order = list(commands) if n % 2 == 0 else list(reversed(commands))
            for name in order:
                runs[name].append(child(commands[name]))
                written = small_out if "1/8" in name else out
                sizes[name] = os.path.getsize(written)
                os.unlink(written)
        wacz = child([*ours, str(root / "out.wacz"), *db])
        mb = {name: small if "1/8" in name else total for name in commands}
        print(f"{'':34} {'payload MB':>10} {'wall s':>8} {'MB/s':>8} {'peak RSS MB':>12}")
        for name, measured in runs.items():
            wall = statistics.median(t for t, _ in measured)
            peak = max(r for _, r in measured)
            print(f"{name:34} {mb[name]:10.0f} {wall:8.1f} {mb[name] / wall:8.1f} {peak:12.1f}")
        print(f"{'podarchive export-warc, .wacz':34} {total:10.0f} {wacz[0]:8.1f} "
              f"{total / wacz[0]:8.1f} {wacz[1]:12.1f}")  # fmt: skip
        ours_all, ref = (statistics.median(t for t, _ in runs[k]) for k in list(commands)[1:])
        print(
            f"rounds: {args.rounds} (median wall); WARC bytes: "
            f"{', '.join(f'{k}: {v:,}' for k, v in sizes.items())}"
        )
        print(f"wall, podarchive / warcio: {ours_all / ref:.2f} (1.00: as fast)")
        peaks = [max(r for _, r in runs[k]) for k in list(commands)[:2]]
        print(f"peak RSS, all / 1/8: {peaks[1] / peaks[0]:.2f} (1.00: flat)")


if __name__ == "__main__":
    main()
