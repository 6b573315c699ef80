"""The index behind searchTools: a Whoosh index of every tool's full text, ranked with BM25F.

Every tool is a document with fields ``name`` (local name and annotation title), ``keywords`` (the words a tool
declares for what it does), ``description`` (the full text), ``params`` (parameter names, titles, descriptions
and enum values), ``source`` (source id and description) and, if ``pairs_weight`` is set, ``pairs`` (adjacent
terms of the name and description, a cheap proximity signal; off by default). Text analysis: identifiers split,
Whoosh's stop list plus English function words, Whoosh's Porter2 stemmer, CJK characters and bigrams.

Scoring is BM25F (Robertson & Zaragoza 2009): per field, the term frequency over the field's length norm times
the field's weight, summed into one pseudo-frequency per term and document, then saturated once per term, so a
word repeated across fields does not count twice. Length norms need every field's average length, known once
the whole catalog is analysed, so the pseudo-frequency is computed at build time and written as the posting
weight of a single Whoosh field, ``terms``, through a small ``Format``; a ``WeightingModel`` saturates it at
query time: idf · (k1 + 1) · w / (w + k1). Postings, document frequencies and the searcher are Whoosh's; a
query is an ``Or`` of ``Term``s built in code (no query parser), with the source as a ``filter``.

Intent, on top of the words (see ``Intent``): the request's leading verb ("jot down ...", "unsave ...") is
matched a second time against the tool's name and declared keywords (field ``action``), and a question ("what
do you remember about me?") ranks tools that declare they write (``readOnlyHint: false``) lower.

One snapshot (index, searcher, names) per catalog version is swapped in whole, so a search never sees a
half-built index and a rebuild never blocks searches; ``junior_core.index_cache`` stores built indexes on disk.
"""

from __future__ import annotations

import hashlib
import json
import logging
import re
import threading
from collections import Counter
from collections.abc import Collection, Iterator, Mapping, Sequence
from itertools import pairwise
from typing import TYPE_CHECKING, Any

import attrs

if TYPE_CHECKING:
    from junior_core.catalog import CatalogTool
    from junior_core.index_cache import IndexCache

__all__ = ["Intent", "RankingConfig", "SearchIndex", "SearchResult", "split_identifier", "summarize"]

log = logging.getLogger("junior.search")

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


FIELDS = ("name", "keywords", "description", "params", "source", "pairs")
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
            "no leading-verb match": attrs.evolve(base, action_weight=0.0),
            "no question mood": attrs.evolve(base, readers_first=False),
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

    def exact(self, text: str) -> list[str]:
        """Words as they are, lowercased, stop words dropped, not stemmed: how declared keywords are matched.

        "save" matches "save", not "saved" (which describes memories already kept).
        """
        stop = self._stop
        words = (word.lower() for word in _KEYWORD_WORD.findall(text[:2000]))
        return [KEYWORD_MARK + word for word in words if word not in stop]

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


_KEYWORD_WORD = re.compile(r"[^\W_]+")
KEYWORD_MARK = "="
"""Prefix of keyword terms: they live beside the stemmed terms, in the same field, as exact words."""


def _pairs(terms: Sequence[str]) -> list[str]:
    return [f"{a}{_PAIR}{b}" for a, b in pairwise(terms) if a != b]


# -- intent -------------------------------------------------------------------------------------

_WORD = re.compile(r"[^\W_]+(?:['’][^\W_]+)?")
# Courtesy and framing before the request itself: "hey, could you please ..." -> "...".
_OPENERS = frozenset("hey hi hello ok okay so now and also please pls kindly just quickly go ahead oh".split())
_ASKS = (
    ("can", "you"), ("could", "you"), ("would", "you"), ("will", "you"), ("can", "i"), ("could", "i"),
    ("i", "want", "you", "to"), ("i", "need", "you", "to"), ("i'd", "like", "you", "to"),
    ("i", "would", "like", "you", "to"), ("i", "want", "to"), ("i", "need", "to"), ("i'd", "like", "to"),
    ("i", "would", "like", "to"), ("help", "me"), ("let's",), ("lets",), ("let", "us"), ("try", "to"),
    ("make", "sure", "to"), ("remember", "to"),
)
_WH = frozenset("what which who whom whose when where why how".split())
_AUX = frozenset("do does did is are was were have has had".split())
_SUBJECTS = frozenset("you i we there it anything something any".split())
_NEGATIONS = frozenset("don't dont never not".split())
# "tell me what ...", "check whether ...": a question put as a request.
_REPORT_VERBS = frozenset("tell show remind let check see".split())
_IF = frozenset("whether if".split())
_LIGHT_VERBS = frozenset("make get take have give put".split())
_EVERYTHING = frozenset("all every everything entire whole complete".split())
_PRONOUNS = frozenset("i i'm i've i'd i'll my me we we're our us he she they it it's this that the a an".split())


