"""What the archive's pages show in Datasette: the plugin podarchive registers for the servers
:mod:`podarchive.web.serve` builds, and the plain functions behind it.

* Plain functions: show notes sanitised by nh3 (:func:`sanitise_notes`), JSON cells as lists
  (:func:`json_cell_html`), the order of an episode's columns (:func:`arrange`) and of the
  tables, facets without repeats; durations as ``h:mm:ss`` (:func:`hms`, from
  :mod:`podarchive.web.episode_view`).
* The plugin (:func:`register_plugin`): the Datasette hooks, acting only for the servers in
  :data:`SERVED`: templates' variables for an episode's page (read and shown by
  :mod:`podarchive.web.episode_view`), cells, connections, the 4xx page.

Datasette is imported only inside the functions that need it.
"""

from __future__ import annotations

import html
import json
import sys
import weakref
from collections.abc import Callable, Generator, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlsplit

from podarchive.core.urls import is_http_url, join_url
from podarchive.web.episode_view import episode_page, hms, read_episode
from podarchive.web.reading import (
    EPISODE_COLUMNS,
    PARAMETERS,
    WIDE,
    default_columns,
    excerpt,
    query_columns,
    sentences,
)
from podarchive.web.shard_search import fts_phrases

PLUGIN = "podarchive"  # its configuration's key in the metadata's "plugins"

#: Which cross-shard databases each server built by :func:`make_datasette` has: database →
#: the shards it attaches, each (name, path, immutable).
CROSS_SHARDS: weakref.WeakKeyDictionary[Any, dict[str, list[tuple[str, Path, bool]]]] = (
    weakref.WeakKeyDictionary()
)


# what the pages show: plain functions ---------------------------------------------------------

#: The tags show notes keep: text structure and links. No img (a remote image is a request to
#: a third party, often a tracking pixel), no media, forms, frames or scripts.
NOTE_TAGS = frozenset(
    {
        "a", "abbr", "b", "blockquote", "br", "cite", "code", "dd", "del", "details", "div",
        "dl", "dt", "em", "figcaption", "figure", "h1", "h2", "h3", "h4", "h5", "h6", "hr", "i",
        "ins", "kbd", "li", "mark", "ol", "p", "pre", "q", "s", "small", "span", "strong",
        "sub", "summary", "sup", "table", "tbody", "td", "tfoot", "th", "thead", "time", "tr",
        "u", "ul",
    }
)  # fmt: skip
NOTE_ATTRIBUTES = {
    "a": {"href", "title"},
    "abbr": {"title"},
    "ol": {"start"},
    "td": {"colspan", "rowspan"},
    "th": {"colspan", "rowspan"},
    "time": {"datetime"},
}
#: Removed with everything in them (other tags not kept are unwrapped: their text stays).
NOTE_DROPPED = frozenset(
    {"script", "style", "template", "noscript", "iframe", "object", "embed", "svg", "math"}
)
NOTE_SCHEMES = frozenset({"http", "https", "mailto"})


def sanitise_notes(notes_html: str | None, base_url: str | None = None) -> str:
    """Show notes as HTML that is safe to put in a page, by nh3 (the Ammonia sanitiser).

    Kept: :data:`NOTE_TAGS` with :data:`NOTE_ATTRIBUTES` (no ``style``, no ``on*`` handler,
    no ``class`` or ``id``); links only to http(s) and mailto URLs, relative ones resolved
    against ``base_url`` (an http(s) URL: the episode's link or page) or dropped, each with
    ``rel="noopener noreferrer nofollow"``. Scripts, styles and the like go with their
    content; other tags are unwrapped. Raises ``ImportError`` without nh3.
    """
    import nh3

    if not notes_html:
        return ""
    base = base_url.strip() if base_url and is_http_url(base_url) else None

    def absolute(element: str, attribute: str, value: str) -> str | None:
        if attribute != "href":
            return value
        href = value.strip()
        scheme = urlsplit(href).scheme.lower()
        if scheme:  # nh3 checked it already; checked again, in case the two parse apart
            return href if scheme in NOTE_SCHEMES else None
        if not base or not href or href.startswith("#"):
            return None  # relative ("/x", "//host/x") with no base, or in-page
        try:
            joined = join_url(base, href)
        except ValueError:
            return None
        return joined if is_http_url(joined) else None

    return nh3.clean(
        notes_html,
        tags=set(NOTE_TAGS),
        clean_content_tags=set(NOTE_DROPPED),
        attributes={tag: set(names) for tag, names in NOTE_ATTRIBUTES.items()},
        attribute_filter=absolute,
        url_schemes=set(NOTE_SCHEMES),
        link_rel="noopener noreferrer nofollow",
        strip_comments=True,
    )


