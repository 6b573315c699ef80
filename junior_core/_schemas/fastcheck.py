"""A quick validity test for the plain JSON Schemas most tools use, so valid calls skip jsonschema.

``compile_check(schema)`` returns a function that answers True only when the
instance is certainly valid, or None when the schema uses anything beyond the
plain subset below. jsonschema stays the authority: a False, or no function,
means the full validator runs and its errors are what the model sees.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from junior_core._schemas.patterns import searcher

__all__ = ["compile_check"]

Check = Callable[[Any], bool]
_ANNOTATIONS = {"description", "title", "default", "examples", "$comment", "$schema", "format", "deprecated"}
_SUPPORTED = _ANNOTATIONS | {
    "type",
    "properties",
    "required",
    "additionalProperties",
    "items",
    "enum",
    "minimum",
    "maximum",
    "minLength",
    "maxLength",
    "minItems",
    "maxItems",
    "pattern",
}


def _is_integer(value: Any) -> bool:
    if isinstance(value, bool):
        return False
    return isinstance(value, int) or (isinstance(value, float) and value.is_integer())


_TYPES: dict[str, Check] = {
    "string": lambda v: isinstance(v, str),
    "integer": _is_integer,
    "number": lambda v: isinstance(v, int | float) and not isinstance(v, bool),
    "boolean": lambda v: isinstance(v, bool),
    "null": lambda v: v is None,
    "array": lambda v: isinstance(v, list),
    "object": lambda v: isinstance(v, dict),
}


def compile_check(schema: Any) -> Check | None:
    """A function telling certainly-valid instances of ``schema`` apart, or None if the schema is not plain."""
    if not isinstance(schema, Mapping) or not set(schema) <= _SUPPORTED:
        return None
    checks: list[Check] = []
    kind = schema.get("type")
    if kind is not None:
        kinds = [kind] if isinstance(kind, str) else kind
        if not isinstance(kinds, list) or not all(k in _TYPES for k in kinds):
            return None
        tests = [_TYPES[k] for k in kinds]
        checks.append(lambda v: any(test(v) for test in tests))
    if "enum" in schema:
        options = schema["enum"]
        if not isinstance(options, list) or not all(isinstance(o, str) for o in options):
            return None  # jsonschema's equality for numbers and booleans is subtler than ==
        allowed = frozenset(options)
        checks.append(lambda v: isinstance(v, str) and v in allowed)
    for key in ("minimum", "maximum", "minLength", "maxLength", "minItems", "maxItems"):
        if key in schema:
            bound = _bound_check(key, schema[key])
            if bound is None:
                return None
            checks.append(bound)
    if "pattern" in schema:
        # RE2, never ``re``: a schema's pattern may be crafted to backtrack for minutes.
        found = searcher(schema["pattern"]) if isinstance(schema["pattern"], str) else None
        if found is None:
            return None
        checks.append(lambda v: not isinstance(v, str) or found(v))
    if "items" in schema:
        item_check = compile_check(schema["items"])
        if item_check is None:
            return None
        checks.append(lambda v: not isinstance(v, list) or all(item_check(i) for i in v))
    object_check = _object_check(schema)
    if object_check is False:
        return None
    if object_check is not True:
        checks.append(object_check)
    return lambda v: all(check(v) for check in checks)


def _bound_check(key: str, bound: Any) -> Check | None:
    """The check of one bound keyword; like jsonschema, it ignores instances of other types."""
    if isinstance(bound, bool) or not isinstance(bound, int | float):
        return None
    if key == "minimum":
        return lambda v: not _TYPES["number"](v) or v >= bound
    if key == "maximum":
        return lambda v: not _TYPES["number"](v) or v <= bound
    if not isinstance(bound, int):
        return None
    applies = _TYPES["string"] if key.endswith("Length") else _TYPES["array"]
    if key.startswith("min"):
        return lambda v: not applies(v) or len(v) >= bound
    return lambda v: not applies(v) or len(v) <= bound


def _object_check(schema: Mapping[str, Any]) -> Check | bool:
    """The object keywords' check; True when there are none, False when they are not plain."""
    props = schema.get("properties", {})
    required = schema.get("required", [])
    extra = schema.get("additionalProperties", True)
    if not isinstance(props, Mapping) or not isinstance(required, list) or not isinstance(extra, bool):
        return False
    if not props and not required and extra:
        return True
    compiled: dict[str, Check] = {}
    for name, sub in props.items():
        check = compile_check(sub)
        if check is None:
            return False
        compiled[name] = check
    needed = tuple(required)

    def check_object(value: Any) -> bool:
        if not isinstance(value, dict):
            return True
        if any(name not in value for name in needed):
            return False
        for key, item in value.items():
            check = compiled.get(key)
            if check is None:
                if not extra:
                    return False
            elif not check(item):
                return False
        return True

    return check_object
