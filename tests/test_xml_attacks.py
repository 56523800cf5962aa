"""Hostile XML through parse_feed and the whole pipeline (a loopback server, a real archive).

What each attack produces (asserted below, decided from what happens):

* billion laughs (nested entities, 10^9 "lol"s) and quadratic blowup (a 50 kB entity used
  20,000 times): expat's amplification limit stops feedparser's strict pass, its loose pass
  keeps the references unexpanded (``&lol9;``), lxml never expands them; the feed is
  **archived** with the raw reference as its title and a "malformed XML, recovered" warning.
  Memory stays at a few MiB, well under a second (billion laughs) or two (quadratic).
* external entities (``file:///etc/passwd``, a temp file holding a secret marker, general
  and parameter entities): never read; the feed is **archived** without the file's content.
* external DTDs and entities on ``http://127.0.0.1:<port>/`` (``SYSTEM``/``PUBLIC`` DTD,
  external general entity, parameter entity, XInclude, an xml-stylesheet PI, and an episode
  page with an external DTD): the server gets no request for any of them; only the feeds
  and the episode pages are fetched. Every feed is **archived**.
"""

from __future__ import annotations

import sqlite3
import tracemalloc
from pathlib import Path

import pytest
from loopback import LoopbackSite

from podarchive.core.errors import ParseError
from podarchive.core.settings import Settings
from podarchive.read.parse import parse_feed
from podarchive.read.schedule_files import FeedSchedule
from podarchive.store import Archive
from podarchive.update.run import RunReport, update_feeds

SETTINGS = Settings(
    connect_timeout=2, read_timeout=2, deadline=10, allow_private_hosts=True, host_gap=0
)
MARKER = "EVIL-MARKER-7c1e"  # what the attacker's documents would put into the archive
RSS_HEAD = '<?xml version="1.0" encoding="utf-8"?>\n'

LOL = "\n".join(
    [f' <!ENTITY lol "{"lol"}">']
    + [f' <!ENTITY lol{n} "{f"&lol{n - 1};" * 10}">' for n in range(1, 10)]
).replace("&lol0;", "&lol;")
BILLION_LAUGHS = (
    f"{RSS_HEAD}<!DOCTYPE rss [\n{LOL}\n]>\n"
    '<rss version="2.0"><channel><title>&lol9;</title>'
    "<item><title>&lol9;</title><guid>laughs-1</guid>"
    "<description>&lol9;</description></item></channel></rss>"
)
BIG = "A" * 50_000
QUADRATIC = (
    f'{RSS_HEAD}<!DOCTYPE rss [<!ENTITY a "{BIG}">]>\n'
    '<rss version="2.0"><channel><title>Quadratic</title>'
    f"<item><title>{'&a;' * 20_000}</title><guid>quad-1</guid>"
    f"<description>{'&a;' * 20_000}</description></item></channel></rss>"
)


def rss_with(doctype: str, *, title: str = "T &x;", extra: str = "", link: str = "") -> str:
    link_el = f"<link>{link}</link>" if link else ""
    return (
        f"{RSS_HEAD}{doctype}\n"
        '<rss version="2.0" xmlns:xi="http://www.w3.org/2001/XInclude"><channel>'
        f"<title>{title}</title>{extra}"
        f"<item><title>Episode &x;</title><guid>ep-1</guid>{link_el}"
        "<description>&lt;p&gt;notes &amp;amp; more&lt;/p&gt; &x;</description>"
        "</item></channel></rss>"
    )


def run(db: Path, *urls: str, pages: bool = False) -> RunReport:
    with Archive(db) as archive:
        return update_feeds(
            archive, [FeedSchedule(url=u, pages=pages) for u in urls], settings=SETTINGS
        )


def archive_bytes(db: Path) -> bytes:
    """Everything on disk for the archive: the file and its WAL, if any."""
    return b"".join(p.read_bytes() for p in db.parent.glob(db.name + "*"))


def archive_text(db: Path) -> str:
    with Archive(db) as archive:
        return repr(archive.dump(skip=()))


