"""The archive's own pages (issue #28), routes of the plugin (:mod:`podarchive.web.plugin`):
a podcast's page (``/<database>/feeds/<id>``), the podcasts as cards (``/<database>/feeds``
with no arguments) and the index (``/``). What they read and show is in
:mod:`podarchive.web.reading`; their templates are ``podcast.html``, ``podcasts.html`` and
``index.html``. Datasette is imported only inside the functions.
"""

from __future__ import annotations

import hashlib
from typing import Any

from podarchive.web.episode_view import MediaUrl
from podarchive.web.plugin import CROSS_SHARDS, MEDIA_MOUNT, MEDIA_SERVED, SERVED, row_url
from podarchive.web.reading import read_cards, read_overview, read_podcast


def media_url(datasette: Any) -> MediaUrl | None:
    """Where the server serves a file of the media folder (``ab/cd/….png``); None when it
    serves none (#28: the pages then show the publisher's images)."""
    if datasette not in MEDIA_SERVED:
        return None
    return lambda path: str(datasette.urls.path(f"/{MEDIA_MOUNT}/{path}"))


async def _podcasts_database(datasette: Any, request: Any, database: str) -> Any:
    """The served archive ``database`` whose podcasts the reader may see (else NotFound or
    Forbidden, as Datasette answers)."""
    from datasette.utils.asgi import NotFound

    if datasette not in SERVED or database not in datasette.databases:
        raise NotFound(f"Database not found: {database}")
    await datasette.ensure_permissions(
        request.actor,
        [("view-table", (database, "feeds")), ("view-database", database), "view-instance"],
    )
    db = datasette.get_database(database)
    if "feeds" not in await db.table_names():
        raise NotFound("This database has no podcasts")
    return db


async def podcasts_page(datasette: Any, request: Any) -> Any:
    """The podcasts as cards (``podcasts.html``), at ``/<database>/feeds`` (no arguments;
    ``?_view=table`` is Datasette's table)."""
    from datasette.utils.asgi import Response

    database = request.url_vars["database"]
    db = await _podcasts_database(datasette, request, database)
    cards = await read_cards(
        db, lambda pk: row_url(datasette, database, "feeds", pk), media_url(datasette)
    )
    context = {
        "database": database,
        "table": "feeds",
        "cards": cards,
        "metadata": datasette.table_metadata(database, "feeds"),
        "database_color": lambda name: "ff0000",  # as Datasette colours its pages
    }
    page = await datasette.render_template("podcasts.html", context, request, "podcasts")
    return Response.html(page)


async def index_page(datasette: Any, request: Any) -> Any:
    """The index (``/``): each archive's search box, size, health and its podcasts and
    episodes (``index.html``), without Datasette's count of every table of every database
    (seconds on a large archive). ``/.json`` stays Datasette's."""
    from datasette.utils.asgi import Response

    await datasette.ensure_permissions(request.actor, ["view-instance"])
    databases = []
    for name, db in datasette.databases.items():
        if name.startswith("_") or not await datasette.permission_allowed(
            request.actor, "view-database", name, default=True
        ):
            continue
        tables = [{"name": t, "private": False} for t in (await db.table_names())[:5]]
        databases.append(
            {
                "name": name,
                "color": db.hash[:6] if db.hash else hashlib.md5(name.encode()).hexdigest()[:6],
                "path": datasette.urls.database(name),
                "tables_and_views_truncated": tables,
                "tables_and_views_more": True,
                "private": False,
            }
        )
    context = {
        "databases": databases,
        "metadata": datasette.metadata(),
        "private": False,
        "archive_overviews": await _overviews(datasette),
    }
    page = await datasette.render_template("index.html", context, request, view_name="index")
    return Response.html(page)


async def podcast_page(datasette: Any, request: Any) -> Any:
    """A podcast's page (:mod:`podarchive.web.reading`): its title, artwork, author,
    description, links, health, counts, and its episodes newest first (``?page=``), or those
    matching ``?q=``."""
    from datasette.utils.asgi import NotFound, Response

    database, pk = request.url_vars["database"], request.url_vars["pk"]
    db = await _podcasts_database(datasette, request, database)
    page = request.args.get("page", "1")
    podcast = await read_podcast(
        db,
        pk,
        page=int(page) if page.isdigit() and 0 < int(page) < 100_000 else 1,
        query=request.args.get("q", "")[:500].replace("\x00", ""),
        episode_url=lambda pk: row_url(datasette, database, "episodes", pk),
        media_url=media_url(datasette),
    )
    if podcast is None:
        raise NotFound(f"No podcast {pk} in this archive")
    context = {
        "database": database,
        "table": "feeds",
        "podcast": podcast,
        "podcast_url": row_url(datasette, database, "feeds", pk),
        "json_url": row_url(datasette, database, "feeds", pk) + ".json",
        "episodes_url": datasette.urls.table(database, "episodes") + f"?feed_id={podcast['id']}",
    }
    page_html = await datasette.render_template(
        "podcast.html", context, request=request, view_name="podcast"
    )
    return Response.html(page_html)


async def _overviews(datasette: Any) -> dict[str, dict[str, Any]]:
    """Each served archive's size and health, by database name (not the cross-shard ones)."""
    cross = CROSS_SHARDS.get(datasette, {})
    found = {}
    for name, db in datasette.databases.items():
        if name.startswith("_") or name in cross:
            continue
        overview = await read_overview(db)
        if overview is not None:
            found[name] = overview
    return found


async def database_page(datasette: Any, request: Any) -> Any:
    """An archive's page (``database.html``) at ``/<database>`` with no arguments: its search
    box, queries and tables, without Datasette's count of every table (its columns, keys and
    full-text index looked up one by one: a quarter of a second on a large archive). The
    podcasts and episodes are counted; the other tables say their size on their own page."""
    from datasette.utils.asgi import NotFound, Response

    database = request.url_vars["database"]
    if datasette not in SERVED or database not in datasette.databases:
        raise NotFound(f"Database not found: {database}")
    await datasette.ensure_permissions(
        request.actor, [("view-database", database), "view-instance"]
    )
    db = datasette.get_database(database)
    hidden = set(await db.hidden_table_names())
    overview = await read_overview(db) or {}
    counts = {"feeds": overview.get("podcasts"), "episodes": overview.get("episodes")}
    tables = [
        {"name": name, "count": counts.get(name), "hidden": name in hidden, "private": False}
        for name in sorted(await db.table_names())
    ]
    queries = (await datasette.get_canned_queries(database, request.actor)).values()
    context = {
        "database": database,
        "metadata": (datasette.metadata("databases") or {}).get(database) or {},
        "private": False,
        "tables": tables,
        "hidden_count": sum(1 for t in tables if t["hidden"]),
        "views": [{"name": name, "private": False} for name in await db.view_names()],
        "queries": [dict(query, private=False) for query in queries],
        "allow_execute_sql": await datasette.permission_allowed(
            request.actor, "execute-sql", database, default=True
        ),
        "allow_download": False,
        "show_hidden": None,
        "size": db.size,
        "database_color": lambda name: "ff0000",
        "database_actions": list,
    }
    page = await datasette.render_template("database.html", context, request, "database")
    return Response.html(page)
