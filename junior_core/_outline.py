"""An ``input_schema`` cut down for a searchTools answer over its size limit (``protocol`` words the note).

First to its outline, which still tells the model what to send (top-level property names and types, what is
required, whether other properties are allowed); past that to nothing but ``{"type": "object"}``. executeTool
still checks arguments against the full schema either way.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["schema_omitted", "schema_outline"]


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
