"""junior-mcp-bridge: the tools of any MCP server as a junior source ``mcp:<name>``, and junior as an MCP server."""

from __future__ import annotations

from junior_mcp_bridge.config import ConfigError, ServerConfig, load_config
from junior_mcp_bridge.plugin import MCPBridge

__all__ = ["ConfigError", "MCPBridge", "ServerConfig", "load_config"]