@attrs.frozen
class Intent:
    """What a request asks for beyond its words: its action verbs, and whether it is a question.

    ``verbs`` are the first word of each clause once courtesy ("please", "could you", "I want you to") is set
    aside ("jot down ...", "I like tabs, save that" -> jot, save), and in a question the verb after its subject
    ("do you recall ...", "what did I tell you ..." -> recall, tell). ``question`` is true for "what/which/who
    ..." and "do you / did I / is there ..." openings and for questions put as requests ("tell me what you
    know", "check whether you remember"); "how do I create ..." asks to act, so its verb counts instead.
    Which words are verbs is not known here: a word that names no tool's action simply matches nothing in the
    ``action`` field.
    """

    verbs: tuple[str, ...]
    question: bool
    everything: bool = False
    """The request asks for all of something ("all", "every", "entire", ...): reading, unless a verb says write."""

    @classmethod
    def of(cls, text: str) -> Intent:
        verbs: list[str] = []
        question = False
        for number, clause in enumerate(_CLAUSE.split(text[:300])):
            words = [w.lower().replace("’", "'") for w in _WORD.findall(clause)]
            verb, asks = _clause_verb(words)
            if asks and number == 0:
                question = True
            if verb is not None and verb not in verbs:
                verbs.append(verb)
            if len(verbs) == 3:
                break
        said = {w.lower() for w in _WORD.findall(text[:300])}
        return cls(tuple(verbs), question, bool(said & _EVERYTHING))


_CLAUSE = re.compile(r"[,;:.!?]+\s+|\s+(?:and then|then|and)\s+|[,;:!?]+$")


def _clause_verb(words: list[str]) -> tuple[str | None, bool]:
    """The action verb of one clause, and whether the clause asks a question."""
    i = 0
    while i < len(words) and words[i] in _OPENERS:
        i += 1
    asked = False
    for ask in _ASKS:
        if tuple(words[i : i + len(ask)]) == ask:
            i += len(ask)
            asked = True
            break
    while i < len(words) and words[i] in _OPENERS:
        i += 1
    if i >= len(words):
        return None, False
    first = words[i]
    if first == "how" and not asked:
        # "how do I create ...": a how-to asks to act, not to read; its verb follows the subject.
        j = i + 1
        if j < len(words) and words[j] in _AUX:
            j += 1
        if j < len(words) and words[j] in _SUBJECTS:
            j += 1
        return (words[j] if j < len(words) and words[j] not in _PRONOUNS else None), False
    if not asked and (first in _WH or first in _AUX):
        # "what did I tell you", "do you recall", "is there a ...": the verb follows the subject, if any.
        j = i + 1 if first in _WH else i
        if j < len(words) and words[j] in _AUX:
            j += 1
        if first in _AUX and (j >= len(words) or words[j] not in _SUBJECTS):
            return None, False
        if j < len(words) and words[j] in _SUBJECTS:
            j += 1
        verb = words[j] if j < len(words) and words[j] not in _SUBJECTS and words[j] not in _PRONOUNS else None
        return verb, True
    if first in _LIGHT_VERBS:
        # "make a note", "get rid of it": the noun after a light verb carries the action.
        j = i + 1
        while j < len(words) and words[j] in _PRONOUNS:
            j += 1
        return (words[j] if j < len(words) else None), False
    if first in _REPORT_VERBS and any(w in _WH or w in _IF for w in words[i + 1 : i + 4]):
        return None, True
    if first in _NEGATIONS or first.isdigit() or first in _SUBJECTS or first in _PRONOUNS:
        return None, False
    return first, False


# -- the Whoosh index -----------------------------------------------------------------------------

_FORMAT_VERSION = 3


@attrs.frozen
class SearchResult:
    """Ranked tool_names, and how many tools matched in all."""

    tool_names: list[str]
    total: int


