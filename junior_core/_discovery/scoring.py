"""Read and score: a request read once (its clauses' terms and weights, its verbs, whether it is a question), its
BM25F score per tool read term at a time from Whoosh's postings (counting on the way what the floor needs), the one
idf every stage uses, and the request's verbs added (docs/architecture.md, "A query")."""

from __future__ import annotations

import functools
import itertools
import logging
import math
import re
import threading
import weakref
from collections import Counter, defaultdict
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

import attrs

from junior_core._discovery.analysis import WORD, phrases
from junior_core._discovery.documents import MENTION
from junior_core._discovery.settings import RankingConfig
from junior_core._discovery.switches import AUX, OPENERS, PRONOUNS, SUBJECTS, TOPIC, WH, on

if TYPE_CHECKING:
    from junior_core._discovery.analysis import Analyzer
    from junior_core._discovery.documents import IndexedDocs
    from junior_core._discovery.reasons import Trace
    from junior_core._discovery.spelling import Correction

__all__ = ["Intent", "Reference", "Request", "Snapshot", "Tally", "action_words", "actors", "add_actions", "holding",
           "payload", "rarity", "read_request", "score_tools"]

log = logging.getLogger("junior.search")
# A request's clauses: split at punctuation, a dash between words, "and", "then".
_CLAUSE = re.compile(r"[,;:.!?]+\s+|\s+[—–-]+\s+|\s+(?:and then|then|and)\s+|[,;:!?]+$", re.IGNORECASE)


def _words(text: str) -> list[str]:
    """A clause's words, lower-cased, past its courtesy ("hey, please ...")."""
    words = [w.lower().replace("’", "'") for w in WORD.findall(text)]
    return list(itertools.dropwhile(OPENERS.__contains__, words)) if on("openers") else words


@attrs.frozen
class Intent:
    """The words in a request's verbs' place, and whether it is a question: decided by the first clause that asks
    one or opens with an action word, else by a final "?"."""

    verbs: tuple[str, ...]
    question: bool

    @classmethod
    def of(cls, text: str, is_action: Callable[[str], bool] | None = None,
           config: RankingConfig = RankingConfig()) -> Intent:  # noqa: B008 - frozen
        verbs: list[str] = []
        question: bool | None = None
        for clause in _CLAUSE.split(text[: config.intent_chars]):
            verb, asks = _verb(_words(clause))
            if question is None and (asks or (verb is not None and (is_action is None or is_action(verb)))):
                question = asks
            if verb is not None and verb not in verbs:
                verbs.append(verb)
            if len(verbs) == config.max_verbs:
                break
        return cls(tuple(verbs), text[: config.intent_chars].rstrip().endswith("?") if question is None else question)


def _verb(words: list[str]) -> tuple[str | None, bool]:
    """A clause's verb (its first word; in a question the word after its subject), and whether it asks one."""
    first = words[0] if words else ""
    if (first in WH or first in AUX) and on("questions"):
        # "what did I tell you", "do you recall", "is there a ...": the verb follows the subject, if any.
        j = 1 if first in WH else 0
        if j < len(words) and words[j] in AUX:
            j += 1
        if first in AUX and (j >= len(words) or words[j] not in SUBJECTS):
            return None, False
        if j < len(words) and words[j] in SUBJECTS:
            j += 1
        return (words[j] if j < len(words) and words[j] not in SUBJECTS and words[j] not in PRONOUNS else None), True
    if not first or first.isdigit() or first in SUBJECTS or first in PRONOUNS:
        return None, False
    return first, False


@attrs.frozen
class Request:
    """A request as the index reads it."""

    weights: dict[str, float]  # each distinct term's weight in the score: 1, less for a corrected typo
    # Per clause: the terms that ask; its payload's terms and the keyword phrases it says (count only when held).
    clauses: tuple[tuple[tuple[str, ...], tuple[str, ...]], ...]
    phrases: frozenset[str]  # keyword-phrase terms the request says ("keep in mind")
    intent: Intent
    verb_terms: tuple[str, ...]  # terms of its verbs that are action words, each once: they reorder passed tools
    placed: frozenset[str]  # terms of every word in a verb's place: each admits only tools whose name says it


