"""docs/models.md as written: its fake ModelClient runs and prints what the page says, its script file is the
example's, and its `junior chat` lines run offline; the README sets a call's id one way."""

from __future__ import annotations

import os
import re
import sqlite3
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOC = (ROOT / "docs" / "models.md").read_text()


def blocks(language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", DOC, flags=re.S)


def test_the_fake_client_runs_as_written_and_prints_what_the_page_shows(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (code,) = blocks("python")
    (shown,) = blocks("text")
    monkeypatch.setenv("JUNIOR_LOAD_PLUGINS", "memory")
    monkeypatch.setenv("JUNIOR_MEMORY_URL", f"sqlite:///{tmp_path / 'memory.sqlite3'}")
    namespace: dict[str, Any] = {"__name__": "models_doc"}
    exec(compile(code, "models.md", "exec"), namespace)
    assert capsys.readouterr().out == shown


def test_the_script_shown_is_the_example_file() -> None:
    (shown,) = blocks("toml")
    example = (ROOT / "docs/examples/turns.toml").read_text()
    assert shown == example and len(tomllib.loads(example)["turns"]) == 2


def test_the_readme_gives_a_tool_call_its_id_one_way() -> None:
    readme = (ROOT / "README.md").read_text()
    assert "tool_call_id=call" not in readme and "attrs.evolve(context" not in readme
    assert readme.count("context.for_call(call.id)") == 2


@pytest.mark.slow
def test_the_chat_lines_run_as_written_offline(tmp_path: Path) -> None:
    lines = [line for block in blocks("sh") for line in block.splitlines() if line.startswith("junior chat")]
    assert len(lines) == 2 and "--model echo" in lines[0] and "--model script:docs/examples/turns.toml" in lines[1]
    home = tmp_path / "home"
    env = {
        "PATH": os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")]),
        "PYTHONPATH": os.environ.get("PYTHONPATH", ""), "HOME": str(home), "LANG": "C.UTF-8",
        "XDG_DATA_HOME": str(home / "data"), "XDG_CACHE_HOME": str(home / "cache"),
        "JUNIOR_LOAD_PLUGINS": "memory", "JUNIOR_MEMORY_URL": f"sqlite:///{tmp_path / 'memory.sqlite3'}",
        "JUNIOR_MEMORY_EMBEDDING_MODEL": "off",
    }
    done = subprocess.run(["bash", "-e", "-c", "\n".join(lines)], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=180)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-2:] == ["Saved: you prefer tabs.", "You prefer tabs."]
    assert done.stderr.count("executeTool memory__remember → ok") == 2
    assert "executeTool memory__search → ok" in done.stderr
    with sqlite3.connect(tmp_path / "memory.sqlite3") as db:
        rows = sorted(row[0] for row in db.execute("select content from junior_memory_memories"))
    assert rows == ["I prefer tabs", "Prefers tabs"]
