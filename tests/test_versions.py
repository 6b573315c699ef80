"""Versions people can plan by: ``__version__`` from the metadata, a dated CHANGELOG whose dates are the release
commits', and names removed only after a minor version of warnings."""

from __future__ import annotations

import importlib
import re
import shutil
import subprocess
import tomllib
from importlib.metadata import version
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CHANGELOG = (ROOT / "CHANGELOG.md").read_text()
DISTRIBUTIONS = {  # distribution: (module, project directory)
    "junior-core": ("junior_core", "."),
    "junior-memory": ("junior_memory", "plugins/memory"),
    "junior-mcp-bridge": ("junior_mcp_bridge", "plugins/example_mcp_bridge"),
    "junior-slack": ("junior_slack", "plugins/slack"),
}
SECTIONS = ["Added", "Changed", "Deprecated", "Removed"]
RELEASE = re.compile(r"^## (\d{4}-\d{2}-\d{2}): (.+)$", re.M)


def project_version(directory: str) -> str:
    return str(tomllib.loads((ROOT / directory / "pyproject.toml").read_text())["project"]["version"])


@pytest.mark.parametrize("distribution", sorted(DISTRIBUTIONS))
def test_each_version_is_the_installed_metadatas(distribution: str) -> None:
    module, directory = DISTRIBUTIONS[distribution]
    found = importlib.import_module(module).__version__
    assert found == version(distribution) == project_version(directory)


def releases() -> list[tuple[str, dict[str, str]]]:
    """``(date, {distribution: version})`` of each dated entry, newest first."""
    out = []
    for date, names in RELEASE.findall(CHANGELOG):
        pairs = dict(part.strip().rsplit(" ", 1) for part in names.split(","))
        out.append((date, pairs))
    return out


def test_every_release_is_dated_and_each_current_version_is_in_one() -> None:
    found = releases()
    assert [date for date, _ in found] == sorted((date for date, _ in found), reverse=True)
    released = {(dist, ver) for _, pairs in found for dist, ver in pairs.items()}
    for distribution, (_, directory) in DISTRIBUTIONS.items():
        assert (distribution, project_version(directory)) in released, distribution
    assert CHANGELOG.index("## Unreleased") < CHANGELOG.index("\n## 2")


@pytest.mark.skipif(shutil.which("git") is None or not (ROOT / ".git").exists(), reason="needs the git history")
def test_each_release_date_is_its_release_commits() -> None:
    for date, pairs in releases():
        for distribution, ver in pairs.items():
            directory = DISTRIBUTIONS[distribution][1]
            # The commit that set this version in the distribution's pyproject.toml (the oldest, if several).
            dates = subprocess.run(
                ["git", "log", "--format=%ad", "--date=short", f"-Sversion = \"{ver}\"", "--",
                 f"{directory}/pyproject.toml"], cwd=ROOT, capture_output=True, text=True, check=True,
            ).stdout.split()
            assert dates and dates[-1] == date, (distribution, ver, dates)


def test_each_distributions_part_uses_the_four_sections_in_order() -> None:
    for part in re.split(r"^### ", CHANGELOG, flags=re.M)[1:]:
        title, _, body = part.partition("\n")
        assert title.split(" ")[0] in DISTRIBUTIONS, title
        sections = re.findall(r"^#### (.+)$", body, flags=re.M)
        assert sections and all(s in SECTIONS for s in sections), (title, sections)
        assert sections == sorted(sections, key=SECTIONS.index), (title, sections)


def test_what_03_removed_is_listed_with_its_replacement() -> None:
    release = CHANGELOG.split("### junior-core 0.3.0", 1)[1].split("\n### ", 1)[0]
    removed = release.split("#### Removed", 1)[1]
    for name, step in [("`rt.catalog`", "`rt.catalog_tool(tool_name)`"), ("`rt.discovery`", "`rt.explain("),
                       ("`rt.plugin_set`", "`rt.plugin(name)`"), ("`junior_core.adapters`", "junior_core.llm.adapters")]:
        line = next((item for item in removed.split("\n- ") if item.startswith(name)), "")
        assert step in line, name


@pytest.mark.parametrize(("name", "module"), [("clean_text", "junior_core.text"), ("clean_json", "junior_core.text"),
                                              ("print_table", "junior_core.tables"),
                                              ("parse_slack_ts", "junior_core.context")])
def test_a_name_moved_in_03_still_works_with_a_warning_until_04(name: str, module: str) -> None:
    import junior_core

    with pytest.warns(DeprecationWarning, match=rf"junior_core\.{name} is deprecated and goes in junior-core 0\.4: "
                                                rf"import it from {re.escape(module)}"):
        old = getattr(junior_core, name)
    assert old is getattr(importlib.import_module(module), name)
    assert name not in junior_core.__all__
    unreleased = CHANGELOG.split("## Unreleased", 1)[1].split("\n## ", 1)[0]
    deprecated = unreleased.split("#### Deprecated", 1)[1].split("\n### ", 1)[0]
    assert f"{name}`" in deprecated
