"""A request as the index reads it: its clauses (what they ask, what they hand over), terms and weights, and
what it asks beyond its words: its action verbs, whether it is a question, whether it wants all.

Read from the request's structure (clauses, courtesy openings, question forms; the word lists are ``rules``'),
not from a list of verbs: which words are actions is for the index to say, from the tools' own names and keywords.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

import attrs

from junior_core.discovery.rules import (
    ASKS,
    AUX,
    CHAT_SPELLINGS,
    CLAUSE_SUBJECTS,
    COMPLEMENT_SUBJECTS,
    EVERYTHING,
    IF,
    LIGHT_VERBS,
    OPENERS,
    PRONOUNS,
    REPORT_VERBS,
    STATING_AUX,
    STATING_SUBJECTS,
    SUBJECTS,
    TOPIC,
    WH,
    on,
)
from junior_core.discovery.text import WORD, phrases, without

if TYPE_CHECKING:
    from junior_core.discovery.spelling import Correction
    from junior_core.discovery.text import Analyzer

__all__ = ["Clause", "Intent", "Request", "asks", "clauses", "read_request", "unchatted"]

_ASKS_LONGEST_FIRST = sorted(ASKS, key=len, reverse=True)


@attrs.frozen
class Intent:
    """What a request asks for beyond its words: its action verbs, and whether it is a question.

    ``verbs`` are the first word of each clause once courtesy ("please", "could you", "I want you to") is set
    aside ("jot down ...", "I like tabs, save that" -> jot, save), and in a question the verb after its subject
    ("do you recall ...", "what did I tell you ..." -> recall, tell). ``question`` is true for "what/which/who
    ..." and "do you / did I / is there ..." openings and for questions put as requests ("tell me what you
    know", "check whether you remember"); in "how do I create ..." the verb after the subject counts too.
    Which words are verbs is not known here: ``read_request`` keeps those that are some tool's action
    words.
    """

    verbs: tuple[str, ...]
    question: bool
    everything: bool = False
    """The request asks for all of something ("all", "every", "entire", ...): reading, unless a verb says write."""
    stated: tuple[str, ...] = ()
    """The verbs of clauses that state rather than ask ("I'm looking for a red dress" -> looking): in a verb's
    place, so not words that tell a tool apart, and not the request's ask either."""

    @classmethod
    def of(cls, text: str, is_action: Callable[[str], bool] | None = None,
           is_phrase: Callable[[str], bool] | None = None) -> Intent:
        """``is_action`` (whether some tool states a word as its action) tells a clause that asks from chat
        before it: the first clause that asks a question, opens with an action word or asks in so many words
        ("is it possible to erase ...") decides whether the request is a question ("hey! hope you're good. what
        did we save about the canary?"). A request in which no clause decides is a question if it ends with a
        question mark ("anything remembered about the review day?")."""
        verbs: list[str] = []
        stated: list[str] = []
        question: bool | None = None
        for clause in _CLAUSE.split(text[:300]):
            words = [w.lower().replace("’", "'") for w in WORD.findall(clause)]
            verb, asks, courteous = _clause_verb(words)
            if verb is None and not asks:
                said = _stated_verb(words)
                if said is not None and said not in stated and (is_action is None or is_action(said)):
                    stated.append(said)
            acts = verb is not None and (is_action is None or is_action(verb) or courteous)
            if question is None and (asks or acts):
                question = asks
            if verb is not None and verb not in verbs:
                verbs.append(verb)
            if len(verbs) == 3:
                break
        if question is None:
            question = text[:300].rstrip().endswith("?")
        return cls(tuple(verbs), question,
                   any(_asks_all(clause.ask) for clause in clauses(text[:300], is_action, is_phrase)),
                   tuple(stated))


_CLAUSE = re.compile(r"[,;:.!?]+\s+|\s+[—–-]+\s+|\s+(?:and then|then|and)\s+|[,;:!?]+$", re.IGNORECASE)
_COMPLEMENT_REACH = 4
"""How far past a clause's courtesy (in words) its "that" may stand and still open the payload ("could you note
down for me that")."""


