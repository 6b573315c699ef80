"""Score and admit: a request's BM25F score per tool, which tools may answer at all (the relevance floor), and the
one idf every stage uses.

A search reads each request term's postings from Whoosh's reader once and sums idf · (k1 + 1) · w / (w + k1) per
tool (``score_tools``), counting on the way what the floor needs. A request is read clause by clause
(``query.clauses``). A tool is returned only if it passes the floor in one of two ways, both stated in what the
index already holds:

- **Coverage.** In some clause, the tool's text (name, keywords, description, parameters, source) holds at least
  ``relevance_floor`` (half) of the idf the clause's words carry. A declared keyword phrase the clause says counts
  when the tool has it, never against. A word counts as strongly as the tool holds it: fully in its name,
  keywords, stated action or source; elsewhere fully in a description of average length, less in a longer one
  unless said often.
- **A telling word.** The request shares with what searchTools shows of the tool (name, title, one-line summary,
  source id and description) or with its keywords a word few other tools use: at most ``telling_share`` (5%) of the
  tools outside the tool's own source, the reference catalog counted as ``reference_tools`` tools. A word in a
  verb's place only admits the tools whose name or keywords say it: "delete the old docker images" is not for a
  tool whose summary merely mentions deleting. A source one of whose tools is admitted this way competes with all
  its matching tools.

Then, for the tools that passed the floor, the request's verbs are matched against each tool's action words
(fields ``named`` and ``opens``, ``add_actions``), and a question ranks tools that declare they write
(``readOnlyHint: false``) lower (``index.ordered``). When no tool passes, searchTools answers as for no match.

Rarity (idf, ``term_idf``) is reckoned over the installed tools plus a reference catalog, ``junior_core/data/
reference_tools.txt`` (the words of 2,876 public function docs, BFCL's), counted as ``reference_tools`` tools: in
a catalog of four tools every word would otherwise look rare, and a word all four use would look worthless.
"""

from __future__ import annotations

import logging
import math
import threading
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import attrs

from junior_core._discovery.documents import MENTION
from junior_core._discovery.switches import on

if TYPE_CHECKING:
    from junior_core._discovery.analysis import Analyzer
    from junior_core._discovery.documents import IndexedDocs
    from junior_core._discovery.query import Request
    from junior_core._discovery.reasons import Trace
    from junior_core._discovery.settings import RankingConfig
    from junior_core._discovery.spelling import Correction

__all__ = [
    "Reference",
    "Snapshot",
    "Sources",
    "Tally",
    "action_words",
    "actors",
    "add_actions",
    "holding",
    "rarity",
    "score_tools",
    "term_idf",
    "verb_kind",
]

log = logging.getLogger("junior.search")


class Reference:
    """How many of the reference catalog's tools use each term, analysed as the index analyses tool text: the BFCL
    function docs of ``junior_core/data/reference_tools.txt`` (see its README), read once per analysis setting."""

    resource = ("data", "reference_tools.txt")
    """Where in ``junior_core`` the reference lives."""
    _loaded: dict[tuple[bool, ...], Reference] = {}  # noqa: RUF012 - one cache for the class, by analysis setting
    _lock = threading.Lock()

    def __init__(self, analyzer: Analyzer) -> None:
        from importlib.resources import files

        try:
            text = files("junior_core").joinpath(*self.resource).read_text(encoding="utf-8")
        except (OSError, UnicodeError) as exc:
            # A broken install still searches: rarity then comes from the installed tools alone.
            log.warning("junior_core/data/reference_tools.txt could not be read (%s); word rarity comes from the "
                        "installed tools alone", exc)
            text = ""
        lines = [line for line in text.splitlines() if line.strip()]
        self.size = len(lines)
        self.df: Counter[str] = Counter(term for line in lines for term in set(analyzer(line)))
        # A line is the tool's name (one identifier) and then its description's words: the second word is what the
        # description opens with, most often the verb that says what the tool does ("get", "search", "delete").
        self.opens: frozenset[str] = frozenset(
            term for line in lines for word in line.split()[1:2] for term in analyzer(word)
        )

    @classmethod
    def of(cls, analyzer: Analyzer) -> Reference:
        key = analyzer.settings
        with cls._lock:
            found = cls._loaded.get(key)
            if found is None:
                found = cls._loaded[key] = cls(analyzer)
            return found


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


def holding(reader: Any, field: str, term: str) -> set[int]:
    """The documents whose ``field`` holds ``term`` (call under the snapshot's lock)."""
    return set(reader.postings(field, term).all_ids()) if reader.doc_frequency(field, term) else set()


def term_idf(snapshot: Snapshot, config: RankingConfig, analyzer: Analyzer) -> Callable[[str], float]:
    """The one idf every stage uses (call under the snapshot's lock): ``rarity`` of the installed tools that
    use the term, beside the reference's."""
    reader, idf = snapshot.reader, rarity(config, analyzer, snapshot.reader.doc_count_all())
    return lambda term: idf(term, reader.doc_frequency("terms", term))


def rarity(config: RankingConfig, analyzer: Analyzer, installed: int) -> Callable[[str, int], float]:
    """idf of a term ``n`` of the ``installed`` tools use, the reference counted as ``reference_tools`` tools."""
    weight = config.reference_tools
    reference = Reference.of(analyzer) if weight > 0 else None
    if reference is None or not reference.size:
        return lambda term, n: math.log(1 + (installed - n + 0.5) / (n + 0.5))
    scale, total, df = weight / reference.size, installed + weight, reference.df

    def idf(term: str, n: int) -> float:
        used = n + df.get(term, 0) * scale
        return math.log(1 + (total - used + 0.5) / (used + 0.5))

    return idf


