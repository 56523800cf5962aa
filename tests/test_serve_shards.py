"""``podarchive serve`` over the shards of a layout (issue #16): each shard its own database,
and ``all-shards`` searching every shard at once.

The shards are real archives: PyTorch fixture feeds on a loopback server (each retitled, one
episode given a word of its own), each stored by the pipeline in the shard its URL hashes to
(``cluster.shards.shard_of``), plus a feed that fails (404) in its own shard. Datasette is
queried in-process with its test client.
"""

from __future__ import annotations

import asyncio
import re
import sqlite3
from pathlib import Path
from typing import Any

import httpx
import pytest
from loopback import LoopbackSite, Reply, serve_pytorch

from podarchive.core.errors import ConfigError, NotAnArchive, PodarchiveError
from podarchive.core.settings import Settings
from podarchive.read.schedule_files import FeedSchedule
from podarchive.rules.shards import shard_of, shard_path
from podarchive.store import Archive
from podarchive.update.run import update_feeds
from podarchive.web.serve import make_datasette, metadata_for, serve_shards
from podarchive.web.shard_search import CROSS_NAME, shard_groups, sqlite_attach_limit

pytest.importorskip("datasette.app", reason="datasette is not installed")

RUN_SETTINGS = Settings(
    connect_timeout=2, read_timeout=2, deadline=10, allow_private_hosts=True, host_gap=0,
    retry_base=0.01, retries=0,
)  # fmt: skip
SHARDS = 3
NAMES = [f"shard-{k}-of-{SHARDS}" for k in range(SHARDS)]


def _feeds_by_shard(site: LoopbackSite) -> dict[int, list[FeedSchedule]]:
    """One retitled PyTorch feed at least in every shard (more prefixes until each has one;
    the port is random, so the URLs and their shards are too), and a failing feed."""
    by_shard: dict[int, list[FeedSchedule]] = {}
    for i in range(200):
        if len(by_shard) == SHARDS:
            break
        url = serve_pytorch(site, prefix=f"/show{i}")
        k = shard_of(url, SHARDS)
        if k in by_shard:
            continue
        reply = site.routes[f"/show{i}/feed.xml"]
        assert isinstance(reply, Reply)
        reply.body = reply.body.replace(
            b"<title>PyTorch Developer Podcast</title>", f"<title>Show {k}</title>".encode(), 1
        ).replace(
            b"<title>Weak references</title>", f"<title>Weak references zeta{k}</title>".encode()
        )
        by_shard[k] = [FeedSchedule(url=url, name=f"show {k}")]
    assert len(by_shard) == SHARDS
    gone = site.url("/gone/feed.xml")
    site.serve("/gone/feed.xml", b"not here", status=404)
    by_shard[shard_of(gone, SHARDS)].append(FeedSchedule(url=gone, name="gone"))
    return by_shard


@pytest.fixture(scope="module")
def shard_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    directory = tmp_path_factory.mktemp("shards")
    with LoopbackSite() as site:
        for k, schedules in sorted(_feeds_by_shard(site).items()):
            with Archive(shard_path(directory, k, SHARDS)) as archive:
                update_feeds(archive, schedules, settings=RUN_SETTINGS)
    return directory


@pytest.fixture(scope="module")
def shards(shard_dir: Path) -> list[Path]:
    return [shard_path(shard_dir, k, SHARDS) for k in range(SHARDS)]


def get(datasette: Any, path: str, *, status: int = 200) -> httpx.Response:
    async def fetch() -> httpx.Response:
        response: httpx.Response = await datasette.client.get(path)
        return response

    response = asyncio.run(fetch())
    assert response.status_code == status, response.text[:2000]
    return response


def rows(datasette: Any, path: str) -> list[dict[str, Any]]:
    sep = "&" if "?" in path else "?"
    result: list[dict[str, Any]] = get(datasette, f"{path}{sep}_shape=array").json()
    return result


def links(page: str, pattern: str) -> list[tuple[str, str]]:
    """(href, text) of the page's links whose href matches ``pattern``."""
    return re.findall(rf'<a href="({pattern})">([^<]*)</a>', page)


def copy_archive(source: Path, target: Path) -> None:
    src, dst = sqlite3.connect(source), sqlite3.connect(target)
    try:
        src.backup(dst)
    finally:
        src.close()
        dst.close()


# one Datasette over the shards -----------------------------------------------------------------


