"""The index behind searchTools: one Whoosh snapshot per catalog version, built or reopened (``store``) and swapped
in whole, so a search never sees a half-built index and a rebuild never blocks searches; searched and ordered."""

from __future__ import annotations

import heapq
import logging
import threading
from collections import Counter
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

import attrs

from junior_core._discovery import scoring, spelling
from junior_core._discovery.analysis import WORD, Analyzer, param_text
from junior_core._discovery.documents import IndexedDocs, fields_holding, fingerprint, postings, writes
from junior_core._discovery.floor import admit
from junior_core._discovery.reasons import Trace
from junior_core._discovery.scoring import Request, Snapshot, read_request
from junior_core._discovery.settings import RankingConfig
from junior_core._discovery.switches import on

if TYPE_CHECKING:
    from junior_core._catalog.catalog import CatalogTool
    from junior_core._discovery.store import IndexCache

__all__ = ["RankingConfig", "SearchIndex", "SearchResult", "Snapshot"]

log = logging.getLogger("junior.search")
T = TypeVar("T")
BRIDGED = "mcp:"  # source ids of bridged MCP servers start so


@attrs.frozen
class SearchResult:
    """Ranked tool_names, how many tools matched in all, ``(as written, searched for)`` per corrected word, the
    request's terms then its keyword phrases (what an answer's evidence weighs), and each tool's score."""

    tool_names: list[str]
    total: int
    corrections: tuple[tuple[str, str], ...] = ()
    asked: tuple[str, ...] = ()
    scores: tuple[float, ...] = ()


