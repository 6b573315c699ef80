"""Admit: which scored tools pass the relevance floor (``admit``: a telling word, its source, or coverage, each
recorded in ``explain``), and the evidence an answer shows of why its tools matched and what it did not find:
the query's words each tool holds (``matched``), the words no returned tool holds (``unmatched``), whether the
answer is ``weak``, and for a query that matches nothing the sources nearest to it. The partial matches shown
below the floor are ``answers._found``'s, flagged weak here.

- ``matched``: the query's words, as written (a corrected typo as corrected: the answer's note says so), whose
  terms the tool's own text holds: its name, title, keywords, description or parameters, never only its source's
  id or description (every tool of a source would hold those).
- ``unmatched``: the query's words (stop words aside) no returned tool holds.
- ``weak``: in a search of every source, tools were returned and the request's rarest asked word (as the ranking
  reckons rarity, over the installed tools and the reference catalog), or an asked word no installed tool's own
  text holds but the reference catalog uses, is unmatched; never for the query's exact tool_name, nor when a
  returned tool declares a keyword phrase the request says. A word neither an installed tool nor the reference
  uses is a name or a value and decides nothing.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol

import attrs

from junior_core._discovery import scoring
from junior_core._discovery.analysis import PHRASE_MARK, WORD
from junior_core._discovery.scoring import Reference, holding
from junior_core._discovery.switches import on

if TYPE_CHECKING:
    from junior_core._catalog.catalog import CatalogTool
    from junior_core._discovery.analysis import Analyzer
    from junior_core._discovery.query import Request
    from junior_core._discovery.reasons import Trace
    from junior_core._discovery.scoring import Snapshot, Sources, Tally
    from junior_core._discovery.settings import RankingConfig

__all__ = ["PARTIAL", "Evidence", "admit", "installed_holders", "nearest_sources", "partial_matches", "said_words",
           "telling", "weigh"]


class IndexReading(Protocol):
    """What the floor reads of ``index.SearchIndex`` (named by its shape: the index calls the floor)."""

    config: RankingConfig

    @property
    def snapshot(self) -> Snapshot | None: ...

    @property
    def analyzer(self) -> Analyzer: ...

    def analyze(self, text: str) -> list[str]: ...


def admit(snapshot: Snapshot, request: Request, score: dict[int, float], tally: Tally | None,
          config: RankingConfig, analyzer: Analyzer, trace: Trace | None = None,
          whole_catalog: bool = True) -> dict[int, float]:
    """The scored tools that pass the relevance floor (``scoring``'s docstring says how), each with why in
    ``trace``; every tool where no floor applies (``tally`` None)."""
    if tally is None:
        if trace is not None:
            how = "no floor" if whole_catalog else "source chosen"
            trace.admitted.update({doc: {"by": how} for doc in score})
        return score
    floor, source_of = config.relevance_floor, snapshot.docs.sources
    matched, need, bonus = tally.matched, tally.need, tally.bonus

    def needed(c: int, doc: int) -> float:
        return floor * (need[c] + bonus[c].get(doc, 0.0))

    def covered(doc: int) -> int | None:
        """The first clause of which ``doc`` holds the share the floor needs."""
        if floor <= 0:
            return None
        return next((c for c in range(len(need))
                     if need[c] > 0 and matched[c].get(doc, 0.0) >= needed(c, doc) - 1e-9), None)

    admitted = telling(snapshot.reader, request, tally.found, tally.per_source, snapshot.sources, set(score),
                       config, analyzer)
    sources_in = {source_of[doc] for doc in admitted} if on("source_competes") else set()
    why: dict[int, dict[str, Any]] = {}
    by_source = {source_of[doc]: doc for doc in sorted(admitted, reverse=True)}
    for doc in score:
        if doc in admitted:
            why[doc] = {"by": "telling word", "term": admitted[doc]}
        elif source_of[doc] in sources_in:
            other = by_source[source_of[doc]]
            why[doc] = {"by": "its source", "source": source_of[doc], "tool": snapshot.docs.names[other],
                        "term": admitted[other]}
        elif (c := covered(doc)) is not None:
            why[doc] = {"by": "coverage", "clause": c, "held": round(matched[c].get(doc, 0.0), 4),
                        "needed": round(needed(c, doc), 4)}
    if trace is not None:
        trace.admitted.update(why)
        if trace.watch is not None:
            doc = trace.watch
            trace.floor = {"clauses": [{"clause": c, "held": round(matched[c].get(doc, 0.0), 4),
                                        "needed": round(needed(c, doc), 4)} for c in range(len(need)) if need[c] > 0],
                           "telling word": admitted.get(doc), "its source": source_of[doc] in sources_in}
    return {doc: score[doc] for doc in why}




@attrs.frozen
class Evidence:
    matched: Mapping[str, list[str]]
    """Per returned tool_name, the query's words its own text holds, in the query's order."""
    unmatched: tuple[str, ...]
    """The query's words no returned tool holds, in the query's order."""
    weak: bool
    unheld: tuple[str, ...] = ()
    """Of ``unmatched``, the words no installed tool's own text holds (for the hint)."""
    elsewhere: tuple[str, ...] = ()
    """Of ``unmatched``, the words some installed tool not returned holds (for the hint)."""


def said_words(query: str, analyze: Callable[[str], list[str]]) -> list[tuple[str, list[str]]]:
    """Each distinct word of ``query`` as written, with its terms; words without terms (stop words) left out."""
    out: list[tuple[str, list[str]]] = []
    seen: set[str] = set()
    for match in WORD.finditer(query):
        word = match.group()
        key = word.lower()
        if key in seen:
            continue
        seen.add(key)
        terms = analyze(word)
        if terms:
            out.append((word, terms))
    return out


PARTIAL = {"admitted": {"by": "partial match", "why": "below the floor; its own text holds a word of the query, so "
                        "it is shown and the answer flagged weak"},
           "order": "below the floor: after every tool that passed it, by score"}
"""What ``explain`` records of a tool shown below the floor."""


def partial_matches(passed: Sequence[CatalogTool], below: Sequence[CatalogTool], query: str,
                    analyze: Callable[[str], list[str]], held: Callable[[str], frozenset[str]]) -> list[CatalogTool]:
    """The tools below the floor (``below``, by score) an answer shows after those that ``passed`` it when those
    are none or weak: the ones whose own text holds a word of ``query``. The floor orders and flags; it does not
    hide a partial match."""
    terms = {t for _, ts in said_words(query, analyze) for t in ts}
    shown = {t.tool_name for t in passed}
    return [t for t in below if t.tool_name not in shown and terms & held(t.tool_name)]


def installed_holders(index: IndexReading, terms: Sequence[str]) -> dict[str, int]:
    """Per term, how many installed tools hold it in their own text (not only through their source)."""
    snapshot = index.snapshot
    if snapshot is None:
        return dict.fromkeys(terms, 0)
    with snapshot.lock:
        reader = snapshot.reader
        return {term: reader.doc_frequency("terms", term) - reader.doc_frequency("sourced", term) for term in terms}


def weigh(index: IndexReading, query: str, asked: Sequence[str], names: Sequence[str],
          held_of: Callable[[str], frozenset[str]], exact: str | None = None,
          whole_catalog: bool = True) -> Evidence:
    """The evidence of an answer returning ``names`` for ``query`` (typos corrected), whose request asked with
    ``asked`` (``SearchResult.asked``); ``held_of`` gives the terms a tool's own text holds."""
    words = said_words(query, index.analyze)
    held = {name: held_of(name) for name in names}
    matched = {name: [word for word, terms in words if any(t in held[name] for t in terms)] for name in names}
    shown = frozenset().union(*held.values()) if held else frozenset()
    missing = [(word, terms) for word, terms in words if not any(t in shown for t in terms)]
    unmatched = tuple(word for word, _ in missing)
    if not names or exact is not None or not whole_catalog:
        return Evidence(matched, unmatched, False)
    rarity, phrases, unknown = _rarity(index, asked)
    if not rarity or any(term in held[name] for name in names for term in phrases):
        return Evidence(matched, unmatched, False)
    rarest = max(rarity, key=lambda term: (rarity[term], term))
    lacking = {term for term in rarity if term not in shown}
    if rarest not in lacking and not (lacking & unknown):
        return Evidence(matched, unmatched, False)
    holders = installed_holders(index, [t for _, terms in missing for t in terms])
    # Asked words first, the rarest first: what the hint names.
    order = sorted(missing, key=lambda item: -max((rarity.get(t, -1.0) for t in item[1]), default=-1.0))
    unheld = tuple(word for word, terms in order if not any(holders[t] for t in terms))
    elsewhere = tuple(word for word, terms in order if any(holders[t] for t in terms))
    return Evidence(matched, unmatched, True, unheld, elsewhere)


def _rarity(index: IndexReading, asked: Sequence[str]) -> tuple[dict[str, float], set[str], set[str]]:
    """The rarity (idf, as the ranking reckons it) of each asked word some installed or reference tool uses, the
    asked keyword phrases some tool declares, and the asked words only the reference uses (no installed tool's
    own text)."""
    snapshot = index.snapshot
    if snapshot is None or not asked:
        return {}, set(), set()
    config, analyzer = index.config, index.analyzer
    reference = Reference.of(analyzer) if config.reference_tools > 0 else None
    df = reference.df if reference is not None else {}
    rarity: dict[str, float] = {}
    phrases: set[str] = set()
    unknown: set[str] = set()
    with snapshot.lock:
        reader = snapshot.reader
        idf = scoring.term_idf(snapshot, config, analyzer)
        for term in asked:
            n = reader.doc_frequency("terms", term)
            if PHRASE_MARK in term:
                if n:
                    phrases.add(term)
            elif not term.isdigit() and (n or df.get(term, 0)):
                rarity[term] = idf(term)
                if not n - reader.doc_frequency("sourced", term):
                    unknown.add(term)
    return rarity, phrases, unknown


def nearest_sources(index: IndexReading, query: str, source_ids: Sequence[str], count: int) -> list[str]:
    """At most ``count`` of ``source_ids`` whose id or description shares words with ``query``, the most telling
    share first (rarity summed over the shared words; ties by id)."""
    snapshot = index.snapshot
    if snapshot is None or count <= 0:
        return []
    terms = set(index.analyze(query))
    if not terms:
        return []
    config, analyzer = index.config, index.analyzer
    with snapshot.lock:
        idf = scoring.term_idf(snapshot, config, analyzer)
        rarity = {term: idf(term) for term in terms}
    said = snapshot.sources.terms
    scored = [(sum(rarity[t] for t in terms & said.get(sid, frozenset())), sid) for sid in source_ids]
    return [sid for score, sid in sorted(scored, key=lambda item: (-item[0], item[1])) if score > 0][:count]


def telling(reader: Any, request: Request, found: Mapping[str, int], per_source: Mapping[str, Counter[str]],
            sources: Sources, candidates: set[int], config: RankingConfig, analyzer: Analyzer) -> dict[int, str]:
    """The ``candidates`` that share a telling word with the request (see the module's docstring), each with the
    first such word.

    ``found`` is each term's number of installed tools, ``per_source`` how many of each source's tools use it.
    """
    share, weight = config.telling_share, max(config.reference_tools, 0.0)
    if share <= 0:
        return {}
    reference = Reference.of(analyzer) if weight else None
    if reference is not None and not reference.size:
        reference, weight = None, 0.0
    total = reader.doc_count_all() + weight
    source_of, sizes = sources.of_doc, sources.sizes
    out: dict[int, str] = {}
    for term, n in found.items():
        if not n:
            continue
        if term in request.placed and on("named_verbs_only"):
            docs = holding(reader, "named", term)
        else:
            docs = holding(reader, "identity", term)
            saying = sources.saying(term)
            if saying:
                docs.update(doc for doc in candidates if source_of[doc] in saying)
        docs &= candidates
        if not docs:
            continue
        if term in request.phrases:
            for doc in docs:
                out.setdefault(doc, term)
            continue
        elsewhere = reference.df.get(term, 0) * weight / reference.size if reference is not None else 0.0
        if elsewhere > share * weight:
            continue  # tools in general share it ("list", "search"), however few of the installed ones do
        counts = per_source.get(term, Counter())
        for doc in docs:
            source = source_of[doc]
            if n - counts[source] + elsewhere <= share * (total - sizes[source]):
                out.setdefault(doc, term)
    return out
