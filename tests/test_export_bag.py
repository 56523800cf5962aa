"""``podarchive export-bag`` (#27): a BagIt 1.0 bag of a real archive (a run's, with media
downloaded from a loopback podcast), validated by bagit, its archive copy passing ``check``."""

from __future__ import annotations

import hashlib
import os
import random
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import bagit
import pytest
from click.testing import CliRunner
from loopback import LoopbackSite, MediaFile

from podarchive.cli import cli
from podarchive.formats.bag import BagError, validate_bag
from podarchive.read.opml import parse_opml
from podarchive.runtime.lock import archive_lock
from podarchive.store import Archive
from podarchive.store.media_files import MediaFolder
from podarchive.tasks.export_bag import parse_info

SRC = Path(__file__).resolve().parents[1] / "src"
SIZE = 150_000  # bytes of each episode's file
EPISODES = 4  # episode 3 has the same bytes as episode 2: three payloads


def invoke(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


def feed_xml(urls: list[str]) -> bytes:
    items = "".join(
        f"<item><guid>ep-{i}</guid><title>Episode {i}</title>"
        f"<pubDate>{i + 1:02d} Jan 2024 10:00:00 GMT</pubDate>"
        f'<enclosure url="{url}" length="{SIZE}" type="audio/mpeg"/></item>'
        for i, url in enumerate(urls)
    )
    return (f'<?xml version="1.0"?><rss version="2.0"><channel><title>The Show</title>'
            f"<link>https://show.example/</link>{items}</channel></rss>").encode()  # fmt: skip


@pytest.fixture
def site() -> LoopbackSite:
    with LoopbackSite() as server:
        yield server


@pytest.fixture
def archive(tmp_path: Path, site: LoopbackSite) -> tuple[Path, dict[str, bytes]]:
    """An archive made by a real run (feed, episodes, media downloaded from ``site``): its
    path, and the bytes stored under each SHA-256."""
    bodies = [random.Random(i).randbytes(SIZE) for i in range(EPISODES)]
    bodies[3] = bodies[2]
    urls = []
    for i, body in enumerate(bodies):
        site.handle(f"/m/ep{i}.mp3", MediaFile(body))
        urls.append(site.url(f"/m/ep{i}.mp3"))
    site.serve("/feed.xml", feed_xml(urls))
    schedules = tmp_path / "schedules"
    schedules.mkdir()
    (schedules / "show.toml").write_text(
        f'[[feed]]\nurl = "{site.url("/feed.xml")}"\nname = "Show"\npages = false\n'
        "media = true\nallow_private_hosts = true\n"
    )
    db = tmp_path / "archive" / "archive.db"
    db.parent.mkdir()
    code, _, err = invoke("run", "--all", "--schedules", str(schedules), "--db", str(db))
    assert code == 0, err
    return db, {hashlib.sha256(b).hexdigest(): b for b in bodies}


def rows(db: Path, sql: str) -> list[tuple[object, ...]]:
    with sqlite3.connect(f"{db.resolve().as_uri()}?mode=ro", uri=True) as conn:
        return conn.execute(sql).fetchall()


def bag_media(bag: Path) -> dict[str, Path]:
    """The bag's media files by name stem."""
    return {p.name.split(".")[0]: p for p in (bag / "data" / "media").rglob("*") if p.is_file()}


def leftovers(parent: Path) -> list[str]:
    return sorted(p.name for p in parent.iterdir() if ".partial-" in p.name)


def test_a_bag_of_a_real_archive_validates_and_its_copy_passes_check(
    tmp_path: Path, archive: tuple[Path, dict[str, bytes]]
) -> None:
    db, stored = archive
    bag = tmp_path / "bag"
    code, out, err = invoke(
        "export-bag", str(bag), "--db", str(db), "--info", "Source-Organization=Example Library"
    )
    assert (code, err) == (0, "")
    assert out == (
        f"bagged archive.db (1 podcast, 4 episodes), 3 media files (450.0 kB) in {bag}\n"
    )
    assert leftovers(tmp_path) == []

    made = bagit.Bag(str(bag))
    made.validate()  # every file hashed against the manifests
    assert made.version_info == (1, 0)
    assert made.algorithms == ["sha256"]
    assert (bag / "bagit.txt").read_text() == (
        "BagIt-Version: 1.0\nTag-File-Character-Encoding: UTF-8\n"
    )
    info = made.info
    assert info["Source-Organization"] == "Example Library"
    assert info["Podarchive-Podcasts"] == "1"
    assert info["Podarchive-Episodes"] == "4"
    assert info["Podarchive-Media-Payloads"] == "3"
    assert info["Podarchive-Schema-Version"] == str(Archive(db).schema_version)
    assert info["Bag-Software-Agent"].startswith("podarchive ")
    files = [p for p in (bag / "data").rglob("*") if p.is_file()]
    assert info["Payload-Oxum"] == f"{sum(p.stat().st_size for p in files)}.{len(files)}"
    assert sorted(p.name for p in (bag / "data").iterdir()) == [
        "README.txt", "archive.db", "feeds.opml", "media",
    ]  # fmt: skip

    # the media: every payload once, in the content-addressed layout, its bytes intact
    media = bag_media(bag)
    assert set(media) == set(stored)
    for sha, path in media.items():
        assert path.relative_to(bag / "data" / "media").as_posix() == (
            f"{sha[:2]}/{sha[2:4]}/{sha}.mp3"
        )
        assert path.read_bytes() == stored[sha]
        assert made.entries[path.relative_to(bag).as_posix()]["sha256"] == sha

    # the archive copy: one file, the same rows, and 'check' finds it sound (changing nothing)
    copy = bag / "data" / "archive.db"
    assert rows(copy, "PRAGMA journal_mode") == [("delete",)]
    for table in ("feeds", "episodes", "media_payloads", "episode_media", "fetches"):
        assert rows(copy, f"SELECT * FROM {table}") == rows(db, f"SELECT * FROM {table}")
    code, out, _ = invoke("check", "--db", str(copy))
    assert code == 0
    assert "sound" in out
    assert not list((bag / "data").glob("archive.db-*"))
    bagit.Bag(str(bag)).validate()

    # the OPML and the README
    feeds = parse_opml((bag / "data" / "feeds.opml").read_bytes())
    assert [(f.url, f.title) for f in feeds] == [(rows(db, "SELECT url FROM feeds")[0][0], "Show")]
    readme = (bag / "data" / "README.txt").read_text()
    for words in ("data/archive.db", "data/media/ab/cd/<sha256><ext>", "datasette", "check"):
        assert words in readme
    assert "Left out" not in readme


def test_a_subprocess_bag_with_sha512_validates_with_bagit_py(
    tmp_path: Path, archive: tuple[Path, dict[str, bytes]]
) -> None:
    db, _ = archive
    bag = tmp_path / "bag"
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    made = subprocess.run(
        [sys.executable, "-m", "podarchive", "export-bag", str(bag), "--db", str(db),
         "--sha512", "--info", "Contact-Email=archive@example.org"],
        capture_output=True, text=True, env=env, timeout=120, check=False,
    )  # fmt: skip
    assert made.returncode == 0, made.stderr
    assert made.stderr == ""
    assert sorted(p.name for p in bag.glob("*manifest-*.txt")) == [
        "manifest-sha256.txt", "manifest-sha512.txt",
        "tagmanifest-sha256.txt", "tagmanifest-sha512.txt",
    ]  # fmt: skip
    script = Path(sys.executable).with_name("bagit.py")
    command = [str(script)] if script.is_file() else [sys.executable, "-m", "bagit"]
    checked = subprocess.run(
        [*command, "--validate", str(bag)], capture_output=True, text=True, timeout=120
    )
    assert checked.returncode == 0, checked.stderr
    assert "is valid" in checked.stderr
    archive_check = subprocess.run(
        [sys.executable, "-m", "podarchive", "check", "--db", str(bag / "data" / "archive.db")],
        capture_output=True, text=True, env=env, timeout=120, check=False,
    )  # fmt: skip
    assert archive_check.returncode == 0, archive_check.stdout + archive_check.stderr
    assert bagit.Bag(str(bag)).info["Contact-Email"] == "archive@example.org"


def test_a_damaged_or_missing_payload_is_one_warning_each_and_a_note_in_the_readme(
    tmp_path: Path, archive: tuple[Path, dict[str, bytes]]
) -> None:
    db, stored = archive
    folder = MediaFolder(db.parent / "media")
    damaged, missing, intact = sorted(stored)
    folder.path_of(damaged, ".mp3").write_bytes(b"not the bytes it was")
    folder.path_of(missing, ".mp3").unlink()
    bag = tmp_path / "bag"
    code, out, err = invoke("export-bag", str(bag), "--db", str(db))
    assert code == 0, err
    lines = err.splitlines()
    assert len(lines) == 2, err
    assert lines[0].startswith(f"podarchive: warning: media file {damaged}.mp3 (Show: Episode")
    assert "its bytes changed (they now hash to" in lines[0]
    assert lines[1].startswith(f"podarchive: warning: media file {missing}.mp3 (Show: Episode")
    assert lines[1].endswith("missing from the media folder; left out of the bag")
    assert "1 media file (150.0 kB), 2 left out (see data/README.txt)" in out
    assert set(bag_media(bag)) == {intact}
    readme = (bag / "data" / "README.txt").read_text()
    assert f"{damaged}.mp3: its bytes changed" in readme
    assert f"{missing}.mp3: missing from the media folder" in readme
    assert "Show: Episode 2 (and 1 more)" in readme  # the payload two episodes share
    made = bagit.Bag(str(bag))
    made.validate()
    assert made.info["Podarchive-Media-Left-Out"] == "2"
    # nothing empty is left where a payload was left out
    assert all(any(d.iterdir()) for d in (bag / "data" / "media").rglob("*") if d.is_dir())


def test_no_media_bags_the_archive_alone(
    tmp_path: Path, archive: tuple[Path, dict[str, bytes]]
) -> None:
    db, _ = archive
    bag = tmp_path / "bag"
    code, out, err = invoke("export-bag", str(bag), "--db", str(db), "--no-media")
    assert (code, err) == (0, "")
    assert "no media files" in out
    assert not (bag / "data" / "media").exists()
    assert (
        "Exported with --no-media: none of the 3 media files"
        in (bag / "data" / "README.txt").read_text()
    )
    made = bagit.Bag(str(bag))
    made.validate()
    assert made.info["Podarchive-Media-Payloads"] == "0"


def test_the_copy_is_one_moment_while_another_writer_holds_the_archive(
    tmp_path: Path, archive: tuple[Path, dict[str, bytes]]
) -> None:
    """A run holding the lock and a write transaction open: the export neither waits nor
    copies what is not committed; what is committed (still in the WAL) is in the copy."""
    db, _ = archive
    with archive_lock(db).acquire(), Archive(db) as writer:
        writer.db.execute("UPDATE feeds SET name = 'Renamed'")  # committed, in the WAL
        writer.db.conn.commit()
        assert Path(f"{db}-wal").stat().st_size > 0
        writer.db.execute("BEGIN IMMEDIATE")
        writer.db.execute("UPDATE episodes SET title = 'uncommitted'")
        code, _, err = invoke("export-bag", str(tmp_path / "bag"), "--db", str(db))
        writer.db.execute("ROLLBACK")
    assert code == 0, err
    copy = tmp_path / "bag" / "data" / "archive.db"
    assert rows(copy, "SELECT name FROM feeds") == [("Renamed",)]
    assert rows(copy, "SELECT count(*) FROM episodes WHERE title = 'uncommitted'") == [(0,)]
    bagit.Bag(str(tmp_path / "bag")).validate()


def test_a_folder_that_is_not_empty_is_refused_and_an_empty_one_is_used(
    tmp_path: Path, archive: tuple[Path, dict[str, bytes]]
) -> None:
    db, _ = archive
    full = tmp_path / "full"
    full.mkdir()
    (full / "keep.txt").write_text("mine")
    code, _, err = invoke("export-bag", str(full), "--db", str(db))
    assert code == 2
    assert err == f"podarchive: error: {full} exists and is not empty; give a new folder\n"
    assert [p.name for p in full.iterdir()] == ["keep.txt"]
    a_file = tmp_path / "file"
    a_file.write_text("x")
    assert invoke("export-bag", str(a_file), "--db", str(db))[0] == 2
    assert invoke("export-bag", str(tmp_path / "no" / "bag"), "--db", str(db))[0] == 2
    empty = tmp_path / "empty"
    empty.mkdir()
    assert invoke("export-bag", str(empty), "--db", str(db))[0] == 0
    bagit.Bag(str(empty)).validate()
    assert leftovers(tmp_path) == []


def test_a_failing_export_leaves_nothing(
    tmp_path: Path, archive: tuple[Path, dict[str, bytes]]
) -> None:
    db, stored = archive
    path = MediaFolder(db.parent / "media").path_of(sorted(stored)[-1], ".mp3")
    path.unlink()
    path.mkdir()  # a payload that cannot be read: the export stops
    bag = tmp_path / "bag"
    code, _, err = invoke("export-bag", str(bag), "--db", str(db))
    assert code == 1
    assert err.startswith("podarchive: "), err
    assert err.count("\n") == 1, err
    assert not bag.exists()
    assert leftovers(tmp_path) == []
    # no archive at all, or not an archive: the same
    assert invoke("export-bag", str(bag), "--db", str(tmp_path / "none.db"))[0] == 1
    (tmp_path / "other.db").write_bytes(b"not sqlite at all" * 100)
    code, _, err = invoke("export-bag", str(bag), "--db", str(tmp_path / "other.db"))
    assert code == 1
    assert err.count("\n") == 1, err
    assert not bag.exists()
    assert leftovers(tmp_path) == []


@pytest.mark.parametrize(("signum", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_a_signal_leaves_no_half_bag(
    tmp_path: Path, archive: tuple[Path, dict[str, bytes]], signum: int, code: int
) -> None:
    """A payload that is a FIFO holds the export still (its open waits for a writer) while
    the archive copy is in the unfinished bag; the signal then stops it."""
    db, stored = archive
    path = MediaFolder(db.parent / "media").path_of(sorted(stored)[0], ".mp3")
    path.unlink()
    os.mkfifo(path)
    bag = tmp_path / "bag"
    proc = subprocess.Popen(
        [sys.executable, "-m", "podarchive", "export-bag", str(bag), "--db", str(db)],
        env={**os.environ, "PYTHONPATH": str(SRC)}, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 60
        while not any(tmp_path.glob(".bag.partial-*/archive.db")):
            assert proc.poll() is None
            assert time.monotonic() < deadline
            time.sleep(0.02)
        proc.send_signal(signum)
        _, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
    assert proc.returncode == code, err
    assert err.endswith("; no bag was written\n"), err
    assert err.count("\n") == 1, err
    assert not bag.exists()
    assert leftovers(tmp_path) == []


def test_validation_names_what_is_wrong(
    tmp_path: Path, archive: tuple[Path, dict[str, bytes]]
) -> None:
    db, stored = archive
    bag = tmp_path / "bag"
    assert invoke("export-bag", str(bag), "--db", str(db))[0] == 0
    validate_bag(bag)
    sha = sorted(stored)[0]
    path = bag_media(bag)[sha]
    path.write_bytes(bytes(SIZE))  # the same size, other bytes
    with pytest.raises(BagError) as caught:
        validate_bag(bag)
    message = str(caught.value)
    assert message.startswith(f"{bag} is not a valid bag: ")
    assert "\n" not in message
    assert f"{path.relative_to(bag)} sha256 validation failed" in message
    (bag / "data" / "extra.txt").write_text("x")
    with pytest.raises(BagError, match="Payload-Oxum validation failed"):
        validate_bag(bag)
    with pytest.raises(BagError, match="not a valid bag"):
        validate_bag(tmp_path)


@pytest.mark.parametrize(
    "item", ["Contact-Name", "=x", "Bad Name=x", "Payload-Oxum=1.1", "Contact-Name="]
)
def test_info_that_is_no_field_is_a_usage_error(tmp_path: Path, item: str) -> None:
    db = tmp_path / "archive.db"  # never reached: the options are read first
    code, _, err = invoke("export-bag", str(tmp_path / "bag"), "--db", str(db), "--info", item)
    assert code == 2
    assert err.startswith("podarchive: error: --info: "), err
    assert not (tmp_path / "bag").exists()


def test_info_fields_given_twice_are_two_lines() -> None:
    assert parse_info(["Contact-Name=Ada", "Contact-Name=Grace", "X-Note=a=b"]) == {
        "Contact-Name": ["Ada", "Grace"],
        "X-Note": ["a=b"],
    }


@pytest.mark.slow
def test_the_benchmark_still_runs() -> None:
    script = Path(__file__).resolve().parents[1] / "benchmarks" / "export_bag.py"
    proc = subprocess.run(
        [sys.executable, str(script), "--smoke"],
        capture_output=True, text=True, timeout=300, check=False,
        env={**os.environ, "PYTHONPATH": str(SRC)},
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "cp -r + sha256sum" in proc.stdout


def test_a_bag_never_holds_a_websub_secret(
    tmp_path: Path, archive: tuple[Path, dict[str, bytes]]
) -> None:
    """A daemon's subscriptions (the secrets hubs sign with) stay with it: the bag's copy has
    none, the archive keeps its own."""
    from podarchive.rules.push import Subscription

    db, _ = archive
    with Archive(db) as live:
        live.save_push_subscription(
            Subscription("https://f/", "https://h/", "https://f/", "s3cr3t" * 10, "tok")
        )
    bag = tmp_path / "bag"
    assert invoke("export-bag", str(bag), "--db", str(db), "--no-media")[0] == 0
    copy = bag / "data" / "archive.db"
    with sqlite3.connect(copy) as conn:
        assert conn.execute("SELECT count(*) FROM push_subscriptions").fetchone()[0] == 0
    assert b"s3cr3t" not in copy.read_bytes()
    with Archive(db) as live:
        assert len(live.push_subscriptions()) == 1
    bagit.Bag(str(bag)).validate()
