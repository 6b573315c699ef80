"""junior: many tools for an agent, found with searchTools and run with executeTool."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from junior_core.catalog import Source, Tool, make_tool_name
from junior_core.context import Actor, Conversation, Message, ToolContext, parse_slack_ts
from junior_core.errors import (
    ConfigError,
    JuniorError,
    ModelConfigError,
    PluginError,
    RegistrationError,
    ToolDefinitionError,
    ToolError,
)
from junior_core.hookspecs import hookimpl

if TYPE_CHECKING:
    from junior_core.functions import Param, tool
    from junior_core.runtime import Runtime

__all__ = [
    "Actor",
    "ConfigError",
    "Conversation",
    "JuniorError",
    "Message",
    "ModelConfigError",
    "Param",
    "PluginError",
    "RegistrationError",
    "Runtime",
    "Source",
    "Tool",
    "ToolContext",
    "ToolDefinitionError",
    "ToolError",
    "hookimpl",
    "make_tool_name",
    "parse_slack_ts",
    "tool",
]


def __getattr__(name: str) -> Any:
    # The runtime pulls in the search and execution machinery; plugins importing
    # ``hookimpl`` and ``Tool`` should not pay for it.
    if name == "Runtime":
        from junior_core.runtime import Runtime

        return Runtime
    if name in ("tool", "Param"):
        # Marking costs nothing; the schema generator (junior_core.signatures) loads when a tool is registered.
        from junior_core import functions

        return getattr(functions, name)
    raise AttributeError(f"module 'junior_core' has no attribute {name!r}")
