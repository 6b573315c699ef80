"""Plugins know the core only through the names ``junior_core`` exports; the core uses only public dependency APIs."""

from __future__ import annotations

import ast
from pathlib import Path

import junior_core

REPO = Path(__file__).resolve().parents[1]
PUBLIC_SUBPACKAGES = ("junior_core.llm", "junior_core.testing")


def _imports(root: Path) -> list[tuple[Path, str, str]]:
    found = []
    for path in sorted(root.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("junior_core"):
                found += [(path, node.module, alias.name) for alias in node.names]
            elif isinstance(node, ast.Import):
                found += [(path, alias.name, "") for alias in node.names if alias.name.startswith("junior_core")]
    return found


def test_plugins_import_only_what_junior_core_exports() -> None:
    packages = [p for p in (REPO / "plugins").glob("*/junior_*") if p.is_dir()]
    assert len(packages) >= 2
    imports = [row for package in packages for row in _imports(package)]
    assert any(module == "junior_core" for _, module, _ in imports)
    private = [f"{path.relative_to(REPO)}: {module}" for path, module, _ in imports
               if module != "junior_core" and not module.startswith(PUBLIC_SUBPACKAGES)]
    assert private == []
    unknown = [f"{path.relative_to(REPO)}: {name}" for path, module, name in imports
               if module == "junior_core" and name not in junior_core.__all__]
    assert unknown == []
    for name in junior_core.__all__:
        assert getattr(junior_core, name) is not None


def test_the_core_uses_no_private_attribute_of_pluggy_or_jsonschema() -> None:
    for path in sorted((REPO / "junior_core").rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        assert "jsonschema._" not in text, path
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.Attribute) and node.attr in ("_hookexec", "_inner_hookexec", "_hookimpls"):
                raise AssertionError(f"{path.relative_to(REPO)}:{node.lineno} uses pluggy's {node.attr}")
