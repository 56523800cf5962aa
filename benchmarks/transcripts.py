"""(#12) Transcript parsing by format, and a page re-check (304) beside a feed re-poll (304).

1. A 2-hour transcript (~2,000 cues of 3-4 s, sentences of varied words, three speakers)
   in each format ``parse_transcript`` reads: SRT, WebVTT with ``<v Speaker>`` voices,
   Podcasting 2.0 JSON, HTML (``<cite>``/``<time>``/``<p>``) and plain text. Median time
   per file, segments, µs per segment, MB/s and the parse's peak memory (tracemalloc), beside
   ``parse_feed`` on a generated feed of about the same number of bytes, in the same run.
2. ``fetch_page`` with the page's ETag against ``fetch_feed`` with the feed's ETag, both
   answered 304 by the loopback server: requests/s and client CPU per request, one thread
   and eight, alternated in rounds in the same run.

Run: ``python benchmarks/transcripts.py`` (``--smoke``: a 2-minute transcript, 10 requests).
"""

from __future__ import annotations

import json
import random
import statistics
import tempfile
import time
import tracemalloc
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from common import arguments, bench_settings, machine, show
from feedgen import FeedSpec, feed, page
from server import ServerProcess

from podarchive.core.types import FeedState, PageTask
from podarchive.net.fetch import Fetcher
from podarchive.read.parse import parse_feed
from podarchive.read.schedule_files import FeedSchedule
from podarchive.read.transcript_formats import parse_transcript
from podarchive.store import Archive
from podarchive.update.one_feed import fetch_feed
from podarchive.update.pages import fetch_page
from podarchive.update.run import update_feeds

# --- transcripts ----------------------------------------------------------------------------

VOCABULARY = (
    "the a and to of in that it is was for on you with as be at this have from or one had by "
    "but not what all were we when your can said there use an each which she do how their if "
    "will up other about out many then them these so some her would make like him into time "
    "has look two more write go see number no way could people my than first water been call "
    "who oil its now find long down day did get come made may part podcast episode guest "
    "interview question answer really actually basically honestly listener microphone "
    "recording software database archive transcript subscription algorithm infrastructure "
    "conversation everybody something remember important interesting different government "
    "university experience community technology especially probably yesterday tomorrow "
    "don't it's we're they're I'm you've that's isn't wasn't can't café naïve résumé R&D "
    "Kubernetes Python SQLite London Tuesday September twenty thousand percent okay yeah right"
)
WORDS = VOCABULARY.split()
SPEAKERS = ("Alice Host", "Bob Guest", "Carol Cohost")
FORMATS = (  # name, declared type, URL extension, what parse_transcript should read it as
    ("SRT", "application/x-subrip", "srt", "srt"),
    ("WebVTT (voices)", "text/vtt", "vtt", "vtt"),
    ("JSON (Podcasting 2.0)", "application/json", "json", "json"),
    ("HTML (cite/time/p)", "text/html; charset=utf-8", "html", "html"),
    ("plain text", "text/plain; charset=utf-8", "txt", "text"),
)


@dataclass(frozen=True, slots=True)
class Cue:
    start: float
    end: float
    speaker: str
    text: str  # one or two lines, raw (not escaped)


def cues(seconds: float, seed: int = 12) -> list[Cue]:
    """Contiguous 3-4 s cues up to ``seconds``; ~2.7 words a second, a speaker for a few cues."""
    rng = random.Random(seed)
    out: list[Cue] = []
    start, speaker, sentence_left = 0.0, SPEAKERS[0], 0
    while start < seconds:
        length = round(rng.uniform(3.0, 4.0), 3)
        if rng.random() < 0.2:
            speaker = rng.choice(SPEAKERS)
        words = []
        for _ in range(round(length * rng.uniform(2.3, 3.1))):
            word = rng.choice(WORDS)
            if sentence_left == 0:
                word = word[:1].upper() + word[1:]
                sentence_left = rng.randint(6, 16)
            sentence_left -= 1
            if sentence_left == 0:
                word += rng.choice(".....?!")
            elif rng.random() < 0.06:
                word += ","
            words.append(word)
        half = len(words) // 2
        text = " ".join(words)
        if len(text) > 42:  # subtitle-style: two lines
            text = " ".join(words[:half]) + "\n" + " ".join(words[half:])
        out.append(Cue(round(start, 3), round(start + length, 3), speaker, text))
        start += length
    return out


