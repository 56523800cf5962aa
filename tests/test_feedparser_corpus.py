"""feedparser's own test data (../shared/corpus/01-feedparser-tests) through the real pipeline.

Every file of the folder (2,106 XML files and one JSON Feed) is served from one loopback
site, ``tests/http*`` files with their ``Header:`` lines as real HTTP response headers
(Content-Type defaulting to ``text/xml`` as in feedparser's harness; other files as
``application/xml`` without a charset, i.e. XML's own rules, as feedparser reads a file).
One ``update_feeds`` run over all of them fills one SQLite archive; the tests then read it.

What is checked (run with ``-s`` to see the tally):

* no crash, no traceback, no "internal error": every file is archived (``last_error`` NULL,
  ``last_success_at`` set) or refused with a one-line reason;
* every ``wellformed/`` file that feedparser expects to read without error is archived,
  except the CDF files holding a bare ``<CHANNEL>`` and no items (feedparser gives them no
  version; we refuse them as "unknown root element", deliberately);
* ``encoding/`` files expected ``not bozo``: the clauses that map onto stored columns
  (``feed['title']``, ``entries[0]['description']`` → ``notes_html``, ``ord(...)``, and
  ``encoding == 'X'``: the document decoded independently with codec X has the title we
  stored) are evaluated; the number checked is asserted so none silently drop out;
* ``wellformed/`` titles (``feed['title']`` / ``entries[0]['title'] == '...'``) outside
  ``sanitize/`` and ``base/``, where feedparser's expectations assume HTML sanitising and
  relative-URI rewriting, both of which podarchive deliberately leaves off.
"""

from __future__ import annotations

import ast
import collections
import html
import logging
import re
import sqlite3
import time
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

import pytest
from loopback import LoopbackSite

from podarchive.core.settings import Settings
from podarchive.read.schedule_files import FeedSchedule
from podarchive.store import Archive
from podarchive.update.run import RunReport, update_feeds

CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus"
TESTS = CORPUS / "01-feedparser-tests" / "tests"
SETTINGS = Settings(  # one host serves every file: no politeness gap, four at a time
    connect_timeout=5, read_timeout=5, deadline=20, concurrency=4, per_host=4, host_gap=0
)

pytestmark = [pytest.mark.corpus, pytest.mark.slow]

EXPECT_RE = re.compile(r"Expect:\s*(.*)\s*-->")  # feedparser's harness, minus Description
HEADER_RE = re.compile(r"^Header:\s+([^:]+):(.*)$", re.MULTILINE)
LITERAL = r"(u?'(?:[^'\\]|\\.)*'|u?\"(?:[^\"\\]|\\.)*\")"
CLAUSE_RE = re.compile(
    r"(feed\['title'\]|entries\[0\]\['title'\]|entries\[0\]\['description'\]|"
    r"ord\(entries\[0\]\['description'\]\)|encoding) == (" + LITERAL[1:-1] + r"|\d+)"
)
# CDF files with a <CHANNEL> and no <ITEM>: feedparser finds a title but no feed version
CDF_CHANNEL_ONLY = re.compile(r"wellformed/cdf/channel_")
BOMS = (
    (b"\x00\x00\xfe\xff", "utf-32-be"),
    (b"\xff\xfe\x00\x00", "utf-32-le"),
    (b"\xfe\xff", "utf-16-be"),
    (b"\xff\xfe", "utf-16-le"),
    (b"\xef\xbb\xbf", "utf-8"),
)
UNMARKED = (
    (b"\x00\x00\x00<", "utf-32-be"),
    (b"<\x00\x00\x00", "utf-32-le"),
    (b"\x00<", "utf-16-be"),
    (b"<\x00", "utf-16-le"),
)


def sniff_text(body: bytes) -> str:
    """The file as text, the way feedparser's harness reads its header comment."""
    for bom, codec in BOMS:
        if body.startswith(bom):
            return body[len(bom) :].decode(codec, "ignore")
    for start, codec in UNMARKED:
        if body.startswith(start):
            return body.decode(codec, "ignore")
    return body.decode("utf-8", "ignore")


@dataclass(frozen=True)
class Case:
    rel: str  # path under tests/, also the URL path
    body: bytes
    headers: tuple[tuple[str, str], ...]  # what the server sends, Content-Type included
    expect: str

    @property
    def url_path(self) -> str:
        return "/" + self.rel


