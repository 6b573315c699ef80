"""searchTools and executeTool: the two tools every model gets, and their rules."""

from __future__ import annotations

import difflib
import json
import logging
import threading
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from junior_core.search import SearchIndex, summarize

if TYPE_CHECKING:
    from junior_core.catalog import Catalog, CatalogTool
    from junior_core.index_cache import IndexCache

__all__ = [
    "EXECUTE_TOOL",
    "SEARCH_TOOLS",
    "Discovery",
    "error",
]

log = logging.getLogger("junior.search")

SEARCH_TOOLS = "searchTools"
EXECUTE_TOOL = "executeTool"
DEFAULT_RESULTS = 5
MAX_RESULTS = 20
MAX_QUERY = 1000
MAX_SOURCE = 200
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
            "maxLength": MAX_SOURCE,
            "description": "A source id from the list in this tool's description, to search only that source.",
        },
        "max_results": {
            "type": ["integer", "null"],
            "minimum": 1,
            "maximum": MAX_RESULTS,
            "description": f"How many tools to return, 1 to {MAX_RESULTS} (default {DEFAULT_RESULTS}).",
        },
        "cursor": {
            "type": ["string", "null"],
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


class _View:
    """What searchTools answers from, computed once per catalog version instead of once per query."""

    def __init__(self, catalog: Catalog) -> None:
        self.version = catalog.version  # read first: a change meanwhile makes this view older, never newer
        tools = catalog.tools()
        sources = catalog.sources
        self.visible = [t for t in tools if t.tool.exposure != "hidden"]
        self.by_name = {t.tool_name: t for t in self.visible}
        self.by_source: dict[str, list[CatalogTool]] = {entry.source.id: [] for entry in sources}
        self.local: dict[tuple[str, str], CatalogTool] = {}
        for entry in self.visible:
            self.by_source.setdefault(entry.source_id, []).append(entry)
            self.local.setdefault((entry.source_id, entry.tool.name), entry)
        self.source_ids = [entry.source.id for entry in sources]
        self.source_dicts = {
            entry.source.id: {"id": entry.source.id, "description": summarize(entry.source.description)}
            for entry in sources
        }
        self.source_texts = {entry.source.id: entry.source.description for entry in sources}
        self._tool_dicts: dict[str, tuple[dict[str, Any], dict[str, Any]]] = {}
        lines = [
            "Find tools to use: deferred tools are grouped by source. Search all of them with a short query, "
            "or pass `source` to look inside one source (an empty query lists it, page by page with `cursor`), "
            "then call executeTool with the exact tool_name returned.",
            "",
            "Available sources:",
        ]
        lines += [f"- {sid}: {self.source_dicts[sid]['description']}" for sid in self.source_ids]
        if not self.source_ids:
            lines.append("- (none installed)")
        self.description = "\n".join(lines)

    def tool_dict(self, entry: CatalogTool, with_source: bool) -> dict[str, Any]:
        """The answer row of a tool; summaries are made once per view, each answer gets its own copy."""
        pair = self._tool_dicts.get(entry.tool_name)
        if pair is None:
            summary = summarize(entry.tool.description)
            annotations = dict(entry.tool.annotations or {})
            schema = entry.tool.input_schema
            plain: dict[str, Any] = {"tool_name": entry.tool_name, "description": summary, "input_schema": schema,
                                     "annotations": annotations}
            sourced: dict[str, Any] = {"tool_name": entry.tool_name, "description": summary,
                                       "source": entry.source_id, "input_schema": schema, "annotations": annotations}
            pair = self._tool_dicts[entry.tool_name] = (plain, sourced)
        row = pair[1] if with_source else pair[0]
        return {**row, "annotations": dict(row["annotations"])}

    def sources(self, ids: Any = None) -> list[dict[str, str]]:
        chosen = self.source_ids if ids is None else ids
        return [dict(self.source_dicts[sid]) for sid in chosen if sid in self.source_dicts]


def _encode_cursor(offset: int) -> str:
    return f"o{offset}"


def _decode_cursor(cursor: str) -> int | None:
    if len(cursor) > 12 or not cursor.startswith("o") or not cursor[1:].isdigit():
        return None
    return int(cursor[1:])


class Discovery:
    """Answers searchTools and checks executeTool input against one catalog."""

    def __init__(self, catalog: Catalog, cache: IndexCache | None = None) -> None:
        from jsonschema import Draft202012Validator

        self.catalog = catalog
        self.index = SearchIndex(cache=cache)
        self._search_validator = Draft202012Validator(SEARCH_SCHEMA)
        self._execute_validator = Draft202012Validator(EXECUTE_SCHEMA)
        self._view: _View | None = None
        self._view_lock = threading.Lock()
        self._rebuild: threading.Thread | None = None
        self._rebuild_lock = threading.Lock()

    # -- per catalog version -------------------------------------------------------------------
    def view(self) -> _View:
        """The current catalog's view, remade only when the catalog version changed."""
        view = self._view
        if view is not None and view.version == self.catalog.version:
            return view
        with self._view_lock:
            view = self._view
            if view is None or view.version != self.catalog.version:
                view = self._view = _View(self.catalog)
        return view

    def search_description(self) -> str:
        return self.view().description

    def visible(self, source_id: str | None = None) -> list[CatalogTool]:
        """Searchable tools (deferred and direct, never hidden), by tool_name."""
        view = self.view()
        return list(view.visible if source_id is None else view.by_source.get(source_id, []))

    def _build_index(self, view: _View, wait: bool = True) -> None:
        self.index.build(view.visible, view.source_texts, view.version, wait=wait)

    def refresh_index(self) -> None:
        """Rebuild the index for the current catalog on a background thread; searches use the old one meanwhile.

        Before the first search there is no index to refresh: that search builds (or opens) it.
        """
        if self.index.snapshot is None:
            return
        with self._rebuild_lock:
            if self._rebuild is not None and self._rebuild.is_alive():
                return  # the running rebuild re-reads the catalog when it finishes
            self._rebuild = threading.Thread(target=self._rebuild_until_current, name="junior-index", daemon=True)
            self._rebuild.start()

    def _rebuild_until_current(self) -> None:
        try:
            while self.index.version != self.catalog.version:
                self._build_index(self.view())
        except Exception:
            log.exception("rebuilding the search index failed")

    def wait_for_index(self, timeout: float | None = None) -> bool:
        """Block until the index matches the catalog (after a refresh); whether it does."""
        thread = self._rebuild
        if thread is not None:
            thread.join(timeout)
        if self.index.version != self.catalog.version:
            self._build_index(self.view())
        return self.index.version == self.catalog.version

    def index_info(self, rebuild: bool = False) -> dict[str, Any]:
        """Where the index for the current catalog is, its fingerprint and size (for ``junior index``)."""
        view = self.view()
        cache = self.index.cache
        if rebuild:
            if cache is not None and self.index.snapshot is not None and self.index.snapshot.path:
                cache.remove(self.index.snapshot.fingerprint)
            self.index.reset()
        self._build_index(view)
        snapshot = self.index.snapshot
        assert snapshot is not None
        size = None
        if snapshot.path is not None:
            from pathlib import Path

            size = sum(f.stat().st_size for f in Path(snapshot.path).iterdir())
        return {
            "state": "stored" if snapshot.path else "in memory",
            "cache_dir": str(cache.directory) if cache is not None else None,
            "path": snapshot.path,
            "fingerprint": snapshot.fingerprint,
            "tools": len(snapshot.docs.names),
            "bytes": size,
            "stored_indexes": len(cache.entries()) if cache is not None else 0,
        }

    def _ensure_index(self, view: _View) -> None:
        if not hasattr(self.index, "snapshot"):  # another index with build() only (benchmarks' --index-module)
            self.index.build(view.visible, view.source_texts, view.version)
            return
        if self.index.version == view.version:
            return
        if self.index.snapshot is None:
            self._build_index(view)  # nothing to answer from yet
        else:
            self.refresh_index()

    # -- searchTools ---------------------------------------------------------------------------
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
        offset = 0
        cursor = arguments.get("cursor")
        if cursor is not None:
            decoded = _decode_cursor(cursor)
            if decoded is None:
                return error(
                    "invalid_arguments",
                    "Unknown cursor: pass the next_cursor of a previous searchTools answer unchanged, or omit it "
                    "to start from the first page.",
                    details=[{"path": "cursor", "message": "not a cursor searchTools returned"}],
                )
            offset = decoded
        limit = int(arguments.get("max_results") or DEFAULT_RESULTS)
        text = query.strip() if isinstance(query, str) else ""
        return self._search(text, arguments.get("source"), limit, offset)

    def _search(self, query: str, source_id: str | None, limit: int, offset: int = 0) -> dict[str, Any]:
        view = self.view()
        base: dict[str, Any] = {"query": query or None, "source": source_id}
        counts = {"total_catalog_tools": len(view.visible)}
        if source_id is not None and source_id not in view.source_dicts:
            known = view.source_ids
            return {
                **base,
                "sources": view.sources(),
                **counts,
                "total_eligible_tools": 0,
                "total_matches": 0,
                "returned_tools": 0,
                "execution_tool": EXECUTE_TOOL,
                "tools": [],
                "hint": (
                    f"Unknown source {source_id[:100]!r}. Known sources: {', '.join(known) or '(none)'}. "
                    "Call searchTools again with one of these ids as source, or with source null to search all."
                ),
            }
        eligible = view.visible if source_id is None else view.by_source.get(source_id, [])
        hint: str | None = None
        if not query:
            if source_id is not None:
                picked = eligible[offset : offset + limit]
                more = offset + limit < len(eligible)
            else:
                picked, more = self._sample(eligible, limit), False
            total = len(eligible)
        else:
            picked, total = self._ranked(view, query, source_id, offset + limit)
            picked = picked[offset:]
            more = offset + limit < total
            if not picked and offset == 0:
                hint = self._no_match_hint(query, source_id, len(eligible))
        if source_id is not None:
            sources = view.sources([source_id])
        elif not query or not picked:
            sources = view.sources()
        else:
            sources = view.sources(sorted({t.source_id for t in picked}))
        answer = {
            **base,
            "sources": sources,
            **counts,
            "total_eligible_tools": len(eligible),
            "total_matches": total,
            "returned_tools": len(picked),
            "execution_tool": EXECUTE_TOOL,
            "tools": [view.tool_dict(t, with_source=source_id is None) for t in picked],
        }
        if more and picked:
            answer["next_cursor"] = _encode_cursor(offset + len(picked))
        if hint is not None:
            answer["hint"] = hint
        return answer

    @staticmethod
    def _no_match_hint(query: str, source_id: str | None, eligible: int) -> str:
        shown = query if len(query) <= 80 else query[:77] + "..."
        if source_id is not None and not eligible:
            return f"Source {source_id!r} has no tools right now. Call searchTools with source null to search all."
        if source_id is not None:
            return (
                f"No tool in source {source_id!r} matched {shown!r}. Call searchTools with an empty query and this "
                "source to list its tools, or with other words, or with source null to search every source."
            )
        return (
            f"No tool matched {shown!r}. Every source is listed above: call searchTools again with one of their ids "
            "as source (an empty query lists its tools), or with other words."
        )

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

    def _ranked(self, view: _View, query: str, source_id: str | None, limit: int) -> tuple[list[CatalogTool], int]:
        self._ensure_index(view)
        result = self.index.search(query, limit=limit, source_id=source_id)
        names = list(result.tool_names)
        total = result.total
        exact = self._exact(view, query, source_id)
        if exact is not None:
            if exact.tool_name in names:
                names.remove(exact.tool_name)
            elif not self.index.matches(query, exact.tool_name):
                total += 1
            names.insert(0, exact.tool_name)
        # An index a refresh has not replaced yet may name a tool that is gone: the view decides.
        picked = [t for t in (view.by_name.get(name) for name in names[:limit]) if t is not None]
        return picked, total

    @staticmethod
    def _exact(view: _View, query: str, source_id: str | None) -> CatalogTool | None:
        entry = view.by_name.get(query)
        if entry is not None and (source_id is None or entry.source_id == source_id):
            return entry
        if source_id is not None:
            return view.local.get((source_id, query))
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
        """``unknown_tool`` with close names, or ``unavailable`` when the name's source exists but is down."""
        view = self.view()
        shown = tool_name[:200]
        down = self._down_source(view, tool_name)
        if down is not None:
            source_id, reason = down
            return error(
                "unavailable",
                _clip(f"{shown} belongs to source {source_id!r}, which is unavailable right now ({reason}).", 240)
                + " Try again later, or use searchTools to find a tool in another source.",
                shown,
                source=source_id,
            )
        suggestions = difflib.get_close_matches(tool_name, list(view.by_name), n=3, cutoff=0.75)
        if not suggestions and tool_name.strip() and "\x00" not in tool_name:
            words = tool_name.replace("__", " ").replace("_", " ")[:MAX_QUERY]
            wanted = set(self.index.analyze(words))
            found, _ = self._ranked(view, words, None, 10) if wanted else ([], 0)
            suggestions = [t.tool_name for t in found if self._similar(wanted, t)][:3]
        hint = f" Did you mean {', '.join(suggestions)}?" if suggestions else ""
        return error(
            "unknown_tool",
            _clip(f"No tool named {tool_name!r}.{hint}", 200)
            + " Use searchTools to find the exact tool_name, then call executeTool with it.",
            shown,
            suggestions=suggestions,
            search_tool=SEARCH_TOOLS,
        )

    def _similar(self, wanted: set[str], entry: CatalogTool) -> bool:
        """Whether a suggestion shares most of the asked name's terms with the tool's name and keywords."""
        own = set(self.index.analyze(" ".join([entry.tool_name, *entry.tool.keywords])))
        return len(wanted & own) * 2 > len(wanted)

    def _down_source(self, view: _View, tool_name: str) -> tuple[str, str] | None:
        """The source a tool_name belongs to by its prefix, with why it is down; None if it is up or unknown."""
        best: str | None = None
        for source_id in view.source_ids:
            prefix = source_id.replace(":", "__") + "__"
            if tool_name.startswith(prefix) and (best is None or len(source_id) > len(best)):
                best = source_id
        if best is None:
            return None
        entry = self.catalog.source(best)
        if entry is not None and entry.unavailable:
            return best, entry.unavailable
        if not view.by_source.get(best) and entry is not None and entry.provider is not None:
            return best, "it lists no tools at the moment"
        return None


def is_json(value: Any) -> bool:
    """Whether ``value`` survives ``json.dumps`` unchanged in meaning (no NaN, no arbitrary objects)."""
    try:
        json.dumps(value, allow_nan=False)
    except (TypeError, ValueError, RecursionError):
        return False
    return True
