"""``podarchive export-bag`` as a use case (#27): what goes in the bag, and how it is made.

A bag is written into a new hidden sibling of its folder (``.NAME.partial-XXXXXXXX``) and
renamed into place only once it is complete, so a failed or interrupted export (Ctrl-C,
SIGTERM) leaves no half bag: the sibling is removed. Its payload (``data/``):

- ``archive.db``: a consistent copy of the archive (SQLite's backup API, one read
  transaction: a running ``run`` may keep writing), in rollback-journal mode;
- ``media/ab/cd/<sha256><ext>``: every payload the copy's ledger lists as an episode's
  version, streamed from the media folder and re-hashed on the way; a payload missing there,
  or whose bytes no longer hash to its name, is left out, told (``on_left_out``) and listed
  in the README (``--no-media``: none, and the README says so);
- ``feeds.opml``: the copy's feeds (OPML 2.0, :func:`~podarchive.read.opml.render_opml`);
- ``README.txt``: what each file is, how to open the archive and check the bag.

Then :func:`podarchive.formats.bag.make_bag` writes the SHA-256 (and with ``sha512`` also
SHA-512) manifests and ``bag-info.txt``, and the bag's completeness is checked.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import secrets
import shutil
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from podarchive import PROJECT_URL, __version__
from podarchive.core.errors import ConfigError, MediaStoreError
from podarchive.formats.bag import bagit_version, make_bag, validate_bag
from podarchive.read.opml import OpmlFeed, render_opml
from podarchive.store.bag_reads import ArchiveCopy, BagPayload, copy_archive, payload_labels
from podarchive.store.media_files import MediaFolder
from podarchive.tasks.status import plural, size_text

CHUNK = 1 << 20  # bytes read and written at a time while copying a payload
ARCHIVE_NAME = "archive.db"
MEDIA_NAME = "media"
OPML_NAME = "feeds.opml"
README_NAME = "README.txt"
#: bag-info.txt names the export writes itself; ``--info`` may not give them.
RESERVED_INFO = frozenset({"Payload-Oxum", "Bagging-Date", "Bag-Software-Agent"})
_INFO_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9-]{0,63}")


@dataclass(frozen=True, slots=True)
class LeftOut:
    """A payload the bag does not hold, and why (``missing`` from the media folder, or
    ``changed``: its bytes hash to ``found``)."""

    payload: BagPayload
    why: str
    found: str | None = None
    episodes: str = ""  # whose version it is, for the warning and the README

    @property
    def name(self) -> str:
        return f"{self.payload.sha256}{self.payload.ext}"

    @property
    def reason(self) -> str:
        if self.why == "missing":
            return "missing from the media folder"
        return f"its bytes changed (they now hash to {self.found})"


@dataclass(slots=True)
class BagReport:
    """What an export put in its bag."""

    path: Path
    archive: ArchiveCopy
    media: bool  # False: exported with --no-media
    copied: int = 0  # payloads in the bag
    copied_bytes: int = 0
    left_out: list[LeftOut] = field(default_factory=list)

    @property
    def podcasts(self) -> int:
        return len(self.archive.feeds)


def parse_info(items: Iterable[str]) -> dict[str, list[str]]:
    """``--info NAME=VALUE`` items as bag-info.txt fields (a name given twice: two lines);
    ConfigError (exit 2) for an item that is no field, or one the export writes itself."""
    fields: dict[str, list[str]] = {}
    for item in items:
        name, sep, value = item.partition("=")
        name, value = name.strip(), value.strip()
        if not sep or not _INFO_NAME.fullmatch(name) or not value or not value.isprintable():
            raise ConfigError(f"--info: {item!r} is not NAME=VALUE (e.g. Contact-Name=Ada)")
        if name in RESERVED_INFO:
            raise ConfigError(f"--info: {name} is written by export-bag itself")
        fields.setdefault(name, []).append(value)
    return fields


def check_target(target: Path) -> None:
    """Refuse (ConfigError, exit 2) a bag folder that exists and is not an empty folder, or
    whose parent folder does not exist."""
    if target.is_dir():
        if any(target.iterdir()):
            raise ConfigError(f"{target} exists and is not empty; give a new folder")
    elif target.exists() or target.is_symlink():
        raise ConfigError(f"{target} exists and is not a folder; give a new folder")
    elif not target.parent.is_dir():
        raise ConfigError(f"{target.parent}: no such folder")


def export_bag(
    db: Path,
    target: Path,
    *,
    media_dir: Path | None,
    now: datetime,
    info: Mapping[str, Sequence[str]] | None = None,
    algorithms: Sequence[str] = ("sha256",),
    on_left_out: Callable[[LeftOut], None] | None = None,
) -> BagReport:
    """Write the bag of the archive at ``db`` (with the payloads of ``media_dir``; None:
    without media) to the new folder ``target``; see the module's docstring. ``info``:
    extra bag-info.txt fields (``Source-Organization``, ``Contact-Email``…)."""
    check_target(target)
    partial = target.parent / f".{target.name}.partial-{secrets.token_hex(4)}"
    made = False  # never remove a folder this export did not make
    try:
        partial.mkdir()
        made = True
        copy = copy_archive(db, partial / ARCHIVE_NAME)
        report = BagReport(target, copy, media=media_dir is not None)
        if media_dir is not None:
            _copy_media(report, MediaFolder(media_dir), partial / MEDIA_NAME, on_left_out)
        (partial / OPML_NAME).write_bytes(_opml(copy, now))
        (partial / README_NAME).write_text(readme(report, now), encoding="utf-8")
        fields = bag_info(report, now, info or {}, _folder_bytes(partial))
        make_bag(partial, fields, algorithms)
        validate_bag(partial, completeness_only=True)
        partial.rename(target)  # onto an empty folder, or a new name
    except BaseException:
        if made:
            shutil.rmtree(partial, ignore_errors=True)
        raise
    return report


def _copy_media(
    report: BagReport,
    folder: MediaFolder,
    into: Path,
    on_left_out: Callable[[LeftOut], None] | None,
) -> None:
    """Copy each payload of the copy's ledger into ``into``, the folder's layout kept."""
    left: list[LeftOut] = []
    for payload in report.archive.payloads:
        try:
            source = folder.path_of(payload.sha256, payload.ext)
        except MediaStoreError:  # not a payload name: nothing to find in the folder
            left.append(LeftOut(payload, "missing"))
            continue
        found = copy_payload(source, into / source.relative_to(folder.root), payload.sha256)
        if found == payload.sha256:
            report.copied += 1
            report.copied_bytes += payload.size
        else:
            left.append(LeftOut(payload, "missing" if found is None else "changed", found))
    labels = payload_labels(report.archive.path, [x.payload.sha256 for x in left])
    for x in left:
        labelled = LeftOut(x.payload, x.why, x.found, labels.get(x.payload.sha256, ""))
        report.left_out.append(labelled)
        if on_left_out is not None:
            on_left_out(labelled)


def copy_payload(source: Path, target: Path, sha256: str) -> str | None:
    """Stream ``source`` to the new file ``target``, hashing it; its SHA-256, or None when
    there is no ``source``. A copy that does not hash to ``sha256`` is removed again."""
    digest = hashlib.sha256()
    buffer = bytearray(CHUNK)
    view = memoryview(buffer)
    try:
        reader = open(source, "rb")  # noqa: SIM115 (closed by the with below)
    except FileNotFoundError:
        return None
    with reader:
        target.parent.mkdir(parents=True, exist_ok=True)
        with open(target, "xb") as writer:
            while n := reader.readinto(buffer):
                digest.update(view[:n])
                writer.write(view[:n])
        stat = os.fstat(reader.fileno())
    found = digest.hexdigest()
    if found != sha256:
        target.unlink()
        _remove_empty(target.parent, levels=2)
    else:
        os.utime(target, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    return found


def _remove_empty(folder: Path, levels: int) -> None:
    for _ in range(levels):
        with contextlib.suppress(OSError):  # not empty: another payload is there
            folder.rmdir()
        folder = folder.parent


def _opml(copy: ArchiveCopy, now: datetime) -> bytes:
    feeds = [OpmlFeed(f.url, f.name) for f in copy.feeds]
    return render_opml(feeds, "podarchive: the feeds of this bag's archive", now)


def bag_info(
    report: BagReport, now: datetime, extra: Mapping[str, Sequence[str]], size: int
) -> dict[str, str | list[str]]:
    """bag-info.txt's fields (bagit adds ``Payload-Oxum``) for a payload of ``size`` bytes;
    ``extra`` replaces any of the same name."""
    copy = report.archive
    media = (
        f"{plural(report.copied, 'media file')} ({size_text(report.copied_bytes)})"
        if report.media
        else "no media files (exported with --no-media)"
    )
    fields: dict[str, str | list[str]] = {
        "External-Description": (
            f"A podarchive archive of {plural(report.podcasts, 'podcast')} and "
            f"{plural(copy.episodes, 'episode')}: the SQLite archive ({ARCHIVE_NAME}), "
            f"{media}, the feeds as OPML ({OPML_NAME}); see data/{README_NAME}"
        ),
        "Bagging-Date": now.date().isoformat(),
        "Bag-Software-Agent": (
            f"podarchive {__version__} <{PROJECT_URL}> (bagit.py {bagit_version()})"
        ),
        "Bag-Size": size_text(size),
        "Podarchive-Version": __version__,
        "Podarchive-Schema-Version": str(copy.schema_version),
        "Podarchive-Podcasts": str(report.podcasts),
        "Podarchive-Episodes": str(copy.episodes),
        "Podarchive-Media-Payloads": str(report.copied),
        "Podarchive-Media-Left-Out": str(len(copy.payloads) - report.copied),
    }
    fields.update({name: list(values) for name, values in extra.items()})
    return fields


def _folder_bytes(folder: Path) -> int:
    """The bytes of every file under ``folder``."""
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())


def readme(report: BagReport, now: datetime) -> str:
    """data/README.txt: what is in the bag, how to open and check it, what was left out."""
    copy = report.archive
    lines = [
        "A podarchive bag",
        "================",
        "",
        f"Made on {now.strftime('%Y-%m-%d %H:%M UTC')} by podarchive {__version__} "
        f"({PROJECT_URL}): a BagIt 1.0 bag (RFC 8493) of an archive of "
        f"{plural(report.podcasts, 'podcast')} and {plural(copy.episodes, 'episode')}.",
        "",
        "What is here",
        "------------",
        "",
        f"data/{ARCHIVE_NAME}",
        f"    The archive, one SQLite file (schema version {copy.schema_version}) copied with",
        "    SQLite's backup API as it was at one moment: feeds, episodes, show notes,",
        "    links, pages, transcripts, chapters, every fetch, and the media ledger",
        "    (media_payloads, episode_media, media_fetches, fixity_events). Its tables:",
        f"    {PROJECT_URL}/blob/main/docs/archive.md",
        *_media_lines(report),
        f"data/{OPML_NAME}",
        "    The archive's feeds as OPML 2.0: any podcast app imports it, and so does",
        "    'podarchive import'.",
        f"data/{README_NAME}",
        "    This file.",
        "manifest-*.txt, tagmanifest-*.txt, bagit.txt, bag-info.txt (beside data/)",
        "    The bag itself: a checksum of every file, and what the bag holds.",
        "",
        "Opening it",
        "----------",
        "",
        "Browse and search the archive with Datasette (https://datasette.io), without",
        "changing it:",
        "",
        f"    datasette --immutable data/{ARCHIVE_NAME}",
        "",
        "or with podarchive, which also plays the media files kept here:",
        "",
        f"    podarchive serve --db data/{ARCHIVE_NAME}",
        "",
        "Checking it",
        "-----------",
        "",
        "    bagit.py --validate BAG          every file against the manifests",
        f"    podarchive check --db data/{ARCHIVE_NAME}",
        "                                     the SQLite file (integrity, keys, search)",
        "",
        "Work on a copy of the bag: podarchive commands that write (run, audit, reparse)",
        "would change data/ and the bag would no longer validate.",
        *_left_out_lines(report),
    ]
    return "\n".join(lines) + "\n"


def _media_lines(report: BagReport) -> list[str]:
    copy = report.archive
    if not report.media:
        return [
            f"(no data/{MEDIA_NAME}/)",
            "    Exported with --no-media: none of the "
            f"{plural(len(copy.payloads), 'media file')} the ledger lists is in this bag.",
        ]
    return [
        f"data/{MEDIA_NAME}/ab/cd/<sha256><ext>",
        f"    {plural(report.copied, 'media file')} ({size_text(report.copied_bytes)}), each "
        "stored once under the SHA-256 of",
        "    its bytes (media_payloads.sha256) as podarchive keeps them: byte-exact, never",
        "    re-tagged. episode_media says which episode each file is a version of.",
    ]


def _left_out_lines(report: BagReport) -> list[str]:
    if not report.left_out:
        return []
    lines = [
        "",
        "Left out",
        "--------",
        "",
        f"{plural(len(report.left_out), 'media file')} of the archive's ledger could not be "
        "put in this bag: missing",
        "from the media folder, or their bytes no longer hash to their name. The ledger in",
        "data/archive.db still lists them; 'podarchive audit' on the original archive",
        "records the damage.",
        "",
    ]
    for x in report.left_out:
        lines.append(f"    {x.name}: {x.reason}")
        if x.episodes:
            lines.append(f"        {x.episodes}")
    return lines


def left_out_line(x: LeftOut) -> str:
    """The warning for a payload left out of the bag."""
    whose = f" ({x.episodes})" if x.episodes else ""
    return f"podarchive: warning: media file {x.name}{whose}: {x.reason}; left out of the bag"


def summary_line(report: BagReport) -> str:
    """What the bag holds, in one line."""
    copy = report.archive
    media = (
        f"{plural(report.copied, 'media file')} ({size_text(report.copied_bytes)})"
        if report.media
        else "no media files"
    )
    left = f", {len(report.left_out)} left out (see data/{README_NAME})" if report.left_out else ""
    return (
        f"bagged {copy.path.name} ({plural(report.podcasts, 'podcast')}, "
        f"{plural(copy.episodes, 'episode')}), {media}{left} in {report.path}"
    )
