"""The rules: pure decisions over plain data.

When a feed is due, back-off, re-check ages, what counts as a change, crontab maths, shards.
"""
