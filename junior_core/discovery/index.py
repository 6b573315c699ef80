"""The index behind searchTools: one Whoosh snapshot per catalog version, built or reopened, and searched.

What a tool's document holds is ``documents``'; the score and the relevance floor are ``scoring``'s; a request is
read by ``query``, its typos by ``spelling``. One snapshot (index, reader, names) per catalog version is swapped in
whole, so a search never sees a half-built index and a rebuild never blocks searches; ``store`` keeps built
indexes on disk.
"""

from __future__ import annotations

import heapq
import logging
import threading
from collections.abc import Collection, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import attrs

from junior_core.discovery import scoring, spelling
from junior_core.discovery.documents import IndexedDocs, fields_holding, fingerprint, needs_input, postings, writes
from junior_core.discovery.query import read_request
from junior_core.discovery.rules import on
from junior_core.discovery.scoring import Reference, Snapshot
from junior_core.discovery.settings import RankingConfig
from junior_core.discovery.text import Analyzer, param_text

if TYPE_CHECKING:
    from junior_core.catalog import CatalogTool
    from junior_core.discovery.reasons import Trace
    from junior_core.discovery.store import IndexCache

__all__ = ["RankingConfig", "SearchIndex", "SearchResult", "Snapshot"]

log = logging.getLogger("junior.search")


@attrs.frozen
class SearchResult:
    """Ranked tool_names, how many tools matched in all, and the request's words corrected for typos."""

    tool_names: list[str]
    total: int
    corrections: tuple[tuple[str, str], ...] = ()
    """``(as written, searched for)`` per corrected word."""
    asked: tuple[str, ...] = ()
    """The terms the request asks with (not its payload), then the keyword phrases it says: what an answer's
    evidence weighs (``evidence``)."""
    scores: tuple[float, ...] = ()
    """The score of each of ``tool_names``, in order."""


