"""The index behind searchTools: a Whoosh index of every tool's full text, ranked with BM25F.

Every tool is a document with fields ``name`` (local name and annotation title), ``keywords`` (the words a tool
declares for what it does, analysed like its text; a phrase is one term), ``description`` (the full text),
``params`` (parameter names, titles, descriptions and enum values), ``source`` (source id and description) and,
if ``pairs_weight`` is set, ``pairs`` (adjacent terms of the name and description, a cheap proximity signal; off
by default). Text analysis is ``junior_core.analysis``.

Scoring is BM25F (Robertson & Zaragoza 2009): per field, the term frequency over the field's length norm times
the field's weight, summed into one pseudo-frequency per term and document, then saturated once per term, so a
word repeated across fields does not count twice. Length norms need every field's average length, known once
the whole catalog is analysed, so the pseudo-frequency is computed at build time and written as the posting
weight of a single Whoosh field, ``terms``, through a small ``Format``. A search reads each request term's
postings from Whoosh's reader once and sums idf · (k1 + 1) · w / (w + k1) per tool, counting on the way what the
relevance floor (``junior_core.relevance``) needs; rarity is reckoned with the reference catalog there.

Intent, on top of the words, for the tools that passed the floor (see ``junior_core.intent``): the request's verbs
("jot down ...", "unsave ...") are matched against each tool's action words (fields ``named`` and ``opens``), and
a question ("what do you remember about me?") ranks tools that declare they write (``readOnlyHint: false``) lower.

One snapshot (index, reader, names) per catalog version is swapped in whole, so a search never sees a
half-built index and a rebuild never blocks searches; ``junior_core.index_cache`` stores built indexes on disk.
"""

from __future__ import annotations

import hashlib
import heapq
import json
import logging
import threading
from collections import Counter
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import attrs

from junior_core import spelling
from junior_core.analysis import Analyzer, pairs, param_text, summarize
from junior_core.index_cache import IndexedDocs
from junior_core.intent import PHRASE_MARK, leading_verbs, phrase_term, phrase_words
from junior_core.ranking import RankingConfig
from junior_core.relevance import Reference, Request, Sources, holding, rarity, read_request, telling

if TYPE_CHECKING:
    from junior_core.catalog import CatalogTool
    from junior_core.index_cache import IndexCache

__all__ = ["RankingConfig", "SearchIndex", "SearchResult", "Snapshot", "fingerprint"]

log = logging.getLogger("junior.search")

FIELDS = ("name", "keywords", "description", "params", "source", "pairs")


# -- the Whoosh index -----------------------------------------------------------------------------

_FORMAT_VERSION = 11


@attrs.frozen
class SearchResult:
    """Ranked tool_names, how many tools matched in all, and the request's words corrected for typos."""

    tool_names: list[str]
    total: int
    corrections: tuple[tuple[str, str], ...] = ()
    """``(as written, searched for)`` per corrected word."""


class Snapshot:
    """One immutable index for one catalog version: the Whoosh index, a reused reader, and doc numbers."""

    def __init__(self, index: Any, docs: IndexedDocs, fingerprint: str, path: str | None = None,
                 source_terms: Mapping[str, frozenset[str]] | None = None) -> None:
        self.index = index
        self.docs = docs
        self.fingerprint = fingerprint
        self.path = path
        self.reader = index.reader()
        self.doc_of = {name: doc for doc, name in enumerate(docs.names)}
        by_source: dict[str, set[int]] = {}
        for doc, source in enumerate(docs.sources):
            by_source.setdefault(source, set()).add(doc)
        self.by_source = by_source
        self.sources = Sources(docs.sources, {source: len(members) for source, members in by_source.items()},
                               dict(source_terms or {}))
        """Each source's size, and its id and description as terms: words searchTools shows of every tool in it."""
        self._mentions: dict[int, float] | None = None
        self.writes = frozenset(docs.writes)
        self.needs_input = frozenset(docs.needs_input)
        # A Whoosh reader reads shared file objects: one query at a time.
        self.lock = threading.Lock()

    def mentions(self) -> dict[int, float]:
        """Per tool whose description is long, what one mention of a word there counts toward the floor (below 1),
        read from the index once (call under the lock)."""
        if self._mentions is None:
            found: dict[int, float] = {}
            if self.reader.doc_frequency("mention", MENTION):
                postings = self.reader.postings("mention", MENTION)
                while postings.is_active():
                    found[postings.id()] = postings.weight()
                    postings.next()
            self._mentions = found
        return self._mentions


