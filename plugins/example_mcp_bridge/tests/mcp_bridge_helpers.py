"""Helpers for the MCP bridge tests: configs of real MCP servers, junior.toml writing, child-process checks."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import psutil

HERE = Path(__file__).parent
MISBEHAVING = str(HERE / "servers" / "misbehaving.py")
BIN = Path(sys.executable).parent


def misbehaving(mode: str, **extra: Any) -> dict[str, Any]:
    """Config of a misbehaving test server."""
    return {"command": sys.executable, "args": [MISBEHAVING, mode], **extra}


def alive(pid: int) -> bool:
    """Whether ``pid`` is a process that has not ended (a zombie has)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def misbehaving_runtime(name: str, mode: str, pid_file: Path, *extra: str) -> Any:
    """A runtime bridging one misbehaving test server, started as ``misbehaving.py mode pid_file *extra``."""
    from junior_mcp_bridge import MCPBridge
    from junior_mcp_bridge.config import ServerConfig

    from junior_core import Runtime

    config = ServerConfig(name=name, origin="test", command=sys.executable,
                          args=(MISBEHAVING, mode, str(pid_file), *extra))
    return Runtime(plugins=[MCPBridge([config])])


def gated(marker: Path, **extra: Any) -> dict[str, Any]:
    """Config of a test server that exits at once until ``marker`` exists."""
    return {"command": sys.executable, "args": [MISBEHAVING, "gated", str(marker)], **extra}


def time_server(**extra: Any) -> dict[str, Any]:
    return {"command": str(BIN / "mcp-server-time"), "args": ["--local-timezone", "Europe/Paris"], **extra}


def _toml_value(value: Any) -> str:
    if isinstance(value, dict):
        return "{" + ", ".join(f"{json.dumps(k)} = {_toml_value(v)}" for k, v in value.items()) + "}"
    return json.dumps(value)


def write_toml(path: Path, servers: dict[str, dict[str, Any]]) -> Path:
    lines = []
    for name, fields in servers.items():
        lines.append(f"[mcp.servers.{name}]")
        lines.extend(f"{key} = {_toml_value(value)}" for key, value in fields.items())
        lines.append("")
    path.write_text("\n".join(lines))
    return path


def unmarked(result: dict[str, Any]) -> dict[str, Any]:
    """A bridged tool's result without the ``from`` every one carries (whose output it is), checked present."""
    assert str(result.get("from", "")).startswith("the MCP server "), result
    return {key: value for key, value in result.items() if key != "from"}


def live_children() -> set[int]:
    """Pids of this process's living descendants (zombies already reaped do not count)."""
    pids = set()
    for child in psutil.Process().children(recursive=True):
        try:
            if child.status() != psutil.STATUS_ZOMBIE:
                pids.add(child.pid)
        except psutil.NoSuchProcess:
            pass
    return pids




def bearer_client(url: str, token: str | None, statuses: list[int] | None = None) -> Any:
    """An official MCP client for ``url`` sending ``Authorization: Bearer <token>``; HTTP statuses go to ``statuses``."""
    from contextlib import asynccontextmanager

    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client

    @asynccontextmanager
    async def connect() -> Any:
        async def record(response: Any) -> None:
            if statuses is not None:
                statuses.append(response.status_code)

        headers = {"Authorization": f"Bearer {token}"} if token is not None else {}
        async with create_mcp_http_client(headers=headers) as http:
            http.event_hooks["response"].append(record)
            async with Client(streamable_http_client(url, http_client=http), read_timeout_seconds=30) as client:
                yield client

    return connect()