def payload(clause: str, config: RankingConfig) -> tuple[str, str]:
    """A clause's ask and its payload: in a clause that asks (a verb or a question), what follows a topic word
    among its first ``topic_words`` words is what it is about, not which tool it wants ("forget my preference
    about PR summaries"); not in a statement ("that thing about the DB is wrong")."""
    found, words = list(WORD.finditer(clause)), _words(clause)
    verb, question = _verb(words)
    if on("about_payload") and (verb is not None or question):
        skipped = len(found) - len(words)
        for number in range(1, min(len(words) - 1, config.topic_words)):
            if words[number] in TOPIC:
                return clause[: found[skipped + number].start()], clause[found[skipped + number].end() :]
    return clause, ""


def read_request(query: str, analyze: Analyzer, fixed: Correction, is_action: Callable[[str], bool],
                 config: RankingConfig) -> Request | None:
    """``query`` (typos corrected) as terms and clauses; None when no clause has a word to search for."""
    parts: list[tuple[tuple[str, ...], tuple[str, ...]]] = []
    said: set[str] = set()
    weights: dict[str, float] = {}
    clauses = [part.strip() for part in _CLAUSE.split(query[: config.request_chars]) if WORD.search(part)]
    for clause in clauses[: config.max_clauses]:
        asked, handed = payload(clause, config)
        ask = tuple(dict.fromkeys(analyze(asked)))
        extra = tuple(t for t in dict.fromkeys(analyze(handed)) if t not in ask)
        if ask:
            spoken = tuple(phrases(clause, config.phrase_words, config.phrase_window))
            said.update(spoken)
            parts.append((ask, extra + spoken))
            weights.update({term: config.payload_weight * fixed.boost(term) for term in extra})
    if not parts:
        return None
    weights.update({term: fixed.boost(term) for ask, _ in parts for term in ask})
    weights.update(dict.fromkeys(said, 1.0))
    intent = Intent.of(query, is_action, config)
    verb_terms = tuple(dict.fromkeys(analyze(" ".join(verb for verb in intent.verbs if is_action(verb)))))
    placed = frozenset(analyze(" ".join(intent.verbs)))
    return Request(weights, tuple(parts), frozenset(said), intent, verb_terms, placed)


class Reference:
    """The reference catalog (``junior_core/data/reference_tools.txt``, BFCL's function docs): how many of its tools
    use each term, and the terms their descriptions open with; read once per analysis setting."""

    resource = ("data", "reference_tools.txt")
    _loaded: dict[tuple[bool, ...], Reference] = {}  # noqa: RUF012 - one cache for the class, by analysis setting
    _lock = threading.Lock()

    def __init__(self, analyzer: Analyzer) -> None:
        from importlib.resources import files

        try:
            text = files("junior_core").joinpath(*self.resource).read_text(encoding="utf-8")
        except (OSError, UnicodeError) as exc:  # a broken install still searches, on the installed tools alone
            log.warning("junior_core/data/reference_tools.txt could not be read (%s); word rarity comes from the "
                        "installed tools alone", exc)
            text = ""
        lines = [line for line in text.splitlines() if line.strip()]
        self.size = len(lines)
        self.df = Counter(term for line in lines for term in set(analyzer(line)))
        # A line is a tool's name, then its description, whose first word is most often the tool's verb.
        self.opens = frozenset(term for line in lines for word in line.split()[1:2] for term in analyzer(word))

    @classmethod
    def of(cls, config: RankingConfig, analyzer: Analyzer) -> Reference | None:
        """The reference, or None when ``reference_tools`` is 0 or it holds no tool."""
        if config.reference_tools <= 0:
            return None
        with cls._lock:
            found = cls._loaded.get(analyzer.settings) or cls._loaded.setdefault(analyzer.settings, cls(analyzer))
        return found if found.size else None