def feed_rows(db: Path) -> list[tuple[str, str | None, str | None]]:
    conn = sqlite3.connect(db)
    try:
        return conn.execute("SELECT url, title, last_error FROM feeds ORDER BY id").fetchall()
    finally:
        conn.close()


# --- entity expansion --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("body", "needle"),
    [(BILLION_LAUGHS, "lollollol"), (QUADRATIC, "A" * 60_000)],
    ids=["billion-laughs", "quadratic-blowup"],
)
def test_entity_expansion_through_the_pipeline(
    tmp_path: Path, site: LoopbackSite, body: str, needle: str
) -> None:
    site.serve("/bomb.xml", body)
    db = tmp_path / "a.db"
    tracemalloc.start()
    try:
        report = run(db, site.url("/bomb.xml"))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 64 * 1024 * 1024  # no expansion: the memory, not a stopwatch, shows it
    (feed,) = report.feeds
    assert feed.ok, feed.error  # archived: the references stay unexpanded
    assert any(w.startswith("malformed XML, recovered") for w in feed.warnings)
    text = archive_text(db)
    assert needle not in text
    assert needle.encode() not in archive_bytes(db)
    with Archive(db) as archive:
        assert archive.count("episodes") == 1
    if body is BILLION_LAUGHS:
        assert feed_rows(db)[0][1] == "&lol9;"


@pytest.mark.parametrize("body", [BILLION_LAUGHS, QUADRATIC], ids=["billion-laughs", "quadratic"])
def test_entity_expansion_in_parse_feed(body: str) -> None:
    tracemalloc.start()
    try:
        feed = parse_feed(body.encode())
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 64 * 1024 * 1024
    (episode,) = feed.episodes
    for value in (feed.channel.title, episode.title, episode.notes_html, episode.summary):
        assert value is None or ("lollollol" not in value and BIG + BIG not in value)


# --- external entities: local files --------------------------------------------------------


def file_attacks(secret: Path) -> dict[str, str]:
    uri = secret.as_uri()
    return {
        "passwd": rss_with('<!DOCTYPE rss [<!ENTITY x SYSTEM "file:///etc/passwd">]>'),
        "secret-file": rss_with(f'<!DOCTYPE rss [<!ENTITY x SYSTEM "{uri}">]>'),
        "secret-path": rss_with(f'<!DOCTYPE rss [<!ENTITY x SYSTEM "{secret}">]>'),
        "secret-dtd": rss_with(f'<!DOCTYPE rss SYSTEM "{uri}">'),
        "secret-param": rss_with(f'<!DOCTYPE rss [<!ENTITY % p SYSTEM "{uri}"> %p;]>'),
        "secret-xinclude": rss_with(
            "", title="T", extra=f'<xi:include href="{uri}" parse="text"/>'
        ),
    }


@pytest.fixture
def secret(tmp_path: Path) -> Path:
    path = tmp_path / "secret.txt"
    path.write_text(f"{MARKER} root:x:0:0:secret\n", encoding="utf-8")
    return path


def test_external_file_entities_never_reach_the_archive(
    tmp_path: Path, site: LoopbackSite, secret: Path
) -> None:
    attacks = file_attacks(secret)
    for name, body in attacks.items():
        site.serve(f"/{name}.xml", body)
    db = tmp_path / "a.db"
    report = run(db, *(site.url(f"/{name}.xml") for name in attacks))
    assert len(report.feeds) == len(attacks)
    assert all(f.ok for f in report.feeds), [(f.url, f.error) for f in report.feeds]
    passwd = Path("/etc/passwd").read_text(encoding="utf-8", errors="replace")
    first_line = passwd.splitlines()[0] if passwd else "root:x:0:0"
    text = archive_text(db)
    for needle in (MARKER, "root:x:0:0", first_line):
        assert needle not in text
        assert needle.encode() not in archive_bytes(db)
    with Archive(db) as archive:
        assert archive.count("episodes") == len(attacks)


def test_external_file_entities_in_parse_feed(secret: Path) -> None:
    for name, body in file_attacks(secret).items():
        feed = parse_feed(body.encode(), url="https://example.com/feed.xml")
        dumped = repr(feed)
        assert MARKER not in dumped, name
        assert "root:x:0:0" not in dumped, name
        assert feed.episodes[0].guid == "ep-1", name


