"""What searchTools answers from, computed once per exposure table (catalog and policy version)."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from junior_core import _protocol as protocol
from junior_core._discovery.analysis import SUMMARY_LIMIT, summarize

if TYPE_CHECKING:
    from junior_core._catalog.catalog import Catalog, CatalogTool
    from junior_core._catalog.exposure import Table

__all__ = ["View"]

_MAX_FILTERED = 256
"""Filtered tool lists kept per view: one per (tools hidden for some actor, source) seen."""


class View:
    """What searchTools answers from, computed once per exposure table (catalog and policy version)."""

    def __init__(self, catalog: Catalog, table: Table) -> None:
        self.table = table
        self.version = table.version
        tools = table.tools
        sources = catalog.sources
        self.visible = table.visible
        self.by_name = {t.tool_name: t for t in self.visible}
        self.by_source: dict[str, list[CatalogTool]] = {entry.source.id: [] for entry in sources}
        self.local: dict[tuple[str, str], CatalogTool] = {}
        for entry in self.visible:
            self.by_source.setdefault(entry.source_id, []).append(entry)
            self.local.setdefault((entry.source_id, entry.tool.name), entry)
        # A source the host hides is not advertised: all of its tools are hidden, or, before it has any tools
        # (a run-time source not listed yet), a rule hides the source id itself.
        has_tools = {t.source_id for t in tools}
        self.source_ids = [
            entry.source.id for entry in sources
            if self.by_source.get(entry.source.id)
            or (entry.source.id not in has_tools and not table.hides_source(entry.source.id))
        ]
        shown = set(self.source_ids)
        self.source_dicts = {
            entry.source.id: {"id": entry.source.id, "description": summarize(entry.source.description)}
            for entry in sources if entry.source.id in shown
        }
        self.source_texts = {entry.source.id: entry.source.description for entry in sources}
        self._tool_dicts: dict[str, tuple[dict[str, Any], dict[str, Any]]] = {}
        self._row_sizes: dict[tuple[str, bool, bool], int] = {}
        self._held: dict[str, tuple[frozenset[str], ...]] = {}
        self._params: dict[str, str] = {}

        self._filtered: dict[tuple[frozenset[str], str | None], list[CatalogTool]] = {}
        self.description = protocol.search_description(
            [(sid, self.source_dicts[sid]["description"]) for sid in self.source_ids]
        )

    def eligible(self, source_id: str | None, hidden: frozenset[str]) -> list[CatalogTool]:
        """The tools searchTools may show (of one source, or all), without ``hidden``; filtered once per set."""
        tools = self.visible if source_id is None else self.by_source.get(source_id, [])
        if not hidden:
            return tools
        key = (hidden, source_id)
        found = self._filtered.get(key)
        if found is None:
            found = [t for t in tools if t.tool_name not in hidden]
            if len(self._filtered) >= _MAX_FILTERED:
                self._filtered.clear()
            self._filtered[key] = found
        return found

    def tool_dict(self, entry: CatalogTool, with_source: bool) -> dict[str, Any]:
        """The answer row of a tool; summaries are made once per view, each answer gets its own copy."""
        pair = self._tool_dicts.get(entry.tool_name)
        if pair is None:
            summary = summarize(entry.tool.description)
            annotations = dict(entry.tool.annotations or {})
            title = annotations.get("title")
            if isinstance(title, str) and len(title) > SUMMARY_LIMIT:  # shown with every answer naming the tool
                annotations["title"] = summarize(title)
            schema = entry.tool.input_schema
            plain = protocol.tool_row(entry.tool_name, summary, None, schema, annotations)
            sourced = protocol.tool_row(entry.tool_name, summary, entry.source_id, schema, annotations)
            pair = self._tool_dicts[entry.tool_name] = (plain, sourced)
        row = pair[1] if with_source else pair[0]
        if "annotations" in row:
            return {**row, "annotations": dict(row["annotations"])}
        return dict(row)

    def brief_dict(self, entry: CatalogTool, with_source: bool) -> dict[str, Any]:
        """A tool's compact answer row: its name, summary (and source) and parameters in one line, without
        schema or annotations."""
        row = self.tool_dict(entry, with_source)
        params = self._params.get(entry.tool_name)
        if params is None:
            params = self._params[entry.tool_name] = protocol.compact_params(entry.tool.input_schema)
        return protocol.brief_row(row, params)

    def row_size(self, row: dict[str, Any]) -> int:
        """``len(json.dumps(row))`` of a tool's answer row, measured once per view (its ``matched`` per answer)."""
        key = (row["tool_name"], "source" in row, "input_schema" in row)
        size = self._row_sizes.get(key)
        if size is None:
            size = self._row_sizes[key] = len(json.dumps({k: v for k, v in row.items() if k != "matched"}))
        if "matched" in row:
            size += len(', "matched": ') + len(json.dumps(row["matched"]))
        return size

    def held(self, tool_name: str, terms: Callable[[], tuple[frozenset[str], ...]]) -> tuple[frozenset[str], ...]:
        """The terms of a tool an answer weighs (``Discovery._held``), made by ``terms`` once per view."""
        found = self._held.get(tool_name)
        if found is None:
            found = self._held[tool_name] = terms()
        return found

    def sources(self, ids: Any = None) -> list[dict[str, str]]:
        chosen = self.source_ids if ids is None else ids
        return [dict(self.source_dicts[sid]) for sid in chosen if sid in self.source_dicts]
