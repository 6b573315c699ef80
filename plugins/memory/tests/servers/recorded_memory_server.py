"""A stdio MCP server that offers one recorded memory-like server's tools: ``python recorded_memory_server.py NAME``.

NAME is a key of ``data/other_memory_servers.json`` (``basic-memory``, ``memory``): the tools' names, descriptions
and input schemas are those the real server listed in LiveMCPBench's catalog, so searchTools weighs them as it
would the real server's. Each tool answers only that it is a stand-in: what is tested is which tool ranks first.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.tools.base import Tool

RECORDED = Path(__file__).parent.parent / "data" / "other_memory_servers.json"


def stand_in(name: str) -> Any:
    def answer() -> str:
        return f"{name}: a stand-in for the recorded tool, nothing was read or changed"

    return answer


def main(name: str) -> None:
    server = json.loads(RECORDED.read_text(encoding="utf-8"))[name]
    tools = [
        # The recorded input schema replaces the one the stand-in's signature would give.
        Tool.from_function(stand_in(tool["name"]), name=tool["name"], description=tool["description"]).model_copy(
            update={"parameters": tool["inputSchema"]})
        for tool in server["tools"]
    ]
    MCPServer(server["name"], instructions=server["description"], tools=tools).run("stdio")


if __name__ == "__main__":
    main(sys.argv[1])
