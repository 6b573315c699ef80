"""What the index holds of each tool: its fields' terms and their BM25F weights, and its fingerprint.

A tool's fields: ``name`` (local name and annotation title), ``keywords`` (declared; a phrase is one term),
``description``, ``params`` (``param_text``) and ``source`` (source id and description). Scoring is BM25F
(Robertson & Zaragoza 2009): per field, term frequency over the field's length norm times the field's weight, summed
into one pseudo-frequency per term, saturated once at search. Length norms need every field's average length, known
once the whole catalog is analysed, so the pseudo-frequency is the posting weight of one Whoosh field, ``terms``.
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
from junior_core._discovery.analysis import PHRASE_MARK, leading_verbs, param_text, phrase_term, phrase_words, summarize

if TYPE_CHECKING:
    from junior_core._catalog.catalog import CatalogTool
    from junior_core._discovery.analysis import Analyzer
    from junior_core._discovery.settings import RankingConfig

__all__ = ["FIELDS", "MENTION", "IndexedDocs", "fields_holding", "fingerprint", "postings", "writes"]

FIELDS = ("name", "keywords", "description", "params", "source")
MENTION = "mention"
"""The one term of the ``mention`` field: its weight is what one mention of a word in the tool's description counts
toward the floor, where that is less than 1."""
_FORMAT_VERSION = 13


@attrs.frozen
class IndexedDocs:
    """What a Whoosh index holds besides postings, by doc number: tool_name, source, which tools write."""

    names: list[str]
    sources: list[str]
    writes: list[int]

    def to_json(self) -> dict[str, Any]:
        return attrs.asdict(self)

    @classmethod
    def from_json(cls, data: Any) -> IndexedDocs:
        names, sources, writes = data["names"], data["sources"], data["writes"]
        if (not all(isinstance(v, list) for v in (names, sources, writes)) or len(names) != len(sources)
                or not all(isinstance(n, str) for n in names + sources)):
            raise ValueError("malformed index metadata")
        return cls(names, sources, [int(w) for w in writes])


def _title(tool: Any) -> str | None:
    title = (tool.annotations or {}).get("title")
    return title if isinstance(title, str) else None


def writes(tool: Any) -> bool:
    annotations = tool.annotations or {}
    return annotations.get("readOnlyHint") is False or annotations.get("destructiveHint") is True


def fingerprint(tools: Sequence[CatalogTool], source_descriptions: Mapping[str, str], config: RankingConfig,
                param_texts: Sequence[str]) -> str:
    """A hash of everything an index is built from: indexed text, ranking settings, versions of junior and Whoosh.
    ``tools`` in tool_name order, ``param_texts`` their ``param_text``."""
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


def _document(fields: Sequence[str], analyze: Analyzer, entry: CatalogTool, params: str,
              source_counts: Mapping[str, Counter[str]]) -> tuple[list[Counter[str]], list[str], list[str]]:
    """One tool's term counts per field, its name, title and keyword words (``named``), its one-word keywords."""
    tool = entry.tool
    title = _title(tool)
    name_terms = analyze(f"{tool.name} {title}" if title else tool.name)
    declared = getattr(tool, "keywords", ())
    keyword_terms = analyze(" ".join(k for k in declared if len(phrase_words(k)) < 2))
    keyword_phrases = [phrase_term(words) for words in map(phrase_words, declared) if len(words) > 1]
    terms = {"name": name_terms, "keywords": keyword_terms + keyword_phrases, "description": analyze(tool.description)}
    counts = [Counter(terms[field]) if field in terms
              else Counter(analyze(params)) if field == "params"
              else source_counts.get(entry.source_id) or Counter(analyze(entry.source_id)) for field in fields]
    words = [t for t in dict.fromkeys(name_terms + keyword_terms) if "_" not in t and not t.isdigit()]
    return counts, words + keyword_phrases, keyword_terms