def test_every_shard_is_a_database_after_the_cross_shard_one(shards: list[Path]) -> None:
    datasette = make_datasette(shards)
    assert [n for n in datasette.databases if n != "_internal"] == [CROSS_NAME, *NAMES]
    databases = datasette.metadata()["databases"]
    archive = metadata_for()["databases"]["archive"]
    for name in NAMES:
        assert databases[name]["queries"] == archive["queries"]
        assert databases[name]["tables"] == archive["tables"]
    assert set(databases[CROSS_NAME]["queries"]) == {
        "search_episodes",
        "recent_episodes",
        "episodes_linking_to",
        "most_linked_domains",
        "failing_feeds",
    }


def test_the_cross_shard_search_finds_episodes_in_every_shard(shards: list[Path]) -> None:
    datasette = make_datasette(shards)
    found = rows(datasette, f"/{CROSS_NAME}/search_episodes.json?q=strides")
    assert sorted((r["shard"], r["episode"], r["podcast"]) for r in found) == [
        (name, "Strides", f"Show {k}") for k, name in enumerate(NAMES)
    ]
    assert all("«" in r["passage"] and r["duration"] == "0:19:48" for r in found)
    # a word of one shard's own: only there
    for k, name in enumerate(NAMES):
        (only,) = rows(datasette, f"/{CROSS_NAME}/search_episodes.json?q=zeta{k}")
        assert (only["shard"], only["episode"]) == (name, f"Weak references zeta{k}")


def test_cross_shard_results_link_to_the_episode_in_its_shard(shards: list[Path]) -> None:
    datasette = make_datasette(shards)
    page = get(datasette, f"/{CROSS_NAME}/search_episodes?q=strides").text
    episodes = links(page, r"/shard-\d-of-3/episodes/\d+")
    assert sorted(href.split("/")[1] for href, _ in episodes) == NAMES
    assert {text for _, text in episodes} == {"Strides"}
    assert sorted(links(page, r"/shard-\d-of-3")) == [(f"/{n}", n) for n in NAMES]
    podcasts = links(page, r"/shard-\d-of-3/feeds/\d+")
    assert sorted(text for _, text in podcasts) == [f"Show {k}" for k in range(SHARDS)]
    for href, _ in episodes:  # the episode's own page in its shard
        episode = get(datasette, href).text
        assert "<h1>Strides</h1>" in episode
        assert "archive-episode" in episode


def test_cross_shard_queries_span_every_shard(shards: list[Path]) -> None:
    datasette = make_datasette(shards)
    recent = rows(datasette, f"/{CROSS_NAME}/recent_episodes.json")
    assert len(recent) == 9 * SHARDS
    assert [r["published"] for r in recent] == sorted(
        (r["published"] for r in recent), reverse=True
    )
    assert {r["shard"] for r in recent} == set(NAMES)

    linking = rows(datasette, f"/{CROSS_NAME}/episodes_linking_to.json?target=github.com")
    per_shard = {name: {r["episode"] for r in linking if r["shard"] == name} for name in NAMES}
    assert per_shard[NAMES[0]]
    assert all(titles == per_shard[NAMES[0]] for titles in per_shard.values())
    for k, name in enumerate(NAMES):  # each shard's part is the archive's own query
        own = rows(make_datasette(shards[k]), f"/{name}/episodes_linking_to.json?target=github.com")
        mine = [{c: r[c] for c in own[0]} for r in linking if r["shard"] == name]
        assert mine == own

    domains = {r["domain"]: r for r in rows(datasette, f"/{CROSS_NAME}/most_linked_domains.json")}
    one = {
        r["domain"]: r
        for r in rows(make_datasette(shards[0]), f"/{NAMES[0]}/most_linked_domains.json")
    }
    assert set(domains) == set(one)
    for domain, row in domains.items():  # three copies of one feed: three times the counts
        assert row["shards"] == SHARDS
        assert row["links"] == SHARDS * one[domain]["links"]
        assert row["episodes"] == SHARDS * one[domain]["episodes"]
        assert row["podcasts"] == SHARDS * one[domain]["podcasts"]
        assert row["urls"] == one[domain]["urls"]  # the same URLs in every shard: once

    (failing,) = rows(datasette, f"/{CROSS_NAME}/failing_feeds.json")
    assert failing["feed"] == "gone"
    assert failing["failures"] == 1
    assert failing["shard"] == NAMES[shard_of(failing["url"], SHARDS)]


def test_cross_shard_custom_sql_sees_each_shard_as_a_schema(shards: list[Path]) -> None:
    datasette = make_datasette(shards)
    union = " union all ".join(
        f"select '{n}' as shard, count(*) as n from \"{n}\".feeds" for n in NAMES
    )
    counts = {r["shard"]: r["n"] for r in rows(datasette, f"/{CROSS_NAME}.json?sql={union}")}
    assert sum(counts.values()) == SHARDS + 1
    assert set(counts) == set(NAMES)


