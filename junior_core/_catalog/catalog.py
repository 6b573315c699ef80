"""Sources, tools and the catalog that holds what every plugin registered."""

from __future__ import annotations

import copy
import functools
import hashlib
import inspect
import json
import re
import threading
from collections.abc import Callable, Iterable, Mapping
from typing import Any, Unpack

import attrs

from junior_core._base.errors import RegistrationError, ToolDefinitionError
from junior_core._schemas.functions import MARK, Exposure, ToolSettings, check_exposure, check_settings
from junior_core.text import clean_json, clean_text

__all__ = [
    "ANNOTATION_HINTS",
    "Catalog",
    "CatalogTool",
    "Handler",
    "Provider",
    "Source",
    "SourceEntry",
    "SourceInfo",
    "Tool",
    "make_tool_name",
    "tool_name_prefix",
]

SOURCE_ID = re.compile(r"^[a-z][a-z0-9-]*(:[a-z0-9][a-z0-9_-]*)?$")
TOOL_LOCAL_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]*$")
TOOL_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
MAX_TOOL_NAME = 64
MAX_SCHEMA_CHARS = 50_000
"""Largest ``input_schema`` as JSON text: searchTools shows it to the model in every result that lists the tool."""
ANNOTATION_HINTS = ("readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint")

Handler = Callable[[dict[str, Any], Any], Any]
"""``handler(arguments, context)``: sync or async, returns a JSON-serialisable value."""

Provider = Callable[[], Iterable["Tool"]]
"""Called by the catalog to (re)list a run-time source's tools."""


def tool_name_prefix(source_id: str) -> str:
    """What every tool_name of the source ``source_id`` starts with: its id with ':' as '__', then '__'."""
    return source_id.replace(":", "__") + "__"


def make_tool_name(source_id: str, name: str) -> str:
    """``<source id with ':' as '__'>__<name>``, shortened with a hash suffix past 64 characters."""
    full = tool_name_prefix(source_id) + name
    if len(full) <= MAX_TOOL_NAME:
        return full
    digest = hashlib.sha256(full.encode()).hexdigest()[:8]
    return f"{full[: MAX_TOOL_NAME - 9]}_{digest}"


def _check_source_id(instance: object, attribute: attrs.Attribute[Any], value: object) -> None:
    if not isinstance(value, str) or not SOURCE_ID.match(value):
        raise ValueError(
            f"invalid source id {value!r}: use lowercase letters, digits and '-', "
            "optionally ':' and a sub-id, e.g. 'memory' or 'mcp:time'"
        )


def _clean(value: Any) -> Any:
    return clean_text(value) if isinstance(value, str) else value


def _check_description(instance: object, attribute: attrs.Attribute[Any], value: object) -> None:
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"{type(instance).__name__} {attribute.name} must be a non-empty string, got {value!r}")


@attrs.frozen
class Source:
    """A named group of tools, e.g. ``Source("memory", "Long-term memory ...")``.

    The description is kept as ``junior_core.text.clean_text`` leaves it (no escapes, control or format characters).
    """

    id: str = attrs.field(validator=_check_source_id)
    description: str = attrs.field(converter=_clean, validator=_check_description)


def _check_local_name(instance: object, attribute: attrs.Attribute[Any], value: object) -> None:
    if not isinstance(value, str) or not TOOL_LOCAL_NAME.match(value):
        raise ValueError(
            f"invalid tool name {value!r}: use letters, digits, '_' and '-', starting with a letter or digit"
        )


@functools.lru_cache(maxsize=4096)
def _schema_problem(text: str) -> str | None:
    """Why the schema in ``text`` is not valid JSON Schema, or None; cached because the check is slow (ms)."""
    from jsonschema import Draft202012Validator, FormatChecker
    from jsonschema.exceptions import SchemaError

    # Patterns are enforced with RE2 (junior_core._schemas.patterns), so a pattern RE2 runs ("\\p{L}+", "\\z") is a
    # valid one even where Python's re, which the metaschema's "regex" format would use, cannot compile it.
    checker = FormatChecker()
    checker.checks("regex", raises=(re.error,))(_regex_ok)
    try:
        Draft202012Validator.check_schema(json.loads(text), format_checker=checker)
    except SchemaError as exc:
        return exc.message
    return None


def _regex_ok(pattern: object) -> bool:
    if not isinstance(pattern, str):
        return True
    from junior_core._schemas.patterns import searcher  # RE2 loads with the first schema that has a pattern

    if searcher(pattern) is not None:
        return True
    re.compile(pattern)  # neither engine: the schema is refused with re's reason
    return True