def json_cell_html(value: object) -> str | None:
    """A JSON list or object as a short HTML list (escaped): each item's values, links for
    http(s) URLs; None when ``value`` is not JSON text of a list or an object."""
    if not isinstance(value, str) or not value.lstrip().startswith(("[", "{")):
        return None
    try:
        parsed = json.loads(value)
    except ValueError:
        return None
    items = parsed if isinstance(parsed, list) else [parsed]
    if not items:
        return None
    shown = []
    for item in items:
        parts = item.values() if isinstance(item, dict) else [item]
        text = " · ".join(_json_part(part) for part in parts if part not in (None, ""))
        shown.append(f"<li>{text}</li>")
    return f'<ul class="archive-json">{"".join(shown)}</ul>'


def _json_part(part: object) -> str:
    if isinstance(part, dict | list):
        return html.escape(json.dumps(part, ensure_ascii=False))
    text = str(part)
    if is_http_url(text):
        path = urlsplit(text).path.rstrip("/")
        name = path.rpartition("/")[2] or urlsplit(text).netloc
        return f'<a href="{html.escape(text)}">{html.escape(name)}</a>'
    return html.escape(text)


def arrange(columns: Sequence[str], first: Sequence[str], last: Sequence[str]) -> list[str]:
    """``columns`` with those named in ``first`` first and in ``last`` last, each in that
    order; the others keep theirs. Names not in ``columns`` are ignored."""
    present = set(columns)
    head = [c for c in first if c in present]
    tail = [c for c in last if c in present and c not in head]
    middle = [c for c in columns if c not in head and c not in tail]
    return head + middle + tail


def ordered_tables(
    tables: Iterable[Mapping[str, Any]], described: Mapping[str, Mapping[str, Any]]
) -> list[dict[str, Any]]:
    """The database page's tables in the metadata's order (the archive's own: podcasts,
    episodes, links…), then the others by name; each with its ``title`` and ``summary`` (the
    first sentence of its description)."""
    rank = {name: i for i, name in enumerate(described)}
    ordered = []
    for table in sorted(tables, key=lambda t: (rank.get(t["name"], len(rank)), t["name"])):
        meta = described.get(table["name"]) or {}
        description = str(meta.get("description") or "")
        summary = description.split(". ")[0].rstrip(".") + "." if description else ""
        ordered.append({**table, "title": meta.get("title") or table["name"], "summary": summary})
    return ordered