class Snapshot:
    """One immutable index for one catalog version: the Whoosh index, a reused reader (it reads shared file objects:
    one query at a time, under ``lock``), doc numbers, and each source's id and description as terms."""

    def __init__(self, index: Any, docs: IndexedDocs, fingerprint: str, path: str | None,
                 source_terms: Mapping[str, frozenset[str]], id_terms: Mapping[str, frozenset[str]]) -> None:
        self.index, self.docs, self.fingerprint, self.path = index, docs, fingerprint, path
        self.reader, self.lock = index.reader(), threading.Lock()
        self.doc_of = {name: doc for doc, name in enumerate(docs.names)}
        self.by_source: dict[str, set[int]] = {}
        for doc, source in enumerate(docs.sources):
            self.by_source.setdefault(source, set()).add(doc)
        self.source_terms, self.writes = dict(source_terms), frozenset(docs.writes)
        self.id_terms = dict(id_terms)  # per source, its id's terms (a bridged server's without "mcp:")
        # Read once per term (a snapshot never changes): postings, and each term's part in a score. The caches
        # reach the snapshot through a weak proxy, so a replaced snapshot is freed as soon as it is dropped.
        me = weakref.proxy(self)
        self.postings = functools.lru_cache(maxsize=8192)(functools.partial(Snapshot._postings, me))
        self.term = functools.lru_cache(maxsize=4096)(functools.partial(Snapshot._term, me))

    def saying(self, term: str) -> set[str]:
        """The sources whose id or description says ``term``."""
        return {source for source, terms in self.source_terms.items() if term in terms}

    @functools.cached_property
    def mentions(self) -> dict[int, float]:
        """Per tool with a long description, what one mention of a word there counts toward the floor (below 1)."""
        return dict(zip(*self.postings("mention", MENTION), strict=True))

    @functools.cached_property
    def vocabulary(self) -> frozenset[str]:
        """The terms of the ``terms`` field: most of a request's word pairs are none of them (read under the lock)."""
        return frozenset(self.reader.field_terms("terms"))

    def _postings(self, field: str, term: str) -> tuple[tuple[int, ...], tuple[float, ...]]:
        """The documents whose ``field`` holds ``term``, and its weight in each (call under the lock)."""
        docs, weights = [], []
        if self.reader.doc_frequency(field, term):
            postings = self.reader.postings(field, term)
            while postings.is_active():
                docs.append(postings.id())
                weights.append(postings.weight())
                postings.next()
        return tuple(docs), tuple(weights)

    def _term(self, term: str, k1: float) -> Posted:
        """``term``'s tools, saturated weights, count per source, and floor shares (call under the lock)."""
        docs, weights = self.postings("terms", term)
        saturated = tuple(weight / (weight + k1) for weight in weights)
        # Said by its name, keywords, stated action or source, a word counts fully toward the floor; else as
        # strongly as the tool's text holds it, and at least as one mention in its description would.
        full, saying, mentions = actors(self, term), self.saying(term), self.mentions
        shares = tuple(1.0 if (share := mentions.get(doc)) is None or doc in full or self.docs.sources[doc] in saying
                       else min(1.0, max(share, (k1 + 1) * part)) for doc, part in zip(docs, saturated, strict=True))
        return Posted(docs, saturated, Counter(self.docs.sources[doc] for doc in docs), shares)


@attrs.frozen
class Posted:
    """One term in the ``terms`` field: the tools holding it, w / (w + k1) in each, how many per source, and the
    share of the term's rarity each holds toward the floor where long descriptions count less."""

    docs: tuple[int, ...]
    saturated: tuple[float, ...]
    per_source: Counter[str]
    shares: tuple[float, ...]


def holding(snapshot: Snapshot, field: str, term: str) -> set[int]:
    """The documents whose ``field`` holds ``term`` (call under the snapshot's lock)."""
    return set(snapshot.postings(field, term)[0])


def actors(snapshot: Snapshot, term: str) -> set[int]:
    """The tools ``term`` is an action word of: in their name, title or keywords, or opening their description."""
    return holding(snapshot, "named", term) | holding(snapshot, "opens", term)


def rarity(config: RankingConfig, analyzer: Analyzer, installed: int) -> Callable[[str, int], float]:
    """The one idf, of a term ``n`` of the ``installed`` tools use, the reference counted as ``reference_tools``
    tools: in a catalog of four every word would look rare, and a word all four use worthless."""
    reference = Reference.of(config, analyzer)
    if reference is None:
        return lambda term, n: math.log(1 + (installed - n + 0.5) / (n + 0.5))
    scale, total, df = config.reference_tools / reference.size, installed + config.reference_tools, reference.df

    def idf(term: str, n: int) -> float:
        used = n + df.get(term, 0) * scale
        return math.log(1 + (total - used + 0.5) / (used + 0.5))

    return idf


