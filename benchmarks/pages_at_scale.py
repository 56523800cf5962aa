"""How fast each page type answers on a large archive (issue #28): the root, the podcasts'
cards, a podcast's page (and its search), the episodes table (and its search box), an episode,
each canned query. Target: every page <= 300 ms (median of 5) at 300,000 episodes.

The archive is built with the current schema (``Archive``), then filled by SQL: ``--podcasts``
podcasts of ``--episodes`` episodes in all, each with a title, a date, a duration and about a
kilobyte of show notes (words from a 2,000-word vocabulary, so that searches match many
episodes), indexed by the full-text triggers as a run would; a link per episode and a few
transcript passages. It is kept (``--db``) and reused when it exists.

Pages are asked in-process from the server ``make_datasette`` builds, as a browser asks them;
each is asked once to warm up, then 5 times. The figures printed: the median and the slowest,
and whether the median is within the target. ``--compare-without-indexes`` also measures the
same pages on a copy without the reading indexes (migration v16, #28), as the reference.

``--changes`` also gives the archive a history (:func:`add_history`: each podcast's backlog
first seen in one second, the rest of its episodes one at a time later, a tenth of the
episodes edited once, one in a hundred removed from its feed) and measures the change feed's
pages (#28): the whole archive's latest 100 (Atom and JSON), one podcast's latest 100, the
page after a cursor with nothing new, a revision's page. The reference, measured once in the
same run: the whole history read and made changes, as every request did before the time
bounds (migration v17).

    PYTHONPATH=src python benchmarks/pages_at_scale.py --episodes 300000
"""

from __future__ import annotations

import argparse
import asyncio
import random
import shutil
import sqlite3
import statistics
import sys
import time
from pathlib import Path

# this folder holds a feedgen.py of its own (synthetic feeds): the library must win here (the
# change feeds are written with it)
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).parent.resolve()]

from podarchive.store import Archive  # noqa: E402
from podarchive.web.serve import make_datasette, metadata_for  # noqa: E402

TARGET_MS = 300.0
WORDS = [f"w{i}" for i in range(2000)] + ["tensor", "kernel", "history", "quaternions"]


def _domain(n: int) -> str:
    return f"d{n % 50}.example.com"


def build(db: Path, podcasts: int, episodes: int) -> None:
    with Archive(db):
        pass  # the schema, every migration applied
    conn = sqlite3.connect(db)
    rng = random.Random(28)
    conn.execute("pragma journal_mode = wal")
    conn.execute("pragma synchronous = off")
    with conn:
        conn.executemany(
            "insert into feeds (id, url, name, title, author, description, image, link,"
            " last_fetched_at, last_success_at, error_count, first_seen_at)"
            " values (?, ?, ?, ?, ?, ?, ?, ?, '2026-01-01T00:00:00Z', '2026-01-01T00:00:00Z',"
            " ?, '2020-01-01T00:00:00Z')",
            [
                (
                    f,
                    f"https://feeds.example.com/{f}.xml",
                    f"Podcast {f}",
                    f"Podcast number {f}",
                    f"Host {f}",
                    f"<p>About podcast {f}: " + " ".join(rng.choices(WORDS, k=60)) + "</p>",
                    f"https://img.example.com/{f}.jpg",
                    f"https://example.com/{f}",
                    1 if f % 17 == 0 else 0,
                )
                for f in range(1, podcasts + 1)
            ],
        )
    batch = []
    for n in range(1, episodes + 1):
        feed = 1 + n % podcasts
        notes = " ".join(rng.choices(WORDS, k=160))
        day = n * 86400 * 3650 // episodes
        published = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(1_300_000_000 + day))
        batch.append(
            (
                n, feed, f"k{n}", f"g{n}", f"Episode {n}: " + " ".join(rng.choices(WORDS, k=5)),
                published, 600 + n % 5000, "full" if n % 10 else "bonus", notes,
                f"<p>{notes}</p>", f"https://cdn.example.com/{n}.mp3", "ok", "2026-01-01T00:00:00Z",
            )
        )  # fmt: skip
        if len(batch) == 20_000 or n == episodes:
            with conn:
                conn.executemany(
                    "insert into episodes (id, feed_id, key, guid, title, published, duration,"
                    " episode_type, notes_text, notes_html, enclosure_url, page_status,"
                    " first_seen_at) values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    batch,
                )
                conn.executemany(
                    "insert into links (episode_id, position, url, domain, text, source)"
                    " values (?, 0, ?, ?, 'a link', 'feed')",
                    [(e[0], f"https://{_domain(e[0])}/{e[0]}", _domain(e[0])) for e in batch],
                )  # fmt: skip
            print(f"  {n:,} episodes", file=sys.stderr, flush=True)
            batch = []
    with conn:
        conn.execute("analyze")
    conn.close()


