"""``export-bag``: the archive as a BagIt 1.0 bag (#27), for an archivist's shelf."""

from __future__ import annotations

import signal
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import click

from podarchive.cli.common import (
    STOPPED_BY,
    CommandFailure,
    Interrupted,
    archive_option,
    translate_errors,
    verbosity,
)


class Stopped(CommandFailure):
    """SIGTERM or SIGHUP while a bag was being written: exit 128 + the signal's number."""

    def __init__(self, number: int) -> None:
        super().__init__(f"{STOPPED_BY[signal.Signals(number)]}; no bag was written")
        self.exit_code = 128 + number  # type: ignore[misc]  # click: a ClassVar


@contextmanager
def _signals_stop() -> Iterator[None]:
    """Ctrl-C, SIGTERM and SIGHUP raise where the export is, so that it removes its
    unfinished bag on the way out (one line, exit 128 + the signal's number)."""

    def on_signal(number: int, frame: Any) -> None:
        raise Stopped(number)

    previous = {n: signal.signal(n, on_signal) for n in (signal.SIGTERM, signal.SIGHUP)}
    try:
        yield
    except KeyboardInterrupt as e:
        raise Interrupted("interrupted; no bag was written") from e
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)


@click.command("export-bag")
@click.argument("bag_dir", metavar="DIR", type=click.Path(path_type=Path))
@archive_option("The archive file to export (never changed; a running 'run' may go on).")
@click.option(
    "--media/--no-media",
    default=True,
    show_default=True,
    help="Put the media files (PODARCHIVE_MEDIA_DIR, else media/ beside --db) in the bag.",
)
@click.option("--sha512", is_flag=True, help="SHA-512 manifests too (hashing takes ~3x longer).")
@click.option(
    "--info",
    "info",
    multiple=True,
    metavar="NAME=VALUE",
    help="A bag-info.txt field, e.g. 'Source-Organization=Example Library' or "
    "Contact-Email=archive@example.org (repeatable).",
)
@verbosity
@translate_errors
def export_bag(
    bag_dir: Path, db_path: Path, media: bool, sha512: bool, info: tuple[str, ...]
) -> None:
    """Write the archive, its media and its feeds to DIR as a BagIt 1.0 bag.

    The bag's data/ holds a consistent copy of the archive (made with SQLite's backup API:
    a running 'run' or daemon may keep writing), the media files in their content-addressed
    layout, the feeds as OPML and a README; SHA-256 manifests (--sha512: SHA-512 too) and
    bag-info.txt (--info adds fields) are beside it.

    DIR must be new or an empty folder (else exit 2). The bag is written beside it under a
    hidden name and renamed to DIR when complete: a failed or interrupted export (Ctrl-C,
    SIGTERM) leaves no half bag. A media file missing from the media folder, or whose bytes
    no longer hash to its name, is left out with one warning line each and a note in the
    bag's README. Check the bag with 'bagit.py --validate DIR' and its archive with
    'podarchive check --db DIR/data/archive.db'.
    """
    from podarchive.core.clock import utcnow
    from podarchive.core.settings import media_dir_for, settings_from_env
    from podarchive.tasks.export_bag import export_bag as write_bag
    from podarchive.tasks.export_bag import left_out_line, parse_info, summary_line

    fields = parse_info(info)
    media_dir = media_dir_for(db_path, settings_from_env()) if media else None
    algorithms = ("sha256", "sha512") if sha512 else ("sha256",)
    with _signals_stop():
        report = write_bag(
            db_path, bag_dir, media_dir=media_dir, now=utcnow(), info=fields,
            algorithms=algorithms, on_left_out=lambda x: click.echo(left_out_line(x), err=True),
        )  # fmt: skip
    click.echo(summary_line(report))


COMMANDS = (export_bag,)
