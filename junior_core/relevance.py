"""Which tools may answer a request at all: the relevance floor, and how rare a word is.

A request is read clause by clause (``junior_core.intent.clauses``). Each clause has words that ask and words it
hands over (its payload: quoted text, what follows "remember that ..."). A tool is returned only if it passes the
floor in one of two ways, both stated in what the index already holds:

- **Coverage.** In some clause, the tool's text (name, keywords, description, parameters, source) holds at least
  ``relevance_floor`` (half) of the idf the clause's ask words carry. A payload word counts when the tool has
  it, never against; so does a declared keyword phrase the clause says. A word no installed tool and no
  reference tool uses (a name, a value) counts ``unknown_weight`` (a quarter) against. A word counts as strongly
  as the tool holds it: fully in its name, keywords, stated action or source; elsewhere fully in a description of
  average length, less in a longer one unless said often.
- **A telling word.** The request shares with what searchTools shows of the tool (name, title, one-line summary,
  source id and description) or with its keywords a word few other tools use: at most ``telling_share`` (5%) of the
  tools outside the tool's own source, the reference catalog counted as ``reference_tools`` tools. The request's
  verb is an intent signal, and only admits the tools whose name or keywords say it: "delete the old docker images"
  is not for a tool whose summary merely mentions deleting. So is an action word stated as the speaker's own
  doing ("I'm looking for a red dress"). A source one of whose tools is admitted this way
  competes with all its matching tools, so "can I see everything you've remembered?" reaches the list tool through
  the word the remember tool is named for.

Intent (verbs, questions, "everything") then reorders the tools that passed; it never admits one. When no tool
passes, searchTools answers as for no match.

Rarity (idf) is reckoned over the installed tools plus a reference catalog, ``junior_core/data/
reference_tools.txt`` (the words of 726 public tools), counted as ``reference_tools`` tools: in a catalog of
four tools every word would otherwise look rare, and a word all four use would look worthless.
"""

from __future__ import annotations

import logging
import math
import threading
from collections import Counter
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

import attrs

from junior_core.intent import Intent, clauses, phrases, unchatted, without

if TYPE_CHECKING:
    from junior_core.analysis import Analyzer
    from junior_core.ranking import RankingConfig
    from junior_core.spelling import Correction

__all__ = ["Reference", "Request", "Sources", "holding", "rarity", "read_request", "telling"]

log = logging.getLogger("junior.search")


class Reference:
    """How many of the reference catalog's tools use each term, analysed as the index analyses tool text.

    The reference is ``junior_core/data/reference_tools.txt``: the words of 726 public tools (LiveMCPBench's MCP
    tools and MetaTool's plugins), one tool per line. It is read once per analysis setting, at the first search.
    """

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


@attrs.frozen
class Request:
    """A request as the index reads it."""

    weights: dict[str, float]
    """Each distinct term's weight in the score: 1, less for a corrected typo, ``payload_weight`` for payload."""
    clauses: tuple[tuple[tuple[str, ...], tuple[str, ...]], ...]
    """Per clause: the terms that ask, and the terms that count only when matched (payload, phrases)."""
    phrases: frozenset[str]
    """Keyword-phrase terms the request says ("keep in mind")."""
    intent: Intent
    """What the request asks beyond its words (its verbs, a question, "everything"), read once."""
    verb_terms: tuple[str, ...]
    """Terms of the request's action verbs, in order, each once: the words in a verb's place (``Intent.verbs``)
    that are action words. They reorder the tools that passed the floor."""
    placed: frozenset[str] = frozenset()
    """Terms of every word in a verb's place, action word or not ("what time is it" -> time), and of the action
    words statements say the speaker does ("I'm looking for ..." -> look): such a word admits only the tools whose
    name or keywords say it."""
    bound: Mapping[str, frozenset[str]] = attrs.field(factory=dict)
    """Terms said only inside declared keyword phrases, with those phrases: they count only for the tools that
    declare one of them."""


