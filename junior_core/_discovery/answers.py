"""searchTools over the view of the catalog a model may reach: searched, listed, paged and fitted to a size; explain;
executeTool's misses. What the answers say is ``protocol``'s; what goes in them is decided here."""

from __future__ import annotations

import difflib
import functools
import itertools
import json
import logging
import os
import re
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from junior_core import _protocol as protocol
from junior_core._catalog.catalog import tool_name_prefix
from junior_core._catalog.exposure import NOTHING_HIDDEN
from junior_core._discovery.analysis import SUMMARY_LIMIT, summarize
from junior_core._discovery.documents import fields_holding
from junior_core._discovery.floor import PARTIAL, Evidence, nearest_sources, partial_matches, weigh
from junior_core._discovery.index import SearchIndex
from junior_core._discovery.reasons import Trace
from junior_core._protocol.tools import DEFAULT_MAX_SEARCH_CHARS

if TYPE_CHECKING:
    from junior_core._catalog.catalog import Catalog, CatalogTool
    from junior_core._catalog.exposure import Reach, Table

__all__ = ["Discovery", "View", "fit_no_match"]

log = logging.getLogger("junior.search")


class View:
    """What searchTools answers from, made once per exposure table (catalog and policy version)."""

    def __init__(self, catalog: Catalog, table: Table) -> None:
        self.table, self.version, self.visible = table, table.version, table.visible
        sources = catalog.sources
        self.by_name = {t.tool_name: t for t in self.visible}
        self.by_source: dict[str, list[CatalogTool]] = {}
        self.local: dict[tuple[str, str], CatalogTool] = {}  # (source_id, the tool's own name) -> tool
        for entry in self.visible:
            self.by_source.setdefault(entry.source_id, []).append(entry)
            self.local.setdefault((entry.source_id, entry.tool.name), entry)
        # A source the host hides is not advertised: all of its tools are hidden, or, before it has any tools
        # (a run-time source not listed yet), a rule hides the source id itself.
        has_tools = {t.source_id for t in table.tools}
        self.source_dicts = {
            e.source.id: {"id": e.source.id, "description": summarize(e.source.description)} for e in sources
            if self.by_source.get(e.source.id) or (e.source.id not in has_tools and not table.hides_source(e.source.id))
        }
        self.source_ids = list(self.source_dicts)
        self.source_texts = {entry.source.id: entry.source.description for entry in sources}
        self.description = protocol.search_description([(s, d["description"]) for s, d in self.source_dicts.items()])
        self.held: dict[str, frozenset[str]] = {}  # Discovery._held's, per tool_name
        # Made once per view: the tool lists per (tools hidden for some actor, source), each answer row and its size.
        # The caches hold the view's tables, not the view, so a replaced view is freed as soon as it is dropped.
        self.eligible = functools.lru_cache(maxsize=256)(functools.partial(_eligible, self.visible, self.by_source))
        self._made = functools.cache(functools.partial(_make_row, self.by_name))
    def row(self, entry: CatalogTool, with_source: bool, full: bool = True) -> dict[str, Any]:
        """A copy of a tool's answer row, in full or its parameters in one line."""
        row = self._made(entry.tool_name, with_source, full)[0]
        return {key: dict(value) if key == "annotations" else value for key, value in row.items()}

    def row_size(self, row: dict[str, Any]) -> int:
        """``len(json.dumps(row))`` of a row this view made, its ``matched`` added."""
        size = self._made(row["tool_name"], "source" in row, "input_schema" in row)[1]
        return size + (len(', "matched": ') + len(json.dumps(row["matched"])) if "matched" in row else 0)

    def sources(self, ids: list[str] | None = None) -> list[dict[str, str]]:
        return [dict(self.source_dicts[s]) for s in (self.source_ids if ids is None else ids) if s in self.source_dicts]


def _eligible(visible: list[CatalogTool], by_source: dict[str, list[CatalogTool]], source_id: str | None,
              hidden: frozenset[str]) -> list[CatalogTool]:
    """The tools searchTools may show (of one source, or all), without ``hidden``."""
    tools = visible if source_id is None else by_source.get(source_id, [])
    return [t for t in tools if t.tool_name not in hidden] if hidden else tools


