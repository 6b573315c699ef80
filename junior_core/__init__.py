"""junior: many tools for an agent, found with searchTools and run with executeTool."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from junior_core._base.errors import (
    ConfigError,
    JuniorError,
    ModelConfigError,
    ModelError,
    PluginError,
    RegistrationError,
    ToolDefinitionError,
    ToolError,
)
from junior_core._catalog.catalog import CatalogTool, Source, SourceInfo, Tool
from junior_core._plugins.hookspecs import hookimpl
from junior_core.context import Actor, Conversation, Message, ToolContext, local_context

if TYPE_CHECKING:
    from junior_core._base.config import config_path, plugin_settings
    from junior_core._plugins.loading import PluginInfo
    from junior_core._plugins.registry import Register
    from junior_core._runtime.options import RuntimeOptions
    from junior_core._runtime.runtime import Runtime
    from junior_core._schemas.functions import Exposure, Param, tool

# The API: what plugins and hosts may import, listed with the documented submodules in docs/internals.md.
__all__ = [
    "Actor",
    "CatalogTool",
    "ConfigError",
    "Conversation",
    "Exposure",
    "JuniorError",
    "Message",
    "ModelConfigError",
    "ModelError",
    "Param",
    "PluginError",
    "PluginInfo",
    "Register",
    "RegistrationError",
    "Runtime",
    "RuntimeOptions",
    "Source",
    "SourceInfo",
    "Tool",
    "ToolContext",
    "ToolDefinitionError",
    "ToolError",
    "config_path",
    "hookimpl",
    "local_context",
    "plugin_settings",
    "tool",
]


# Names moved out of ``junior_core`` in 0.3 without a warning; per the deprecation policy (docs/internals.md) they
# still resolve here, warning, through 0.3.x, and are gone in 0.4.
_MOVED = {"clean_text": "junior_core.text", "clean_json": "junior_core.text", "print_table": "junior_core.tables",
         "parse_slack_ts": "junior_core.context"}


def __getattr__(name: str) -> Any:
    if name in _MOVED:
        import importlib
        import warnings

        warnings.warn(f"junior_core.{name} is deprecated and goes in junior-core 0.4: import it from {_MOVED[name]}",
                      DeprecationWarning, stacklevel=2)
        return getattr(importlib.import_module(_MOVED[name]), name)
    if name == "__version__":  # the installed distribution's, read when asked: importing junior_core stays cheap
        from importlib.metadata import PackageNotFoundError, version

        try:
            return version("junior-core")
        except PackageNotFoundError:  # a source tree on sys.path, never installed
            return "0+unknown"
    # The runtime pulls in the search and execution machinery; plugins importing
    # ``hookimpl`` and ``Tool`` should not pay for it.
    if name == "Runtime":
        from junior_core._runtime.runtime import Runtime

        return Runtime
    if name == "RuntimeOptions":
        from junior_core._runtime.options import RuntimeOptions

        return RuntimeOptions
    if name == "Register":  # plugins name it in type hints; the runtime loads it before register_sources
        from junior_core._plugins.registry import Register

        return Register
    if name in ("tool", "Param", "Exposure"):
        # Marking costs nothing; the schema generator (junior_core._schemas.signatures) loads when a tool is registered.
        from junior_core._schemas import functions

        return getattr(functions, name)
    if name == "PluginInfo":  # what Runtime.plugins lists; the loading machinery (pluggy) comes with it
        from junior_core._plugins.loading import PluginInfo

        return PluginInfo
    if name in ("config_path", "plugin_settings"):  # for plugins' own settings; read when a plugin configures itself
        from junior_core._base import config

        return getattr(config, name)
    raise AttributeError(f"module 'junior_core' has no attribute {name!r}")
