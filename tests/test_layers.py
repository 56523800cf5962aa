"""The import rule, enforced: layers, no circle, a pure core that loads no adapter library.

Every module of ``src/podarchive`` (packages included) belongs to one layer of :data:`LAYERS`,
lowest first. A module may import from its own layer and the layers below, never from one
above; module-level imports form no circle. Importing a leaf or pure module loads none of the
adapter libraries (:data:`ADAPTER_LIBRARIES`): the worker processes that preload
:mod:`podarchive.read.jobs` stay small, and the rules stay testable without a network or a
database. A new module must be given a layer here.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import pytest

PACKAGE = "podarchive"
SOURCE = Path(__file__).resolve().parent.parent / "src" / PACKAGE

#: Lowest first. A name is a package of podarchive (it holds all its submodules), or
#: "podarchive" (the package's own ``__init__``) and "__main__". The folder tree is the layering:
#: one layer per package, but for the adapters, which are four packages side by side.
LAYERS: tuple[tuple[str, frozenset[str]], ...] = (
    ("core", frozenset({"podarchive", "core"})),
    ("rules", frozenset({"rules"})),
    ("read", frozenset({"read"})),
    ("adapters", frozenset({"net", "store", "runtime", "formats"})),
    ("update", frozenset({"update"})),
    ("tasks", frozenset({"tasks"})),
    ("daemon", frozenset({"daemon"})),
    ("web", frozenset({"web"})),
    ("cluster", frozenset({"cluster"})),
    ("cli", frozenset({"cli", "__main__"})),
)
#: The layers that hold pure code: they load no adapter library at module level.
PURE_LAYERS = ("core", "rules", "read")
#: What the leaf and pure layers must not load, even indirectly.
ADAPTER_LIBRARIES = ("sqlite_utils", "httpx", "apscheduler", "click", "rich")
#: The only modules that may import these libraries at all (lazily or not).
ONLY_IN = {
    "apscheduler": frozenset({"daemon"}),
    "click": frozenset({"cli"}),
    "dramatiq": frozenset({"cluster"}),  # cluster.broker, the package's one adapter module
    "redis": frozenset({"cluster"}),
}


@dataclass(frozen=True, slots=True)
class Import:
    source: str  # the importing module, e.g. "podarchive.store.feeds"
    target: str  # the imported module (podarchive.*) or top-level library name
    line: int
    where: str  # "module" (runs on import), "function" (runs when called), "typing" (never)

    def __str__(self) -> str:
        return f"{self.source} -> {self.target} (line {self.line}, {self.where}-level)"


def module_files(root: Path = SOURCE) -> dict[str, Path]:
    """Every module under ``root`` by dotted name (a package by its ``__init__``)."""
    modules = {}
    for path in sorted(root.rglob("*.py")):
        parts = path.relative_to(root.parent).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        modules[".".join(parts)] = path
    return modules


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _walk(node: ast.AST, where: str) -> Iterator[tuple[ast.Import | ast.ImportFrom, str]]:
    """Import statements under ``node``, each with where it runs."""
    for child in ast.iter_child_nodes(node):
        if isinstance(child, ast.Import | ast.ImportFrom):
            yield child, where
        elif isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
            yield from _walk(child, "function" if where == "module" else where)
        elif isinstance(child, ast.If) and _is_type_checking(child.test):
            for stmt in child.body:
                yield from _walk(ast.Module(body=[stmt], type_ignores=[]), "typing")
            for stmt in child.orelse:
                yield from _walk(ast.Module(body=[stmt], type_ignores=[]), where)
        else:
            yield from _walk(child, where)


def _resolve(module: str, is_package: bool, node: ast.ImportFrom) -> str:
    if not node.level:
        return node.module or ""
    base = module.split(".")
    base = base if is_package else base[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join([*base, *([node.module] if node.module else [])])


@cache
def import_graph(root: Path = SOURCE) -> tuple[Import, ...]:
    """Every import in the package: podarchive modules as dotted names, libraries by top name.

    ``from pkg import name`` counts as importing ``pkg.name`` when that is a module, else
    ``pkg``. (A submodule's implicit import of its parent package is not counted: it would
    make every package whose ``__init__`` re-exports its submodules a circle.)
    """
    files = module_files(root)
    edges = []
    for module, path in files.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        is_package = path.name == "__init__.py"
        for node, where in _walk(tree, "module"):
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            else:
                base = _resolve(module, is_package, node)
                subs = [f"{base}.{alias.name}" for alias in node.names]
                targets = [t for t in subs if t in files] or [base]
                if len(targets) < len(subs) and base not in targets:
                    targets.append(base)  # names from the package itself, too
            for target in targets:
                if target == PACKAGE or target.startswith(PACKAGE + "."):
                    while target not in files:  # import a.b.c: the deepest module there is
                        target = target.rpartition(".")[0]
                else:
                    target = target.partition(".")[0]
                if target != module:
                    edges.append(Import(module, target, node.lineno, where))
    return tuple(edges)


def top_name(module: str) -> str:
    """``podarchive.store.feeds`` → ``store``; ``podarchive`` → ``podarchive``."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else parts[0]


def layer_of(module: str) -> int | None:
    name = top_name(module)
    for rank, (_, members) in enumerate(LAYERS):
        if name in members:
            return rank
    return None


def _internal(edge: Import) -> bool:
    return edge.target == PACKAGE or edge.target.startswith(PACKAGE + ".")