@attrs.frozen
class IndexedDocs:
    """What a Whoosh index holds besides postings, by doc number: tool_name, source, which tools write, and
    which need an argument (a search term, an id) rather than listing what there is."""

    names: list[str]
    sources: list[str]
    writes: list[int]
    needs_input: list[int] = attrs.field(factory=list)

    def to_json(self) -> dict[str, Any]:
        return {"names": self.names, "sources": self.sources, "writes": self.writes, "needs_input": self.needs_input}

    @classmethod
    def from_json(cls, data: Any) -> IndexedDocs:
        names, sources, writes = data["names"], data["sources"], data["writes"]
        needs_input = data.get("needs_input", [])
        if not all(isinstance(v, list) for v in (names, sources, writes, needs_input)):
            raise ValueError("malformed index metadata")
        if len(names) != len(sources) or not all(isinstance(n, str) for n in names + sources):
            raise ValueError("malformed index metadata")
        return cls(names, sources, [int(w) for w in writes], [int(n) for n in needs_input])


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

    ``tools`` in tool_name order, ``param_texts`` their ``_param_text`` (computed once for hashing and indexing).
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
            self._snapshot, self._version = None, None

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

    def _make(self, tools: Sequence[CatalogTool], source_descriptions: Mapping[str, str]) -> Snapshot:
        entries = sorted(tools, key=lambda t: t.tool_name)
        param_texts = [_param_text(entry.tool.input_schema) for entry in entries]
        print_ = fingerprint(entries, source_descriptions, self.config, param_texts)
        docs = IndexedDocs([e.tool_name for e in entries], [e.source_id for e in entries],
                           [doc for doc, e in enumerate(entries) if _writes(e.tool)],
                           [doc for doc, e in enumerate(entries) if _needs_input(e.tool)])
        if self.cache is not None:
            opened = self.cache.open(print_, docs, self.config)
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
                  param_texts: Sequence[str]) -> Iterator[tuple[list[tuple[str, float]], list[tuple[str, float]]]]:
        """Per document, in order: the BM25F pseudo-frequency of every term, and the action terms."""
        config, analyze = self.config, self._analyzer
        fields = [f for f in FIELDS if config.weight(f) > 0]
        source_counts = {
            source: Counter(analyze(f"{source} {description}")) for source, description in source_descriptions.items()
        }
        counted: list[list[Counter[str]]] = []
        lengths: list[list[int]] = []
        actions: list[list[tuple[str, float]]] = []
        for entry, param_text in zip(entries, param_texts, strict=True):
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
                    counts = Counter(analyze(param_text))
                elif field == "source":
                    counts = source_counts.get(entry.source_id) or Counter(analyze(entry.source_id))
                else:
                    counts = Counter(_pairs(name_terms) + _pairs(description_terms))
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
        write_documents(
            index,
            ({"terms": terms, "action": action}
             for terms, action in self._postings(entries, source_descriptions, param_texts)),
        )

    def search(self, query: str, *, limit: int, source_id: str | None = None,
               hidden: Collection[str] = ()) -> SearchResult:
        """Rank tools for ``query`` with BM25F and the request's intent; ties broken by tool_name.

        ``hidden`` tool_names are left out of the ranking and the total, as if they were not indexed.
        """
        snapshot = self._snapshot
        if snapshot is None:
            return SearchResult([], 0)
        terms = self._analyzer(query)
        declared = self._analyzer.exact(query) if self.config.keywords_weight > 0 else []
        if not terms and not declared:
            return SearchResult([], 0)
        from whoosh.query import Or, Term

        wanted = list(dict.fromkeys(terms + declared))
        if self.config.pairs_weight > 0:
            wanted += list(dict.fromkeys(_pairs(terms)))
        clauses = [Term("terms", term) for term in wanted]
        intent = Intent.of(query)
        verb_terms = list(dict.fromkeys(self._analyzer(" ".join(intent.verbs)))) if intent.verbs else []
        # Inside one source the verb decides between sibling tools and cannot pull in another source's.
        boost = self.config.action_weight if source_id is None else self.config.source_action_weight
        if boost > 0:
            clauses += [Term("action", term, boost=boost) for term in verb_terms]
        if source_id is not None:
            allowed = snapshot.by_source.get(source_id)
            if not allowed:
                return SearchResult([], 0)
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
        return SearchResult([names[doc] for _, doc in scored[:limit]], total)

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
