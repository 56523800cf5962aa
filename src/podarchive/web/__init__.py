"""Browsing the archive: the Datasette server, its plugin and templates, and cross-shard search."""
