"""WACZ 1.1 packages (#27): the only user of the ``wacz`` package (py-wacz).

:func:`package` puts a written WARC into a WACZ: the WARC under ``archive/``, a CDXJ index
of it (``indexes/index.cdx.gz`` and ``index.idx``), ``pages/pages.jsonl`` listing the
:class:`Page` values given, and ``datapackage.json`` with the SHA-256 of every file (and
``datapackage-digest.json``). py-wacz streams the WARC through its indexer and into the zip;
it holds only the index lines in memory.
"""

from __future__ import annotations

import contextlib
import io
import json
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from wacz.main import main as wacz_main

from podarchive.core.errors import ExportError


@dataclass(frozen=True, slots=True)
class Page:
    """An entry of ``pages.jsonl``: a URL archived in the WARC at ``ts`` (its record's
    ``WARC-Date``, ISO 8601), with a title."""

    url: str
    ts: str
    title: str


def package(
    warc: Path, out: Path, pages: Iterable[Page], *, title: str, description: str = ""
) -> None:
    """Write the WACZ ``out`` holding ``warc`` and listing ``pages`` (each must be a
    ``response``, ``revisit`` or ``resource`` record of the WARC at its ``ts``)."""
    with tempfile.TemporaryDirectory(prefix=".wacz-", dir=out.parent) as folder:
        listing = Path(folder) / "pages.jsonl"
        _write_pages(listing, pages)
        args = ["create", "-o", str(out), "-p", str(listing), "--title", title, str(warc)]
        if description:
            args[5:5] = ["--desc", description]
        said = io.StringIO()
        try:
            with contextlib.redirect_stdout(said):
                code = wacz_main(args)
        except (OSError, ValueError) as e:
            raise ExportError(f"cannot write the WACZ {out}: {e}") from e
    if code:
        reason = said.getvalue().strip().splitlines()[-1:] or ["py-wacz failed"]
        raise ExportError(f"cannot write the WACZ {out}: {reason[0]}")


def _write_pages(path: Path, pages: Iterable[Page]) -> None:
    with path.open("w", encoding="utf-8") as f:
        f.write(json.dumps({"format": "json-pages-1.0", "id": "pages", "title": "Pages"}) + "\n")
        for page in pages:
            f.write(json.dumps({"url": page.url, "ts": page.ts, "title": page.title}) + "\n")


__all__ = ["Page", "package"]
