"""Errors: ``ToolError`` is data for the model; the rest are exceptions for the host developer."""

from __future__ import annotations

from typing import Any

__all__ = ["PluginError", "RegistrationError", "ToolError"]


class ToolError(Exception):
    """Raised by a handler to fail on purpose with its own code, e.g. ``not_found``.

    The code, message and JSON-serialisable details reach the model as
    ``{"ok": false, "error": {"code", "message", **details}}``; say what to do next.
    """

    def __init__(self, code: str, message: str, **details: Any) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.details = details



class PluginError(Exception):
    """A plugin failed to load or misbehaved; the message names the plugin."""

    def __init__(self, plugin: str, message: str) -> None:
        super().__init__(f"plugin {plugin!r}: {message}")
        self.plugin = plugin


class RegistrationError(PluginError):
    """A plugin registered something invalid or already taken."""
