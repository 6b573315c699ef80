"""junior: many tools for an agent, found with searchTools and run with executeTool."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from junior_core.catalog import Source, Tool, make_tool_name, modern_schema
from junior_core.context import Actor, Conversation, Message, ToolContext, local_context, parse_slack_ts
from junior_core.errors import (
    ConfigError,
    JuniorError,
    ModelConfigError,
    ModelError,
    PluginError,
    RegistrationError,
    ToolDefinitionError,
    ToolError,
)
from junior_core.hookspecs import hookimpl
from junior_core.text import clean_json, clean_text

if TYPE_CHECKING:
    from junior_core.config import config_path, plugin_settings
    from junior_core.functions import Param, tool
    from junior_core.options import RuntimeOptions
    from junior_core.registry import Register
    from junior_core.runtime import Runtime
    from junior_core.tables import print_table

__all__ = [
    "Actor",
    "ConfigError",
    "Conversation",
    "JuniorError",
    "Message",
    "ModelConfigError",
    "ModelError",
    "Param",
    "PluginError",
    "Register",
    "RegistrationError",
    "Runtime",
    "RuntimeOptions",
    "Source",
    "Tool",
    "ToolContext",
    "ToolDefinitionError",
    "ToolError",
    "clean_json",
    "clean_text",
    "config_path",
    "hookimpl",
    "local_context",
    "make_tool_name",
    "modern_schema",
    "parse_slack_ts",
    "plugin_settings",
    "print_table",
    "tool",
]


def __getattr__(name: str) -> Any:
    # The runtime pulls in the search and execution machinery; plugins importing
    # ``hookimpl`` and ``Tool`` should not pay for it.
    if name == "Runtime":
        from junior_core.runtime import Runtime

        return Runtime
    if name == "RuntimeOptions":
        from junior_core.options import RuntimeOptions

        return RuntimeOptions
    if name == "Register":  # plugins name it in type hints; the runtime loads it before register_sources
        from junior_core.registry import Register

        return Register
    if name in ("tool", "Param"):
        # Marking costs nothing; the schema generator (junior_core.signatures) loads when a tool is registered.
        from junior_core import functions

        return getattr(functions, name)
    if name == "print_table":  # for plugins' commands: click loads with the CLI, not with a plugin
        from junior_core.tables import print_table

        return print_table
    if name in ("config_path", "plugin_settings"):  # for plugins' own settings; read when a plugin configures itself
        from junior_core import config

        return getattr(config, name)
    raise AttributeError(f"module 'junior_core' has no attribute {name!r}")
