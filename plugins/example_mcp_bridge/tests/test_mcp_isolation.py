"""MCP sessions keep answering whatever another plugin's handlers do, and so does ``junior mcp serve``."""

from __future__ import annotations

import asyncio
import sys
import textwrap
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from junior_mcp_bridge import MCPBridge, load_config
from mcp import Client, StdioServerParameters
from mcp_bridge_helpers import time_server, write_toml

from junior_core import Runtime, Source, Tool, hookimpl

OBJECT: dict[str, Any] = {"type": "object"}


class Blocking:
    """A source whose async handler blocks its event loop (a blocking call inside ``async def``)."""

    junior_plugin_name = "blocking"

    def __init__(self, release: threading.Event) -> None:
        self.release = release

    @hookimpl
    def register_sources(self, register: Any) -> None:
        async def blocks(arguments: dict[str, Any], context: Any) -> str:
            self.release.wait()
            return "late"

        register(Source("blocking", "Blocks."), tools=[Tool("wait", "Waits.", OBJECT, blocks, timeout_s=0.1)])


@pytest.fixture
def release() -> Iterator[threading.Event]:
    event = threading.Event()
    yield event
    event.set()


def test_an_async_handler_that_blocks_does_not_stall_mcp_tools(
    tmp_path: Path, no_orphans: None, release: threading.Event
) -> None:
    path = write_toml(tmp_path / "junior.toml", {"time": time_server(timeout_s=5)})
    configs = load_config(environ={"JUNIOR_CONFIG": str(path)})
    with Runtime(plugins=[MCPBridge(configs), Blocking(release)]) as rt:
        assert rt.execute_tool("blocking__wait")["error"]["code"] == "timeout"  # its loop stays blocked
        for out in (
            rt.execute_tool("mcp__time__get_current_time", {"timezone": "Europe/Berlin"}),
            asyncio.run(rt.aexecute_tool("mcp__time__get_current_time", {"timezone": "Europe/Berlin"})),
        ):
            assert out["ok"] is True, out
            assert out["result"]["structured_content"]["timezone"] == "Europe/Berlin"
        release.set()


SERVE = textwrap.dedent(
    """
    import sys
    from junior_core import Runtime, Source, Tool, hookimpl
    from junior_mcp_bridge.gateway import serve

    OBJECT = {"type": "object"}

    def sync_exit(arguments, context):
        raise SystemExit(2)

    async def async_exit(arguments, context):
        raise SystemExit(3)

    def interrupt(arguments, context):
        raise KeyboardInterrupt

    def hello(arguments, context):
        return "hello"

    class Exits:
        junior_plugin_name = "exits"

        @hookimpl
        def register_sources(self, register):
            register(Source("exits", "Handlers that exit."), tools=[
                Tool("sync_exit", "Exits.", OBJECT, sync_exit),
                Tool("async_exit", "Exits.", OBJECT, async_exit),
                Tool("interrupt", "Interrupts.", OBJECT, interrupt),
                Tool("hello", "Says hello.", OBJECT, hello),
            ])

    with Runtime(plugins=[Exits()]) as runtime:
        serve(runtime)
    """
)


@pytest.mark.slow
async def test_mcp_serve_over_stdio_survives_handlers_that_raise_system_exit(tmp_path: Path) -> None:
    script = tmp_path / "serve.py"
    script.write_text(SERVE)
    params = StdioServerParameters(command=sys.executable, args=[str(script)])
    async with Client(params, mode="legacy", read_timeout_seconds=30) as client:
        for name in ("exits__sync_exit", "exits__async_exit", "exits__interrupt"):
            failed = await client.call_tool("executeTool", {"tool_name": name})
            assert failed.structured_content is not None
            assert failed.structured_content["error"]["code"] == "tool_failed", failed
        ran = await client.call_tool("executeTool", {"tool_name": "exits__hello"})
        assert ran.structured_content is not None
        assert ran.structured_content["result"] == "hello"
