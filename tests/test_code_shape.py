"""The code's shape, measured (issue #25): small functions, small files, thin commands.

radon measures each function's cyclomatic complexity; no function may go over
:data:`MAX_COMPLEXITY`, no source file over :data:`MAX_FILE_LINES` lines, and no click command
function over :data:`MAX_COMMAND_LINES` lines (a command parses options, calls the library and
prints its report). Each check is also run on a made-up module, so it is known to fail.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from radon.complexity import cc_visit

SOURCE = Path(__file__).resolve().parent.parent / "src" / "podarchive"
MAX_COMPLEXITY = 15
MAX_FILE_LINES = 600
MAX_COMMAND_LINES = 40


def too_complex(text: str, name: str) -> list[str]:
    """Every function or method in ``text`` over :data:`MAX_COMPLEXITY`, described."""
    found = []
    for block in cc_visit(text):
        blocks = [block, *getattr(block, "methods", ())]
        found += [
            f"{name}:{b.lineno} {b.fullname} has complexity {b.complexity}"
            for b in blocks
            if b.complexity > MAX_COMPLEXITY
        ]
    return found


def _is_command(node: ast.FunctionDef) -> bool:
    for decorator in node.decorator_list:
        target = decorator.func if isinstance(decorator, ast.Call) else decorator
        if isinstance(target, ast.Attribute) and target.attr == "command":
            return True
    return False


def long_commands(text: str, name: str) -> list[str]:
    """Every click command function in ``text`` longer than :data:`MAX_COMMAND_LINES`."""
    found = []
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.FunctionDef) and _is_command(node):
            body = node.body[0].lineno if node.body else node.lineno
            length = (node.end_lineno or node.lineno) - body + 1
            if length > MAX_COMMAND_LINES:
                found.append(f"{name}:{node.lineno} {node.name} is {length} lines")
    return found


def sources() -> list[Path]:
    return sorted(SOURCE.rglob("*.py"))


def test_the_checks_can_fail() -> None:
    branches = "\n".join(f"    if x == {i}:\n        return {i}" for i in range(MAX_COMPLEXITY))
    assert too_complex(f"def f(x):\n{branches}\n    return -1\n", "m.py") == [
        "m.py:1 f has complexity 16"
    ]
    assert too_complex(f"def f(x):\n{branches[: branches.rindex('    if')]}\n", "m.py") == []
    body = "\n".join(f"    print({i})" for i in range(MAX_COMMAND_LINES + 1))
    command = f"@cli.command()\n@click.option('-x')\ndef c(x):\n{body}\n"
    assert long_commands(command, "c.py") == [f"c.py:3 c is {MAX_COMMAND_LINES + 1} lines"]
    assert long_commands(command.replace("@cli.command()\n", ""), "c.py") == []


def test_the_package_is_measured() -> None:
    assert len(sources()) > 100


@pytest.mark.parametrize("path", sources(), ids=lambda p: str(p.relative_to(SOURCE)))
def test_no_function_over_the_complexity_limit(path: Path) -> None:
    assert too_complex(path.read_text("utf-8"), path.name) == []


@pytest.mark.parametrize("path", sources(), ids=lambda p: str(p.relative_to(SOURCE)))
def test_no_file_over_the_line_limit(path: Path) -> None:
    lines = path.read_text("utf-8").count("\n")
    assert lines <= MAX_FILE_LINES, f"{path.name} has {lines} lines"


def test_no_command_over_the_line_limit() -> None:
    found = []
    for path in sorted((SOURCE / "cli").glob("*.py")):
        found += long_commands(path.read_text("utf-8"), path.name)
    assert found == []
