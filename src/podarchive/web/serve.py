"""The only Datasette user: browse the archive with the metadata, templates and plugin podarchive
ships.

``datasette/metadata.json`` (package data) gives the tables titles, descriptions, label
columns, facets, units and full-text search, hides the archive's machinery (snapshots, raw
documents, backfill state), and adds canned queries (search episodes, show notes, transcripts
and chapters, most-linked domains, episodes linking to a URL or domain, what changed, removed
episodes, failing feeds, episodes by year…). It is written for a database named ``archive``;
the name follows the file (``podcasts.db`` → ``podcasts``), so :func:`metadata_for` renames it.

``datasette/templates`` and the hooks below make it read like an archive (issue #14): the
database page lists what a researcher reads first, with a search box; an episode's page is
headed by its title, with its podcast, date and duration, its show notes rendered as HTML
*sanitised by nh3* (no script, style, event handler, ``javascript:`` URL or remote image
survives), its links, chapters, transcript and revisions; the episodes table opens with title,
podcast, published and duration; durations show as ``h:mm:ss``, JSON columns as lists, facets
and headers say ``podcast`` and ``episode`` instead of ``feed_id`` and ``episode_id``.

The hooks and the page helpers live in :mod:`podarchive.web.plugin`; :func:`make_datasette`
registers them with Datasette's plugin manager, and they act only for the servers it builds: a
bare ``datasette archive.db`` in the same process is left alone.

Datasette is an optional extra: it (and nh3, in the same extra) is imported only when a server
is built, and its absence is one :class:`DatasetteMissing` error. Everywhere but an episode's
page the ``*_html`` columns stay escaped source.

Shards (issue #16): :func:`serve_shards` serves the ``shard-K-of-N.db`` archives of a shard
directory, and :func:`make_datasette` / :func:`serve` take a sequence of archives. Each archive
is its own database named after its file (``shard-0-of-4``), with the archive's metadata,
templates and hooks, as ``archive`` has them. One more database, ``all-shards`` (first on the
index, whose page opens with its search box), searches and browses every shard at once: each
of its connections ATTACHes the shards read-only (immutable when served so), each as a schema
of its name, and its canned queries (:mod:`~podarchive.web.shard_search`: search episodes and show
notes ranked by each shard's FTS index, recent episodes, episodes linking to a URL or domain,
most-linked domains, failing feeds) are a ``union all`` over the shards, each row naming its
shard and linking to the episode's (or podcast's) page in that shard's database. Its custom
SQL sees ``"shard-0-of-4".episodes`` and so on. FTS ranks (BM25) are each shard's own, so the
merged order is close to, not exactly, what one archive of every feed would give.

SQLite attaches at most ``SQLITE_MAX_ATTACHED`` databases to a connection: 10 unless compiled
otherwise (``shard_search.sqlite_attach_limit`` asks this Python's SQLite; Python 3.11's bundled
library says 10, and a connection cannot raise it). With more shards than that, the shards are
attached in groups of that many, consecutive in the layout's order: databases
``shards-group-1``, ``shards-group-2``…, each with the same queries over its group, the index
opening with one search box per group. A search then spans one group, not every shard: the
researcher runs it in each group (an honest limit, said on each group's page). A file whose
name the server keeps (``all-shards``, ``shards-group-*``, ``_memory``, ``_internal``) or two
files of one name are refused with one line.
"""

from __future__ import annotations

import copy
import errno
import json
import os
import socket
from collections.abc import Callable, Sequence
from contextlib import suppress
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

from podarchive.core.errors import NotAnArchive, PodarchiveError
from podarchive.core.settings import media_dir_for, settings_from_env
from podarchive.store import inspect_file, refusal
from podarchive.web.plugin import CROSS_SHARDS, MEDIA_SERVED, SERVED, register_plugin
from podarchive.web.shard_search import (
    CROSS_NAME,
    RESERVED_NAMES,
    metadata_for_shards,
    shard_groups,
)

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8001
SETTINGS: dict[str, Any] = {
    "facet_time_limit_ms": 1000,  # Datasette's 200 ms is too little for facets over links
    "sql_time_limit_ms": 3000,  # canned queries group every link; the default is 1000
    "truncate_cells_html": 300,  # long show notes: the row page shows them whole
    "suggest_facets": False,  # a facet suggested over every column: half of a page's time
}
INSTALL_HINT = "install the datasette extra: pip install -e '.[datasette]'"
TEMPLATES = Path(__file__).resolve().parent / "datasette" / "templates"


class DatasetteMissing(PodarchiveError):
    default_message = f"datasette is not installed: {INSTALL_HINT}"


