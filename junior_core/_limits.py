"""Nesting limits for what a model sends: checked before anything recursive (validation, repr, json) sees it."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

__all__ = ["MAX_DEPTH", "loads", "too_deep"]

MAX_DEPTH = 32
"""Deepest nesting of objects and arrays accepted in arguments; real tool arguments stay far below it, and
validating, printing or encoding ~1,000 levels would exhaust Python's recursion limit."""

_CONTAINERS = (dict, list, tuple)


def too_deep(value: Any, limit: int = MAX_DEPTH) -> bool:
    """Whether ``value`` nests objects or arrays more than ``limit`` levels deep; iterative, so it cannot recurse."""
    if isinstance(value, Mapping):
        level: list[Any] = [value]
    elif isinstance(value, list | tuple):
        level = [value]
    else:
        return False
    depth = 0
    while level:
        depth += 1
        if depth > limit:
            return True  # a structure that contains itself ends here too
        deeper = []
        for node in level:
            for child in node.values() if isinstance(node, Mapping) else node:
                if isinstance(child, _CONTAINERS):
                    deeper.append(child)
        level = deeper
    return False


def loads(text: str) -> Any:
    """``json.loads`` that answers too deep a nesting, or a number too long to convert, with ``JSONDecodeError``."""
    try:
        value = json.loads(text)
    except RecursionError:
        value = None
        deep = True
    except json.JSONDecodeError:
        raise
    except ValueError as exc:  # an integer of more than 4,300 digits (sys.set_int_max_str_digits)
        raise json.JSONDecodeError(f"a number too long to read ({exc})", text, 0) from None
    else:
        deep = too_deep(value)
    if deep:
        raise json.JSONDecodeError(f"objects or arrays nested more than {MAX_DEPTH} levels deep", text, 0)
    return value
