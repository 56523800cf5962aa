"""An episode's page, rendering step: what :func:`episode_page` shows of the rows it is given,
without a database or Datasette (the page itself is tested in test_archive_face.py)."""

from __future__ import annotations

import asyncio
from typing import Any

from podarchive.web.episode_view import (
    EPISODE_SHOWN,
    SEGMENTS_SHOWN,
    EpisodeRows,
    episode_page,
    read_episode,
)

EPISODE = {
    "id": 7,
    "feed_id": 3,
    "title": "Episode",
    "link": " https://example.com/ep7 ",
    "page_url": None,
    "enclosure_url": "https://cdn.example.com/ep7.mp3",
    "published": "2024-05-01T10:00:00Z",
    "duration": 1188,
    "notes_text": "Hello  world",
    "page_notes_text": "Hello world",
    "podcast": "Show",
    "podcast_link": "https://example.com/",
}


def _url(table: str, pk: object) -> str:
    return f"/archive/{table}/{pk}"


def _rows(**changes: Any) -> EpisodeRows:
    fields: dict[str, Any] = {
        "episode": dict(EPISODE),
        "links": [],
        "persons": [],
        "chapters": [],
        "transcripts": [],
        "segments": [],
        "revisions": [],
    }
    return EpisodeRows(**{**fields, **changes})


def test_header_urls_date_and_notes() -> None:
    page = episode_page(_rows(), _url, "/archive/transcript_segments")
    assert page["title"] == "Episode"
    assert page["link_href"] == "https://example.com/ep7"
    assert page["page_href"] is None
    assert page["enclosure_href"] == "https://cdn.example.com/ep7.mp3"
    assert page["url"] == "/archive/episodes/7"
    assert page["podcast_url"] == "/archive/feeds/3"
    assert page["date"] == "2024-05-01"
    assert page["duration_hms"] == "0:19:48"
    assert page["notes_base"] == "https://example.com/ep7"
    assert page["page_notes_base"] == "https://example.com/ep7"
    assert page["same_notes"] is True
    assert page["shown_columns"] == EPISODE_SHOWN


def test_links_merged_per_url_and_unsafe_ones_dropped() -> None:
    links = [
        {"source": "notes", "url": "https://a.example/x", "normalized_url": "a/x", "text": ""},
        {"source": "page", "url": "https://a.example/x/", "normalized_url": "a/x", "text": "A"},
        {"source": "notes", "url": "javascript:alert(1)", "normalized_url": None, "text": "j"},
    ]
    shown = episode_page(_rows(links=links), _url, "")["links"]
    assert [(link["url"], link["sources"], link["text"]) for link in shown] == [
        ("https://a.example/x", ["notes", "page"], "A")
    ]


def test_chapters_one_per_second_and_title_with_media_links() -> None:
    chapters = [
        {"start": 61.2, "end": None, "title": "Two", "url": "ftp://x", "source": "psc"},
        {"start": 61.7, "end": None, "title": "Two", "url": None, "source": "json"},
        {"start": 0, "end": 61, "title": "One", "url": "https://c.example", "source": "json"},
    ]
    shown = episode_page(_rows(chapters=chapters), _url, "")["chapters"]
    assert [(c["title"], c["source"], c["url"], c["start_hms"]) for c in shown] == [
        ("Two", "psc", None, "0:01:01"),
        ("One", "json", "https://c.example", "0:00:00"),
    ]
    assert shown[0]["media"].startswith("https://cdn.example.com/ep7.mp3#t=")


def test_transcript_shown_with_its_segments_link_and_the_rest_cut() -> None:
    transcripts = [{"id": 5, "items": 2000, "status": "ok"}, {"id": 6, "items": 0}]
    segments = [{"start": i, "speaker": None, "text": "x"} for i in range(SEGMENTS_SHOWN + 1)]
    rows = _rows(transcripts=transcripts, segments=segments)
    page = episode_page(rows, _url, "/archive/transcript_segments")
    assert page["transcript"] is page["transcripts"][0]
    assert page["transcript"]["segments_url"] == (
        "/archive/transcript_segments?transcript_id=5&revision_id__isnull=1"
    )
    assert len(page["segments"]) == SEGMENTS_SHOWN
    assert page["more_segments"] is True
    assert "segments_url" not in rows.transcripts[0]  # the rows are not changed


def test_no_transcript_shown_when_the_first_has_no_items() -> None:
    page = episode_page(_rows(transcripts=[{"id": 5, "items": 0}]), _url, "")
    assert page["transcript"] is None
    assert page["segments"] == []
    assert page["more_segments"] is False


class _Result:
    def __init__(self, rows: list[dict[str, Any]]) -> None:
        self.rows = rows

    def first(self) -> dict[str, Any] | None:
        return self.rows[0] if self.rows else None


class _Database:
    """Datasette's database, as :func:`read_episode` uses it: an archive with no transcripts."""

    def __init__(self) -> None:
        self.queries: list[str] = []

    async def execute(self, sql: str, params: dict[str, Any]) -> _Result:
        self.queries.append(sql)
        if sql.startswith("select episodes.*"):
            return _Result([dict(EPISODE)] if params["id"] == "7" else [])
        return _Result([{"id": 1, "name": "Ann", "href": None}] if "persons" in sql else [])

    async def table_names(self) -> list[str]:
        return ["episodes", "feeds", "persons", "links"]

    async def view_names(self) -> list[str]:
        return []


def test_read_episode_reads_only_the_tables_there_are() -> None:
    db = _Database()
    rows = asyncio.run(read_episode(db, "7"))
    assert rows is not None
    assert rows.episode["title"] == "Episode"
    assert rows.persons == [{"id": 1, "name": "Ann", "href": None}]
    assert rows.chapters == rows.transcripts == rows.segments == rows.revisions == []
    assert not any("chapters" in sql or "transcript" in sql for sql in db.queries)
    assert asyncio.run(read_episode(_Database(), "8")) is None