# --- external DTDs and entities over HTTP -----------------------------------------------------


def http_attacks(site: LoopbackSite) -> dict[str, str]:
    dtd, ent = site.url("/evil.dtd"), site.url("/evil.ent")
    page = site.url("/episode.html")
    return {
        "system-dtd": rss_with(f'<!DOCTYPE rss SYSTEM "{dtd}">', link=page),
        "public-dtd": rss_with(f'<!DOCTYPE rss PUBLIC "-//Evil//DTD RSS//EN" "{dtd}">'),
        "general-entity": rss_with(f'<!DOCTYPE rss [<!ENTITY x SYSTEM "{ent}">]>'),
        "parameter-entity": rss_with(f'<!DOCTYPE rss [<!ENTITY % p SYSTEM "{dtd}"> %p;]>'),
        "nested-parameter": rss_with(
            f'<!DOCTYPE rss [<!ENTITY % p SYSTEM "{dtd}"> %p; <!ENTITY x "&y;">]>'
        ),
        "xinclude": rss_with("", title="T", extra=f'<xi:include href="{ent}" parse="text"/>'),
        "stylesheet-pi": rss_with("").replace(
            RSS_HEAD, f'{RSS_HEAD}<?xml-stylesheet type="text/xsl" href="{site.url("/evil.xsl")}"?>'
        ),
    }


def serve_evil(site: LoopbackSite) -> list[str]:
    """The attacker's documents; returns their paths (none of them may be requested)."""
    ent = site.url("/evil.ent")
    site.serve(
        "/evil.dtd",
        f'<!ENTITY x "{MARKER}"><!ENTITY y SYSTEM "{ent}">',
        content_type="application/xml-dtd",
    )
    site.serve("/evil.ent", MARKER, content_type="text/plain")
    site.serve("/evil.xsl", f"<xsl:stylesheet>{MARKER}</xsl:stylesheet>")
    return ["/evil.dtd", "/evil.ent", "/evil.xsl"]


def test_external_dtds_are_never_fetched_by_the_pipeline(
    tmp_path: Path, site: LoopbackSite
) -> None:
    evil = serve_evil(site)
    attacks = http_attacks(site)
    for name, body in attacks.items():
        site.serve(f"/{name}.xml", body)
    # the episode page is hostile too: an external DTD for the HTML extractor to ignore
    site.serve(
        "/episode.html",
        f'<!DOCTYPE html SYSTEM "{site.url("/evil.dtd")}"><html><body><main><h1>Episode</h1>'
        "<p>Show notes with <a href='https://example.com/x'>a link</a> and enough words to "
        "count as notes for the generic extractor.</p></main></body></html>",
        content_type="text/html; charset=utf-8",
    )
    db = tmp_path / "a.db"
    report = run(db, *(site.url(f"/{name}.xml") for name in attacks), pages=True)
    assert all(f.ok for f in report.feeds), [(f.url, f.error) for f in report.feeds]
    requested = [r.path for r in site.requests]
    for path in evil:
        assert site.hits(path) == 0, requested
    assert sorted(requested) == sorted([f"/{name}.xml" for name in attacks] + ["/episode.html"])
    assert MARKER not in archive_text(db)
    assert MARKER.encode() not in archive_bytes(db)
    with Archive(db) as archive:
        assert archive.count("episodes") == len(attacks)


def test_external_dtds_are_never_fetched_by_parse_feed(site: LoopbackSite) -> None:
    evil = serve_evil(site)
    for name, body in http_attacks(site).items():
        try:
            feed = parse_feed(
                body.encode(), {"content-type": "application/rss+xml"}, url=site.url("/")
            )
        except ParseError as e:  # pragma: no cover - none of them is refused today
            pytest.fail(f"{name}: refused: {e}")
        assert MARKER not in repr(feed), name
    assert site.requests == [], [r.path for r in site.requests]
    assert all(site.hits(p) == 0 for p in evil)