def _check_schema(instance: object, attribute: attrs.Attribute[Any], value: object) -> None:
    if not isinstance(value, Mapping):
        raise ValueError(f"input_schema must be a JSON Schema object, got {type(value).__name__}")
    if value.get("type") != "object":
        raise ValueError('input_schema must describe an object: set "type": "object"')
    try:
        text = json.dumps(value, sort_keys=True, allow_nan=False)
    except (TypeError, ValueError, RecursionError):
        raise ValueError("input_schema must be plain JSON (strings, numbers, lists, objects)") from None
    if len(text) > MAX_SCHEMA_CHARS:
        raise ValueError(f"input_schema is {len(text):,} characters of JSON, over the limit of {MAX_SCHEMA_CHARS:,}: "
                         "shorten its descriptions or split the tool")
    if re.search(r'"\$ref": "(?!#)', text):
        raise ValueError("input_schema may only use local $refs ('#/...'); remote references are never fetched")
    problem = _schema_problem(text)
    if problem is not None:
        raise ValueError(f"input_schema is not a valid JSON Schema: {problem}")


def _check_annotations(instance: object, attribute: attrs.Attribute[Any], value: object) -> None:
    if value is None:
        return
    if not isinstance(value, Mapping):
        raise ValueError(f"annotations must be a mapping of MCP hints, got {type(value).__name__}")
    for key, hint in value.items():
        if key in ANNOTATION_HINTS and not isinstance(hint, bool):
            raise ValueError(f"annotation {key} must be true or false, got {hint!r}")
        if key == "title" and not isinstance(hint, str):
            raise ValueError(f"annotation title must be a string, got {hint!r}")
        if key not in ANNOTATION_HINTS and key != "title":
            raise ValueError(f"unknown annotation {key!r}: use {', '.join(ANNOTATION_HINTS)} or title")


def _check_handler(instance: object, attribute: attrs.Attribute[Any], value: object) -> None:
    if not callable(value):
        raise ValueError(f"handler must be callable, got {type(value).__name__}")


def _check_timeout(instance: object, attribute: attrs.Attribute[Any], value: object) -> None:
    if value is not None and (isinstance(value, bool) or not isinstance(value, int | float) or value <= 0):
        raise ValueError(f"timeout_s must be a positive number of seconds or None, got {value!r}")


def _clean_mapping(value: Any) -> Any:
    """A copy of a JSON mapping with every string cleaned (``clean_json``); anything else is left to the validator."""
    if not isinstance(value, Mapping):
        return value
    copy = dict(value)
    try:
        cleaned = clean_json(copy)
    except RecursionError:  # refused by the validator, which cannot encode it either
        return copy
    return copy if cleaned is copy else dict(cleaned)


def _to_clean_keywords(value: Any) -> Any:
    keywords = _to_keywords(value)
    return tuple(_clean(word) for word in keywords) if isinstance(keywords, tuple) else keywords


MAX_KEYWORDS = 32


def _to_keywords(value: Any) -> Any:
    if isinstance(value, str):  # one word or phrase, not its characters
        return (value,)
    return tuple(value) if isinstance(value, Iterable) else value


def _check_keywords(instance: object, attribute: attrs.Attribute[Any], value: object) -> None:
    if not isinstance(value, tuple) or not all(isinstance(word, str) and word.strip() for word in value):
        raise ValueError(f"keywords must be a list of non-empty strings, got {value!r}")
    if len(value) > MAX_KEYWORDS or any(len(word) > 64 for word in value):
        raise ValueError(f"keywords: at most {MAX_KEYWORDS} words or short phrases of up to 64 characters each")


