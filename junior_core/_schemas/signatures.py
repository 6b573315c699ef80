"""What a typed function says as a tool: its JSON Schema (from its type hints), its description (from its
docstring), and the handler calling it with keyword arguments.

Data only: ``Tool.from_function`` (``junior_core._catalog.catalog``) builds the ``Tool`` from it. Imported only when a
function becomes a tool; each function is analysed once and the result cached, however many runtimes register it.
"""

from __future__ import annotations

import dataclasses
import enum
import inspect
import json
import threading
import types
import typing
import weakref
from collections.abc import Callable, Iterable, Mapping
from typing import Any, Literal

import attrs

from junior_core._base.errors import ToolDefinitionError, ToolError
from junior_core._schemas.docstrings import parse_docstring
from junior_core._schemas.functions import Param
from junior_core.context import ToolContext

__all__ = ["Argument", "Signature", "analyse", "handler"]

SUPPORTED = (
    "str, int, float, bool, None, Literal[...], an Enum, list[X], tuple[X, ...], dict[str, X], X | None, "
    "an attrs class, a dataclass or a TypedDict, optionally inside Annotated[X, 'description'] or "
    "Annotated[X, Param(...)]"
)

# The JSON Schema keyword of each Param bound, and the JSON types it applies to.
_BOUNDS: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    ("minimum", "minimum", ("integer", "number")),
    ("maximum", "maximum", ("integer", "number")),
    ("exclusive_minimum", "exclusiveMinimum", ("integer", "number")),
    ("exclusive_maximum", "exclusiveMaximum", ("integer", "number")),
    ("min_length", "minLength", ("string",)),
    ("max_length", "maxLength", ("string",)),
    ("pattern", "pattern", ("string",)),
    ("min_items", "minItems", ("array",)),
    ("max_items", "maxItems", ("array",)),
)


# -- analysis ----------------------------------------------------------------------------------------------------
Converter = Callable[[Any], Any]
"""Turns a validated JSON value into what the function's type hint asks for (an enum member, an attrs instance)."""


@attrs.frozen
class Argument:
    name: str
    convert: Converter | None


@attrs.frozen
class Signature:
    """What a function's signature and docstring say, computed once per function."""

    qualname: str
    name: str
    description: str
    schema: dict[str, Any]
    arguments: tuple[Argument, ...]
    context_params: tuple[str, ...]
    is_async: bool


_cache: weakref.WeakKeyDictionary[Callable[..., Any], dict[bool, Signature]] = weakref.WeakKeyDictionary()
_cache_lock = threading.Lock()


def analyse(fn: Callable[..., Any]) -> Signature:
    """The schema, description and argument mapping of ``fn``; raises ``ToolDefinitionError`` naming it."""
    bound = inspect.ismethod(fn)
    target = getattr(fn, "__func__", fn) if bound else fn
    if not inspect.isfunction(target):
        raise ToolDefinitionError(
            f"a tool is made from a function or method, got {type(fn).__name__} {fn!r}; "
            "wrap it in a def with type hints"
        )
    with _cache_lock:
        cached = _cache.get(target, {}).get(bound)
    if cached is not None:
        return cached
    signature = _analyse(target, bound)
    with _cache_lock:
        _cache.setdefault(target, {})[bound] = signature
    return signature


def _qualname(fn: Callable[..., Any]) -> str:
    return f"{fn.__module__}.{fn.__qualname__}"


