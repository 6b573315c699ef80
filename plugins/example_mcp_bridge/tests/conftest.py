"""Fixtures for the MCP bridge tests: real MCP servers as subprocesses, configured through a real junior.toml."""

from __future__ import annotations

import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import psutil
import pytest

# The helpers module has a name no other test directory uses, so it imports the same under any import mode.
sys.path.insert(0, str(Path(__file__).parent))

from junior_mcp_bridge import MCPBridge, load_config
from mcp_bridge_helpers import live_children, write_toml

from junior_core import Runtime

# Fixtures that start MCP servers (or the `junior` gateway) as subprocesses: a test asking for one is slow
# (seconds: a Python interpreter per server), so `make test-fast` leaves it to `make test`.
SERVER_FIXTURES = {"make_runtime", "no_orphans", "time_rt", "gateway_env"}


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    here = Path(__file__).parent
    for item in items:
        if item.path.is_relative_to(here) and SERVER_FIXTURES & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.slow)


@pytest.fixture
def no_orphans() -> Iterator[None]:
    """Fails the test if a subprocess started during it is still alive afterwards."""
    before = live_children()
    yield
    left = live_children() - before
    assert not left, f"subprocesses outlived the runtime: {[psutil.Process(p).cmdline() for p in left]}"


@pytest.fixture
def make_runtime(tmp_path: Path, no_orphans: None) -> Iterator[Callable[..., Runtime]]:
    """``make_runtime(servers)`` writes a junior.toml and starts a runtime with just the bridge; closed after."""
    runtimes: list[Runtime] = []

    def make(servers: dict[str, dict[str, Any]], environ: dict[str, str] | None = None) -> Runtime:
        path = write_toml(tmp_path / "junior.toml", servers)
        configs = load_config(environ={"JUNIOR_CONFIG": str(path), **(environ or {})})
        runtime = Runtime(plugins=[MCPBridge(configs)])
        runtimes.append(runtime)
        return runtime

    yield make
    for runtime in runtimes:
        runtime.close()


@pytest.fixture
def git_repo(tmp_path: Path) -> Path:
    git = shutil.which("git")
    if git is None:
        pytest.skip("git is not installed")
    repo = tmp_path / "repo"
    repo.mkdir()
    run = lambda *args: subprocess.run([git, *args], cwd=repo, check=True, capture_output=True)  # noqa: E731
    run("init", "-q", "-b", "main")
    run("config", "user.email", "test@example.com")
    run("config", "user.name", "Test")
    (repo / "README.md").write_text("hello\n")
    run("add", "README.md")
    run("commit", "-q", "-m", "first commit")
    (repo / "README.md").write_text("hello again\n")
    return repo
