"""Past one machine (#16): feeds sharded over workers on Dramatiq over Redis.

- :mod:`~podarchive.rules.shards`: which shard a feed belongs to, and the shard files
  (pure; no Redis, no SQLite);
- :mod:`~podarchive.cluster.broker`: the only Dramatiq and Redis user: the cluster's
  settings, the due index, the enqueue claims, the messages and worker heartbeats;
- :mod:`~podarchive.cluster.host_turns`: per-host politeness held in Redis, for every
  worker at once (through the broker module's connection);
- :mod:`~podarchive.cluster.worker`: ``podarchive worker``: one shard's archive, written by
  one long-lived run fed by the broker's messages;
- :mod:`~podarchive.cluster.dispatch`: ``podarchive scheduler``: due-ness from the shards'
  own ``next_due_at``, each due feed enqueued once;
- :mod:`~podarchive.cluster.reshard`: ``podarchive reshard``: feeds re-homed with their
  whole history when the number of shards changes;
- :mod:`~podarchive.cluster.shard_status`: ``status --shards-dir``: every shard in one report.

The single-machine mode (``run``, ``daemon``) never imports this package.
"""
