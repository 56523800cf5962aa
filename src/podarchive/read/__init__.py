"""Reading: bytes in, values out.

Feeds, the podcast namespace, transcripts, chapters, OPML, schedule files, and the show notes
of episode pages (:mod:`~podarchive.read.extract`). Pure: no network, no database.
"""
