"""Conformance: every feed of the shared corpus (03, 04, 02) through the whole pipeline.

Each file is served from a loopback server and archived in one run, as a user's archive
of many podcasts would be. Every file must either archive as many episodes as it has
items (less the duplicates it reports), or fail with a clear one-line reason. Skipped
when ../shared/corpus is absent.
"""

from __future__ import annotations

import gzip
import re
from collections import Counter
from pathlib import Path

import pytest
from loopback import LoopbackSite

from podarchive.core.settings import Settings
from podarchive.read.schedule_files import FeedSchedule
from podarchive.store import Archive
from podarchive.update.run import update_feeds

FOLDERS = ("02-podcastparser-tests", "03-real-feeds", "04-simplecast")
NOT_FEEDS = re.compile(r"(SOURCE\.txt|LICENSE.*|.*\.json|.*\.md|.*\.ya?ml)$")
ITEM = re.compile(rb"<(?:[\w-]+:)?(?:item|entry)[\s>/]")
DUPS = re.compile(r"([\d,]+) duplicate episode keys? ")  # one warning counts them all
CONTENT_TYPES = {
    ".html": "text/html",
    ".atom": "application/atom+xml",
    ".rss": "application/rss+xml",
}


def corpus_files(corpus: Path) -> list[Path]:
    return [
        path
        for folder in FOLDERS
        for path in sorted((corpus / folder).rglob("*"))
        if path.is_file() and not NOT_FEEDS.match(path.name)
    ]


def item_count(body: bytes) -> int:
    if body[:2] == b"\x1f\x8b":
        body = gzip.decompress(body)
    return len(ITEM.findall(body))


@pytest.mark.slow
@pytest.mark.corpus
def test_every_corpus_feed_archives_or_fails_with_one_line(
    corpus: Path, tmp_path: Path, site: LoopbackSite, capsys: pytest.CaptureFixture[str]
) -> None:
    files = corpus_files(corpus)
    assert len(files) > 200
    feeds = []
    for index, path in enumerate(files):
        site.serve(
            f"/{index}",
            path.read_bytes(),
            content_type=CONTENT_TYPES.get(path.suffix, "application/xml"),
        )
        feeds.append(
            FeedSchedule(url=site.url(f"/{index}"), name=str(path.relative_to(corpus)), pages=False)
        )
    with Archive(tmp_path / "archive.db") as archive:
        report = update_feeds(archive, feeds, settings=Settings(host_gap=0, retry_base=0.01))
        archived = dict(
            archive.db.execute(
                "SELECT f.name, count(e.id) FROM feeds f LEFT JOIN episodes e ON e.feed_id = f.id "
                "GROUP BY f.id"
            ).fetchall()
        )
    tally: Counter[str] = Counter()
    problems = []
    for feed in report.feeds:
        if feed.error:
            assert "\n" not in feed.error
            assert "internal error" not in feed.error
            tally["refused: " + re.sub(r"<.*", "<…>", feed.error)[:60]] += 1
            continue
        items = item_count((corpus / feed.label).read_bytes())
        duplicates = sum(int(m[1].replace(",", "")) for w in feed.warnings if (m := DUPS.match(w)))
        if archived[feed.label] + duplicates != items:
            got = archived[feed.label]
            problems.append(f"{feed.label}: {got} archived + {duplicates} duplicates != {items}")
        tally["archived"] += 1
        tally["archived with warnings"] += bool(feed.warnings)
    with capsys.disabled():
        print(f"\ncorpus conformance over {len(files)} files:")
        for reason, count in sorted(tally.items()):
            print(f"  {count:4d}  {reason}")
    assert problems == []
    assert tally["archived"] >= 240
