"""The daemon: podarchive's own scheduler, for when cron is not used."""