class SearchIndex:
    """BM25F search over catalog tools in a Whoosh index, rebuilt (or reopened from the cache) per catalog version."""

    def __init__(self, config: RankingConfig | None = None, cache: IndexCache | None = None) -> None:
        self.config = config or RankingConfig()
        self.cache = cache
        self._build_lock = threading.Lock()
        self._snapshot: Snapshot | None = None
        self._version: int | None = None
        self._inputs: tuple[Sequence[CatalogTool], Mapping[str, str]] | None = None
        self._recovered: set[str] = set()
        self._analyzer = Analyzer(self.config)

    @property
    def snapshot(self) -> Snapshot | None:
        return self._snapshot

    @property
    def version(self) -> int | None:
        """The catalog version of the index searches use now."""
        return self._version

    @property
    def analyzer(self) -> Analyzer:
        """The analyzer every document and request of this index goes through."""
        return self._analyzer

    def analyze(self, text: str) -> list[str]:
        """The terms the index stores for ``text`` (for tests and debugging)."""
        return self._analyzer(text)

    def reset(self) -> None:
        """Forget the current index, so the next build starts from the catalog (used by ``junior index --rebuild``)."""
        with self._build_lock:
            self._snapshot, self._version, self._inputs = None, None, None

    def build(self, tools: Sequence[CatalogTool], source_descriptions: Mapping[str, str], version: int) -> None:
        """Index ``tools`` for ``version`` beside the current index, then swap it in; searches use the old meanwhile."""
        if self._version == version and self._snapshot is not None:
            return
        with self._build_lock:
            current = self._version if self._snapshot is not None else None
            if current is not None and current >= version:
                return  # this catalog, or a newer one, is already indexed: never go back
            # Searches that already hold the old snapshot finish on it; its files close when it is collected.
            self._snapshot, self._version = self._make(tools, source_descriptions), version
            self._inputs = (tools, source_descriptions)

    def _recover(self, snapshot: Snapshot, exc: Exception) -> bool:
        """Replace an index that raised while searching with a fresh build, once; whether to search again."""
        with self._build_lock:
            if self._snapshot is not snapshot:
                return True  # already replaced (by a refresh or another search's recovery)
            if self._inputs is None or snapshot.fingerprint in self._recovered:
                return False
            self._recovered.add(snapshot.fingerprint)
            log.warning("search index %s failed while searching (%s: %s); rebuilding it",
                        snapshot.path or "(in memory)", type(exc).__name__, exc)
            if self.cache is not None and snapshot.path is not None:
                self.cache.remove(snapshot.fingerprint)
            self._snapshot = self._make(*self._inputs, reopen=False)
            return True

    def _make(self, tools: Sequence[CatalogTool], source_descriptions: Mapping[str, str],
              reopen: bool = True) -> Snapshot:
        entries = sorted(tools, key=lambda t: t.tool_name)
        param_texts = [param_text(entry.tool.input_schema) for entry in entries]
        print_ = fingerprint(entries, source_descriptions, self.config, param_texts)
        docs = IndexedDocs([e.tool_name for e in entries], [e.source_id for e in entries],
                           [doc for doc, e in enumerate(entries) if writes(e.tool)],
                           [doc for doc, e in enumerate(entries) if needs_input(e.tool)])
        source_terms = {source: frozenset(self._analyzer(source) + self._analyzer.compounds_whole(description))
                        for source, description in source_descriptions.items()}
        if self.cache is not None and reopen:
            opened = self.cache.open(
                print_, docs, lambda index, stored, path: Snapshot(index, stored, print_, path, source_terms)
            )
            if opened is not None:
                return opened
        from junior_core.discovery.whoosh_parts import MemoryStorage, schema

        storage = MemoryStorage()
        index = storage.create_index(schema())
        self._write(index, entries, source_descriptions, param_texts)
        path = None
        if self.cache is not None:
            path = self.cache.store(print_, docs, storage)
        return Snapshot(index, docs, print_, path, source_terms)

    def _write(self, index: Any, entries: Sequence[CatalogTool], source_descriptions: Mapping[str, str],
               param_texts: Sequence[str]) -> None:
        from junior_core.discovery.whoosh_parts import write_documents

        # Documents are added in tool_name order, so a doc number is also the tie-break order.
        seen: set[str] = set()  # typos: the raw words analysed, for the vocabulary
        analyze = self._analyzer.recording(seen) if self.config.typo_weight > 0 else self._analyzer
        documents: Iterator[dict[str, Any]] = postings(self.config, analyze, entries, source_descriptions,
                                                        param_texts)
        if self.config.typo_weight > 0:
            documents = spelling.with_vocabulary(documents, lambda: spelling.vocabulary(seen, analyze.stop_words))
        write_documents(index, documents)

    def search(self, query: str, *, limit: int, source_id: str | None = None,
               hidden: Collection[str] = (), trace: Trace | None = None, floor: bool = True) -> SearchResult:
        """Rank tools for ``query`` with BM25F and the request's intent; ties broken by tool_name.

        ``hidden`` tool_names are left out of the ranking and the total, as if they were not indexed. An index
        that raises (damaged files) is rebuilt once and the search asked again. With ``trace``, why each returned
        tool ranked is recorded there (``reasons``). ``floor`` False ranks every tool that holds a word, as a
        search inside one source does (for the partial matches an answer shows below the floor).
        """
        snapshot = self._snapshot
        try:
            return self._search(snapshot, query, limit, source_id, hidden, trace, floor)
        except Exception as exc:
            if snapshot is None or not self._recover(snapshot, exc):
                raise
        return self._search(self._snapshot, query, limit, source_id, hidden, trace, floor)

    def _search(self, snapshot: Snapshot | None, query: str, limit: int, source_id: str | None,
                hidden: Collection[str], trace: Trace | None = None, floor: bool = True) -> SearchResult:
        if snapshot is None:
            return SearchResult([], 0)
        known = Reference.of(self._analyzer).df if self.config.reference_tools > 0 else ()
        with snapshot.lock:  # typos: everything below reads the corrected request
            fixed = spelling.correct(snapshot, snapshot.reader, query, self._analyzer,
                                     self.config.typo_weight, known)
        query = fixed.text
        with snapshot.lock:
            request = read_request(query, self._analyzer, fixed, self.config.payload_weight,
                                   scoring.action_words(snapshot, self.config, self._analyzer),
                                   scoring.declared(snapshot))
        if request is None:
            return SearchResult([], 0, fixed.fixes)
        allowed: set[int] | None = None
        if source_id is not None:
            allowed = snapshot.by_source.get(source_id)
            if not allowed:
                return SearchResult([], 0, fixed.fixes)
        doc_of = snapshot.doc_of
        mask = {doc_of[name] for name in hidden if name in doc_of} or None
        with snapshot.lock:
            scores = scoring.score_tools(snapshot, request, self.config, self._analyzer, allowed, mask,
                                         whole_catalog=source_id is None and floor, trace=trace)

        if not scores:
            return SearchResult([], 0, fixed.fixes)
        intent, verb_terms = request.intent, request.verb_terms
        # Inside one source the verb decides between sibling tools and cannot pull in another source's.
        boost = self.config.action_weight if source_id is None else self.config.source_action_weight
        if boost > 0 and verb_terms:
            with snapshot.lock:
                scoring.add_actions(snapshot, scores, verb_terms, boost, fixed, self.config, self._analyzer, trace)
        readers_first = False
        if on("readers_first") and snapshot.writes:
            # A question asks to read; so does a request whose verb only tools that do not write name (among
            # the tools that passed the floor).
            kind = scoring.verb_kind(snapshot, verb_terms, set(scores))
            readers_first = intent.question or kind == "read" or (intent.everything and kind != "write")
        writes = snapshot.writes if readers_first else frozenset()
        # "All of them": among readers, a tool that lists without being told what to look for comes first.
        needs = snapshot.needs_input if readers_first and intent.everything else frozenset()
        top = heapq.nsmallest(limit, scores.items(),
                              key=lambda item: (item[0] in writes, item[0] in needs, -round(item[1], 6), item[0]))
        names = snapshot.docs.names
        if trace is not None:
            self._read_out(trace, snapshot, top, query, bool(fixed.fixes), writes, needs, intent.question)
        asked = tuple(dict.fromkeys([term for ask, _ in request.clauses for term in ask] + sorted(request.phrases)))
        return SearchResult([names[doc] for doc, _ in top], len(scores), fixed.fixes, asked,
                            tuple(score for _, score in top))

    def _read_out(self, trace: Trace, snapshot: Snapshot, top: list[tuple[int, float]], query: str, corrected: bool,
                  writes: Collection[int], needs: Collection[int], question: bool) -> None:
        """The reasons of the ``top`` tools into ``trace``, with where the read-first order put them."""
        asked = "the request is a question" if question else "the request asks to read"
        for doc, _ in top:
            if doc in writes:
                trace.order[doc] = f"after the tools that only read: it writes, and {asked}"
            elif doc in needs:
                trace.order[doc] = "after the tools that list: it needs input, and the request asks for all"
        trace.searched = query if corrected else None
        tools, descriptions = self._inputs if self._inputs is not None else ((), {})
        entries = {entry.tool_name: entry for entry in tools}

        def fields_of(name: str) -> dict[str, set[str]]:
            entry = entries.get(name)
            if entry is None:
                return {}
            return fields_holding(self.config, self._analyzer, entry, descriptions.get(entry.source_id))

        trace.read_out(top, snapshot.docs.names, query, self._analyzer, fields_of)

    def matches(self, query: str, tool_name: str) -> bool:
        """Whether ``tool_name`` is among the tools ``query`` matches (for counting an exact-name hit once)."""
        snapshot = self._snapshot
        try:
            return self._matches(snapshot, query, tool_name)
        except Exception as exc:
            if snapshot is None or not self._recover(snapshot, exc):
                raise
        return self._matches(self._snapshot, query, tool_name)

    def _matches(self, snapshot: Snapshot | None, query: str, tool_name: str) -> bool:
        if snapshot is None or tool_name not in snapshot.doc_of:
            return False
        with snapshot.lock:
            request = read_request(query, self._analyzer, spelling.Correction(query), self.config.payload_weight,
                                   scoring.action_words(snapshot, self.config, self._analyzer),
                                   scoring.declared(snapshot))
            return request is not None and bool(scoring.score_tools(
                snapshot, request, self.config, self._analyzer, {snapshot.doc_of[tool_name]}, None))
