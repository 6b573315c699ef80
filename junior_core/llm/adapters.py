"""``model_tools()`` in the tool formats of the OpenAI and Anthropic APIs."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

__all__ = ["to_anthropic_tools", "to_openai_tools"]


def to_openai_tools(model_tools: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Chat Completions ``tools``: ``{"type": "function", "function": {"name", "description", "parameters"}}``."""
    return [
        {
            "type": "function",
            "function": {"name": t["name"], "description": t["description"], "parameters": t["input_schema"]},
        }
        for t in model_tools
    ]


def to_anthropic_tools(model_tools: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Messages API ``tools``: ``{"name", "description", "input_schema"}``, plus ``defer_loading`` when set."""
    return [
        {
            "name": t["name"],
            "description": t["description"],
            "input_schema": t["input_schema"],
            **({"defer_loading": True} if t.get("defer_loading") else {}),
        }
        for t in model_tools
    ]
