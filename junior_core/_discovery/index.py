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

from junior_core._discovery import scoring, spelling
from junior_core._discovery.analysis import Analyzer, param_text
from junior_core._discovery.documents import IndexedDocs, fields_holding, fingerprint, postings, writes
from junior_core._discovery.floor import admit
from junior_core._discovery.query import read_request
from junior_core._discovery.scoring import Reference, Snapshot
from junior_core._discovery.settings import RankingConfig
from junior_core._discovery.switches import on

if TYPE_CHECKING:
    from junior_core._catalog.catalog import CatalogTool
    from junior_core._discovery.reasons import Trace
    from junior_core._discovery.store import IndexCache

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
    """The request's terms, then the keyword phrases it says: what an answer's
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
                           [doc for doc, e in enumerate(entries) if writes(e.tool)])
        source_terms = {source: frozenset(self._analyzer(source) + self._analyzer.compounds_whole(description))
                        for source, description in source_descriptions.items()}
        if self.cache is not None and reopen:
            opened = self.cache.open(
                print_, docs, lambda index, stored, path: Snapshot(index, stored, print_, path, source_terms)
            )
            if opened is not None:
                return opened
        from junior_core._discovery.whoosh_parts import MemoryStorage, schema

        storage = MemoryStorage()
        index = storage.create_index(schema())
        self._write(index, entries, source_descriptions, param_texts)
        path = None
        if self.cache is not None:
            path = self.cache.store(print_, docs, storage)
        return Snapshot(index, docs, print_, path, source_terms)

    def _write(self, index: Any, entries: Sequence[CatalogTool], source_descriptions: Mapping[str, str],
               param_texts: Sequence[str]) -> None:
        from junior_core._discovery.whoosh_parts import write_documents

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
            fixed = spelling.correct(snapshot, snapshot.reader, query, self._analyzer, self.config.typo_weight,
                                     known, self.config.typo_ratio, self.config.english_count)
        query = fixed.text
        with snapshot.lock:
            request = read_request(query, self._analyzer, fixed,
                                   scoring.action_words(snapshot, self.config, self._analyzer),
                                   self.config.payload_weight)
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
            whole = source_id is None and floor
            scored, tally = scoring.score_tools(snapshot, request, self.config, self._analyzer, allowed, mask,
                                                whole_catalog=whole, trace=trace)
            scores = admit(snapshot, request, scored, tally, self.config, self._analyzer, trace, whole)

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
            readers_first = intent.question or kind == "read"
        writes = snapshot.writes if readers_first else frozenset()
        named = self._named_sources(snapshot, request.weights) if source_id is None else None
        top, moved = ordered(snapshot, scores, limit, writes, self.config, named)
        names = snapshot.docs.names
        if trace is not None and trace.watch in scores:
            everyone, _ = ordered(snapshot, scores, len(scores), writes, self.config, named, places=limit)
            trace.rank = next(rank for rank, (doc, _) in enumerate(everyone, 1) if doc == trace.watch)
        if trace is not None:
            trace.order.update(moved)
            self._read_out(trace, snapshot, top, query, bool(fixed.fixes), writes, intent.question)
        asked = tuple(dict.fromkeys([term for ask, _ in request.clauses for term in ask] + sorted(request.phrases)))
        return SearchResult([names[doc] for doc, _ in top], len(scores), fixed.fixes, asked,
                            tuple(score for _, score in top))

    def why_not(self, query: str, tool_name: str, *, limit: int, source_id: str | None = None,
                hidden: Collection[str] = ()) -> dict[str, Any]:
        """Why ``tool_name`` is or is not among the ``limit`` tools ``query`` returns: the request's words it
        holds (and where) and lacks, the floor per clause (what it held, what it needed), its telling word if
        any, and its place among every tool that passed the floor."""
        from junior_core._discovery.analysis import WORD
        from junior_core._discovery.reasons import Trace

        snapshot = self._snapshot
        out: dict[str, Any] = {"tool_name": tool_name}
        if snapshot is None or tool_name not in snapshot.doc_of or tool_name in hidden:
            return {**out, "known": False, "why": "no such tool in the catalog this caller sees"}
        doc = snapshot.doc_of[tool_name]
        if source_id is not None and snapshot.docs.sources[doc] != source_id:
            return {**out, "returned": False, "why": f"it is a tool of {snapshot.docs.sources[doc]}, not {source_id}"}
        trace = Trace(watch=doc)
        result = self.search(query, limit=limit, source_id=source_id, hidden=hidden, trace=trace)
        searched = trace.searched or query
        score = sum(trace.words.get(doc, {}).values()) + sum(trace.verbs.get(doc, {}).values())
        mine = Trace(words={doc: trace.words.get(doc, {})}, verbs={doc: trace.verbs.get(doc, {})})
        self._read_out(mine, snapshot, [(doc, score)], searched, False, (), False)
        row = mine.tools[0]
        held = {term for word in row["words"] for term in [word["term"]]}
        lacked = list(dict.fromkeys(word for word in WORD.findall(searched)
                                    if (terms := self._analyzer(word)) and not any(t in held for t in terms)))
        out.update({"returned": tool_name in result.tool_names, "rank": trace.rank, "score": round(score, 4),
                    "words": row["words"], "lacked": lacked})
        if row.get("verbs"):
            out["verbs"] = row["verbs"]
        if source_id is None:
            out["floor"] = trace.floor
        if trace.rank is None:
            out["why"] = ("it holds none of the request's words" if not row["words"] else
                          "it did not pass the floor: no telling word, and in no clause did it hold the share "
                          "needed")
        elif not out["returned"]:
            out["why"] = f"it passed the floor but ranks {trace.rank}, after the {limit} returned"
        return out

    def _named_sources(self, snapshot: Snapshot, terms: Collection[str]) -> set[str]:
        """The sources whose id (without ``mcp:``) the request says: all of the id's terms are the request's."""
        named: set[str] = set()
        for source in snapshot.by_source:
            own = self._analyzer(source.removeprefix("mcp:"))
            if own and all(term in terms for term in own):
                named.add(source)
        return named

    def _read_out(self, trace: Trace, snapshot: Snapshot, top: list[tuple[int, float]], query: str, corrected: bool,
                  writes: Collection[int], question: bool) -> None:
        """The reasons of the ``top`` tools into ``trace``, with where the read-first order put them."""
        asked = "the request is a question" if question else "the request asks to read"
        for doc, _ in top:
            if doc in writes:
                trace.order[doc] = f"after the tools that only read: it writes, and {asked}"
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
            request = read_request(query, self._analyzer, spelling.Correction(query),
                                   scoring.action_words(snapshot, self.config, self._analyzer),
                                   self.config.payload_weight)
            if request is None:
                return False
            scored, tally = scoring.score_tools(snapshot, request, self.config, self._analyzer,
                                                {snapshot.doc_of[tool_name]}, None)
            return bool(admit(snapshot, request, scored, tally, self.config, self._analyzer))


BRIDGED = "mcp:"
"""Source ids of bridged MCP servers start so."""


def ordered(snapshot: Snapshot, scores: Mapping[int, float], limit: int, writes: Collection[int],
            config: RankingConfig, named: Collection[str] | None,
            places: int | None = None) -> tuple[list[tuple[int, float]], dict[int, str]]:
    """The ``limit`` best of ``scores`` in answer order, and why a tool stands where its score alone would not.

    Readers before writers where the request asks to read (``writes``); then the score, a bridged server's
    tool's lowered by ``bridged_margin``; then tool_name. In a
    search of every source (``named`` not None: the sources the request names), a source holds at most
    ``source_share`` of the answer's places while another source's tools remain; its other tools follow.
    """
    names, sources = snapshot.docs.names, snapshot.docs.sources
    discount = 1.0 - max(0.0, min(config.bridged_margin, 1.0))

    def key(doc: int, score: float) -> tuple[bool, float, str]:
        if discount < 1.0 and sources[doc].startswith(BRIDGED):
            score *= discount
        return (doc in writes, -round(score, 6), names[doc])

    places = limit if places is None else places  # the answer's size the cap is a share of
    cap = -(-places * config.source_share // 1) if named is not None and config.source_share > 0 else 0
    if not cap or len(scores) <= cap:
        top = heapq.nsmallest(limit, scores.items(), key=lambda item: key(*item))
        return top, _lowered(top, scores, sources)
    heap = [(key(doc, score), doc) for doc, score in scores.items()]
    heapq.heapify(heap)
    kept: list[int] = []
    deferred: list[int] = []
    held: dict[str, int] = {}
    while heap and len(kept) < limit:
        doc = heapq.heappop(heap)[1]
        source = sources[doc]
        if held.get(source, 0) >= cap and source not in named:  # type: ignore[operator]
            deferred.append(doc)
            continue
        held[source] = held.get(source, 0) + 1
        kept.append(doc)
    moved = {doc: f"after other sources' tools: its source already holds {int(cap)} of this answer's places"
             for doc in deferred[: limit - len(kept)]}
    top = [(doc, scores[doc]) for doc in kept + deferred[: limit - len(kept)]]
    return top, {**_lowered(top, scores, sources), **moved}


def _lowered(top: Sequence[tuple[int, float]], scores: Mapping[int, float], sources: Sequence[str]) -> dict[int, str]:
    """The bridged tools standing below a tool of an installed plugin with a lower score."""
    out: dict[int, str] = {}
    lowest: float | None = None
    for doc, score in top:
        if not sources[doc].startswith(BRIDGED):
            lowest = score if lowest is None else min(lowest, score)
        elif lowest is not None and score > lowest:
            out[doc] = "after an installed plugin's tool of a near score: it is a bridged server's"
    return out

