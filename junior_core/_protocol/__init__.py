"""What the model sees of junior: the two tools' names, schemas and descriptions, their input rules, and every
answer and message the core sends it (results, errors, refusals, hints).

Two helpers do for it what is not wording: ``_outline`` cuts an ``input_schema`` down for an answer over its size
limit, and ``_schema_errors`` reads jsonschema's failures for an ``invalid_arguments`` answer."""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import attrs

from junior_core._protocol.limits import MAX_DEPTH, loads
from junior_core._schemas.failures import failures
from junior_core._schemas.outline import compact_params as compact_params
from junior_core._schemas.outline import schema_omitted as schema_omitted
from junior_core._schemas.outline import schema_outline as schema_outline
from junior_core.text import clean_text
from junior_core.text import clip as _clip

if TYPE_CHECKING:
    from junior_core._base.errors import ToolError

__all__ = [
    "EXECUTE_DESCRIPTION",
    "EXECUTE_SCHEMA",
    "EXECUTE_TOOL",
    "SEARCH_SCHEMA",
    "SEARCH_TOOLS",
    "Refusal",
    "SearchRequest",
    "error",
    "execute_request",
    "json_arguments",
    "search_description",
    "search_request",
    "unknown_tool",
    "validation_error",
]

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


class Refusal(Exception):
    """Raised inside a call's preparation: ``answer`` is what the model receives instead of a tool's result."""

    def __init__(self, answer: dict[str, Any]) -> None:
        super().__init__(answer["error"]["code"] if "error" in answer else "refused")
        self.answer = answer


def error(code: str, message: str, tool_name: str | None = None, **details: Any) -> dict[str, Any]:
    """A model-facing failure: ``{"ok": false, ["tool_name",] "error": {code, message, ...}}``."""
    out: dict[str, Any] = {"ok": False}
    if tool_name is not None:
        out["tool_name"] = tool_name
    out["error"] = {"code": code, "message": message, **details}
    return out


def invalid_argument(message: str, path: str, problem: str, tool_name: str | None = None) -> dict[str, Any]:
    """``invalid_arguments`` with one detail: ``problem`` at ``path``."""
    return error("invalid_arguments", message, tool_name, details=[{"path": path, "message": problem}])


def _not_an_object(tool: str, example: str, arguments: Any) -> Refusal:
    return Refusal(invalid_argument(f"{tool} takes an object such as {example}.", "(root)",
                           f"expected an object, got {type(arguments).__name__}"))


def clip(text: str, limit: int = MESSAGE_LIMIT) -> str:
    """``junior_core.text.clip`` with the model-facing messages' limit by default."""
    return _clip(text, limit)


def validation_error(errors: list[Any], what: str, tool_name: str | None = None) -> dict[str, Any]:
    """An ``invalid_arguments`` error listing JSON Schema failures by path."""
    details = [{"path": path, "message": clip(reason)} for path, reason in failures(errors)]
    first = details[0]
    where = "" if first["path"] == "(root)" else f" at '{first['path']}'"
    return error(
        "invalid_arguments",
        clip(
            f"Invalid {what}{where}: {first['message']}. Fix the arguments to match the input_schema and call again."
        ),
        tool_name,
        details=details,
    )


def unknown_tool(tool_name: str, suggestions: Sequence[str]) -> dict[str, Any]:
    """``unknown_tool`` for a name the caller cannot reach, with close names it can."""
    hint = f" Did you mean {', '.join(suggestions)}?" if suggestions else ""
    return error(
        "unknown_tool",
        clip(f"No tool named {tool_name!r}.{hint}", 200)
        + " Use searchTools to find the exact tool_name, then call executeTool with it.",
        tool_name[:200],
        suggestions=list(suggestions),
        search_tool=SEARCH_TOOLS,
    )


def source_unavailable(tool_name: str, source_id: str, reason: str) -> dict[str, Any]:
    """``unavailable`` for a name whose source is down."""
    shown = tool_name[:200]
    return error(
        "unavailable",
        # The reason says whether trying again later can help: for a command that is not installed it cannot.
        clip(f"{shown} belongs to source {source_id!r}, which is unavailable right now ({reason}).", 240)
        + " Use searchTools to find a tool in another source meanwhile.",
        shown,
        source=source_id,
    )


def not_for_the_model(tool_name: str) -> dict[str, Any]:
    """``not_permitted`` for a tool whose exposure is ``hidden``."""
    return error(
        "not_permitted",
        f"{tool_name} is not available to the model. Use searchTools to find a tool you can call.",
        tool_name,
    )


