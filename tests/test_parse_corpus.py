"""Conformance of parse_feed over the shared corpus (../shared/corpus, skipped when absent).

02-podcastparser-tests: each ``X.rss`` is compared with podcastparser's expected ``X.json`` on
what maps cleanly. Deliberate differences from podcastparser:

* guid: podcastparser falls back to the link or enclosure URL, and resolves a guid as a
  relative URL; we keep None (identity is assigned later) and the guid as written.
* items without an enclosure URL or link, or untitled with several enclosures: podcastparser
  drops them; we keep every item (so our count may be higher, never lower).
* a guid written as a relative URL: podcastparser resolves it (against xml:base too).
* titles: podcastparser invents an episode title from the enclosure file name and a channel
  title from the feed's file name; we keep None.
* episode order: podcastparser sorts by date; we keep document order (episodes are matched).
* enclosures: podcastparser keeps them all; we keep one (first audio/video), so ours must be
  one of theirs.
* duration: podcastparser says 0 for "unknown"; we say None.
* podcast:person group: podcastparser lower-cases it and defaults it to "cast"; we keep the
  feed's text and None.
* ``max_episodes.rss`` is truncated by a podcastparser option: its count is not compared.

03-real-feeds and 04-simplecast: every file parses or raises ParseError with a one-line
message; the tally is printed (run with ``-s``) and checked for crashes.
"""

from __future__ import annotations

import collections
import json
from pathlib import Path
from typing import Any
from urllib.parse import urljoin

import pytest

from podarchive.core.errors import ParseError
from podarchive.core.types import Episode
from podarchive.read.parse import parse_feed

CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus"
PODCASTPARSER = CORPUS / "02-podcastparser-tests" / "tests" / "data"
REAL_DIRS = [CORPUS / "03-real-feeds", CORPUS / "04-simplecast"]
NOT_FEEDS = (".json", ".md", ".txt", ".yml", ".yaml", ".opml")

pytestmark = [
    pytest.mark.corpus,
    pytest.mark.skipif(not CORPUS.is_dir(), reason=f"corpus not found at {CORPUS}"),
]


def _podcastparser_cases() -> list[Path]:
    return sorted(PODCASTPARSER.glob("*.rss")) if PODCASTPARSER.is_dir() else []


def _match(ours: Episode, expected: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The expected episode that is ``ours``: by guid, then enclosure URL, then title."""
    for e in expected:
        if ours.guid is not None and e.get("guid") == ours.guid:
            return e
    if ours.enclosure is not None:
        for e in expected:
            if ours.enclosure.url in [x["url"] for x in e.get("enclosures", [])]:
                return e
    return next((e for e in expected if ours.title and e.get("title") == ours.title), None)


def _compare_episode(ours: Episode, exp: dict[str, Any], base: str) -> None:
    if ours.title is not None:
        assert ours.title == exp["title"]
    if ours.guid is not None:
        assert exp["guid"] in (ours.guid, urljoin(base, ours.guid)) or exp["guid"].endswith(
            ours.guid
        )
    if ours.enclosure is not None:
        assert ours.enclosure.url in [x["url"] for x in exp["enclosures"]]
    assert (ours.duration or 0) == exp.get("total_time", 0)
    if "persons" in exp:
        assert [(p.name, (p.role or "").lower()) for p in ours.persons] == [
            (p["name"], (p.get("role") or "").lower()) for p in exp["persons"]
        ]
    if "chapters_json_url" in exp:
        assert [c.url for c in ours.chapters] == [exp["chapters_json_url"]]
    if "transcript_url" in exp:
        assert exp["transcript_url"] in [t.url for t in ours.transcripts]
    if exp.get("number") is not None:
        assert ours.number == exp["number"]
    if exp.get("season") is not None:
        assert ours.season == exp["season"]


@pytest.mark.parametrize("source", _podcastparser_cases(), ids=lambda p: p.stem)
def test_podcastparser_expectations(source: Path) -> None:
    expected = json.loads(source.with_suffix(".json").read_text(encoding="utf-8"))
    base = f"file://tests/data/{source.name}"
    feed = parse_feed(source.read_bytes(), url=base)
    if feed.channel.title is not None:
        assert feed.channel.title == expected["title"]
    if not source.with_suffix(".param.json").exists():
        assert len(expected["episodes"]) <= len(feed.episodes)
    for ours in feed.episodes:
        exp = _match(ours, expected["episodes"])
        if exp is not None:
            _compare_episode(ours, exp, base)


def _real_files() -> list[Path]:
    files = [p for d in REAL_DIRS if d.is_dir() for p in sorted(d.rglob("*")) if p.is_file()]
    return [
        p
        for p in files
        if p.suffix.lower() not in NOT_FEEDS and not p.name.startswith(("LICENSE", "SOURCE"))
    ]


def test_real_feeds_parse_or_refuse_cleanly() -> None:
    files = _real_files()
    if not files:
        pytest.skip("no real feeds in the corpus")
    tally: collections.Counter[str] = collections.Counter()
    for path in files:
        try:
            feed = parse_feed(path.read_bytes(), url="https://example.com/feed.xml")
        except ParseError as e:
            message = str(e)
            assert message, path
            assert "\n" not in message, path
            tally[f"ParseError: {message[:48]}"] += 1
        else:
            tally["ok"] += 1
            tally["ok with warnings"] += bool(feed.warnings)
            tally["episodes"] += len(feed.episodes)
    print("\ncorpus tally:", dict(sorted(tally.items())))
    assert tally["ok"] > len(files) * 0.8