def _clock(seconds: float, separator: str) -> str:
    ms = round(seconds * 1000)
    h, rest = divmod(ms, 3_600_000)
    m, rest = divmod(rest, 60_000)
    s, ms = divmod(rest, 1000)
    return f"{h:02d}:{m:02d}:{s:02d}{separator}{ms:03d}"


def _short_clock(seconds: float) -> str:
    whole = int(seconds)
    h, m, s = whole // 3600, whole % 3600 // 60, whole % 60
    return f"{h}:{m:02d}:{s:02d}" if h else f"{m}:{s:02d}"


def _escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def srt(cs: list[Cue]) -> bytes:
    blocks = (
        f"{i}\n{_clock(c.start, ',')} --> {_clock(c.end, ',')}\n{c.text}\n"
        for i, c in enumerate(cs, 1)
    )
    return "\n".join(blocks).encode()


def vtt(cs: list[Cue]) -> bytes:
    blocks = (
        f"{_clock(c.start, '.')} --> {_clock(c.end, '.')}\n<v {c.speaker}>{_escape(c.text)}\n"
        for c in cs
    )
    return ("WEBVTT\n\n" + "\n".join(blocks)).encode()


def json_transcript(cs: list[Cue]) -> bytes:
    segments = [
        {"speaker": c.speaker, "startTime": c.start, "endTime": c.end, "body": c.text} for c in cs
    ]
    return json.dumps({"version": "1.0.0", "segments": segments}, ensure_ascii=False).encode()


def html_transcript(cs: list[Cue]) -> bytes:
    body = "\n".join(
        f"<cite>{c.speaker}:</cite>\n<time>{_short_clock(c.start)}</time>\n<p>{_escape(c.text)}</p>"
        for c in cs
    )
    return (
        '<!DOCTYPE html>\n<html><head><meta charset="utf-8"><title>Transcript</title></head>'
        f"<body>\n{body}\n</body></html>\n"
    ).encode()


def plain_text(cs: list[Cue]) -> bytes:
    return "\n\n".join(f"{c.speaker}: {c.text}" for c in cs).encode() + b"\n"


BUILDERS: dict[str, Callable[[list[Cue]], bytes]] = {
    "srt": srt,
    "vtt": vtt,
    "json": json_transcript,
    "html": html_transcript,
    "text": plain_text,
}


