"""``podarchive audit`` (issue #26): fixity audits of the stored media, through the CLI."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from commands import invoke, podarchive, query
from media_archive import media_archive, payload_bytes, stored_path

from podarchive.tasks.audit import parse_size


def flip_one_byte(path: Path, at: int = 100) -> None:
    data = bytearray(path.read_bytes())
    data[at] ^= 0x01
    path.write_bytes(bytes(data))


def events(db: Path) -> list[tuple[object, ...]]:
    return query(db, "SELECT sha256, expected, found, outcome FROM fixity_events ORDER BY id")


def test_a_clean_audit_exits_0_and_records_ok_events(tmp_path: Path) -> None:
    db = tmp_path / "archive.db"
    stored = media_archive(db, {"a": payload_bytes(1), "b": payload_bytes(2)})
    code, out, err = invoke("audit", "--db", str(db))
    assert (code, err) == (0, "")
    assert out == "audited 2 files (8.2 kB): all intact\n"
    assert sorted(events(db)) == sorted((s, s, s, "ok") for s in stored.values())
    audits = query(db, "SELECT last_audit FROM media_payloads")
    assert audits == [("ok",), ("ok",)]


def test_a_flipped_byte_and_a_deleted_file_are_damage_naming_the_episodes(
    tmp_path: Path,
) -> None:
    db = tmp_path / "archive.db"
    shared = payload_bytes(3)
    stored = media_archive(db, {"a": payload_bytes(1), "b": shared, "c": shared, "d": b"d" * 9})
    flip_one_byte(stored_path(db, stored["a"]))
    stored_path(db, stored["b"]).unlink()
    code, out, err = invoke("audit", "--db", str(db), "--all")
    assert code == 1
    lines = out.splitlines()
    (flipped,) = [line for line in lines if line.startswith("damaged: ")]
    (missing,) = [line for line in lines if line.startswith("missing: ")]
    assert str(stored_path(db, stored["a"])) in flipped
    assert '"Episode a" (Show)' in flipped
    assert "SHA-256 now" in flipped
    assert str(stored_path(db, stored["b"])) in missing
    assert missing.endswith('"Episode b" (Show); "Episode c" (Show)')  # one payload, two episodes
    assert lines[-1] == "audited 3 files (8.2 kB): 2 damaged"
    found = {sha: (found, outcome) for sha, _, found, outcome in events(db)}
    assert found[stored["a"]][1] == "mismatch"
    assert found[stored["a"]][0] not in (None, stored["a"])
    assert found[stored["b"]] == (None, "missing")
    assert found[stored["d"]] == (stored["d"], "ok")


def test_the_budget_limits_the_bytes_and_the_next_audit_takes_the_oldest(tmp_path: Path) -> None:
    db = tmp_path / "archive.db"
    stored = media_archive(db, {k: payload_bytes(n, 1000) for n, k in enumerate("abcde")})
    code, out, _ = invoke("audit", "--db", str(db), "--budget", "2kB")
    assert (code, out) == (
        0,
        "audited 2 files (2.0 kB): all intact; 3 files left for the next audit\n",
    )
    first = {sha for sha, *_ in events(db)}
    code, out, _ = invoke("audit", "--db", str(db), "--budget", "2000")
    assert out.startswith("audited 2 files (2.0 kB)")
    second = {sha for sha, *_ in events(db)} - first
    assert len(second) == 2
    assert not second & first
    invoke("audit", "--db", str(db), "--budget", "1000")
    third = [sha for sha, *_ in events(db)][4:]
    assert len(third) == 1
    assert third[0] not in first | second
    assert {*first, *second, *third} == set(stored.values())
    # all audited now: the oldest audits come next (the first audit's files)
    invoke("audit", "--db", str(db), "--budget", "2000")
    assert set([sha for sha, *_ in events(db)][5:]) == first


def test_audit_is_refused_without_an_archive_or_with_both_limits(tmp_path: Path) -> None:
    db = tmp_path / "archive.db"
    code, _, err = invoke("audit", "--db", str(db))
    assert code == 1
    assert "no archive at" in err
    assert not db.exists()
    media_archive(db, {"a": payload_bytes(1)})
    code, _, err = invoke("audit", "--db", str(db), "--all", "--budget", "1GB")
    assert code == 2
    assert "give one of them" in err
    code, _, err = invoke("audit", "--db", str(db), "--budget", "lots")
    assert code == 2
    assert err.startswith("podarchive: error: --budget: 'lots' is not a size")


def test_an_archive_without_media_audits_nothing(tmp_path: Path) -> None:
    db = tmp_path / "archive.db"
    media_archive(db, {})
    assert invoke("audit", "--db", str(db)) == (0, "audited 0 files (0 bytes): all intact\n", "")


@pytest.mark.parametrize(
    ("text", "size"),
    [("1048576", 1048576), ("500MB", 500_000_000), ("2GiB", 2 * 1024**3), ("1.5 g", 1_500_000_000),
     ("10 KiB", 10240)],
)  # fmt: skip
def test_sizes(text: str, size: int) -> None:
    assert parse_size(text) == size


@pytest.mark.parametrize("text", ["", "-1", "1 parsec", "MB", "1e9"])
def test_not_sizes(text: str) -> None:
    with pytest.raises(ValueError, match="is not a size"):
        parse_size(text)


def test_a_real_process_exits_1_naming_the_episode_and_status_shows_the_audit(
    tmp_path: Path,
) -> None:
    db = tmp_path / "archive.db"
    stored = media_archive(db, {"a": payload_bytes(1), "b": payload_bytes(2)})
    flip_one_byte(stored_path(db, stored["b"]), at=0)
    done = podarchive("audit", "--db", str(db), cwd=tmp_path)
    assert done.returncode == 1, done.stderr
    assert done.stdout.splitlines()[0].endswith('"Episode b" (Show)')
    assert done.stderr == ""
    status = podarchive("status", "--json", "--db", str(db), cwd=tmp_path)
    doc = json.loads(status.stdout)
    assert doc["last_audit"]["checked"] == 2
    assert doc["last_audit"]["damaged"] == 1
    text = podarchive("status", "--db", str(db), cwd=tmp_path).stdout
    assert "last audit: " in text
    assert "2 files (8.2 kB), 1 damaged" in text
