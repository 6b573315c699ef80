"""The index behind searchTools: full descriptions analysed with Whoosh's stemmers and stop list, BM25F ranking.

Every tool is a document with fields ``name`` (local name and annotation title), ``description`` (the full
text), ``params`` (parameter names, titles, descriptions and enum values), ``source`` (source id and
description) and, if ``pairs_weight`` is set, ``pairs`` (adjacent terms of the name and description, a cheap
proximity signal; off by default: neutral on the retrieval benchmark and 40% of the build time).
Scoring is BM25F (Robertson & Zaragoza 2009): per-field length-normalised term frequencies are weighted,
summed, then saturated once per term, so a word repeated across fields does not count twice.

Whoosh's writer and searcher cost 5 ms per document to build and 200 ms per query at 10,000 tools (measured
in ``benchmarks/search.py``), so terms and postings live in plain dicts with each term's BM25F contribution
precomputed at build time; a query is one dict accumulation per distinct query term.
"""

from __future__ import annotations

import heapq
import math
import re
import threading
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from itertools import pairwise
from typing import TYPE_CHECKING, Any

import attrs

if TYPE_CHECKING:
    from junior_core.catalog import CatalogTool

__all__ = ["RankingConfig", "SearchIndex", "SearchResult", "split_identifier", "summarize"]

SUMMARY_LIMIT = 180
_PARAGRAPH = re.compile(r"\n\s*\n")
_SPACE = re.compile(r"\s+")
# Raw tokens keep '_' and '-' inside identifiers so the whole identifier is a term too.
_TOKEN = re.compile(r"[^\W_]+(?:[_-][^\W_]+)*")
# Identifier parts: "getHTTPResponse2Code" -> get, HTTP, Response, 2, Code.
_IDENT_PART = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+|[^\W\d_]+", re.UNICODE)
_CHUNK = re.compile(r"[^\W_]+")
_CJK_CHARS = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff"
_CJK = re.compile(f"[{_CJK_CHARS}]")
_CJK_RUN = re.compile(f"[{_CJK_CHARS}]+|[^{_CJK_CHARS}]+")
_CACHE_LIMIT = 200_000
_PAIR = "\x1f"  # joins two terms into a proximity term; never produced by analysis


def summarize(description: str) -> str:
    """First paragraph, whitespace collapsed, at most 180 characters (177 + '...')."""
    first = _PARAGRAPH.split(description.strip(), maxsplit=1)[0]
    text = _SPACE.sub(" ", first).strip()
    if len(text) > SUMMARY_LIMIT:
        return text[: SUMMARY_LIMIT - 3].rstrip() + "..."
    return text


def split_identifier(token: str) -> list[str]:
    """Split camelCase, snake_case, kebab-case and digits: ``getHTTPStatus_2`` -> get, HTTP, Status, 2.

    Case is read with ``str.isupper``/``islower`` so accented letters stay inside their word (``café``).
    """
    parts: list[str] = []
    for chunk in _CHUNK.findall(token):
        if chunk.isascii():
            parts.extend(_IDENT_PART.findall(chunk))
            continue
        start = 0
        for i in range(1, len(chunk)):
            prev, char = chunk[i - 1], chunk[i]
            nxt = chunk[i + 1] if i + 1 < len(chunk) else ""
            if (
                prev.isdigit() != char.isdigit()
                or (prev.islower() and char.isupper())
                or (prev.isupper() and char.isupper() and nxt.islower())
            ):
                parts.append(chunk[start:i])
                start = i
        parts.append(chunk[start:])
    return parts


def _param_text(schema: Mapping[str, Any]) -> str:
    """Parameter names and descriptions of a JSON Schema, nested properties included."""
    parts: list[str] = []

    def walk(node: Any, depth: int) -> None:
        if depth > 4 or not isinstance(node, Mapping):
            return
        props = node.get("properties")
        if isinstance(props, Mapping):
            for key, sub in props.items():
                parts.append(str(key))
                if isinstance(sub, Mapping):
                    for text_key in ("title", "description"):
                        value = sub.get(text_key)
                        if isinstance(value, str):
                            parts.append(value)
                    enum = sub.get("enum")
                    if isinstance(enum, list):
                        parts.extend(str(item) for item in enum if isinstance(item, str))
                    walk(sub, depth + 1)
                    walk(sub.get("items"), depth + 1)

    walk(schema, 0)
    return " \n ".join(parts)


FIELDS = ("name", "description", "params", "source", "pairs")
# English function words and request fillers ("can you help me find ...") on top of Whoosh's list: they
# carry no tool meaning, yet match any description that happens to use them.
EXTRA_STOP_WORDS = frozenset(
    """i me my mine myself our ours he she they them their his her its what which who whom whose where how why
    do does did doing done was were been being has had having would could should shall might must am so than
    too very just also about into over out up any some all each every there here then these those please want
    need like let know help""".split()
)
FILLER_STOP_WORDS = frozenset("find get show give tell provide make use using".split())