@attrs.frozen
class Clause:
    """One clause of a request: the words that ask for something, and its payload.

    The payload is what the request hands over rather than what it asks for: what follows a "that"
    which opens a clause of its own ("remember that I prefer tabs" -> ask "remember", payload "I prefer tabs") or
    an "about" in a clause that asks ("what did I say about the freeze"; not in "that thing about the freeze is
    wrong"), and what follows a colon after an ask (see ``clauses``). A
    clause with nothing but payload asks with all of it.
    """

    ask: str
    payload: str = ""


def clauses(text: str, is_action: Callable[[str], bool] | None = None,
            is_phrase: Callable[[str], bool] | None = None) -> list[Clause]:
    """``text`` in clauses, split where ``Intent`` splits them (punctuation, "and", "then"), at most 12.

    What follows a colon after a clause that asks, and does not ask itself, is that clause's payload: "Save a
    preference for me: I like answers with code first". With ``is_phrase`` (whether some tool declares a phrase
    term as a keyword), a clause that says a declared phrase asks: "keep in mind: Marco reviews all changes".
    """
    head, colon, tail = text[:2000].partition(": ")
    if colon and tail.strip() and on("colon_payload"):
        first = _clauses(head)
        rest = _clauses(tail)
        if first and asks(first[-1].ask, is_action, is_phrase) and rest and not asks(rest[0].ask, is_action):
            last = first[-1]
            handed = " ".join(f"{c.ask} {c.payload}".strip() for c in rest)
            return [*first[:-1], Clause(last.ask, f"{last.payload} {handed}".strip())][:12]
    return _clauses(text)


def _clauses(text: str) -> list[Clause]:
    out: list[Clause] = []
    for part in _CLAUSE.split(text[:2000]):
        rest, ask, payload = part, part, ""
        words = list(WORD.finditer(rest))
        lowered = [w.group().lower().replace("’", "'") for w in words]
        start, courteous = _skip_opening(lowered)
        verb, question = _verb_after(lowered, start, courteous)
        # "about ..." is what an ask is about; in a statement it is part of its subject ("that thing about the
        # DB isn't true anymore"), whose predicate follows.
        topical = verb is not None or question or courteous
        for number, match in enumerate(words[: start + _COMPLEMENT_REACH + 1]):
            word = lowered[number]
            nxt = lowered[number + 1] if number + 1 < len(words) else ""
            if number and ((word == "that" and nxt in COMPLEMENT_SUBJECTS and on("that_payload"))
                           or (word in TOPIC and nxt and topical and on("about_payload"))):
                ask, payload = rest[: match.start()], f"{payload} {rest[match.end():]}".strip()
                break
        if not WORD.search(ask):
            ask, payload = payload, ""
        if WORD.search(ask):
            out.append(Clause(ask.strip(), payload.strip()))
        if len(out) == 12:
            break
    return out


def asks(text: str, is_action: Callable[[str], bool] | None = None,
         is_phrase: Callable[[str], bool] | None = None) -> bool:
    """Whether a clause asks for something (an action verb, a question) rather than states it: "I like answers
    with code first" states; "save a preference", "what did I say" and "could you forget it" ask. With
    ``is_action`` (whether some tool states a word as its action), a clause's first word is its verb only if it is
    one: "hotfix branches are cut from release" states."""
    verb, question, _ = _clause_verb([w.lower().replace("’", "'") for w in WORD.findall(text)])
    if question or (verb is not None and (is_action is None or is_action(verb))):
        return True
    return is_phrase is not None and any(is_phrase(p) for p in phrases(text))


def _asks_all(ask: str) -> bool:
    """Whether a clause's ask wants all of something: "all", "every", "everything" ... among its first words past
    its courtesy ("show all my memories", "could you tell me every preference"), not in what it hands over ("...
    every night")."""
    if not on("everything"):
        return False
    words = [w.lower().replace("’", "'") for w in WORD.findall(ask)]
    start, _ = _skip_opening(words)
    return any(w in EVERYTHING for w in words[: start + _ALL_REACH])


_ALL_REACH = 4