def _make_row(by_name: dict[str, CatalogTool], tool_name: str, with_source: bool,
              full: bool) -> tuple[dict[str, Any], int]:
    """A tool's answer row (in full, or its parameters in one line) and its size."""
    entry = by_name[tool_name]
    tool, annotations = entry.tool, dict(entry.tool.annotations or {})
    title = annotations.get("title")
    if isinstance(title, str) and len(title) > SUMMARY_LIMIT:  # shown with every answer naming the tool
        annotations["title"] = summarize(title)
    row = protocol.tool_row(tool_name, summarize(tool.description), entry.source_id if with_source else None,
                            tool.input_schema, annotations)
    if not full:
        row = protocol.brief_row(row, protocol.compact_params(tool.input_schema))
    return row, len(json.dumps(row))


def _fit(view: View, answer: dict[str, Any], offset: int, budget: int) -> dict[str, Any]:
    """``answer`` within ``budget`` characters of ``json.dumps`` (the most a host sends for it): the largest schemas
    shortened first, then the last tools left to the next page, as ``shortened`` says."""
    rows: list[dict[str, Any]] = list(answer["tools"])
    if not rows:
        return fit_no_match(answer)
    sizes = [view.row_size(row) for row in rows]
    base = len(json.dumps({**answer, "tools": []}))
    if base + sum(sizes) + 2 * len(rows) <= budget:
        return answer
    names = [row["tool_name"] for row in rows]
    # Room for the note, counted as if it named every tool.
    size = base + sum(sizes) + 2 * len(rows) + len(json.dumps({"shortened": protocol.shortened_note(
        budget, names, len(rows), protocol.encode_cursor(offset + len(rows)))}))
    shortened: dict[str, str] = {}
    with_schema = [i for i in range(len(rows)) if "input_schema" in rows[i]]
    largest_first = sorted(with_schema, key=lambda i: (-sizes[i], names[i]))
    for how, shorten in (("outline", protocol.schema_outline), ("omitted", protocol.schema_omitted)):
        for i in largest_first:
            if size <= budget:
                break
            row = {**rows[i], "input_schema": shorten(rows[i]["input_schema"]), "input_schema_shortened": how}
            new_size = len(json.dumps(row))
            if new_size < sizes[i]:  # an outline of a schema that is already small saves nothing
                size += new_size - sizes[i]
                rows[i], sizes[i], shortened[names[i]] = row, new_size, how
    while True:
        out, dropped, cursor = {**answer, "tools": rows}, len(names) - len(rows), ""
        if dropped and ("query" in answer or "source" in answer):
            cursor = out["next_cursor"] = protocol.encode_cursor(offset + len(rows))
        listed = [row["tool_name"] for row in rows if row["tool_name"] in shortened]
        out["shortened"] = protocol.shortened_note(budget, listed, dropped, cursor)
        if len(rows) == 1 or len(json.dumps(out)) <= budget:
            return out
        rows = rows[:-1]  # past every schema: the last tools wait for the next page


def fit_no_match(answer: dict[str, Any]) -> dict[str, Any]:
    """An answer without tools within ``protocol.NO_MATCH_CHARS``: the query it repeats shortened first (its hint
    quotes it), then the farthest of its sources left out."""
    if len(json.dumps(answer)) <= protocol.NO_MATCH_CHARS:
        return answer
    out = dict(answer)
    if "query" in out:
        out["query"] = protocol.clip(out["query"], 200)
    while out.get("sources") and len(json.dumps(out)) > protocol.NO_MATCH_CHARS:
        out["sources"] = out["sources"][:-1]
        if not out["sources"]:
            del out["sources"]
    return out


def _sample(eligible: list[CatalogTool], limit: int) -> list[CatalogTool]:
    """Round-robin across sources (by id), each source's tools in their order."""
    by_source = sorted(eligible, key=lambda t: t.source_id)  # stable: each source's tools stay in order
    groups = [list(group) for _, group in itertools.groupby(by_source, key=lambda t: t.source_id)]
    return [t for t in itertools.chain(*itertools.zip_longest(*groups)) if t is not None][:limit]


