"""``episodes_linking_to`` (issue #28) finds its links by indexes, answering what it answered.

The query matches its target as a domain (exactly or as a parent domain), or as the start of a
link's normalized URL or URL as written. Until schema 17 it read every link; now it collects
candidates by ``idx_links_domain`` (the distinct domains, then each matching one),
``idx_links_normalized_url`` and migration 17's ``idx_links_url_written`` (URLs as written
that are not their normalized URL), then applies the same test as before. The earlier SQL is
kept (``fixtures/link_queries/episodes_linking_to_v16.sql``) and both are asked the same
questions on archives of hypothesis-generated links: current and earlier revisions' links,
episodes removed from their feed, URLs with upper-case hosts, fragments, tracking parameters,
no normalized URL, non-ASCII paths, subdomains and ``www.``.
"""

from __future__ import annotations

import shutil
import sqlite3
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest
from archive_rows import every_row, schema
from hypothesis import given, settings
from hypothesis import strategies as st

from podarchive.store import Archive, check_archive
from podarchive.store import base as store_base
from podarchive.store.migrations_links import (
    LINK_SUMMARY_TABLES,
    LINK_SUMMARY_TRIGGERS,
    LINK_URL_INDEX,
    _links_v20,
)
from podarchive.store.schema import LOOKUP_INDEXES, MIGRATIONS
from podarchive.web.serve import metadata_for

FIXTURES = Path(__file__).parent / "fixtures"
# newest first, and among episodes of the same date the later archived first (schema 20's SQL
# walks the date index backwards when the target matches many links): the v16 SQL broke such
# ties the other way
OLD_SQL = (
    (FIXTURES / "link_queries" / "episodes_linking_to_v16.sql")
    .read_text()
    .replace(
        "order by episodes.published desc, episodes.id\n",
        "order by episodes.published desc, episodes.id desc\n",
    )
)
OLD_DOMAINS_SQL = (FIXTURES / "link_queries" / "most_linked_domains_v16.sql").read_text()
V14 = FIXTURES / "archives" / "v14.sqlite"


def new_sql(name: str = "episodes_linking_to") -> str:
    sql: str = metadata_for()["databases"]["archive"]["queries"][name]["sql"]
    return sql


def same_domains(conn: sqlite3.Connection) -> None:
    """``most_linked_domains`` reads the summary; the v16 SQL counts the links themselves."""
    new = conn.execute(new_sql("most_linked_domains")).fetchall()
    assert new == conn.execute(OLD_DOMAINS_SQL).fetchall()


HOSTS = [
    "github.com", "www.github.com", "GitHub.com", "gist.github.com", "a.gist.github.com",
    "notgithub.com", "github.com.evil.org", "example.org", "ex.example.org", "bücher.example",
]  # fmt: skip
PATHS = ["", "/", "/a", "/a/b", "/A", "/a#frag", "/a?utm_source=x", "/é/ü", "/a%20b"]
SCHEMES = ["https://", "http://", "HTTPS://", ""]
TARGETS = [
    "github.com", "www.github.com", " github.com ", "GITHUB.COM", "gist.github.com",
    "hub.com", "example.org", "www.", "", " ", "x", "https://", "https://github.com",
    "https://GitHub.com/a", "https://github.com/a", "http://example.org/", "bücher.example",
    "https://bücher.example/é", "github", ".com", "https://github.com/a#", "%",
]  # fmt: skip


def _domain(host: str) -> str:
    host = host.lower()
    return host[4:] if host.startswith("www.") else host


@st.composite
def a_link(draw: st.DrawFn) -> dict[str, Any]:
    host, path, scheme = (
        draw(st.sampled_from(HOSTS)),
        draw(st.sampled_from(PATHS)),
        draw(st.sampled_from(SCHEMES)),
    )
    url = f"{scheme}{host}{path}"
    normalized = f"{scheme.lower()}{host.lower()}{path.split('#')[0].split('?utm')[0]}"
    return {
        "episode_id": draw(st.integers(1, 6)),
        "source": draw(st.sampled_from(["feed", "page"])),
        "url": url,
        "normalized_url": draw(st.sampled_from([normalized, url, None])),
        "domain": draw(st.sampled_from([_domain(host), None])),
        "text": draw(st.sampled_from(["a link", "", "GitHub"])),
        "revision_id": draw(st.sampled_from([None, None, 1, 2])),
    }