def upward_imports(edges: Iterable[Import]) -> list[str]:
    """Each import from a lower layer to a higher one, described."""
    upward = []
    for edge in edges:
        if not _internal(edge):
            continue
        source, target = layer_of(edge.source), layer_of(edge.target)
        assert source is not None, f"no layer: {edge.source}"
        assert target is not None, f"no layer: {edge.target}"
        if target > source:
            upward.append(f"{edge} [{LAYERS[source][0]} imports {LAYERS[target][0]}]")
    return upward


def circles(edges: Iterable[Import]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan)."""
    graph: dict[str, set[str]] = {}
    for edge in edges:
        graph.setdefault(edge.source, set()).add(edge.target)
        graph.setdefault(edge.target, set())
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(graph[node]):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


# the tests ----------------------------------------------------------------------------------


def test_the_graph_sees_the_package() -> None:
    """The walk finds modules, packages and both kinds of import (a broken walk passes all)."""
    modules = module_files()
    assert {"podarchive", "podarchive.core.types", "podarchive.cli"} <= set(modules)
    edges = {(e.source, e.target, e.where) for e in import_graph()}
    assert ("podarchive.read.rows", "podarchive.core.types", "module") in edges
    assert (
        "podarchive.cli.run",
        "podarchive.runtime.lock",
        "function",
    ) in edges  # the CLI's lazy imports
    assert ("podarchive.rules.cron", "cronsim", "function") in edges
    assert ("podarchive.daemon.scheduler", "apscheduler", "module") in edges


def test_the_checks_catch_an_upward_import_and_a_circle(tmp_path: Path) -> None:
    """The checks themselves, on a made-up package: they can fail."""
    root = tmp_path / PACKAGE
    (root / "store").mkdir(parents=True)
    files = {
        "__init__.py": "",
        "core/__init__.py": "",
        "core/clock.py": "from podarchive.core.types import Row\n",
        "core/types.py": "import podarchive.core.clock\n\ndef f():\n    from podarchive import cli\n",
        "cli/__init__.py": "from podarchive.core import types\n",
        "store/__init__.py": "from podarchive.store.feeds import Feeds\n",
        "store/feeds.py": "from ..update.one_feed import run\n",
        "update/__init__.py": "",
        "update/one_feed.py": "from podarchive.store import Archive\n",
    }
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")
    edges = import_graph(root)
    assert sorted(circles(e for e in edges if e.where == "module")) == [
        ["podarchive.core.clock", "podarchive.core.types"],
        ["podarchive.store", "podarchive.store.feeds", "podarchive.update.one_feed"],
    ]
    assert sorted(upward_imports(edges)) == [
        "podarchive.core.types -> podarchive.cli (line 4, function-level) [core imports cli]",
        "podarchive.store.feeds -> podarchive.update.one_feed (line 1, module-level)"
        " [adapters imports update]",
    ]


def test_every_module_has_a_layer() -> None:
    named = set().union(*(members for _, members in LAYERS))
    unplaced = sorted(m for m in module_files() if layer_of(m) is None)
    assert not unplaced, f"give these modules a layer in LAYERS: {unplaced}"
    missing = sorted(named - {top_name(m) for m in module_files()})
    assert not missing, f"LAYERS names modules that do not exist: {missing}"


def test_no_import_from_a_lower_layer_to_a_higher_one() -> None:
    upward = upward_imports(import_graph())
    module_level = [u for u in upward if "module-level" in u]
    later = [u for u in upward if "module-level" not in u]
    assert not upward, (
        "upward imports at module level:\n  "
        + "\n  ".join(module_level or ["none"])
        + "\nupward imports in functions or for type checking only:\n  "
        + "\n  ".join(later or ["none"])
    )


def test_no_import_circle_among_module_level_imports() -> None:
    """Imports for type checking count too: a circle hidden behind ``TYPE_CHECKING`` is one."""
    edges = [e for e in import_graph() if e.where != "function" and _internal(e)]
    found = circles(edges)
    assert not found, f"import circles (module-level imports): {found}"


def test_adapter_libraries_only_where_allowed() -> None:
    """APScheduler only in scheduler and cron, click only in the CLI, at any level."""
    wrong = [
        str(edge)
        for edge in import_graph()
        if edge.target in ONLY_IN and top_name(edge.source) not in ONLY_IN[edge.target]
    ]
    assert not wrong, "\n".join(wrong)


def test_the_core_imports_no_adapter_library_at_module_level() -> None:
    """The static side of the next test: a lazy import inside a function is the only way."""
    core = {rank for rank, (name, _) in enumerate(LAYERS) if name in PURE_LAYERS}
    wrong = [
        str(edge)
        for edge in import_graph()
        if edge.where == "module"
        and edge.target in ADAPTER_LIBRARIES
        and layer_of(edge.source) in core
    ]
    assert not wrong, "\n".join(wrong)


CORE_MODULES = sorted(
    module
    for module in module_files()
    if any(top_name(module) in members for layer, members in LAYERS if layer in PURE_LAYERS)
)


@pytest.mark.parametrize("module", CORE_MODULES)
def test_importing_the_core_loads_no_adapter_library(module: str) -> None:
    """In a fresh interpreter: ``import podarchive.read.jobs`` (etc.) loads none of them."""
    code = (
        "import importlib, sys\n"
        f"importlib.import_module({module!r})\n"
        f"print(' '.join(sorted(m for m in {ADAPTER_LIBRARIES!r} if m in sys.modules)))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == [], f"importing {module} loads {done.stdout.strip()}"
