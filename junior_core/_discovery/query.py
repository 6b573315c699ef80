"""Read: a request read once, into its clauses' terms and weights, its verbs, and whether it is a question. Which
words are verbs the tools say (``scoring.action_words``); the word lists are ``switches``'."""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable
from typing import TYPE_CHECKING

import attrs

from junior_core._discovery.analysis import WORD, phrases
from junior_core._discovery.settings import RankingConfig
from junior_core._discovery.switches import AUX, OPENERS, PRONOUNS, SUBJECTS, TOPIC, WH, on

if TYPE_CHECKING:
    from junior_core._discovery.analysis import Analyzer
    from junior_core._discovery.spelling import Correction

__all__ = ["Intent", "Request", "clauses", "payload", "read_request"]

_CLAUSE = re.compile(r"[,;:.!?]+\s+|\s+[—–-]+\s+|\s+(?:and then|then|and)\s+|[,;:!?]+$", re.IGNORECASE)


def _words(text: str) -> list[str]:
    """A clause's words, lower-cased, past its courtesy ("hey, please ...")."""
    words = [w.lower().replace("’", "'") for w in WORD.findall(text)]
    return list(itertools.dropwhile(OPENERS.__contains__, words)) if on("openers") else words


def clauses(text: str, config: RankingConfig) -> list[str]:
    """``text`` in clauses, split at punctuation, "and", "then"."""
    return [part.strip() for part in _CLAUSE.split(text[: config.request_chars]) if WORD.search(part)][
        : config.max_clauses]


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
    for clause in clauses(query, config):
        asked, handed = payload(clause, config)
        ask = tuple(dict.fromkeys(analyze(asked)))
        extra = tuple(t for t in dict.fromkeys(analyze(handed)) if t not in ask)
        if ask:
            spoken = tuple(phrases(clause))
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
