"""The ``junior`` CLI starts an MCP server only for a command that needs its tools, so the rest never wait for one."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from mcp_bridge_helpers import write_toml

JUNIOR = str(Path(sys.executable).parent / "junior")
# Marks that it was started, then never answers: a server like this once made every CLI command wait for it.
NEVER_ANSWERS = "import pathlib, sys, time; pathlib.Path(sys.argv[1]).touch(); time.sleep(600)"


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    marker = tmp_path / "started"
    config = write_toml(tmp_path / "junior.toml", {
        "silent": {"command": sys.executable, "args": ["-c", NEVER_ANSWERS, str(marker)], "startup_timeout_s": 2},
    })
    return {
        **os.environ,
        "JUNIOR_CONFIG": str(config),
        "JUNIOR_LOAD_PLUGINS": "mcp,memory",
        "JUNIOR_MEMORY_URL": f"sqlite:///{tmp_path / 'memory.sqlite3'}",
        "MARKER": str(marker),
    }


def junior(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([JUNIOR, *args], env=env, capture_output=True, text=True, timeout=120)


@pytest.mark.slow
@pytest.mark.parametrize("args", [
    ["--help"],
    ["sources"],
    ["plugins"],
    ["exec", "memory__list"],
    ["show", "memory__list"],
    ["search", "remember a preference", "--source", "memory"],
])
def test_commands_that_call_no_mcp_tool_never_start_a_server(env: dict[str, str], args: list[str]) -> None:
    done = junior(env, *args)
    assert done.returncode == 0, done.stderr
    assert not Path(env["MARKER"]).exists(), f"`junior {' '.join(args)}` started the MCP server"


@pytest.mark.slow
def test_sources_lists_the_server_without_starting_it(env: dict[str, str]) -> None:
    done = junior(env, "sources")
    assert "mcp:silent" in done.stdout
    assert not Path(env["MARKER"]).exists()


@pytest.mark.slow
@pytest.mark.parametrize("args", [
    ["search", "anything", "--source", "mcp:silent"],
    ["search", "anything"],
    ["exec", "mcp__silent__anything"],
])
def test_commands_that_need_the_server_start_it(env: dict[str, str], args: list[str]) -> None:
    junior(env, *args)
    assert Path(env["MARKER"]).exists(), f"`junior {' '.join(args)}` did not start the MCP server it needs"


@pytest.mark.slow
def test_a_failed_server_is_reported_once(env: dict[str, str]) -> None:
    done = junior(env, "search", "anything", "--source", "mcp:silent")
    assert done.stderr.count("'silent' is unavailable") == 1, done.stderr


@pytest.mark.slow
@pytest.mark.parametrize("args", [["sources"], ["plugins"], ["exec", "memory__list"]])
def test_commands_that_call_no_mcp_tool_do_not_even_import_the_sdk(env: dict[str, str], args: list[str]) -> None:
    code = ("import atexit, sys; atexit.register(lambda: print('mcp' in sys.modules, file=sys.stderr)); "
            f"from junior_core.cli import main; main({args!r})")
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stderr.strip().splitlines()[-1] == "False", done.stderr


@pytest.mark.slow
def test_mcp_check_reports_a_dead_server_once(tmp_path: Path) -> None:
    config = write_toml(tmp_path / "junior.toml", {"missing": {"command": "/nonexistent/junior-test-server"}})
    env = {**os.environ, "JUNIOR_CONFIG": str(config), "JUNIOR_LOAD_PLUGINS": "mcp"}
    done = junior(env, "mcp", "check")
    assert done.returncode == 1
    assert (done.stdout + done.stderr).count("command not found: '/nonexistent/junior-test-server'") == 1
