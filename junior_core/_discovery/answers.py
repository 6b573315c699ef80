"""searchTools over the view of the catalog a model may reach: searched, listed and paged; executeTool's misses.

What the answers say is ``protocol``'s; what goes in them is decided here.
"""

from __future__ import annotations

import difflib
import functools
import logging
import os
import re
import threading
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from junior_core import _protocol as protocol
from junior_core._catalog.exposure import NOTHING_HIDDEN
from junior_core._discovery.analysis import summarize
from junior_core._discovery.documents import fields_holding
from junior_core._discovery.floor import PARTIAL, Evidence, nearest_sources, partial_matches, weigh
from junior_core._discovery.index import SearchIndex
from junior_core._discovery.names import down_source, named, sample, similar
from junior_core._discovery.reasons import Trace
from junior_core._discovery.sizing import fit, fit_no_match
from junior_core._discovery.view import View
from junior_core._protocol.tools import DEFAULT_MAX_SEARCH_CHARS

if TYPE_CHECKING:
    from junior_core._catalog.catalog import Catalog, CatalogTool
    from junior_core._catalog.exposure import Reach

__all__ = ["Discovery"]

log = logging.getLogger("junior.search")


class Discovery:
    """Answers searchTools over one catalog, as ``reach`` (the host's exposure rules) shows it."""

    def __init__(self, catalog: Catalog, reach: Reach, index_cache: bool | str | os.PathLike[str] = False,
                 index: SearchIndex | None = None, max_answer_chars: int = DEFAULT_MAX_SEARCH_CHARS) -> None:
        """``index_cache``: True stores indexes in the user cache directory, a path there, False nowhere; an
        ``index`` given is used as it is."""
        self.catalog = catalog
        self.max_answer_chars = max_answer_chars
        self.reach = reach
        if index is None and index_cache is not False:
            from junior_core._discovery.store import IndexCache  # here: a runtime storing no index never needs it

            index = SearchIndex(cache=IndexCache(None if index_cache is True else Path(index_cache)))
        self.index = index if index is not None else SearchIndex(cache=None)
        self._view: View | None = None
        self._view_lock = threading.Lock()
        self._rebuild: threading.Thread | None = None
        self._rebuild_lock = threading.Lock()

    @property
    def version(self) -> int:
        """Increases whenever the catalog or the policy changes."""
        return self.reach.version

    def view(self) -> View:
        """The current view, remade only when the exposure table (the catalog or the policy) changed."""
        table = self.reach.table()
        view = self._view
        if view is not None and view.table is table:
            return view
        with self._view_lock:
            view = self._view
            if view is None or view.table is not table:
                view = self._view = View(self.catalog, table)
        return view

    def visible(self, source_id: str | None = None) -> list[CatalogTool]:
        """Searchable tools (deferred and direct, never hidden), by tool_name."""
        view = self.view()
        return list(view.visible if source_id is None else view.by_source.get(source_id, []))

    def source_summaries(self) -> list[dict[str, str]]:
        """Every catalog source's id and summary, sorted by id, whatever the host hides."""
        return [{"id": e.source.id, "description": summarize(e.source.description)} for e in self.catalog.sources]

    def _build_index(self, view: View) -> None:
        self.index.build(view.visible, view.source_texts, view.version)

    def refresh_index(self) -> None:
        """Rebuild the index for the current catalog on a background thread; searches use the old one meanwhile
        (before the first search there is none: that search builds or opens it)."""
        if self.index.snapshot is None:
            return
        with self._rebuild_lock:
            if self._rebuild is not None and self._rebuild.is_alive():
                return  # the running rebuild re-reads the catalog when it finishes
            self._rebuild = threading.Thread(target=self._rebuild_until_current, name="junior-index", daemon=True)
            self._rebuild.start()

    def _rebuild_until_current(self) -> None:
        try:
            while self.index.version != self.version:
                self._build_index(self.view())
        except Exception:
            log.exception("rebuilding the search index failed")

    def wait_for_index(self, timeout: float | None = None) -> bool:
        """Block until the index matches the catalog (after a refresh); whether it does."""
        thread = self._rebuild
        if thread is not None:
            thread.join(timeout)
        if self.index.version != self.version:
            self._build_index(self.view())
        return self.index.version == self.version

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
        size = sum(f.stat().st_size for f in Path(snapshot.path).iterdir()) if snapshot.path is not None else None
        return {
            "state": "stored" if snapshot.path else "in memory",
            "cache_dir": str(cache.directory) if cache is not None else None,
            "path": snapshot.path,
            "fingerprint": snapshot.fingerprint,
            "tools": len(snapshot.docs.names),
            "bytes": size,
            "stored_indexes": len(cache.entries()) if cache is not None else 0,
        }

    def _ensure_index(self, view: View) -> None:
        if self.index.version != view.version:  # with no index yet, nothing to answer from: build it now
            self._build_index(view) if self.index.snapshot is None else self.refresh_index()

    def search(self, request: protocol.SearchRequest, hidden: frozenset[str] = NOTHING_HIDDEN) -> dict[str, Any]:
        """Exactly what the searchTools tool returns for a checked request; tools in ``hidden`` (from the caller's
        actor or conversation) are left out of the tools and of every count, as if not in the catalog."""
        if request.tool_names:
            return self._named(request.tool_names, hidden)
        if request.queries:
            return self._batch(request, hidden)
        return self._one(request, hidden, self.max_answer_chars)

    def _named(self, tool_names: tuple[str, ...], hidden: frozenset[str]) -> dict[str, Any]:
        """Exactly the tools named, each in full, in the order asked (a name twice, once); a name that is no
        tool the caller may see comes back with close tool_names, and nothing else is added."""
        view = self.view()
        rows, unknown = named(view, tool_names, hidden, lambda name: self.unknown_tool(name, hidden)["error"])
        answer = protocol.tool_names_answer(rows, unknown)
        if not rows:
            return fit_no_match(answer)
        return fit(view, answer, 0, self.max_answer_chars)

    def _batch(self, request: protocol.SearchRequest, hidden: frozenset[str]) -> dict[str, Any]:
        """One answer per query of ``request.queries``, each within its share of the size limit; a tool an earlier
        query already showed is named again (with its ``matched``) without its schema, unless this query shows it
        in full and the earlier ones only in one line (its schema would be given nowhere)."""
        view = self.view()
        share = self.max_answer_chars // len(request.queries)
        results: list[dict[str, Any]] = []
        shown: dict[str, bool] = {}  # tool_name -> shown with its schema
        sources: list[str] = []
        counts: dict[str, int] = {}
        brief = False
        for query in request.queries:
            answer = self._one(request.one(query), hidden, share)
            answer.pop("ok", None)
            answer.pop("source", None)
            brief = answer.pop("schemas", None) is not None or brief  # said once, for every result
            counts = {key: answer.pop(key) for key in ("total_catalog_tools", "total_eligible_tools")}
            for sid in [row["id"] for row in answer.pop("sources", [])]:
                if sid not in sources:
                    sources.append(sid)
            rows = []
            for row in answer["tools"]:
                name, full = row["tool_name"], "input_schema" in row
                if name in shown and (shown[name] or not full):
                    row = {"tool_name": name, **({"matched": row["matched"]} if "matched" in row else {}),
                           "shown_above": True}
                shown[name] = shown.get(name, False) or full
                rows.append(row)
            answer["tools"] = rows
            results.append(answer)
        return protocol.batch_answer(request.source, view.sources(sources), results, brief=brief, **counts)

    def _one(self, request: protocol.SearchRequest, hidden: frozenset[str], budget: int) -> dict[str, Any]:
        query, source_id, limit, offset = request.query, request.source, request.limit, request.offset
        view = self.view()
        in_catalog = len(view.eligible(None, hidden))
        if source_id is not None and source_id not in view.source_dicts:
            return protocol.search_answer(
                query, source_id, view.sources(), catalog_tools=in_catalog, eligible_tools=0, matches=0, tools=[],
                hint=protocol.unknown_source_hint(source_id, view.source_ids),
            )
        eligible = view.eligible(source_id, hidden)
        hint: str | None = None
        corrected: tuple[tuple[str, str], ...] = ()
        weak = False
        matched: Mapping[str, list[str]] = {}
        unmatched: tuple[str, ...] | None = None
        full: frozenset[str] = frozenset()  # tool_names shown with their schema
        near: list[str] = []
        if not query:
            # A listing asks what is there: one compact row per tool, page by page.
            if source_id is not None:
                picked = eligible[offset : offset + limit]
                more = offset + limit < len(eligible)
            else:
                picked, more = sample(eligible, limit), False
            total = len(eligible)
        else:
            picked, total, corrected, weigh_page, below = self._found(view, query, source_id, limit, offset,
                                                                     hidden)
            full = frozenset(t.tool_name for t in picked[:1])  # the first-ranked: the exact tool_name if any
            picked = picked[offset : offset + limit]
            more = offset + limit < total
            found = weigh_page([t.tool_name for t in picked])
            matched, unmatched = found.matched, found.unmatched
            flagged = any(t.tool_name in below for t in picked)  # below the floor: shown, never unflagged
            if (found.weak and offset == 0) or flagged:
                weak, hint = True, protocol.weak_hint(found.unheld, found.elsewhere, flagged)
            if not picked and offset == 0:
                near = [source_id] if source_id is not None else nearest_sources(
                    self.index, query, view.source_ids, protocol.NEAREST_SOURCES)
                hint = protocol.no_match_hint(query, source_id, len(eligible), bool(near))
        # An answer that returns tools describes no source: inside one the model named it, and across sources each
        # row names its own, whose summary is a line of this tool's description already.
        sources: list[dict[str, str]] = []
        if not query:
            sources = view.sources([source_id] if source_id is not None else None)
        elif not picked:
            sources = view.sources(near)
        rows = []
        for entry in picked:
            if entry.tool_name in full:
                row = view.tool_dict(entry, with_source=source_id is None)
            else:
                row = view.brief_dict(entry, with_source=source_id is None)
            rows.append(protocol.with_matched(row, matched.get(entry.tool_name, ())))
        answer = protocol.search_answer(
            query, source_id, sources, catalog_tools=in_catalog, eligible_tools=len(eligible), matches=total,
            tools=rows,
            next_offset=offset + len(picked) if more and picked else None, hint=hint,
            note=protocol.corrected_note(corrected) if corrected else None, weak=weak,
            brief=any("input_schema" not in row for row in rows), unmatched=unmatched,
        )
        if not rows:
            return fit_no_match(answer)
        return fit(view, answer, offset, budget)

    def _found(self, view: View, query: str, source_id: str | None, limit: int, offset: int,
               hidden: frozenset[str],
               ) -> tuple[list[CatalogTool], int, tuple[tuple[str, str], ...], Callable[[list[str]], Evidence],
                          frozenset[str]]:
        """The tools of a search's pages up to ``offset + limit``, the total, the corrections, how to weigh the
        evidence of a page of them, and which of them are below the floor.

        Past the floor first; when those are none or weak, the tools below the floor whose own text holds a word
        of the query follow them (by score), and an answer showing one is weak: a partial match shown with its
        evidence serves better than silence. The query equal to a tool_name is that tool alone."""
        picked, total, corrected, asked, exact = self._ranked(view, query, source_id, offset + limit, hidden)
        searched = _corrected(query, corrected)
        whole = source_id is None

        def weigh_names(names: list[str], asked: tuple[str, ...] = asked) -> Evidence:
            return weigh(self.index, searched, asked, names, lambda name: self._held(view, name), exact,
                         whole)

        if exact is not None and source_id is None:
            picked, total = picked[:1], 1
        if not whole or exact is not None or len(picked) >= offset + limit or (
                picked and not weigh_names([t.tool_name for t in picked[:limit]]).weak):
            return picked, total, corrected, weigh_names, frozenset()
        window = offset + limit + len(picked) + protocol.MAX_RESULTS
        below, _, _, below_asked, _ = self._ranked(view, query, source_id, window, hidden, floor=False)
        extra = partial_matches(picked, below, searched, self.index.analyze, lambda name: self._held(view, name))
        if not extra:
            return picked, total, corrected, weigh_names, frozenset()
        page_weigh = functools.partial(weigh_names, asked=asked or below_asked)
        return picked + extra, total + len(extra), corrected, page_weigh, frozenset(t.tool_name for t in extra)

    def _held(self, view: View, tool_name: str) -> frozenset[str]:
        """Every term a tool's own text holds, its source's left out (read once per view)."""
        def terms() -> tuple[frozenset[str], ...]:
            entry = view.by_name[tool_name]
            fields = fields_holding(self.index.config, self.index.analyzer, entry, None)
            return (frozenset().union(*(held for field, held in fields.items() if field != "source")),)

        return view.held(tool_name, terms)[0]

    def explain(self, query: str, source_id: str | None = None, hidden: frozenset[str] = NOTHING_HIDDEN,
                limit: int | None = None) -> dict[str, Any]:
        """Why each tool searchTools returns for ``query`` ranks where it does, as data (``reasons``); input checked
        as searchTools checks it, a refusal answered as searchTools answers it."""
        try:
            request = protocol.search_request({"query": query, "source": source_id, "max_results": limit})
        except protocol.Refusal as refused:
            return refused.answer
        query, source_id, limit = request.query, request.source, request.limit
        view = self.view()
        out: dict[str, Any] = {"query": query, "source": source_id}
        if source_id is not None and source_id not in view.source_dicts:
            return {**out, "tools": [], "hint": protocol.unknown_source_hint(source_id, view.source_ids)}
        if not query:
            return {**out, "tools": [], "hint": "An empty query lists tools without ranking them: give words."}
        trace = Trace()
        picked, total, *_ = self._ranked(view, query, source_id, limit, hidden, trace)
        shown = {t.tool_name for t in picked}
        if trace.searched is not None:
            out["searched"] = trace.searched
        rows = [row for row in trace.tools if row["tool_name"] in shown]
        # The partial matches searchTools shows below the floor, with the reasons of the unfloored pass that found them.
        found, total, _, _, partial = self._found(view, query, source_id, limit, 0, hidden)
        if partial:
            below = Trace()
            self._ranked(view, query, source_id, len(found) + protocol.MAX_RESULTS, hidden, below, floor=False)
            by_name = {row["tool_name"]: row for row in below.tools}
            rows += [{**by_name[t.tool_name], **PARTIAL} for t in found[:limit]
                     if t.tool_name in partial and t.tool_name in by_name]
        return {**out, "total_matches": total, "tools": rows}

    def _ranked(self, view: View, query: str, source_id: str | None, limit: int,
                hidden: frozenset[str] = NOTHING_HIDDEN, trace: Trace | None = None, floor: bool = True,
                ) -> tuple[list[CatalogTool], int, tuple[tuple[str, str], ...], tuple[str, ...], str | None]:
        """The tools for ``query`` in rank order, how many matched, the typos corrected, the terms the request asked
        with (``SearchResult.asked``), and the tool_name the query is, if any."""
        self._ensure_index(view)
        result = self.index.search(query, limit=limit, source_id=source_id, hidden=hidden, trace=trace, floor=floor)
        names = list(result.tool_names)
        total = result.total
        exact = self._exact(view, query, source_id)
        if exact is not None and exact.tool_name in hidden:
            exact = None
        if exact is not None:
            if exact.tool_name in names:
                names.remove(exact.tool_name)
            elif not self.index.matches(query, exact.tool_name):
                total += 1
            names.insert(0, exact.tool_name)
            if trace is not None:
                trace.exact(exact.tool_name)
        # An index a refresh has not replaced yet may name a tool that is gone: the view decides.
        picked = [t for t in (view.by_name.get(name) for name in names[:limit]) if t is not None]
        return picked, total, result.corrections, result.asked, exact.tool_name if exact is not None else None

    @staticmethod
    def _exact(view: View, query: str, source_id: str | None) -> CatalogTool | None:
        entry = view.by_name.get(query)
        if entry is not None and (source_id is None or entry.source_id == source_id):
            return entry
        if source_id is not None:
            return view.local.get((source_id, query))
        return None

    # -- executeTool ---------------------------------------------------------------------------
    def unknown_tool(self, tool_name: str, hidden: frozenset[str] = NOTHING_HIDDEN) -> dict[str, Any]:
        """``unknown_tool`` with close names, or ``unavailable`` when the name's source exists but is down.

        A tool in ``hidden`` is neither suggested nor told apart from a name that does not exist.
        """
        view = self.view()
        down = down_source(self.catalog, view, tool_name)
        if down is not None:
            return protocol.source_unavailable(tool_name, *down)
        names = [name for name in view.by_name if name not in hidden] if hidden else list(view.by_name)
        suggestions = difflib.get_close_matches(tool_name, names, n=3, cutoff=0.75)
        if not suggestions and tool_name.strip() and "\x00" not in tool_name:
            words = tool_name.replace("__", " ").replace("_", " ")[:protocol.MAX_QUERY]
            wanted = set(self.index.analyze(words))
            found = self._ranked(view, words, None, 10, hidden)[0] if wanted else []
            suggestions = [t.tool_name for t in found if similar(self.index.analyze, wanted, t)][:3]
        return protocol.unknown_tool(tool_name, suggestions)



def _corrected(query: str, fixes: tuple[tuple[str, str], ...]) -> str:
    """``query`` with each corrected word as it was searched for."""
    for word, fixed in fixes:
        query = re.sub(rf"(?<!\w){re.escape(word)}(?!\w)", fixed, query)
    return query