# -- searchTools' answers, when too big --------------------------------------------------------------
def shortened_note(limit: int, tools: Sequence[str], dropped: int, cursor: str) -> dict[str, Any]:
    """The ``shortened`` note of a searchTools answer cut to ``limit`` characters of JSON."""
    parts = []
    if tools:
        # The tools are listed in "tools": the message does not repeat them.
        parts.append("input_schema shortened where a tool says input_schema_shortened ('outline': property names, "
                     "types, required; 'omitted': none)")
    if dropped:
        parts.append(f"{dropped} more tool(s) matched" + (
            ": call searchTools again with next_cursor for the next page" if cursor
            else ": search with a query or a source to see them"))
    return {
        "limit_chars": limit,
        "tools": list(tools),
        "left_out": dropped,
        "message": (
            f"Cut to {limit:,} characters of JSON: {'; '.join(parts)}. searchTools with tool_names gets a tool in "
            "full; executeTool checks arguments against the full input_schema either way."
        ),
    }


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


ANNOTATION_DEFAULTS: dict[str, bool] = {
    "readOnlyHint": False, "destructiveHint": True, "idempotentHint": False, "openWorldHint": True,
}
"""MCP's defaults for its hints: an answer shows a hint only where a tool's value differs."""


def shown_annotations(annotations: Mapping[str, Any]) -> dict[str, Any]:
    """The annotations an answer shows: every one not at MCP's default (a title always)."""
    return {key: value for key, value in annotations.items()
            if key not in ANNOTATION_DEFAULTS or value is not ANNOTATION_DEFAULTS[key]}


BRIEF_NOTE = "Rows without input_schema list their params; searchTools with tool_names returns them in full."
"""What an answer with one-line rows says once, in ``schemas``."""


def brief_row(row: Mapping[str, Any], params: str) -> dict[str, Any]:
    """A tool's compact row in a searchTools answer: its name, summary, (across sources) source and parameters in
    one line (``compact_params``; left out when it takes none)."""
    out = {key: row[key] for key in ("tool_name", "description", "source") if key in row}
    if params:
        out["params"] = params
    return out


def with_matched(row: Mapping[str, Any], matched: Sequence[str]) -> dict[str, Any]:
    """``row`` with its ``matched`` words after its name, summary and source (left out when empty)."""
    if not matched:
        return dict(row)
    out: dict[str, Any] = {}
    for key, value in row.items():
        if key not in ("tool_name", "description", "source") and "matched" not in out:
            out["matched"] = list(matched)
        out[key] = value
    out.setdefault("matched", list(matched))
    return out


def tool_row(
    tool_name: str, summary: str, source: str | None, schema: dict[str, Any], annotations: dict[str, Any]
) -> dict[str, Any]:
    """One tool in a searchTools answer; ``source`` only in a search of every source, annotations only where not
    at their default."""
    row: dict[str, Any] = {"tool_name": tool_name, "description": summary}
    if source is not None:
        row["source"] = source
    row["input_schema"] = schema
    shown = shown_annotations(annotations)
    if shown:
        row["annotations"] = shown
    return row


def search_answer(
    query: str | None,
    source: str | None,
    sources: list[dict[str, str]],
    *,
    catalog_tools: int,
    eligible_tools: int,
    matches: int,
    tools: list[dict[str, Any]],
    next_offset: int | None = None,
    hint: str | None = None,
    note: str | None = None,
    weak: bool = False,
    brief: bool = False,
    unmatched: Sequence[str] | None = None,
) -> dict[str, Any]:
    """searchTools' answer: what was searched (a ``note`` when words were corrected), ``weak`` and a ``hint`` when
    no tool holds the query's telling words, the sources of the tools, the counts, the tools' rows, ``next_cursor``
    while more remain. A field at its default or empty (no query, no source, no sources) is left out."""
    answer: dict[str, Any] = {"ok": True}
    if query:
        answer["query"] = query
    if source is not None:
        answer["source"] = source
    if note is not None:
        answer["note"] = note
    if weak:
        answer["weak"] = True
    if hint is not None:
        answer["hint"] = hint
    if brief:
        answer["schemas"] = BRIEF_NOTE
    if sources:
        answer["sources"] = sources
    answer["total_catalog_tools"] = catalog_tools
    answer["total_eligible_tools"] = eligible_tools
    answer["total_matches"] = matches
    if unmatched is not None and tools:
        answer["unmatched"] = list(unmatched)
    answer["tools"] = tools

    if next_offset is not None:
        answer["next_cursor"] = encode_cursor(next_offset)
    return answer