@pytest.fixture(scope="module")
def archive(tmp_path_factory: pytest.TempPathFactory) -> Iterator[sqlite3.Connection]:
    """Two podcasts of six episodes (two removed from the feed, one no longer listed) and
    two revisions; the links are each example's."""
    path = tmp_path_factory.mktemp("links") / "archive.db"
    with Archive(path):
        pass
    conn = sqlite3.connect(path)
    with conn:
        conn.executemany(
            "INSERT INTO feeds (id, url, title) VALUES (?, ?, ?)",
            [(1, "https://f.example/1", "One"), (2, "https://f.example/2", None)],
        )
        conn.executemany(
            "INSERT INTO episodes (id, feed_id, key, title, published, removed_from_feed_at,"
            " unlisted_at, first_seen_at) VALUES (?, ?, ?, ?, ?, ?, ?, '2026-01-01')",
            [
                (1, 1, "k1", "E1", "2026-01-05", None, None),
                (2, 1, "k2", "E2", "2026-01-05", "2026-02-01", None),
                (3, 1, "k3", "E3", None, None, "2026-02-01"),
                (4, 2, "k4", "E4", "2025-12-01", None, None),
                (5, 2, "k5", "E5", "2026-03-01", "2026-03-02", None),
                (6, 2, "k6", "E6", "2024-01-01", None, None),
            ],
        )
        conn.executemany(
            "INSERT INTO episode_revisions (id, episode_id, source, seen_from, seen_until,"
            " changed) VALUES (?, ?, 'feed', '2025-01-01', '2026-01-01', 'notes_html')",
            [(1, 1), (2, 4)],
        )
    with closing(conn):
        yield conn


def _fill(conn: sqlite3.Connection, links: list[dict[str, Any]]) -> None:
    positions: dict[tuple[int, str, int | None], int] = {}
    with conn:
        conn.execute("DELETE FROM links")
        for link in links:
            key = (link["episode_id"], link["source"], link["revision_id"])
            positions[key] = positions.get(key, -1) + 1
            conn.execute(
                "INSERT INTO links (episode_id, source, position, url, normalized_url, domain,"
                " text, revision_id) VALUES (:episode_id, :source, :position, :url,"
                " :normalized_url, :domain, :text, :revision_id)",
                {**link, "position": positions[key]},
            )


@settings(max_examples=60, deadline=None)
@given(links=st.lists(a_link(), max_size=40))
def test_the_new_sql_answers_as_the_old(archive: sqlite3.Connection, links: list[Any]) -> None:
    _fill(archive, links)
    new = new_sql()
    targets = TARGETS + [link["url"][:k] for link in links[:5] for k in (5, 12, 40)]
    for target in targets:
        params = {"target": target}
        assert archive.execute(new, params).fetchall() == (
            archive.execute(OLD_SQL, params).fetchall()
        ), target
    same_domains(archive)


FEW = "count(*) < 20000 as few from (select 1 from candidates limit 20000)"


def walking(sql: str, rows: int) -> str:
    """The SQL with its two sizes made small: the newest ``rows`` episodes, and the walk over
    the episodes by date (for a target that matches many links) from two candidate links."""
    assert sql.count("limit 1000") >= 1
    return sql.replace(FEW, FEW.replace("20000", "2")).replace("limit 1000", f"limit {rows}")


@settings(max_examples=60, deadline=None)
@given(links=st.lists(a_link(), max_size=40), rows=st.integers(1, 7))
def test_the_walk_by_date_answers_as_the_old_sql(
    archive: sqlite3.Connection, links: list[Any], rows: int
) -> None:
    """A target with many links (here: two or more) is answered by walking the episodes newest
    first until enough of them link to it; what it finds is what reading every matching link
    finds, the newest ``rows`` of them included at the cut."""
    assert FEW in new_sql()  # the walk this test makes small is the one the page uses
    _fill(archive, links)
    new, old = walking(new_sql(), rows), walking(OLD_SQL, rows)
    for target in TARGETS + [link["url"][:k] for link in links[:5] for k in (5, 12, 40)]:
        params = {"target": target}
        assert archive.execute(new, params).fetchall() == (
            archive.execute(old, params).fetchall()
        ), target


CHANGES = st.lists(
    st.tuples(
        st.sampled_from(["delete", "revise", "url", "normalize", "domain", "episode", "restore"]),
        st.integers(0, 50),
        st.sampled_from(HOSTS),
    ),
    max_size=25,
)


