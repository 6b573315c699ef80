"""An MCPServer (the SDK's high-level server) whose tools return plain values: the SDK sends each as text and
again as structured content ``{"result": ...}``; and tools that send both copies the way two reference servers
do (a file's text and ``{"content": text}``; pretty-printed JSON and ``{"entities": [...]}``). For the bridge's
no-duplicate-content test."""

from __future__ import annotations

import json

from mcp.server.mcpserver import MCPServer
from mcp_types import CallToolResult, TextContent

server = MCPServer("wrapped")


@server.tool()
def greet(name: str) -> str:
    """Greet someone by name."""
    return f"Hello, {name}!"


@server.tool()
def rows(count: int) -> list[dict[str, int]]:
    """Return ``count`` small rows."""
    return [{"n": i} for i in range(count)]


@server.tool()
def total(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


@server.tool()
def read_file(path: str) -> CallToolResult:
    """Read a file (as server-filesystem answers: the text, and again as {"content": text})."""
    text = f"line one of {path}\nline two"
    return CallToolResult(content=[TextContent(type="text", text=text)], structured_content={"content": text})


@server.tool()
def create_entities(names: list[str]) -> CallToolResult:
    """Create entities (as server-memory answers: the list as indented JSON, and again as {"entities": list})."""
    made = [{"name": name, "entityType": "person", "observations": []} for name in names]
    return CallToolResult(content=[TextContent(type="text", text=json.dumps(made, indent=2))],
                          structured_content={"entities": made})


@server.tool()
def summary(path: str) -> CallToolResult:
    """Text that says more than its structure: both are kept."""
    return CallToolResult(content=[TextContent(type="text", text=f"{path} has 2 lines")],
                          structured_content={"content": "line one\nline two"})


if __name__ == "__main__":
    server.run()
