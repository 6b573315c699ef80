"""``junior mcp serve`` driven by the official ``mcp`` client, the way Claude Desktop or Codex would run it."""

from __future__ import annotations

import importlib.util
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from junior_mcp_bridge.auth import read_or_create_token
from mcp import Client, StdioServerParameters
from mcp_bridge_helpers import bearer_client, live_children, time_server, write_toml

from junior_core.testing import RuntimeFactory, wait_until

JUNIOR = str(Path(sys.executable).parent / "junior")
HAS_MEMORY = importlib.util.find_spec("junior_memory") is not None


@pytest.fixture
def gateway_env(tmp_path: Path) -> dict[str, str]:
    config = write_toml(tmp_path / "junior.toml", {"time": time_server()})
    return {
        "JUNIOR_CONFIG": str(config),
        "JUNIOR_LOAD_PLUGINS": "mcp,memory",
        "JUNIOR_MEMORY_URL": f"sqlite:///{tmp_path / 'memory.db'}",
        "JUNIOR_CONFIG_DIR": str(tmp_path / "config"),
    }


async def test_stdio_gateway_offers_discovery_over_every_source(gateway_env: dict[str, str]) -> None:
    before = live_children()
    params = StdioServerParameters(command=JUNIOR, args=["mcp", "serve"], env=gateway_env)
    async with Client(params, mode="legacy", read_timeout_seconds=30) as client:
        listed = await client.list_tools()
        assert sorted(t.name for t in listed.tools) == ["executeTool", "searchTools"]
        search = next(t for t in listed.tools if t.name == "searchTools")
        assert "mcp:time" in (search.description or "")

        found = await client.call_tool("searchTools", {"query": "convert time", "source": "mcp:time"})
        assert found.is_error is False
        assert found.structured_content is not None
        assert found.structured_content["tools"][0]["tool_name"] == "mcp__time__convert_time"

        ran = await client.call_tool(
            "executeTool", {"tool_name": "mcp__time__get_current_time", "arguments": {"timezone": "Europe/Berlin"}}
        )
        assert ran.structured_content is not None
        assert ran.structured_content["ok"] is True
        assert ran.structured_content["result"]["structured_content"]["timezone"] == "Europe/Berlin"
        assert '"ok": true' in ran.content[0].text  # type: ignore[union-attr]

        failed = await client.call_tool("executeTool", {"tool_name": "mcp__time__nope"})
        assert failed.is_error is True
        assert failed.structured_content is not None
        assert failed.structured_content["error"]["code"] == "unknown_tool"
    # The gateway and the time server it bridged are both gone.
    wait_until(lambda: not live_children() - before, timeout=5, what="the gateway and the time server to exit")


@pytest.mark.skipif(not HAS_MEMORY, reason="junior-memory is not installed (make install installs it)")
async def test_stdio_gateway_runs_a_memory_tool_end_to_end(gateway_env: dict[str, str]) -> None:
    params = StdioServerParameters(command=JUNIOR, args=["mcp", "serve"], env=gateway_env)
    async with Client(params, mode="legacy", read_timeout_seconds=30) as client:
        stored = await client.call_tool(
            "executeTool",
            {"tool_name": "memory__remember", "arguments": {"content": "Prefers metric units", "kind": "preference"}},
        )
        assert stored.structured_content is not None and stored.structured_content["ok"] is True, stored
        listed = await client.call_tool("executeTool", {"tool_name": "memory__list", "arguments": {}})
        assert listed.structured_content is not None
        contents = [m["content"] for m in listed.structured_content["result"]["memories"]]
        assert "Prefers metric units" in contents


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture
def http_gateway(gateway_env: dict[str, str]) -> Iterator[str]:
    import os

    port = _free_port()
    env = {**os.environ, **gateway_env}
    proc = subprocess.Popen([JUNIOR, "mcp", "serve", "--http", str(port)], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:

        def listening() -> bool:
            if proc.poll() is not None:
                pytest.fail(f"gateway exited: {proc.stderr.read().decode() if proc.stderr else ''}")
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                return True
            except OSError:
                return False

        wait_until(listening, timeout=30, what="the gateway to listen")
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        proc.terminate()
        proc.wait(15)


async def test_http_gateway_on_loopback(http_gateway: str, gateway_env: dict[str, str]) -> None:
    async with bearer_client(http_gateway, read_or_create_token(gateway_env)) as client:
        listed = await client.list_tools()
        assert sorted(t.name for t in listed.tools) == ["executeTool", "searchTools"]
        ran = await client.call_tool(
            "executeTool", {"tool_name": "mcp__time__get_current_time", "arguments": {"timezone": "UTC"}}
        )
        assert ran.structured_content is not None and ran.structured_content["ok"] is True


async def test_the_gateway_offers_and_runs_only_what_its_callers_actor_may_see(
    junior_runtime: RuntimeFactory,
) -> None:
    from junior_mcp_bridge.gateway import build_server

    from junior_core import Actor, Conversation, Source, Tool, ToolContext, hookimpl

    def echo(arguments: dict[str, Any], context: ToolContext) -> dict[str, Any]:
        return {"echo": arguments}

    class Plugin:
        @hookimpl
        def register_sources(self, register: Any) -> None:
            register(Source("desk", "Desk tools."), tools=[
                Tool("pin", "A pinned tool.", {"type": "object"}, echo, exposure="direct"),
                Tool("admin", "An admin tool.", {"type": "object"}, echo, exposure="direct"),
            ])

        @hookimpl
        def tool_visible(self, tool_name: str, context: ToolContext) -> bool | None:
            return tool_name != "desk__admin" or (context.actor is not None and context.actor.user_id == "root")

    rt = junior_runtime(Plugin())

    def context(user: str) -> ToolContext:
        return ToolContext(Actor("local", "local", user), Conversation("local", "local", "cli", thread_ts="1",
                                                                        visibility="public"))

    async with Client(build_server(rt, context("alice"))) as client:
        listed = {tool.name for tool in (await client.list_tools()).tools}
        assert listed == {"searchTools", "executeTool", "desk__pin"}
        answer = await client.call_tool("executeTool", {"tool_name": "desk__admin", "arguments": {}})
        assert answer.structured_content is not None
        assert answer.structured_content["error"]["code"] == "unknown_tool"
    async with Client(build_server(rt, context("root"))) as client:
        assert "desk__admin" in {tool.name for tool in (await client.list_tools()).tools}
        answer = await client.call_tool("desk__admin", {})
        assert answer.structured_content == {"ok": True, "tool_name": "desk__admin", "result": {"echo": {}}}