class SearchIndex:
    """BM25F search over catalog tools in a Whoosh index, rebuilt (or reopened from the cache) per catalog version;
    ``snapshot`` is the index searches use now, ``version`` its catalog version."""

    def __init__(self, config: RankingConfig | None = None, cache: IndexCache | None = None) -> None:
        self.config = config or RankingConfig()
        self.cache = cache
        self.analyzer = Analyzer(self.config)  # every document and request of this index goes through it
        self.snapshot: Snapshot | None = None
        self.version: int | None = None
        self._build_lock = threading.Lock()
        self._inputs: tuple[Sequence[CatalogTool], Mapping[str, str]] | None = None
        self._recovered: set[str] = set()

    def analyze(self, text: str) -> list[str]:
        """The terms the index stores for ``text``."""
        return self.analyzer(text)

    def reset(self) -> None:
        """Forget the current index, so the next build starts from the catalog (``junior index --rebuild``)."""
        with self._build_lock:
            self.snapshot, self.version, self._inputs = None, None, None

    def build(self, tools: Sequence[CatalogTool], source_descriptions: Mapping[str, str], version: int) -> None:
        """Index ``tools`` for ``version`` (never an older one) beside the current index, then swap it in."""
        if self.version == version and self.snapshot is not None:
            return
        with self._build_lock:
            if self.snapshot is None or self.version is None or self.version < version:
                self.snapshot, self.version = self._make(tools, source_descriptions), version
                self._inputs = (tools, source_descriptions)

    def _recovering(self, run: Callable[[Snapshot | None], T]) -> T:
        """``run`` on the current snapshot; one that raises (damaged files) is rebuilt once and ``run`` again."""
        snapshot = self.snapshot
        try:
            return run(snapshot)
        except Exception as exc:
            if snapshot is None:
                raise
            with self._build_lock:
                if self.snapshot is snapshot:  # not already replaced (by a refresh or another search's recovery)
                    if self._inputs is None or snapshot.fingerprint in self._recovered:
                        raise
                    self._recovered.add(snapshot.fingerprint)
                    log.warning("search index %s failed while searching (%s: %s); rebuilding it",
                                snapshot.path or "(in memory)", type(exc).__name__, exc)
                    if self.cache is not None and snapshot.path is not None:
                        self.cache.remove(snapshot.fingerprint)
                    self.snapshot = self._make(*self._inputs, reopen=False)
        return run(self.snapshot)

    def _make(self, tools: Sequence[CatalogTool], source_descriptions: Mapping[str, str],
              reopen: bool = True) -> Snapshot:
        entries = sorted(tools, key=lambda t: t.tool_name)  # so a doc number is also the tie-break order
        param_texts = [param_text(entry.tool.input_schema) for entry in entries]
        print_ = fingerprint(entries, source_descriptions, self.config, param_texts)
        docs = IndexedDocs([e.tool_name for e in entries], [e.source_id for e in entries],
                           [doc for doc, e in enumerate(entries) if writes(e.tool)])
        source_terms = {source: frozenset(self.analyzer(source) + self.analyzer.compounds_whole(description))
                        for source, description in source_descriptions.items()}
        id_terms = {source: frozenset(self.analyzer(source.removeprefix(BRIDGED))) for source in set(docs.sources)}
        if self.cache is not None and reopen:
            opened = self.cache.open(
                print_, docs, lambda index, stored, path: Snapshot(index, stored, print_, path, source_terms, id_terms))
            if opened is not None:
                return opened
        from junior_core._discovery.whoosh_parts import MemoryStorage, schema, write_documents

        storage = MemoryStorage()
        index = storage.create_index(schema())
        seen: set[str] = set()  # typos: the raw words analysed, for the vocabulary
        analyze = self.analyzer.recording(seen) if self.config.typo_weight > 0 else self.analyzer
        documents = postings(self.config, analyze, entries, source_descriptions, param_texts)
        if self.config.typo_weight > 0:
            documents = spelling.with_vocabulary(documents, lambda: spelling.vocabulary(seen, analyze.stop_words))
        write_documents(index, documents)
        path = self.cache.store(print_, docs, storage) if self.cache is not None else None
        return Snapshot(index, docs, print_, path, source_terms, id_terms)

    def _request(self, snapshot: Snapshot, fixed: spelling.Correction) -> Request | None:
        """The request ``fixed`` says, its verbs the tools' action words (call under the snapshot's lock)."""
        is_action = scoring.action_words(snapshot, self.config, self.analyzer)
        return read_request(fixed.text, self.analyzer, fixed, is_action, self.config)

    def search(self, query: str, *, limit: int, source_id: str | None = None,
               hidden: Collection[str] = (), trace: Trace | None = None, floor: bool = True) -> SearchResult:
        """Rank tools for ``query`` with BM25F and the request's intent; ties broken by tool_name. ``hidden``
        tool_names are left out as if not indexed; ``trace`` records why each returned tool ranked (``reasons``);
        ``floor`` False ranks every tool that holds a word, as inside one source (for the partial matches)."""
        def run(snapshot: Snapshot | None) -> SearchResult:
            if trace is not None:
                trace.reset()  # a search asked again after a rebuild must not add to the failed attempt's record
            return self._search(snapshot, query, limit, source_id, hidden, trace, floor)

        return self._recovering(run)

    def _search(self, snapshot: Snapshot | None, query: str, limit: int, source_id: str | None,
                hidden: Collection[str], trace: Trace | None, floor: bool) -> SearchResult:
        if snapshot is None:
            return SearchResult([], 0)
        config, analyzer, whole = self.config, self.analyzer, source_id is None and floor
        allowed = snapshot.by_source.get(source_id) if source_id is not None else None
        mask = {snapshot.doc_of[name] for name in hidden if name in snapshot.doc_of} or None
        with snapshot.lock:  # typos first: everything below reads the corrected request
            reference = scoring.Reference.of(config, analyzer)
            fixed = spelling.correct(snapshot, snapshot.reader, query, analyzer, config,
                                     reference.df if reference else ())
            request = self._request(snapshot, fixed)
            if request is None or (source_id is not None and not allowed):
                return SearchResult([], 0, fixed.fixes)
            scored, tally = scoring.score_tools(snapshot, request, config, analyzer, allowed, mask, whole, trace)
            scores = admit(snapshot, request, scored, tally, config, analyzer, trace, whole)
            # Inside one source the verb decides between sibling tools and cannot pull in another source's.
            boost = config.action_weight if source_id is None else config.source_action_weight
            stating = scoring.add_actions(snapshot, scores, request, boost, fixed, config, analyzer, trace)
            # Readers first for a question, or for verbs only tools that do not write state (among those passed).
            reads = on("readers_first") and (request.intent.question or bool(stating and not stating & snapshot.writes))
        if not scores:
            return SearchResult([], 0, fixed.fixes)
        writes = snapshot.writes if reads else frozenset()
        named = None if source_id is not None else {  # the sources all of whose id's terms the request says
            source for source, own in snapshot.id_terms.items() if own and request.weights.keys() >= own}
        ranked, moved = ordered(snapshot, scores, limit, writes, config, named, trace is not None)
        top = ranked[:limit]
        if trace is not None:
            trace.rank = next((rank for rank, (doc, _) in enumerate(ranked, 1) if doc == trace.watch), None)
            asked = "the request is a question" if request.intent.question else "the request asks to read"
            trace.order.update(moved)
            trace.order.update({doc: f"after the tools that only read: it writes, and {asked}"
                                for doc, _ in top if doc in writes})
            trace.searched = fixed.text if fixed.fixes else None
            trace.read_out(top, snapshot.docs.names, fixed.text, analyzer, self._fields_of)
        terms = [term for ask, _ in request.clauses for term in ask] + sorted(request.phrases)
        return SearchResult([snapshot.docs.names[doc] for doc, _ in top], len(scores), fixed.fixes,
                            tuple(dict.fromkeys(terms)), tuple(score for _, score in top))

    def _fields_of(self, tool_name: str) -> dict[str, set[str]]:
        """The fields of a tool's document holding each term (``explain``)."""
        tools, descriptions = self._inputs or ((), {})
        entry = next((entry for entry in tools if entry.tool_name == tool_name), None)
        return {} if entry is None else fields_holding(self.config, self.analyzer, entry,
                                                      descriptions.get(entry.source_id))

    def why_not(self, query: str, tool_name: str, *, limit: int, source_id: str | None = None,
                hidden: Collection[str] = ()) -> dict[str, Any]:
        """Why ``tool_name`` is or is not among the ``limit`` tools ``query`` returns, read from that search's
        trace: the request's words it holds (and where) and lacks, the floor per clause (held, needed), its
        telling word if any, and its place among every tool that passed the floor."""
        snapshot = self.snapshot
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
        trace.read_out([(doc, score)], snapshot.docs.names, searched, self.analyzer, self._fields_of)
        row = trace.tools[-1]
        held = {word["term"] for word in row["words"]}
        lacked = [word for word in dict.fromkeys(WORD.findall(searched))
                  if (terms := self.analyzer(word)) and not any(t in held for t in terms)]
        out.update({"returned": tool_name in result.tool_names, "rank": trace.rank, "score": row["score"],
                    "words": row["words"], "lacked": lacked, **({"verbs": row["verbs"]} if "verbs" in row else {})})
        if source_id is None:
            out["floor"] = trace.floor
        if trace.rank is None:
            out["why"] = ("it holds none of the request's words" if not row["words"] else "it did not pass the floor: "
                          "no telling word, and in no clause did it hold the share needed")
        elif not out["returned"]:
            out["why"] = f"it passed the floor but ranks {trace.rank}, after the {limit} returned"
        return out

    def matches(self, query: str, tool_name: str) -> bool:
        """Whether ``tool_name`` is among the tools ``query`` matches (for counting an exact-name hit once)."""
        return self._recovering(lambda snapshot: self._matches(snapshot, query, tool_name))

    def _matches(self, snapshot: Snapshot | None, query: str, tool_name: str) -> bool:
        if snapshot is None or tool_name not in snapshot.doc_of:
            return False
        with snapshot.lock:
            request = self._request(snapshot, spelling.Correction(query))
            if request is None:
                return False
            scored, tally = scoring.score_tools(snapshot, request, self.config, self.analyzer,
                                                {snapshot.doc_of[tool_name]}, None, True)
            return bool(admit(snapshot, request, scored, tally, self.config, self.analyzer))


