"""The docs say what the code does: every setting and command is documented."""

from __future__ import annotations

from pathlib import Path

import pytest

from podarchive.cli import cli
from podarchive.core.settings import range_text, setting_fields

REPO = Path(__file__).resolve().parents[1]
README = (REPO / "README.md").read_text()


@pytest.mark.parametrize("name", [f.name for f in setting_fields()])
def test_every_setting_is_documented(name: str) -> None:
    assert f"| `{name}` | `PODARCHIVE_{name.upper()}` |" in README


@pytest.mark.parametrize("name", [f.name for f in setting_fields()])
def test_every_settings_range_is_in_its_row(name: str) -> None:
    (f,) = [f for f in setting_fields() if f.name == name]
    (row,) = [line for line in README.splitlines() if line.startswith(f"| `{name}` | ")]
    assert row.split(" | ")[3] == (range_text(f) or "true or false")


@pytest.mark.parametrize("command", sorted(cli.commands))
def test_every_command_is_in_the_readme(command: str) -> None:
    assert f"podarchive {command}" in README


def test_readme_starts_with_what_it_does_then_the_two_setup_commands() -> None:
    sections = README.split("\n## ")
    assert sections[0].startswith("# podarchive\n\npodarchive keeps an archive of podcasts")
    assert sections[1].startswith("Set up")
    commands = [line for line in sections[1].splitlines() if line.startswith("python3 -m venv")]
    assert len(commands) == 2
    assert commands[0].endswith("podarchive run")
    assert commands[1].endswith("python -m pytest")


def test_ci_installs_the_way_the_readme_says() -> None:
    ci = (REPO / ".ci" / "run").read_text()
    assert 'pip install -q -e ".[test]"' in ci
    assert "python -m pytest" in ci


def test_changelog_has_an_unreleased_section() -> None:
    assert "\n## Unreleased\n" in (REPO / "CHANGELOG.md").read_text()