def batch_answer(source: str | None, sources: list[dict[str, str]], results: list[dict[str, Any]],
                 brief: bool = False, **counts: int) -> dict[str, Any]:
    """searchTools' answer to ``queries``: one result per query, in order (each a search answer without ``ok``,
    ``source``, ``sources``, ``schemas`` and the catalog's counts), the sources its results name, the ``schemas``
    note (``brief``: some row is one line) and the counts once."""
    answer: dict[str, Any] = {"ok": True}
    if source is not None:
        answer["source"] = source
    if brief:
        answer["schemas"] = BRIEF_NOTE
    if sources:
        answer["sources"] = sources
    answer.update(counts)
    answer["results"] = results
    return answer


def _said(words: Sequence[str]) -> str:
    return ", ".join(repr(word) for word in words[:3]) + (" ..." if len(words) > 3 else "")


def weak_hint(unheld: Sequence[str], elsewhere: Sequence[str], below: bool = False) -> str:
    """The hint of a weak answer: the query's words no installed tool holds (``unheld``), and those only tools
    not shown hold (``elsewhere``); what each shown tool holds is in its ``matched``. ``below``: some tools shown
    hold too little of the query to pass the relevance floor."""
    parts = ["Partial matches" + (", some below the relevance floor" if below else "")]
    if unheld:
        parts.append(f"no installed tool holds {_said(unheld)}")
    if elsewhere:
        parts.append(f"tools not shown here hold {_said(elsewhere)}: search with "
                     + ("it" if len(elsewhere) == 1 else "them"))
    if not unheld and not elsewhere and not below:
        parts.append("no tool shown holds the query's rarest word")
    return clip("; ".join(parts) + ". See each tool's matched.")


def tool_names_answer(tools: list[dict[str, Any]], unknown: list[dict[str, Any]]) -> dict[str, Any]:
    """searchTools' answer to ``tool_names``: the tools found, in the order asked, each in full; the names that
    are no tool (or not one the caller may see), each with close tool_names."""
    answer: dict[str, Any] = {"ok": True}
    if unknown:
        answer["hint"] = clip(
            f"No tool is named {_said([row['tool_name'] for row in unknown])}: use one of its suggestions, or "
            "search with words.")
    answer["tools"] = tools
    if unknown:
        answer["unknown"] = unknown
    return answer


def corrected_note(fixes: Sequence[tuple[str, str]]) -> str:
    """The answer's ``note`` when words were corrected, from ``(as written, searched for)`` pairs."""
    return "Searched for " + ", ".join(f"{fixed} (you wrote {word})" for word, fixed in fixes) + "."


def unknown_source_hint(source_id: str, known: Sequence[str]) -> str:
    """The hint of a search in a source that does not exist: every known id, and what to call next."""
    return (
        f"Unknown source {source_id[:100]!r}. Known sources: {', '.join(known) or '(none)'}. "
        "Call searchTools again with one of these ids as source, or with source null to search all."
    )


def no_match_hint(query: str, source_id: str | None, eligible: int, near: bool = False) -> str:
    """The hint of a search that matched nothing: what was not found, where to look next (``near``: some source's
    id or description holds a word of the query)."""

    shown = clip(query, 80)
    if source_id is not None and not eligible:
        return f"Source {source_id!r} has no tools right now. Call searchTools with source null to search all."
    if source_id is not None:
        return (
            f"No tool in source {source_id!r} matched {shown!r}. Call searchTools with an empty query and this "
            "source to list its tools, or with other words, or with source null to search every source."
        )
    if near:
        return (
            f"No tool's name, description or parameters holds a word of {shown!r}; the sources in sources say some "
            "of them: search inside one by its id (an empty query lists its tools), or use other words."
        )
    return (
        f"No installed tool holds a word of {shown!r}. Every source is in this tool's description: search one by "
        "its id (an empty query lists its tools), or use other words."
    )


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


def is_json(value: Any) -> bool:
    """Whether ``value`` survives ``json.dumps`` unchanged in meaning (no NaN, no arbitrary objects)."""
    try:
        json.dumps(value, allow_nan=False)
    except (TypeError, ValueError, RecursionError):
        return False
    return True


# -- executeTool's answers -----------------------------------------------------------------------
def result(tool_name: str, value: Any) -> dict[str, Any]:
    """A tool's result, as the model receives it."""
    return {"ok": True, "tool_name": tool_name, "result": value}


