"""What a request asks for beyond its words: its action verbs, whether it is a question, whether it wants all.

Read from the request's structure (clauses, courtesy openings, question forms), not from a list of verbs: which
words are actions is for the index to say, from the tools' own names and keywords.
"""

from __future__ import annotations

import re
from collections.abc import Callable

import attrs

from junior_core.analysis import NEGATION_BASES

__all__ = ["Clause", "Intent", "asks", "clauses", "leading_verbs", "phrase_term", "phrase_words", "phrases",
           "unchatted"]

_WORD = re.compile(r"[^\W_]+(?:['’][^\W_]+)?")
# Courtesy and framing before the request itself: "hey, could you please ..." -> "...".
_OPENERS = frozenset("hey hi hello ok okay so now and also please pls kindly just quickly go ahead oh".split())
_ASKS = (
    ("can", "you"), ("could", "you"), ("would", "you"), ("will", "you"), ("can", "i"), ("could", "i"),
    ("i", "want", "you", "to"), ("i", "need", "you", "to"), ("i'd", "like", "you", "to"),
    ("i", "would", "like", "you", "to"), ("i", "want", "to"), ("i", "need", "to"), ("i'd", "like", "to"),
    ("i", "would", "like", "to"), ("help", "me"), ("let's",), ("lets",), ("let", "us"), ("try", "to"),
    ("make", "sure", "to"), ("remember", "to"), ("you", "can"), ("you", "could"), ("would", "you", "mind"),
    ("do", "you", "mind"), ("is", "it", "possible", "to"), ("feel", "free", "to"),
)
_ASKS_LONGEST_FIRST = sorted(_ASKS, key=len, reverse=True)
_WH = frozenset("what which who whom whose when where why how".split())
_AUX = frozenset("do does did is are was were have has had".split())
_SUBJECTS = frozenset("you i we there it anything something any".split())
_NEGATIONS = frozenset("don't dont never not".split())
# "tell me what ...", "check whether ...": a question put as a request.
# Subjects that make "what/when/how ..." a subordinate clause rather than a question.
_CLAUSE_SUBJECTS = frozenset("you i we they he she you've you're i've i'm we've we're they've they're".split())
_REPORT_VERBS = frozenset("tell show remind let check see".split())
_IF = frozenset("whether if".split())
_BE = frozenset("is are was were".split())
_PARTICIPLE = re.compile(r"[a-z]{2,}ed")
_LIGHT_VERBS = frozenset("make get take have give put".split())
_EVERYTHING = frozenset("all every everything entire whole complete full".split())
_PRONOUNS = frozenset("i i'm i've i'd i'll my me we we're our us he she they it it's this that the a an".split())


@attrs.frozen
class Intent:
    """What a request asks for beyond its words: its action verbs, and whether it is a question.

    ``verbs`` are the first word of each clause once courtesy ("please", "could you", "I want you to") is set
    aside ("jot down ...", "I like tabs, save that" -> jot, save), and in a question the verb after its subject
    ("do you recall ...", "what did I tell you ..." -> recall, tell). ``question`` is true for "what/which/who
    ..." and "do you / did I / is there ..." openings and for questions put as requests ("tell me what you
    know", "check whether you remember"); "how do I create ..." asks to act, so its verb counts instead.
    Which words are verbs is not known here: ``junior_core.relevance`` keeps those that are some tool's action
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
            words = [w.lower().replace("’", "'") for w in _WORD.findall(clause)]
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


# A subordinating conjunction before a subject opens a subordinate clause ("can you store that so you stop saying
# Tuesday", "delete it because nobody uses it"): it says why or when, not what is asked (see ``_clauses``).
_SUBORDINATORS = "so|because|since|unless|until|although|though|while|whereas|as soon as|once"
_SUBORDINATE_SUBJECTS = "you|i|we|they|he|she|it|people|everyone|everybody|someone|somebody|anyone|anybody|nobody"
_SUBORDINATE = rf"(?:{_SUBORDINATORS})\s+(?=(?:{_SUBORDINATE_SUBJECTS})(?:['’][a-z]+)?\b)"
"""The conjunction, up to its subject."""
_SUBORDINATE_START = re.compile(_SUBORDINATE, re.IGNORECASE)
_CLAUSE = re.compile(
    r"[,;:.!?]+\s+|\s+[—–-]+\s+|\s+(?:and then|then|and)\s+|[,;:!?]+$"
    rf"|\s+(?={_SUBORDINATE})",
    re.IGNORECASE,
)
# Quoted text: 'release freeze', "Q3 offsite ideas", “...”; an apostrophe inside a word (don't, Jonas's) is not a quote.
_QUOTED = re.compile(r"""(?<!\w)(?:'([^'\n]+)'|"([^"\n]+)"|“([^”\n]+)”|‘([^’\n]+)’|`([^`\n]+)`)(?!\w)""")
# "remember that I ...", "forget that the freeze ...": a "that" followed by a subject opens the payload.
_COMPLEMENT_SUBJECTS = _SUBJECTS | _PRONOUNS | frozenset(
    "he she they our your his her their nobody everybody everyone somebody someone anybody anyone nothing "
    "no".split()
)
_COMPLEMENT_REACH = 4
"""How far past a clause's courtesy (in words) its "that" may stand and still open the payload ("could you note
down for me that")."""
# "what did I say about the freeze", "forget everything regarding Jonas": what follows is what the request is about.
_TOPIC = frozenset("about regarding concerning re".split())