def load_case(path: Path) -> Case:
    rel = path.relative_to(TESTS).as_posix()
    body = path.read_bytes()
    text = sniff_text(body)
    match = EXPECT_RE.search(text)
    expect = match.group(1).strip() if match else ""
    headers: dict[str, str] = {}
    if "http" in rel:
        headers["Content-Type"] = "text/xml"  # the harness's default
        for name, value in HEADER_RE.findall(text):
            name = name.strip()
            headers["Content-Type" if name.lower() == "content-type" else name] = value.strip()
    else:
        headers["Content-Type"] = "application/xml"  # no charset: the document decides
    return Case(rel, body, tuple(headers.items()), expect)


def responder(case: Case) -> Callable[[BaseHTTPRequestHandler], None]:
    """Status line, headers and body in one write.

    (LoopbackSite's own replies write headers and body separately, which costs ~40 ms per
    keep-alive request to Nagle + delayed ACK: 2,107 feeds would take a minute and a half.)
    """
    lines = [f"{name}: {value}" for name, value in case.headers]
    head = "\r\n".join(["HTTP/1.1 200 OK", *lines, f"Content-Length: {len(case.body)}", "", ""])
    payload = head.encode("latin-1") + case.body

    def reply(handler: BaseHTTPRequestHandler) -> None:
        handler.wfile.write(payload)

    return reply


@dataclass
class CorpusRun:
    cases: dict[str, Case]
    feeds: dict[str, dict[str, Any]]  # rel -> feeds row
    first_episode: dict[str, dict[str, Any]]  # rel -> first episode row (document order)
    report: RunReport
    logged: list[logging.LogRecord]
    requests: int
    seconds: float
    db: Path


