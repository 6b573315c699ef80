"""docs/authoring-sources.md matches the code: its pyproject is the example's, its names are the catalog's rules,
and its class example runs."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path
from typing import Any

from junior_core import Runtime
from junior_core._catalog.catalog import SOURCE_ID, TOOL_LOCAL_NAME
from junior_core.cli import local_context

ROOT = Path(__file__).resolve().parents[1]
DOC = (ROOT / "docs" / "authoring-sources.md").read_text()


def blocks(language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", DOC, flags=re.S)


def test_the_pyproject_shown_is_the_example_package_that_builds() -> None:
    shown = tomllib.loads(blocks("toml")[0])
    real = tomllib.loads((ROOT / "docs/examples/junior-example-units/pyproject.toml").read_text())
    assert shown == real
    assert shown["build-system"]["build-backend"] == "setuptools.build_meta"
    assert shown["tool"]["setuptools"]["packages"] == ["junior_example_units"]


def test_the_naming_rules_are_the_catalogs() -> None:
    assert f"`{SOURCE_ID.pattern}`" in DOC
    assert f"`{TOOL_LOCAL_NAME.pattern}`" in DOC
    assert "<source id with ':' as '__'>__<local name>" in DOC


def test_it_says_to_reinstall_after_a_new_entry_point_and_links_the_hooks() -> None:
    assert "run `pip install -e .` again" in DOC
    assert "](hooks.md)" in DOC and (ROOT / "docs" / "hooks.md").is_file()


def test_the_class_example_keeps_state_per_runtime() -> None:
    (code,) = [block for block in blocks("python") if "class NotesPlugin" in block]
    namespace: dict[str, Any] = {}
    exec(compile(code, "authoring-sources.md", "exec"), namespace)
    plugin_class = namespace["NotesPlugin"]
    with Runtime(plugins=[plugin_class]) as one, Runtime(plugins=[plugin_class]) as two:
        assert one.execute_tool("notes__add_note", {"text": "a"}, local_context())["result"] == {"notes": 1}
        assert one.execute_tool("notes__add_note", {"text": "b"}, local_context())["result"] == {"notes": 2}
        assert two.execute_tool("notes__add_note", {"text": "c"}, local_context())["result"] == {"notes": 1}


def test_every_junior_core_name_the_doc_calls_is_imported_in_it() -> None:
    import junior_core

    imported: set[str] = set()
    for names in re.findall(r"from junior_core import ([^\n`]+)", DOC):
        imported |= {name.strip(" ()") for name in names.split(",")}
    called = {name for name in junior_core.__all__ if re.search(rf"\b{name}\(", DOC)}
    assert called and called - imported == set(), "the doc calls these without showing their import"
