"""The index behind searchTools: a Whoosh index of every tool's full text, ranked with BM25F.

Every tool is a document with fields ``name`` (local name and annotation title), ``keywords`` (the words a tool
declares for what it does), ``description`` (the full text), ``params`` (parameter names, titles, descriptions
and enum values), ``source`` (source id and description) and, if ``pairs_weight`` is set, ``pairs`` (adjacent
terms of the name and description, a cheap proximity signal; off by default). Text analysis is
``junior_core.analysis``.

Scoring is BM25F (Robertson & Zaragoza 2009): per field, the term frequency over the field's length norm times
the field's weight, summed into one pseudo-frequency per term and document, then saturated once per term, so a
word repeated across fields does not count twice. Length norms need every field's average length, known once
the whole catalog is analysed, so the pseudo-frequency is computed at build time and written as the posting
weight of a single Whoosh field, ``terms``, through a small ``Format``; a ``WeightingModel`` saturates it at
query time: idf · (k1 + 1) · w / (w + k1). Postings, document frequencies and the searcher are Whoosh's; a
query is an ``Or`` of ``Term``s built in code (no query parser), with the source as a ``filter``.

Intent, on top of the words (see ``junior_core.intent``): the request's leading verb ("jot down ...", "unsave ...") is
matched a second time against the tool's name and declared keywords (field ``action``), and a question ("what
do you remember about me?") ranks tools that declare they write (``readOnlyHint: false``) lower.

One snapshot (index, searcher, names) per catalog version is swapped in whole, so a search never sees a
half-built index and a rebuild never blocks searches; ``junior_core.index_cache`` stores built indexes on disk.
"""

from __future__ import annotations

import hashlib
import json
import logging
import threading
from collections import Counter
from collections.abc import Collection, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import attrs

from junior_core import spelling
from junior_core.analysis import Analyzer, pairs, param_text
from junior_core.index_cache import IndexedDocs
from junior_core.intent import Intent

if TYPE_CHECKING:
    from junior_core.catalog import CatalogTool
    from junior_core.index_cache import IndexCache

__all__ = ["RankingConfig", "SearchIndex", "SearchResult", "Snapshot", "fingerprint"]

log = logging.getLogger("junior.search")

FIELDS = ("name", "keywords", "description", "params", "source", "pairs")


@attrs.frozen
class RankingConfig:
    """Ranking parameters; the defaults are what ``benchmarks/retrieval.py`` measured best on its tuning half."""

    name_weight: float = 3.0
    keywords_weight: float = 2.0
    description_weight: float = 1.0
    params_weight: float = 0.3
    source_weight: float = 0.2
    pairs_weight: float = 0.0
    name_b: float = 0.3
    keywords_b: float = 0.3
    description_b: float = 0.75
    params_b: float = 0.75
    source_b: float = 0.75
    pairs_b: float = 0.75
    k1: float = 3.0
    action_weight: float = 2.0
    source_action_weight: float = 3.0
    typo_weight: float = 0.8
    """What a word corrected for a typo counts for, against 1 for a word spelled right; 0 corrects nothing."""
    readers_first: bool = True
    stem: bool = True
    stop_words: bool = True
    extra_stop_words: bool = True
    filler_stop_words: bool = False
    split_identifiers: bool = True
    cjk_ngrams: bool = True
    porter2: bool = True

    def weight(self, field: str) -> float:
        return float(getattr(self, f"{field}_weight"))

    def b(self, field: str) -> float:
        return float(getattr(self, f"{field}_b"))


# -- the Whoosh index -----------------------------------------------------------------------------

_FORMAT_VERSION = 4


@attrs.frozen
class SearchResult:
    """Ranked tool_names, how many tools matched in all, and the request's words corrected for typos."""

    tool_names: list[str]
    total: int
    corrections: tuple[tuple[str, str], ...] = ()
    """``(as written, searched for)`` per corrected word."""


class Snapshot:
    """One immutable index for one catalog version: the Whoosh index, a reused searcher, and doc numbers."""

    def __init__(self, index: Any, docs: IndexedDocs, config: RankingConfig, fingerprint: str,
                 path: str | None = None) -> None:
        self.index = index
        self.docs = docs
        self.fingerprint = fingerprint
        self.path = path
        from junior_core._whoosh import SaturatedBM25F

        self.searcher = index.searcher(weighting=SaturatedBM25F(config.k1))
        self.doc_of = {name: doc for doc, name in enumerate(docs.names)}
        by_source: dict[str, set[int]] = {}
        for doc, source in enumerate(docs.sources):
            by_source.setdefault(source, set()).add(doc)
        self.by_source = by_source
        self.writes = frozenset(docs.writes)
        self.needs_input = frozenset(docs.needs_input)
        # A Whoosh searcher reads shared file objects: one query at a time.
        self.lock = threading.Lock()


def _title(tool: Any) -> str | None:
    title = (tool.annotations or {}).get("title")
    return title if isinstance(title, str) else None


def _needs_input(tool: Any) -> bool:
    required = (tool.input_schema or {}).get("required")
    return isinstance(required, list) and bool(required)