def _analyse(fn: types.FunctionType, bound: bool) -> Signature:
    qualname = _qualname(fn)
    description, param_docs = parse_docstring(fn.__doc__ or "")
    params = list(inspect.signature(fn).parameters.values())
    if bound and params:
        params = params[1:]  # self or cls
    properties: dict[str, Any] = {}
    required: list[str] = []
    arguments: list[Argument] = []
    context_params: list[str] = []
    for param in params:
        where = f"tool function {qualname}: parameter {param.name!r}"
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            raise ToolDefinitionError(f"{where}: *args and **kwargs cannot be described by a schema; name each one")
        if param.kind is param.POSITIONAL_ONLY:
            raise ToolDefinitionError(f"{where} is positional-only; arguments are passed by name")
        hint = _resolve(fn, param.name, where)
        if _is_context(hint):
            context_params.append(param.name)
            continue
        optional = param.default is not param.empty
        schema, convert = _schema(hint, where, optional_none=optional and param.default is None, seen=())
        if "description" not in schema and param.name in param_docs:
            schema["description"] = param_docs[param.name]
        if optional:
            _set_default(schema, param.default)
        else:
            required.append(param.name)
        properties[param.name] = schema
        arguments.append(Argument(param.name, convert))
    schema_out: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        schema_out["required"] = required
    schema_out["additionalProperties"] = False
    return Signature(
        qualname=qualname,
        name=fn.__name__,
        description=description,
        schema=schema_out,
        arguments=tuple(arguments),
        context_params=tuple(context_params),
        # A functools.wraps decorator around an async def returns its coroutine: await it.
        is_async=inspect.iscoroutinefunction(fn) or inspect.iscoroutinefunction(inspect.unwrap(fn)),
    )


def _resolve(fn: types.FunctionType, name: str, where: str) -> Any:
    """One parameter's type hint, evaluated alone so an unresolvable return annotation does not matter."""
    raw = fn.__annotations__.get(name, inspect.Parameter.empty)
    if raw is inspect.Parameter.empty:
        raise ToolDefinitionError(f"{where} has no type hint; annotate it ({SUPPORTED})")
    holder = types.SimpleNamespace(__annotations__={name: raw})
    try:
        # String hints belong to the module that wrote them, not to a decorator's (functools.wraps).
        globalns = getattr(inspect.unwrap(fn), "__globals__", fn.__globals__)
        return typing.get_type_hints(holder, globalns=globalns, include_extras=True)[name]
    except Exception as exc:  # noqa: BLE001 - any failure to evaluate a hint is the function's to fix
        raise ToolDefinitionError(
            f"{where}: cannot resolve the type hint {raw if isinstance(raw, str) else _show(raw)} "
            f"({type(exc).__name__}: {exc}); import the names it "
            "uses at run time (not under TYPE_CHECKING) and define classes at module level"
        ) from None


def _is_context(hint: Any) -> bool:
    if hint is ToolContext:
        return True
    args = typing.get_args(hint)
    return _is_union(hint) and ToolContext in args and all(a in (ToolContext, type(None)) for a in args)


def _is_union(hint: Any) -> bool:
    return typing.get_origin(hint) in (typing.Union, types.UnionType)


def _json_type(values: Iterable[Any]) -> str | None:
    kinds = {type(value) for value in values}
    for python, name in ((str, "string"), (bool, "boolean"), (int, "integer"), (float, "number")):
        if kinds == {python}:
            return name
    return None


def _set_default(schema: dict[str, Any], default: Any) -> None:
    """``default`` in the schema when it is plain JSON; None means "omitted", so it is not shown."""
    if default is None:
        return
    value = _to_json(default)
    try:
        json.dumps(value, allow_nan=False)
    except (TypeError, ValueError):
        return
    schema["default"] = value


def _to_json(value: Any) -> Any:
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, tuple | list):
        return [_to_json(item) for item in value]
    return value


def _int(value: Any) -> Any:
    # JSON Schema's "integer" accepts 5.0; the function asked for an int.
    return int(value) if isinstance(value, float) and value.is_integer() else value


