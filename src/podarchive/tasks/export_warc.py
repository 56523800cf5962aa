"""``podarchive export-warc`` (#27): the archive as WARC/1.1 records, or a WACZ 1.1 package.

Every capture (one HTTP exchange the archive recorded, :meth:`Archive.captures`) becomes a
``request`` record and, by what it brought back:

- a body kept in the archive, first seen at its URL: a ``response`` record with the exact
  stored bytes (decoded: see :func:`podarchive.formats.warc.replay_headers`) and a
  ``WARC-Payload-Digest`` of ``sha256:<the stored body's SHA-256 in hex>``; media are
  streamed from the media folder, never read whole;
- the same body at the same URL again: a ``revisit`` (identical-payload-digest) naming the
  first record;
- a 304: a ``revisit`` (server-not-modified) naming the URL's latest record;
- no body (a redirect hop, an error): a ``response`` with the head and an empty payload;
- a body received but not kept (only its digest is): a ``metadata`` record saying so.

Bodies stored before captures existed (:meth:`Archive.uncaptured_bodies`) are ``resource``
records, each followed by a ``metadata`` record of the headers known for it. Every episode
exported is a ``metadata`` record (its row as JSON) referring to its page's, else its feed's,
latest record. The file starts with a ``warcinfo`` record. docs/export.md has the mapping.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import os
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO

from podarchive import __version__
from podarchive.core.clock import now_iso
from podarchive.core.errors import ConfigError, ExportError
from podarchive.formats.wacz import Page, package
from podarchive.formats.warc import WRITER, HttpHead, WarcWriter, replay_headers
from podarchive.store.export_reads import (
    episode_rows,
    episode_titles,
    feed_ids_named,
    feed_titles,
)

if TYPE_CHECKING:
    from podarchive.core.types import Capture, UncapturedBody
    from podarchive.store import Archive
    from podarchive.store.media_files import MediaFolder

SOFTWARE = f"podarchive/{__version__}"
EMPTY_SHA256 = hashlib.sha256(b"").hexdigest()
ALL_KINDS = ("feed", "page", "transcript", "chapters", "backfill", "media")
EPISODE_URN = "urn:podarchive:episode:"
#: a metadata record about a URL is aimed at this URN + the URL, never the URL itself: at
#: the URL, replay tools would serve the metadata for the page
ABOUT_URN = "urn:podarchive:about:"
WARC_SUFFIX = ".warc.gz"


@dataclass(frozen=True, slots=True)
class ExportOptions:
    """What to export: the podcasts named (by schedule name, title or URL; none: all),
    the captures since a time (ISO 8601; None: all), and whether media files go in."""

    podcasts: tuple[str, ...] = ()
    since: str | None = None
    media: bool = True
    operator: str = ""


@dataclass(slots=True)
class ExportReport:
    """What an export wrote."""

    path: Path
    records: int = 0
    responses: int = 0
    revisits: int = 0
    resources: int = 0
    metadata: int = 0
    payload_bytes: int = 0


def output_paths(out: Path) -> tuple[Path, Path | None]:
    """(the WARC written, the WACZ it is packaged into or None) for the argument ``OUT``:
    ``x.wacz`` → a WARC ``x.warc.gz`` inside the package ``x.wacz``; ``x.warc.gz`` → itself;
    anything else ``x`` → ``x.warc.gz``."""
    if out.name.endswith(".wacz"):
        return out.with_name(out.name[: -len(".wacz")] + WARC_SUFFIX), out
    if out.name.endswith(WARC_SUFFIX):
        return out, None
    return out.with_name(out.name + WARC_SUFFIX), None


def selected_feeds(archive: Archive, podcasts: tuple[str, ...]) -> list[int] | None:
    """The feed ids ``podcasts`` name (None: every feed); a name matching no feed is a
    ConfigError."""
    if not podcasts:
        return None
    found = feed_ids_named(archive, podcasts)
    unknown = [name for name, ids in found.items() if not ids]
    if unknown:
        raise ConfigError(f"no podcast named {unknown[0]!r} in the archive")
    return sorted({i for ids in found.values() for i in ids})


def export_warc(
    archive: Archive, out: Path, folder: MediaFolder, options: ExportOptions
) -> ExportReport:
    """Write the export ``out`` (see :func:`output_paths`): a temporary file, renamed into
    place once whole, so a failed export leaves nothing behind."""
    warc_path, wacz_path = output_paths(out)
    final = wacz_path or warc_path
    feed_ids = selected_feeds(archive, options.podcasts)
    with _temporary(final.parent, warc_path.name) as temp_warc:
        exporter = _Exporter(archive, folder, options, feed_ids, warc_path.name)
        with _open_out(temp_warc) as stream:
            exporter.write_all(stream)
        if wacz_path is None:
            os.replace(temp_warc, warc_path)
        else:
            _package(archive, exporter, temp_warc, wacz_path)
    exporter.report.path = final
    return exporter.report


def _package(archive: Archive, exporter: _Exporter, warc: Path, wacz: Path) -> None:
    """``warc`` (a temporary file, named as inside the package) packaged as ``wacz``."""
    named = warc.with_name(exporter.warc_name)
    os.replace(warc, named)
    with _temporary(wacz.parent, wacz.name) as temp_wacz:
        temp_wacz.unlink()  # the zip is created by name
        package(named, temp_wacz, exporter.pages(archive), title=exporter.title)
        os.replace(temp_wacz, wacz)


@contextlib.contextmanager
def _temporary(folder: Path, name: str) -> Iterator[Path]:
    """A fresh file in a fresh folder inside ``folder`` (removed with what is left in it)."""
    try:
        with tempfile.TemporaryDirectory(prefix=".export-", dir=folder) as temp:
            path = Path(temp) / name
            path.touch()
            yield path
    except FileNotFoundError as e:
        raise ExportError(f"cannot write in {folder}: no such folder") from e
    except PermissionError as e:
        raise ExportError(f"cannot write in {folder}: permission denied") from e


@contextlib.contextmanager
def _open_out(path: Path) -> Iterator[BinaryIO]:
    try:
        with path.open("wb") as stream:
            yield stream
    except OSError as e:
        raise ExportError(f"cannot write {path.name}: {e.strerror or e}") from e


@dataclass(slots=True)
class _Seen:
    """What the export remembers of the records it wrote (a few small values per URL)."""

    #: (url, sha256) → (record id, date) of the record that holds that payload at that URL
    payloads: dict[tuple[str, str], tuple[str, str]] = field(default_factory=dict)
    #: url → (record id, date, sha256) of its latest record with a payload
    latest: dict[str, tuple[str, str, str]] = field(default_factory=dict)
    feed_pages: dict[int, tuple[str, str]] = field(default_factory=dict)  # feed → (url, ts)
    episode_pages: dict[int, tuple[str, str]] = field(default_factory=dict)
    episode_records: dict[int, str] = field(default_factory=dict)  # its page's latest record
    feed_records: dict[int, str] = field(default_factory=dict)  # its feed's latest record


class _Exporter:
    def __init__(
        self,
        archive: Archive,
        folder: MediaFolder,
        options: ExportOptions,
        feed_ids: list[int] | None,
        warc_name: str,
    ) -> None:
        self.archive, self.folder, self.options = archive, folder, options
        self.feed_ids, self.warc_name = feed_ids, warc_name
        self.seen = _Seen()
        self.report = ExportReport(Path(warc_name))
        self.title = f"podarchive export of {Path(str(archive.path)).name}"
        self.kinds = ALL_KINDS if options.media else ALL_KINDS[:-1]

    def write_all(self, stream: BinaryIO) -> None:
        warc = WarcWriter(stream)
        warc.warcinfo(self.warc_name, now_iso(), self._info())
        for body in self.archive.uncaptured_bodies(self.feed_ids, self.options.since):
            if body.kind in self.kinds:
                self._uncaptured(warc, body)
        for capture in self.archive.captures(self.feed_ids, self.options.since, self.kinds):
            self._capture(warc, capture)
        self._episodes(warc)
        self.report.records = warc.records

    def _info(self) -> list[tuple[str, str]]:
        return [
            ("software", f"{SOFTWARE} ({WRITER})"),
            ("format", "WARC File Format 1.1"),
            ("conformsTo", "https://iipc.github.io/warc-specifications/specifications/warc-format/warc-1.1/"),
            ("isPartOf", Path(str(self.archive.path)).name),
            ("operator", self.options.operator),
            ("description", "Podcast feeds, episode pages, transcripts, chapters and media "
             "as podarchive fetched them; bodies decoded (see X-Archive-Orig-Content-Encoding)."),
        ]  # fmt: skip

    # captures ---------------------------------------------------------------------------

    def _capture(self, warc: WarcWriter, capture: Capture) -> None:
        ex = capture.exchange
        if ex.status == 304:
            record_id = self._not_modified(warc, capture)
        elif capture.body_sha256 is None:
            record_id = self._response(warc, capture, io.BytesIO(), EMPTY_SHA256, 0)
        elif (ex.url, capture.body_sha256) in self.seen.payloads:
            record_id = self._identical(warc, capture, capture.body_sha256)
        elif capture.body_ref is None:
            record_id = self._body_not_kept(warc, capture)
        else:
            with self._body(capture.body_ref, capture.media_ext) as body:
                size = _remaining(body)
                record_id = self._response(warc, capture, body, capture.body_sha256, size)
        warc.request(
            ex.url, ex.started_at, ex.method, ex.http_version, ex.request_headers,
            concurrent_to=record_id,
        )  # fmt: skip
        self._remember(capture, record_id)

    def _response(
        self, warc: WarcWriter, capture: Capture, body: BinaryIO, sha256: str, size: int
    ) -> str:
        ex = capture.exchange
        head = HttpHead(
            ex.status, ex.reason, ex.http_version, replay_headers(ex.response_headers, size)
        )
        record_id = warc.response(ex.url, ex.started_at, head, body, sha256, ip=ex.remote_ip)
        self.report.responses += 1
        self.report.payload_bytes += size
        self.seen.payloads.setdefault((ex.url, sha256), (record_id, ex.started_at))
        self.seen.latest[ex.url] = (record_id, ex.started_at, sha256)
        return record_id

    def _identical(self, warc: WarcWriter, capture: Capture, sha256: str) -> str:
        ex = capture.exchange
        first_id, first_date = self.seen.payloads[(ex.url, sha256)]
        size = capture.body_size or 0
        head = HttpHead(
            ex.status, ex.reason, ex.http_version, replay_headers(ex.response_headers, size)
        )
        record_id = warc.revisit(
            ex.url, ex.started_at, "identical", head, payload_sha256=sha256,
            refers_to=(first_id, ex.url, first_date),
        )  # fmt: skip
        self.report.revisits += 1
        self.seen.latest[ex.url] = (record_id, ex.started_at, sha256)
        return record_id

    def _not_modified(self, warc: WarcWriter, capture: Capture) -> str:
        ex = capture.exchange
        latest = self.seen.latest.get(ex.url)
        head = HttpHead(
            ex.status, ex.reason, ex.http_version, replay_headers(ex.response_headers, 0)
        )
        refers = None if latest is None else (latest[0], ex.url, latest[1])
        record_id = warc.revisit(
            ex.url, ex.started_at, "not-modified", head,
            payload_sha256=None if latest is None else latest[2], refers_to=refers,
        )  # fmt: skip
        self.report.revisits += 1
        return record_id

    def _body_not_kept(self, warc: WarcWriter, capture: Capture) -> str:
        ex = capture.exchange
        about = {
            "url": ex.url, "status": ex.status, "body_sha256": capture.body_sha256,
            "response_headers": [list(h) for h in ex.response_headers],
            "body_size": capture.body_size,
            "note": "the body was received but not kept by the archive; only its digest is",
        }  # fmt: skip
        record_id = warc.metadata(
            ABOUT_URN + ex.url, ex.started_at, "application/json", _json(about)
        )
        self.report.metadata += 1
        return record_id

    @contextlib.contextmanager
    def _body(self, ref: tuple[str, Any], media_ext: str | None) -> Iterator[BinaryIO]:
        where, key = ref
        if where != "media":
            yield io.BytesIO(self.archive.capture_body(ref))
            return
        path = self.folder.path_of(str(key), media_ext or "")
        try:
            stream = path.open("rb")
        except OSError as e:
            raise ExportError(f"cannot read the media file {path}: {e.strerror or e}") from e
        with stream:
            yield stream

    def _remember(self, capture: Capture, record_id: str) -> None:
        ex = capture.exchange
        if 200 <= ex.status < 300:
            self._listed(
                capture.kind, capture.feed_id, capture.episode_id, ex.url, ex.started_at,
                record_id,
            )  # fmt: skip

    def _listed(
        self, kind: str, feed_id: int | None, episode_id: int | None, url: str, at: str,
        record_id: str,
    ) -> None:  # fmt: skip
        """A feed's or an episode page's record: the latest one each refers to, the first
        one each is listed at in ``pages.jsonl``."""
        seen = self.seen
        if kind == "feed" and feed_id is not None:
            seen.feed_records[feed_id] = record_id
            seen.feed_pages.setdefault(feed_id, (url, at))
        if kind == "page" and episode_id is not None:
            seen.episode_records[episode_id] = record_id
            seen.episode_pages.setdefault(episode_id, (url, at))

    # bodies without a capture, episodes -------------------------------------------------

    def _uncaptured(self, warc: WarcWriter, body: UncapturedBody) -> None:
        content_type = body.content_type or "application/octet-stream"
        with self._body(body.body_ref, body.media_ext) as stream:
            record_id = warc.resource(
                body.url, body.fetched_at, content_type, stream, payload_sha256=body.sha256
            )
        about = {
            "url": body.url, "kind": body.kind, "headers": [list(h) for h in body.headers],
            "note": "stored before podarchive kept HTTP exchanges: headers as known",
        }  # fmt: skip
        warc.metadata(
            ABOUT_URN + body.url, body.fetched_at, "application/json", _json(about),
            refers_to=record_id,
        )  # fmt: skip
        self.report.resources += 1
        self.report.metadata += 1
        self.report.payload_bytes += body.size
        self.seen.payloads.setdefault((body.url, body.sha256), (record_id, body.fetched_at))
        self.seen.latest[body.url] = (record_id, body.fetched_at, body.sha256)
        self._listed(body.kind, body.feed_id, body.episode_id, body.url, body.fetched_at, record_id)

    def _episodes(self, warc: WarcWriter) -> None:
        now = now_iso()
        for row in episode_rows(self.archive, self.feed_ids):
            episode_id, feed_id = int(row["id"]), int(row["feed_id"])
            refers = self.seen.episode_records.get(episode_id) or self.seen.feed_records.get(
                feed_id
            )
            if refers is None and self.options.since is not None:
                continue  # nothing of it in this export
            warc.metadata(
                f"{EPISODE_URN}{episode_id}", now, "application/json", _json(row), refers_to=refers
            )
            self.report.metadata += 1

    def pages(self, archive: Archive) -> list[Page]:
        """``pages.jsonl``: each podcast's feed at its first capture, each episode page."""
        feeds = feed_titles(archive, self.seen.feed_pages)
        episodes = episode_titles(archive, self.seen.episode_pages)
        listed = [Page(url, ts, feeds.get(i, url)) for i, (url, ts) in self.seen.feed_pages.items()]
        for i, (url, ts) in self.seen.episode_pages.items():
            listed.append(Page(url, ts, episodes.get(i, url)))
        return listed


def summary(report: ExportReport) -> str:
    """One line for the user: what was written, and where."""
    size = report.payload_bytes / 1_000_000
    return (
        f"wrote {report.path}: {report.records} records ({report.responses} responses, "
        f"{report.revisits} revisits, {report.resources} resources, {report.metadata} "
        f"metadata), {size:.1f} MB of payloads"
    )


def _remaining(body: BinaryIO) -> int:
    here = body.tell()
    end = body.seek(0, io.SEEK_END)
    body.seek(here)
    return end - here


def _json(value: Any) -> bytes:
    return json.dumps(value, ensure_ascii=False, sort_keys=True, default=str).encode()
