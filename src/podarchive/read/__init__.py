"""Reading: bytes in, values out.

Feeds, the podcast namespace, transcripts, chapters, OPML, schedule files, and the show notes
of episode pages (:mod:`~podarchive.read.extract`). Pure: no network, no database.
"""

from podarchive.read.deferred import SELDOM_USED, defer

defer(*SELDOM_USED)  # before a module of the package imports feedparser or bs4 (#30)