def _schema(hint: Any, where: str, *, optional_none: bool = False, seen: tuple[type, ...]) -> tuple[
    dict[str, Any], Converter | None
]:
    """JSON Schema and converter for ``hint``; ``optional_none``: a None default, so ``X | None`` is just X."""
    origin = typing.get_origin(hint)
    if origin is typing.Annotated:
        base, *metadata = typing.get_args(hint)
        schema, convert = _schema(base, where, optional_none=optional_none, seen=seen)
        for item in metadata:
            _apply_metadata(schema, item, where)
        return schema, convert
    if _is_union(hint):
        members = [m for m in typing.get_args(hint) if m is not type(None)]
        nullable = len(members) < len(typing.get_args(hint))
        parts = [_schema(m, where, seen=seen) for m in members]
        if len(parts) == 1 and (optional_none or not nullable):
            return parts[0]
        converts = {convert for _, convert in parts if convert is not None}
        if len(parts) > 1 and converts - {_int}:
            raise ToolDefinitionError(
                f"{where}: unsupported type hint {_show(hint)}: a union may combine an object, enum or tuple "
                "only with None"
            )
        schemas = [schema for schema, _ in parts] + ([{"type": "null"}] if nullable else [])
        member_convert = parts[0][1] if len(parts) == 1 else (_int if converts else None)
        if member_convert is None:
            return {"anyOf": schemas}, None
        return {"anyOf": schemas}, lambda value: None if value is None else member_convert(value)
    if hint is str:
        return {"type": "string"}, None
    if hint is bool:
        return {"type": "boolean"}, None
    if hint is int:
        return {"type": "integer"}, _int
    if hint is float:
        return {"type": "number"}, None
    if hint is type(None) or hint is None:
        return {"type": "null"}, None
    if origin is Literal:
        values = list(typing.get_args(hint))
        if not all(value is None or isinstance(value, str | int | float | bool) for value in values):
            raise ToolDefinitionError(f"{where}: Literal values must be strings, numbers, booleans or None")
        schema = {"type": kind} if (kind := _json_type(values)) else {}
        # 1.0 arrives for Literal[1, 2] too: make it the int the function was promised, as for int parameters.
        ints = all(isinstance(value, int) and not isinstance(value, bool) for value in values)
        return {**schema, "enum": values}, _int if ints else None
    if isinstance(hint, type) and issubclass(hint, enum.Enum):
        values = [member.value for member in hint]
        if not all(isinstance(value, str | int | float | bool) for value in values):
            raise ToolDefinitionError(f"{where}: the values of enum {hint.__name__} must be strings or numbers")
        schema = {"type": kind} if (kind := _json_type(values)) else {}
        return {**schema, "enum": values}, hint
    if origin in (list, tuple, dict) or hint in (list, tuple, dict):
        return _container(hint, origin, where, seen)
    if isinstance(hint, type) and (attrs.has(hint) or dataclasses.is_dataclass(hint) or typing.is_typeddict(hint)):
        return _object(hint, where, seen)
    if hint is ToolContext:
        raise ToolDefinitionError(f"{where}: a ToolContext is given only as a parameter of the function itself")
    raise ToolDefinitionError(f"{where}: unsupported type hint {_show(hint)}; use {SUPPORTED}")


def _show(hint: Any) -> str:
    return hint.__name__ if isinstance(hint, type) else repr(hint).replace("typing.", "")


def _container(hint: Any, origin: Any, where: str, seen: tuple[type, ...]) -> tuple[dict[str, Any], Converter | None]:
    args = typing.get_args(hint)
    if not args:
        name = getattr(hint, "__name__", str(hint))
        example = {"list": "list[str]", "tuple": "tuple[str, ...]", "dict": "dict[str, int]"}.get(name, name)
        raise ToolDefinitionError(f"{where}: say what {name} holds, e.g. {example}")
    if origin is list:
        items, convert = _schema(args[0], where, seen=seen)
        if convert is None:
            return {"type": "array", "items": items}, None
        item_convert = convert
        return {"type": "array", "items": items}, lambda value: [item_convert(item) for item in value]
    if origin is dict:
        if args[0] is not str:
            raise ToolDefinitionError(f"{where}: JSON object keys are strings; use dict[str, ...], not {_show(hint)}")
        values, convert = _schema(args[1], where, seen=seen)
        schema: dict[str, Any] = {"type": "object", "additionalProperties": values}
        if convert is None:
            return schema, None
        value_convert = convert
        return schema, lambda value: {key: value_convert(item) for key, item in value.items()}
    if len(args) == 2 and args[1] is Ellipsis:
        items, convert = _schema(args[0], where, seen=seen)
        item_convert = convert or (lambda item: item)
        return {"type": "array", "items": items}, lambda value: tuple(item_convert(item) for item in value)
    parts = [_schema(arg, where, seen=seen) for arg in args]
    converts = [convert or (lambda item: item) for _, convert in parts]
    fixed = {"type": "array", "prefixItems": [s for s, _ in parts], "items": False,
             "minItems": len(parts), "maxItems": len(parts)}
    return fixed, lambda value: tuple(c(item) for c, item in zip(converts, value, strict=True))