def _writes(tool: Any) -> bool:
    annotations = tool.annotations or {}
    return annotations.get("readOnlyHint") is False or annotations.get("destructiveHint") is True


def fingerprint(tools: Sequence[CatalogTool], source_descriptions: Mapping[str, str], config: RankingConfig,
                param_texts: Sequence[str]) -> str:
    """A hash of everything an index is built from: indexed text, ranking settings, versions of junior and Whoosh.

    ``tools`` in tool_name order, ``param_texts`` their ``param_text`` (computed once for hashing and indexing).
    """
    from importlib.metadata import PackageNotFoundError, version

    def dist_version(name: str) -> str:
        try:
            return version(name)
        except PackageNotFoundError:
            return "?"

    digest = hashlib.sha256()
    head = [_FORMAT_VERSION, dist_version("junior-core"), dist_version("whoosh-reloaded"), attrs.asdict(config)]
    digest.update(json.dumps(head, sort_keys=True).encode())
    digest.update(json.dumps(sorted(source_descriptions.items())).encode())
    for entry, params in zip(tools, param_texts, strict=True):
        tool = entry.tool
        row = [entry.tool_name, entry.source_id, tool.name, _title(tool), list(getattr(tool, "keywords", ())),
               tool.description, params, _writes(tool), _needs_input(tool)]
        digest.update(json.dumps(row, ensure_ascii=False).encode())
    return digest.hexdigest()


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
                           [doc for doc, e in enumerate(entries) if _writes(e.tool)],
                           [doc for doc, e in enumerate(entries) if _needs_input(e.tool)])
        if self.cache is not None and reopen:
            opened = self.cache.open(
                print_, docs, lambda index, stored, path: Snapshot(index, stored, self.config, print_, path)
            )
            if opened is not None:
                return opened
        from junior_core._whoosh import MemoryStorage, schema

        storage = MemoryStorage()
        index = storage.create_index(schema())
        self._write(index, entries, source_descriptions, param_texts)
        path = None
        if self.cache is not None:
            path = self.cache.store(print_, docs, storage)
        return Snapshot(index, docs, self.config, print_, path)

    def _postings(self, entries: Sequence[CatalogTool], source_descriptions: Mapping[str, str],
                  param_texts: Sequence[str], analyze: Analyzer | None = None,
                  ) -> Iterator[tuple[list[tuple[str, float]], list[tuple[str, float]]]]:
        """Per document, in order: the BM25F pseudo-frequency of every term, and the action terms."""
        config, analyze = self.config, analyze or self._analyzer
        fields = [f for f in FIELDS if config.weight(f) > 0]
        source_counts = {
            source: Counter(analyze(f"{source} {description}")) for source, description in source_descriptions.items()
        }
        counted: list[list[Counter[str]]] = []
        lengths: list[list[int]] = []
        actions: list[list[tuple[str, float]]] = []
        for entry, params_of in zip(entries, param_texts, strict=True):
            tool = entry.tool
            title = _title(tool)
            name_terms = analyze(f"{tool.name} {title}" if title else tool.name)
            keywords = " ".join(getattr(tool, "keywords", ()))
            keyword_terms = analyze(keywords)  # stemmed: the tool's action vocabulary for a request's verbs
            description_terms = analyze(tool.description)
            doc_counts: list[Counter[str]] = []
            for field in fields:
                if field == "name":
                    counts = Counter(name_terms)
                elif field == "keywords":
                    counts = Counter(analyze.exact(keywords))
                elif field == "description":
                    counts = Counter(description_terms)
                elif field == "params":
                    counts = Counter(analyze(params_of))
                elif field == "source":
                    counts = source_counts.get(entry.source_id) or Counter(analyze(entry.source_id))
                else:
                    counts = Counter(pairs(name_terms) + pairs(description_terms))
                doc_counts.append(counts)
            counted.append(doc_counts)
            lengths.append([counts.total() for counts in doc_counts])
            # A tool that declares keywords opts into matching a request's verb against its action vocabulary
            # (name and keywords). Others do not: a verb meeting a product name ("find" -> FindAgency) misleads.
            actions.append([(term, 1.0) for term in dict.fromkeys(name_terms + keyword_terms)] if keyword_terms else [])
        count = len(entries)
        averages = [sum(doc[i] for doc in lengths) / count if count else 0.0 for i in range(len(fields))]
        params = [(config.weight(f), config.b(f), averages[i]) for i, f in enumerate(fields)]
        for doc, doc_counts in enumerate(counted):
            acc: dict[str, float] = {}
            get = acc.get
            for (weight, b, avg), counts, length in zip(params, doc_counts, lengths[doc], strict=True):
                factor = weight / (1 - b + b * length / avg) if avg else weight
                for term, tf in counts.items():
                    acc[term] = get(term, 0.0) + tf * factor
            yield list(acc.items()), actions[doc]

    def _write(self, index: Any, entries: Sequence[CatalogTool], source_descriptions: Mapping[str, str],
               param_texts: Sequence[str]) -> None:
        from junior_core._whoosh import write_documents

        # Documents are added in tool_name order, so a doc number is also the tie-break order.
        seen: set[str] = set()  # typos: the raw words analysed, for the vocabulary
        analyze = self._analyzer.recording(seen) if self.config.typo_weight > 0 else self._analyzer
        documents: Iterator[dict[str, Any]] = (
            {"terms": terms, "action": action}
            for terms, action in self._postings(entries, source_descriptions, param_texts, analyze)
        )
        if self.config.typo_weight > 0:
            documents = spelling.with_vocabulary(documents, lambda: spelling.vocabulary(seen, analyze.stop_words))
        write_documents(index, documents)

    def search(self, query: str, *, limit: int, source_id: str | None = None,
               hidden: Collection[str] = ()) -> SearchResult:
        """Rank tools for ``query`` with BM25F and the request's intent; ties broken by tool_name.

        ``hidden`` tool_names are left out of the ranking and the total, as if they were not indexed. An index
        that raises (damaged files) is rebuilt once and the search asked again.
        """
        snapshot = self._snapshot
        try:
            return self._search(snapshot, query, limit, source_id, hidden)
        except Exception as exc:
            if snapshot is None or not self._recover(snapshot, exc):
                raise
        return self._search(self._snapshot, query, limit, source_id, hidden)

    def _search(self, snapshot: Snapshot | None, query: str, limit: int, source_id: str | None,
                hidden: Collection[str]) -> SearchResult:
        if snapshot is None:
            return SearchResult([], 0)
        with snapshot.lock:  # typos: everything below reads the corrected request
            fixed = spelling.correct(snapshot, snapshot.searcher.reader(), query, self._analyzer,
                                     self.config.typo_weight)
        query = fixed.text
        terms = self._analyzer(query)
        declared = self._analyzer.exact(query) if self.config.keywords_weight > 0 else []
        if not terms and not declared:
            return SearchResult([], 0, fixed.fixes)
        from whoosh.query import Or, Term

        wanted = list(dict.fromkeys(terms + declared))
        if self.config.pairs_weight > 0:
            wanted += list(dict.fromkeys(pairs(terms)))
        clauses = [Term("terms", term, boost=fixed.boost(term)) for term in wanted]
        intent = Intent.of(query)
        verb_terms = list(dict.fromkeys(self._analyzer(" ".join(intent.verbs)))) if intent.verbs else []
        # Inside one source the verb decides between sibling tools and cannot pull in another source's.
        boost = self.config.action_weight if source_id is None else self.config.source_action_weight
        if boost > 0:
            clauses += [Term("action", term, boost=boost * fixed.boost(term)) for term in verb_terms]
        if source_id is not None:
            allowed = snapshot.by_source.get(source_id)
            if not allowed:
                return SearchResult([], 0, fixed.fixes)
        else:
            allowed = None
        doc_of = snapshot.doc_of
        mask = {doc_of[name] for name in hidden if name in doc_of} or None
        readers_first = False
        if self.config.readers_first and snapshot.writes:
            # A question asks to read; so does a request whose verb only tools that do not write declare (among
            # the tools this search can return).
            kind = self._verb_kind(snapshot, verb_terms, allowed, mask)
            readers_first = intent.question or kind == "read" or (intent.everything and kind != "write")
        # A question moves writers after readers: read enough beyond ``limit`` for a reader to move up.
        depth = limit + 10 if readers_first else limit
        with snapshot.lock:
            results = snapshot.searcher.search(Or(clauses), limit=depth, filter=allowed, mask=mask,
                                               optimize=False)
            scored = [(hit.score, hit.docnum) for hit in results]
            total = len(results)
        writes = snapshot.writes if readers_first else frozenset()
        # "All of them": among readers, a tool that lists without being told what to look for comes first.
        needs = snapshot.needs_input if readers_first and intent.everything else frozenset()
        scored.sort(key=lambda item: (item[1] in writes, item[1] in needs, -round(item[0], 6), item[1]))
        names = snapshot.docs.names
        return SearchResult([names[doc] for _, doc in scored[:limit]], total, fixed.fixes)

    @staticmethod
    def _verb_kind(snapshot: Snapshot, verb_terms: Sequence[str], allowed: set[int] | None,
                   mask: set[int] | None) -> str | None:
        """"read" when only tools that do not write declare the verbs, "write" when only writers do, else None."""
        if not verb_terms:
            return None
        declared: set[int] = set()
        with snapshot.lock:
            reader = snapshot.searcher.reader()
            for term in verb_terms:
                if reader.doc_frequency("action", term):
                    declared.update(reader.postings("action", term).all_ids())
        if allowed is not None:
            declared &= allowed
        if mask:
            declared -= mask
        if not declared:
            return None
        writers = declared & snapshot.writes
        return "read" if not writers else "write" if writers == declared else None

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
        doc = snapshot.doc_of[tool_name]
        terms = set(self._analyzer(query))
        if not terms:
            return False
        from whoosh.query import Or, Term

        with snapshot.lock:
            found = snapshot.searcher.search(Or([Term("terms", t) for t in terms]), limit=1, filter={doc})
            return len(found) > 0
