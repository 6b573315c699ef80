"""Admit and weigh: which scored tools pass the relevance floor (``admit``: a telling word, its source, or coverage;
docs/architecture.md, "The relevance floor"), and the evidence an answer shows of what its tools matched and what
it did not find (``weigh``; docs/discovery.md, "Match evidence, weak answers and partial matches")."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol

import attrs

from junior_core._discovery.analysis import PHRASE_MARK, WORD
from junior_core._discovery.scoring import Reference, holding, rarity
from junior_core._discovery.switches import on

if TYPE_CHECKING:
    from junior_core._catalog.catalog import CatalogTool
    from junior_core._discovery.analysis import Analyzer
    from junior_core._discovery.reasons import Trace
    from junior_core._discovery.scoring import Request, Snapshot, Tally
    from junior_core._discovery.settings import RankingConfig

__all__ = ["PARTIAL", "Evidence", "admit", "nearest_sources", "partial_matches", "said_words", "telling", "weigh"]


class IndexReading(Protocol):
    """What the floor reads of ``index.SearchIndex`` (named by its shape: the index calls the floor)."""

    config: RankingConfig
    analyzer: Analyzer
    snapshot: Snapshot | None


def admit(snapshot: Snapshot, request: Request, score: dict[int, float], tally: Tally | None,
          config: RankingConfig, analyzer: Analyzer, trace: Trace | None = None,
          whole_catalog: bool = True) -> dict[int, float]:
    """The scored tools that pass the floor, each with why in ``trace``; all of them where no floor applies."""
    if tally is None:
        if trace is not None:
            trace.admitted.update({doc: {"by": "no floor" if whole_catalog else "source chosen"} for doc in score})
        return score
    floor, source_of = config.relevance_floor, snapshot.docs.sources
    asks = [c for c, need in enumerate(tally.need) if need > 0]

    def measure(c: int, doc: int) -> tuple[float, float]:
        """What ``doc`` holds of clause ``c``'s rarity, and the share the floor needs."""
        return tally.matched[c].get(doc, 0.0), floor * (tally.need[c] + tally.bonus[c].get(doc, 0.0))

    def row(c: int, doc: int) -> dict[str, Any]:
        held, needed = measure(c, doc)
        return {"clause": c, "held": round(held, 4), "needed": round(needed, 4)}

    admitted = telling(snapshot, request, tally, set(score), config, analyzer)
    sources_in = {source_of[doc] for doc in admitted} if on("source_competes") else set()
    rest = score.keys() - admitted.keys() - set().union(*(snapshot.by_source[source] for source in sources_in))
    covered: dict[int, int] = {}  # of the rest, each tool's first clause of which it holds the share the floor needs
    for c in asks if floor > 0 else ():
        pool = rest - covered.keys()
        if floor * tally.need[c] > 1e-9:  # else even a tool holding none of the clause would pass
            pool &= tally.matched[c].keys()
        covered.update(dict.fromkeys([doc for doc in pool if (m := measure(c, doc))[0] >= m[1] - 1e-9], c))
    if trace is None:
        return {doc: value for doc, value in score.items() if doc not in rest or doc in covered}
    by_source = {source_of[doc]: doc for doc in sorted(admitted, reverse=True)}
    why: dict[int, dict[str, Any]] = {}
    for doc in score:
        if doc in admitted:
            why[doc] = {"by": "telling word", "term": admitted[doc]}
        elif source_of[doc] in sources_in:
            other = by_source[source_of[doc]]
            why[doc] = {"by": "its source", "source": source_of[doc], "tool": snapshot.docs.names[other],
                        "term": admitted[other]}
        elif doc in covered:
            why[doc] = {"by": "coverage", **row(covered[doc], doc)}
    trace.admitted.update(why)
    if (watched := trace.watch) is not None:
        trace.floor = {"clauses": [row(c, watched) for c in asks], "telling word": admitted.get(watched),
                       "its source": source_of[watched] in sources_in}
    return {doc: score[doc] for doc in why}


def telling(snapshot: Snapshot, request: Request, tally: Tally, candidates: set[int], config: RankingConfig,
            analyzer: Analyzer) -> dict[int, str]:
    """The ``candidates`` that share a telling word with the request, each with the first such word."""
    share = config.telling_share
    if share <= 0:
        return {}
    reference = Reference.of(config, analyzer)
    weight = config.reference_tools if reference else 0.0
    reader, source_of = snapshot.reader, snapshot.docs.sources
    total = reader.doc_count_all() + weight
    out: dict[int, str] = {}
    for term, n in tally.found.items():
        if not n:
            continue
        if term in request.placed and on("named_verbs_only"):
            docs = holding(snapshot, "named", term)
        else:
            docs = holding(snapshot, "identity", term)
            docs.update(*(snapshot.by_source.get(source, ()) for source in snapshot.saying(term)))
        docs &= candidates
        if docs and term in request.phrases:
            out.update({doc: out.get(doc, term) for doc in docs})
            continue
        elsewhere = reference.df.get(term, 0) * weight / reference.size if reference else 0.0
        if not docs or elsewhere > share * weight:
            continue  # tools in general share it ("list", "search"), however few of the installed ones do
        counts = tally.per_source.get(term, Counter())
        out.update({doc: out.get(doc, term) for doc in docs if n - counts[source_of[doc]] + elsewhere
                    <= share * (total - len(snapshot.by_source[source_of[doc]]))})
    return out


