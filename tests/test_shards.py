"""The shard layout (#16): a feed's shard is stable everywhere, shards are evenly filled,
and the shard files are found (or refused) by name."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from podarchive.core.errors import ConfigError
from podarchive.rules.shards import (
    MAX_SHARDS,
    check_shard,
    check_shards,
    find_shards,
    parse_shard_name,
    shard_layouts,
    shard_name,
    shard_of,
    shard_path,
)

# Fixed forever: a worker of any release, on any machine, must put these feeds in these
# shards (a change here re-homes every feed of every cluster: only ever through reshard).
EXPECTED = {
    "https://example.com/feed.xml": [0, 1, 2, 3, 6, 3351],
    "http://127.0.0.1:8000/p0/feed.xml": [0, 1, 1, 3, 2, 987],
    "https://feeds.simplecast.com/abc": [0, 0, 1, 0, 2, 2336],
    "": [0, 0, 1, 0, 1, 3092],
}
COUNTS = (1, 2, 3, 4, 7, 4096)
urls = st.text(min_size=0, max_size=200)
counts = st.integers(min_value=1, max_value=MAX_SHARDS)


def test_known_feeds_keep_their_shards() -> None:
    for url, shards in EXPECTED.items():
        assert [shard_of(url, n) for n in COUNTS] == shards, url


@given(urls, counts)
def test_the_shard_is_the_sha256_of_the_url_modulo_n(url: str, n: int) -> None:
    digest = hashlib.sha256(url.encode("utf-8")).digest()
    assert shard_of(url, n) == int.from_bytes(digest[:8], "big") % n
    assert 0 <= shard_of(url, n) < n


def test_the_same_in_another_process_with_another_hash_seed() -> None:
    """Python's own hash() is salted per process; the shard must not be."""
    sample = [f"https://host{i}.example/feed/{i}.xml" for i in range(200)]
    code = (
        "import json, sys\n"
        "from podarchive.rules.shards import shard_of\n"
        "urls = json.loads(sys.stdin.read())\n"
        "print(json.dumps([[shard_of(u, n) for n in (2, 3, 16)] for u in urls]))\n"
    )
    for seed in ("1", "2"):
        done = subprocess.run(
            [sys.executable, "-c", code],
            input=json.dumps(sample),
            capture_output=True,
            text=True,
            env={**os.environ, "PYTHONHASHSEED": seed},
            timeout=120,
            check=True,
        )
        assert json.loads(done.stdout) == [[shard_of(u, n) for n in (2, 3, 16)] for u in sample]


@pytest.mark.parametrize("n", [2, 3, 4, 16])
def test_feeds_spread_evenly(n: int) -> None:
    """10,000 feed URLs of one host (the worst case: they differ only in their path)."""
    feeds = 10_000
    filled = Counter(shard_of(f"https://feeds.example.com/show/{i}/rss", n) for i in range(feeds))
    assert set(filled) == set(range(n))
    expected = feeds / n
    # 5 standard deviations of a binomial count: fails by chance once in millions of runs
    slack = 5 * (feeds * (1 / n) * (1 - 1 / n)) ** 0.5
    assert all(abs(count - expected) < slack for count in filled.values()), filled


def test_more_shards_keep_each_feed_somewhere_definite() -> None:
    """Doubling the shards splits each shard in two: shard k of 2n holds feeds of k mod n."""
    for i in range(2000):
        url = f"https://example.org/{i}.xml"
        assert shard_of(url, 8) % 4 == shard_of(url, 4)


@pytest.mark.parametrize("bad", [0, -1, MAX_SHARDS + 1])
def test_unusable_numbers_of_shards(bad: int) -> None:
    with pytest.raises(ConfigError, match="number of shards"):
        shard_of("https://example.com/feed.xml", bad)
    with pytest.raises(ConfigError):
        check_shards(bad)


def test_a_shard_outside_the_layout() -> None:
    assert check_shard(3, 4) == 3
    with pytest.raises(ConfigError, match="shard 4 does not exist: there are 4"):
        check_shard(4, 4)
    with pytest.raises(ConfigError):
        check_shard(-1, 4)


@given(counts.flatmap(lambda n: st.tuples(st.integers(0, n - 1), st.just(n))))
def test_names_round_trip(pair: tuple[int, int]) -> None:
    shard, shards = pair
    assert parse_shard_name(shard_name(shard, shards)) == pair
    assert shard_path(Path("/x"), shard, shards) == Path("/x") / f"shard-{shard}-of-{shards}.db"


@pytest.mark.parametrize(
    "name",
    [
        "shard-4-of-4.db",
        "shard-0-of-0.db",
        f"shard-0-of-{MAX_SHARDS + 1}.db",
        "shard-0-of-2.db.partial",
        "shard-0-of-2.db-wal",
        "shard-0-of-2.db.lock",
        "shard--1-of-2.db",
        "shard-a-of-2.db",
        "archive.db",
    ],
)
def test_other_names_are_not_shards(name: str) -> None:
    assert parse_shard_name(name) is None


def _touch(directory: Path, *names: str) -> None:
    for name in names:
        (directory / name).write_bytes(b"")


def test_layouts_and_find_shards(tmp_path: Path) -> None:
    assert shard_layouts(tmp_path / "missing") == {}
    with pytest.raises(ConfigError, match="no shard archives"):
        find_shards(tmp_path)
    _touch(tmp_path, "shard-1-of-3.db", "shard-0-of-3.db", "shard-0-of-3.db.lock", "x.db")
    (tmp_path / "shard-2-of-3.db").mkdir()  # not a file: not a shard
    assert find_shards(tmp_path) == [tmp_path / "shard-0-of-3.db", tmp_path / "shard-1-of-3.db"]
    assert find_shards(tmp_path, 3) == find_shards(tmp_path)
    with pytest.raises(ConfigError, match="no archive of a 2-shard layout"):
        find_shards(tmp_path, 2)
    _touch(tmp_path, "shard-1-of-2.db")
    with pytest.raises(ConfigError, match="layouts of 2 and 3 shards: give --shards N"):
        find_shards(tmp_path)
    assert find_shards(tmp_path, 2) == [tmp_path / "shard-1-of-2.db"]  # incomplete is fine
    assert shard_layouts(tmp_path) == {
        2: [tmp_path / "shard-1-of-2.db"],
        3: [tmp_path / "shard-0-of-3.db", tmp_path / "shard-1-of-3.db"],
    }
    with pytest.raises(ConfigError, match="number of shards"):
        find_shards(tmp_path, 0)
