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
    "ModelError",
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



class ModelError(JuniorError):
    """The model could not answer: unreachable, refused the request, or sent something unreadable.

    ``model`` is the model's name (``openai-compatible:http://127.0.0.1:8080/v1#local``), ``reason`` what went
    wrong. Raised by ``run_turn``/``arun_turn``, ``turn`` is the partial turn: the tool calls already made and
    their results (a memory may have been saved), with ``stop_reason == "model_error"``; ``after_turn`` has already
    seen it. The SDK's own exception is the ``__cause__``.
    """

    # ``turn`` is a ``junior_core.llm.Turn``, typed loosely: errors.py is beneath every module and imports none.
    def __init__(self, model: str, reason: str, turn: Any = None) -> None:
        super().__init__(f"model {model} failed: {reason}")
        self.model = model
        self.reason = reason
        self.turn = turn


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