def _skip_opening(words: list[str]) -> tuple[int, bool]:
    """Where a clause's words start after its courtesy and framing ("hey, could you please ..."), and whether an
    ask form ("could you") was among it."""
    openers = OPENERS if on("openers") else frozenset()
    i = 0
    while i < len(words) and words[i] in openers:
        i += 1
    asked = False
    for ask in _ASKS_LONGEST_FIRST if on("asks") else ():
        if tuple(words[i : i + len(ask)]) == ask:
            i += len(ask)
            asked = True
            break
    while i < len(words) and words[i] in openers:
        i += 1
    return i, asked


def _clause_verb(words: list[str]) -> tuple[str | None, bool, bool]:
    """The action verb of one clause, whether the clause asks a question, and whether an ask form ("could you")
    was among its courtesy."""
    i, asked = _skip_opening(words)
    verb, question = _verb_after(words, i, asked)
    return verb, question, asked




def _stated_verb(words: list[str]) -> str | None:
    """The verb of a clause that states something of the speaker ("I'm looking for ...", "we need ...")."""
    i, _ = _skip_opening(words)
    if not on("stated_verbs") or i >= len(words) or words[i] not in STATING_SUBJECTS:
        return None
    i += 1
    while i < len(words) and words[i] in STATING_AUX:
        i += 1
    return words[i] if i < len(words) and words[i] not in PRONOUNS else None


def _verb_after(words: list[str], i: int, asked: bool) -> tuple[str | None, bool]:
    """The verb and question of a clause whose courtesy ends before ``words[i]``."""
    if i >= len(words):
        return None, False
    first = words[i]
    if not asked and first in WH and i + 1 < len(words) and words[i + 1] in CLAUSE_SUBJECTS and on("subordinate_wh"):
        # "when you write release notes ...", "what you've got about X is out of date": a question word followed
        # by its subject opens a subordinate clause; it decides nothing (a request no clause decides is a
        # question if it ends with "?": "what you got on me?").
        return None, False
    if not asked and (first in WH or first in AUX) and on("questions"):
        # "what did I tell you", "do you recall", "is there a ...": the verb follows the subject, if any.
        j = i + 1 if first in WH else i
        if j < len(words) and words[j] in AUX:
            j += 1
        if first in AUX and (j >= len(words) or words[j] not in SUBJECTS):
            return None, False
        if j < len(words) and words[j] in SUBJECTS:
            j += 1
        verb = words[j] if j < len(words) and words[j] not in SUBJECTS and words[j] not in PRONOUNS else None
        return verb, True
    if first in LIGHT_VERBS and on("light_verbs"):
        # "make a note", "get rid of it": the noun after a light verb carries the action.
        j = i + 1
        while j < len(words) and words[j] in PRONOUNS:
            j += 1
        return (words[j] if j < len(words) else None), False
    if first in REPORT_VERBS and on("report_verbs") and any(w in WH or w in IF for w in words[i + 1 : i + 4]):
        return None, True
    if first.isdigit() or first in SUBJECTS or first in PRONOUNS:
        return None, False
    return first, False


_CHAT_WORD = re.compile(r"(?<![\w'’-])(" + "|".join(CHAT_SPELLINGS) + r")(?![\w'’-])", re.IGNORECASE)
_WH_IS = re.compile(r"(?<![\w'’-])(what|who|where|how|when|which)['’]s(?![\w'’-])", re.IGNORECASE)


def unchatted(text: str) -> str:
    """``text`` with chat spellings of function words written out ("wat did u save" -> "what did you save")."""
    if not on("chat_spellings"):
        return text
    text = _WH_IS.sub(lambda m: f"{m.group(1)} is", text)
    return _CHAT_WORD.sub(lambda m: CHAT_SPELLINGS[m.group(1).lower()], text)


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
    said_as: Mapping[str, frozenset[str]] = attrs.field(factory=dict)
    """Each term with the words (lower-case) the request said it as: whether English knows a word no tool uses
    (``scoring.score_tools``)."""


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
    said_as: dict[str, set[str]] = {}
    for word in WORD.findall(query):
        for term in analyze(word):
            said_as.setdefault(term, set()).add(word.lower())
    return Request(weights, tuple(parts), frozenset(said), intent, verb_terms, placed,
                   {term: frozenset(declared) for term, declared in bound.items()
                    if term not in placed and term not in unbound} if on("bound_phrases") else {},
                   {term: frozenset(words) for term, words in said_as.items()})
