"""searchTools and executeTool: the two tools every model gets, and their rules."""

from __future__ import annotations

import difflib
import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from junior_core.search import SearchIndex, summarize

if TYPE_CHECKING:
    from junior_core.catalog import Catalog, CatalogTool

__all__ = [
    "EXECUTE_TOOL",
    "SEARCH_TOOLS",
    "Discovery",
    "error",
]

SEARCH_TOOLS = "searchTools"
EXECUTE_TOOL = "executeTool"
DEFAULT_RESULTS = 5
MAX_RESULTS = 20
MAX_QUERY = 1000
MESSAGE_LIMIT = 300

SEARCH_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "query": {
            "type": ["string", "null"],
            "maxLength": MAX_QUERY,
            "description": "What you want to do, in a few words. Empty or null lists tools instead of searching.",
        },
        "source": {
            "type": ["string", "null"],
            "description": "A source id from the list in this tool's description, to search only that source.",
        },
        "max_results": {
            "type": ["integer", "null"],
            "minimum": 1,
            "maximum": MAX_RESULTS,
            "description": f"How many tools to return, 1 to {MAX_RESULTS} (default {DEFAULT_RESULTS}).",
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
            "type": ["object", "null"],
            "description": "The tool's arguments, matching the input_schema searchTools returned.",
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


def error(code: str, message: str, tool_name: str | None = None, **details: Any) -> dict[str, Any]:
    """A model-facing failure: ``{"ok": false, ["tool_name",] "error": {code, message, ...}}``."""
    out: dict[str, Any] = {"ok": False}
    if tool_name is not None:
        out["tool_name"] = tool_name
    out["error"] = {"code": code, "message": message, **details}
    return out


def _clip(text: str, limit: int = MESSAGE_LIMIT) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _validation_details(errors: list[Any]) -> list[dict[str, str]]:
    def reason(err: Any) -> str:
        # jsonschema quotes the value first: shortened, the reason after it ("is too long") survives the cut.
        message: str = err.message
        instance, quoted = err.instance, repr(err.instance)
        if len(quoted) <= 60 or quoted not in message:
            return message
        if isinstance(instance, str):
            short = f"{instance[:40]!r}… ({len(instance)} characters)"
        elif isinstance(instance, list | dict):
            short = f"{quoted[:40]}… ({len(instance)} {'items' if isinstance(instance, list) else 'keys'})"
        else:
            short = f"{quoted[:40]}…"
        return message.replace(quoted, short, 1)

    details = []
    for err in sorted(errors, key=lambda e: (list(map(str, e.absolute_path)), e.message))[:10]:
        path = "/".join(str(part) for part in err.absolute_path)
        details.append({"path": path or "(root)", "message": _clip(reason(err))})
    return details


def validation_error(errors: list[Any], what: str, tool_name: str | None = None) -> dict[str, Any]:
    """An ``invalid_arguments`` error listing JSON Schema failures by path."""
    details = _validation_details(errors)
    first = details[0]
    where = "" if first["path"] == "(root)" else f" at '{first['path']}'"
    return error(
        "invalid_arguments",
        _clip(
            f"Invalid {what}{where}: {first['message']}. Fix the arguments to match the input_schema and call again."
        ),
        tool_name,
        details=details,
    )


class Discovery:
    """Answers searchTools and checks executeTool input against one catalog."""

    def __init__(self, catalog: Catalog) -> None:
        from jsonschema import Draft202012Validator

        self.catalog = catalog
        self.index = SearchIndex()
        self._search_validator = Draft202012Validator(SEARCH_SCHEMA)
        self._execute_validator = Draft202012Validator(EXECUTE_SCHEMA)

    # -- descriptions --------------------------------------------------------------------------
    def search_description(self) -> str:
        lines = [
            "Find tools to use: deferred tools are grouped by source. Search all of them with a short query, "
            "or pass `source` to look inside one source, then call executeTool with the exact tool_name returned.",
            "",
            "Available sources:",
        ]
        for entry in self.catalog.sources:
            lines.append(f"- {entry.source.id}: {summarize(entry.source.description)}")
        if len(lines) == 3:
            lines.append("- (none installed)")
        return "\n".join(lines)

    # -- searchTools ---------------------------------------------------------------------------
    def visible(self, source_id: str | None = None) -> list[CatalogTool]:
        """Searchable tools (deferred and direct, never hidden), by tool_name."""
        return [t for t in self.catalog.tools(source_id) if t.tool.exposure != "hidden"]

    def _source_dict(self, source_id: str) -> dict[str, str]:
        entry = self.catalog.source(source_id)
        description = summarize(entry.source.description) if entry else ""
        return {"id": source_id, "description": description}

    def _tool_dict(self, entry: CatalogTool, with_source: bool) -> dict[str, Any]:
        out: dict[str, Any] = {"tool_name": entry.tool_name, "description": summarize(entry.tool.description)}
        if with_source:
            out["source"] = entry.source_id
        out["input_schema"] = entry.tool.input_schema
        out["annotations"] = dict(entry.tool.annotations or {})
        return out

    def search(self, arguments: Any) -> dict[str, Any]:
        """Exactly what the searchTools tool returns; never raises on any JSON input."""
        if not isinstance(arguments, Mapping):
            return error(
                "invalid_arguments",
                'searchTools takes an object such as {"query": "remember a preference"}.',
                details=[{"path": "(root)", "message": f"expected an object, got {type(arguments).__name__}"}],
            )
        errors = list(self._search_validator.iter_errors(dict(arguments)))
        if errors:
            return validation_error(errors, "searchTools input")
        query = arguments.get("query")
        if isinstance(query, str) and "\x00" in query:
            return error(
                "invalid_arguments",
                "The query contains a NUL character; send plain text.",
                details=[{"path": "query", "message": "NUL characters are not allowed"}],
            )
        source_id = arguments.get("source")
        limit = arguments.get("max_results") or DEFAULT_RESULTS
        limit = int(limit)
        return self._search(query.strip() if isinstance(query, str) else "", source_id, limit)

    def _search(self, query: str, source_id: str | None, limit: int) -> dict[str, Any]:
        visible_all = self.visible()
        base: dict[str, Any] = {"query": query or None, "source": source_id}
        if source_id is not None and self.catalog.source(source_id) is None:
            known = [entry.source.id for entry in self.catalog.sources]
            return {
                **base,
                "sources": [self._source_dict(s) for s in known],
                "total_catalog_tools": len(visible_all),
                "total_eligible_tools": 0,
                "total_matches": 0,
                "returned_tools": 0,
                "execution_tool": EXECUTE_TOOL,
                "tools": [],
                "hint": (
                    f"Unknown source {source_id!r}. Known sources: {', '.join(known) or '(none)'}. "
                    "Call searchTools again with one of these ids as source, or with source null to search all."
                ),
            }
        eligible = self.visible(source_id) if source_id is not None else visible_all
        if not query:
            picked = eligible[:limit] if source_id is not None else self._sample(eligible, limit)
            total = len(eligible)
        else:
            picked, total = self._ranked(query, source_id, limit)
        if source_id is not None:
            sources = [self._source_dict(source_id)]
        else:
            sources = [self._source_dict(s) for s in sorted({t.source_id for t in picked})]
            if not query:
                sources = [self._source_dict(entry.source.id) for entry in self.catalog.sources]
        return {
            **base,
            "sources": sources,
            "total_catalog_tools": len(visible_all),
            "total_eligible_tools": len(eligible),
            "total_matches": total,
            "returned_tools": len(picked),
            "execution_tool": EXECUTE_TOOL,
            "tools": [self._tool_dict(t, with_source=source_id is None) for t in picked],
        }

    def _sample(self, eligible: list[CatalogTool], limit: int) -> list[CatalogTool]:
        """Round-robin across sources (by id), each source's tools by tool_name."""
        groups: dict[str, list[CatalogTool]] = {}
        for entry in eligible:
            groups.setdefault(entry.source_id, []).append(entry)
        picked: list[CatalogTool] = []
        depth = 0
        while len(picked) < limit and any(depth < len(group) for group in groups.values()):
            for source_id in sorted(groups):
                if depth < len(groups[source_id]) and len(picked) < limit:
                    picked.append(groups[source_id][depth])
            depth += 1
        return picked

    def _ranked(self, query: str, source_id: str | None, limit: int) -> tuple[list[CatalogTool], int]:
        catalog = self.catalog
        version = catalog.version  # read first: a refresh meanwhile leaves the index older, never marked newer
        self.index.build(
            self.visible(),
            {entry.source.id: entry.source.description for entry in catalog.sources},
            version,
        )
        result = self.index.search(query, limit=limit, source_id=source_id)
        names = list(result.tool_names)
        total = result.total
        exact = self._exact(query, source_id)
        if exact is not None:
            if exact.tool_name in names:
                names.remove(exact.tool_name)
            elif not self.index.matches(query, exact.tool_name):
                total += 1
            names.insert(0, exact.tool_name)
        picked = [t for t in (catalog.get(name) for name in names[:limit]) if t is not None]
        return picked, total

    def _exact(self, query: str, source_id: str | None) -> CatalogTool | None:
        entry = self.catalog.get(query)
        if entry is not None and entry.tool.exposure != "hidden":
            if source_id is None or entry.source_id == source_id:
                return entry
        if source_id is not None:
            local = self.catalog.find_local(source_id, query)
            if local is not None and local.tool.exposure != "hidden":
                return local
        return None

    # -- executeTool ---------------------------------------------------------------------------
    def check_execute(self, arguments: Any) -> tuple[str, dict[str, Any]] | dict[str, Any]:
        """``(tool_name, tool_arguments)`` or the error executeTool answers for bad input."""
        if not isinstance(arguments, Mapping):
            return error(
                "invalid_arguments",
                'executeTool takes an object such as {"tool_name": "memory__list", "arguments": {}}.',
                details=[{"path": "(root)", "message": f"expected an object, got {type(arguments).__name__}"}],
            )
        tool_name = arguments.get("tool_name")
        named = tool_name[:200] if isinstance(tool_name, str) else None
        extra = sorted(str(key) for key in arguments if key not in ("tool_name", "arguments"))
        if extra:
            return error(
                "invalid_arguments",
                _clip(
                    f"Unexpected top-level key(s) {', '.join(extra)}: put the tool's arguments inside "
                    '\'arguments\', e.g. {"tool_name": "...", "arguments": {...}}.'
                ),
                named,
                details=[
                    {"path": key, "message": "not an executeTool field; nest it under 'arguments'"}
                    for key in extra[:10]
                ],
            )
        tool_arguments = arguments.get("arguments")
        if tool_arguments is None:  # optional: absent and null both mean no arguments
            tool_arguments = {}
        if isinstance(tool_name, str) and isinstance(tool_arguments, Mapping):
            # The schema holds no more than these two checks; skipping the validator here halves dispatch time.
            return tool_name, dict(tool_arguments)
        errors = list(self._execute_validator.iter_errors(dict(arguments)))
        return validation_error(errors, "executeTool input", named)

    def unknown_tool(self, tool_name: str) -> dict[str, Any]:
        names = [t.tool_name for t in self.visible()]
        suggestions = difflib.get_close_matches(tool_name, names, n=3, cutoff=0.75)
        if not suggestions and tool_name.strip() and "\x00" not in tool_name:
            words = tool_name.replace("__", " ").replace("_", " ")[:MAX_QUERY]
            found = self._search(words, None, 3).get("tools", [])
            suggestions = [tool["tool_name"] for tool in found]
        hint = f" Did you mean {', '.join(suggestions)}?" if suggestions else ""
        return error(
            "unknown_tool",
            _clip(f"No tool named {tool_name!r}.{hint}", 200)
            + " Use searchTools to find the exact tool_name, then call executeTool with it.",
            tool_name[:200],
            suggestions=suggestions,
            search_tool=SEARCH_TOOLS,
        )


def is_json(value: Any) -> bool:
    """Whether ``value`` survives ``json.dumps`` unchanged in meaning (no NaN, no arbitrary objects)."""
    try:
        json.dumps(value, allow_nan=False)
    except (TypeError, ValueError, RecursionError):
        return False
    return True
