"""A memory URL that cannot be used says what to do in one line, and ``junior memory info`` always shows the URL."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

JUNIOR = str(Path(sys.executable).parent / "junior")
URL = "postgresql+psycopg://junior:secret@127.0.0.1:5432/junior_memory"
FIX = "install junior-memory[postgres]"

# The session's own index cache and key (conftest.py), never the user's.
_KEEP = ("JUNIOR_CACHE_DIR", "JUNIOR_CONFIG_DIR")


@pytest.fixture
def no_driver(tmp_path: Path) -> dict[str, str]:
    """An environment where importing psycopg fails, as on a machine without the postgres extra."""
    blocker = tmp_path / "blocked" / "psycopg"
    blocker.mkdir(parents=True)
    (blocker / "__init__.py").write_text("raise ModuleNotFoundError(\"No module named 'psycopg'\")\n")
    env = {key: value for key, value in os.environ.items() if not key.startswith("JUNIOR_") or key in _KEEP}
    env.update(PYTHONPATH=str(blocker.parent), JUNIOR_MEMORY_URL=URL, JUNIOR_LOAD_PLUGINS="memory",
               XDG_DATA_HOME=str(tmp_path / "data"))
    return env


def junior(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([JUNIOR, *args], env=env, capture_output=True, text=True, timeout=60)


@pytest.mark.slow
def test_memory_commands_say_to_install_the_postgres_extra_in_one_line(no_driver: dict[str, str]) -> None:
    done = junior(no_driver, "memory", "list")
    assert done.returncode == 1
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and FIX in lines[0], done.stderr
    assert "secret" not in done.stderr and "fix junior_memory_url" not in done.stderr.lower()


@pytest.mark.slow
def test_a_tool_call_fails_without_a_traceback(no_driver: dict[str, str]) -> None:
    done = junior(no_driver, "exec", "memory__list")
    assert done.returncode == 1
    assert "Traceback" not in done.stderr
    assert done.stderr.count(FIX) == 1, done.stderr
    assert "error (tool_failed): Memory is not set up on this host" in done.stderr


@pytest.mark.slow
def test_info_shows_the_url_even_when_the_store_cannot_open(no_driver: dict[str, str]) -> None:
    done = junior(no_driver, "memory", "info")
    assert done.returncode == 1
    assert "url: None" not in done.stdout
    assert "url: postgresql+psycopg://junior:***@127.0.0.1:5432/junior_memory" in done.stdout
    assert FIX in done.stdout
