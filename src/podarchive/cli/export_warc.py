"""``podarchive export-warc``: the archive as a WARC/1.1 file or a WACZ 1.1 package (#27)."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import click

from podarchive.cli.common import (
    CommandFailure,
    _locked,
    archive_option,
    translate_errors,
    verbosity,
)


@click.command("export-warc")
@click.argument("out", type=click.Path(dir_okay=False, path_type=Path))
@archive_option("The archive file to export (it must exist).")
@click.option(
    "--podcast",
    "podcasts",
    multiple=True,
    metavar="NAME",
    help="Only this podcast (schedule name, title or feed URL); repeatable. Default: all.",
)
@click.option(
    "--since",
    type=click.DateTime(formats=["%Y-%m-%d"]),
    metavar="DATE",
    help="Only what was fetched on or after DATE (YYYY-MM-DD, UTC).",
)
@click.option(
    "--media/--no-media", default=True, show_default=True, help="Include the media files."
)
@verbosity
@translate_errors
def export_warc(
    out: Path, db_path: Path, podcasts: tuple[str, ...], since: datetime | None, media: bool
) -> None:
    """Write the archive's captures as OUT.warc.gz (WARC/1.1), or a WACZ if OUT ends in .wacz.

    Every fetch becomes request and response records with the exact body as stored (decoded;
    the original Content-Encoding is kept as X-Archive-Orig-Content-Encoding), a body seen
    before at the same URL a revisit, a 304 a server-not-modified revisit, and every episode
    a metadata record of its row. A WACZ adds a CDXJ index, pages.jsonl (each podcast's feed
    and each episode page) and datapackage.json. Media files are streamed. docs/export.md.
    """
    from podarchive.core.settings import media_dir_for, settings_from_env
    from podarchive.store import Archive
    from podarchive.store.media_files import MediaFolder
    from podarchive.tasks.export_warc import ExportOptions, summary
    from podarchive.tasks.export_warc import export_warc as run_export

    if not db_path.exists():
        raise CommandFailure(f"no archive at {db_path}")
    settings = settings_from_env()
    options = ExportOptions(
        podcasts, since.strftime("%Y-%m-%dT00:00:00Z") if since else None, media,
        settings.operator,
    )  # fmt: skip
    folder = MediaFolder(media_dir_for(db_path, settings))
    with _locked(db_path), Archive(db_path, create=False) as archive:
        report = run_export(archive, out, folder, options)
    click.echo(summary(report))


COMMANDS = (export_warc,)