def test_the_index_and_the_cross_shard_page_open_with_the_search(shards: list[Path]) -> None:
    datasette = make_datasette(shards)
    index = get(datasette, "/").text
    form = index.index(f'action="/{CROSS_NAME}/search_episodes"')
    assert form < index.index(f'href="/{NAMES[0]}"')
    assert index.index(f'href="/{CROSS_NAME}"') < index.index(f'href="/{NAMES[0]}"')
    page = get(datasette, f"/{CROSS_NAME}").text
    assert 'class="archive-search"' in page
    assert page.index(f'action="/{CROSS_NAME}/search_episodes"') < page.index('id="queries"')
    assert links(page, r"/shard-\d-of-3") == [(f"/{n}", n) for n in NAMES]
    assert f'from "{NAMES[0]}".episodes' in page  # the custom SQL's example


def test_each_shard_reads_like_an_archive(shards: list[Path]) -> None:
    datasette = make_datasette(shards)
    for k, name in enumerate(NAMES):
        page = get(datasette, f"/{name}").text
        assert f'action="/{name}/search_episodes"' in page
        assert "Podcasts</a><code>feeds</code>" in page
        (episode,) = rows(datasette, f"/{name}/episodes.json?_search=zeta{k}")
        html = get(datasette, f"/{name}/episodes/{episode['id']}").text
        assert f"<h1>Weak references zeta{k}</h1>" in html
        found = rows(datasette, f"/{name}/search_episodes.json?q=strides")
        assert [r["episode"] for r in found] == ["Strides"]
        table = get(datasette, f"/{name}/episodes").text
        assert links(table, rf"/{name}/episodes/\d+")  # titles link to episode pages
        assert "0:19:48" in table  # durations as h:mm:ss


# the single archive, unchanged -----------------------------------------------------------------


def test_one_archive_is_served_as_before(shards: list[Path], tmp_path: Path) -> None:
    db = tmp_path / "archive.db"
    copy_archive(shards[0], db)
    datasette = make_datasette(db)
    assert [n for n in datasette.databases if n != "_internal"] == ["archive"]
    assert datasette.metadata()["databases"] == metadata_for()["databases"]
    index = get(datasette, "/").text.split("</style>", 1)[1]  # #28: the archive's search box
    assert index.count('class="archive-search"') == 1
    assert 'action="/archive/search_episodes"' in index
    page = get(datasette, "/archive/search_episodes?q=strides").text
    assert [h for h, _ in links(page, r"/archive/episodes/\d+")] == ["/archive/episodes/2"]
    assert "archive-note" not in get(datasette, "/archive").text.split("</style>", 1)[1]


# more shards than SQLite attaches --------------------------------------------------------------


def test_shards_beyond_the_attach_limit_are_searched_in_groups(
    shards: list[Path], tmp_path: Path
) -> None:
    limit = sqlite_attach_limit()
    assert limit >= 1
    count = limit + 2
    paths = [shard_path(tmp_path, k, count) for k in range(count)]
    for k, path in enumerate(paths):
        copy_archive(shards[k % SHARDS], path)
    names = [p.stem for p in paths]
    assert shard_groups(names) == [
        ("shards-group-1", names[:limit]),
        ("shards-group-2", names[limit:]),
    ]
    datasette = make_datasette(paths)
    assert [n for n in datasette.databases if n != "_internal"] == [
        "shards-group-1",
        "shards-group-2",
        *names,
    ]
    for group, members in shard_groups(names):
        found = rows(datasette, f"/{group}/search_episodes.json?q=strides")
        assert sorted(r["shard"] for r in found) == sorted(members)
    assert "searched in groups" in get(datasette, "/shards-group-2").text
    # (its index is checked with fewer shards below: Datasette's index page checks each
    # table of each database, seconds for a dozen archives)


def test_a_smaller_attach_limit_groups_too(shards: list[Path]) -> None:
    datasette = make_datasette(shards, attach_limit=2)
    assert [n for n in datasette.databases if n != "_internal"][:2] == [
        "shards-group-1",
        "shards-group-2",
    ]
    one = rows(datasette, "/shards-group-1/search_episodes.json?q=strides")
    two = rows(datasette, "/shards-group-2/search_episodes.json?q=strides")
    assert [sorted(r["shard"] for r in one), [r["shard"] for r in two]] == [NAMES[:2], NAMES[2:]]
    get(datasette, f"/{CROSS_NAME}", status=404)
    index = get(datasette, "/").text
    first, second = (index.index(f'action="/shards-group-{i}/search_episodes"') for i in (1, 2))
    assert first < second < index.index(f'href="/{NAMES[0]}"')
    page = get(datasette, "/shards-group-2").text
    assert links(page, r"/shard-\d-of-3") == [(f"/{NAMES[2]}", NAMES[2])]


