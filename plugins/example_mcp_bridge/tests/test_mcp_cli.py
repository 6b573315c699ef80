"""``junior mcp list`` and ``junior mcp check`` through the installed console script."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from mcp_bridge_helpers import misbehaving, time_server, write_toml

JUNIOR = str(Path(sys.executable).parent / "junior")


def make_env(tmp_path: Path, hung: bool) -> dict[str, str]:
    servers = {
        "time": time_server(),
        "missing": {"command": "/nonexistent/junior-test-server"},
        "off": {"command": "x", "enabled": False},
    }
    if hung:
        servers["hung"] = misbehaving("hang", startup_timeout_s=1)
    config = write_toml(tmp_path / "junior.toml", servers)
    return {**os.environ, "JUNIOR_CONFIG": str(config), "JUNIOR_LOAD_PLUGINS": "mcp",
            "JUNIOR_CACHE_DIR": str(tmp_path / "cache")}


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    return make_env(tmp_path, hung=False)


@pytest.fixture
def env_with_hung(tmp_path: Path) -> dict[str, str]:
    return make_env(tmp_path, hung=True)


def junior(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([JUNIOR, *args], env=env, capture_output=True, text=True, timeout=60)


@pytest.mark.slow
def test_check_reports_each_server_and_fails_on_a_dead_one(env_with_hung: dict[str, str], no_orphans: None) -> None:
    done = junior(env_with_hung, "mcp", "check")
    assert done.returncode == 1, done.stderr
    lines = {line.split()[1].rstrip(":"): line for line in done.stdout.splitlines()}
    assert lines["mcp:time"].startswith("ok") and "2 tools" in lines["mcp:time"]
    assert lines["mcp:missing"].startswith("FAILED")
    # The operator gets the detail the model does not.
    assert "command not found: '/nonexistent/junior-test-server'" in lines["mcp:missing"]
    assert lines["mcp:hung"].startswith("FAILED") and "no answer within 1 s" in lines["mcp:hung"]
    assert lines["mcp:off"].startswith("off")


@pytest.mark.slow
def test_list_shows_state_and_tool_counts(env: dict[str, str], no_orphans: None) -> None:
    done = junior(env, "mcp", "list", "--json")
    assert done.returncode == 0, done.stderr
    rows = {row["name"]: row for row in json.loads(done.stdout)}
    assert (rows["time"]["state"], rows["time"]["tools"]) == ("ready", 2)
    assert rows["missing"]["state"] == "failed"
    assert rows["off"]["state"] == "disabled"
    # The second time the tool list comes from the cache; --refresh connects again.
    again = {row["name"]: row for row in json.loads(junior(env, "mcp", "list", "--json").stdout)}
    assert (again["time"]["state"], again["time"]["tools"]) == ("cached", 2)
    assert again["missing"]["state"] == "failed"  # a failure is never cached
    refreshed = {row["name"]: row for row in json.loads(junior(env, "mcp", "list", "--json", "--refresh").stdout)}
    assert refreshed["time"]["state"] == "ready"


@pytest.mark.slow
def test_invalid_config_is_one_clear_error(tmp_path: Path) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text('[mcp.servers.a]\ncommand = "a"\ntimeout_s = "soon"\n')
    done = junior({**os.environ, "JUNIOR_CONFIG": str(bad), "JUNIOR_LOAD_PLUGINS": "mcp"}, "mcp", "check")
    assert done.returncode != 0
    assert f"{bad}: [mcp.servers.a] timeout_s: must be a positive number of seconds" in done.stderr
    assert "Traceback" not in done.stderr
