"""What the index holds of each tool: its fields' terms and their BM25F weights, and its fingerprint.

Every tool is a document with fields ``name`` (local name and annotation title), ``keywords`` (the words a tool
declares for what it does, analysed like its text; a phrase is one term), ``description`` (the full text),
``params`` (parameter names, titles, descriptions and enum values) and ``source`` (source id and description).
Text analysis is ``analysis``'.

Scoring is BM25F (Robertson & Zaragoza 2009): per field, the term frequency over the field's length norm times
the field's weight, summed into one pseudo-frequency per term and document, then saturated once per term, so a
word repeated across fields does not count twice. Length norms need every field's average length, known once
the whole catalog is analysed, so the pseudo-frequency is computed at build time and written as the posting
weight of a single Whoosh field, ``terms``, through a small ``Format`` (``whoosh_parts``).
"""

from __future__ import annotations

import hashlib
import json
import math
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import attrs

from junior_core._discovery import switches
from junior_core._discovery.analysis import (
    PHRASE_MARK,
    leading_verbs,
    param_text,
    phrase_term,
    phrase_words,
    summarize,
)

if TYPE_CHECKING:
    from junior_core._catalog.catalog import CatalogTool
    from junior_core._discovery.analysis import Analyzer
    from junior_core._discovery.settings import RankingConfig

__all__ = ["FIELDS", "MENTION", "IndexedDocs", "fields_holding", "fingerprint", "postings", "writes"]

FIELDS = ("name", "keywords", "description", "params", "source")

_FORMAT_VERSION = 13


@attrs.frozen
class IndexedDocs:
    """What a Whoosh index holds besides postings, by doc number: tool_name, source, which tools write."""

    names: list[str]
    sources: list[str]
    writes: list[int]

    def to_json(self) -> dict[str, Any]:
        return {"names": self.names, "sources": self.sources, "writes": self.writes}

    @classmethod
    def from_json(cls, data: Any) -> IndexedDocs:
        names, sources, writes = data["names"], data["sources"], data["writes"]
        if not all(isinstance(v, list) for v in (names, sources, writes)):
            raise ValueError("malformed index metadata")
        if len(names) != len(sources) or not all(isinstance(n, str) for n in names + sources):
            raise ValueError("malformed index metadata")
        return cls(names, sources, [int(w) for w in writes])


def _title(tool: Any) -> str | None:
    title = (tool.annotations or {}).get("title")
    return title if isinstance(title, str) else None


def writes(tool: Any) -> bool:
    annotations = tool.annotations or {}
    return annotations.get("readOnlyHint") is False or annotations.get("destructiveHint") is True


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
    head = [_FORMAT_VERSION, dist_version("junior-core"), dist_version("whoosh-reloaded"), attrs.asdict(config),
            sorted(switches.OFF)]
    digest.update(json.dumps(head, sort_keys=True).encode())
    digest.update(json.dumps(sorted(source_descriptions.items())).encode())
    for entry, params in zip(tools, param_texts, strict=True):
        tool = entry.tool
        row = [entry.tool_name, entry.source_id, tool.name, _title(tool), list(getattr(tool, "keywords", ())),
               tool.description, params, writes(tool)]
        digest.update(json.dumps(row, ensure_ascii=False).encode())
    return digest.hexdigest()


def _texts(analyze: Analyzer, tool: Any) -> tuple[list[str], list[str], list[str], list[str]]:
    """A tool's terms of its name and title, of its one-word keywords, its keyword phrases, and its description."""
    title = _title(tool)
    name_terms = analyze(f"{tool.name} {title}" if title else tool.name)
    declared = getattr(tool, "keywords", ())
    keyword_terms = analyze(" ".join(k for k in declared if len(phrase_words(k)) < 2))
    keyword_phrases = [phrase_term(words) for words in map(phrase_words, declared) if len(words) > 1]
    return name_terms, keyword_terms, keyword_phrases, analyze(tool.description)


