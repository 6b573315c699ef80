"""Plugins, the CLI and the model adapters use only the runtime's documented surface (docs/internals.md).

The surface is every public attribute of ``Runtime``; each has an entry in the doc and each entry names one.
Code outside the core (``plugins/*``, ``docs/examples/*``), and the CLI and ``junior_core/llm`` inside it, is read
as a syntax tree: any attribute it reads of a runtime must be documented, and it never probes one with
``getattr``/``hasattr``. A runtime is a name annotated ``Runtime``, bound to ``Runtime(...)``, one of its
constructors or ``junior_runtime(...)``, or the usual names ``rt`` and ``runtime`` (``self.runtime`` too).
"""

from __future__ import annotations

import ast
import inspect
import os
import re
import warnings
from pathlib import Path

import pytest

from junior_core import Runtime

REPO = Path(__file__).resolve().parents[1]
DOC = REPO / "docs" / "internals.md"
RUNTIME_NAMES = {"rt", "runtime", "_runtime"}
CONSTRUCTORS = {"Runtime", "from_entry_points", "open_async", "junior_runtime"}
# What every object has; reading it says nothing about the runtime's surface.
SKIPPED = {".venv", "node_modules", "build", "dist", "__pycache__"}
OBJECT = {"__class__", "__enter__", "__exit__", "__aenter__", "__aexit__", "__repr__"}


def documented() -> set[str]:
    """The runtime's names the doc has an entry for: ``#### `rt.name...``` or ``#### `Runtime.name(...)```."""
    return set(re.findall(r"^#### `(?:rt|Runtime)\.(\w+)", DOC.read_text(encoding="utf-8"), flags=re.M))


def public_attributes() -> set[str]:
    return {name for name, _ in inspect.getmembers(Runtime) if not name.startswith("_")}


def test_every_public_runtime_attribute_is_documented_and_only_those() -> None:
    names = documented()
    assert {"offered_names", "visible_tools", "index_info", "rebuild_index", "source_info", "explain"} <= names
    assert names == public_attributes()


def _is_runtime_annotation(node: ast.expr | None) -> bool:
    """``Runtime``, ``Runtime | None`` or either as a string; not ``list[Runtime]``."""
    if node is None:
        return False
    text = node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else ast.unparse(node)
    return "Runtime" in {part.strip() for part in text.split("|")}


def _call_name(node: ast.expr) -> str | None:
    if isinstance(node, ast.Await):
        node = node.value
    if isinstance(node, ast.Call):
        func = node.func
        return func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else None
    return None


def _target_name(node: ast.expr) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self":
        return node.attr
    return None


def runtime_names(tree: ast.AST) -> set[str]:
    """The names (and ``self.<name>`` attributes) that hold a runtime somewhere in ``tree``."""
    names = set(RUNTIME_NAMES)
    for node in ast.walk(tree):
        if isinstance(node, ast.arg) and _is_runtime_annotation(node.annotation):
            names.add(node.arg)
        elif isinstance(node, ast.AnnAssign) and _is_runtime_annotation(node.annotation):
            name = _target_name(node.target)
            if name:
                names.add(name)
        elif isinstance(node, ast.Assign) and _call_name(node.value) in CONSTRUCTORS:
            names.update(filter(None, (_target_name(t) for t in node.targets)))
        elif isinstance(node, ast.withitem) and _call_name(node.context_expr) in CONSTRUCTORS:
            if node.optional_vars is not None and _target_name(node.optional_vars):
                names.add(_target_name(node.optional_vars))  # type: ignore[arg-type]
    return names


def misuses(source: str, allowed: set[str]) -> list[str]:
    """``line: what`` for each read of an undocumented runtime attribute and each ``getattr`` probe of one."""
    with warnings.catch_warnings():  # a test file's regex with a stray backslash is not this test's business
        warnings.simplefilter("ignore", DeprecationWarning)
        tree = ast.parse(source)
    names = runtime_names(tree)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and _target_name(node.value) in names:
            if node.attr not in allowed and node.attr not in OBJECT:
                found.append(f"{node.lineno}: {ast.unparse(node)}")
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
              and node.func.id in ("getattr", "hasattr", "setattr") and node.args
              and _target_name(node.args[0]) in names):
            found.append(f"{node.lineno}: {ast.unparse(node)} probes the runtime")
    return found


def _python_files(root: Path) -> list[Path]:
    found = []
    for directory, subdirectories, files in os.walk(root):
        subdirectories[:] = [d for d in subdirectories if d not in SKIPPED and not d.endswith(".egg-info")]
        found += [Path(directory) / name for name in files if name.endswith(".py")]
    return sorted(found)


def outside_code() -> list[Path]:
    """Code that must use only the surface: other distributions, the CLI, the model adapters."""
    paths = _python_files(REPO / "plugins") + _python_files(REPO / "docs" / "examples")
    return [*paths, *_python_files(REPO / "junior_core" / "cli"), *_python_files(REPO / "junior_core" / "llm")]


def test_no_plugin_cli_or_adapter_reads_an_undocumented_runtime_attribute() -> None:
    allowed = documented()
    paths = outside_code()
    assert len(paths) > 50
    problems = [f"{path.relative_to(REPO)}:{problem}" for path in paths
                for problem in misuses(path.read_text(encoding="utf-8"), allowed)]
    assert problems == []


def test_the_scan_sees_the_runtimes_the_outside_code_holds() -> None:
    # Not a scan that passes because it recognises no runtime: known uses in each kind of code are seen.
    allowed = documented()
    seen = {
        "plugins/example_mcp_bridge/junior_mcp_bridge/gateway.py": "offered_names",
        "plugins/example_mcp_bridge/junior_mcp_bridge/plugin.py": "set_source_unavailable",
        "junior_core/cli/__init__.py": "source_info",
        "junior_core/llm/anthropic.py": "visible_tools",
    }
    for path, name in seen.items():
        source = (REPO / path).read_text(encoding="utf-8")
        assert misuses(source, allowed - {name}), f"{path}: its use of {name} was not seen"


@pytest.mark.parametrize("source, expected", [
    ("def f(rt):\n    return rt.catalog.tools()\n", ["2: rt.catalog"]),
    ("def f(host: 'Runtime'):\n    return host._reach\n", ["2: host._reach"]),
    ("with Runtime.from_entry_points() as r:\n    r.discovery.index_info()\n", ["2: r.discovery"]),
    ("class P:\n    def startup(self, runtime):\n        self._rt: Runtime = runtime\n"
     "    def later(self):\n        return self._rt.policy\n", ["5: self._rt.policy"]),
    ("def f(runtime):\n    return getattr(runtime, 'describe_source', None)\n",
     ["2: getattr(runtime, 'describe_source', None) probes the runtime"]),
    ("def f(rt):\n    return rt.model_tools(), rt.options.lazy_sources, rt.closed\n", []),
])
def test_misuses_are_found_however_the_runtime_is_named(source: str, expected: list[str]) -> None:
    assert misuses(source, documented()) == expected
