"""An ``input_schema`` cut down for a searchTools answer over its size limit (``protocol`` words the note).

First to its outline, which still tells the model what to send (top-level property names and types, what is
required, whether other properties are allowed); past that to nothing but ``{"type": "object"}``. executeTool
still checks arguments against the full schema either way.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["compact_params", "schema_omitted", "schema_outline"]


def schema_outline(schema: Mapping[str, Any]) -> dict[str, Any]:
    """An ``input_schema`` cut to its shape: top-level property names and types, ``required``, and whether other
    properties are allowed."""
    out: dict[str, Any] = {"type": "object"}
    properties = schema.get("properties")
    if isinstance(properties, Mapping):
        out["properties"] = {str(name): _outline_type(sub) for name, sub in properties.items()}
    required = schema.get("required")
    if isinstance(required, list):
        out["required"] = required
    additional = schema.get("additionalProperties")
    if isinstance(additional, bool):
        out["additionalProperties"] = additional
    return out


def _outline_type(node: Any) -> dict[str, Any]:
    kind = node.get("type") if isinstance(node, Mapping) else None
    if isinstance(kind, str) or (isinstance(kind, list) and all(isinstance(item, str) for item in kind)):
        return {"type": kind}
    return {}


def schema_omitted(schema: Mapping[str, Any]) -> dict[str, Any]:
    """What is left of an ``input_schema`` when even its outline does not fit."""
    return {"type": "object"}


PARAMS_LIMIT = 300
"""The most characters a tool's compact ``params`` take; past it the rest are counted, not named."""
_ENUM_SHOWN = 3
_KEYS_SHOWN = 6


def compact_params(schema: Mapping[str, Any]) -> str:
    """A tool's parameters in one line for a searchTools row: ``name: type``, ``(required)``, an enum's first
    values, an object's top-level keys, an array's item type; ``""`` when it takes none."""
    properties = schema.get("properties")
    if not isinstance(properties, Mapping):
        return ""
    required = schema.get("required")
    needed = set(required) if isinstance(required, list) else set()
    parts = [_param(str(name), sub, name in needed) for name, sub in properties.items()]
    out: list[str] = []
    size = 0
    for i, part in enumerate(parts):
        rest = len(parts) - i - 1
        tail = len(f", ... ({rest} more)") if rest else 0
        if size + len(part) + 2 + tail > PARAMS_LIMIT:
            out.append(f"... ({len(parts) - i} more)")
            break
        out.append(part)
        size += len(part) + 2
    return ", ".join(out)


def _param(name: str, node: Any, required: bool) -> str:
    notes = ["required"] if required else []
    enum = node.get("enum") if isinstance(node, Mapping) else None
    if isinstance(enum, list) and enum:
        shown = "|".join(_short(value) for value in enum[:_ENUM_SHOWN])
        notes.append(f"one of {shown}" + ("|..." if len(enum) > _ENUM_SHOWN else ""))
    return f"{_short(name, 60)}: {_kind(node)}" + (f" ({', '.join(notes)})" if notes else "")


def _kind(node: Any, depth: int = 0) -> str:
    if not isinstance(node, Mapping):
        return "any"
    kind = node.get("type")
    if isinstance(kind, list) and kind and all(isinstance(item, str) for item in kind):
        return "|".join(kind)
    if not isinstance(kind, str):
        options = node.get("anyOf") or node.get("oneOf")
        if isinstance(options, list) and options and depth < 2:
            return "|".join(dict.fromkeys(_kind(option, depth + 1) for option in options))
        if isinstance(node.get("properties"), Mapping):
            kind = "object"
        else:
            return "any"
    if kind == "array" and depth < 2:
        items = node.get("items")
        return f"array of {_kind(items, depth + 1)}" if isinstance(items, Mapping) and items else "array"
    if kind == "object":
        keys = node.get("properties")
        if isinstance(keys, Mapping) and keys:
            names = [_short(str(key), 40) for key in list(keys)[:_KEYS_SHOWN]]
            return "object {" + ", ".join(names) + (", ..." if len(keys) > _KEYS_SHOWN else "") + "}"
    return kind


def _short(value: Any, limit: int = 30) -> str:
    text = value if isinstance(value, str) else repr(value)
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."
