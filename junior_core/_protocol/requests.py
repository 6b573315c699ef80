"""The two tools' input rules: a searchTools or executeTool call read into a request, or refused with an
``invalid_arguments`` answer; JSON text arguments; the cursors that page a listing."""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import attrs

from junior_core._protocol.limits import loads
from junior_core._schemas.outline import compact_params as compact_params
from junior_core._schemas.outline import schema_omitted as schema_omitted
from junior_core._schemas.outline import schema_outline as schema_outline
from junior_core.text import clean_text

if TYPE_CHECKING:
    pass

from junior_core._protocol.call_answers import Refusal, _not_an_object, clip, error, invalid_argument, validation_error
from junior_core._protocol.tools import DEFAULT_RESULTS, EXECUTE_SCHEMA, EXECUTE_TOOL, SEARCH_SCHEMA, SEARCH_TOOLS


# -- input rules ---------------------------------------------------------------------------------
@functools.cache
def _validator(schema_name: str) -> Any:
    from jsonschema import Draft202012Validator

    return Draft202012Validator(SEARCH_SCHEMA if schema_name == "search" else EXECUTE_SCHEMA)


def json_arguments(name: Any, text: str) -> dict[str, Any]:
    """The object a model's JSON text encodes; raises ``Refusal`` saying to send one."""
    shown = name[:200] if isinstance(name, str) else repr(name)[:200]
    if not text.strip():
        return {}
    try:
        value = loads(text)
    except json.JSONDecodeError as exc:
        problem = f"are not valid JSON ({exc.msg} at position {exc.pos})"
    else:
        if isinstance(value, dict):
            return value
        problem = f"must be a JSON object, got {type(value).__name__}"
    raise Refusal(error("invalid_arguments", f"The arguments of {shown} {problem}; send them as one JSON object."))


@attrs.frozen
class SearchRequest:
    """A searchTools call that passed its input rules: a stripped query ('' for none), a page."""

    query: str
    source: str | None
    limit: int
    offset: int = 0
    queries: tuple[str, ...] = ()
    """Several searches in one call (``queries``), each stripped; empty for one search (``query``)."""
    tool_names: tuple[str, ...] = ()
    """Exact tools asked for in full (``tool_names``); empty for a search."""

    def one(self, query: str) -> SearchRequest:
        """The request of one of ``queries``, searched as if sent alone."""
        return SearchRequest(query, self.source, self.limit)


def encode_cursor(offset: int) -> str:
    return f"o{offset}"


_CURSOR = re.compile(r"o[0-9]{1,11}")


def _decode_cursor(cursor: str) -> int | None:
    # ASCII digits only: str.isdigit() accepts "²", which int() refuses.
    return int(cursor[1:]) if _CURSOR.fullmatch(cursor) else None