def ordered(snapshot: Snapshot, scores: Mapping[int, float], places: int, writes: Collection[int],
            config: RankingConfig, named: Collection[str] | None, every: bool = True
            ) -> tuple[list[tuple[int, float]], dict[int, str]]:
    """The tools of ``scores`` in answer order (readers first where the request reads, ``writes``; then the score,
    a bridged server's lowered by ``bridged_margin``; then tool_name; in a search of every source, ``named`` not
    None, one source holds at most ``source_share`` of ``places`` while others remain): all of them, or with
    ``every`` False only as many as the first ``places`` need; and why one stands where its score alone would not."""
    sources = snapshot.docs.sources
    discount = 1.0 - max(0.0, min(config.bridged_margin, 1.0))
    cap = -(-places * config.source_share // 1) if named is not None and config.source_share > 0 else 0
    kept: list[int] = []
    deferred: list[int] = []
    held: Counter[str] = Counter()
    for doc in _by_key(scores, writes, discount, sources):
        if not every and len(kept) >= places:
            break
        if cap and held[sources[doc]] >= cap and sources[doc] not in named:  # type: ignore[operator]
            deferred.append(doc)
        else:
            held[sources[doc]] += 1
            kept.append(doc)
    ranked = [(doc, scores[doc]) for doc in kept + deferred]
    lowest: float | None = None  # a bridged tool standing below an installed plugin's tool with a lower score
    moved: dict[int, str] = {}
    for doc, score in ranked:
        if not sources[doc].startswith(BRIDGED):
            lowest = score if lowest is None else min(lowest, score)
        elif lowest is not None and score > lowest:
            moved[doc] = "after an installed plugin's tool of a near score: it is a bridged server's"
    return ranked, {**moved, **{doc: f"after other sources' tools: its source already holds {int(cap)} of this "
                                "answer's places" for doc in deferred}}


def _by_key(scores: Mapping[int, float], writes: Collection[int], discount: float, sources: Sequence[str]
            ) -> Iterator[int]:
    """The docs of ``scores`` by (in ``writes``, score (a bridged server's times ``discount``) rounded to 6 places
    descending, doc number, which follows tool_name), lazily: a heap on the unrounded score, as rounding keeps its
    order, each run of equal rounded scores then put in doc order (rounding every score costs more than the rest)."""
    heap = [(doc in writes, -(score * discount if discount < 1.0 and sources[doc].startswith(BRIDGED) else score),
             doc) for doc, score in scores.items()]
    heapq.heapify(heap)
    while heap:
        writer, score, doc = heapq.heappop(heap)
        rounded, run = round(score, 6), [doc]
        while heap and heap[0][0] == writer and round(heap[0][1], 6) == rounded:
            run.append(heapq.heappop(heap)[2])
        yield from sorted(run)