@attrs.frozen
class RankingConfig:
    """Ranking parameters; the defaults are what ``benchmarks/retrieval.py`` measured best on its tuning half."""

    name_weight: float = 3.0
    description_weight: float = 1.0
    params_weight: float = 0.3
    source_weight: float = 0.2
    pairs_weight: float = 0.0
    name_b: float = 0.3
    description_b: float = 0.75
    params_b: float = 0.75
    source_b: float = 0.75
    pairs_b: float = 0.75
    k1: float = 3.0
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

    @classmethod
    def ablations(cls) -> dict[str, RankingConfig]:
        """The default with one feature switched off, by a short label (for the retrieval benchmark)."""
        base = cls()
        return {
            "no stemming": attrs.evolve(base, stem=False),
            "Porter instead of Porter2 stemmer": attrs.evolve(base, porter2=False),
            "no stop words": attrs.evolve(base, stop_words=False, extra_stop_words=False),
            "Whoosh stop list only": attrs.evolve(base, extra_stop_words=False),
            "k1 1.2 (BM25 default)": attrs.evolve(base, k1=1.2),
            "no identifier splitting": attrs.evolve(base, split_identifiers=False),
            "with proximity pairs (weight 0.1)": attrs.evolve(base, pairs_weight=0.1),
            "no params field": attrs.evolve(base, params_weight=0.0),
            "no source field": attrs.evolve(base, source_weight=0.0),
            "equal field weights": attrs.evolve(
                base, name_weight=1.0, description_weight=1.0, params_weight=1.0, source_weight=1.0
            ),
            "no CJK n-grams": attrs.evolve(base, cjk_ngrams=False),
        }


class Analyzer:
    """Text to index terms: identifiers split (whole kept too), lowercased, stop words dropped, stemmed (Porter2).

    CJK runs become single characters and character bigrams, since they have no spaces between words.
    Each distinct raw token is analysed once and cached.
    """

    def __init__(self, config: RankingConfig) -> None:
        from whoosh.analysis import STOP_WORDS
        from whoosh.lang.porter import stem

        self.config = config
        self._stem = stem
        if config.porter2:
            from whoosh.lang.snowball.english import EnglishStemmer

            self._stem = EnglishStemmer().stem
        stop: set[str] = set()
        if config.stop_words:
            stop |= STOP_WORDS
        if config.extra_stop_words:
            stop |= EXTRA_STOP_WORDS
        if config.filler_stop_words:
            stop |= FILLER_STOP_WORDS
        self._stop = frozenset(stop)
        self._cache: dict[str, tuple[str, ...]] = {}
        self._stems: dict[str, str] = {}

    def __call__(self, text: str) -> list[str]:
        out: list[str] = []
        cache = self._cache
        for match in _TOKEN.finditer(text):
            raw = match.group()
            terms = cache.get(raw)
            if terms is None:
                if len(cache) >= _CACHE_LIMIT:  # queries bring endless new words; keep memory bounded
                    cache.clear()
                terms = cache[raw] = tuple(self._token(raw))
            out.extend(terms)
        return out

    def _token(self, raw: str) -> Iterator[str]:
        if _CJK.search(raw):
            for run in _CJK_RUN.findall(raw):
                if _CJK.match(run):
                    yield from self._cjk(run)
                else:
                    yield from self(run)
            return
        parts = split_identifier(raw) if self.config.split_identifiers else [raw]
        words = parts if len(parts) > 1 else [raw]
        for word in words:
            yield from self._word(word.lower())
        if len(parts) > 1:
            yield raw.lower().replace("-", "_")

    def _word(self, word: str) -> Iterator[str]:
        if word in self._stop:
            return
        if not self.config.stem or word.isdigit():
            yield word
            return
        stemmed = self._stems.get(word)
        if stemmed is None:
            if len(self._stems) >= _CACHE_LIMIT:
                self._stems.clear()
            stemmed = self._stems[word] = self._stem(word)
        yield stemmed

    def _cjk(self, run: str) -> Iterator[str]:
        if not self.config.cjk_ngrams:
            yield run
            return
        for i, char in enumerate(run):
            yield char
            if i + 1 < len(run):
                yield run[i : i + 2]


def _pairs(terms: Sequence[str]) -> list[str]:
    return [f"{a}{_PAIR}{b}" for a, b in pairwise(terms) if a != b]


@attrs.frozen
class SearchResult:
    """Ranked tool_names, and how many tools matched in all."""

    tool_names: list[str]
    total: int


class _Built:
    """One immutable snapshot of the index: swapped in whole, so searches never see a half-built index."""

    def __init__(self, names: list[str], sources: list[str], weights: dict[str, list[tuple[int, float]]]) -> None:
        self.names = names
        self.sources = sources
        self.weights = weights
        by_source: dict[str, set[int]] = {}
        for doc, source in enumerate(sources):
            by_source.setdefault(source, set()).add(doc)
        self.by_source = by_source


