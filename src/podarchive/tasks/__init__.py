"""One-off tasks over an archive: backfill, reparse, feed discovery and the status report."""
