"""An archive opened for a command that writes: the daily check, a one-off fill, a checkpoint.

Every writing command (``run``, the daemon's cycles, ``reparse``, ``backfill``) opens the
archive through :func:`working`: refused untouched unless it is an archive, given a
``quick_check`` once a day, given its extension elements (``tags``) from the stored snapshots
once after the upgrade to schema 9, and checkpointed afterwards so the WAL does not grow.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

from podarchive.core.clock import now_iso
from podarchive.core.errors import StorageError
from podarchive.store import Archive
from podarchive.tasks.status import plural

log = logging.getLogger("podarchive")


@contextmanager
def working(db_path: Path, *, create: bool = True) -> Iterator[Archive]:
    """The archive at ``db_path`` for a command that writes (see the module's docstring)."""
    with Archive(db_path, create=create) as archive:
        archive.check_daily()
        fill_tags_once(archive)
        try:
            yield archive
        except BaseException:
            with suppress(StorageError):  # the first error is the one to report
                archive.checkpoint()
            raise
        archive.checkpoint()


def fill_tags_once(archive: Archive) -> None:
    """After the upgrade to schema 9, once: feeds archived before it get their extension
    elements (``tags``) from their stored snapshots (a ``reparse`` of those feeds)."""
    if archive.feeds_without_tags():
        log.info("filling podcast tags from the stored snapshots (once, after the upgrade)")
        from podarchive.tasks.reparse import fill_tags

        for report in fill_tags(archive, now_iso()):
            replayed = plural(report.bodies, "body", "bodies")
            log.info("%s: %s replayed for its tags", report.label, replayed)
