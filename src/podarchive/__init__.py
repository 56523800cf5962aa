"""podarchive: a scheduled archiver for podcasts (feeds, episode pages, show notes, links)."""

import sys

__version__ = "0.1.0"
PROJECT_URL = "https://github.com/podarchive/podarchive"
USER_AGENT = f"podarchive/{__version__} (+{PROJECT_URL})"

# httpx's package imports its command-line client (rich, pygments, click) whenever rich is
# installed, as it is for backfill's progress bars: 60 ms and 6 MB of every cron run's start-up
# for a client podarchive never runs (#15). A None entry makes just that import fail, which
# httpx expects (it then defines a stub ``httpx.main``); rich still loads where we use it.
sys.modules.setdefault("httpx._main", None)  # type: ignore[arg-type]
