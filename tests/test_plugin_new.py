"""``junior plugin new NAME``: the package it writes installs with pip and its tests pass as written."""

from __future__ import annotations

import os
import site
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from click.testing import CliRunner

from junior_core.cli import cli

ROOT = Path(__file__).resolve().parents[1]


def doc_lines() -> list[str]:
    """The shell lines docs/authoring-sources.md gives for `junior plugin new`, comments dropped."""
    doc = (ROOT / "docs" / "authoring-sources.md").read_text()
    block = doc.split("## In one command: `junior plugin new NAME`", 1)[1].split("```sh\n", 1)[1].split("```", 1)[0]
    return [line.split("#", 1)[0].strip() for line in block.splitlines()]


def new(tmp_path: Path, *args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, ["plugin", "new", *args, "--dir", str(tmp_path)])
    return result.exit_code, result.output


def test_it_writes_a_package_with_one_typed_tool_its_tests_and_an_entry_point(tmp_path: Path) -> None:
    code, output = new(tmp_path, "word-tools")
    assert code == 0, output
    root = tmp_path / "junior-word-tools"
    assert output.startswith(f"wrote {root}: ") and "pip install -e '.[test]'" in output
    assert sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file()) == [
        "README.md", "junior_word_tools/__init__.py", "pyproject.toml", "tests/test_word_tools.py"]
    project = tomllib.loads((root / "pyproject.toml").read_text())
    assert project["project"]["name"] == "junior-word-tools"
    assert project["project"]["entry-points"]["junior"] == {"word-tools": "junior_word_tools"}
    assert project["project"]["dependencies"] == ["junior-core>=0.3,<0.4"]
    compile((root / "junior_word_tools/__init__.py").read_text(), "__init__.py", "exec")


def test_a_bad_name_or_an_existing_directory_writes_nothing(tmp_path: Path) -> None:
    for bad in ("Word-Tools", "word_tools", "word-", "1words"):
        code, output = new(tmp_path, bad)
        assert code == 2 and f"invalid plugin name {bad!r}: use lowercase letters and digits" in output
    assert list(tmp_path.iterdir()) == []
    assert new(tmp_path, "notes")[0] == 0
    (tmp_path / "junior-notes" / "README.md").write_text("mine")
    code, output = new(tmp_path, "notes")
    assert code == 2 and "junior-notes already exists" in output
    assert (tmp_path / "junior-notes" / "README.md").read_text() == "mine"


@pytest.mark.slow  # a virtual environment, pip and pytest in subprocesses
def test_the_package_installs_with_pip_and_its_tests_pass_as_written(tmp_path: Path) -> None:
    # The doc's lines, run here with the offline flags below.
    assert doc_lines() == ["junior plugin new word-tools", "cd junior-word-tools", "pip install -e '.[test]'",
                           "python -m pytest"]
    assert new(tmp_path, "word-tools")[0] == 0
    root = tmp_path / "junior-word-tools"
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    # The new environment sees this one's packages (junior-core, pytest, pip, setuptools) as a user's .venv would
    # after `make demo`; --no-index: nothing comes from the network.
    (purelib,) = {p for p in venv.glob("lib/python*/site-packages")}
    lines = [f"import site; site.addsitedir({d!r})" for d in site.getsitepackages()]
    (purelib / "_junior_parent.pth").write_text("\n".join(lines) + "\n")
    python = str(venv / "bin" / "python")
    env = {**os.environ, "PIP_DISABLE_PIP_VERSION_CHECK": "1", "PYTHONWARNINGS": "ignore"}
    installed = subprocess.run([python, "-m", "pip", "install", "--no-index", "--no-build-isolation", "-e", ".[test]"],
                               cwd=root, env=env, capture_output=True, text=True, timeout=300)
    assert installed.returncode == 0, installed.stdout + installed.stderr
    tested = subprocess.run([python, "-m", "pytest", "-q", "-p", "no:cacheprovider"], cwd=root, env=env,
                            capture_output=True, text=True, timeout=300)
    assert tested.returncode == 0 and "2 passed" in tested.stdout, tested.stdout + tested.stderr
    version = subprocess.run([python, "-c", "import junior_word_tools; print(junior_word_tools.__version__)"],
                             cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60)
    assert version.stdout == "0.1.0\n", version.stderr