@cache
def _packaged_metadata() -> str:
    return (resources.files("podarchive.web") / "datasette" / "metadata.json").read_text("utf-8")


def metadata_for(database: str = "archive") -> dict[str, Any]:
    """The packaged metadata, its database entry named ``database``."""
    metadata: dict[str, Any] = copy.deepcopy(json.loads(_packaged_metadata()))
    databases = metadata["databases"]
    databases[database] = databases.pop("archive")
    return metadata


def database_name(db_path: Path) -> str:
    """The name Datasette gives a file it serves (its URL path): the file's stem."""
    return db_path.stem


def check_archive(db_path: Path, *, hint: str = "run podarchive run first, or give --db") -> None:
    """Refuse a missing file, one that is not an archive, or one of a newer schema, without
    writing to it (nor leaving a -wal/-shm file beside it). ``hint``: what to do about a
    missing or empty file."""
    info = inspect_file(db_path) if db_path.is_file() else None
    if info is None or info.kind == "new":
        raise NotAnArchive(f"no archive at {db_path} ({hint})")
    if info.kind == "foreign":
        raise NotAnArchive(f"{db_path} is not a podarchive archive ({info.why}); not serving it")
    refused = refusal(db_path, info)
    if refused is not None:
        raise refused


def read_only_here(db_path: Path) -> bool:
    """Whether the archive must be served as immutable: this user may not write it or its
    folder, and no writer has it open (no ``-wal`` and ``-shm`` beside it). SQLite cannot read
    a WAL archive read-only without a ``-shm`` file it may create, and a ``-shm`` left by
    another user would block the archive's own writer. Otherwise Datasette opens it as it
    does (read-only, seeing each run's changes).
    """
    folder = db_path.resolve().parent
    writable = os.access(db_path, os.W_OK) and os.access(folder, os.W_OK | os.X_OK)
    live = Path(f"{db_path}-wal").exists() and Path(f"{db_path}-shm").exists()
    return not writable and not live


def make_datasette(
    archives: Path | Sequence[Path],
    *,
    settings: dict[str, Any] | None = None,
    attach_limit: int | None = None,
    media_dir: Path | None = None,
) -> Any:
    """A ``datasette.app.Datasette`` over the archive (read-only) with podarchive's metadata,
    templates and plugin, serving the media folder ``media_dir`` (default: the first
    archive's, :func:`~podarchive.core.settings.media_dir_for`) at ``/-/media/`` when it
    exists, for the players of the episodes' pages.

    ``archives`` a sequence of files (the shards of a layout): each its own database, and the
    cross-shard database(s) of :func:`shard_groups` (at most ``attach_limit`` shards each,
    default SQLite's limit) listed first.
    """
    Datasette = _datasette_class()
    register_plugin()
    paths = [archives] if isinstance(archives, Path) else [Path(p) for p in archives]
    if not paths:
        raise NotAnArchive("no archives to serve")
    names = database_names(paths)
    groups = [] if isinstance(archives, Path) else shard_groups(names, attach_limit)
    media = media_dir if media_dir is not None else media_dir_for(paths[0], settings_from_env())
    files: list[str] = []
    immutables: list[str] = []
    for path in paths:
        (immutables if read_only_here(path) else files).append(str(path))
    datasette = Datasette(
        files,
        immutables=immutables,
        metadata=metadata_for(names[0])
        if not groups
        else metadata_for_shards(json.loads(_packaged_metadata()), names, groups),
        settings={**SETTINGS, **(settings or {})},
        template_dir=str(TEMPLATES),
    )
    if media.is_dir():
        MEDIA_SERVED[datasette] = media.resolve()
    if groups:
        attached = {
            name: (path, str(path) in immutables) for name, path in zip(names, paths, strict=True)
        }
        _add_cross_shards(datasette, groups, attached)
    SERVED.add(datasette)
    return datasette


def _datasette_class() -> Any:
    """``datasette.app.Datasette``; :class:`DatasetteMissing` without datasette or nh3."""
    try:
        from datasette.app import Datasette
    except ImportError as e:
        raise DatasetteMissing() from e
    try:
        import nh3  # noqa: F401  (an episode's page sanitises its show notes with it)
    except ImportError as e:
        raise DatasetteMissing(f"nh3 is not installed: {INSTALL_HINT}") from e
    return Datasette


