"""What a request asks for beyond its words: its action verbs, whether it is a question, whether it wants all.

Read from the request's structure (clauses, courtesy openings, question forms), not from a list of verbs: which
words are actions is for the index to say, from the tools' own names and keywords.
"""

from __future__ import annotations

import re

import attrs

__all__ = ["Intent"]

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
