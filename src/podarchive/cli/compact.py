"""``podarchive compact`` (#30): give an archive its free pages back."""

from __future__ import annotations

from pathlib import Path

import click

from podarchive.cli.common import CommandFailure, archive_option, translate_errors, verbosity


@click.command()
@archive_option("The archive file to compact (it must exist).")
@verbosity
@translate_errors
def compact(db_path: Path) -> None:
    """Give the archive's free pages back to the disk; print its size before and after.

    Writes a compact copy beside the archive (it needs that much free space), checks it, then
    renames it over the archive. Refused while a run or a daemon holds the archive, or while
    another program (a server) has it open; a failure leaves the archive as it was.
    """
    if not db_path.exists():
        raise CommandFailure(f"no archive at {db_path}")
    from podarchive.tasks.compact import compact as compact_archive
    from podarchive.tasks.compact import compacted_line

    click.echo(compacted_line(compact_archive(db_path)))


COMMANDS = (compact,)
