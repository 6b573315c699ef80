"""Read: a request read once, into its clauses' terms and weights, its verbs, and whether it is a question.

Which words are verbs is not known here: ``read_request`` keeps, of the words in a verb's place, those that are
some tool's action words (``scoring.action_words``). The word lists are ``switches``'.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TYPE_CHECKING

import attrs

from junior_core._discovery.analysis import WORD, phrases
from junior_core._discovery.switches import AUX, OPENERS, PRONOUNS, SUBJECTS, TOPIC, WH, on

if TYPE_CHECKING:
    from junior_core._discovery.analysis import Analyzer
    from junior_core._discovery.spelling import Correction

__all__ = ["Intent", "Request", "clauses", "payload", "read_request"]

_CLAUSE = re.compile(r"[,;:.!?]+\s+|\s+[—–-]+\s+|\s+(?:and then|then|and)\s+|[,;:!?]+$", re.IGNORECASE)


def _words(text: str) -> list[str]:
    """A clause's words, lower-cased, past its courtesy ("hey, please ...")."""
    words = [w.lower().replace("’", "'") for w in WORD.findall(text)]
    start = 0
    while on("openers") and start < len(words) and words[start] in OPENERS:
        start += 1
    return words[start:]


def clauses(text: str) -> list[str]:
    """``text`` in clauses, split at punctuation, "and", "then"; at most 12."""
    return [part.strip() for part in _CLAUSE.split(text[:2000]) if WORD.search(part)][:12]


@attrs.frozen
class Intent:
    """What a request asks beyond its words: the words in its verbs' place, and whether it is a question.

    A clause's verb is its first word ("jot down ..." -> jot), in a question the word after its subject ("do you
    recall ...", "what did I tell you ..." -> recall, tell). The first clause that asks a question or opens with
    an action word decides whether the request is a question; if none does, a final "?" does.
    """

    verbs: tuple[str, ...]
    question: bool

    @classmethod
    def of(cls, text: str, is_action: Callable[[str], bool] | None = None) -> Intent:
        verbs: list[str] = []
        question: bool | None = None
        for clause in _CLAUSE.split(text[:300]):
            words = _words(clause)
            verb, asks = _verb(words)
            if question is None and (asks or (verb is not None and (is_action is None or is_action(verb)))):
                question = asks
            if verb is not None and verb not in verbs:
                verbs.append(verb)
            if len(verbs) == 3:
                break
        if question is None:
            question = text[:300].rstrip().endswith("?")
        return cls(tuple(verbs), question)


def _verb(words: list[str]) -> tuple[str | None, bool]:
    """A clause's verb, and whether it asks a question."""
    if not words:
        return None, False
    first = words[0]
    if (first in WH or first in AUX) and on("questions"):
        # "what did I tell you", "do you recall", "is there a ...": the verb follows the subject, if any.
        j = 1 if first in WH else 0
        if j < len(words) and words[j] in AUX:
            j += 1
        if first in AUX and (j >= len(words) or words[j] not in SUBJECTS):
            return None, False
        if j < len(words) and words[j] in SUBJECTS:
            j += 1
        verb = words[j] if j < len(words) and words[j] not in SUBJECTS and words[j] not in PRONOUNS else None
        return verb, True
    if first.isdigit() or first in SUBJECTS or first in PRONOUNS:
        return None, False
    return first, False


@attrs.frozen
class Request:
    """A request as the index reads it."""

    weights: dict[str, float]
    """Each distinct term's weight in the score: 1, less for a corrected typo."""
    clauses: tuple[tuple[tuple[str, ...], tuple[str, ...]], ...]
    """Per clause: the terms that ask, and its payload's terms and the keyword phrases it says (they count only
    when matched)."""
    phrases: frozenset[str]
    """Keyword-phrase terms the request says ("keep in mind")."""
    intent: Intent
    verb_terms: tuple[str, ...]
    """Terms of the request's verbs that are action words, in order, each once: they reorder the tools that
    passed the floor."""
    placed: frozenset[str] = frozenset()
    """Terms of every word in a verb's place, action word or not ("what time is it" -> time): such a word admits
    only the tools whose name or keywords say it."""


def payload(clause: str) -> tuple[str, str]:
    """A clause's ask and its payload: in a clause that asks (a verb or a question), what follows a topic word
    among its first words is what the request is about, not which tool it wants ("forget my preference about PR
    summaries", "what did I save about the standup": its first five words); not in a statement ("that thing about
    the DB is wrong")."""
    found = list(WORD.finditer(clause))
    words = _words(clause)
    verb, question = _verb(words)
    if not on("about_payload") or (verb is None and not question):
        return clause, ""
    skipped = len(found) - len(words)
    for number in range(1, min(len(words) - 1, 5)):
        if words[number] in TOPIC:
            at = found[skipped + number]
            return clause[: at.start()], clause[at.end() :]
    return clause, ""


def read_request(query: str, analyze: Analyzer, fixed: Correction,
                 is_action: Callable[[str], bool] | None = None, payload_weight: float = 1.0) -> Request | None:
    """``query`` (typos corrected) as terms and clauses; None when no clause has a word to search for. Payload
    terms weigh ``payload_weight`` and count only when a tool holds them."""
    parts: list[tuple[tuple[str, ...], tuple[str, ...]]] = []
    said: set[str] = set()
    weights: dict[str, float] = {}
    for clause in clauses(query):
        asked, handed = payload(clause)
        ask = tuple(dict.fromkeys(analyze(asked)))
        extra = tuple(t for t in dict.fromkeys(analyze(handed)) if t not in ask)
        if ask:
            spoken = tuple(phrases(clause))
            said.update(spoken)
            parts.append((ask, extra + spoken))
            weights.update({term: payload_weight * fixed.boost(term) for term in extra})
    if not parts:
        return None
    weights.update({term: fixed.boost(term) for ask, _ in parts for term in ask})
    weights.update(dict.fromkeys(said, 1.0))
    intent = Intent.of(query, is_action)
    verbs = [verb for verb in intent.verbs if is_action is None or is_action(verb)]
    verb_terms = tuple(dict.fromkeys(analyze(" ".join(verbs))))
    placed = frozenset(analyze(" ".join(intent.verbs)))
    return Request(weights, tuple(parts), frozenset(said), intent, verb_terms, placed)
