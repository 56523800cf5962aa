"""Republishing an archived podcast (#28): the feed parses with feedparser and podcastparser
with every archived episode (the removed one marked); archived again by podarchive itself from
a loopback server, it gives the same episodes; enclosures point at the archived copies when
the media is kept, transcripts and chapters at the archived bodies ``serve`` serves."""

from __future__ import annotations

import io
from pathlib import Path

import feedparser
import podcastparser
import pytest
from commands import invoke, podarchive, query
from loopback import LoopbackSite, serve_pytorch
from lxml import etree
from media_archive import media_archive, payload_bytes
from test_changes import build_edited
from test_serve import RUN_SETTINGS, get, run

from podarchive.formats.feeds import ARCHIVE, PODCAST
from podarchive.read.schedule_files import FeedSchedule
from podarchive.store import Archive
from podarchive.update.run import update_feeds

EPISODE = "SELECT guid, title, enclosure_url, enclosure_type, enclosure_length, published, duration"


@pytest.fixture(scope="module")
def edited(tmp_path_factory: pytest.TempPathFactory) -> Path:
    db = tmp_path_factory.mktemp("republish") / "archive.db"
    with LoopbackSite() as site:
        build_edited(db, site)
    return db


@pytest.fixture(scope="module")
def pytorch(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The PyTorch fixture archived once, with its transcripts and chapters files."""
    db = tmp_path_factory.mktemp("republish-pytorch") / "archive.db"
    with LoopbackSite() as site:
        run(db, serve_pytorch(site), pages=False)
    return db


def _republish(db: Path, *args: str) -> bytes:
    out = db.parent / "feed.xml"
    code, stdout, stderr = invoke("republish", *args, "--db", str(db), "-o", str(out))
    assert (code, stderr) == (0, ""), stderr
    assert stdout.endswith(f"→ {out}\n")
    return out.read_bytes()


def _rearchive(feed: bytes, db: Path) -> None:
    with LoopbackSite() as site:
        site.serve("/again.xml", feed, content_type="application/rss+xml")
        with Archive(db) as archive:
            report = update_feeds(
                archive,
                [FeedSchedule(url=site.url("/again.xml"), name="again", pages=False)],
                settings=RUN_SETTINGS,
            )
    assert [f.error for f in report.feeds] == [None]


def test_every_archived_episode_is_listed_and_the_removed_one_marked(edited: Path) -> None:
    feed = _republish(edited, "Loop Radio")
    parsed = feedparser.parse(feed)
    assert not parsed.bozo, parsed.bozo_exception
    assert parsed.version == "rss20"
    assert sorted(e.id for e in parsed.entries) == ["a", "b", "c", "d"]
    assert {e.title for e in parsed.entries} == {"Alpha (corrected)", "Bravo", "Charlie", "Delta"}
    other = podcastparser.parse("http://localhost/feed.xml", io.BytesIO(feed))
    assert sorted(e["guid"] for e in other["episodes"]) == ["a", "b", "c", "d"]
    assert other["title"] == "Loop Radio"
    bravo = next(e for e in other["episodes"] if e["guid"] == "b")
    assert [x["url"] for x in bravo["enclosures"]][0].endswith("/media/b-fixed.mp3")
    root = etree.fromstring(feed)
    removed = root.findall(f".//item/{{{ARCHIVE}}}removed")
    assert [r.getparent().findtext("guid") for r in removed] == ["c"]
    assert removed[0].text == "2026-12-02T10:00:00Z"


def test_archived_again_it_gives_the_same_episodes(edited: Path, tmp_path: Path) -> None:
    again = tmp_path / "again.db"
    _rearchive(_republish(edited, "Loop Radio"), again)
    assert sorted(query(again, EPISODE + " FROM episodes")) == sorted(
        query(edited, EPISODE + " FROM episodes")
    )


def test_a_rich_podcast_archived_again_keeps_its_episodes_and_files(
    pytorch: Path, tmp_path: Path
) -> None:
    feed = _republish(pytorch, "PyTorch Developer Podcast")
    parsed = feedparser.parse(feed)
    assert not parsed.bozo
    assert len(parsed.entries) == query(pytorch, "SELECT count(*) FROM episodes")[0][0] == 9
    assert len(podcastparser.parse("http://localhost/f.xml", io.BytesIO(feed))["episodes"]) == 9
    again = tmp_path / "again.db"
    _rearchive(feed, again)
    assert sorted(query(again, EPISODE + ", explicit, episode_type FROM episodes")) == sorted(
        query(pytorch, EPISODE + ", explicit, episode_type FROM episodes")
    )
    files = "SELECT e.guid, t.url FROM transcripts t JOIN episodes e ON e.id = t.episode_id"
    assert sorted(query(again, files)) == sorted(query(pytorch, files))
    channel = "SELECT title, link, language, author, image, categories, explicit FROM feeds"
    assert query(again, channel) == query(pytorch, channel)


def test_transcripts_and_chapters_at_the_archived_copies(pytorch: Path) -> None:
    feed = _republish(pytorch, "PyTorch Developer Podcast", "--base-url", "http://localhost")
    root = etree.fromstring(feed)
    transcripts = root.findall(f".//item/{{{PODCAST}}}transcript")
    chapters = root.findall(f".//item/{{{PODCAST}}}chapters")
    assert transcripts
    assert chapters
    for element in transcripts + chapters:
        url = element.get("url", "")
        assert url.startswith("http://localhost/archive/-/documents/"), url
        served = get(pytorch, url.removeprefix("http://localhost"))
        digest = url.rsplit("/", 1)[1]
        (original,) = query(pytorch, f"SELECT size FROM documents WHERE hash = '{digest}'")  # noqa: S608
        assert len(served.content) == original[0]
        assert served.headers["x-content-type-options"] == "nosniff"
    served_feed = get(pytorch, "/archive/-/podcasts/1/feed.xml")
    assert served_feed.headers["content-type"].startswith("application/rss+xml")
    assert b"http://localhost/archive/-/documents/" in served_feed.content
    parsed = feedparser.parse(served_feed.content)
    assert not parsed.bozo
    assert parsed.feed.link == query(pytorch, "SELECT link FROM feeds")[0][0]
    assert any(
        link.rel == "self" and link.href == "http://localhost/archive/-/podcasts/1/feed.xml"
        for link in parsed.feed.links
    )


def test_enclosures_at_the_archived_media(tmp_path: Path) -> None:
    db = tmp_path / "archive.db"
    stored = media_archive(db, {"a": payload_bytes(1), "b": payload_bytes(2)})
    feed = _republish(db, "Show", "--media-base", "https://files.example/media/")
    parsed = feedparser.parse(feed)
    enclosures = {e.id: e.enclosures[0] for e in parsed.entries}
    sha = stored["a"]
    assert enclosures["a"]["href"] == f"https://files.example/media/{sha[:2]}/{sha[2:4]}/{sha}.mp3"
    assert enclosures["a"]["length"] == "4096"
    root = etree.fromstring(feed)
    originals = [e.text for e in root.iter(f"{{{ARCHIVE}}}originalEnclosure")]
    assert originals == ["https://cdn.example/a.mp3", "https://cdn.example/b.mp3"]
    # served: at the server's own copies, which it serves
    served = feedparser.parse(get(db, "/archive/-/podcasts/1/feed.xml").content)
    href = next(e for e in served.entries if e.id == "b").enclosures[0]["href"]
    assert href.startswith("http://localhost/-/media/")
    assert get(db, href.removeprefix("http://localhost")).content == payload_bytes(2)
    # without a place the media is published: the original URLs
    plain = feedparser.parse(_republish(db, "Show"))
    assert {e.enclosures[0]["href"] for e in plain.entries} == {
        "https://cdn.example/a.mp3",
        "https://cdn.example/b.mp3",
    }


def test_mistakes_are_one_line(edited: Path, tmp_path: Path) -> None:
    code, _, err = invoke("republish", "Nobody", "--db", str(edited), "-o", str(tmp_path / "x"))
    assert (code, err.count("\n")) == (1, 1)
    assert "no podcast 'Nobody'" in err
    get(edited, "/archive/-/podcasts/99/feed.xml", status=404)


def test_the_command_as_a_process(edited: Path, tmp_path: Path) -> None:
    done = podarchive("republish", "1", "--db", str(edited), "-o", "-", cwd=tmp_path)
    assert (done.returncode, done.stderr) == (0, "")
    assert len(feedparser.parse(done.stdout.encode()).entries) == 4
