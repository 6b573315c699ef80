"""Every public exception of junior, under one ``JuniorError`` base.

``ToolError`` is data for the model; the rest are exceptions for the host developer, each naming what failed
(the plugin, the function, the file). Where callers already catch a built-in (``TypeError`` for a bad function,
``ValueError`` for a bad file), that built-in stays a base too.
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "ConfigError",
    "JuniorError",
    "ModelConfigError",
    "PluginError",
    "RegistrationError",
    "ToolDefinitionError",
    "ToolError",
]


class JuniorError(Exception):
    """The base of every exception junior raises on purpose; ``except JuniorError`` catches them all."""


class ToolError(JuniorError):
    """Raised by a handler to fail on purpose with its own code, e.g. ``not_found``.

    The code, message and JSON-serialisable details reach the model as
    ``{"ok": false, "error": {"code", "message", **details}}``; say what to do next.
    """

    def __init__(self, code: str, message: str, **details: Any) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.details = details


class PluginError(JuniorError):
    """A plugin failed to load or misbehaved; the message names the plugin."""

    def __init__(self, plugin: str, message: str) -> None:
        super().__init__(f"plugin {plugin!r}: {message}")
        self.plugin = plugin


class RegistrationError(PluginError):
    """A plugin registered something invalid or already taken."""


class ToolDefinitionError(JuniorError, TypeError):
    """A function cannot become a tool (unsupported type hint, missing docstring, ...); the message names it."""


class ConfigError(JuniorError, ValueError):
    """A configuration file that cannot be used; the message names the file and the field."""


class ModelConfigError(JuniorError):
    """A model could not be configured: bad ``JUNIOR_MODEL`` spec, missing SDK or credentials."""
