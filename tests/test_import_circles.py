"""junior_core's modules import one another without circles, through type hints included.

An import under ``if TYPE_CHECKING:`` is *type-only*; any other import of a junior_core module, at the top of
a module or inside a function, is a *runtime* one. A runtime circle is an order problem waiting to happen (a
module half-initialised when its partner reads it); a type-only circle costs nothing when the code runs, but
each one is two modules that cannot be understood apart, so there are none: a lower layer that needs only a
type names a ``Protocol`` of its own (``hookspecs.Host``).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import junior_core

MAX_TYPE_ONLY_CIRCLES = 0
RUNTIME = "runtime"
TYPE_ONLY = "type-only"


def _modules(root: Path, package: str) -> dict[str, Path]:
    """Every module of ``package`` (files under ``root``) by dotted name; a package by its own name."""
    found = {}
    for path in sorted(root.rglob("*.py")):
        parts = [package, *path.relative_to(root).with_suffix("").parts]
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imports(tree: ast.Module) -> Iterator[tuple[ast.Import | ast.ImportFrom, bool]]:
    """Each import statement of a module, anywhere in it, and whether it stands under ``if TYPE_CHECKING:``."""

    def walk(node: ast.AST, type_only: bool) -> Iterator[tuple[ast.Import | ast.ImportFrom, bool]]:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.Import | ast.ImportFrom):
                yield child, type_only
            elif isinstance(child, ast.If) and _is_type_checking(child.test):
                for inner in child.body:
                    yield from walk(ast.Module(body=[inner], type_ignores=[]), True)
                for inner in child.orelse:
                    yield from walk(ast.Module(body=[inner], type_ignores=[]), type_only)
            else:
                yield from walk(child, type_only)

    yield from walk(tree, False)


def _targets(node: ast.Import | ast.ImportFrom, importer: str, is_package: bool, modules: set[str]) -> set[str]:
    """The modules of ``modules`` that one import statement of ``importer`` loads."""
    if isinstance(node, ast.Import):
        names = [alias.name for alias in node.names]
    else:
        base = node.module or ""
        if node.level:
            here = importer.split(".") if is_package else importer.split(".")[:-1]
            anchor = here[: len(here) - (node.level - 1)]
            base = ".".join([*anchor, *([base] if base else [])])
        # ``from package import name``: the submodule ``name`` if there is one, else the package itself.
        names = [f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules else base for alias in node.names]
    out = set()
    for name in names:
        while name and name not in modules:  # ``import a.b.c`` of a name inside a module: that module
            name = name.rpartition(".")[0]
        if name and name != importer:
            out.add(name)
    return out


def import_graph(root: Path, package: str) -> dict[str, dict[str, str]]:
    """``{importer: {imported: "runtime" | "type-only"}}`` over the modules of ``package``; an edge is
    type-only when every import of that module by that importer stands under ``if TYPE_CHECKING:``."""
    modules = _modules(root, package)
    graph: dict[str, dict[str, str]] = {name: {} for name in modules}
    for name, path in modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        for node, type_only in _imports(tree):
            for target in _targets(node, name, path.name == "__init__.py", set(modules)):
                if graph[name].get(target) != RUNTIME:  # one runtime import makes the edge a runtime one
                    graph[name][target] = TYPE_ONLY if type_only else RUNTIME
    return graph


def circles(graph: dict[str, dict[str, str]], kinds: tuple[str, ...] = (RUNTIME, TYPE_ONLY)) -> list[list[str]]:
    """The strongly connected components of more than one module, over the edges of ``kinds`` (Tarjan's)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target, kind in graph[node].items():
            if kind not in kinds:
                continue
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
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
    return sorted(found)


def describe(graph: dict[str, dict[str, str]], component: list[str]) -> str:
    edges = [
        f"{a} -> {b} ({kind})" for a in component for b, kind in sorted(graph[a].items()) if b in component
    ]
    return "; ".join(edges)


def core_graph() -> dict[str, dict[str, str]]:
    return import_graph(Path(junior_core.__file__).parent, "junior_core")


def test_the_core_has_no_runtime_import_circle() -> None:
    graph = core_graph()
    found = circles(graph, (RUNTIME,))
    assert not found, "runtime import circles in junior_core: " + " | ".join(describe(graph, c) for c in found)


def test_the_core_has_no_import_circle_even_through_type_hints() -> None:
    graph = core_graph()
    found = circles(graph)
    assert len(found) <= MAX_TYPE_ONLY_CIRCLES, (
        f"{len(found)} import circles in junior_core (at most {MAX_TYPE_ONLY_CIRCLES}, each through TYPE_CHECKING "
        "imports only): " + " | ".join(describe(graph, c) for c in found)
    )


PLUGIN_PACKAGES = sorted(p for p in (Path(__file__).resolve().parents[1] / "plugins").glob("*/junior_*") if (p / "__init__.py").is_file())


def test_no_plugin_has_an_import_circle() -> None:
    # A plugin is small enough to need none, through type hints included (the bridge's auth and config had one).
    assert len(PLUGIN_PACKAGES) == 3
    for package in PLUGIN_PACKAGES:
        graph = import_graph(package, package.name)
        assert len(graph) > 3, package
        found = circles(graph)
        assert not found, f"import circles in {package.name}: " + " | ".join(describe(graph, c) for c in found)


def test_the_graph_is_read_from_the_real_imports() -> None:
    # Not an empty graph passing the two tests above: known edges of each kind, and the subpackages, are seen.
    graph = core_graph()
    assert graph["junior_core._runtime.runtime"]["junior_core._calls.dispatch"] == RUNTIME
    assert graph["junior_core._catalog.catalog"]["junior_core._schemas.signatures"] == RUNTIME  # imported inside a function
    assert graph["junior_core._calls.dispatch"]["junior_core._plugins.plugin_set"] == TYPE_ONLY
    assert "junior_core._runtime.runtime" in graph["junior_core.llm.agent"]
    assert sum(len(targets) for targets in graph.values()) > 60


def _package(root: Path, files: dict[str, str]) -> Path:
    package = root / "pkg"
    for name, text in files.items():
        path = package / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return package


def test_a_runtime_circle_is_found_wherever_the_import_stands(tmp_path: Path) -> None:
    package = _package(tmp_path, {
        "__init__.py": "",
        "a.py": "from pkg.b import thing\n",
        "b.py": "def thing():\n    from pkg import a\n    return a\n",
        "c.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from pkg.a import x\n",
        "sub/__init__.py": "",
        "sub/d.py": "from ..c import y\n",
    })
    graph = import_graph(package, "pkg")
    assert circles(graph, (RUNTIME,)) == [["pkg.a", "pkg.b"]]
    assert graph["pkg.c"] == {"pkg.a": TYPE_ONLY}
    assert graph["pkg.sub.d"] == {"pkg.c": RUNTIME}


def test_a_circle_through_type_hints_is_type_only(tmp_path: Path) -> None:
    package = _package(tmp_path, {
        "__init__.py": "",
        "a.py": "import pkg.b\n",
        "b.py": "import typing\nif typing.TYPE_CHECKING:\n    from pkg.a import A\nelse:\n    pass\n",
    })
    graph = import_graph(package, "pkg")
    assert circles(graph, (RUNTIME,)) == []
    assert circles(graph) == [["pkg.a", "pkg.b"]]
    assert graph["pkg.b"] == {"pkg.a": TYPE_ONLY}
