"""junior_core's layers: imports run one way, modules outside the documented surface are private by name, no module
outgrows its bound, and docs/architecture.md's layers, module table and sketch are what scripts/architecture.py
reads from the imports."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

from tests.test_public_api import documented_modules

REPO = Path(__file__).resolve().parents[1]
FACADE_LINES = 400  # junior_core/_runtime/runtime.py: what a bot embeds, a facade over the layers
MODULE_LINES = 600  # any module of the core


def _script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("junior_architecture", REPO / "scripts" / "architecture.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


architecture = _script()


def test_imports_run_down_the_layers_only() -> None:
    graph = architecture.import_graph()
    assert architecture.violations(graph) == []


def test_the_layer_check_reads_the_real_imports() -> None:
    # Not a contract that passes because it sees nothing: known edges of each kind, and every layer, are there.
    graph = architecture.import_graph()
    assert graph["junior_core._runtime.runtime"]["junior_core._calls.dispatch"] == architecture.LOAD
    assert graph["junior_core._catalog.catalog"]["junior_core._schemas.signatures"] == architecture.LAZY
    assert graph["junior_core._calls.dispatch"]["junior_core._discovery"] == architecture.TYPE
    assert {architecture.layer_of(m) for m in graph} - {None} == set(range(len(architecture.LAYERS)))


def test_an_import_up_a_layer_is_refused() -> None:
    # A type-only import counts: a lower layer that needs only a type names a Protocol of its own.
    graph = architecture.import_graph()
    graph["junior_core._catalog.exposure"]["junior_core._plugins.plugin_set"] = architecture.TYPE
    graph["junior_core._base.errors"]["junior_core.text"] = architecture.LOAD  # within one layer: allowed
    graph["junior_core.stray"] = {}
    assert architecture.violations(graph) == [
        "junior_core.stray is on no layer",
        "junior_core._catalog.exposure (catalog) imports junior_core._plugins.plugin_set (plugins, a layer above) "
        "[type]",
    ]


def test_modules_outside_the_documented_surface_are_private_by_name() -> None:
    documented = set(documented_modules())
    public_packages = ("junior_core.llm", "junior_core.testing")  # documented whole (docs/internals.md)
    named = []
    for module in architecture.modules():
        parts = module.split(".")[1:]
        if module in documented or module == "junior_core.__main__" or any(p.startswith("_") for p in parts):
            continue
        if any(module == p or module.startswith(p + ".") for p in public_packages):
            continue
        named.append(module)
    assert named == []


@pytest.mark.parametrize("path", sorted((REPO / "junior_core").rglob("*.py")), ids=lambda p: str(p.relative_to(REPO)))
def test_no_module_outgrows_its_bound(path: Path) -> None:
    lines = len(path.read_text(encoding="utf-8").splitlines())
    bound = FACADE_LINES if path == REPO / "junior_core" / "_runtime" / "runtime.py" else MODULE_LINES
    assert lines <= bound, f"{path.relative_to(REPO)}: {lines} lines (at most {bound})"


def test_the_architecture_doc_is_generated_from_the_imports() -> None:
    text = architecture.DOC.read_text(encoding="utf-8")
    assert architecture.BEGIN in text and architecture.END in text
    assert architecture.rewrite(text, architecture.render()) == text, (
        "docs/architecture.md's layers differ from the imports: run python scripts/architecture.py")
