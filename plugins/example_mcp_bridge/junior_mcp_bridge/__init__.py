"""junior-mcp-bridge: the tools of any MCP server as a junior source ``mcp:<name>``, and junior as an MCP server."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from junior_mcp_bridge.config import ConfigError, ServerConfig, load_config
    from junior_mcp_bridge.plugin import MCPBridge

__all__ = ["ConfigError", "MCPBridge", "ServerConfig", "load_config"]

_WHERE = {
    "ConfigError": "junior_mcp_bridge.config",
    "MCPBridge": "junior_mcp_bridge.plugin",
    "ServerConfig": "junior_mcp_bridge.config",
    "load_config": "junior_mcp_bridge.config",
}


def __getattr__(name: str) -> Any:
    # Lazy, so loading the plugin (`junior --help`) does not build config.py's attrs classes.
    if name == "__version__":  # the installed distribution's, from its metadata
        from importlib.metadata import PackageNotFoundError, version

        try:
            return version("junior-mcp-bridge")
        except PackageNotFoundError:  # a source tree on sys.path, never installed
            return "0+unknown"
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module 'junior_mcp_bridge' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(module), name)