def truncated(tool_name: str, text: str, limit: int) -> dict[str, Any]:
    """A result too long for the model: the start of its JSON ``text``, marked ``truncated`` with the full size."""
    return {
        "ok": True,
        "tool_name": tool_name,
        "result": text[:limit],
        "truncated": {
            "original_chars": len(text),
            "shown_chars": limit,
            "message": (
                f"The result was {len(text):,} characters of JSON, too long to show; 'result' is its first "
                f"{limit:,} characters, as text. Ask for less (a narrower query, a smaller limit, one page) "
                "if you need the rest."
            ),
        },
    }


def tool_error(tool_name: str, exc: ToolError) -> tuple[dict[str, Any], bool]:
    """The answer to a handler's ``ToolError``, and whether its details were dropped for not being JSON."""
    body = error(str(exc.code), str(exc.message), tool_name)
    details = {k: v for k, v in exc.details.items() if k not in body["error"]}
    if not is_json(details):
        return body, True
    body["error"].update(details)
    return body, False


def tool_failed(
    tool_name: str,
    why: str = "failed with an internal error (details are in the host's log)",
    next_step: str = "Try again once; if it fails again, tell the user the tool is failing.",
) -> dict[str, Any]:
    """``tool_failed`` for a handler that raised (the traceback goes to the host's log), or as ``why`` says."""
    return error("tool_failed", f"{tool_name} {why}. {next_step}", tool_name)


def not_json(tool_name: str) -> dict[str, Any]:
    """``tool_failed`` for a result that cannot be encoded as JSON."""
    return tool_failed(tool_name, "returned a result that could not be encoded as JSON (logged for the operator)",
                       "Try a different tool or report the problem.")


def timed_out(tool_name: str, seconds: float) -> dict[str, Any]:
    """``timeout`` for a call past its time limit."""
    return error(
        "timeout",
        f"{tool_name} did not finish within {seconds:g} s. Try again later, or with a smaller request.",
        tool_name,
    )


def source_busy(tool_name: str, source_id: str, hung: int) -> dict[str, Any]:
    """``unavailable`` for a source with too many calls still running past their time limit."""
    return error(
        "unavailable",
        f"Source {source_id!r} is not responding: {hung} of its calls are still running past "
        f"their time limit. Do not retry it now; use a tool of another source, or tell the user {source_id!r} "
        "is not responding.",
        tool_name,
    )


def runtime_closed(tool_name: str) -> dict[str, Any]:
    """``unavailable`` for a call made once the runtime is closing."""
    return error("unavailable", "The runtime is closed; no tools can run.", tool_name)


def nesting_error(tool_name: str | None = None) -> dict[str, Any]:
    """The ``invalid_arguments`` answer to arguments nested deeper than ``MAX_DEPTH``."""
    return invalid_argument(
        f"The arguments nest objects or arrays more than {MAX_DEPTH} levels deep. "
        "Send flatter arguments that match the tool's input_schema.",
        "(root)", f"nested more than {MAX_DEPTH} levels deep", tool_name,
    )


def not_an_object(tool_name: str) -> dict[str, Any]:
    """``invalid_arguments`` for a direct tool called with arguments that are not an object."""
    return error("invalid_arguments", f"{tool_name} takes an object of arguments.", tool_name)


POLICY_LATE = (
    "This call could not be cleared to run: a policy check did not answer in time. "
    "Try again in a minute; if it keeps failing, tell the user the tool is blocked."
)
"""A ``before_tool_execute`` veto for a policy past its deadline (fail closed)."""
POLICY_FAILED = (
    "This call could not be cleared to run: a policy check failed (details are in the host's log). "
    "Do not retry it; tell the user the tool is blocked."
)
"""A ``before_tool_execute`` veto for a policy that raised (fail closed)."""
NOT_PERMITTED = "This call was not permitted."
"""A veto's message when the policy gave no reason of its own."""


def broken_schema(tool_name: str) -> dict[str, Any]:
    """``tool_failed`` for a tool whose own input schema cannot be used to validate (a ``$ref`` to nowhere)."""
    return error(
        "tool_failed",
        f"{tool_name} cannot be called: its input schema is broken (logged for the operator). Use another tool.",
        tool_name,
    )


def internal_error(shown: str | None) -> dict[str, Any]:
    """``tool_failed`` for a call that could not be prepared because of junior's own error (logged)."""
    return error(
        "tool_failed",
        "The call could not be prepared because of an internal error (logged for the operator). "
        "Try again once; if it fails again, tell the user.",
        shown,
    )
