"""Conformance: over every feed file of the shared corpus, the archive keeps an episode for
each item feedparser reads (issue #23). Pure, no network: bytes in.

Every file under ../shared/corpus (all seven folders; not the SOURCE, LICENSE, README,
INDEX, NOTES and EXPECTATIONS files nor the collector's scripts) is read by feedparser alone
and by :func:`podarchive.read.jobs.read_feed` (the parse and the rows the archive writes),
both given the Content-Type a server would send: ``01-feedparser-tests``'s ``tests/http*``
files their ``Header:`` lines (as in feedparser's harness), the others by their extension.
A file podarchive refuses counts as 0 episodes. The number of episodes written must be
feedparser's number of entries, except for :data:`EXPECTED_FEWER`, and every file that keeps
fewer says so (``FeedRead.kept_fewer``, the warning of the fetch log and ``status``).
Skipped when the corpus is absent.
"""

from __future__ import annotations

import io
import re
import warnings
from pathlib import Path

import feedparser
import pytest
from test_feedparser_corpus import TESTS, load_case

from podarchive.core.errors import PodarchiveError
from podarchive.read.jobs import read_feed

pytestmark = [pytest.mark.corpus, pytest.mark.slow]

NOT_FEEDS = re.compile(r"(SOURCE\.txt|LICENSE.*|README.*|INDEX\.md|NOTES\.md|EXPECTATIONS\.md)$")
CONTENT_TYPES = {
    ".atom": "application/atom+xml",
    ".rss": "application/rss+xml",
    ".html": "text/html",
    ".htm": "text/html",
    ".json": "application/json",
}
URL = "https://corpus.example/feed.xml"

# Every item of these files that gives no episode repeats an earlier item's episode key
# (guid, else enclosure, link, title and date, notes): one episode in the archive, its
# first listing kept. path → (episodes kept, why the items are one episode).
LINK_PRIORITY = "two entries with no id and the same alternate link (a test of link priority)"
EXPECTED_FEWER = {
    "01-feedparser-tests/tests/wellformed/atom/entry_link_no_href_link_priority.xml": (
        1,
        LINK_PRIORITY,
    ),
    "01-feedparser-tests/tests/wellformed/atom/entry_link_rel_enclosure_no_href.xml": (
        1,
        LINK_PRIORITY,
    ),
    "01-feedparser-tests/tests/wellformed/atom10/entry_link_no_href_link_priority.xml": (
        1,
        LINK_PRIORITY,
    ),
    "01-feedparser-tests/tests/wellformed/atom10/entry_link_rel_enclosure_no_href.xml": (
        1,
        LINK_PRIORITY,
    ),
    "01-feedparser-tests/tests/wellformed/lang/entry_content_xml_lang_blank_3.xml": (
        1,
        "two entries with nothing but the same content (a test of xml:lang)",
    ),
    "01-feedparser-tests/tests/wellformed/node_precedence/atom10_arbitrary_element.xml": (
        1,
        "two empty entries but for an unknown element (a test of node precedence)",
    ),
    "01-feedparser-tests/tests/wellformed/node_precedence/atom10_id.xml": (
        1,
        "two entries with the same id (a test of node precedence)",
    ),
    "01-feedparser-tests/tests/wellformed/node_precedence/atom10_title.xml": (
        1,
        "two entries with nothing but the same title (a test of node precedence)",
    ),
    "03-real-feeds/danmactough-node-feedparser/illegally-nested.xml": (
        11,
        "each of the 10 items holds another <item> (illegally), which feedparser reads as an"
        " entry with nothing in it: the 10 empty ones are one episode",
    ),
    "03-real-feeds/rbren-rss-parser/itunes-missing-image.rss": (
        130,
        "one episode listed twice with the same guid",
    ),
    "03-real-feeds/simplecastapps-podcast-feeds/rss2/rlm.xml": (
        801,
        "four episodes without a guid listed twice with the same enclosure",
    ),
    "06-paging/rinfo-rdl/collector-tests/feed/multiplechanges/deleted_updated.atom": (
        1,
        "three versions of one entry (the same id) in one feed (a test of deletions)",
    ),
}


def corpus_files(corpus: Path) -> list[Path]:
    return [
        path
        for path in sorted(corpus.rglob("*"))
        if path.is_file()
        and not NOT_FEEDS.match(path.name)
        and "_collector_scripts" not in path.relative_to(corpus).parts
    ]


def content_type(path: Path) -> str:
    if path.is_relative_to(TESTS):
        return dict(load_case(path).headers)["Content-Type"]
    return CONTENT_TYPES.get(path.suffix.lower(), "application/xml")


def feedparser_entries(body: bytes, headers: dict[str, str]) -> int:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # feedparser's own deprecation and bozo warnings
        result = feedparser.parse(io.BytesIO(body), response_headers=headers)
    return len(result.get("entries") or [])


def test_the_archive_keeps_an_episode_for_every_item_feedparser_reads(corpus: Path) -> None:
    files = corpus_files(corpus)
    assert len(files) > 2500  # all of it: 2,107 feedparser tests and the rest
    differences: dict[str, tuple[int, str]] = {}
    silent = []
    items = 0
    for path in files:
        body = path.read_bytes()
        headers = {"content-type": content_type(path)}
        expected = feedparser_entries(body, headers)
        items += expected
        try:
            read = read_feed(body, headers, URL)
        except PodarchiveError as e:
            kept, warning = 0, f"refused: {e}"
        else:
            kept, warning = len(read.writes), read.kept_fewer or ""
        if kept < expected:
            rel = path.relative_to(corpus).as_posix()
            differences[rel] = (kept, EXPECTED_FEWER.get(rel, (0, ""))[1])
            if f"kept {kept:,} of the {expected:,} items" not in warning:
                silent.append(f"{rel}: {warning or 'no warning'}")
    assert items > 6_000  # the real feeds of 03 and 04 alone have 5,125
    assert silent == []  # fewer kept is never silent
    assert differences == EXPECTED_FEWER  # fewer where listed, by exactly as many