HISTORY_START = 1_767_225_600  # 2026-01-01: the edits and removals, spread over 330 days
_STAMP = "strftime('%Y-%m-%dT%H:%M:%SZ', {}, 'unixepoch')"


def add_history(db: Path, episodes: int) -> None:
    """The change feed's history (``--changes``), once: the episodes' first-seen times (a
    podcast's first 90% in one second, the day it was added; the rest one at a time, later), a
    revision of one episode in ten (its title, and for one in thirty its notes, as they were),
    and one in a hundred removed from its feed."""
    conn = sqlite3.connect(db)
    if conn.execute("select count(*) from episode_revisions").fetchone()[0]:
        conn.close()
        return
    backlog = episodes * 9 // 10
    added = _STAMP.format(f"1577836800 + feed_id * 86400 + (id > {backlog}) * id * 600")
    edited = _STAMP.format(f"{HISTORY_START} + (id * 7919) % (330 * 86400)")
    removed = _STAMP.format(f"{HISTORY_START} + (id * 104729) % (330 * 86400)")
    with conn:
        conn.execute(f"update episodes set first_seen_at = {added}")  # noqa: S608
        conn.execute(
            "insert into episode_revisions (episode_id, source, seen_from, seen_until, changed,"
            " guid, title, published, duration, enclosure_url, enclosure_type,"
            " enclosure_length, notes_html, notes_text) select id, 'feed', first_seen_at,"
            f" {edited}, case when id / 100 % 30 = 3 then 'title,notes' else 'title' end, guid,"
            " 'Draft: ' || title, published, duration, enclosure_url, enclosure_type,"
            " enclosure_length, notes_html, case when id / 100 % 30 = 3 then substr(notes_text, 1,"
            " 600) || ' (cut)' else notes_text end from episodes where id / 100 % 10 = 3"
        )  # noqa: S608
        conn.execute(
            f"update episodes set removed_from_feed_at = {removed} where id / 100 % 100 = 7"
        )  # noqa: S608
        conn.execute("analyze")
    conn.close()


def change_pages(db: Path) -> dict[str, str]:
    """The change feed's pages (``--changes``): the cursor is the last change's (nothing new)."""
    from podarchive.store import ArchiveReader
    from podarchive.tasks.changes import ChangeQuery, read_changes

    with ArchiveReader.open_to_read(db) as archive:
        (last,) = read_changes(archive, ChangeQuery(limit=1, now="9999"))
        revision = archive.db.execute("select max(id) from episode_revisions").fetchone()[0]
    return {
        "changes: latest 100 (Atom)": "/archive/-/changes.atom",
        "changes: latest 100 (JSON)": "/archive/-/changes.json",
        "changes: a podcast's latest 100": "/archive/-/podcasts/1/changes.atom",
        "changes: after a cursor, none new": f"/archive/-/changes.atom?after={last.cursor}",
        "changes: a revision's page": f"/archive/-/changes/episode_revisions/{revision}",
    }


def whole_history(db: Path) -> tuple[int, float]:
    """The reference: every change read and made (what each request did before #28's bounds)."""
    from podarchive.rules.changes import select, to_changes
    from podarchive.store import ArchiveReader

    start = time.perf_counter()
    with ArchiveReader.open_to_read(db) as archive:
        count = len(select(to_changes(archive.change_rows()), now="9999", limit=100))
    return count, (time.perf_counter() - start) * 1000