def search_request(arguments: Any) -> SearchRequest:
    """searchTools' input, checked; raises ``Refusal`` with the ``invalid_arguments`` answer."""
    if not isinstance(arguments, Mapping):
        raise _not_an_object(SEARCH_TOOLS, '{"query": "remember a preference"}', arguments)
    # null is how many clients say "not given", so a null field is read as an absent one.
    arguments = {key: value for key, value in arguments.items() if value is not None}
    errors = list(_validator("search").iter_errors(arguments))
    if errors:
        raise Refusal(validation_error(errors, "searchTools input"))
    query = arguments.get("query")
    queries = arguments.get("queries")
    names = arguments.get("tool_names")
    if names is not None:
        others = sorted(set(arguments) - {"tool_names"})
        if others:
            raise Refusal(invalid_argument(
                "tool_names asks for those tools in full and takes nothing else: call searchTools with tool_names "
                f"alone, or search without it (remove {', '.join(others)}).",
                "tool_names", f"not allowed together with {', '.join(others)}"))
        return SearchRequest("", None, len(names), tool_names=tuple(clean_text(name).strip() for name in names))
    if queries is not None and query is not None:
        raise Refusal(invalid_argument(
            "Pass either query (one search) or queries (several), not both: put every search in queries.",
            "query", "not allowed together with queries"))
    if queries is not None and arguments.get("cursor") is not None:
        raise Refusal(invalid_argument(
            "A cursor pages one search: call searchTools with that search's query and the cursor, without queries.",
            "cursor", "not allowed together with queries"))
    for i, text in enumerate([query] if queries is None else queries):
        if isinstance(text, str) and "\x00" in text:
            where = "query" if queries is None else f"queries/{i}"
            raise Refusal(invalid_argument("The query contains a NUL character; send plain text.", where,
                                  "NUL characters are not allowed"))
    offset = 0
    cursor = arguments.get("cursor")
    if cursor is not None:
        decoded = _decode_cursor(cursor)
        if decoded is None:
            raise Refusal(invalid_argument(
                "Unknown cursor: pass the next_cursor of a previous searchTools answer unchanged, or omit it "
                "to start from the first page.",
                "cursor", "not a cursor searchTools returned",
            ))
        offset = decoded
    limit = int(arguments.get("max_results") or DEFAULT_RESULTS)
    # The answer repeats the query and source: cleaned like every text it shows (junior_core.text).
    text = clean_text(query).strip() if isinstance(query, str) else ""
    source = arguments.get("source")
    many = tuple(clean_text(text).strip() for text in queries) if queries is not None else ()
    return SearchRequest(text, clean_text(source) if isinstance(source, str) else source, limit, offset, many)


def execute_request(arguments: Any) -> tuple[str, dict[str, Any]]:
    """executeTool's ``(tool_name, arguments)``; raises ``Refusal`` with the answer to bad input."""
    if not isinstance(arguments, Mapping):
        raise _not_an_object(EXECUTE_TOOL, '{"tool_name": "memory__list", "arguments": {}}', arguments)
    tool_name = arguments.get("tool_name")
    named = tool_name[:200] if isinstance(tool_name, str) else None
    extra = sorted(str(key) for key in arguments if key not in ("tool_name", "arguments"))
    if extra:
        raise Refusal(error(
            "invalid_arguments",
            clip(
                f"Unexpected top-level key(s) {', '.join(extra)}: put the tool's arguments inside "
                '\'arguments\', e.g. {"tool_name": "...", "arguments": {...}}.'
            ),
            named,
            details=[
                {"path": key, "message": "not an executeTool field; nest it under 'arguments'"} for key in extra[:10]
            ],
        ))
    tool_arguments = arguments.get("arguments")
    if tool_arguments is None:  # optional: absent and null both mean no arguments
        tool_arguments = {}
    elif isinstance(tool_arguments, str):
        # A JSON object sent as a string: a common model mistake, and what simple clients send from a text field.
        tool_arguments = _object_in_string(tool_arguments, named)
    if isinstance(tool_name, str) and isinstance(tool_arguments, Mapping):
        # The schema holds no more than these two checks; skipping the validator here halves dispatch time.
        return tool_name, dict(tool_arguments)
    errors = list(_validator("execute").iter_errors(dict(arguments)))
    raise Refusal(validation_error(errors, "executeTool input", named))


def _object_in_string(text: str, tool_name: str | None) -> dict[str, Any]:
    if not text.strip():
        return {}
    try:
        value = loads(text)
    except (json.JSONDecodeError, RecursionError):
        value = None
    if isinstance(value, dict):
        return value
    raise Refusal(invalid_argument(
        "'arguments' must be an object of the tool's arguments (or a JSON string of one), e.g. "
        '{"tool_name": "...", "arguments": {"query": "..."}}.',
        "arguments", "a string that is not a JSON object", tool_name,
    ))


def search_arguments(query: str | None, source: str | None, max_results: int | None,
                     cursor: str | None) -> dict[str, Any]:
    """searchTools' input from ``Runtime.search_tools``' arguments, to be checked as the model's would be."""
    arguments: dict[str, Any] = {"query": query, "source": source, "max_results": max_results}
    if cursor is not None:
        arguments["cursor"] = cursor
    return arguments
