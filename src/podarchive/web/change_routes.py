"""``serve``'s change feeds, revision pages and republished feeds (#28), as Datasette routes.

Under each archive's database (``/archive/-/…``):

* ``changes.atom`` and ``changes.json``: the archive's changes (Atom, JSON Feed 1.1); the
  same for one podcast at ``podcasts/<id>/changes.atom`` (and ``.json``). ``?after=TOKEN``
  gives the changes after a cursor (the next page is linked: ``rel="next"``, ``next_url``),
  ``?since=DATE`` those from a date, ``?limit=N`` at most N (default 100);
* ``changes/<table>/<id>``: a revision's page, the old and new values side by side;
* ``podcasts/<id>/feed.xml``: the podcast republished as RSS, its enclosures at the archived
  copies under ``/-/media/`` when the media is kept and served, its transcripts and chapters
  at ``documents/<sha256>`` (the archived bodies, served as text/plain: never run as a page).

The work is :mod:`podarchive.tasks.changes` and :mod:`podarchive.tasks.republish`, on a thread,
over the archive opened read-only per request. Registered by :mod:`podarchive.web.plugin`'s
``register_routes``; like every hook there, a route answers only for the servers
:func:`~podarchive.web.serve.make_datasette` built.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import urlencode

from podarchive.core.errors import PodarchiveError
from podarchive.store import ArchiveReader
from podarchive.tasks.changes import (
    Format,
    change_document,
    feed_title,
    query_from,
    read_changes,
    served_link,
)
from podarchive.tasks.republish import media_path, podcast_feed
from podarchive.web.plugin import MEDIA_MOUNT, MEDIA_SERVED, SERVED

DEFAULT_LIMIT = 100
MAX_LIMIT = 1000
_DB = r"^/(?P<database>[^/]+)/-/"
TYPES = {"atom": "application/atom+xml; charset=utf-8", "json": "application/feed+json"}
#: a feed or an archived body is data, never a page: no script runs, nothing is sniffed
SAFE_HEADERS = {
    "X-Content-Type-Options": "nosniff",
    "Content-Security-Policy": "default-src 'none'",
}
T = TypeVar("T")


def routes() -> list[tuple[str, Any]]:
    """The routes, for ``register_routes``."""
    return [
        (_DB + r"changes\.(?P<format>atom|json)$", _changes),
        (_DB + r"podcasts/(?P<feed_id>\d+)/changes\.(?P<format>atom|json)$", _changes),
        (_DB + r"changes/(?P<table>episode_revisions|feed_revisions)/(?P<rowid>\d+)$", _revision),
        (_DB + r"podcasts/(?P<feed_id>\d+)/feed\.xml$", _republished),
        (_DB + r"documents/(?P<sha>[0-9a-f]{64})$", _document),
    ]


def _archive_path(datasette: Any, request: Any) -> Path | None:
    """The file of the archive the request names, if this server serves it."""
    if datasette not in SERVED:
        return None
    database = datasette.databases.get(request.url_vars["database"])
    path = getattr(database, "path", None)
    return Path(path) if path and not getattr(database, "is_memory", False) else None


async def _reading(path: Path, work: Callable[[ArchiveReader], T]) -> T:
    def run() -> T:
        with ArchiveReader.open_to_read(path) as archive:
            return work(archive)

    return await asyncio.get_running_loop().run_in_executor(None, run)


def _not_found(message: str) -> Any:
    from datasette.utils.asgi import Response

    return Response.text(f"404: {message}", status=404, headers=SAFE_HEADERS)


async def _changes(datasette: Any, request: Any) -> Any:
    from datasette.utils.asgi import Response

    path = _archive_path(datasette, request)
    if path is None:
        return _not_found("no such archive")
    vars_, args = request.url_vars, request.args
    feed_id = int(vars_["feed_id"]) if vars_.get("feed_id") else None
    try:
        limit = min(int(args.get("limit") or DEFAULT_LIMIT), MAX_LIMIT)
        query = query_from(args.get("since"), args.get("after"), limit, feed_id)
    except (ValueError, PodarchiveError) as e:
        return Response.text(f"400: {e}", status=400, headers=SAFE_HEADERS)
    try:
        changes, title = await _reading(
            path, lambda archive: (read_changes(archive, query), feed_title(archive, feed_id))
        )
    except PodarchiveError as e:
        return Response.text(f"500: {e}", status=500, headers=SAFE_HEADERS)
    here = datasette.absolute_url(request, request.path)
    links = {"self": here, "alternate": datasette.absolute_url(request, f"/{vars_['database']}")}
    if changes and query.after is not None and len(changes) == query.limit:
        links["next"] = f"{here}?{urlencode({'after': changes[-1].cursor, 'limit': limit})}"
    base = datasette.absolute_url(request, "/").rstrip("/")
    fmt: Format = "json" if vars_["format"] == "json" else "atom"
    data = change_document(
        changes, fmt, title=title, feed_id=feed_id, links=links,
        link_for=served_link(base, vars_["database"]),
    )  # fmt: skip
    return Response(data, content_type=TYPES[fmt], headers=SAFE_HEADERS)


async def _revision(datasette: Any, request: Any) -> Any:
    from datasette.utils.asgi import Response

    from podarchive.rules.changes import to_changes

    path = _archive_path(datasette, request)
    if path is None:
        return _not_found("no such archive")
    database, table = request.url_vars["database"], request.url_vars["table"]
    row = (table, int(request.url_vars["rowid"]))
    rows = await _reading(path, lambda archive: archive.change_row(*row))
    if not rows:
        return _not_found(f"no {table} row {row[1]}")
    (change,) = to_changes(rows)
    context = {
        "change": change,
        "database": database,
        "podcast_url": datasette.urls.row(database, "feeds", str(change.feed_id)),
        "episode_url": (
            datasette.urls.row(database, "episodes", str(change.episode_id))
            if change.episode_id is not None
            else None
        ),
        "feed_url": f"/{database}/-/podcasts/{change.feed_id}/changes.atom",
        "table_url": datasette.urls.table(database, table),
        "row_url": datasette.urls.row(database, table, str(row[1])),
    }
    page = await datasette.render_template(["archive_change.html"], context, request=request)
    return Response.html(page)


async def _republished(datasette: Any, request: Any) -> Any:
    from datasette.utils.asgi import Response

    path = _archive_path(datasette, request)
    if path is None:
        return _not_found("no such archive")
    database, feed_id = request.url_vars["database"], int(request.url_vars["feed_id"])
    base = datasette.absolute_url(request, "/").rstrip("/")
    served = datasette in MEDIA_SERVED
    try:
        feed = await _reading(
            path,
            lambda archive: podcast_feed(
                archive,
                feed_id,
                media_url=(lambda sha, ext: f"{base}/{MEDIA_MOUNT}/{media_path(sha, ext)}")
                if served
                else None,
                document_url=lambda digest: f"{base}/{database}/-/documents/{digest}",
                self_url=datasette.absolute_url(request, request.path),
            ),  # fmt: skip
        )
    except LookupError:
        return _not_found(f"no podcast {feed_id}")
    from podarchive.formats.feeds import podcast_rss

    data = podcast_rss(feed)
    return Response(data, content_type="application/rss+xml; charset=utf-8", headers=SAFE_HEADERS)


async def _document(datasette: Any, request: Any) -> Any:
    from datasette.utils.asgi import Response

    path = _archive_path(datasette, request)
    if path is None:
        return _not_found("no such archive")
    digest = request.url_vars["sha"]
    found = await _reading(path, lambda archive: archive.document_by_hash(digest))
    if found is None:
        return _not_found("no archived transcript or chapters file with that SHA-256")
    body, content_type = found
    kind = "application/json" if "json" in (content_type or "") else "text/plain; charset=utf-8"
    return Response(body, content_type=kind, headers=SAFE_HEADERS)