def _add_cross_shards(
    datasette: Any,
    groups: Sequence[tuple[str, Sequence[str]]],
    attached: dict[str, tuple[Path, bool]],
) -> None:
    """Add each cross-shard database of ``groups`` (its name, its shards' names) to
    ``datasette``, as the shards it attaches (in :data:`CROSS_SHARDS`: each shard's name, path
    and whether it is served immutable, from ``attached``), listed first."""
    from datasette.database import Database

    for group, _ in groups:
        datasette.add_database(Database(datasette, is_memory=True), name=group)
    CROSS_SHARDS[datasette] = {
        group: [(name, *attached[name]) for name in members] for group, members in groups
    }
    # the cross-shard search first on the index, then the shards in their order
    order = [*(group for group, _ in groups), *attached]
    order += [name for name in datasette.databases if name not in order]
    datasette.databases = {name: datasette.databases[name] for name in order}


def serve(
    archives: Path | Sequence[Path],
    host: str = DEFAULT_HOST,
    port: int = DEFAULT_PORT,
    *,
    announce: Callable[[str], None] | None = None,
    hint: str | None = None,
) -> None:
    """Serve the archive (or the archives: see :func:`make_datasette`) with Datasette until
    interrupted (as ``datasette serve`` does).

    ``announce`` is told the address once the archives and Datasette have been checked and
    the port is bound (:func:`listen`): the archive's page, or the cross-shard search's (the
    index when the shards are in groups).
    ``hint`` replaces :func:`check_archive`'s advice for an empty file.
    """
    import asyncio

    paths = [archives] if isinstance(archives, Path) else [Path(p) for p in archives]
    if not paths:
        raise NotAnArchive("no archives to serve")
    for path in paths:
        check_archive(path, **({"hint": hint} if hint else {}))
    datasette = make_datasette(archives)
    import uvicorn  # a dependency of datasette, so present when make_datasette succeeded

    asyncio.run(datasette.invoke_startup())
    listener = listen(host, port)  # before the announcement: a port in use is one line
    with listener:
        if announce:
            groups = list(CROSS_SHARDS.get(datasette, {}))
            page = database_name(paths[0]) if not groups else groups[0] if len(groups) == 1 else ""
            shown = f"[{host}]" if ":" in host else host  # an IPv6 address
            announce(f"http://{shown}:{listener.getsockname()[1]}/{page}")
        config = uvicorn.Config(datasette.app(), log_level="warning", lifespan="on")
        with suppress(KeyboardInterrupt):  # Ctrl-C: the server has stopped
            uvicorn.Server(config).run(sockets=[listener])


def listen(host: str, port: int) -> socket.socket:
    """A socket listening on ``host``:``port`` (0: any free port), for the server to use.

    Bound here, before anything is announced, so that an address in use (or not this
    machine's, or a port this user may not take) is one :class:`PodarchiveError` instead
    of uvicorn's log line and exit 3."""
    try:
        family, _, _, _, address = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0]
        return socket.create_server(address, family=family)
    except OSError as e:
        number = None if isinstance(e, socket.gaierror) else e.errno
        reason = os.strerror(number) if number else e.strerror or str(e)  # no "(while …)"
        reason = reason[:1].lower() + reason[1:]
        if e.errno == errno.EADDRINUSE:
            reason += " (another server has it: give --port)"
        raise PodarchiveError(f"cannot serve on {host}:{port}: {reason}") from e


def serve_shards(
    directory: Path,
    *,
    shards: int | None = None,
    host: str = DEFAULT_HOST,
    port: int = DEFAULT_PORT,
    announce: Callable[[str], None] | None = None,
) -> None:
    """Serve the shard archives of ``directory`` (``shard-K-of-N.db``; the layout of
    ``shards`` shards, or the only one there) in one Datasette: see :func:`make_datasette`.

    :class:`~podarchive.core.errors.ConfigError` when there is no layout, or several and
    ``shards`` is None; :class:`NotAnArchive` for a shard file that is not an archive.
    """
    from podarchive.rules.shards import find_shards

    serve(
        find_shards(Path(directory), shards),
        host,
        port,
        announce=announce,
        hint="its worker has stored nothing in it; remove it or run the worker",
    )


# serving several archives: the shards' names, and what each cross-shard database attaches


def database_names(paths: Sequence[Path]) -> list[str]:
    """Each file's database name (:func:`database_name`); :class:`PodarchiveError` when two
    files would share one, or one would take a name Datasette or the cross-shard search
    keeps."""
    names = [database_name(path) for path in paths]
    seen: dict[str, Path] = {}
    for name, path in zip(names, paths, strict=True):
        if name in seen:
            raise PodarchiveError(
                f"{seen[name]} and {path} would both be served as {name!r}: rename one"
            )
        if name in RESERVED_NAMES or name == CROSS_NAME or name.startswith("shards-group-"):
            raise PodarchiveError(f"{path}: its name {name!r} is kept for the server's own use")
        seen[name] = path
    return names
