"""reader's side of ``vs_peers.py``, run with the python of reader's own virtualenv.

``reader_run.py DB add URLS_FILE`` creates the database and adds the feeds (not timed);
``reader_run.py DB update`` updates every feed, as ``vs_reader.py`` does (``workers=8``,
``scheduled=False``: every feed is polled now, as ``podarchive run --all`` does). The
benchmark counts the stored entries itself, outside the timed process.
"""

from __future__ import annotations

import sys
from pathlib import Path

from reader import make_reader


def main() -> None:
    db, mode, *rest = sys.argv[1:]
    reader = make_reader(db)
    try:
        if mode == "add":
            for url in Path(rest[0]).read_text().split():
                reader.add_feed(url)
        elif mode == "update":
            reader.update_feeds(workers=8, scheduled=False)
        else:
            sys.exit(f"unknown mode {mode!r}")
    finally:
        reader.close()


if __name__ == "__main__":
    main()
