"""Tests for the media settings (#26): PODARCHIVE_MEDIA_DIR, _BUDGET, _CONCURRENCY."""

from __future__ import annotations

from pathlib import Path

import pytest

from podarchive.core.errors import ConfigError
from podarchive.core.settings import GiB, Settings, media_dir_for, settings_from_env


def test_defaults() -> None:
    settings = settings_from_env({})
    assert (settings.media_dir, settings.media_budget, settings.media_concurrency) == (
        "",
        5 * GiB,
        2,
    )


def test_media_dir_is_beside_the_archive_unless_set(tmp_path: Path) -> None:
    db = tmp_path / "shard" / "archive.db"
    assert media_dir_for(db, Settings()) == tmp_path / "shard" / "media"
    assert media_dir_for(str(db), Settings()) == tmp_path / "shard" / "media"
    assert media_dir_for("archive.db", Settings()) == Path("media")
    chosen = settings_from_env({"PODARCHIVE_MEDIA_DIR": str(tmp_path / "m")})
    assert media_dir_for(db, chosen) == tmp_path / "m"
    home = settings_from_env({"PODARCHIVE_MEDIA_DIR": "~/m"})
    assert media_dir_for(db, home) == Path.home() / "m"


def test_from_the_environment() -> None:
    settings = settings_from_env(
        {"PODARCHIVE_MEDIA_BUDGET": "1000", "PODARCHIVE_MEDIA_CONCURRENCY": "16"}
    )
    assert (settings.media_budget, settings.media_concurrency) == (1000, 16)
    assert settings_from_env({"PODARCHIVE_MEDIA_BUDGET": "0"}).media_budget == 0


@pytest.mark.parametrize(
    ("name", "raw", "message"),
    [
        ("MEDIA_BUDGET", "5GiB", "PODARCHIVE_MEDIA_BUDGET: not a valid int: '5GiB'"),
        ("MEDIA_BUDGET", "-1", "PODARCHIVE_MEDIA_BUDGET: '-1' is out of range (0 to "),
        ("MEDIA_CONCURRENCY", "0", "PODARCHIVE_MEDIA_CONCURRENCY: '0' is out of range (1 to 16)"),
        ("MEDIA_CONCURRENCY", "17", "out of range (1 to 16)"),
        ("MEDIA_DIR", "a\x00b", "PODARCHIVE_MEDIA_DIR: 'a\\x00b' is not a path (it holds a NUL)"),
    ],
)
def test_bad_values_are_one_line(name: str, raw: str, message: str) -> None:
    with pytest.raises(ConfigError) as info:
        settings_from_env({f"PODARCHIVE_{name}": raw})
    assert message in str(info.value)
    assert "\n" not in str(info.value)
