"""Updating the archive: a run over many feeds, one feed's pipeline, and its pages and files."""
