"""Run one ``update_feeds`` in a fresh process, as cron would, and report its own figures.

``python benchmarks/child_run.py ARCHIVE URLS_FILE`` prints one JSON object: wall and CPU
seconds of the run, the process's peak RSS in MB (after imports, before and during the
run), and the run's counts. The benchmark's own data (feed bodies, specs) never counts
against the archiver's memory this way.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

from common import bench_settings, peak_rss_mb, schedules

from podarchive.store import Archive
from podarchive.update.run import update_feeds


def main() -> None:
    archive_path, urls_file = sys.argv[1], sys.argv[2]
    urls = Path(urls_file).read_text().split()
    before = peak_rss_mb()
    with Archive(Path(archive_path)) as archive:
        cpu, wall = time.process_time(), time.perf_counter()
        report = update_feeds(archive, schedules(urls), settings=bench_settings())
        cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    print(
        json.dumps(
            {
                "wall": wall,
                "cpu": cpu,
                "rss_before_mb": before,
                "peak_rss_mb": peak_rss_mb(),
                "feeds": len(report.feeds),
                "failed": [f.error for f in report.failed][:3],
                "new": sum(f.stats.new for f in report.feeds),
                "not_modified": sum(f.not_modified for f in report.feeds),
            }
        )
    )


if __name__ == "__main__":
    main()
