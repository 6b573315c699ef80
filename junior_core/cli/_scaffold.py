"""``junior plugin new NAME``: a pip-installable plugin package with one typed tool, its tests and an entry point."""

from __future__ import annotations

import re
from pathlib import Path

__all__ = ["PLUGIN_NAME", "new_plugin"]

PLUGIN_NAME = re.compile(r"^[a-z](?:[a-z0-9]|-(?=[a-z0-9])){0,39}$")
"""A new plugin's name: its source id and entry point name; with '-' as '_', its package's suffix."""

PYPROJECT = '''\
[build-system]
requires = ["setuptools>=68"]
build-backend = "setuptools.build_meta"

[project]
name = "{dist}"
version = "0.1.0"
description = "A junior plugin: the source {name}"
requires-python = ">=3.11"
dependencies = ["junior-core>={core_minor},<{core_next}"]

[project.optional-dependencies]
test = ["pytest>=8"]

# How junior finds the plugin once it is installed: `junior sources` lists {name}.
[project.entry-points.junior]
{name} = "{package}"

[tool.setuptools]
packages = ["{package}"]

[tool.pytest.ini_options]
testpaths = ["tests"]
'''

MODULE = '''\
"""{dist}: the junior source {name}."""

from __future__ import annotations

from importlib.metadata import version
from typing import Annotated, Any

from junior_core import Source, ToolError, hookimpl, tool

__version__ = version("{dist}")

READ_ONLY = {{"readOnlyHint": True, "idempotentHint": True, "openWorldHint": False}}


@tool(annotations=READ_ONLY, keywords=["how many words", "word count"])
def count_words(text: Annotated[str, "The text whose words are counted."]) -> dict[str, Any]:
    """Count the words in a text."""
    if not text.strip():
        raise ToolError("empty_text", "The text is empty; pass the text whose words to count.")
    return {{"words": len(text.split())}}


@hookimpl
def register_sources(register: Any) -> None:
    # Say what the source is for in one sentence: a model reads it in searchTools' list of sources.
    register(Source("{name}", "Word counts of a text."), tools=[count_words])
'''

TEST = '''\
"""{dist}'s tests, with junior's pytest plugin (fixtures junior_runtime and junior_context)."""

from __future__ import annotations

import {package}
from junior_core.testing import assert_error, assert_found, assert_ok


def test_count_words_is_found_and_runs(junior_runtime, junior_context):
    rt = junior_runtime({package})
    assert_found(rt.search_tools("count the words in a text"), "{name}__count_words", first=True)
    answer = rt.execute_tool("{name}__count_words", {{"text": "one two three"}}, junior_context())
    assert assert_ok(answer) == {{"words": 3}}
    assert_error(rt.execute_tool("{name}__count_words", {{"text": " "}}, junior_context()), "empty_text")


def test_the_installed_entry_point_loads_it(junior_runtime):
    rt = junior_runtime(entry_points=["{name}"])
    assert [source["id"] for source in rt.sources] == ["{name}"]
'''

README = '''\
# {dist}

A junior plugin: the source `{name}`, with one tool, `{name}__count_words`.

```sh
pip install -e '.[test]'     # installs the entry point: `junior sources` lists {name}
python -m pytest             # the tests, with junior's pytest plugin
junior exec {name}__count_words --args '{{"text": "one two three"}}'
```

Add tools as typed functions with `@tool` and list them in `register_sources`; after a new entry point, run
`pip install -e .` again.
'''


def new_plugin(name: str, parent: Path, core_version: str) -> Path:
    """Write the package ``junior-<name>`` under ``parent``; its directory. ``ValueError`` for a bad name or an
    existing directory (nothing is written then)."""
    if not PLUGIN_NAME.match(name):
        raise ValueError(
            f"invalid plugin name {name!r}: use lowercase letters and digits, words joined by '-', starting with a "
            "letter (it is the source id and names the package, e.g. word-tools)"
        )
    dist = "junior-" + name
    package = "junior_" + name.replace("-", "_")
    root = parent / dist
    if root.exists():
        raise ValueError(f"{root} already exists; choose another name or --dir")
    major, minor = (int(part) for part in core_version.split(".")[:2])
    values = {"name": name, "dist": dist, "package": package, "core_minor": f"{major}.{minor}",
              "core_next": f"{major}.{minor + 1}" if major == 0 else f"{major + 1}"}
    files = {
        "pyproject.toml": PYPROJECT,
        f"{package}/__init__.py": MODULE,
        f"tests/test_{package.removeprefix('junior_')}.py": TEST,
        "README.md": README,
    }
    for relative, template in files.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(template.format(**values), encoding="utf-8")
    return root
