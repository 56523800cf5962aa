"""The archivists' formats (#27): WARC records (warcio), WACZ packages, BagIt bags (bagit).

Each library is used by one module here; what to write comes from the layers above
(:mod:`podarchive.tasks`), as plain values.
"""
