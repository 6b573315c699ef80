"""junior_core's modules import one another without circles, through type hints included.

An import under ``if TYPE_CHECKING:`` is *type-only*; any other import of a junior_core module, at the top of
a module or inside a function, is a *runtime* one. A runtime circle is an order problem waiting to happen (a
module half-initialised when its partner reads it); a type-only circle costs nothing when the code runs, but
each one is two modules that cannot be understood apart, so there are none: a lower layer that needs only a
type names a ``Protocol`` of its own (``hookspecs.Host``).
"""

from __future__ import annotations

from pathlib import Path

import junior_core
from tests.test_layers import architecture

MAX_TYPE_ONLY_CIRCLES = 0
RUNTIME = "runtime"
TYPE_ONLY = "type-only"


def import_graph(root: Path, package: str) -> dict[str, dict[str, str]]:
    """``{importer: {imported: "runtime" | "type-only"}}`` over the modules of ``package``: scripts/architecture.py's
    graph, where an import at load time and one inside a function are both runtime ones."""
    return {
        module: {target: TYPE_ONLY if kind == architecture.TYPE else RUNTIME for target, kind in targets.items()}
        for module, targets in architecture.import_graph(root, package).items()
    }


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
