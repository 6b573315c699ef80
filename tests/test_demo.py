"""``make demo``: one readable line per step, and nothing left behind in the user's data, cache or temp dirs."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

DEMO = Path(__file__).resolve().parents[1] / "scripts" / "demo.py"


def run_demo(tmp_path: Path, *args: str) -> tuple[subprocess.CompletedProcess[str], list[Path]]:
    dirs = [tmp_path / name for name in ("home", "data", "cache", "tmp")]
    for path in dirs:
        path.mkdir(exist_ok=True)
    env = {key: value for key, value in os.environ.items() if not key.startswith("JUNIOR_")}
    env.update(HOME=str(dirs[0]), XDG_DATA_HOME=str(dirs[1]), XDG_CACHE_HOME=str(dirs[2]), TMPDIR=str(dirs[3]))
    done = subprocess.run([sys.executable, str(DEMO), *args], env=env, capture_output=True, text=True, timeout=180)
    return done, dirs


def test_demo_prints_one_line_per_step_and_leaves_no_files(tmp_path: Path) -> None:
    done, dirs = run_demo(tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    steps = [line for line in lines if line[:2] in ("✓ ", "✗ ")]
    assert len(steps) >= 10 and all(line.startswith("✓ ") for line in steps), done.stdout
    assert len(lines) <= len(steps) + 3, "the demo printed more than one line per step"
    assert max(len(line) for line in steps) <= 120
    assert lines[-1].startswith("The model was given 2 tools instead of all ") and "less context" in lines[-1]
    assert "✓ executeTool memory__remember → stored" in steps
    for path in dirs:
        assert list(path.iterdir()) == [], f"the demo left files in {path.name}: {list(path.iterdir())}"


def test_a_second_run_starts_from_an_empty_memory(tmp_path: Path) -> None:
    for _ in range(2):
        done, _ = run_demo(tmp_path)
        assert "✓ executeTool memory__remember → stored" in done.stdout, done.stdout


def test_verbose_prints_the_json_uncut(tmp_path: Path) -> None:
    done, _ = run_demo(tmp_path, "--verbose")
    assert done.returncode == 0
    assert '"tool_name": "memory__remember"' in done.stdout
    assert "(cut)" not in done.stdout
