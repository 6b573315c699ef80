"""The README's tour, pasted line by line into a fresh shell after ``make demo``, runs without an error."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text()
pytestmark = pytest.mark.slow


def tour() -> list[str]:
    section = README.split("## A short tour", 1)[1]
    (block,) = re.findall(r"```sh\n(.*?)```", section.split("\n## ", 1)[0], flags=re.S)
    return [line for line in block.splitlines() if line.strip()]


def test_the_tour_starts_by_putting_junior_on_path_and_naming_its_config() -> None:
    lines = tour()
    assert lines[0].startswith(". .venv/bin/activate")
    assert lines[1].startswith("export JUNIOR_CONFIG=$PWD/docs/examples/junior.toml")
    assert (ROOT / "docs/examples/junior.toml").is_file()


def test_the_tour_chats_with_a_model_that_needs_no_key() -> None:
    (line,) = [line for line in tour() if line.startswith("junior chat")]
    assert line.startswith('junior chat --model echo -m "remember that I prefer tabs"')


@pytest.mark.skipif(not (ROOT / ".venv/bin/activate").is_file(), reason="needs the .venv `make demo` creates")
def test_the_tour_runs_line_by_line_in_a_fresh_shell(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    venv_bin = str(ROOT / ".venv" / "bin")
    path = os.pathsep.join(p for p in os.environ.get("PATH", "").split(os.pathsep) if p != venv_bin)
    env = {"HOME": str(home), "PATH": path, "LANG": "C.UTF-8", "XDG_DATA_HOME": str(home / "data"),
           "XDG_CACHE_HOME": str(home / "cache"),
           # Offline here: semantic recall's first-use model download cannot happen (it has tests of its own).
           "JUNIOR_MEMORY_EMBEDDING_MODEL": "off"}
    # One fresh shell running the lines in order; `-e` stops at the first failing one, `-x` names it.
    done = subprocess.run(["bash", "-e", "-x", "-c", "\n".join(tour())], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, f"{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    traced = [line for line in done.stderr.splitlines() if line.startswith("+")]
    assert sum(line.startswith("+ junior ") for line in traced) == sum(line.startswith("junior ") for line in tour())
    # `junior chat` shows each tool call on stderr in one line; anything else there is an error.
    calls = [line for line in done.stderr.splitlines() if line.startswith("  · ")]
    assert calls == ['  · searchTools "remember that I prefer tabs" → 4 tools: memory__remember, memory__list, ...',
                     "  · executeTool memory__remember → ok"]
    errors = [line for line in done.stderr.splitlines() if not line.startswith(("+", "  · ")) and line.strip()]
    assert errors == [], errors
    assert "echo: remember that I prefer tabs\nran memory__remember: " in done.stdout
    assert "mcp__time__get_current_time" in done.stdout and '"name": "searchTools"' in done.stdout
    assert "Prefers terse PR summaries" in done.stdout