@attrs.frozen
class Sources:
    """What the floor reads of the index's sources: each tool's source (by doc number), each source's size, and
    each source's id and description as terms."""

    of_doc: list[str]
    sizes: Mapping[str, int]
    terms: Mapping[str, frozenset[str]]

    def saying(self, term: str) -> set[str]:
        """The sources whose id or description says ``term``."""
        return {source for source, terms in self.terms.items() if term in terms}


def actors(reader: Any, term: str) -> set[int]:
    """The tools ``term`` is an action word of: in their name, title or keywords, or opening their description."""
    return holding(reader, "named", term) | holding(reader, "opens", term)


def action_words(snapshot: Snapshot, config: RankingConfig, analyzer: Analyzer) -> Callable[[str], bool]:
    """Whether ``word`` is an action word: an installed tool states it as its action (its description opens
    with it or names it in the parenthesis after its first word, or it is a one-word keyword), or a reference
    tool's description opens with it (call under the snapshot's lock). A word of a tool's name is not enough:
    names hold nouns too ("lol-summoner-search")."""
    reader, analyze = snapshot.reader, analyzer
    opening = Reference.of(analyze).opens if config.reference_tools > 0 else frozenset()

    def is_action(word: str) -> bool:
        return any(term in opening or reader.doc_frequency("opens", term) for term in analyze(word))

    return is_action

@attrs.frozen
class Tally:
    """What the floor (``floor.admit``) needs, counted while scoring: each term's number of installed tools
    (``found``) and per source (``per_source``), and per clause what each tool holds (``matched``), what the
    clause's words carry (``need``) and the declared phrases each tool holds besides (``bonus``)."""

    found: Mapping[str, int]
    per_source: Mapping[str, Counter[str]]
    matched: list[dict[int, float]]
    need: list[float]
    bonus: list[dict[int, float]]


def score_tools(snapshot: Snapshot, request: Request, config: RankingConfig, analyzer: Analyzer,
                allowed: set[int] | None, mask: set[int] | None, whole_catalog: bool = True,
                trace: Trace | None = None) -> tuple[dict[int, float], Tally | None]:
    """The BM25F score of every tool that holds a word of the request, and what the floor needs to admit them
    (None where no floor applies); with ``trace``, what each term added to each tool (``reasons``).

    The floor is for searches of the whole catalog (``whole_catalog``): inside one source the caller chose
    the subject, and every tool there that matches a word is ranked.

    Read term at a time from Whoosh's postings: each term's posting list once, each posting's weight saturated
    once, summed per tool, and the floor's matches counted on the way.
    """
    reader = snapshot.reader
    k1, floor = config.k1, config.relevance_floor
    # The floor's bookkeeping (matches per clause, tools per source) only when the floor applies.
    flooring = whole_catalog and (floor > 0 or config.telling_share > 0)
    idf_of = term_idf(snapshot, config, analyzer)
    found = {term: reader.doc_frequency("terms", term) for term in request.weights}
    idf = {term: idf_of(term) for term in found}
    mentions = snapshot.mentions() if flooring and on("long_descriptions") else {}
    count = len(request.clauses)
    need = [0.0] * count  # per clause: the idf its ask words carry
    matched: list[dict[int, float]] = [{} for _ in range(count)]
    bonus: list[dict[int, float]] = [{} for _ in range(count)]  # matched declared phrases
    roles: dict[str, list[tuple[int, bool]]] = {}
    for number, (ask, extra) in enumerate(request.clauses):
        for term in ask:
            need[number] += idf[term] * request.weights[term]
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
        sources = per_source[term] = Counter()
        # Said by its name, keywords, stated action or source, a word counts fully toward the floor; else as
        # strongly as the tool's text holds it, and at least as one mention in its description would.
        weighed = bool(its_roles and mentions)
        full = actors(reader, term) if weighed else set()
        saying = snapshot.sources.saying(term) if weighed else set()
        postings = reader.postings("terms", term)
        while postings.is_active():
            doc = postings.id()
            if flooring:
                sources[source_of[doc]] += 1
            if (allowed is None or doc in allowed) and (mask is None or doc not in mask):
                saturated = postings.weight()
                saturated /= saturated + k1
                score[doc] = get(doc, 0.0) + scale * saturated
                if trace is not None:
                    trace.word(doc, term, scale * saturated)
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
    return score, (Tally(found, per_source, matched, need, bonus) if flooring else None)


def add_actions(snapshot: Snapshot, scores: dict[int, float], verb_terms: Sequence[str], boost: float,
                fixed: Correction, config: RankingConfig, analyzer: Analyzer, trace: Trace | None = None) -> None:
    """Add the request's verbs, matched against each tool's action words, to the tools that passed the floor.

    A verb weighs its rarity in all tools' text: "unsave" is a strong signal, "list" a weak one.
    """
    reader = snapshot.reader
    idf_of = term_idf(snapshot, config, analyzer)
    for term in verb_terms:
        naming = actors(reader, term)
        if not naming:
            continue
        gain = boost * fixed.boost(term) * idf_of(term)
        for doc in naming:
            if doc in scores:
                scores[doc] += gain
                if trace is not None:
                    trace.verb(doc, term, gain)

def verb_kind(snapshot: Snapshot, verb_terms: Sequence[str], candidates: set[int]) -> str | None:
    """"read" when only tools that do not write name the verbs, "write" when only writers do, else None."""
    if not verb_terms:
        return None
    declared: set[int] = set()
    with snapshot.lock:
        for term in verb_terms:
            declared |= actors(snapshot.reader, term)
    declared &= candidates
    if not declared:
        return None
    writers = declared & snapshot.writes
    return "read" if not writers else "write" if writers == declared else None
