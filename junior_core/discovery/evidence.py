"""What an answer shows of why its tools matched: the query's words each tool holds (``matched``), whether any
tool holds the query's telling words (``weak``), and for a query that matches nothing the sources nearest to it.

- ``matched``: the query's words, as written (a corrected typo as corrected: the answer's note says so), whose
  terms the tool's document holds in any field (name, keywords, description, parameters, and its source's id and
  description unless the search is inside that source), as ``documents.fields_holding`` reads it for
  ``reasons``.
- telling words: of the words the request asks with (not its payload: what follows "remember that ..."), those
  some installed tool or the reference catalog uses (a word neither uses is a name or a value, never telling)
  and few use: at most ``TELLING_SHARE`` (5%) of the installed sources plus the reference catalog (counted as
  ``reference_tools`` tools), an installed source counting once however many of its tools use the word (a
  memory server whose nine tools all say "memory" does not make "memory" common). A keyword phrase the request
  says that some tool declares is always telling.
- ``weak``: in a search of every source, tools were returned and none of them holds either half the rarity the
  request asks with (``COVERAGE``) or a telling word, and none is the query's exact name or holds a keyword
  phrase the request says. Then the answer says so in one line, so the model can stop instead of searching
  again.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING

import attrs

from junior_core.discovery import scoring
from junior_core.discovery.scoring import Reference
from junior_core.discovery.text import PHRASE_MARK, WORD

if TYPE_CHECKING:
    from junior_core.discovery.index import SearchIndex

__all__ = ["COVERAGE", "TELLING_SHARE", "Evidence", "nearest_sources", "said_words", "weigh"]

COVERAGE = 0.5
"""An answer is weak when none of its tools holds this share of the rarity its request asks with..."""
TELLING_SHARE = 0.05
"""... nor any telling word: one at most this share use, of the installed sources (each counted once however many
of its tools use it) and the reference catalog (counted as ``reference_tools`` tools)."""


@attrs.frozen
class Evidence:
    matched: Mapping[str, list[str]]
    """Per returned tool_name, the query's words its text holds, in the query's order."""
    telling: tuple[str, ...]
    """The query's telling words, as written (for the hint of a weak answer)."""
    weak: bool


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


def weigh(index: SearchIndex, query: str, asked: Sequence[str], names: Sequence[str],
          held_of: Callable[[str], frozenset[str]], exact: str | None = None) -> Evidence:
    """The evidence of an answer returning ``names`` for ``query`` (typos corrected), whose request asked with
    ``asked`` (``SearchResult.asked``); ``held_of`` gives the terms a tool's document holds."""
    words = said_words(query, index.analyze)
    held = {name: held_of(name) for name in names}
    matched = {name: [word for word, terms in words if any(t in held[name] for t in terms)] for name in names}
    rarity, phrases, telling = _rarity(index, asked)
    total = sum(rarity.values())
    if not names or not total or exact is not None:
        return Evidence(matched, (), False)
    if any(term in held[name] for name in names for term in phrases):
        return Evidence(matched, (), False)
    best = max(sum(value for term, value in rarity.items() if term in held[name]) for name in names)
    if best >= COVERAGE * total or any(term in held[name] for name in names for term in telling):
        return Evidence(matched, (), False)
    missing = sorted((term for term in rarity if not any(term in held[name] for name in names)),
                     key=lambda term: (-rarity[term], term))
    said = [word for word, terms in words if any(t in missing[:3] for t in terms)]
    return Evidence(matched, tuple(dict.fromkeys(said)), True)


def _rarity(index: SearchIndex, asked: Sequence[str]) -> tuple[dict[str, float], set[str], set[str]]:
    """The rarity (idf, as the ranking reckons it) of each asked word some installed or reference tool uses, the
    asked keyword phrases some tool declares, and the telling words: those at most ``TELLING_SHARE`` use of the
    installed sources (one count per source) and the reference tools."""
    snapshot = index.snapshot
    if snapshot is None or not asked:
        return {}, set(), set()
    config, analyzer = index.config, index.analyzer
    weight = max(config.reference_tools, 0.0)
    reference = Reference.of(analyzer) if weight else None
    scale = weight / reference.size if reference is not None and reference.size else 0.0
    df = reference.df if reference is not None else {}
    rarity: dict[str, float] = {}
    phrases: set[str] = set()
    telling: set[str] = set()
    with snapshot.lock:
        reader = snapshot.reader
        idf = scoring.rarity(config, analyzer, reader.doc_count_all())
        # Installed tools count by source: a source whose every tool names its subject leaves the subject telling.
        source_of = {doc: sid for sid, docs in snapshot.by_source.items() for doc in docs}
        total = len(snapshot.by_source) + (weight if scale else 0.0)
        for term in asked:
            n = reader.doc_frequency("terms", term)
            if PHRASE_MARK in term:
                if n:
                    phrases.add(term)
            elif not term.isdigit() and (n or df.get(term, 0)):
                rarity[term] = idf(term, snapshot.users(term, n))
                sources = len({source_of.get(doc) for doc in reader.postings("terms", term).all_ids()}) if n else 0
                if sources + df.get(term, 0) * scale <= TELLING_SHARE * total:
                    telling.add(term)
    return rarity, phrases, telling


def nearest_sources(index: SearchIndex, query: str, source_ids: Sequence[str], count: int) -> list[str]:
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
        reader = snapshot.reader
        idf = scoring.rarity(config, analyzer, reader.doc_count_all())
        rarity = {term: idf(term, reader.doc_frequency("terms", term)) for term in terms}
    said = snapshot.sources.terms
    scored = [(sum(rarity[t] for t in terms & said.get(sid, frozenset())), sid) for sid in source_ids]
    return [sid for score, sid in sorted(scored, key=lambda item: (-item[0], item[1])) if score > 0][:count]