def unique_facets(facets: Iterable[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """Facet results without repeats: ``?_facet=domain`` on a table whose metadata facets by
    domain already gives Datasette two identical ones."""
    seen: set[tuple[Any, Any]] = set()
    kept = []
    for facet in facets:
        key = (facet.get("name"), facet.get("type"))
        if key not in seen:
            seen.add(key)
            kept.append(facet)
    return kept


# the plugin: Datasette hooks -----------------------------------------------------------------

#: The Datasette instances :func:`make_datasette` built: the only ones the hooks act for.
SERVED: weakref.WeakSet[Any] = weakref.WeakSet()
#: Where a server built by :func:`~podarchive.web.serve.make_datasette` serves the media
#: folder (a static mount, under ``/-/`` so that no database name can take it), and the
#: servers that do (the folder exists).
MEDIA_MOUNT = "-/media"
#: Each served Datasette's media folder. Only stored payloads are served, by their
#: content address (never a partial download, a validator file or anything else there).
MEDIA_SERVED: weakref.WeakKeyDictionary[Any, Path] = weakref.WeakKeyDictionary()
#: Where the podcasts' cards are served; ``/<database>/feeds`` with no arguments is
#: answered from there (:func:`asgi_wrapper`), with arguments it is Datasette's table.
PODCASTS_MOUNT = "-/podcasts"
#: Where an archive's page is served; ``/<database>`` with no arguments is answered from there
#: (with ``?sql=`` or any other argument it is Datasette's).
HOME_MOUNT = "-/archive-home"
MEDIA_PATH = r"(?P<path>[0-9a-f]{2}/[0-9a-f]{2}/[0-9a-f]{64}(?:\.[A-Za-z0-9]{1,8})?)"
#: In a canned query's results, a column shown as a link to the row its id column names.
QUERY_LINKS = {"episode": ("episode_id", "episodes"), "podcast": ("feed_id", "feeds")}


def register_plugin() -> None:
    """Mark this module's hooks and register it with Datasette's plugin manager (once)."""
    from datasette import hookimpl
    from datasette.plugins import pm

    module = sys.modules[__name__]
    if pm.is_registered(module):
        return
    hooks = (prepare_jinja2_environment, render_cell, extra_template_vars, register_routes)
    for hook in (*hooks, asgi_wrapper):
        hookimpl(hook)
    hookimpl(trylast=True)(prepare_connection)  # after Datasette's own: its escape_fts replaced
    hookimpl(hookwrapper=True)(handle_exception)  # around Datasette's own, which it may replace
    pm.register(module, name=PLUGIN)


def register_routes() -> list[tuple[str, Any]]:
    """Hook: ``/-/media/ab/cd/<sha256><ext>`` serves a stored payload of the media folder;
    ``/<database>/feeds/<id>`` is the podcast's page (its ``.json`` stays Datasette's row);
    the change feeds, revision pages and republished feeds (:mod:`.change_routes`)."""
    from podarchive.web.change_routes import routes
    from podarchive.web.pages import database_page, index_page, podcast_page, podcasts_page

    return [
        (rf"^/{MEDIA_MOUNT}/{MEDIA_PATH}$", _media_file),
        (r"^/(?P<database>[^/]+)/feeds/(?P<pk>[0-9]{1,18})$", podcast_page),
        (r"^/$", index_page),
        (rf"^/{PODCASTS_MOUNT}/(?P<database>[^/]+)$", podcasts_page),
        (rf"^/{HOME_MOUNT}/(?P<database>[^/]+)$", database_page),
        *routes(),
    ]


def asgi_wrapper(datasette: Any) -> Callable[[Any], Any]:
    """Hook: the episodes table's page (HTML) selects only its default columns
    (:data:`~podarchive.web.reading.EPISODE_COLUMNS`, as ``_col`` arguments) unless the
    reader asked for columns (``_col``, ``_nocol``) or every one (``_wide``): 100 rows of
    46 columns, each cell through the render hooks, were most of the page's time."""
    from urllib.parse import parse_qsl, urlencode

    def wrap(app: Any) -> Any:
        async def wrapped(scope: Any, receive: Any, send: Any) -> None:
            path = scope.get("path", "") if scope.get("type") == "http" else ""
            query = scope.get("query_string", b"")
            if datasette not in SERVED:
                pass
            elif not query and path.count("/") == 1 and path[1:] in datasette.databases:
                if path[1:] not in CROSS_SHARDS.get(datasette, {}):  # an archive's page
                    home = f"/{HOME_MOUNT}{path}"
                    scope = {**scope, "path": home, "raw_path": home.encode("latin-1")}
            elif path.endswith("/feeds") and path.count("/") == 2:
                if not query:  # the podcasts as cards
                    cards = f"/{PODCASTS_MOUNT}{path[: -len('/feeds')]}"
                    scope = {**scope, "path": cards, "raw_path": cards.encode("latin-1")}
            elif path.endswith("/episodes") and path.count("/") == 2:
                args = parse_qsl(query.decode("latin-1"), True)
                if not {key for key, _ in args} & {"_col", "_nocol", WIDE}:
                    args += [("_col", column) for column in EPISODE_COLUMNS if column != "id"]
                    scope = {**scope, "query_string": urlencode(args).encode("latin-1")}
            await app(scope, receive, send)

        return wrapped

    return wrap


async def _media_file(datasette: Any, request: Any, send: Any) -> Any:
    from datasette.utils.asgi import Response

    from podarchive.web.media_route import send_payload

    root = MEDIA_SERVED.get(datasette)
    if root is None:
        return Response.text("404: the media folder is not served here", status=404)
    path = request.url_vars["path"]
    await send_payload(root / path, path.rsplit("/", 1)[1][:64], request, send)
    return None


def _config(datasette: Any) -> dict[str, Any]:
    config = datasette.plugin_config(PLUGIN)
    return config if isinstance(config, dict) else {}


def prepare_connection(conn: Any, database: str, datasette: Any) -> None:
    """Hook: table searches read what was typed with :func:`fts_phrases` (never a syntax
    error), and a cross-shard database's connection attaches its shards (read-only, or
    immutable as each shard is served), each as a schema of its name."""
    if datasette not in SERVED:
        return
    conn.create_function("escape_fts", 1, fts_phrases, deterministic=True)
    conn.set_authorizer(_no_secrets)
    for name, path, immutable in CROSS_SHARDS.get(datasette, {}).get(database, ()):
        mode = "immutable=1" if immutable else "mode=ro"
        uri = f"file:{quote(str(path.resolve()))}?{mode}"
        conn.execute("attach database ? as ?", (uri, name))


#: Columns no page, canned query or reader's SQL may read: the WebSub secret a hub signs
#: notifications with and the callback's token (#29). Read, they are NULL.
SECRET_COLUMNS = frozenset({("push_subscriptions", "secret"), ("push_subscriptions", "callback")})


def _no_secrets(action: int, arg1: str | None, arg2: str | None, *_: object) -> int:
    """SQLite authorizer of every served connection: a read of a :data:`SECRET_COLUMNS`
    column gives NULL (SQLITE_IGNORE); everything else is as before."""
    import sqlite3

    if action == sqlite3.SQLITE_READ and (arg1, arg2) in SECRET_COLUMNS:
        return sqlite3.SQLITE_IGNORE
    return sqlite3.SQLITE_OK


def handle_exception(
    datasette: Any, request: Any, exception: Exception
) -> Generator[None, Any, None]:
    """Hook (a wrapper): a reader's bad request (a 4xx: a search in raw mode that FTS5
    cannot parse, a NUL in a canned query's text, a missing row) answers with the error page
    alone, without the traceback (with its locals) that Datasette prints for every error;
    the server's log keeps Datasette's one ``ERROR:`` line for a failed query. Errors of
    the server itself (5xx) are left to Datasette."""
    outcome = yield
    if datasette in SERVED and 400 <= getattr(exception, "status", 500) < 500:
        outcome.force_result([lambda: _error_page(datasette, request, exception)])


async def _error_page(datasette: Any, request: Any, exception: Any) -> Any:
    """Datasette's error page (or JSON) for a 4xx ``exception``, a failed search named so."""
    from datasette import Response
    from datasette.utils import add_cors_headers
    from markupsafe import Markup

    message = exception.args[0] if exception.args else ""
    info, title = dict(getattr(exception, "error_dict", {})), getattr(exception, "title", None)
    if hasattr(exception, "message"):  # a DatasetteError
        message = Markup(exception.message) if exception.message_is_html else exception.message
    if title == "Invalid SQL" and any(key.startswith("_search") for key in request.args):
        title = "Invalid search"
        message = f"{message} (in raw mode, _searchmode=raw, the search is FTS5 query syntax)"
    info.update({"ok": False, "error": message, "status": exception.status, "title": title})
    headers: dict[str, str] = {}
    if datasette.cors:
        add_cors_headers(headers)
    if request.path.split("?")[0].endswith(".json"):
        return Response.json(info, status=exception.status, headers=headers)
    template = datasette.jinja_env.select_template([f"{exception.status}.html", "error.html"])
    context = {
        **info,
        "urls": datasette.urls,
        "app_css_hash": datasette.app_css_hash(),
        "menu_links": list,
    }
    page = await template.render_async(context)
    return Response.html(page, status=exception.status, headers=headers)


def prepare_jinja2_environment(env: Any, datasette: Any) -> None:
    """Hook: the templates' filters ``archive_notes`` (sanitised notes, see
    :func:`sanitise_notes`) and ``hms``."""
    if datasette not in SERVED:
        return
    from markupsafe import Markup

    def archive_notes(notes_html: str | None, base_url: str | None = None) -> Markup:
        return Markup(sanitise_notes(notes_html, base_url))  # sanitised

    env.filters["archive_notes"] = archive_notes
    env.filters["hms"] = lambda seconds: hms(seconds) or ""
    env.filters["archive_excerpt"] = excerpt


def render_cell(
    row: Any, value: Any, column: str, table: str | None, database: str, datasette: Any
) -> Any:
    """Hook: durations as ``h:mm:ss``, JSON columns as lists, and in canned queries the
    ``episode`` and ``podcast`` columns as links to their rows (in a cross-shard database:
    in the row's ``shard``, itself a link to that shard's database)."""
    if datasette not in SERVED:
        return None
    from markupsafe import Markup, escape

    if column == "published" and isinstance(value, str) and len(value) > 10 and value[4:5] == "-":
        return Markup(f'<time datetime="{escape(value)}">{escape(value[:10])}</time>')
    if table is None:
        return _query_cell(row, value, column, database, datasette)
    config = _config(datasette)
    if column in config.get("durations", {}).get(table, ()):
        return hms(value)
    if column in config.get("json_columns", {}).get(table, ()):
        rendered = json_cell_html(value)
        return None if rendered is None else Markup(rendered)  # escaped
    return None


def _query_cell(row: Any, value: Any, column: str, database: str, datasette: Any) -> Any:
    """A canned query's cell: a ``shard`` as a link to its database, an ``episode`` or a
    ``podcast`` as a link to its row; None for the others."""
    from markupsafe import Markup, escape

    shards = {name for name, _, _ in CROSS_SHARDS.get(datasette, {}).get(database, ())}
    if column == "start":
        return _moment_cell(row, value)
    if column == "shard" and value in shards:
        href = datasette.urls.database(value)
        return Markup(f'<a href="{escape(href)}">{escape(value)}</a>')
    if column not in QUERY_LINKS or value in (None, ""):
        return None
    id_column, target = QUERY_LINKS[column]
    try:
        target_id = row[id_column]
        shard = row["shard"] if shards else database
    except (IndexError, KeyError):
        return None
    if target_id is None or shard not in (shards or {database}):
        return None
    href = row_url(datasette, shard, target, target_id)
    return Markup(f'<a href="{escape(href)}">{escape(value)}</a>')


def _moment_cell(row: Any, value: Any) -> Any:
    """A canned query's ``start`` (h:mm:ss) as a link to the media there (its row's
    ``media_link``); None without one."""
    from markupsafe import Markup, escape

    try:
        moment = row["media_link"]
    except (IndexError, KeyError):
        return None
    if not (isinstance(value, str) and value and isinstance(moment, str) and is_http_url(moment)):
        return None
    return Markup(f'<a href="{escape(moment)}">{escape(value)}</a>')


def row_url(datasette: Any, database: str, table: str, pk: object) -> str:
    from datasette.utils import tilde_encode

    return str(datasette.urls.row(database, table, tilde_encode(str(pk))))


def extra_template_vars(
    database: str | None, table: str | None, view_name: str, request: Any, datasette: Any
) -> Any:
    """Hook: what the templates in ``datasette/templates`` call.

    ``archive_label(column)``, ``archive_columns(display_columns, display_rows)`` (the
    metadata's column order; on a table page the episode's title links to its page),
    ``archive_facets(facets)`` (no repeats), ``archive_tables(tables, metadata)``, and on an
    episode's page ``archive_episode``: the episode and its related rows. With shards:
    ``archive_searches`` (the cross-shard databases: name, title, search URL) and, on a
    cross-shard database's page, ``archive_shards`` (the shards it searches: name, URL).
    """
    if datasette not in SERVED:
        return None
    config = _config(datasette)
    labels: dict[str, str] = config.get("labels", {})
    order: dict[str, list[str]] = config.get("column_order", {}).get(table or "", {})

    cross = CROSS_SHARDS.get(datasette, {})
    searches = [
        {
            "name": group,
            "title": (datasette.metadata("title", database=group) or group),
            "url": datasette.urls.query(group, "search_episodes"),
            "shards": [name for name, _, _ in members],
        }
        for group, members in cross.items()
    ]

    def archive_label(column: str) -> str:
        return labels.get(column, column)

    def archive_columns(
        display_columns: list[dict[str, Any]], display_rows: Iterable[Iterable[dict[str, Any]]]
    ) -> tuple[list[dict[str, Any]], list[list[dict[str, Any]]]]:
        by_name = {c["name"]: c for c in display_columns}
        names = arrange(list(by_name), order.get("first", ()), order.get("last", ()))
        rows = []
        for display_row in display_rows:
            cells = {cell["column"]: cell for cell in display_row}
            if view_name == "table" and table == "episodes":
                cells = _title_links(cells, datasette, database or "")
            rows.append([cells[name] for name in names if name in cells])
        return [by_name[name] for name in names], rows

    def archive_shown(
        display_columns: list[dict[str, Any]], display_rows: Iterable[Iterable[dict[str, Any]]]
    ) -> tuple[list[dict[str, Any]], list[list[dict[str, Any]]]]:
        """:func:`archive_columns`, the episodes table's cut to its default columns."""
        columns, rows = archive_columns(display_columns, display_rows)
        if view_name != "table" or table != "episodes" or request is None:
            return columns, rows
        shown = default_columns([c["name"] for c in columns], request.args)
        keep = [i for i, c in enumerate(columns) if c["name"] in shown]
        return [columns[i] for i in keep], [[row[i] for i in keep] for row in rows]

    def archive_tables(
        tables: Iterable[Mapping[str, Any]], metadata: Mapping[str, Any]
    ) -> list[dict[str, Any]]:
        return ordered_tables(tables, metadata.get("tables") or {})

    async def template_vars() -> dict[str, Any]:
        found: dict[str, Any] = {
            "archive_label": archive_label,
            "archive_columns": archive_columns,
            "archive_shown": archive_shown,
            "archive_query_columns": query_columns,
            "archive_sentences": sentences,
            "archive_param": lambda name: PARAMETERS.get(name, name),
            "archive_column_notes": {},
            "archive_facets": unique_facets,
            "archive_tables": archive_tables,
            "archive_episode": None,
            "archive_searches": searches,
            "archive_shards": [
                {"name": name, "url": datasette.urls.database(name)}
                for name, _, _ in cross.get(database or "", ())
            ],
        }
        if view_name == "row" and table == "episodes" and database and request is not None:
            found["archive_episode"] = await _episode(datasette, database, request)
        if view_name == "table" and request is not None and database and table:
            if "_schema" not in request.args:
                found.update(table_definition=None, view_definition=None)  # on request only
            described = datasette.table_metadata(database, table)
            if described.get("columns"):  # in a <details>, not a wall above the rows
                found["metadata"] = {k: v for k, v in described.items() if k != "columns"}
                found["archive_column_notes"] = described["columns"]
        return found

    return template_vars


def _title_links(cells: dict[str, Any], datasette: Any, database: str) -> dict[str, Any]:
    """An episodes table row's cells, its title a link to the episode's page."""
    from markupsafe import Markup, escape

    pk = next((c for c in cells.values() if c.get("value_type") == "pk"), None)
    title = cells.get("title")
    if pk is None or title is None or title.get("raw") in (None, ""):
        return cells
    href = row_url(datasette, database, "episodes", pk["raw"])
    link = Markup(f'<a href="{escape(href)}">{escape(title["value"])}</a>')
    return {**cells, "title": {**title, "value": link}}


async def _episode(datasette: Any, database: str, request: Any) -> dict[str, Any] | None:
    """An episode's page (see :mod:`podarchive.web.episode_view`): its rows read, then shown."""
    from datasette.utils import urlsafe_components

    pks = urlsafe_components(request.url_vars["pks"])
    if len(pks) != 1:
        return None
    rows = await read_episode(datasette.get_database(database), pks[0])
    if rows is None:
        return None
    served = datasette in MEDIA_SERVED
    page = episode_page(
        rows,
        lambda table, pk: row_url(datasette, database, table, pk),
        datasette.urls.table(database, "transcript_segments"),
        (lambda path: str(datasette.urls.path(f"/{MEDIA_MOUNT}/{path}"))) if served else None,
    )
    from podarchive.web.pages import media_url
    from podarchive.web.reading import episode_artwork

    page["artwork"] = await episode_artwork(  # #28: the archived copy, else the publisher's
        datasette.get_database(database), rows.episode["id"], media_url(datasette)
    )
    if await datasette.get_database(database).table_exists("captures"):  # #27: provenance
        captures = datasette.urls.table(database, "captures")
        page["captures_url"] = f"{captures}?episode_id={rows.episode['id']}"
    return page
