"""Formats others read: WARC records (warcio), WACZ packages (wacz), BagIt bags (bagit) (#27),
and the feeds the archive writes (feedgen: change feeds, republished podcasts, #28).

Each library is used by one module here; what to write comes from the layers above
(:mod:`podarchive.tasks`), as plain values.
"""