_FACTORY = object()
"""The default of a field made by a factory: optional, but not None (so ``X | None`` keeps its null)."""


@attrs.frozen
class _Field:
    name: str
    """The JSON property name, which is also the keyword the class is constructed with."""
    hint: Any
    default: Any
    has_default: bool


def _fields(cls: type, where: str) -> list[_Field]:
    try:
        hints = typing.get_type_hints(cls, include_extras=True)
    except Exception as exc:  # noqa: BLE001 - any failure to evaluate a hint is the class's to fix
        raise ToolDefinitionError(
            f"{where}: cannot resolve the type hints of {cls.__name__} ({type(exc).__name__}: {exc}); import the "
            "names they use at run time and define classes at module level"
        ) from None
    if typing.is_typeddict(cls):
        required = cls.__required_keys__  # type: ignore[attr-defined]
        out = []
        for key, hint in hints.items():
            # Under ``from __future__ import annotations`` the class sees NotRequired[...] only as text, so
            # __required_keys__ misses it; the evaluated hint does not.
            marker = _required_marker(hint)
            optional = marker is typing.NotRequired or (marker is None and key not in required)
            out.append(_Field(key, _strip_required(hint), None, optional))
        return out
    if attrs.has(cls):
        out = []
        for field in attrs.fields(cls):
            if not field.init:
                continue
            default = field.default
            has_default = default is not attrs.NOTHING
            if isinstance(default, attrs.Factory):  # type: ignore[arg-type]
                default = _FACTORY
            out.append(_Field(field.alias or field.name, hints.get(field.name, field.type), default, has_default))
        return out
    fields = [f for f in dataclasses.fields(cls) if f.init]
    known = {f.name for f in fields}
    unfed = [p.name for p in inspect.signature(cls).parameters.values() if p.name not in known and p.default is p.empty]
    if unfed:
        # An InitVar is no field, so no property: every call would then fail to build the object.
        raise ToolDefinitionError(
            f"{where}: {cls.__name__} needs {', '.join(unfed)} to be built, which is not a field (an InitVar?); "
            "make it a field or give it a default"
        )
    out = []
    for dc_field in fields:
        if not dc_field.init:
            continue
        has_default = dc_field.default is not dataclasses.MISSING or dc_field.default_factory is not dataclasses.MISSING
        default = dc_field.default if dc_field.default is not dataclasses.MISSING else _FACTORY
        out.append(_Field(dc_field.name, hints.get(dc_field.name, dc_field.type), default, has_default))
    return out


def _required_marker(hint: Any) -> Any:
    origin = typing.get_origin(hint)
    if origin is typing.Annotated:
        return _required_marker(typing.get_args(hint)[0])
    return origin if origin in (typing.Required, typing.NotRequired) else None


def _strip_required(hint: Any) -> Any:
    # get_type_hints keeps Required/NotRequired with include_extras; the keys' sets already say which is which.
    if typing.get_origin(hint) in (typing.Required, typing.NotRequired):
        return typing.get_args(hint)[0]
    if typing.get_origin(hint) is typing.Annotated:
        base, *metadata = typing.get_args(hint)
        return typing.Annotated[(_strip_required(base), *metadata)]
    return hint


