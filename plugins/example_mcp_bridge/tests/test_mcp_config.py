"""Configuration: junior.toml and mcpServers JSON, ${VAR} expansion, one clear error per problem."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from junior_mcp_bridge import ConfigError, load_config


def toml(tmp_path: Path, text: str) -> dict[str, str]:
    path = tmp_path / "junior.toml"
    path.write_text(text)
    return {"JUNIOR_CONFIG": str(path)}


def test_toml_and_json_servers_are_merged(tmp_path: Path) -> None:
    environ = toml(tmp_path, """
[mcp.servers.time]
command = "mcp-server-time"
args = ["--local-timezone", "UTC"]
description = "Clock."
allowed_tools = ["get_current_time"]
timeout_s = 5

[mcp.servers.off]
command = "x"
enabled = false
""")
    json_path = tmp_path / "claude.json"
    json_path.write_text(json.dumps({"mcpServers": {
        "linear": {"type": "http", "url": "https://mcp.example.com/mcp", "headers": {"Authorization": "Bearer ${TOKEN}"}},
        "git": {"command": "uvx", "args": ["mcp-server-git"], "env": {"A": "b"}, "disabled": True},
    }}))
    servers = {s.name: s for s in load_config({**environ, "JUNIOR_MCP_CONFIG": str(json_path), "TOKEN": "t0k"})}
    assert sorted(servers) == ["git", "linear", "off", "time"]
    assert servers["time"].args == ("--local-timezone", "UTC")
    assert servers["time"].allowed_tools == ("get_current_time",)
    assert servers["time"].timeout_s == 5.0
    assert servers["time"].source_id == "mcp:time"
    assert servers["off"].enabled is False and servers["git"].enabled is False
    assert servers["linear"].transport == "http"
    assert servers["linear"].headers == {"Authorization": "Bearer t0k"}
    # Expanded secrets never show in what is printed about a server.
    assert "t0k" not in repr(servers["linear"]) and "t0k" not in servers["linear"].target


def test_junior_toml_in_the_current_directory(tmp_path: Path) -> None:
    (tmp_path / "junior.toml").write_text('[mcp.servers.a]\ncommand = "a"\n')
    assert [s.name for s in load_config({}, cwd=tmp_path)] == ["a"]
    assert load_config({}, cwd=tmp_path / "nowhere") == []


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('[mcp.servers.a]\ncommand = "a"\ntimeout_s = -1\n', "[mcp.servers.a] timeout_s: must be a positive number"),
        ('[mcp.servers.a]\ncommand = "a"\nurl = "http://x"\n', "[mcp.servers.a] command: set exactly one of"),
        ('[mcp.servers.a]\nargs = ["x"]\n', "[mcp.servers.a] command: set exactly one of"),
        ('[mcp.servers.a]\ncommand = "a"\nargz = ["x"]\n', "[mcp.servers.a] argz: unknown field"),
        ('[mcp.servers.a]\ncommand = "a"\nargs = "x"\n', "[mcp.servers.a] args: must be a list of strings"),
        ('[mcp.servers.a]\ncommand = "a"\nenv = {K = "${NOPE_UNSET}"}\n',
         "[mcp.servers.a] env.K: refers to ${NOPE_UNSET}, which is not set"),
        ('[mcp.servers.Bad]\ncommand = "a"\n', "[mcp.servers.Bad] name: 'Bad' is not a valid server name"),
        ('[mcp.servers.a]\nurl = "ftp://x"\n', "[mcp.servers.a] url: must be an http:// or https:// URL"),
        ('[mcp.servers.a]\ncommand = "a"\nheaders = {A = "b"}\n', "[mcp.servers.a] headers: only applies to `url`"),
        ("[mcp.servers.a\n", "not valid TOML"),
    ],
)
def test_invalid_config_names_file_server_and_field(tmp_path: Path, text: str, expected: str) -> None:
    environ = toml(tmp_path, text)
    with pytest.raises(ConfigError) as caught:
        load_config(environ)
    message = str(caught.value)
    assert message.startswith(str(tmp_path / "junior.toml") + ":"), message
    assert expected in message, message


def test_a_server_defined_twice_is_an_error(tmp_path: Path) -> None:
    environ = toml(tmp_path, '[mcp.servers.a]\ncommand = "a"\n')
    json_path = tmp_path / "m.json"
    json_path.write_text(json.dumps({"mcpServers": {"a": {"command": "b"}}}))
    with pytest.raises(ConfigError, match=r"server 'a' is also defined in .*junior.toml"):
        load_config({**environ, "JUNIOR_MCP_CONFIG": str(json_path)})


def test_bad_json_shape_is_explained(tmp_path: Path) -> None:
    json_path = tmp_path / "m.json"
    json_path.write_text(json.dumps({"servers": {}}))
    with pytest.raises(ConfigError, match=r'expected an object \{"mcpServers"'):
        load_config({"JUNIOR_MCP_CONFIG": str(json_path)}, cwd=tmp_path)


def test_invalid_config_fails_the_plugin_with_that_message(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from junior_mcp_bridge import MCPBridge

    from junior_core import Runtime

    monkeypatch.setenv("JUNIOR_CONFIG", toml(tmp_path, '[mcp.servers.a]\ncommand = 3\n')["JUNIOR_CONFIG"])
    with Runtime(plugins=[MCPBridge], strict=False) as rt:
        (info,) = rt.plugins
        assert info.status == "failed"
        assert "[mcp.servers.a] command: must be a non-empty string" in (info.error or "")