def action_words(snapshot: Snapshot, config: RankingConfig, analyzer: Analyzer) -> Callable[[str], bool]:
    """Whether a word is an action word: an installed tool states it (``documents``' ``opens``) or a reference tool's
    description opens with it; a word of a tool's name is not enough ("lol-summoner-search") (call under the lock)."""
    reference = Reference.of(config, analyzer)
    opening = reference.opens if reference else frozenset()
    return lambda word: any(term in opening or snapshot.postings("opens", term)[0] for term in analyzer(word))


@attrs.frozen
class Tally:
    """What the floor needs, counted while scoring: each term's installed tools in all and per source, and per
    clause what each tool holds, what its ask words carry (``need``), and the declared phrases held besides."""

    found: Mapping[str, int]
    per_source: dict[str, Counter[str]]
    matched: list[defaultdict[int, float]]
    need: list[float]
    bonus: list[defaultdict[int, float]]


def score_tools(snapshot: Snapshot, request: Request, config: RankingConfig, analyzer: Analyzer,
                allowed: set[int] | None, mask: set[int] | None, whole_catalog: bool,
                trace: Trace | None = None) -> tuple[dict[int, float], Tally | None]:
    """Each tool's BM25F score, idf · (k1 + 1) · w / (w + k1) summed over the request's terms it holds; what the
    floor needs in a search of the whole catalog (else None: inside one source the caller chose the subject);
    with ``trace``, what each term added to each tool."""
    reader, k1 = snapshot.reader, config.k1
    flooring = whole_catalog and (config.relevance_floor > 0 or config.telling_share > 0)
    idf_of = rarity(config, analyzer, reader.doc_count_all())
    found = {term: len(snapshot.postings("terms", term)[0]) if term in snapshot.vocabulary else 0
             for term in request.weights}
    idf = {term: idf_of(term, n) for term, n in found.items()}
    mentions = snapshot.mentions if flooring and on("long_descriptions") else {}
    clauses = range(len(request.clauses))
    tally = Tally(found, {}, [defaultdict(float) for _ in clauses], [0.0 for _ in clauses],
                  [defaultdict(float) for _ in clauses])
    roles: dict[str, list[tuple[int, bool]]] = {}  # per term, the clauses it asks in (False) or only adds to (True)
    for number, (ask, extra) in enumerate(request.clauses):
        for term in ask:
            tally.need[number] += idf[term] * request.weights[term]
        for term, adds in [(term, False) for term in ask] + [(term, True) for term in extra]:
            roles.setdefault(term, []).append((number, adds))
    score: dict[int, float] = {}
    for term, weight in request.weights.items():
        if not found[term] or weight <= 0:
            continue
        its_roles = roles[term] if flooring else []
        scale, strength = idf[term] * weight * (k1 + 1), idf[term] * weight
        posted = snapshot.term(term, k1)
        tally.per_source[term] = posted.per_source
        docs, saturated = posted.docs, posted.saturated
        shares = posted.shares if mentions else (1.0,) * len(docs)
        if allowed is not None or mask is not None:
            kept = [(allowed is None or doc in allowed) and (mask is None or doc not in mask) for doc in docs]
            docs, saturated = tuple(itertools.compress(docs, kept)), tuple(itertools.compress(saturated, kept))
            shares = tuple(itertools.compress(shares, kept))
        for doc, part in zip(docs, saturated, strict=True):
            score[doc] = score.get(doc, 0.0) + scale * part
            if trace is not None:
                trace.word(doc, term, scale * part)
        for number, adds in its_roles:
            for into in (tally.matched[number], tally.bonus[number]) if adds else (tally.matched[number],):
                for doc, share in zip(docs, shares, strict=True):
                    into[doc] += strength * share
    return score, (tally if flooring else None)


def add_actions(snapshot: Snapshot, scores: dict[int, float], request: Request, boost: float, fixed: Correction,
                config: RankingConfig, analyzer: Analyzer, trace: Trace | None) -> set[int]:
    """Add each request verb, by its idf ("unsave" tells more than "list") times ``boost``, to the tools that passed
    the floor and state it as their action; those tools."""
    reader, stating = snapshot.reader, set[int]()
    idf = rarity(config, analyzer, reader.doc_count_all())
    for term in request.verb_terms:
        naming = actors(snapshot, term) & scores.keys()
        stating |= naming
        if boost > 0 and naming:
            gain = boost * fixed.boost(term) * idf(term, reader.doc_frequency("terms", term))
            for doc in naming:
                scores[doc] += gain
                if trace is not None:
                    trace.verb(doc, term, gain)
    return stating