def read_request(query: str, analyze: Analyzer, fixed: Correction, payload_weight: float,
                 is_action: Callable[[str], bool] | None = None,
                 is_phrase: Callable[[str], bool] | None = None) -> Request | None:
    """``query`` (typos corrected) as terms and clauses; None when no clause has a word to search for.
    ``is_action`` says whether a word is an action word (see ``intent.clauses``): only such a word in a verb's place
    is one of the request's verbs ("lol I was grumpy yesterday" has none). ``is_phrase`` says whether some tool
    declares a phrase term as a keyword."""
    query = unchatted(query)
    parts: list[tuple[tuple[str, ...], tuple[str, ...]]] = []
    said: set[str] = set()
    weights: dict[str, float] = {}
    bound: dict[str, set[str]] = {}
    unbound: set[str] = set()  # said outside a declared phrase somewhere
    for clause in clauses(query, is_action, is_phrase):
        candidates = phrases(clause.ask)
        ask: list[str] = list(dict.fromkeys(analyze(clause.ask)))
        # The words of a declared phrase the clause says whole are that phrase's: they count only for the tools
        # that declare it ("keep in mind" is not about a mind map, "stop remembering" not for the remember tool).
        declared = [p for p in candidates if is_phrase is not None and is_phrase(p)]
        free = set(analyze(without(clause.ask, declared))) if declared else set(ask)
        for term in ask:
            if term not in free:
                bound.setdefault(term, set()).update(declared)
        payload: list[str] = [t for t in dict.fromkeys(analyze(clause.payload)) if t not in ask]
        unbound.update(free, payload)
        if not ask:
            ask, payload = payload, []
        if not ask:
            continue
        spoken = [p for p in candidates if p not in payload]
        said.update(spoken)
        for term in payload:
            weights.setdefault(term, payload_weight * fixed.boost(term))
        parts.append((tuple(ask), tuple(payload + spoken)))
    if not parts:
        return None
    for asked, _ in parts:
        for term in asked:
            weights[term] = fixed.boost(term)
    for term in said:
        weights[term] = 1.0
    intent = Intent.of(query, is_action, is_phrase)
    verbs = [verb for verb in intent.verbs if is_action is None or is_action(verb)]
    verb_terms = tuple(dict.fromkeys(analyze(" ".join(verbs))))
    placed = frozenset(analyze(" ".join(intent.verbs + intent.stated)))
    # A verb stays everyone's (its tools are found by their action words): a plugin that declares "show me"
    # does not take "show" from a tool named git_log that shows the history. So does a word also said outside
    # the phrase ("keep in mind that the mind map is due").
    return Request(weights, tuple(parts), frozenset(said), intent, verb_terms, placed,
                   {term: frozenset(declared) for term, declared in bound.items()
                    if term not in placed and term not in unbound})


def holding(reader: Any, field: str, term: str) -> set[int]:
    """The documents whose ``field`` holds ``term`` (call under the snapshot's lock)."""
    return set(reader.postings(field, term).all_ids()) if reader.doc_frequency(field, term) else set()


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


def telling(reader: Any, request: Request, found: Mapping[str, int], per_source: Mapping[str, Counter[str]],
            sources: Sources, candidates: set[int], config: RankingConfig, analyzer: Analyzer) -> set[int]:
    """The ``candidates`` that share a telling word with the request (see the module's docstring).

    ``found`` is each term's number of installed tools, ``per_source`` how many of each source's tools use it.
    """
    share, weight = config.telling_share, max(config.reference_tools, 0.0)
    if share <= 0:
        return set()
    reference = Reference.of(analyzer) if weight else None
    if reference is not None and not reference.size:
        reference, weight = None, 0.0
    total = reader.doc_count_all() + weight
    source_of, sizes = sources.of_doc, sources.sizes
    out: set[int] = set()
    for term, n in found.items():
        if not n:
            continue
        if term in request.placed:
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
            out |= docs
            continue
        elsewhere = reference.df.get(term, 0) * weight / reference.size if reference is not None else 0.0
        if elsewhere > share * weight:
            continue  # tools in general share it ("list", "search"), however few of the installed ones do
        counts = per_source.get(term, Counter())
        for doc in docs:
            source = source_of[doc]
            if n - counts[source] + elsewhere <= share * (total - sizes[source]):
                out.add(doc)
    return out