class _Collect(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


@pytest.fixture(scope="module")
def corpus_run(tmp_path_factory: pytest.TempPathFactory) -> CorpusRun:
    if not TESTS.is_dir():
        pytest.skip(f"no feedparser tests at {TESTS} (../shared/corpus is absent)")
    cases = {c.rel: c for c in map(load_case, sorted(p for p in TESTS.rglob("*") if p.is_file()))}
    db = tmp_path_factory.mktemp("feedparser-corpus") / "archive.db"
    collect = _Collect()
    logger = logging.getLogger("podarchive")
    logger.addHandler(collect)
    start = time.perf_counter()
    try:
        with LoopbackSite() as site:
            for case in cases.values():
                site.handle(case.url_path, responder(case))
            schedules = [
                FeedSchedule(url=site.url(c.url_path), pages=False) for c in cases.values()
            ]
            with Archive(db) as archive:
                report = update_feeds(archive, schedules, settings=SETTINGS)
            requests = len(site.requests)
            prefix = site.url("/")
    finally:
        logger.removeHandler(collect)
    seconds = time.perf_counter() - start
    conn = sqlite3.connect(db)
    conn.row_factory = sqlite3.Row
    try:
        feeds = {
            r["url"].removeprefix(prefix): dict(r) for r in conn.execute("SELECT * FROM feeds")
        }
        first: dict[str, dict[str, Any]] = {}
        by_id = {row["id"]: rel for rel, row in feeds.items()}
        for row in conn.execute("SELECT * FROM episodes ORDER BY id"):
            first.setdefault(by_id[row["feed_id"]], dict(row))
    finally:
        conn.close()
    return CorpusRun(cases, feeds, first, report, collect.records, requests, seconds, db)


def reason_prefix(reason: str) -> str:
    """``not a feed: unknown root element <X>`` -> ``not a feed: unknown root element``."""
    head = ": ".join(reason.split(": ")[:2])
    return re.sub(r"\s*(<[^>]*>|'[^']*'|\"[^\"]*\").*$", "", head)[:70]


def test_every_file_is_archived_or_refused_with_a_one_line_reason(
    corpus: Path, corpus_run: CorpusRun
) -> None:
    run = corpus_run
    assert len(run.cases) > 2000
    assert set(run.feeds) == set(run.cases)
    assert len(run.report.feeds) == len(run.cases)
    assert run.requests == len(run.cases)  # one GET per feed, nothing else fetched
    tally: collections.Counter[str] = collections.Counter()
    for rel, row in run.feeds.items():
        reason = row["last_error"]
        if reason is None:
            assert row["last_success_at"] is not None, rel
            tally["archived"] += 1
            continue
        assert row["last_success_at"] is None, rel
        assert reason.strip(), rel
        assert reason == reason.strip(), rel
        assert "\n" not in reason, (rel, reason)
        assert "\r" not in reason, (rel, reason)
        assert "Traceback" not in reason, (rel, reason)
        assert not reason.startswith("internal error"), (rel, reason)
        tally[f"refused: {reason_prefix(reason)}"] += 1
    for feed in run.report.feeds:
        assert feed.error is None or "\n" not in feed.error
    assert not [r for r in run.logged if r.exc_info or r.levelno >= logging.ERROR]
    with sqlite3.connect(run.db) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        blobs = conn.execute(
            "SELECT count(*) FROM episodes WHERE typeof(title) = 'blob' "
            "OR typeof(notes_html) = 'blob' OR typeof(summary) = 'blob'"
        ).fetchone()[0]
        episodes = conn.execute("SELECT count(*) FROM episodes").fetchone()[0]
        links = conn.execute("SELECT count(*) FROM links").fetchone()[0]
    assert blobs == 0
    archived = tally["archived"]
    print(
        f"\nfeedparser corpus: {len(run.cases)} files, {archived} archived "
        f"({episodes} episodes, {links} links), {len(run.cases) - archived} refused, "
        f"in {run.seconds:.1f} s"
    )
    for key, count in sorted(tally.items(), key=lambda kv: (-kv[1], kv[0])):
        print(f"  {count:5d}  {key}")
    assert archived >= 0.99 * len(run.cases)


def test_wellformed_files_are_archived(corpus: Path, corpus_run: CorpusRun) -> None:
    """What feedparser reads without error, we archive (bar channel-only CDF, see above)."""
    refused = {
        rel: row["last_error"]
        for rel, row in corpus_run.feeds.items()
        if rel.startswith("wellformed/")
        and corpus_run.cases[rel].expect.startswith("not bozo")
        and row["last_error"] is not None
    }
    assert all(CDF_CHANNEL_ONLY.match(rel) for rel in refused), refused
    assert all(reason.startswith("not a feed: unknown root element") for reason in refused.values())
    assert len(refused) <= 7


def clauses(expect: str) -> list[tuple[str, list[Any]]]:
    """The ``X == literal`` clauses this test can map, per key: the literals allowed.

    ``A == x or A == y`` (one file has it) gives ``[("A", [x, y])]``.
    """
    found: dict[str, list[Any]] = {}
    for key, value in CLAUSE_RE.findall(expect):
        found.setdefault(key, []).append(ast.literal_eval(value))
    return list(found.items())


def plain_title(text: str) -> str | None:
    """The first ``<title>`` holding plain text (no markup, no references), or None."""
    match = re.search(r"<title>([^<&]*)</title>", text)
    return match.group(1).strip() or None if match else None


def test_encoding_files_come_through_decoded(corpus: Path, corpus_run: CorpusRun) -> None:
    run = corpus_run
    checked: collections.Counter[str] = collections.Counter()
    for rel, case in sorted(run.cases.items()):
        if not rel.startswith("encoding/") or not case.expect.startswith("not bozo"):
            continue
        row = run.feeds[rel]
        assert row["last_error"] is None, (rel, row["last_error"])
        checked["archived"] += 1
        episode = run.first_episode.get(rel, {})
        for key, wants in clauses(case.expect):
            (want,) = wants
            if key == "feed['title']":
                assert row["title"] == want, rel
            elif key == "entries[0]['description']":
                # we keep the raw description; feedparser re-serialises character references
                assert html.unescape(episode["notes_html"]) == html.unescape(want), rel
            elif key == "ord(entries[0]['description'])":
                assert len(episode["notes_html"]) == 1, rel
                assert ord(episode["notes_html"]) == want, rel
            elif key == "encoding":
                # decode it ourselves with the codec feedparser should pick: same title
                text = case.body.decode(want, "replace").lstrip("\ufeff")
                assert "\ufffd" not in text, rel
                assert row["title"] == plain_title(text), rel
            checked[key] += 1
    print("\nencoding expectations checked:", dict(checked))
    assert checked["archived"] == 72
    assert checked["encoding"] == 61
    assert checked["feed['title']"] == 1
    assert checked["entries[0]['description']"] == 7
    assert checked["ord(entries[0]['description'])"] == 1


def test_wellformed_titles_match_feedparser_expectations(
    corpus: Path, corpus_run: CorpusRun
) -> None:
    run = corpus_run
    checked = 0
    mismatches = []
    for rel, case in sorted(run.cases.items()):
        if not rel.startswith("wellformed/") or not case.expect.startswith("not bozo"):
            continue
        if rel.startswith(("wellformed/sanitize/", "wellformed/base/")):
            continue  # expectations assume sanitising / relative-URI rewriting (both off)
        if CDF_CHANNEL_ONLY.match(rel):
            continue
        for key, wants in clauses(case.expect):
            if key == "feed['title']":
                got = run.feeds[rel]["title"]
            elif key == "entries[0]['title']":
                got = run.first_episode.get(rel, {}).get("title")
            else:
                continue
            checked += 1
            if got not in [w.strip() or None for w in wants]:
                mismatches.append((rel, key, wants, got))
    print(f"\nwellformed title expectations checked: {checked}")
    assert not mismatches
    assert checked >= 60