@attrs.frozen
class Tool:
    """A callable tool: ``handler(arguments, context)`` returning a JSON-serialisable value.

    ``description`` is indexed in full; its first paragraph is the summary a
    model sees in search results. ``keywords`` are the words people use for
    what the tool does ("jot down", "save" for a tool named ``remember``):
    searched as a field of their own and matched against a request's leading
    verb, never shown to the model.

    Every string of the description, the schema (keys too), the annotations and the keywords is kept as
    ``junior_core.text.clean_text`` leaves it: a tool is indexed, summarised, printed and sent to a model
    without terminal escapes, control characters or bidi and zero-width format characters.
    """

    name: str = attrs.field(validator=_check_local_name)
    description: str = attrs.field(converter=_clean, validator=_check_description)
    input_schema: dict[str, Any] = attrs.field(converter=_clean_mapping, validator=_check_schema)
    handler: Handler = attrs.field(validator=_check_handler, eq=False)
    annotations: dict[str, Any] | None = attrs.field(
        default=None, converter=_clean_mapping, validator=_check_annotations
    )
    exposure: Exposure = attrs.field(default="deferred", validator=check_exposure)
    timeout_s: float | None = attrs.field(default=None, validator=_check_timeout)
    keywords: tuple[str, ...] = attrs.field(default=(), converter=_to_clean_keywords, validator=_check_keywords)

    @classmethod
    def from_function(cls, fn: Callable[..., Any], **settings: Unpack[ToolSettings]) -> Tool:
        """A tool whose ``input_schema`` comes from ``fn``'s type hints and description from its docstring.

        Settings given here win over ``@tool(...)``'s (``junior_core._schemas.functions.tool``), which win over
        the defaults.
        """
        check_settings(settings, "Tool.from_function()")
        # Imported here: reading type hints and docstrings is needed only once a function becomes a tool, and
        # `junior --help` registers none.
        from junior_core._schemas import signatures

        marked = getattr(fn, MARK, None)
        base: dict[str, Any] = marked if isinstance(marked, dict) else {}

        def chosen(key: str) -> Any:
            value = settings.get(key)
            return value if value is not None else base.get(key)

        signature = signatures.analyse(fn)
        description = settings.get("description") or base.get("description") or signature.description
        if not description:
            raise ToolDefinitionError(
                f"tool function {signature.qualname} has no docstring: write one (its first paragraph is the summary "
                "a model sees in search results) or pass description="
            )
        try:
            return cls(
                settings.get("name") or base.get("name") or signature.name,
                description,
                copy.deepcopy(signature.schema),
                signatures.handler(fn, signature),
                annotations=chosen("annotations"),
                exposure=settings.get("exposure") or base.get("exposure") or "deferred",
                timeout_s=chosen("timeout_s"),
                keywords=chosen("keywords") or (),
            )
        except ValueError as exc:
            raise ToolDefinitionError(f"tool function {signature.qualname}: {exc}") from None

    @property
    def is_async(self) -> bool:
        call = self.handler if inspect.isfunction(self.handler) else type(self.handler).__call__
        return inspect.iscoroutinefunction(self.handler) or inspect.iscoroutinefunction(call)


@attrs.frozen
class CatalogTool:
    """A registered tool with the names the catalog gave it."""

    tool_name: str
    source_id: str
    tool: Tool
    plugin: str

    @property
    def name(self) -> str:
        return self.tool.name


@attrs.frozen
class SourceInfo:
    """What a host may know of a registered source (``Runtime.source_info()``)."""

    id: str
    description: str
    plugin: str
    """The plugin that registered it."""
    run_time: bool
    """Whether its tools are listed at run time by a provider (an MCP server), not fixed at registration."""
    tools: int
    """How many tools it has now (every exposure)."""
    unavailable: str | None = None
    """Why it cannot run tools right now (an MCP server that is down), or None."""


@attrs.frozen
class SourceEntry:
    """A registered source, the plugin that registered it, and its provider if its tools change at run time."""

    source: Source
    plugin: str
    provider: Provider | None = attrs.field(default=None, eq=False)
    unavailable: str | None = None
    """Why the source cannot run tools right now (an MCP server that is down), or None."""


