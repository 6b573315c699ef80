"""Plugins know the core only through the names ``junior_core`` exports; the core uses only public dependency APIs."""

from __future__ import annotations

import ast
import importlib
import inspect
import re
from pathlib import Path

import junior_core
from junior_core import JuniorError

REPO = Path(__file__).resolve().parents[1]
DOC = REPO / "docs" / "internals.md"


def _imports(root: Path) -> list[tuple[Path, str, str]]:
    found = []
    for path in sorted(root.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("junior_core"):
                found += [(path, node.module, alias.name) for alias in node.names]
            elif isinstance(node, ast.Import):
                found += [(path, alias.name, "") for alias in node.names if alias.name.startswith("junior_core")]
    return found


def documented_modules() -> dict[str, set[str]]:
    """``{module: names}`` of docs/internals.md's table of public modules; "its `__all__`" is read from the module."""
    text = DOC.read_text(encoding="utf-8")
    table = text[text.index("## Public modules"):].split("\n\n", 2)[1]
    found: dict[str, set[str]] = {}
    for line in table.splitlines()[2:]:
        module, names = (cell.strip() for cell in line.strip("|").split("|"))
        module = module.strip("`")
        if names == "its `__all__`":
            found[module] = set(importlib.import_module(module).__all__)
        else:
            found[module] = {name.strip().strip("`") for name in names.split(",")}
    return found


def distribution_packages() -> list[Path]:
    """The packages of every distribution but the core: the plugins and the documented example."""
    return sorted(p for pattern in ("plugins/*/junior_*", "docs/examples/*/junior_*") for p in REPO.glob(pattern)
                  if (p / "__init__.py").is_file())


def test_the_doc_lists_junior_core_all_and_each_submodule_has_its_names() -> None:
    modules = documented_modules()
    assert len(modules) >= 10
    assert modules["junior_core"] == set(junior_core.__all__)
    for module, names in modules.items():
        exported = set(importlib.import_module(module).__all__)
        assert names <= exported, f"{module}: documented but not in its __all__: {sorted(names - exported)}"
        for name in names:
            assert getattr(importlib.import_module(module), name) is not None, f"{module}.{name}"


def test_other_distributions_import_only_documented_names() -> None:
    packages = distribution_packages()
    assert len(packages) == 4  # three plugins and the example
    imports = [row for package in packages for row in _imports(package)]
    assert any(module == "junior_core" for _, module, _ in imports)
    modules = documented_modules()
    outside = [f"{path.relative_to(REPO)}: {module}.{name}" for path, module, name in imports
               if module not in modules or (name and name not in modules[module])]
    assert outside == []


def test_every_name_of_junior_core_is_used_returned_or_raised() -> None:
    # Not too wide: each name is imported by another distribution, appears in a public Runtime method's
    # signature (what a host passes or gets back), or is an error junior raises.
    imported = {name for package in distribution_packages() for _, module, name in _imports(package)
                if module == "junior_core"}
    signatures = " ".join(
        str(inspect.signature(member)) if callable(member) else str(inspect.signature(member.fget))
        for name, member in vars(junior_core.Runtime).items()
        if not name.startswith("_") and (callable(member) or isinstance(member, property))
    )
    in_signatures = {name for name in junior_core.__all__ if re.search(rf"\b{name}\b", signatures)}
    errors = {name for name in junior_core.__all__
              if isinstance(getattr(junior_core, name), type) and issubclass(getattr(junior_core, name), JuniorError)}
    assert {"CatalogTool", "SourceInfo", "PluginInfo", "Exposure", "RuntimeOptions"} <= in_signatures
    unused = set(junior_core.__all__) - imported - in_signatures - errors - {"Runtime"}
    assert unused == set()


def test_the_core_uses_no_private_attribute_of_pluggy_or_jsonschema() -> None:
    for path in sorted((REPO / "junior_core").rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        assert "jsonschema._" not in text, path
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.Attribute) and node.attr in ("_hookexec", "_inner_hookexec", "_hookimpls"):
                raise AssertionError(f"{path.relative_to(REPO)}:{node.lineno} uses pluggy's {node.attr}")


def test_every_distribution_pins_the_minor_version_of_the_core_it_was_written_for() -> None:
    import tomllib

    from packaging.requirements import Requirement
    from packaging.version import Version

    core = Version(tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["version"])
    next_minor = Version(f"{core.major}.{core.minor + 1}")
    projects = sorted([*REPO.glob("plugins/*/pyproject.toml"), *REPO.glob("docs/examples/*/pyproject.toml")])
    assert len(projects) == 4
    for path in projects:
        project = tomllib.loads(path.read_text())["project"]
        extras = project.get("optional-dependencies", {}).values()
        wanted = [Requirement(text) for text in [*project["dependencies"], *(t for group in extras for t in group)]]
        pins = [r for r in wanted if r.name == "junior-core"]
        assert pins, f"{path.relative_to(REPO)} does not require junior-core"
        for pin in pins:
            assert core in pin.specifier and next_minor not in pin.specifier, f"{path.relative_to(REPO)}: {pin}"
            assert Version(f"{core.major}.{core.minor - 1}.99") not in pin.specifier, f"{path.relative_to(REPO)}: {pin}"
