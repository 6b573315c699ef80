"""``[plugins.mcp]`` settings, the files ``junior config path`` names, and results that carry their data once."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from junior_mcp_bridge import load_config
from junior_mcp_bridge.config import ConfigError, bridge_settings
from mcp_bridge_helpers import HERE, misbehaving, unmarked, write_toml

from junior_core import Runtime

JUNIOR = str(Path(sys.executable).parent / "junior")


def test_plugin_table_names_the_json_file_and_more_variables(tmp_path: Path) -> None:
    (tmp_path / "servers.json").write_text(json.dumps({"mcpServers": {"time": {"command": "mcp-server-time"}}}))
    path = tmp_path / "junior.toml"
    path.write_text('[plugins.mcp]\nservers_file = "servers.json"\npass_env = ["GITHUB_TOKEN"]\n'
                    '[mcp.servers.git]\ncommand = "mcp-server-git"\npass_env = ["GIT_DIR"]\n')
    configs = {c.name: c for c in load_config(environ={"JUNIOR_CONFIG": str(path)})}
    assert sorted(configs) == ["git", "time"]
    assert configs["time"].origin == str(tmp_path / "servers.json")  # relative to junior.toml
    assert configs["git"].pass_env == ("GIT_DIR", "GITHUB_TOKEN")
    assert "GITHUB_TOKEN" in configs["time"].pass_env and "HTTPS_PROXY" in configs["time"].pass_env
    path.write_text('[plugins.mcp]\ntool_cahce = false\n')
    with pytest.raises(ConfigError, match=r"\[plugins.mcp\] tool_cahce: unknown field; use gateway, pass_env, servers_file"):
        bridge_settings({"JUNIOR_CONFIG": str(path)})


@pytest.mark.slow
def test_config_path_names_the_json_file_in_effect(tmp_path: Path) -> None:
    servers = tmp_path / "mcp.json"
    servers.write_text('{"mcpServers": {}}')
    env = {**os.environ, "JUNIOR_CONFIG": str(tmp_path / "junior.toml"), "JUNIOR_MCP_CONFIG": str(servers),
           "JUNIOR_LOAD_PLUGINS": "mcp"}
    done = subprocess.run([JUNIOR, "config", "path"], env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [str(tmp_path / "junior.toml"), f"{servers}  (mcp)"]


def test_a_wrapped_value_is_not_carried_twice(make_runtime: Callable[..., Runtime]) -> None:
    rt = make_runtime({"w": {"command": sys.executable, "args": [str(HERE / "servers" / "wrapped.py")]},
                       "errs": misbehaving("error")})
    assert unmarked(rt.execute_tool("mcp__w__greet", {"name": "Ann"})["result"]) == {
        "structured_content": {"result": "Hello, Ann!"}}
    assert unmarked(rt.execute_tool("mcp__w__rows", {"count": 2})["result"]) == {
        "structured_content": {"result": [{"n": 0}, {"n": 1}]}}
    assert unmarked(rt.execute_tool("mcp__w__total", {"a": 1, "b": 2})["result"]) == {"structured_content": {"result": 3}}
    # Text that says something else is kept beside the structured content (the control).
    image = rt.execute_tool("mcp__errs__image", {})["result"]
    assert image["text"] == "a picture" and image["structured_content"] == {"width": 1, "height": 1}


def test_text_and_a_structure_wrapping_it_are_one_copy(make_runtime: Callable[..., Runtime]) -> None:
    """The two reference-server styles: a file's text beside ``{"content": text}``, indented JSON beside
    ``{"entities": [...]}``; the model gets the structure alone."""
    rt = make_runtime({"w": {"command": sys.executable, "args": [str(HERE / "servers" / "wrapped.py")]}})
    assert unmarked(rt.execute_tool("mcp__w__read_file", {"path": "a.txt"})["result"]) == {
        "structured_content": {"content": "line one of a.txt\nline two"}}
    made = [{"name": "Ann", "entityType": "person", "observations": []}]
    assert unmarked(rt.execute_tool("mcp__w__create_entities", {"names": ["Ann"]})["result"]) == {
        "structured_content": {"entities": made}}
    # A structure of one key whose value the text does not repeat keeps the text (the control).
    assert unmarked(rt.execute_tool("mcp__w__summary", {"path": "a.txt"})["result"]) == {
        "text": "a.txt has 2 lines", "structured_content": {"content": "line one\nline two"}}


def test_toml_servers_and_plugin_settings_from_the_user_config(tmp_path: Path) -> None:
    user = tmp_path / "user"
    user.mkdir()
    write_toml(user / "junior.toml", {"time": {"command": "mcp-server-time"}})
    configs = load_config(environ={"JUNIOR_CONFIG_DIR": str(user)}, cwd=tmp_path)
    assert [(c.name, c.origin) for c in configs] == [("time", str(user / "junior.toml"))]
