"""podarchive: a scheduled archiver for podcasts (feeds, episode pages, show notes, links)."""

__version__ = "0.1.0"
PROJECT_URL = "https://github.com/podarchive/podarchive"
USER_AGENT = f"podarchive/{__version__} (+{PROJECT_URL})"