@attrs.frozen
class Clause:
    """One clause of a request: the words that ask for something, and its payload.

    The payload is what the request hands over rather than what it asks for: quoted text, what follows a "that"
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
    if colon and tail.strip():
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
        if out and _subordinate(part):
            # "... so you stop saying Tuesday": why or when the clause before asks, so what it hands over.
            last = out[-1]
            out[-1] = Clause(last.ask, f"{last.payload} {part}".strip())
            continue
        quoted = [next(g for g in m.groups() if g is not None) for m in _QUOTED.finditer(part)]
        rest = _QUOTED.sub(" ", part) if quoted else part
        ask, payload = rest, " ".join(quoted)
        words = list(_WORD.finditer(rest))
        lowered = [w.group().lower().replace("’", "'") for w in words]
        start, courteous = _skip_opening(lowered)
        verb, question = _verb_after(lowered, start, courteous)
        # "about ..." is what an ask is about; in a statement it is part of its subject ("that thing about the
        # DB isn't true anymore"), whose predicate follows.
        topical = verb is not None or question or courteous
        for number, match in enumerate(words[: start + _COMPLEMENT_REACH + 1]):
            word = lowered[number]
            nxt = lowered[number + 1] if number + 1 < len(words) else ""
            if number and ((word == "that" and nxt in _COMPLEMENT_SUBJECTS) or (word in _TOPIC and nxt and topical)):
                ask, payload = rest[: match.start()], f"{payload} {rest[match.end():]}".strip()
                break
        if not _WORD.search(ask):
            ask, payload = payload, ""
        if _WORD.search(ask):
            out.append(Clause(ask.strip(), payload.strip()))
        if len(out) == 12:
            break
    return out


def _subordinate(part: str) -> bool:
    """Whether ``part`` is a subordinate clause: a conjunction and its subject, then no ask ("so you can forget it"
    asks: "you can" is courtesy)."""
    start = _SUBORDINATE_START.match(part)
    if start is None:
        return False
    rest = [w.lower().replace("’", "'") for w in _WORD.findall(part[start.end():])]
    return not _skip_opening(rest)[1]


def asks(text: str, is_action: Callable[[str], bool] | None = None,
         is_phrase: Callable[[str], bool] | None = None) -> bool:
    """Whether a clause asks for something (an action verb, a question) rather than states it: "I like answers
    with code first" states; "save a preference", "what did I say" and "could you forget it" ask. With
    ``is_action`` (whether some tool states a word as its action), a clause's first word is its verb only if it is
    one: "hotfix branches are cut from release" states."""
    verb, question, _ = _clause_verb([w.lower().replace("’", "'") for w in _WORD.findall(text)])
    if question or (verb is not None and (is_action is None or is_action(verb))):
        return True
    return is_phrase is not None and any(is_phrase(p) for p in phrases(text))


def _asks_all(ask: str) -> bool:
    """Whether a clause's ask wants all of something: "all", "every", "everything" ... among its first words past
    its courtesy ("show all my memories", "could you tell me every preference"), not in what it hands over ("...
    every night")."""
    words = [w.lower().replace("’", "'") for w in _WORD.findall(ask)]
    start, _ = _skip_opening(words)
    return any(w in _EVERYTHING for w in words[: start + _ALL_REACH])


_ALL_REACH = 4


def _skip_opening(words: list[str]) -> tuple[int, bool]:
    """Where a clause's words start after its courtesy and framing ("hey, could you please ..."), and whether an
    ask form ("could you") was among it."""
    i = 0
    while i < len(words) and words[i] in _OPENERS:
        i += 1
    asked = False
    for ask in _ASKS_LONGEST_FIRST:
        if tuple(words[i : i + len(ask)]) == ask:
            i += len(ask)
            asked = True
            break
    while i < len(words) and words[i] in _OPENERS:
        i += 1
    return i, asked


def _clause_verb(words: list[str]) -> tuple[str | None, bool, bool]:
    """The action verb of one clause, whether the clause asks a question, and whether an ask form ("could you")
    was among its courtesy."""
    i, asked = _skip_opening(words)
    verb, question = _verb_after(words, i, asked)
    return verb, question, asked


_STATING_SUBJECTS = frozenset("i i'm i've i'd i'll we we're we've we'd we'll".split())
_STATING_AUX = frozenset("am was were have had has been do did really just also still so".split())


def _stated_verb(words: list[str]) -> str | None:
    """The verb of a clause that states something of the speaker ("I'm looking for ...", "we need ...")."""
    i, _ = _skip_opening(words)
    if i >= len(words) or words[i] not in _STATING_SUBJECTS:
        return None
    i += 1
    while i < len(words) and words[i] in _STATING_AUX:
        i += 1
    return words[i] if i < len(words) and words[i] not in _PRONOUNS else None


def _verb_after(words: list[str], i: int, asked: bool) -> tuple[str | None, bool]:
    """The verb and question of a clause whose courtesy ends before ``words[i]``."""
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
    if not asked and first in _WH and i + 1 < len(words) and words[i + 1] in _CLAUSE_SUBJECTS:
        # "when you write release notes ...", "what you've got about X is out of date": a question word followed
        # by its subject opens a subordinate clause; it decides nothing (a request no clause decides is a
        # question if it ends with "?": "what you got on me?").
        return None, False
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
        if verb is not None and words[j - 1] in _BE and _PARTICIPLE.fullmatch(verb):
            # "what is stored about ...", "what was decided": passive, it asks what is in that state.
            verb = None
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


# How chat spells some function words: read as the words, so "wat did u save" is a question like "what did you
# save" and says the phrase "what did you save".
_CHAT_SPELLINGS = {"u": "you", "ur": "your", "wat": "what", "wut": "what", "plz": "please", "pls": "please",
                   "abt": "about", "cuz": "because", "bc": "because", "whats": "what is"}
_CHAT_WORD = re.compile(r"(?<![\w'’-])(" + "|".join(_CHAT_SPELLINGS) + r")(?![\w'’-])", re.IGNORECASE)
_WH_IS = re.compile(r"(?<![\w'’-])(what|who|where|how|when|which)['’]s(?![\w'’-])", re.IGNORECASE)


def unchatted(text: str) -> str:
    """``text`` with chat spellings of function words written out ("wat did u save" -> "what did you save")."""
    text = _WH_IS.sub(lambda m: f"{m.group(1)} is", text)
    return _CHAT_WORD.sub(lambda m: _CHAT_SPELLINGS[m.group(1).lower()], text)


PHRASE_MARK = "\x1e"
"""Joins the words of a phrase into one index term; never produced by analysis."""


def without(text: str, phrase_terms: list[str]) -> str:
    """``text`` with every occurrence of the given phrases (as ``phrase_term`` joins them) blanked out."""
    spans = _phrase_spans(text[:2000])
    lowered = [word for word, _ in spans]
    cut: set[tuple[int, int]] = set()
    for term in phrase_terms:
        sequence = term.split(PHRASE_MARK)
        size = len(sequence)
        for i in range(len(lowered) - size + 1):
            if lowered[i : i + size] == sequence:
                cut.update(span for _, span in spans[i : i + size])
    if not cut:
        return text
    out: list[str] = []
    end = 0
    for start, stop in sorted(cut):
        out += [text[end:start], " "]
        end = stop
    return "".join(out) + text[end:]


_PHRASE_LENGTHS = range(2, 6)


_NOT = re.compile(r"(\w+)n't")


def _phrase_spans(text: str) -> list[tuple[str, tuple[int, int]]]:
    """The words of ``text`` as a phrase reads them, each with where it stands: lower-cased, and a negation's
    "n't" as the word "not" ("isn't" -> is, not; "can't" -> can, not), so "not true anymore" is said by "that
    isn't true anymore" and "don't forget" by "do not forget"."""
    out: list[tuple[str, tuple[int, int]]] = []
    for match in _WORD.finditer(text):
        word = match.group().lower().replace("’", "'")
        negated = _NOT.fullmatch(word)
        if negated is None:
            out.append((word, match.span()))
        else:
            base = negated.group(1)
            out += [(NEGATION_BASES.get(base, base), match.span()), ("not", match.span())]
    return out


def phrase_words(text: str) -> list[str]:
    """The words of a keyword phrase as written, lower-cased, a negation's "n't" as "not": "Keep in mind" -> keep,
    in, mind; "Don't forget" -> do, not, forget."""
    return [word for word, _ in _phrase_spans(text)]


def phrase_term(words: list[str]) -> str:
    return PHRASE_MARK.join(words)


def phrases(text: str) -> list[str]:
    """Every run of 2 to 5 consecutive words of ``text`` (its first 64 words) as a phrase term: what a declared
    phrase can match."""
    words = phrase_words(text[:2000])[:64]
    return list(dict.fromkeys(
        phrase_term(words[i : i + n]) for n in _PHRASE_LENGTHS for i in range(len(words) - n + 1)
    ))


_LEADING = re.compile(r"\s*([^\W\d_]+)(?:\s*\(([^()]{1,80})\))?")


def leading_verbs(description: str) -> str:
    """The word a tool's description opens with, and the words of a parenthesis right after it: the tool's own
    statement of what it does ("Forget (delete, remove) a memory ..." -> "Forget delete remove")."""
    match = _LEADING.match(description)
    if match is None:
        return ""
    return f"{match.group(1)} {match.group(2) or ''}".strip()
