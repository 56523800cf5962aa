"""export-warc's media (#27): payloads streamed from the media folder into response records
(a capture) or resource records (stored before captures), and left out by ``--no-media``."""

from __future__ import annotations

import hashlib
from pathlib import Path

from click.testing import CliRunner
from export_podcast import records
from media_archive import media_archive, payload_bytes

from podarchive.cli import cli
from podarchive.core.types import Exchange
from podarchive.store import Archive

REQUEST = (("Host", "cdn.example"), ("Range", "bytes=0-"))


def test_media_are_responses_or_resources_and_optional(tmp_path: Path) -> None:
    db = tmp_path / "archive.db"
    bodies = {"a": payload_bytes(1, 300_000), "b": payload_bytes(2, 5000)}
    stored = media_archive(db, bodies)
    with Archive(db) as archive:
        feed_id, episode_id = archive.db.execute(
            "SELECT feed_id, id FROM episodes WHERE key = 'a'"
        ).fetchone()
        head = (("Content-Type", "audio/mpeg"), ("Content-Range", "bytes 100-299999/300000"))
        answer = Exchange("GET", "https://cdn.example/a.mp3", REQUEST, "HTTP/1.1", 206,
                          "Partial Content", head, "127.0.0.1", "2026-12-03T00:00:00Z")  # fmt: skip
        archive.record_captures([answer], kind="media", feed_id=feed_id, episode_id=episode_id,
                                body_sha256=stored["a"], body_size=300_000)  # fmt: skip
    runner = CliRunner()
    result = runner.invoke(cli, ["export-warc", str(tmp_path / "all"), "--db", str(db)])
    assert result.exit_code == 0, result.output
    found = records(tmp_path / "all.warc.gz")
    (response,) = [r for r in found if r["type"] == "response"]
    assert response["payload"] == bodies["a"]
    assert response["status"] == 206
    assert response["headers"]["WARC-Payload-Digest"] == f"sha256:{stored['a']}"
    assert ("X-Archive-Orig-Content-Range", "bytes 100-299999/300000") in response["http"]
    (resource,) = [r for r in found if r["type"] == "resource"]
    assert hashlib.sha256(resource["payload"]).hexdigest() == stored["b"]
    assert resource["headers"]["WARC-Target-URI"] == "https://cdn.example/b.mp3"
    result = runner.invoke(cli, ["export-warc", str(tmp_path / "none"), "--db", str(db),
                                 "--no-media"])  # fmt: skip
    assert result.exit_code == 0, result.output
    kinds = {r["type"] for r in records(tmp_path / "none.warc.gz")}
    assert kinds == {"warcinfo", "metadata"}  # the episodes' rows, no media