def pages(db: Path) -> dict[str, str]:
    conn = sqlite3.connect(db)
    feed, episode = 1, conn.execute("select max(id) from episodes").fetchone()[0]
    conn.close()
    found = {
        "root": "/",
        "database": "/archive",
        "podcasts": "/archive/feeds",
        "podcast": f"/archive/feeds/{feed}",
        "podcast page 20": f"/archive/feeds/{feed}?page=20",
        "podcast search": f"/archive/feeds/{feed}?q=tensor",
        "episodes": "/archive/episodes",
        "episodes search": "/archive/episodes?_search=tensor+kernel",
        "episodes of a podcast": f"/archive/episodes?feed_id={feed}",
        "episode": f"/archive/episodes/{episode}",
    }
    queries = metadata_for()["databases"]["archive"]["queries"]
    for name, query in queries.items():
        args = "?q=tensor" if ":q" in query["sql"] else ""
        args = "?target=d7.example.com" if ":target" in query["sql"] else args
        found[f"query {name}"] = f"/archive/{name}{args}"
    # a target every episode links to (a parent domain of all of them): the newest 1,000 found
    # by walking the episodes by date, not by reading 300,000 matching links
    found["query episodes_linking_to (all)"] = "/archive/episodes_linking_to?target=example.com"
    return found


async def measure(
    db: Path, runs: int, extra: dict[str, str] | None = None
) -> dict[str, list[float]]:
    datasette = make_datasette(db)
    await datasette.invoke_startup()
    times: dict[str, list[float]] = {}
    for name, path in {**pages(db), **(extra or {})}.items():
        response = await datasette.client.get(path)
        if response.status_code != 200:  # a time limit: as slow as the limit, or slower
            print(f"  {path}: {response.status_code}", file=sys.stderr)
        times[name] = []
        for _ in range(runs):
            start = time.perf_counter()
            response = await datasette.client.get(path)
            elapsed = (time.perf_counter() - start) * 1000
            times[name].append(elapsed if response.status_code == 200 else float("inf"))
    return times


def drop_reading_indexes(db: Path) -> None:
    from podarchive.store.migrations_reading import READING_INDEXES

    conn = sqlite3.connect(db)
    with conn:
        for name, _ in READING_INDEXES:
            conn.execute(f'drop index if exists "{name}"')
    conn.close()


def report(title: str, times: dict[str, list[float]]) -> bool:
    print(f"\n{title}\n{'page':34} {'median ms':>10} {'max ms':>8}  <= {TARGET_MS:.0f} ms")
    ok = True
    for name, runs in times.items():
        median = statistics.median(runs)
        ok &= median <= TARGET_MS
        print(
            f"{name:34} {median:10.1f} {max(runs):8.1f}  {'yes' if median <= TARGET_MS else 'NO'}"
        )
    return ok


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--episodes", type=int, default=300_000)
    parser.add_argument("--podcasts", type=int, default=100)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--db", type=Path, default=None)
    parser.add_argument("--compare-without-indexes", action="store_true")
    parser.add_argument("--changes", action="store_true", help="the change feed's pages too")
    args = parser.parse_args()
    db = args.db or Path(f"/tmp/pages_at_scale_{args.episodes}/archive.db")
    if not db.exists():
        db.parent.mkdir(parents=True, exist_ok=True)
        print(f"building {db} ({args.podcasts} podcasts, {args.episodes:,} episodes)…")
        start = time.perf_counter()
        build(db, args.podcasts, args.episodes)
        print(f"  built in {time.perf_counter() - start:.0f} s")
    with Archive(db):
        pass  # migrations of an archive built by an earlier version
    extra: dict[str, str] = {}
    if args.changes:
        add_history(db, args.episodes)
        extra = change_pages(db)
    ok = report(f"{args.episodes:,} episodes", asyncio.run(measure(db, args.runs, extra)))
    if args.changes:
        count, ms = whole_history(db)
        print(f"\nreference: the whole history read and made changes ({count} kept): {ms:.0f} ms")
    if args.compare_without_indexes:
        bare = db.parent / "bare" / "archive.db"
        bare.parent.mkdir(exist_ok=True)
        shutil.copy(db, bare)
        drop_reading_indexes(bare)
        report(
            "the same, without the reading indexes (reference)",
            asyncio.run(measure(bare, args.runs)),
        )
    print(f"\nevery page type within {TARGET_MS:.0f} ms: {'yes' if ok else 'NO'}")


if __name__ == "__main__":
    main()