def fields_holding(config: RankingConfig, analyze: Analyzer, entry: CatalogTool,
                   source_description: str | None) -> dict[str, set[str]]:
    """Per field of one tool's document, the terms it holds, as ``postings`` counts them (for ``reasons``)."""
    fields = [f for f in FIELDS if config.weight(f) > 0]
    source = entry.source_id
    source_counts = {} if source_description is None else {source: Counter(analyze(f"{source} {source_description}"))}
    counts = _document(fields, analyze, entry, param_text(entry.tool.input_schema), source_counts)[0]
    return {field: set(held) for field, held in zip(fields, counts, strict=True)}


def postings(config: RankingConfig, analyze: Analyzer, entries: Sequence[CatalogTool],
             source_descriptions: Mapping[str, str], param_texts: Sequence[str],
             ) -> Iterator[dict[str, list[tuple[str, float]]]]:
    """Per document, in order, its Whoosh fields: ``terms`` (every term's BM25F pseudo-frequency), ``named``
    (terms of its name, title and keywords), ``opens`` (its action words: the verb its description opens with, the
    words in parentheses after it, its one-word keywords), ``identity`` (terms of its name, title, summary and
    keywords that few enough tools use to be telling), ``mention`` (``MENTION``) and ``sourced`` (the terms it holds
    only through its source, which ``scoring`` counts once per source when it reckons a term's rarity)."""
    fields = [f for f in FIELDS if config.weight(f) > 0]
    source_counts = {source: Counter(analyze(f"{source} {text}")) for source, text in source_descriptions.items()}
    counted, named, opens, identities = [], [], [], []
    used: Counter[str] = Counter()  # how many tools use each term
    for entry, params in zip(entries, param_texts, strict=True):
        counts, words, keyword_terms = _document(fields, analyze, entry, params, source_counts)
        counted.append(counts)
        named.append(words)
        used.update(set().union(*counts))
        description = entry.tool.description
        leading = analyze(leading_verbs(description)) if switches.on("leading_verbs") else []
        opens.append(list(dict.fromkeys(leading + [t for t in keyword_terms if "_" not in t])))
        summary = [t for t in analyze.compounds_whole(summarize(description)) if "_" not in t and not t.isdigit()]
        identities.append(list(dict.fromkeys(words + summary)))
    count = len(entries)
    lengths = [[field.total() for field in counts] for counts in counted]
    averages = [sum(doc[i] for doc in lengths) / count if count else 0.0 for i in range(len(fields))]
    params_of = [(config.weight(f), config.b(f), averages[i]) for i, f in enumerate(fields)]
    # A word more tools use than the floor's share, even leaving the largest source aside, is never telling.
    sizes = Counter(entry.source_id for entry in entries)
    common = config.telling_share * (count + max(config.reference_tools, 0.0)) + max(sizes.values(), default=0)
    described = fields.index("description") if "description" in fields else None
    sourced = fields.index("source") if "source" in fields else None
    # A word repeated in one field counts at most ``term_repeats`` times there: no rank bought by repetition.
    cap = config.term_repeats if config.term_repeats > 0 else math.inf
    for doc, counts in enumerate(counted):
        factors = [weight / (1 - b + b * length / average) if average else weight
                   for (weight, b, average), length in zip(params_of, lengths[doc], strict=True)]
        weights: dict[str, float] = {}
        for factor, field in zip(factors, counts, strict=True):
            for term, tf in field.items():
                weights[term] = weights.get(term, 0.0) + min(tf, cap) * factor
        # One mention in the description counts (k1 + 1) w / (w + k1) of its pseudo-frequency w: kept below 1.
        w = factors[described] if described is not None and averages[described] else 0.0
        share = (config.k1 + 1) * w / (w + config.k1) if w else 1.0
        own = set().union(*(held for i, held in enumerate(counts) if i != sourced))  # terms not only sourced
        yield {
            "terms": list(weights.items()),
            "named": [(term, 1.0) for term in named[doc]],
            "opens": [(term, 1.0) for term in opens[doc]],
            "identity": [(term, 1.0) for term in identities[doc] if used[term] <= common or PHRASE_MARK in term],
            "mention": [(MENTION, share)] if share < 1 else [],
            "sourced": [] if sourced is None else [(term, 1.0) for term in counts[sourced] if term not in own],
        }