def median_seconds(run: Callable[[], object], repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def peak_bytes(run: Callable[[], object]) -> int:
    """Peak of the Python heap above its level before ``run`` (tracemalloc; a run of its own)."""
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        tracemalloc.reset_peak()
        run()
        return tracemalloc.get_traced_memory()[1] - before
    finally:
        tracemalloc.stop()


FEED_HEADERS = {"content-type": "application/rss+xml"}


def feed_of_size(target: int) -> tuple[bytes, int]:
    """A feedgen feed of about ``target`` bytes, and its episode count."""
    empty = len(feed(FeedSpec(name="ref", episodes=0)))
    per_episode = (len(feed(FeedSpec(name="ref", episodes=10))) - empty) / 10
    episodes = max(1, round((target - empty) / per_episode))
    return feed(FeedSpec(name="ref", episodes=episodes)), episodes


def parsing(seconds: float, repeats: int) -> None:
    cs = cues(seconds)
    rows = [
        (
            "format",
            "KB",
            "segments",
            "ms/file",
            "µs/segment",
            "MB/s",
            "peak MB (x body)",
            "same-size feed: eps, ms",
            "transcript/feed",
        )
    ]
    for label, content_type, extension, expected in FORMATS:
        body = BUILDERS[expected](cs)
        url = f"https://example.com/ep/1.{extension}"

        def run(body: bytes = body, content_type: str = content_type, url: str = url) -> object:
            return parse_transcript(body, content_type, url)

        parsed = parse_transcript(body, content_type, url)
        assert parsed.format == expected, (label, parsed.format)
        assert len(parsed.segments) == len(cs), (label, len(parsed.segments), len(cs))
        assert not parsed.warnings, (label, parsed.warnings)
        took = median_seconds(run, repeats)
        peak = peak_bytes(run)

        reference, episodes = feed_of_size(len(body))

        def parse_reference(reference: bytes = reference) -> object:
            return parse_feed(reference, FEED_HEADERS, "https://example.com/feed")

        assert parse_feed(reference, FEED_HEADERS).episodes
        feed_took = median_seconds(parse_reference, repeats)
        rows.append(
            (
                label,
                f"{len(body) / 1e3:.0f}",
                f"{len(parsed.segments):,}",
                f"{took * 1e3:.1f}",
                f"{took * 1e6 / len(parsed.segments):.1f}",
                f"{len(body) / took / 1e6:.1f}",
                f"{peak / 1e6:.2f} ({peak / len(body):.1f}x)",
                f"{episodes}, {feed_took * 1e3:.1f} ({len(reference) / 1e3:.0f} KB)",
                f"{100 * took / feed_took:.0f}%",
            )
        )
    show(rows)


# --- 304 re-checks ----------------------------------------------------------------------------


def rechecks(requests: int, rounds: int) -> None:
    settings = bench_settings()
    with ServerProcess(lifetime=600) as srv, Fetcher(settings) as fetcher:
        srv.set({"/ep/1": page("bench", 1)}, content_type="text/html; charset=utf-8")
        srv.set({"/feed": feed(FeedSpec(name="bench", episodes=100))})
        page_url, feed_url = srv.url("/ep/1"), srv.url("/feed")
        schedule = FeedSchedule(
            url=feed_url, allow_private_hosts=True, transcripts=False, chapters=False
        )

        # first fetches (200) give the ETags the re-checks carry
        first_page = fetch_page(fetcher, PageTask(1, 1, page_url, None, None), schedule)
        assert first_page.error is None, first_page.error
        assert first_page.result is not None
        assert first_page.notes is not None
        state = FeedState(1, feed_url, None, None, None, 0)
        first_feed = fetch_feed(fetcher, schedule, state)
        assert first_feed.error is None, first_feed.error
        assert first_feed.result is not None
        task = PageTask(1, 1, page_url, first_page.result.etag, None)
        state = FeedState(1, feed_url, first_feed.result.etag, None, first_feed.content_hash, 0)
        assert task.etag
        assert state.etag

        def page_once() -> None:
            outcome = fetch_page(fetcher, task, schedule)
            assert outcome.error is None, outcome.error
            assert outcome.result is not None
            assert outcome.result.not_modified

        def feed_once() -> None:
            outcome = fetch_feed(fetcher, schedule, state)
            assert outcome.error is None, outcome.error
            assert outcome.result is not None
            assert outcome.result.not_modified

        cases = {"page re-check (fetch_page)": page_once, "feed re-poll (fetch_feed)": feed_once}
        figures: dict[tuple[str, int], list[tuple[float, float]]] = {}
        with ThreadPoolExecutor(8) as pool:
            for once in cases.values():  # warm both paths and the pool's threads
                list(pool.map(lambda _, once=once: once(), range(16)))
            for _ in range(rounds):
                for threads in (1, 8):
                    for name, once in cases.items():
                        before = srv.counts()
                        cpu, wall = time.process_time(), time.perf_counter()
                        if threads == 1:
                            for _ in range(requests):
                                once()
                        else:
                            list(pool.map(lambda _, once=once: once(), range(requests)))
                        wall = time.perf_counter() - wall
                        cpu = time.process_time() - cpu
                        after = srv.counts()
                        assert after[0] - before[0] == requests, "one request per re-check"
                        assert after[1] - before[1] == requests, "every answer was a 304"
                        figures.setdefault((name, threads), []).append((wall, cpu))

    rows = [("case", "threads", "requests/s", "client CPU ms/request", "wall ms/request")]
    for (name, threads), runs in figures.items():
        wall = statistics.median(w for w, _ in runs)
        cpu = statistics.median(c for _, c in runs)
        rows.append(
            (
                name,
                str(threads),
                f"{requests / wall:,.0f}",
                f"{1e3 * cpu / requests:.3f}",
                f"{1e3 * wall / requests:.3f}",
            )
        )
    show(rows)
    for threads in (1, 8):
        page_cpu, feed_cpu = (
            statistics.median(c for _, c in figures[(name, threads)]) for name in cases
        )
        print(f"{threads} thread(s): page re-check CPU = {page_cpu / feed_cpu:.2f}x feed re-poll")


def runs(episodes: int, rounds: int, tmp: Path) -> None:
    """Whole runs on an archive: the feed answers 304 each time; with --recheck-pages every
    archived page is asked too (each answers 304), beside a run that re-polls the feed only."""
    settings = bench_settings()
    with ServerProcess(lifetime=600) as srv:
        base = srv.url("")
        spec = FeedSpec(name="bench", episodes=episodes, page_base=base)
        srv.set({f"/bench/ep/{i}": page("bench", i) for i in range(episodes)},
                content_type="text/html; charset=utf-8")  # fmt: skip
        srv.set({"/feed": feed(spec)})
        schedule = FeedSchedule(
            url=srv.url("/feed"), allow_private_hosts=True, transcripts=False, chapters=False
        )
        db = tmp / "runs.db"
        with Archive(db) as archive:
            update_feeds(archive, [schedule], settings=settings)  # the first ingest, all 200
            figures: dict[str, list[tuple[float, float, int]]] = {}
            cases = {"feed re-poll only": False, "feed + every page re-checked": True}
            for _ in range(rounds):
                for name, recheck in cases.items():
                    before = srv.counts()
                    cpu, wall = time.process_time(), time.perf_counter()
                    report = update_feeds(archive, [schedule], settings=settings,
                                          recheck_pages=recheck)  # fmt: skip
                    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
                    after = srv.counts()
                    assert not report.failed
                    assert report.feeds[0].not_modified
                    asked = after[0] - before[0]
                    assert after[1] - before[1] == asked, "every answer was a 304"
                    figures.setdefault(name, []).append((wall, cpu, asked))
    rows = [("run", "requests", "wall ms", "CPU ms", "CPU ms/request")]
    for name, measured in figures.items():
        wall = statistics.median(w for w, _, _ in measured)
        cpu = statistics.median(c for _, c, _ in measured)
        asked = measured[0][2]
        rows.append((name, str(asked), f"{1e3 * wall:.1f}", f"{1e3 * cpu:.1f}",
                     f"{1e3 * cpu / asked:.3f}"))  # fmt: skip
    show(rows)


def main() -> None:
    args = arguments(__doc__)
    seconds = 120.0 if args.smoke else 7200.0
    repeats = 1 if args.smoke else 7
    requests = 10 if args.smoke else 300
    rounds = 1 if args.smoke else 5
    print(machine())
    print("host_gap=0, per_host=8 (everything is on 127.0.0.1); server in a child process\n")
    print(
        f"1. a {seconds / 60:g}-minute transcript, median of {repeats}; "
        "reference: parse_feed on a feedgen feed of about the same bytes, same run"
    )
    parsing(seconds, repeats)
    print(
        f"\n2. {requests} re-checks answered 304 (If-None-Match), median of {rounds} rounds "
        "alternating the two; client CPU only"
    )
    rechecks(requests, rounds)
    episodes = 20 if args.smoke else 500
    print(
        f"\n3. whole runs on an archive of {episodes} episodes whose feed answers 304: "
        f"re-poll only, and with run --recheck-pages (every page 304), median of {rounds}"
    )
    with tempfile.TemporaryDirectory() as tmp:
        runs(episodes, rounds, Path(tmp))


if __name__ == "__main__":
    main()