@attrs.frozen
class Evidence:
    matched: Mapping[str, list[str]]  # per returned tool_name, the query's words its own text holds, in order
    unmatched: tuple[str, ...]  # the query's words no returned tool holds, in order
    weak: bool
    unheld: tuple[str, ...] = ()  # of ``unmatched``, the words no installed tool's own text holds (for the hint)
    elsewhere: tuple[str, ...] = ()  # of ``unmatched``, the words some installed tool not returned holds


def said_words(query: str, analyze: Callable[[str], list[str]]) -> list[tuple[str, list[str]]]:
    """Each distinct word of ``query`` as written, with its terms; words without terms (stop words) left out."""
    first: dict[str, str] = {}
    for word in WORD.findall(query):
        first.setdefault(word.lower(), word)
    return [(word, terms) for word in first.values() if (terms := analyze(word))]


PARTIAL = {"admitted": {"by": "partial match", "why": "below the floor; its own text holds a word of the query, so "
                        "it is shown and the answer flagged weak"},
           "order": "below the floor: after every tool that passed it, by score"}
"""What ``explain`` records of a tool shown below the floor."""


def partial_matches(passed: Sequence[CatalogTool], below: Sequence[CatalogTool], query: str,
                    analyze: Callable[[str], list[str]], held: Callable[[str], frozenset[str]]) -> list[CatalogTool]:
    """The tools below the floor (``below``, by score) an answer shows after those that ``passed`` it when those
    are none or weak: the ones whose own text holds a word of ``query``."""
    terms = {t for _, ts in said_words(query, analyze) for t in ts}
    shown = {t.tool_name for t in passed}
    return [t for t in below if t.tool_name not in shown and terms & held(t.tool_name)]


def weigh(index: IndexReading, query: str, asked: Sequence[str], names: Sequence[str],
          held_of: Callable[[str], frozenset[str]], exact: str | None = None,
          whole_catalog: bool = True) -> Evidence:
    """The evidence of an answer returning ``names`` for ``query`` (typos corrected), whose request asked with
    ``asked`` (``SearchResult.asked``); ``held_of`` gives the terms a tool's own text holds."""
    words = said_words(query, index.analyzer)
    held = {name: held_of(name) for name in names}
    matched = {name: [word for word, terms in words if any(t in held[name] for t in terms)] for name in names}
    shown = frozenset().union(*held.values()) if held else frozenset()
    missing = [(word, terms) for word, terms in words if not any(t in shown for t in terms)]
    unmatched = tuple(word for word, _ in missing)
    snapshot = index.snapshot
    if not names or exact is not None or not whole_catalog or snapshot is None:
        return Evidence(matched, unmatched, False)
    reference = Reference.of(index.config, index.analyzer)
    with snapshot.lock:
        reader = snapshot.reader
        found = {t: reader.doc_frequency("terms", t) for t in {*asked, *(t for _, ts in missing for t in ts)}}
        own = {t: n - reader.doc_frequency("sourced", t) for t, n in found.items()}  # not only through a source
        idf = rarity(index.config, index.analyzer, reader.doc_count_all())
    # A word neither an installed tool nor the reference uses is a name or a value, and decides nothing.
    rare = {t: idf(t, found[t]) for t in asked if PHRASE_MARK not in t and not t.isdigit()
            and (found[t] or (reference is not None and reference.df.get(t, 0)))}
    if not rare or any(t in held[name] for name in names for t in asked if PHRASE_MARK in t and found[t]):
        return Evidence(matched, unmatched, False)
    lacking = {t for t in rare if t not in shown}
    if max(rare, key=lambda t: (rare[t], t)) not in lacking and not any(not own[t] for t in lacking):
        return Evidence(matched, unmatched, False)
    # The asked words first, the rarest first: what the hint names.
    order = sorted(missing, key=lambda item: -max((rare.get(t, -1.0) for t in item[1]), default=-1.0))
    unheld = tuple(word for word, terms in order if not any(own[t] for t in terms))
    return Evidence(matched, unmatched, True, unheld, tuple(word for word, _ in order if word not in unheld))


def nearest_sources(index: IndexReading, query: str, source_ids: Sequence[str], count: int) -> list[str]:
    """At most ``count`` of ``source_ids`` whose id or description shares words with ``query``, the most telling
    share first (rarity summed over the shared words; ties by id)."""
    snapshot = index.snapshot
    terms = set(index.analyzer(query)) if snapshot is not None and count > 0 else set()
    if snapshot is None or not terms:
        return []
    with snapshot.lock:
        idf = rarity(index.config, index.analyzer, snapshot.reader.doc_count_all())
        rare = {term: idf(term, snapshot.reader.doc_frequency("terms", term)) for term in terms}
    scored = [(sum(rare[t] for t in terms & snapshot.source_terms.get(sid, frozenset())), sid) for sid in source_ids]
    return [sid for score, sid in sorted(scored, key=lambda item: (-item[0], item[1])) if score > 0][:count]