# serve_shards: what the CLI calls --------------------------------------------------------------


@pytest.fixture
def served(monkeypatch: pytest.MonkeyPatch) -> list[tuple[Any, tuple[str, int]]]:
    """uvicorn's Server.run recorded instead of run: (its config, the address it was given)."""
    import uvicorn

    calls: list[tuple[Any, tuple[str, int]]] = []

    def run(self: Any, sockets: list[Any]) -> None:
        (listener,) = sockets
        calls.append((self.config, listener.getsockname()))

    monkeypatch.setattr(uvicorn.Server, "run", run)
    return calls


def test_serve_shards_serves_the_layout(
    shard_dir: Path, served: list[tuple[Any, tuple[str, int]]]
) -> None:
    said: list[str] = []
    serve_shards(shard_dir, host="127.0.0.1", port=0, announce=said.append)
    ((_, (host, port)),) = served
    assert host == "127.0.0.1"
    assert port > 0
    assert said == [f"http://127.0.0.1:{port}/{CROSS_NAME}"]  # the port it listens on
    serve_shards(shard_dir, shards=SHARDS, port=0)
    assert len(served) == 2


def one_line_error(error: pytest.ExceptionInfo[BaseException]) -> str:
    message = str(error.value)
    assert "\n" not in message
    assert message
    return message


def test_serve_shards_refuses_a_directory_without_shards(
    tmp_path: Path, served: list[tuple[Any, tuple[str, int]]]
) -> None:
    (tmp_path / "archive.db").write_bytes(b"")
    with pytest.raises(ConfigError) as error:
        serve_shards(tmp_path)
    assert "no shard archives (shard-K-of-N.db) in" in one_line_error(error)
    with pytest.raises(ConfigError) as error:
        serve_shards(tmp_path / "missing")
    one_line_error(error)
    assert not served


def test_serve_shards_asks_which_of_several_layouts(
    shards: list[Path], tmp_path: Path, served: list[tuple[Any, tuple[str, int]]]
) -> None:
    for k in range(2):
        copy_archive(shards[k], shard_path(tmp_path, k, 2))
    for k in range(SHARDS):
        copy_archive(shards[k], shard_path(tmp_path, k, SHARDS))
    with pytest.raises(ConfigError) as error:
        serve_shards(tmp_path)
    assert "holds layouts of 2 and 3 shards: give --shards N" in one_line_error(error)
    with pytest.raises(ConfigError) as error:
        serve_shards(tmp_path, shards=4)
    assert "no archive of a 4-shard layout" in one_line_error(error)
    said: list[str] = []
    serve_shards(tmp_path, shards=2, port=0, announce=said.append)
    ((_, (_, port)),) = served
    assert said == [f"http://127.0.0.1:{port}/{CROSS_NAME}"]


def test_serve_shards_refuses_a_shard_that_is_not_an_archive(
    shards: list[Path], tmp_path: Path, served: list[tuple[Any, tuple[str, int]]]
) -> None:
    copy_archive(shards[0], shard_path(tmp_path, 0, 2))
    other = shard_path(tmp_path, 1, 2)
    conn = sqlite3.connect(other)
    conn.execute("create table notes (text)")
    conn.close()
    with pytest.raises(NotAnArchive) as error:
        serve_shards(tmp_path)
    message = one_line_error(error)
    assert str(other) in message
    assert "is not a podarchive archive" in message

    other.unlink()
    other.write_bytes(b"")
    with pytest.raises(NotAnArchive) as error:
        serve_shards(tmp_path)
    message = one_line_error(error)
    assert f"no archive at {other}" in message
    assert "its worker has stored nothing" in message
    assert not served


def test_two_archives_of_one_name_are_refused(shards: list[Path], tmp_path: Path) -> None:
    for part in ("a", "b"):
        (tmp_path / part).mkdir()
        copy_archive(shards[0], tmp_path / part / "archive.db")
    with pytest.raises(PodarchiveError) as error:
        make_datasette([tmp_path / "a" / "archive.db", tmp_path / "b" / "archive.db"])
    assert "would both be served as 'archive'" in one_line_error(error)
    copy_archive(shards[0], tmp_path / "all-shards.db")
    with pytest.raises(PodarchiveError) as error:
        make_datasette([tmp_path / "a" / "archive.db", tmp_path / "all-shards.db"])
    assert "kept for the server's own use" in one_line_error(error)


def test_no_archives_is_refused() -> None:
    with pytest.raises(NotAnArchive) as error:
        make_datasette([])
    assert one_line_error(error) == "no archives to serve"