def _field_counts(fields: Sequence[str], analyze: Analyzer, entry: CatalogTool, params_of: str,
                  source_counts: Mapping[str, Counter[str]],
                  texts: tuple[list[str], list[str], list[str], list[str]]) -> list[Counter[str]]:
    """Each of ``fields``' term counts in one tool's document."""
    name_terms, keyword_terms, keyword_phrases, description_terms = texts
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
        else:
            counts = source_counts.get(entry.source_id) or Counter(analyze(entry.source_id))
        doc_counts.append(counts)
    return doc_counts


def fields_holding(config: RankingConfig, analyze: Analyzer, entry: CatalogTool,
                   source_description: str | None) -> dict[str, set[str]]:
    """Per field of one tool's document, the terms it holds, as ``postings`` counts them (for ``reasons``)."""
    fields = [f for f in FIELDS if config.weight(f) > 0]
    source = entry.source_id
    source_counts = {source: Counter(analyze(f"{source} {source_description}"))} if source_description is not None \
        else {}
    counts = _field_counts(fields, analyze, entry, param_text(entry.tool.input_schema), source_counts,
                           _texts(analyze, entry.tool))
    return {field: set(held) for field, held in zip(fields, counts, strict=True)}


def postings(config: RankingConfig, analyze: Analyzer, entries: Sequence[CatalogTool],
             source_descriptions: Mapping[str, str], param_texts: Sequence[str],
             ) -> Iterator[dict[str, list[tuple[str, float]]]]:
    """Per document, in order, its Whoosh fields: ``terms`` (every term's BM25F pseudo-frequency), ``named``
    (terms of its name, title and keywords), ``opens`` (the verb its description opens with, the words in
    parentheses after it, and its one-word keywords: the words it states as its actions), ``identity``
    (terms of its name, title, summary and keywords, only those few enough tools use to be telling,
    ``scoring``), ``mention`` (one term, weighted by what one mention of a word in its
    description counts toward the floor, where the description is long enough for that to be below 1) and
    ``sourced`` (the terms it holds only through its source's id and description: ``scoring`` counts the tools
    holding a term that way once per source when it reckons the term's rarity)."""
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
        texts = _texts(analyze, tool)
        name_terms, keyword_terms, keyword_phrases, _ = texts
        doc_counts = _field_counts(fields, analyze, entry, params_of, source_counts, texts)
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
        leading = analyze(leading_verbs(tool.description)) if switches.on("leading_verbs") else []
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
    sourced = fields.index("source") if "source" in fields else None
    # A word said again and again in one field counts at most ``term_repeats`` times there (its length still
    # counts every word): a description cannot buy rank by repetition.
    cap = config.term_repeats if config.term_repeats > 0 else math.inf
    for doc, doc_counts in enumerate(counted):
        acc: dict[str, float] = {}
        for (weight, b, avg), counts, length in zip(params, doc_counts, lengths[doc], strict=True):
                factor = weight / (1 - b + b * length / avg) if avg else weight
                if not acc:  # the first field with terms (0.0 + x is x)
                    acc = {term: min(tf, cap) * factor for term, tf in counts.items()}
                    continue
                get = acc.get
                for term, tf in counts.items():
                    acc[term] = get(term, 0.0) + min(tf, cap) * factor
        yield {
                "terms": list(acc.items()),
                "named": [(term, 1.0) for term in named[doc]],
                "opens": [(term, 1.0) for term in opens[doc]],
                "identity": [(term, 1.0) for term in identities[doc] if used[term] <= common or PHRASE_MARK in term],
                "mention": [] if described is None else _mention(*params[described], lengths[doc][described],
                                                                  config.k1),
                "sourced": [] if sourced is None else _sourced_only(doc_counts, sourced),
        }


def _sourced_only(doc_counts: Sequence[Counter[str]], source_field: int) -> list[tuple[str, float]]:
    """The terms of a tool's ``source`` field that none of its other fields holds."""
    own = set().union(*(counts for i, counts in enumerate(doc_counts) if i != source_field))
    return [(term, 1.0) for term in doc_counts[source_field] if term not in own]
