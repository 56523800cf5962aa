"""The archive's history as feeds (#28): ``changes`` (what changed, as Atom or JSON Feed,
with a cursor) and ``republish`` (an archived podcast as a feed again)."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

import click

from podarchive.cli.common import CommandFailure, archive_option, translate_errors, verbosity

_OUT = click.Path(dir_okay=False, allow_dash=True, path_type=Path)


def _writer(out: Path) -> tuple[Path | None, Callable[[bytes], object] | None]:
    """(the file to write, or None and a writer to stdout for ``-o -``)."""
    if str(out) == "-":
        return None, sys.stdout.buffer.write
    return out, None


@click.command()
@archive_option("The archive file to read (it must exist; it is not written).")
@click.option("--podcast", metavar="NAME", help="Only this podcast (its URL, name, title or id).")
@click.option(
    "--since",
    metavar="DATE",
    help="Changes from this date (2026-12-01) or time on, or after this cursor token.",
)
@click.option("--after", metavar="TOKEN", help="Changes after this cursor (a run printed it).")
@click.option(
    "--limit",
    type=int,
    metavar="N",
    help="At most N: the first after --since/--after, else the latest.",
)
@click.option(
    "--format", "fmt", type=click.Choice(["atom", "json"]),
    help="Atom (default) or JSON Feed 1.1 (the default for a FILE ending in .json).",
)  # fmt: skip
@click.option("--base-url", metavar="URL", help="Link each change to its page on this 'serve'.")
@click.option(
    "-o", "--output", "out", type=_OUT, required=True, help="The feed file (- for stdout)."
)
@verbosity
@translate_errors
def changes(
    db_path: Path,
    podcast: str | None,
    since: str | None,
    after: str | None,
    limit: int | None,
    fmt: str | None,
    base_url: str | None,
    out: Path,
) -> None:
    """Write what changed in the archive as a feed: new episodes, edits (with a diff),
    enclosures replaced, episodes removed, pages, transcripts and chapters revised, feeds
    moved or gone.

    Each change has a stable id and a cursor; the cursor of the last one written is printed
    (unless the feed goes to stdout). Pass it back with --after, and the next run writes only
    what changed since, in order: a cron job sees every change exactly once.
    """
    from podarchive.tasks.changes import write_changes

    if not db_path.exists():
        raise CommandFailure(f"no archive at {db_path}")
    target, write = _writer(out)
    chosen = fmt or ("json" if out.suffix.lower() == ".json" else "atom")
    written = write_changes(
        db_path, target, (since, after, limit), podcast=podcast,
        fmt="json" if chosen == "json" else "atom", base_url=base_url,
        write=write,
    )  # fmt: skip
    if target is not None and written.cursor:
        click.echo(written.cursor)


@click.command()
@click.argument("podcast")
@archive_option("The archive file to read (it must exist; it is not written).")
@click.option("--media-base", metavar="URL", help="Enclosures at the archived copies under URL.")
@click.option(
    "--base-url", metavar="URL",
    help="A 'serve' of this archive: media, transcripts and chapters at its archived copies.",
)  # fmt: skip
@click.option(
    "-o", "--output", "out", type=_OUT, required=True, help="The feed file (- for stdout)."
)
@verbosity
@translate_errors
def republish(
    podcast: str, db_path: Path, media_base: str | None, base_url: str | None, out: Path
) -> None:
    """Write an archived PODCAST (its URL, name, title or id) as an RSS feed again.

    RSS 2.0 with iTunes and Podcasting 2.0 elements, every episode ever archived, those the
    feed no longer lists marked (archive:removed, archive:unlisted). Enclosures point at the
    archived media when it is kept and --media-base (or --base-url) says where it is
    published, else at the original URLs.
    """
    from podarchive.tasks.republish import republish as write_feed

    if not db_path.exists():
        raise CommandFailure(f"no archive at {db_path}")
    target, write = _writer(out)
    done = write_feed(
        db_path, podcast, target, media_base=media_base, base_url=base_url,
        write=write,
    )  # fmt: skip
    if target is not None:
        click.echo(
            f"{done.title}: {done.episodes} episodes ({done.removed} no longer in the feed, "
            f"{done.archived_media} with archived media) → {target}"
        )


COMMANDS = (changes, republish)
