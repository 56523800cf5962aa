"""What the generated parts of the docs say, computed from the code (run by cog).

The pages in ``docs/`` hold ``<!-- [[[cog ... ]]] -->`` blocks that call these functions;
``tests/test_docs.py`` runs ``cog --check`` on them, so a change to a command's ``--help``, a
setting or a module's docstring fails the tests until the pages are regenerated::

    PYTHONPATH=src cog -r -I docs docs/cli.md docs/settings.md docs/architecture.md
"""

from __future__ import annotations

import ast
import dataclasses
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import click
from click.testing import CliRunner

from podarchive.cli import cli
from podarchive.core.settings import range_text, setting_fields

REPO = Path(__file__).resolve().parents[1]
SRC = REPO / "src" / "podarchive"

#: The packages from the bottom layer up, as tests/test_layers.py orders them.
LAYERS = (
    "core",
    "rules",
    "read",
    "net",
    "store",
    "runtime",
    "formats",
    "update",
    "tasks",
    "daemon",
    "web",
    "cluster",
    "cli",
)

#: The width --help is wrapped to in docs/cli.md, whatever the terminal that runs cog.
HELP_WIDTH = 100

MiB = 1024 * 1024
GiB = 1024 * MiB


# the CLI reference ------------------------------------------------------------------------


def commands(group: click.Group = cli, path: tuple[str, ...] = ()) -> Iterator[tuple[str, ...]]:
    """Every command's words after ``podarchive``, the group itself first, then by name."""
    yield path
    for name in sorted(group.commands):
        command = group.commands[name]
        if isinstance(command, click.Group):
            yield from commands(command, (*path, name))
        else:
            yield (*path, name)


def help_text(path: tuple[str, ...]) -> str:
    """What ``podarchive <path> --help`` prints."""
    result = CliRunner().invoke(
        cli, [*path, "--help"], prog_name="podarchive", terminal_width=HELP_WIDTH
    )
    if result.exit_code != 0:
        raise RuntimeError(f"podarchive {' '.join(path)} --help: exit {result.exit_code}")
    return result.output


def cli_reference() -> str:
    """One section per command: its ``--help`` as a text block."""
    parts = []
    for path in commands():
        words = " ".join(("podarchive", *path))
        parts.append(f"## {words}\n\n```text\n$ {words} --help\n{help_text(path)}```\n")
    return "\n".join(parts)


# the settings ---------------------------------------------------------------------------


def _default(f: dataclasses.Field[Any]) -> str:
    value = f.default
    if f.name == "user_agent":
        return "`podarchive/<version> (+project URL)`"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value == int(value):
        return str(int(value))
    if isinstance(value, str) and not value:
        return "empty"
    if isinstance(value, int) and value >= GiB and value % GiB == 0:
        return f"{value} ({value // GiB} GiB)"
    if isinstance(value, int) and value >= MiB and value % MiB == 0:
        return f"{value} ({value // MiB} MiB)"
    return str(value)


def settings_table() -> str:
    """The table of every setting in podarchive.core.settings, in its declared order."""
    rows = [
        "| setting | variable | default | range | meaning |",
        "|---|---|---|---|---|",
    ]
    for f in setting_fields():
        range_ = range_text(f) or "true or false"
        variable = f"PODARCHIVE_{f.name.upper()}"
        help_ = f.metadata["help"]
        rows.append(f"| `{f.name}` | `{variable}` | {_default(f)} | {range_} | {help_} |")
    return "\n".join(rows) + "\n"


# the module map -------------------------------------------------------------------------


def summary(path: Path) -> str:
    """The first sentence of a module's docstring (its first paragraph, joined)."""
    doc = ast.get_docstring(ast.parse(path.read_text())) or ""
    paragraph = " ".join(doc.strip().split("\n\n")[0].split())
    for end in (". ", ".) "):
        if end in paragraph:
            paragraph = paragraph[: paragraph.index(end) + len(end) - 1]
    paragraph = re.sub(r":[a-z]+:`~?", "`", paragraph).replace("``", "`")
    return paragraph.rstrip(".").replace("|", "\\|")


def modules_of(package: str) -> list[Path]:
    """The package's modules, its ``__init__`` first, subpackages' after its own."""
    root = SRC / package
    own = sorted(root.glob("*.py"), key=lambda p: (p.name != "__init__.py", p.name))
    nested = sorted(
        (p for p in root.rglob("*.py") if p.parent != root),
        key=lambda p: (p.parent, p.name != "__init__.py", p.name),
    )
    return own + nested


def module_map() -> str:
    """One row per module of src/podarchive, package by package from the bottom layer up."""
    rows = ["| module | what it holds |", "|---|---|"]
    for path in (SRC / "__init__.py", SRC / "__main__.py"):
        rows.append(f"| `{path.relative_to(REPO)}` | {summary(path)} |")
    for package in LAYERS:
        for path in modules_of(package):
            rows.append(f"| `{path.relative_to(REPO)}` | {summary(path)} |")
    return "\n".join(rows) + "\n"


def unmapped_packages() -> list[str]:
    """Packages of src/podarchive that :data:`LAYERS` does not name (the map would miss them)."""
    packages = {p.parent.name for p in SRC.glob("*/__init__.py")}
    return sorted(packages - set(LAYERS))
