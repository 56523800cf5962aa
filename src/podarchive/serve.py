"""The only Datasette user: browse the archive with the metadata podarchive ships.

``datasette/metadata.json`` (package data) gives the tables titles, descriptions, label
columns, facets, units and full-text search, and adds canned queries (search show notes,
transcripts and chapters, most-linked domains, episodes linking to a URL or domain, what
changed, removed episodes, failing feeds, episodes by year). It is written for a database
named ``archive``; the name follows the file (``podcasts.db`` → ``podcasts``), so
:func:`metadata_for` renames it.

Datasette is an optional extra: it is imported only when a server is built, and its
absence is one :class:`DatasetteMissing` error. Show notes stay text: no plugin renders
HTML, so the ``*_html`` columns are shown escaped and never run in the browser.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

from podarchive.errors import NotAnArchive, PodarchiveError
from podarchive.store import inspect_file, refusal

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8001
SETTINGS: dict[str, Any] = {
    "facet_time_limit_ms": 1000,  # Datasette's 200 ms is too little for facets over links
    "sql_time_limit_ms": 3000,  # canned queries group every link; the default is 1000
    "truncate_cells_html": 300,  # long show notes: the row page shows them whole
}
INSTALL_HINT = "install the datasette extra: pip install -e '.[datasette]'"


class DatasetteMissing(PodarchiveError):
    default_message = f"datasette is not installed: {INSTALL_HINT}"


@cache
def _packaged_metadata() -> str:
    return (resources.files("podarchive") / "datasette" / "metadata.json").read_text("utf-8")


def metadata_for(database: str = "archive") -> dict[str, Any]:
    """The packaged metadata, its database entry named ``database``."""
    metadata: dict[str, Any] = copy.deepcopy(json.loads(_packaged_metadata()))
    databases = metadata["databases"]
    databases[database] = databases.pop("archive")
    return metadata


def database_name(db_path: Path) -> str:
    """The name Datasette gives a file it serves (its URL path): the file's stem."""
    return db_path.stem


def check_archive(db_path: Path) -> None:
    """Refuse a missing file, one that is not an archive, or one of a newer schema, without
    writing to it (nor leaving a -wal/-shm file beside it)."""
    info = inspect_file(db_path) if db_path.is_file() else None
    if info is None or info.kind == "new":
        raise NotAnArchive(f"no archive at {db_path} (run podarchive run first, or give --db)")
    if info.kind == "foreign":
        tables = ", ".join(info.tables) or "none"
        raise NotAnArchive(
            f"{db_path} is not a podarchive archive (no feeds/episodes tables; it has tables: "
            f"{tables}); not serving it"
        )
    refused = refusal(db_path, info)
    if refused is not None:
        raise refused


def make_datasette(db_path: Path, *, settings: dict[str, Any] | None = None) -> Any:
    """A ``datasette.app.Datasette`` over the archive (read-only) with podarchive's metadata."""
    try:
        from datasette.app import Datasette
    except ImportError as e:
        raise DatasetteMissing() from e
    return Datasette(
        [str(db_path)],
        metadata=metadata_for(database_name(db_path)),
        settings={**SETTINGS, **(settings or {})},
    )


def serve(
    db_path: Path,
    host: str = DEFAULT_HOST,
    port: int = DEFAULT_PORT,
    *,
    announce: Callable[[str], None] | None = None,
) -> None:
    """Serve the archive with Datasette until interrupted (as ``datasette serve`` does).

    ``announce`` is told the address once the archive and Datasette have been checked.
    """
    import asyncio

    check_archive(db_path)
    datasette = make_datasette(db_path)
    import uvicorn  # a dependency of datasette, so present when make_datasette succeeded

    asyncio.run(datasette.invoke_startup())
    if announce:
        announce(f"http://{host}:{port}/{database_name(db_path)}")
    uvicorn.run(datasette.app(), host=host, port=port, log_level="warning", lifespan="on")
