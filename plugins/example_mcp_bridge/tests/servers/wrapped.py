"""An MCPServer (the SDK's high-level server) whose tools return plain values: the SDK sends each as text and
again as structured content ``{"result": ...}``. For the bridge's no-duplicate-content test."""

from __future__ import annotations

from mcp.server.mcpserver import MCPServer

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


if __name__ == "__main__":
    server.run()