def _title(tool: Any) -> str | None:
    title = (tool.annotations or {}).get("title")
    return title if isinstance(title, str) else None


def _needs_input(tool: Any) -> bool:
    required = (tool.input_schema or {}).get("required")
    return isinstance(required, list) and bool(required)


def _writes(tool: Any) -> bool:
    annotations = tool.annotations or {}
    return annotations.get("readOnlyHint") is False or annotations.get("destructiveHint") is True


def _actors(reader: Any, term: str) -> set[int]:
    """The tools ``term`` is an action word of: in their name, title or keywords, or opening their description."""
    return holding(reader, "named", term) | holding(reader, "opens", term)


MENTION = "mention"
"""The one term of the ``mention`` field: its weight in a tool's document is what one mention of a word in the
tool's description counts toward the floor, where that is less than 1 (``_mention``)."""


def _mention(weight: float, b: float, average: float, length: int, k1: float) -> list[tuple[str, float]]:
    """What one mention in a description of ``length`` terms counts toward the floor, as a share of one in a
    description of average length: ``(k1 + 1) w / (w + k1)`` of its pseudo-frequency ``w``, recorded only when
    below 1."""
    if not average:
        return []
    w = weight / (1 - b + b * length / average)
    share = (k1 + 1) * w / (w + k1)
    return [(MENTION, share)] if share < 1 else []


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
        source_terms = {source: frozenset(self._analyzer(source) + self._analyzer.compounds_whole(description))
                        for source, description in source_descriptions.items()}
        if self.cache is not None and reopen:
            opened = self.cache.open(
                print_, docs, lambda index, stored, path: Snapshot(index, stored, print_, path, source_terms)
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
        return Snapshot(index, docs, print_, path, source_terms)

    def _postings(self, entries: Sequence[CatalogTool], source_descriptions: Mapping[str, str],
                  param_texts: Sequence[str], analyze: Analyzer | None = None,
                  ) -> Iterator[dict[str, list[tuple[str, float]]]]:
        """Per document, in order, its Whoosh fields: ``terms`` (every term's BM25F pseudo-frequency), ``named``
        (terms of its name, title and keywords), ``opens`` (the verb its description opens with, the words in
        parentheses after it, and its one-word keywords: the words it states as its actions), ``identity``
        (terms of its name, title, summary and keywords, only those few enough tools use to be telling,
        ``junior_core.relevance``) and ``mention`` (one term, weighted by what one mention of a word in its
        description counts toward the floor, where the description is long enough for that to be below 1)."""
        config, analyze = self.config, analyze or self._analyzer
        fields = [f for f in FIELDS if config.weight(f) > 0]
        source_counts = {
            source: Counter(analyze(f"{source} {description}")) for source, description in source_descriptions.items()
        }
        counted: list[list[Counter[str]]] = []
        lengths: list[list[int]] = []
        named: list[list[str]] = []
        opens: list[list[str]] = []
        identities: list[list[str]] = []
        used: Counter[str] = Counter()  # how many tools use each term
        sizes: Counter[str] = Counter(entry.source_id for entry in entries)
        for entry, params_of in zip(entries, param_texts, strict=True):
            tool = entry.tool
            title = _title(tool)
            name_terms = analyze(f"{tool.name} {title}" if title else tool.name)
            declared = getattr(tool, "keywords", ())
            keyword_terms = analyze(" ".join(k for k in declared if len(phrase_words(k)) < 2))
            keyword_phrases = [phrase_term(words) for words in map(phrase_words, declared) if len(words) > 1]
            description_terms = analyze(tool.description)
            doc_counts: list[Counter[str]] = []
            for field in fields:
                if field == "name":
                    counts = Counter(name_terms)
                elif field == "keywords":
                    counts = Counter(keyword_terms + keyword_phrases)
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
            used.update(set().union(*doc_counts))
            # A tool's action words: its name's (a tool named list_directory lists), the verb its description
            # opens with and the words in parentheses after it ("Forget (delete, remove) a memory ..."), its
            # one-word keywords.
            # Words only: a whole identifier ("list_directory") or a number is a term of ``terms``, not an action or
            # a telling word.
            words = [t for t in dict.fromkeys(name_terms + keyword_terms) if "_" not in t and not t.isdigit()]
            named.append(words + keyword_phrases)
            leading = analyze(leading_verbs(tool.description)) if config.summary_actions else []
            opens.append(list(dict.fromkeys(leading + [t for t in keyword_terms if "_" not in t])))
            identities.append(list(dict.fromkeys(
                [*words, *keyword_phrases,
                 *(t for t in analyze.compounds_whole(summarize(tool.description))
                   if "_" not in t and not t.isdigit())])))
        count = len(entries)
        averages = [sum(doc[i] for doc in lengths) / count if count else 0.0 for i in range(len(fields))]
        params = [(config.weight(f), config.b(f), averages[i]) for i, f in enumerate(fields)]
        # A word more tools use than the floor's share, even leaving the largest source aside, is never telling.
        common = config.telling_share * (count + max(config.reference_tools, 0.0)) + max(sizes.values(), default=0)
        described = fields.index("description") if "description" in fields else None
        for doc, doc_counts in enumerate(counted):
            acc: dict[str, float] = {}
            get = acc.get
            for (weight, b, avg), counts, length in zip(params, doc_counts, lengths[doc], strict=True):
                factor = weight / (1 - b + b * length / avg) if avg else weight
                for term, tf in counts.items():
                    acc[term] = get(term, 0.0) + tf * factor
            yield {
                "terms": list(acc.items()),
                "named": [(term, 1.0) for term in named[doc]],
                "opens": [(term, 1.0) for term in opens[doc]],
                "identity": [(term, 1.0) for term in identities[doc] if used[term] <= common or PHRASE_MARK in term],
                "mention": [] if described is None else _mention(*params[described], lengths[doc][described],
                                                                  config.k1),
            }

    def _write(self, index: Any, entries: Sequence[CatalogTool], source_descriptions: Mapping[str, str],
               param_texts: Sequence[str]) -> None:
        from junior_core._whoosh import write_documents

        # Documents are added in tool_name order, so a doc number is also the tie-break order.
        seen: set[str] = set()  # typos: the raw words analysed, for the vocabulary
        analyze = self._analyzer.recording(seen) if self.config.typo_weight > 0 else self._analyzer
        documents: Iterator[dict[str, Any]] = self._postings(entries, source_descriptions, param_texts, analyze)
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
        known = Reference.of(self._analyzer).df if self.config.reference_tools > 0 else ()
        with snapshot.lock:  # typos: everything below reads the corrected request
            fixed = spelling.correct(snapshot, snapshot.reader, query, self._analyzer,
                                     self.config.typo_weight, known)
        query = fixed.text
        with snapshot.lock:
            request = read_request(query, self._analyzer, fixed, self.config.payload_weight,
                                   self._action_words(snapshot), self._declared(snapshot))
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
            scores = self._scores(snapshot, request, allowed, mask, whole_catalog=source_id is None)
        if not scores:
            return SearchResult([], 0, fixed.fixes)
        intent, verb_terms = request.intent, request.verb_terms
        # Inside one source the verb decides between sibling tools and cannot pull in another source's.
        boost = self.config.action_weight if source_id is None else self.config.source_action_weight
        if boost > 0 and verb_terms:
            with snapshot.lock:
                self._add_actions(snapshot, scores, verb_terms, boost, fixed)
        readers_first = False
        if self.config.readers_first and snapshot.writes:
            # A question asks to read; so does a request whose verb only tools that do not write name (among
            # the tools that passed the floor).
            kind = self._verb_kind(snapshot, verb_terms, set(scores))
            readers_first = intent.question or kind == "read" or (intent.everything and kind != "write")
        writes = snapshot.writes if readers_first else frozenset()
        # "All of them": among readers, a tool that lists without being told what to look for comes first.
        needs = snapshot.needs_input if readers_first and intent.everything else frozenset()
        top = heapq.nsmallest(limit, scores.items(),
                              key=lambda item: (item[0] in writes, item[0] in needs, -round(item[1], 6), item[0]))
        names = snapshot.docs.names
        return SearchResult([names[doc] for doc, _ in top], len(scores), fixed.fixes)

    @staticmethod
    def _declared(snapshot: Snapshot) -> Callable[[str], bool]:
        """Whether some tool declares the phrase term as a keyword (call under the snapshot's lock)."""
        reader = snapshot.reader
        return lambda term: bool(reader.doc_frequency("terms", term))

    def _action_words(self, snapshot: Snapshot) -> Callable[[str], bool]:
        """Whether ``word`` is an action word: an installed tool states it as its action (its description opens
        with it or names it in the parenthesis after its first word, or it is a one-word keyword), or a reference
        tool's description opens with it (call under the snapshot's lock). A word of a tool's name is not enough:
        names hold nouns too ("lol-summoner-search")."""
        reader, analyze = snapshot.reader, self._analyzer
        opening = Reference.of(analyze).opens if self.config.reference_tools > 0 else frozenset()

        def is_action(word: str) -> bool:
            return any(term in opening or reader.doc_frequency("opens", term) for term in analyze(word))

        return is_action

    def _scores(self, snapshot: Snapshot, request: Request, allowed: set[int] | None, mask: set[int] | None,
                whole_catalog: bool = True) -> dict[int, float]:
        """The BM25F score of every tool that passes the relevance floor (``junior_core.relevance``).

        The floor is for searches of the whole catalog (``whole_catalog``): inside one source the caller chose
        the subject, and every tool there that matches a word is ranked.

        Read term at a time from Whoosh's postings: each term's posting list once, each posting's weight saturated
        once, summed per tool, and the floor's matches counted on the way.
        """
        config, reader = self.config, snapshot.reader
        k1, floor, unknown = config.k1, config.relevance_floor, config.unknown_weight
        # The floor's bookkeeping (matches per clause, tools per source) only when the floor applies.
        flooring = whole_catalog and (floor > 0 or config.telling_share > 0)
        idf_of = rarity(config, self._analyzer, reader.doc_count_all())
        reference = Reference.of(self._analyzer).df if config.reference_tools > 0 else {}
        found = {term: reader.doc_frequency("terms", term) for term in request.weights}
        idf = {term: idf_of(term, n) for term, n in found.items()}
        mentions = snapshot.mentions() if flooring else {}
        count = len(request.clauses)
        need = [0.0] * count  # per clause: the idf its ask words carry
        matched: list[dict[int, float]] = [{} for _ in range(count)]
        bonus: list[dict[int, float]] = [{} for _ in range(count)]  # matched payload and phrases
        roles: dict[str, list[tuple[int, bool]]] = {}
        for number, (ask, extra) in enumerate(request.clauses):
            for term in ask:
                known = found[term] or reference.get(term, 0)
                need[number] += idf[term] * request.weights[term] * (1.0 if known else unknown)
                roles.setdefault(term, []).append((number, False))
            for term in extra:
                roles.setdefault(term, []).append((number, True))
        score: dict[int, float] = {}
        get = score.get
        source_of = snapshot.docs.sources
        per_source: dict[str, Counter[str]] = {}
        for term, weight in request.weights.items():
            if not found[term] or weight <= 0:
                continue
            its_roles = roles[term] if flooring else []
            scale, strength = idf[term] * weight * (k1 + 1), idf[term] * weight
            owners = self._declaring(reader, request.bound[term]) if term in request.bound else None
            sources = per_source[term] = Counter()
            # Said by its name, keywords, stated action or source, a word counts fully toward the floor; else as
            # strongly as the tool's text holds it, and at least as one mention in its description would.
            weighed = bool(its_roles and mentions)
            full = _actors(reader, term) if weighed else set()
            saying = snapshot.sources.saying(term) if weighed else set()
            postings = reader.postings("terms", term)
            while postings.is_active():
                doc = postings.id()
                if flooring:
                    sources[source_of[doc]] += 1
                if ((allowed is None or doc in allowed) and (mask is None or doc not in mask)
                        and (owners is None or doc in owners)):
                    saturated = postings.weight()
                    saturated /= saturated + k1
                    score[doc] = get(doc, 0.0) + scale * saturated
                    if its_roles:
                        share = mentions.get(doc)
                        held = strength if share is None or doc in full or source_of[doc] in saying else \
                            strength * min(1.0, max(share, (k1 + 1) * saturated))
                    for number, counts_only in its_roles:
                        hits = matched[number]
                        hits[doc] = hits.get(doc, 0.0) + held
                        if counts_only:
                            more = bonus[number]
                            more[doc] = more.get(doc, 0.0) + held
                postings.next()
        if not flooring:
            return score
        admitted = telling(reader, request, found, per_source, snapshot.sources, set(score), config, self._analyzer)
        sources_in = {source_of[doc] for doc in admitted}
        return {
            doc: value for doc, value in score.items()
            if source_of[doc] in sources_in or (floor > 0 and any(
                matched[c].get(doc, 0.0) >= floor * (need[c] + bonus[c].get(doc, 0.0)) - 1e-9
                for c in range(count) if need[c] > 0))
        }

    @staticmethod
    def _declaring(reader: Any, phrase_terms: Collection[str]) -> set[int]:
        """The tools that declare one of ``phrase_terms``."""
        return {doc for term in phrase_terms for doc in holding(reader, "terms", term)}

    def _add_actions(self, snapshot: Snapshot, scores: dict[int, float], verb_terms: Sequence[str], boost: float,
                     fixed: spelling.Correction) -> None:
        """Add the request's verbs, matched against each tool's action words, to the tools that passed the floor.

        A verb weighs its rarity in all tools' text: "unsave" is a strong signal, "list" a weak one.
        """
        reader = snapshot.reader
        idf_of = rarity(self.config, self._analyzer, reader.doc_count_all())
        for term in verb_terms:
            naming = _actors(reader, term)
            if not naming:
                continue
            gain = boost * fixed.boost(term) * idf_of(term, reader.doc_frequency("terms", term))
            for doc in naming:
                if doc in scores:
                    scores[doc] += gain

    @staticmethod
    def _verb_kind(snapshot: Snapshot, verb_terms: Sequence[str], candidates: set[int]) -> str | None:
        """"read" when only tools that do not write name the verbs, "write" when only writers do, else None."""
        if not verb_terms:
            return None
        declared: set[int] = set()
        with snapshot.lock:
            for term in verb_terms:
                declared |= _actors(snapshot.reader, term)
        declared &= candidates
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
        with snapshot.lock:
            request = read_request(query, self._analyzer, spelling.Correction(query), self.config.payload_weight,
                                   self._action_words(snapshot), self._declared(snapshot))
            return request is not None and bool(self._scores(snapshot, request, {snapshot.doc_of[tool_name]}, None))