def _object(cls: type, where: str, seen: tuple[type, ...]) -> tuple[dict[str, Any], Converter | None]:
    if cls in seen:
        raise ToolDefinitionError(f"{where}: {cls.__name__} refers to itself; recursive types are not supported")
    seen = (*seen, cls)
    properties: dict[str, Any] = {}
    required: list[str] = []
    converts: dict[str, Converter] = {}
    inner = f"{where}, field"
    for field in _fields(cls, where):
        field_where = f"{inner} {cls.__name__}.{field.name}"
        schema, convert = _schema(
            field.hint, field_where, optional_none=field.has_default and field.default is None, seen=seen
        )
        if field.has_default:
            _set_default(schema, field.default)
        else:
            required.append(field.name)
        properties[field.name] = schema
        if convert is not None:
            converts[field.name] = convert
    schema_out: dict[str, Any] = {"type": "object"}
    doc = _class_doc(cls)
    if doc:
        schema_out["description"] = doc
    schema_out["properties"] = properties
    if required:
        schema_out["required"] = required
    schema_out["additionalProperties"] = False
    build: Callable[..., Any] = dict if typing.is_typeddict(cls) else cls

    def convert_object(value: Mapping[str, Any]) -> Any:
        values = {key: converts[key](item) if key in converts else item for key, item in value.items()}
        try:
            return build(**values)
        except (TypeError, ValueError) as exc:
            raise ToolError(
                "invalid_arguments", f"{cls.__name__}: {exc}. Fix the value and call the tool again."
            ) from None

    return schema_out, convert_object


def _class_doc(cls: type) -> str | None:
    doc = cls.__dict__.get("__doc__")
    if not doc or (dataclasses.is_dataclass(cls) and doc.startswith(f"{cls.__name__}(")):
        return None  # a dataclass's generated docstring is its signature
    description, _ = parse_docstring(doc)
    return description.split("\n\n")[0] or None


def _apply_metadata(schema: dict[str, Any], item: Any, where: str) -> None:
    """An ``Annotated`` string is the description; a ``Param`` adds bounds too; anything else is left alone."""
    if isinstance(item, str):
        schema["description"] = inspect.cleandoc(item)
        return
    if not isinstance(item, Param):
        return
    json_type = schema.get("type")
    for attr, keyword, applies_to in _BOUNDS:
        value = getattr(item, attr)
        if value is None:
            continue
        if json_type not in applies_to:
            raise ToolDefinitionError(
                f"{where}: Param({attr}=...) applies to {' or '.join(applies_to)} values, not {json_type or 'this'}"
            )
        schema[keyword] = value
    if item.description:
        schema.pop("description", None)  # placed after the bounds, as hand-written schemas do
        schema["description"] = inspect.cleandoc(item.description)


# -- calling -----------------------------------------------------------------------------------------------------
def handler(fn: Callable[..., Any], signature: Signature) -> Callable[[dict[str, Any], Any], Any]:
    """``handler(arguments, context)`` calling ``fn`` with keyword arguments (an ``async def`` for a coroutine)."""
    known = {argument.name for argument in signature.arguments}

    def keywords(arguments: Mapping[str, Any], context: Any) -> dict[str, Any]:
        unknown = sorted(set(arguments) - known)
        if unknown:
            raise ToolError(
                "invalid_arguments",
                f"Unknown argument(s) {', '.join(unknown)}; this tool takes {', '.join(sorted(known)) or 'none'}.",
            )
        kwargs = {}
        for argument in signature.arguments:
            if argument.name in arguments:
                value = arguments[argument.name]
                kwargs[argument.name] = argument.convert(value) if argument.convert is not None else value
        for name in signature.context_params:
            kwargs[name] = context
        return kwargs

    if signature.is_async:

        async def call_async(arguments: dict[str, Any], context: Any) -> Any:
            return await fn(**keywords(arguments, context))

        wrapped: Callable[[dict[str, Any], Any], Any] = call_async
    else:

        def call(arguments: dict[str, Any], context: Any) -> Any:
            return fn(**keywords(arguments, context))

        wrapped = call
    # Logs and traces name the function, not this wrapper.
    for attr in ("__module__", "__name__", "__qualname__", "__doc__"):
        value = getattr(fn, attr, None)
        if value is not None:
            setattr(wrapped, attr, value)
    return wrapped
