"""Whatever feedparser reads in a feed body, the archive keeps, or says why not (issue #23).

Through the CLI against a loopback server: an Atom feed wrapped in an XHTML page is archived
whole (its title and every entry), and a body whose items give fewer episodes than
feedparser read (an item repeating another's guid, an ``<item>`` inside a
``podcast:liveItem``) is a warning: one line from ``run``, the ``warning`` of that fetch's
row in the fetch log, and ``status`` (text and ``--json``) for as long as it holds.
"""

from __future__ import annotations

import io
import json
import sqlite3
from contextlib import closing
from pathlib import Path
from typing import Any

import feedparser
import pytest
from commands import invoke
from loopback import LoopbackSite

ENTRIES = "".join(
    f"<entry><id>urn:wrapped:{i}</id><title>Episode {i}</title>"
    f'<link href="https://wrapped.example/ep/{i}"/>'
    f"<updated>2026-11-{i + 1:02d}T09:00:00Z</updated><summary>Notes of {i}</summary></entry>\n"
    for i in range(10)
)
WRAPPED = (
    '<html xmlns="http://www.w3.org/1999/xhtml"><head><title>The page</title></head><body>\n'
    '<feed xmlns="http://www.w3.org/2005/Atom"><title>Wrapped Show</title>'
    '<id>urn:wrapped</id><link href="https://wrapped.example/"/>'
    f"<updated>2026-11-10T09:00:00Z</updated>\n{ENTRIES}</feed>\n</body></html>\n"
).encode()

PODCAST = "https://podcastindex.org/namespace/1.0"
LIVE = b"""<podcast:liveItem status="ended" start="2026-11-01T09:00:00Z" end="2026-11-01T10:00:00Z">
<item><guid>live-inside</guid><title>Inside the live item</title></item>
</podcast:liveItem>
"""
AGAIN = b"<item><guid>ep-1</guid><title>One, listed again</title></item>"
LOSSY = (
    f'<?xml version="1.0" encoding="utf-8"?>\n<rss version="2.0" xmlns:podcast="{PODCAST}">'
    "<channel><title>Lossy Show</title>\n".encode()
    + LIVE
    + b"<item><guid>ep-1</guid><title>One</title></item>\n"
    + b"<item><guid>ep-2</guid><title>Two</title></item>\n"
    + AGAIN
    + b"\n</channel></rss>\n"
)
FIXED = LOSSY.replace(LIVE, b"").replace(AGAIN, b"<item><guid>ep-3</guid><title>3</title></item>")
LOST = (
    "kept 2 of the 4 items feedparser read: 1 inside an extension element, "
    "1 repeating an earlier item's episode key"
)


def run(url: str, db: Path) -> tuple[int, str, str]:
    return invoke("run", url, "--db", str(db), "--allow-private-hosts", "--no-pages")


def query(db: Path, sql: str) -> list[tuple[Any, ...]]:
    with closing(sqlite3.connect(db)) as conn:
        return conn.execute(sql).fetchall()


def status_json(db: Path) -> dict[str, Any]:
    code, out, err = invoke("status", "--json", "--db", str(db))
    assert code == 0, err
    (feed,) = json.loads(out)["feeds"]
    return dict(feed)


@pytest.mark.parametrize(
    "body",
    [WRAPPED, WRAPPED.replace(b' xmlns="http://www.w3.org/1999/xhtml"', b"")],
    ids=["xhtml", "html-without-namespace"],
)
def test_an_atom_feed_wrapped_in_xhtml_is_archived_whole(
    tmp_path: Path, site: LoopbackSite, body: bytes
) -> None:
    assert len(feedparser.parse(io.BytesIO(body)).entries) == 10  # what feedparser reads
    site.serve("/wrapped.xml", body)
    db = tmp_path / "archive.db"
    code, out, err = run(site.url("/wrapped.xml"), db)
    assert (code, out, err) == (0, "", "")
    assert query(db, "SELECT title, warnings FROM feeds") == [("Wrapped Show", None)]
    episodes = query(db, "SELECT guid, title, link, notes_text FROM episodes ORDER BY guid")
    assert episodes == [
        (f"urn:wrapped:{i}", f"Episode {i}", f"https://wrapped.example/ep/{i}", f"Notes of {i}")
        for i in range(10)
    ]
    assert query(db, "SELECT count(*) FROM fetches WHERE warning IS NOT NULL") == [(0,)]
    assert status_json(db)["kept_fewer"] is None


def test_fewer_episodes_than_items_is_a_warning_in_run_fetch_log_and_status(
    tmp_path: Path, site: LoopbackSite
) -> None:
    assert len(feedparser.parse(io.BytesIO(LOSSY)).entries) == 4
    url = site.url("/lossy.xml")
    feed = site.serve("/lossy.xml", LOSSY, etag='"v1"')
    db = tmp_path / "archive.db"
    code, out, err = run(url, db)
    assert (code, out) == (0, "")
    assert err == f"podarchive: {url}: warning: {LOST}\n"  # one line
    assert query(db, "SELECT guid FROM episodes ORDER BY guid") == [("ep-1",), ("ep-2",)]
    assert query(db, "SELECT kind, status, warning FROM fetches") == [("feed", 200, LOST)]

    code, out, _ = invoke("status", "--db", str(db))
    assert code == 0
    assert f"\nwarning: Lossy Show: {LOST}\n" in out
    assert status_json(db)["kept_fewer"] == LOST

    # a 304 reads no body: nothing new to say, and status still says it
    assert run(url, db) == (0, "", "")
    assert query(db, "SELECT status, warning FROM fetches ORDER BY id")[-1] == (304, None)
    assert status_json(db)["kept_fewer"] == LOST

    # the publisher fixes the feed: every item is an episode again, and the warning is gone
    feed.body = FIXED
    feed.etag = '"v2"'
    assert run(url, db) == (0, "", "")
    assert query(db, "SELECT count(*) FROM episodes") == [(3,)]
    assert query(db, "SELECT status, warning FROM fetches ORDER BY id")[-1] == (200, None)
    assert status_json(db)["kept_fewer"] is None
    assert "warning:" not in invoke("status", "--db", str(db))[1]
