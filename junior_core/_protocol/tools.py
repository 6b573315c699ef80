"""The two tools the model is given: their names, the bounds of their input, their JSON Schemas (one string
``type`` per property, so single-type dialects and simple clients can use them) and their descriptions."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from junior_core._schemas.outline import compact_params as compact_params
from junior_core._schemas.outline import schema_omitted as schema_omitted
from junior_core._schemas.outline import schema_outline as schema_outline

if TYPE_CHECKING:
    pass



SEARCH_TOOLS = "searchTools"
EXECUTE_TOOL = "executeTool"
DEFAULT_RESULTS = 5
MAX_RESULTS = 20
MAX_QUERY = 1000
MAX_QUERIES = 5
MAX_TOOL_NAMES = 10
MAX_TOOL_NAME = 200
NO_MATCH_CHARS = 1000
"""The most a searchTools answer that matches nothing may take (characters of JSON)."""
NEAREST_SOURCES = 3
"""How many sources an answer that matches nothing names, the nearest to the query first."""
MAX_SOURCE = 200
MESSAGE_LIMIT = 300
DEFAULT_MAX_SEARCH_CHARS = 65_536
"""Longest searchTools answer, as JSON text (64 KiB): past it the largest schemas are shortened first
(``RuntimeOptions.max_search_chars``)."""

# One string `type` per property, and optional means not required: clients and model APIs with a single-type
# schema dialect (Gemini's, MCP Inspector's forms) cannot use type arrays. A null value still means "absent".
SEARCH_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "query": {
            "type": "string",
            "maxLength": MAX_QUERY,
            "description": "What you want to do, in a few words. Empty or null lists tools instead of searching.",
        },
        "queries": {
            "type": "array",
            "items": {"type": "string", "maxLength": MAX_QUERY},
            "minItems": 1,
            "maxItems": MAX_QUERIES,
            "description": f"Several searches in one call (up to {MAX_QUERIES}), answered one by one under "
                           "'results'; instead of query, for a request that needs several unrelated tools.",
        },
        "tool_names": {
            "type": "array",
            "items": {"type": "string", "maxLength": MAX_TOOL_NAME},
            "minItems": 1,
            "maxItems": MAX_TOOL_NAMES,
            "description": f"Exact tool_names (up to {MAX_TOOL_NAMES}) to get in full, each with its input_schema; "
                           "alone, without a query or source.",
        },
        "source": {
            "type": "string",
            "maxLength": MAX_SOURCE,
            "description": "A source id from the list in this tool's description, to search only that source.",
        },
        "max_results": {
            "type": "integer",
            "minimum": 1,
            "maximum": MAX_RESULTS,
            "description": f"How many tools to return, 1 to {MAX_RESULTS} (default {DEFAULT_RESULTS}).",
        },
        "cursor": {
            "type": "string",
            "maxLength": 20,
            "description": "The next_cursor of a previous answer, for the next page of the same search or listing.",
        },
    },
    "additionalProperties": False,
}

EXECUTE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "tool_name": {
            "type": "string",
            "description": "The exact tool_name returned by searchTools, e.g. 'memory__remember'.",
        },
        "arguments": {
            "type": "object",
            "description": "The tool's arguments as an object, matching the input_schema searchTools returned.",
        },
    },
    "required": ["tool_name"],
    "additionalProperties": False,
}

EXECUTE_DESCRIPTION = (
    "Run one tool found with searchTools by its exact tool_name, passing its arguments as an object under "
    "'arguments'. Returns {ok: true, result} or {ok: false, error: {code, message}}; the message says what "
    "to do next."
)

_SEARCH_INTRO = (
    "Find tools to use: deferred tools are grouped by source. Search all of them with a short query, "
    "or pass `source` to look inside one source (an empty query lists it, page by page with `cursor`), "
    "then call executeTool with the exact tool_name returned."
)


def search_description(sources: Sequence[tuple[str, str]]) -> str:
    """searchTools' description: the intro, then one ``- <id>: <summary>`` line per ``(id, summary)``."""
    lines = [_SEARCH_INTRO, "", "Available sources:"]
    lines += [f"- {source_id}: {summary}" for source_id, summary in sources]
    if not sources:
        lines.append("- (none installed)")
    return "\n".join(lines)