class Catalog:
    """Every registered source and tool; first registration wins, duplicates are refused.

    ``version`` increases on every change so the search index knows when to rebuild.
    """

    def __init__(self) -> None:
        self._sources: dict[str, SourceEntry] = {}
        self._tools: dict[str, CatalogTool] = {}
        self._by_source: dict[str, list[str]] = {}
        self._lock = threading.RLock()
        self.version = 0

    # -- reading -------------------------------------------------------------------------------
    # Listings take the lock, so a provider replacing a source's tools on another thread never shows half of its
    # change; a lookup by key is one dict read, which needs none.
    @property
    def sources(self) -> list[SourceEntry]:
        """Registered sources sorted by id."""
        with self._lock:
            return [self._sources[key] for key in sorted(self._sources)]

    def source(self, source_id: str) -> SourceEntry | None:
        return self._sources.get(source_id)

    def get(self, tool_name: str) -> CatalogTool | None:
        return self._tools.get(tool_name)

    def tools(self, source_id: str | None = None) -> list[CatalogTool]:
        """Tools sorted by tool_name, optionally of one source (every exposure)."""
        with self._lock:
            if source_id is None:
                return [self._tools[name] for name in sorted(self._tools)]
            return [self._tools[name] for name in sorted(self._by_source.get(source_id, ()))]

    def __len__(self) -> int:
        return len(self._tools)

    # -- writing -------------------------------------------------------------------------------
    def add_source(
        self, plugin: str, source: Source, tools: Iterable[Tool] = (), provider: Provider | None = None
    ) -> None:
        """Register a source and its tools atomically, or raise ``RegistrationError`` naming the plugin."""
        if not isinstance(source, Source):
            raise RegistrationError(plugin, f"register() takes a junior_core.Source, got {type(source).__name__}")
        with self._lock:
            existing = self._sources.get(source.id)
            if existing is not None:
                raise RegistrationError(
                    plugin,
                    f"source {source.id!r} is already registered by plugin {existing.plugin!r}; "
                    "the first registration wins",
                )
            entries = self._check_tools(plugin, source.id, tools)
            self._sources[source.id] = SourceEntry(source, plugin, provider)
            self._by_source[source.id] = []
            self._install(source.id, entries)

    def remove_plugin(self, plugin: str) -> None:
        """Forget every source a plugin registered (used to roll back a failed plugin)."""
        with self._lock:
            for source_id in [s for s, entry in self._sources.items() if entry.plugin == plugin]:
                for tool_name in self._by_source.pop(source_id, []):
                    del self._tools[tool_name]
                del self._sources[source_id]
            self.version += 1

    def describe_source(self, source_id: str, description: str) -> None:
        """Replace a source's description (a run-time source may only learn it once connected)."""
        source = Source(source_id, description)
        with self._lock:
            entry = self._sources.get(source_id)
            if entry is None:
                raise KeyError(f"unknown source {source_id!r}")
            self._sources[source_id] = attrs.evolve(entry, source=source)
            self.version += 1

    def set_unavailable(self, source_id: str, reason: str | None) -> None:
        """Mark a source as down (``reason``) or up again (None); the index does not change."""
        with self._lock:
            entry = self._sources.get(source_id)
            if entry is None:
                raise KeyError(f"unknown source {source_id!r}")
            self._sources[source_id] = attrs.evolve(entry, unavailable=reason)

    def replace_tools(self, source_id: str, tools: Iterable[Tool]) -> None:
        """Swap a run-time source's tools for a fresh list (invalid or duplicate tools refuse the whole list)."""
        with self._lock:
            entry = self._sources.get(source_id)
            if entry is None:
                raise KeyError(f"unknown source {source_id!r}")
            entries = self._check_tools(entry.plugin, source_id, tools, replacing=True)
            for tool_name in self._by_source[source_id]:
                del self._tools[tool_name]
            self._by_source[source_id] = []
            self._install(source_id, entries)

    def _check_tools(
        self, plugin: str, source_id: str, tools: Iterable[Tool], replacing: bool = False
    ) -> list[CatalogTool]:
        """The catalog entries of ``tools``, or ``RegistrationError``; each check is one set or dict lookup."""
        entries: list[CatalogTool] = []
        names: set[str] = set()
        tool_names: set[str] = set()
        for tool in tools:
            if not isinstance(tool, Tool):
                raise RegistrationError(
                    plugin, f"source {source_id!r}: tools must be junior_core.Tool, got {type(tool).__name__}"
                )
            tool_name = make_tool_name(source_id, tool.name)
            if tool.name in names or tool_name in tool_names:
                raise RegistrationError(plugin, f"source {source_id!r} registers tool {tool.name!r} twice")
            other = self._tools.get(tool_name)
            if other is not None and not (replacing and other.source_id == source_id):
                raise RegistrationError(
                    plugin,
                    f"tool_name {tool_name!r} is already registered by plugin {other.plugin!r} "
                    f"(source {other.source_id!r}); the first registration wins",
                )
            names.add(tool.name)
            tool_names.add(tool_name)
            entries.append(CatalogTool(tool_name, source_id, tool, plugin))
        return entries

    def _install(self, source_id: str, entries: list[CatalogTool]) -> None:
        for entry in entries:
            self._tools[entry.tool_name] = entry
            self._by_source[source_id].append(entry.tool_name)
        self.version += 1