@settings(max_examples=60, deadline=None)
@given(links=st.lists(a_link(), max_size=30), changes=CHANGES, more=st.lists(a_link(), max_size=8))
def test_the_summary_follows_every_change_of_the_links(
    archive: sqlite3.Connection, links: list[Any], changes: list[Any], more: list[Any]
) -> None:
    """Links added, deleted, kept as a revision (or made current again), their URL, normalized
    URL, domain or episode changed, one at a time, then more added: the summary the triggers
    keep answers what the links themselves do, after each change."""
    _fill(archive, links)
    same_domains(archive)
    for change, pick, host in changes:
        ids = [r[0] for r in archive.execute("SELECT id FROM links ORDER BY id")]
        if not ids:
            break
        link_id = ids[pick % len(ids)]
        update = {
            "delete": "DELETE FROM links WHERE id = :id",
            "revise": "UPDATE links SET revision_id = 1 WHERE id = :id",
            "restore": "UPDATE links SET revision_id = NULL, position = 1000 + id WHERE id = :id",
            "url": "UPDATE links SET url = 'https://' || :host || '/' || id WHERE id = :id",
            "normalize": "UPDATE links SET normalized_url = NULL WHERE id = :id",
            "domain": "UPDATE links SET domain = lower(:host) WHERE id = :id",
            "episode": "UPDATE links SET episode_id = 1 + :pick % 6, position = 2000 + id"
            " WHERE id = :id",
        }[change]
        with archive:
            archive.execute(update, {"id": link_id, "host": host, "pick": pick})
        same_domains(archive)
    with archive:
        archive.executemany(
            "INSERT INTO links (episode_id, source, position, url, normalized_url, domain, text,"
            " revision_id) VALUES (:episode_id, :source, 3000 + :n, :url, :normalized_url,"
            " :domain, :text, :revision_id)",
            [{**link, "n": n} for n, link in enumerate(more)],
        )
    same_domains(archive)


def test_a_subdomain_a_written_url_and_a_normalized_url_are_found(
    archive: sqlite3.Connection,
) -> None:
    """The three ways in, each alone: a parent domain, a URL as written that differs from its
    normalized URL, a normalized URL; an earlier revision's link is not current."""
    base = {"source": "feed", "text": "t", "revision_id": None}
    _fill(
        archive,
        [
            {**base, "episode_id": 1, "url": "https://a.gist.github.com/x",
             "normalized_url": "https://a.gist.github.com/x", "domain": "a.gist.github.com"},
            {**base, "episode_id": 4, "url": "https://Ex.example.org/P?utm_source=z",
             "normalized_url": "https://ex.example.org/P", "domain": "ex.example.org"},
            {**base, "episode_id": 6, "url": "https://example.org/q#f",
             "normalized_url": "https://example.org/q", "domain": "example.org"},
            {**base, "episode_id": 6, "url": "https://github.com/old",
             "normalized_url": "https://github.com/old", "domain": "github.com",
             "revision_id": 2},
        ],
    )  # fmt: skip

    def episodes(target: str) -> list[int]:
        return [row[0] for row in archive.execute(new_sql(), {"target": target})]

    assert episodes("github.com") == [1]
    assert episodes("https://Ex.example.org/P?utm") == [4]
    assert episodes("https://example.org/q") == [6]
    assert episodes("example.org") == [4, 6]  # newest first


def test_the_query_reads_indexes_not_every_link(archive: sqlite3.Connection) -> None:
    plan = " | ".join(
        str(r[-1]) for r in archive.execute(f"EXPLAIN QUERY PLAN {new_sql()}", {"target": "x"})
    )
    for index in ("idx_links_domain", "idx_links_normalized_url", LINK_URL_INDEX):
        assert index in plan
    assert "SCAN links |" not in plan + " |"  # no walk of the table itself


def test_the_index_is_a_lookup_index_and_comes_last() -> None:
    assert MIGRATIONS[19] is _links_v20
    assert LINK_URL_INDEX in LOOKUP_INDEXES


#: Migration 20's summary tables (migration 24 dropped ``link_domain_urls``).
V20_SUMMARY_TABLES = (*LINK_SUMMARY_TABLES, "link_domain_urls")