class Discovery:
    """Answers searchTools over one catalog, as ``reach`` (the host's exposure rules) shows it."""

    def __init__(self, catalog: Catalog, reach: Reach, index_cache: bool | str | os.PathLike[str] = False,
                 index: SearchIndex | None = None, max_answer_chars: int = DEFAULT_MAX_SEARCH_CHARS) -> None:
        """``index_cache``: True for the user cache directory, a path, or False (none); ``index`` is used as is."""
        self.catalog, self.reach, self.max_answer_chars = catalog, reach, max_answer_chars
        if index is None and index_cache is not False:
            from junior_core._discovery.store import IndexCache  # here: a runtime storing no index never needs it

            index = SearchIndex(cache=IndexCache(None if index_cache is True else Path(index_cache)))
        self.index = index if index is not None else SearchIndex(cache=None)
        self._view: View | None = None
        self._view_lock, self._rebuild_lock = threading.Lock(), threading.Lock()
        self._rebuild: threading.Thread | None = None

    def view(self) -> View:
        """The current view, remade only when the exposure table (the catalog or the policy) changed."""
        table = self.reach.table()
        with self._view_lock:
            if self._view is None or self._view.table is not table:
                self._view = View(self.catalog, table)
            return self._view

    def source_summaries(self) -> list[dict[str, str]]:
        """Every catalog source's id and summary, sorted by id, whatever the host hides."""
        return [{"id": e.source.id, "description": summarize(e.source.description)} for e in self.catalog.sources]

    # -- the index -------------------------------------------------------------------------------
    def _build_index(self, view: View) -> None:
        self.index.build(view.visible, view.source_texts, view.version)

    def refresh_index(self) -> None:
        """Rebuild the index for the current catalog on a background thread; searches use the old one meanwhile
        (before the first search there is none: that search builds or opens it)."""
        if self.index.snapshot is None:
            return
        with self._rebuild_lock:
            if self._rebuild is None or not self._rebuild.is_alive():  # a running one re-reads the catalog at its end
                self._rebuild = threading.Thread(target=self._rebuild_until_current, name="junior-index", daemon=True)
                self._rebuild.start()

    def _rebuild_until_current(self) -> None:
        try:
            while self.index.version != self.reach.version:
                self._build_index(self.view())
        except Exception:
            log.exception("rebuilding the search index failed")

    def wait_for_index(self, timeout: float | None = None) -> bool:
        """Block until the index matches the catalog (after a refresh); whether it does."""
        if self._rebuild is not None:
            self._rebuild.join(timeout)
        if self.index.version != self.reach.version:
            self._build_index(self.view())
        return self.index.version == self.reach.version

    def index_info(self, rebuild: bool = False) -> dict[str, Any]:
        """Where the index for the current catalog is, its fingerprint and size (for ``junior index``)."""
        view, cache = self.view(), self.index.cache
        if rebuild:
            if cache is not None and self.index.snapshot is not None and self.index.snapshot.path:
                cache.remove(self.index.snapshot.fingerprint)
            self.index.reset()
        self._build_index(view)
        snapshot = self.index.snapshot
        assert snapshot is not None
        size = sum(f.stat().st_size for f in Path(snapshot.path).iterdir()) if snapshot.path is not None else None
        return {"state": "stored" if snapshot.path else "in memory",
                "cache_dir": str(cache.directory) if cache is not None else None, "path": snapshot.path,
                "fingerprint": snapshot.fingerprint, "tools": len(snapshot.docs.names), "bytes": size,
                "stored_indexes": len(cache.entries()) if cache is not None else 0}

    # -- searchTools -----------------------------------------------------------------------------
    def search(self, request: protocol.SearchRequest, hidden: frozenset[str] = NOTHING_HIDDEN) -> dict[str, Any]:
        """Exactly what the searchTools tool returns for a checked request; tools in ``hidden`` (from the caller's
        actor or conversation) are left out of the tools and of every count, as if not in the catalog."""
        if request.tool_names:
            return self._named(request.tool_names, hidden)
        return self._batch(request, hidden) if request.queries else self._one(request, hidden, self.max_answer_chars)

    def _named(self, tool_names: tuple[str, ...], hidden: frozenset[str]) -> dict[str, Any]:
        """The tools named, each in full and once, in order; a name no tool the caller sees, with close names."""
        view = self.view()
        rows: list[dict[str, Any]] = []
        unknown: list[dict[str, Any]] = []
        for name in dict.fromkeys(tool_names):
            entry = view.by_name.get(name)
            if entry is not None and name not in hidden:
                rows.append(view.row(entry, with_source=True))
                continue
            error = self.unknown_tool(name, hidden)["error"]
            said = {"suggestions": list(error.get("suggestions", [])),
                    "unavailable": error["message"] if error["code"] == "unavailable" else None}
            unknown.append({"tool_name": protocol.clip(name, 100), **{k: v for k, v in said.items() if v}})
        return _fit(view, protocol.tool_names_answer(rows, unknown), 0, self.max_answer_chars)

    def _batch(self, request: protocol.SearchRequest, hidden: frozenset[str]) -> dict[str, Any]:
        """One answer per query, each within its share of the size limit; a tool an earlier query already showed is
        named again (with its ``matched``) without its schema, unless this query shows it in full and the earlier
        ones only in one line (its schema would be given nowhere)."""
        view, share = self.view(), self.max_answer_chars // len(request.queries)
        results: list[dict[str, Any]] = []
        shown: dict[str, bool] = {}  # tool_name -> shown with its schema
        sources: dict[str, None] = {}
        counts: dict[str, int] = {}
        brief = False
        for query in request.queries:
            answer = self._one(request.one(query), hidden, share)
            answer.pop("ok", None)
            answer.pop("source", None)
            brief = answer.pop("schemas", None) is not None or brief  # said once, for every result
            counts = {key: answer.pop(key) for key in ("total_catalog_tools", "total_eligible_tools")}
            sources.update((row["id"], None) for row in answer.pop("sources", []))
            for i, row in enumerate(answer["tools"]):
                name, full = row["tool_name"], "input_schema" in row
                if name in shown and (shown[name] or not full):
                    row = {key: row[key] for key in ("tool_name", "matched") if key in row}
                    answer["tools"][i] = {**row, "shown_above": True}
                shown[name] = shown.get(name, False) or full
            results.append(answer)
        return protocol.batch_answer(request.source, view.sources(list(sources)), results, brief=brief, **counts)

    def _one(self, request: protocol.SearchRequest, hidden: frozenset[str], budget: int) -> dict[str, Any]:
        query, source_id, limit, offset = request.query, request.source, request.limit, request.offset
        view = self.view()
        in_catalog = len(view.eligible(None, hidden))
        if source_id is not None and source_id not in view.source_dicts:
            return protocol.search_answer(
                query, source_id, view.sources(), catalog_tools=in_catalog, eligible_tools=0, matches=0, tools=[],
                hint=protocol.unknown_source_hint(source_id, view.source_ids))
        eligible = view.eligible(source_id, hidden)
        full: str | None = None  # the tool shown with its schema: the first-ranked (the exact tool_name if any)
        matched: Mapping[str, list[str]] = {}
        said: dict[str, Any] = {}  # search_answer's words on what was found
        if not query:  # a listing asks what is there: one compact row per tool, page by page
            picked = eligible[offset:offset + limit] if source_id is not None else _sample(eligible, limit)
            total, more = len(eligible), source_id is not None and offset + limit < len(eligible)
            sources = view.sources([source_id] if source_id is not None else None)
        else:
            picked, total, corrected, found, below = self._found(view, query, source_id, limit, offset, hidden)
            full = picked[0].tool_name if picked else None
            picked, more = picked[offset:offset + limit], offset + limit < total
            matched = found.matched
            said.update(unmatched=found.unmatched, note=protocol.corrected_note(corrected) if corrected else None)
            flagged = any(t.tool_name in below for t in picked)  # below the floor: shown, never unflagged
            if (found.weak and offset == 0) or flagged:
                said.update(weak=True, hint=protocol.weak_hint(found.unheld, found.elsewhere, flagged))
            near: list[str] = []
            if not picked and offset == 0:
                near = [source_id] if source_id is not None else nearest_sources(
                    self.index, query, view.source_ids, protocol.NEAREST_SOURCES)
                said["hint"] = protocol.no_match_hint(query, source_id, len(eligible), bool(near))
            # An answer that returns tools describes no source: inside one the model named it, and across sources
            # each row names its own, whose summary is a line of this tool's description already.
            sources = view.sources(near)
        rows = [protocol.with_matched(view.row(t, source_id is None, t.tool_name == full), matched.get(t.tool_name, ()))
                for t in picked]
        answer = protocol.search_answer(
            query, source_id, sources, catalog_tools=in_catalog, eligible_tools=len(eligible), matches=total,
            tools=rows, next_offset=offset + len(picked) if more and picked else None,
            brief=any("input_schema" not in row for row in rows), **said)
        return _fit(view, answer, offset, budget)

    def _found(self, view: View, query: str, source_id: str | None, limit: int, offset: int, hidden: frozenset[str],
               ) -> tuple[list[CatalogTool], int, tuple[tuple[str, str], ...], Evidence, frozenset[str]]:
        """The tools up to ``offset + limit``, the total, the corrections, the evidence of the page, the tools below
        the floor: when those past it are none or weak, those below whose own text holds a word of the query follow
        (a partial match shown with its evidence serves better than silence). A query that is a tool_name, that tool."""
        picked, total, corrected, asked, exact = self._ranked(view, query, source_id, offset + limit, hidden)
        searched, whole = query, source_id is None
        for word, fixed in corrected:  # the query as searched
            searched = re.sub(rf"(?<!\w){re.escape(word)}(?!\w)", fixed, searched)
        held = functools.partial(self._held, view)
        if exact is not None and whole:
            picked, total = picked[:1], 1
        extra: list[CatalogTool] = []
        if whole and exact is None and len(picked) < offset + limit and (
                not picked or weigh(self.index, searched, asked, [t.tool_name for t in picked[:limit]], held).weak):
            window = offset + limit + len(picked) + protocol.MAX_RESULTS
            below, _, _, below_asked, _ = self._ranked(view, query, source_id, window, hidden, floor=False)
            extra = partial_matches(picked, below, searched, self.index.analyze, held)
            asked = (asked or below_asked) if extra else asked
        page = [t.tool_name for t in (picked + extra)[offset:offset + limit]]
        found = weigh(self.index, searched, asked, page, held, exact, whole)
        return picked + extra, total + len(extra), corrected, found, frozenset(t.tool_name for t in extra)

    def _held(self, view: View, tool_name: str) -> frozenset[str]:
        """Every term a tool's own text holds, its source's left out (read once per view)."""
        if tool_name not in view.held:
            fields = fields_holding(self.index.config, self.index.analyzer, view.by_name[tool_name], None)
            view.held[tool_name] = frozenset().union(*(terms for field, terms in fields.items() if field != "source"))
        return view.held[tool_name]

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
        shown = {t.tool_name for t in self._ranked(view, query, source_id, limit, hidden, trace)[0]}
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

    def _ranked(self, view: View, query: str, source_id: str | None, limit: int, hidden: frozenset[str],
                trace: Trace | None = None, floor: bool = True,
                ) -> tuple[list[CatalogTool], int, tuple[tuple[str, str], ...], tuple[str, ...], str | None]:
        """The tools for ``query`` in rank order, how many matched, the typos corrected, the terms the request asked
        with (``SearchResult.asked``), and the tool_name the query is, if any (put first)."""
        if self.index.version != view.version:  # with no index yet, nothing to answer from: build it now
            self._build_index(view) if self.index.snapshot is None else self.refresh_index()
        result = self.index.search(query, limit=limit, source_id=source_id, hidden=hidden, trace=trace, floor=floor)
        names, total = list(result.tool_names), result.total
        exact = view.by_name.get(query)
        if source_id is not None and (exact is None or exact.source_id != source_id):
            exact = view.local.get((source_id, query))
        if exact is not None and exact.tool_name not in hidden:
            if exact.tool_name in names:
                names.remove(exact.tool_name)
            elif not self.index.matches(query, exact.tool_name):
                total += 1
            names.insert(0, exact.tool_name)
            if trace is not None:
                trace.exact(exact.tool_name)
        else:
            exact = None
        # An index a refresh has not replaced yet may name a tool that is gone: the view decides.
        picked = [t for t in (view.by_name.get(name) for name in names[:limit]) if t is not None]
        return picked, total, result.corrections, result.asked, exact.tool_name if exact is not None else None

    # -- executeTool -----------------------------------------------------------------------------
    def unknown_tool(self, tool_name: str, hidden: frozenset[str] = NOTHING_HIDDEN) -> dict[str, Any]:
        """``unknown_tool`` with close names, or ``unavailable`` when the name's source is down; a tool in ``hidden``
        is neither suggested nor told apart from a name that does not exist."""
        view = self.view()
        # The source the name's prefix says (the longest), if it is down.
        best = max((sid for sid in view.source_ids if tool_name.startswith(tool_name_prefix(sid))), key=len, default="")
        down = self.catalog.source(best) if best else None
        if down is not None and (down.unavailable or (down.provider is not None and not view.by_source.get(best))):
            return protocol.source_unavailable(tool_name, best, down.unavailable or "it lists no tools at the moment")
        names = [name for name in view.by_name if name not in hidden] if hidden else list(view.by_name)
        suggestions = difflib.get_close_matches(tool_name, names, n=3, cutoff=0.75)
        if not suggestions and tool_name.strip() and "\x00" not in tool_name:
            words = tool_name.replace("__", " ").replace("_", " ")[:protocol.MAX_QUERY]
            wanted = set(self.index.analyze(words))
            found = self._ranked(view, words, None, 10, hidden)[0] if wanted else []
            own = {t.tool_name: set(self.index.analyze(" ".join([t.tool_name, *t.tool.keywords]))) for t in found}
            # A suggestion holds most of the asked name's terms in its name and keywords.
            suggestions = [name for name, terms in own.items() if len(wanted & terms) * 2 > len(wanted)][:3]
        return protocol.unknown_tool(tool_name, suggestions)
