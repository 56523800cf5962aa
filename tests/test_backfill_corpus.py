"""Conformance: backfill walks the RFC 5005 archive chain of ../shared/corpus/06-paging."""

from __future__ import annotations

from pathlib import Path

import pytest
from loopback import LoopbackSite

from podarchive.core.settings import Settings
from podarchive.read.schedule_files import FeedSchedule
from podarchive.store import Archive
from podarchive.tasks.backfill import BackfillOptions, backfill

pytestmark = pytest.mark.corpus


def serve_tree(site: LoopbackSite, root: Path) -> None:
    """Serve the corpus files at their root-relative paths, hrefs pointed at the loopback host."""
    for path in sorted(root.rglob("*.atom")):
        body = path.read_bytes().replace(b'href="/', f'href="{site.url("/")}'.encode())
        site.serve(
            "/" + path.relative_to(root).as_posix(), body, content_type="application/atom+xml"
        )


@pytest.mark.parametrize(
    ("tree", "index", "documents"),
    [(".", "/feed/index.atom", 2), ("collector-tests/feed", "/index.atom", 1)],
)
def test_backfill_walks_the_whole_archive_chain(
    corpus: Path, site: LoopbackSite, tmp_path: Path, tree: str, index: str, documents: int
) -> None:
    root = corpus / "06-paging" / "rinfo-rdl" / tree
    if not root.is_dir():
        pytest.skip("no 06-paging corpus")
    serve_tree(site, root)
    with Archive(tmp_path / "a.db") as archive:
        report = backfill(
            archive,
            [FeedSchedule(url=site.url(index), pages=False)],
            options=BackfillOptions(),
            settings=Settings(allow_private_hosts=True, host_gap=0),
        )
        (feed,) = report.feeds
        assert feed.error is None, feed.failures
        assert feed.documents_fetched == documents
        assert not feed.failures
        walked = {r.path for r in site.requests}
        pages = archive.db.execute("SELECT count(*), min(status) FROM backfill_pages").fetchone()
        assert pages == (documents, "ok")
        stored = archive.count("episodes")
        listed = feed.feed_episodes + feed.archive_new
        assert stored == listed
        assert index in walked
        assert archive.db.execute(
            "SELECT count(*) FROM episodes WHERE removed_from_feed_at IS NOT NULL"
        ).fetchone() == (0,)