class SearchIndex:
    """An in-memory BM25F index of catalog tools, rebuilt when the catalog version changes."""

    def __init__(self, config: RankingConfig | None = None) -> None:
        self.config = config or RankingConfig()
        self._lock = threading.Lock()
        self._built: _Built | None = None
        self._version: int | None = None
        self._analyzer = Analyzer(self.config)

    def analyze(self, text: str) -> list[str]:
        """The terms the index stores for ``text`` (for tests and debugging)."""
        return self._analyzer(text)

    def build(self, tools: Sequence[CatalogTool], source_descriptions: Mapping[str, str], version: int) -> None:
        """Index ``tools`` (deterministic order: by tool_name) unless already built for ``version``."""
        with self._lock:
            if self._version == version and self._built is not None:
                return
            self._built = self._index(tools, source_descriptions)
            self._version = version

    def _index(self, tools: Sequence[CatalogTool], source_descriptions: Mapping[str, str]) -> _Built:
        config, analyze = self.config, self._analyzer
        fields = [f for f in FIELDS if config.weight(f) > 0]
        entries = sorted(tools, key=lambda t: t.tool_name)
        source_terms = {
            source: analyze(f"{source} {description}") for source, description in source_descriptions.items()
        }
        source_counts = {source: Counter(terms) for source, terms in source_terms.items()}
        # Per document, per field: term counts and length.
        counted: list[list[Counter[str]]] = []
        lengths: list[list[int]] = []
        for entry in entries:
            tool = entry.tool
            title = (tool.annotations or {}).get("title")
            name_terms = analyze(f"{tool.name} {title}" if isinstance(title, str) else tool.name)
            description_terms = analyze(tool.description)
            doc_counts: list[Counter[str]] = []
            for field in fields:
                if field == "name":
                    counts = Counter(name_terms)
                elif field == "description":
                    counts = Counter(description_terms)
                elif field == "params":
                    counts = Counter(analyze(_param_text(tool.input_schema)))
                elif field == "source":
                    counts = source_counts.get(entry.source_id) or Counter(analyze(entry.source_id))
                else:
                    counts = Counter(_pairs(name_terms) + _pairs(description_terms))
                doc_counts.append(counts)
            counted.append(doc_counts)
            lengths.append([counts.total() for counts in doc_counts])
        count = len(entries)
        averages = [sum(doc[i] for doc in lengths) / count if count else 0.0 for i in range(len(fields))]
        params = [(config.weight(f), config.b(f), averages[i]) for i, f in enumerate(fields)]
        # Pseudo term frequency per (term, doc): sum over fields of weight * tf / length normalisation.
        pseudo: dict[str, list[tuple[int, float]]] = {}
        for doc, doc_counts in enumerate(counted):
            acc: dict[str, float] = {}
            get = acc.get
            for (weight, b, avg), counts, length in zip(params, doc_counts, lengths[doc], strict=True):
                factor = weight / (1 - b + b * length / avg) if avg else weight
                for term, tf in counts.items():
                    acc[term] = get(term, 0.0) + tf * factor
            for term, value in acc.items():
                pseudo.setdefault(term, []).append((doc, value))
        k1 = config.k1
        weights: dict[str, list[tuple[int, float]]] = {}
        for term, plist in pseudo.items():
            idf = math.log(1 + (count - len(plist) + 0.5) / (len(plist) + 0.5))
            scale = idf * (k1 + 1)
            weights[term] = [(doc, scale * tf / (tf + k1)) for doc, tf in plist]
        return _Built([e.tool_name for e in entries], [e.source_id for e in entries], weights)

    def search(self, query: str, *, limit: int, source_id: str | None = None) -> SearchResult:
        """Rank tools for ``query`` with BM25F; ties broken by tool_name."""
        built = self._built
        if built is None:
            return SearchResult([], 0)
        terms = self._analyzer(query)
        if not terms:
            return SearchResult([], 0)
        wanted = list(dict.fromkeys(terms))
        if self.config.pairs_weight > 0:
            wanted += list(dict.fromkeys(_pairs(terms)))
        scores: dict[int, float] = {}
        get = scores.get
        weights = built.weights
        for term in wanted:
            for doc, value in weights.get(term, ()):
                scores[doc] = get(doc, 0.0) + value
        if source_id is not None:
            allowed = built.by_source.get(source_id, set())
            scores = {doc: value for doc, value in scores.items() if doc in allowed}
        # Documents are numbered in tool_name order, so the doc number breaks ties deterministically.
        best = heapq.nsmallest(limit, scores.items(), key=lambda item: (-round(item[1], 9), item[0]))
        return SearchResult([built.names[doc] for doc, _ in best], len(scores))

    def matches(self, query: str, tool_name: str) -> bool:
        """Whether ``tool_name`` is among the tools ``query`` matches (for counting an exact-name hit once)."""
        built = self._built
        if built is None or tool_name not in built.names:
            return False
        doc = built.names.index(tool_name)
        return any(d == doc for term in set(self._analyzer(query)) for d, _ in built.weights.get(term, ()))