def test_a_v19_archive_gets_the_index_keeping_every_row(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An archive written at schema 19 (the v14 fixture brought to 19), opened by this version:
    migration 20 adds the index and the summary (filled from the links, with its triggers); not
    a row of the earlier tables changes, and the schema is a fresh one's."""
    path = tmp_path / "archive.db"
    shutil.copy(V14, path)
    with monkeypatch.context() as m:
        m.setattr(store_base, "MIGRATIONS", store_base.MIGRATIONS[:19])
        m.setattr(store_base, "SCHEMA_VERSION", 19)
        m.setattr(store_base, "LOOKUP_INDEXES", {
            k: v for k, v in LOOKUP_INDEXES.items() if k != LINK_URL_INDEX
        })  # fmt: skip
        with Archive(path) as v19:
            assert v19.schema_version == 19
    with closing(sqlite3.connect(path)) as conn:
        before = every_row(conn)
        schema_before = schema(conn)
        assert ("index", LINK_URL_INDEX) not in schema_before
        assert conn.execute("SELECT count(*) FROM links").fetchone()[0] > 0
    monkeypatch.setattr(store_base, "MIGRATIONS", store_base.MIGRATIONS[:20])  # 20 alone
    monkeypatch.setattr(store_base, "SCHEMA_VERSION", 20)
    with Archive(path) as archive, Archive(tmp_path / "fresh.db") as fresh:
        assert archive.schema_version == fresh.schema_version == 20
        assert schema(archive.db.conn) == schema(fresh.db.conn)
        after = every_row(archive.db.conn)
        added = set(schema(archive.db.conn)) - set(schema_before)
    assert {k: v for k, v in after.items() if k in before} == before
    assert after["link_domains"] == [("example.org", 2, 2, 2, 1)]  # filled from the links
    assert added == {
        ("index", LINK_URL_INDEX),
        *(("index", f"sqlite_autoindex_{name}_1") for name in V20_SUMMARY_TABLES),  # keys
        *(("table", name) for name in V20_SUMMARY_TABLES),
        *(("trigger", name) for name in LINK_SUMMARY_TRIGGERS),
    }
    with Archive(path) as archive:
        assert archive.db.execute("SELECT count(*) FROM link_domains").fetchone()[0] > 0
        same_domains(archive.db.conn)
    _, problems = check_archive(path)
    assert problems == []


def test_a_big_first_ingest_drops_and_rebuilds_them(tmp_path: Path) -> None:
    """The index and the summary's triggers are dropped for a deferred ingest; at its end (or
    at the next opening, after a crash) the summary is rebuilt from the links it missed."""
    path = tmp_path / "archive.db"
    with Archive(path) as archive:

        def names() -> set[str]:
            return {r[0] for r in archive.db.execute("SELECT name FROM sqlite_master")}

        _episodes(archive.db.conn)
        with archive.deferred_link_indexes():
            assert not names() & {LINK_URL_INDEX, *LINK_SUMMARY_TRIGGERS}
            _links(archive.db.conn, "github.com", "gist.github.com")
        assert {LINK_URL_INDEX, *LINK_SUMMARY_TRIGGERS} <= names()
        same_domains(archive.db.conn)
        assert archive.db.execute("SELECT count(*) FROM link_domains").fetchone()[0] == 2
        with archive.db.conn:
            for name in LINK_SUMMARY_TRIGGERS:  # as a crash inside a deferred ingest leaves it
                archive.db.execute(f"DROP TRIGGER {name}")
        _links(archive.db.conn, "example.org")
    with Archive(path) as archive:
        same_domains(archive.db.conn)
        assert archive.db.execute("SELECT count(*) FROM link_domains").fetchone()[0] == 3


def _episodes(conn: sqlite3.Connection) -> None:
    with conn:
        conn.execute("INSERT INTO feeds (id, url) VALUES (1, 'https://f.example/1')")
        conn.executemany(
            "INSERT INTO episodes (id, feed_id, key, first_seen_at) VALUES (?, 1, ?, '2026')",
            [(n, f"k{n}") for n in (1, 2)],
        )


def _links(conn: sqlite3.Connection, *domains: str) -> None:
    with conn:
        conn.executemany(
            "INSERT INTO links (episode_id, source, position, url, domain) VALUES (?, 'feed',"
            " (SELECT count(*) FROM links), ?, ?)",
            [(e, f"https://{d}/{e}", d) for d in domains for e in (1, 2)],
        )


def test_the_store_s_own_writes_keep_the_summary(tmp_path: Path) -> None:
    """Several days of a feed saved by the store (episodes added, changed into revisions,
    links replaced, episodes gone from the feed): the summary answers as the links do."""
    from test_store_bulk import save_bodies

    with Archive(tmp_path / "archive.db") as archive:
        save_bodies(archive)
        assert archive.db.execute("SELECT count(*) FROM link_domains").fetchone()[0] > 0
        assert archive.db.execute("SELECT count(*) FROM links WHERE revision_id IS NOT NULL")
        same_domains(archive.db.conn)


@pytest.mark.parametrize("bulk", [False, True])
def test_a_transplant_s_destination_keeps_its_own_summary(tmp_path: Path, bulk: bool) -> None:
    """``transplant`` (``reshard``) copies the links, not the summary: the destination's
    triggers count them, in a bulk copy too."""
    from test_store_bulk import save_bodies

    from podarchive.store.transplant import transplant

    source, destination = tmp_path / "source.db", tmp_path / "destination.db"
    with Archive(source) as archive:
        save_bodies(archive)
    Archive(destination).close()
    transplant(source, destination, ["https://ex.example/feed"], bulk=bulk)
    with Archive(destination) as archive, Archive(source) as original:
        same_domains(archive.db.conn)
        summary = "SELECT * FROM link_domains ORDER BY domain"
        assert archive.db.execute(summary).fetchall() == original.db.execute(summary).fetchall()
