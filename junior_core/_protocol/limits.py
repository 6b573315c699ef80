"""Nesting limits for what a model sends: checked before anything recursive (validation, repr, json) sees it."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

__all__ = ["MAX_DEPTH", "MAX_INT_BITS", "loads", "too_deep", "too_long_number"]

MAX_DEPTH = 32
"""Deepest nesting of objects and arrays accepted in arguments; real tool arguments stay far below it, and
validating, printing or encoding ~1,000 levels would exhaust Python's recursion limit."""

_CONTAINERS = (dict, list, tuple)
MAX_INT_BITS = 14_000
"""Longest integer in arguments, in bits (about 4,200 digits): one longer cannot be printed or sent as JSON
(Python refuses to convert integers of more than 4,300 digits to text), so validation and the call would fail."""


def too_long_number(value: Any) -> str | None:
    """The path (``a/0/b``, ``(root)``) of the first integer in ``value`` longer than ``MAX_INT_BITS``, else None.

    For arguments given as Python values (a JSON text is checked as it is read); ``value`` is no deeper than
    ``MAX_DEPTH`` (checked first), so the walk is bounded.
    """
    todo: list[tuple[Any, str]] = [(value, "")]
    while todo:
        node, path = todo.pop()
        if isinstance(node, int) and not isinstance(node, bool):
            if node.bit_length() > MAX_INT_BITS:
                return path or "(root)"
        elif isinstance(node, Mapping):
            todo.extend((child, f"{path}/{key}" if path else str(key)) for key, child in node.items())
        elif isinstance(node, list | tuple):
            todo.extend((child, f"{path}/{index}" if path else str(index)) for index, child in enumerate(node))
    return None


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
