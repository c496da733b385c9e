"""The shape of the package, read from its source: the import graph has no cycle and no import
goes up a floor, no module imports another's private name, and modules and functions stay
readable in one sitting (issue 15)."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from functools import cache
from pathlib import Path

import pytest

SRC = Path(__file__).parent.parent / "src"
PACKAGE = "compute_budget"
MAX_MODULE_LINES = 400
MAX_FUNCTION_LINES = 60
MAX_SKILL_TOP_LEVEL = 8

FLOORS: tuple[tuple[str, ...], ...] = (
    ("skill.errors", "skill.quantities", "skill.vocabulary"),
    ("skill.model",),
    ("skill.hardware",),
    ("skill.memory",),
    ("skill.scaling",),
    ("skill.run_spec", "skill.estimate", "skill.estimate_result", "skill.estimate_checks"),
    ("skill.advice",),
    ("skill.planning",),
    ("skill", ""),  # the facades: skill/__init__ and compute_budget/__init__
    ("probe",),  # torch's side of the probe (issue 20): imports skill, run by an operation
    ("prompts",),
    ("operations",),
    ("tools", "cli", "probe"),
)
"""From the ground up. A module may import its own floor's modules and those below, never a
higher floor's; within a floor the graph must still be acyclic."""


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(SRC).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


@cache
def _modules() -> dict[str, Path]:
    return {_module_name(p): p for p in sorted((SRC / PACKAGE).rglob("*.py"))}


def _floor(module: str) -> int:
    """The floor of a module: the longest matching prefix among FLOORS."""
    name = module.removeprefix(PACKAGE).removeprefix(".")
    best, floor = -1, -1
    for level, prefixes in enumerate(FLOORS):
        for prefix in prefixes:
            if (name == prefix or name.startswith(prefix + ".") or prefix == "") and \
                    len(prefix) > best:
                best, floor = len(prefix), level
    assert floor >= 0, module
    return floor


def _imports(module: str, path: Path) -> Iterator[tuple[str, str, int]]:
    """(target module, imported name, line) for every import of our own modules in ``path``,
    wherever it stands (functions and TYPE_CHECKING blocks too)."""
    modules = _modules()
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                source = ".".join(base + ([node.module] if node.module else []))
            else:
                source = node.module or ""
            for alias in node.names:
                candidate = f"{source}.{alias.name}"
                if candidate in modules:
                    yield candidate, "", node.lineno
                elif source in modules:
                    yield source, alias.name, node.lineno
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name in modules:
                    yield alias.name, "", node.lineno


@cache
def _graph() -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {m: set() for m in _modules()}
    for module, path in _modules().items():
        for target, _, _ in _imports(module, path):
            if target != module:
                graph[module].add(target)
    return graph


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_the_import_graph_has_no_cycle() -> None:
    assert _cycles(_graph()) == []


def test_no_module_imports_from_a_higher_floor() -> None:
    upward = [f"{m} → {t}" for m, targets in _graph().items() for t in sorted(targets)
              if _floor(t) > _floor(m) and not t.startswith(m + ".")]
    assert upward == []


def test_no_module_imports_another_modules_private_name() -> None:
    private = [f"{m}:{line} imports {name} from {t}"
               for m, path in _modules().items() for t, name, line in _imports(m, path)
               if name.startswith("_") and not name.startswith("__") and t != m]
    assert private == []


def test_skill_has_few_modules_at_its_top_level_and_a_readme() -> None:
    skill = SRC / PACKAGE / "skill"
    top = sorted(p.name for p in skill.glob("*.py"))
    assert len(top) <= MAX_SKILL_TOP_LEVEL, top
    readme = (skill / "README.md").read_text()
    for wing in ("model", "hardware", "memory", "scaling", "advice", "planning"):
        assert (skill / wing / "__init__.py").is_file()
        assert f"`{wing}/`" in readme


@pytest.mark.parametrize("path", sorted([*(SRC / PACKAGE).rglob("*.py"),
                                          *(SRC.parent / "benchmarks").rglob("*.py")]),
                         ids=lambda p: str(p.relative_to(SRC.parent)))
def test_modules_and_functions_are_readable_in_one_sitting(path: Path) -> None:
    text = path.read_text()
    lines = len(text.splitlines())
    assert lines <= MAX_MODULE_LINES, f"{lines} lines"
    long = [f"{node.name} ({node.end_lineno - node.lineno + 1} lines)"
            for node in ast.walk(ast.parse(text))
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
            and (node.end_lineno or node.lineno) - node.lineno + 1 > MAX_FUNCTION_LINES]
    assert long == []


def test_the_floors_name_every_part_of_the_package() -> None:
    """A new top-level module or wing must be given its floor in FLOORS."""
    named = {p for prefixes in FLOORS for p in prefixes}
    for module in _modules():
        parts = module.removeprefix(PACKAGE).removeprefix(".").split(".")
        head = ".".join(parts[:2]) if parts[0] == "skill" and len(parts) > 1 else parts[0]
        assert head in named, module
