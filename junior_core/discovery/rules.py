"""Every English word list and rule discovery reads, each under a named switch (``SWITCHES``): how a request is
parsed (``query``), which words are not searched for and how text becomes terms (``text``), and which rules order
and admit tools (``scoring``, ``index``). Data only; the code that reads each list says what it does with it.

A switch is on unless named in ``OFF``; ``switched_off`` turns some off for a while. Only the benchmarks' ablation
(``benchmarks/retrieval.py --ablate``, ``benchmarks/memory_intent.py --ablate``) does: it measures what each rule
pays. docs/discovery.md lists every switch with what its ablation measured.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

__all__ = [
    "ASKS",
    "AUX",
    "CHAT_SPELLINGS",
    "CLAUSE_SUBJECTS",
    "COMPLEMENT_SUBJECTS",
    "EVERYTHING",
    "EXTRA_STOP_WORDS",
    "FILLER_STOP_WORDS",
    "IF",
    "LIGHT_VERBS",
    "NEGATION_BASES",
    "OFF",
    "OPENERS",
    "PRONOUNS",
    "REPORT_VERBS",
    "STATING_AUX",
    "STATING_SUBJECTS",
    "SUBJECTS",
    "SWITCHES",
    "TOPIC",
    "WH",
    "on",
    "switched_off",
]

SWITCHES: dict[str, str] = {
    # The request's parse (``query``).
    "openers": "courtesy before the request (OPENERS: hey, please, just, ...) is skipped when reading its verb",
    "asks": "ask forms (ASKS: could you, I want you to, help me, ...) are skipped when reading its verb",
    "questions": "a clause opening with a question word or an auxiliary (WH, AUX, SUBJECTS) is a question, "
                 "its verb the one after the subject",
    "subordinate_wh": "a question word followed by its subject (CLAUSE_SUBJECTS: \"when you write ...\") decides "
                      "nothing",
    "report_verbs": "\"tell me what ...\", \"check whether ...\" (REPORT_VERBS, IF) are questions",
    "light_verbs": "after \"make, get, take ...\" (LIGHT_VERBS) the noun carries the action (\"make a note\")",
    "everything": "\"all, every, everything ...\" (EVERYTHING) near a clause's start asks for all: readers first, "
                  "listing tools before searching ones",
    "that_payload": "\"remember that I ...\": a \"that\" before a subject (COMPLEMENT_SUBJECTS) opens the payload",
    "about_payload": "\"what did I say about X\": X after a topic word (TOPIC) in an ask is payload",
    "colon_payload": "what follows a colon after an ask is its payload",
    "stated_verbs": "\"I'm looking for ...\" (STATING_SUBJECTS, STATING_AUX): a verb the speaker states admits "
                    "only tools named for it",
    "chat_spellings": "chat spellings of function words (CHAT_SPELLINGS: u, wat, pls) are read as the words",
    # Text analysis (``text``): these change the index's terms.
    "clitics": "English clitics come off their words (\"don't\" -> do; NEGATION_BASES: can't -> can)",
    "stop_words": "Whoosh's English stop list is not searched for",
    "extra_stop_words": "English function words and request fillers (EXTRA_STOP_WORDS) are not searched for",
    "stemming": "words are stemmed (Porter2, Whoosh's Snowball English)",
    "identifier_splitting": "camelCase, snake_case, kebab-case and digits split (the whole identifier kept too)",
    "cjk_ngrams": "runs of CJK characters become characters and character bigrams",
    # Ranking and the floor (``scoring``, ``index``, ``documents``).
    "leading_verbs": "the verb a tool's description opens with (and a parenthesis after it) is an action word of "
                     "the tool",
    "readers_first": "a question, or a verb only tools that do not write state, ranks writing tools after the rest",
    "source_competes": "a source one of whose tools a telling word admits competes with all its matching tools",
    "named_verbs_only": "a word in a verb's place admits past the floor only the tools whose name or keywords say it",
    "bound_phrases": "the words of a declared keyword phrase said whole count only for the tools declaring it",
    "long_descriptions": "toward the floor, one mention of a word in a long description counts less than one",
    "source_rarity": "a word's rarity counts the tools that hold it only through their source's id or description "
                     "once per source",
    "english_words": "a request word English knows (an English word list) is a word, never a typo, and counts "
                     "fully toward the floor though no tool uses it; else only a name or value (``unknown_weight``)",
}
"""Every rule's name and what it does while on."""

OFF: set[str] = set()
"""The switches turned off (only the ablation benchmarks turn any off)."""


def on(name: str) -> bool:
    """Whether rule ``name`` (a key of ``SWITCHES``) is on."""
    return name not in OFF


@contextlib.contextmanager
def switched_off(*names: str) -> Iterator[None]:
    """Turn the named rules off inside the block (an unknown name is an error)."""
    unknown = [name for name in names if name not in SWITCHES]
    if unknown:
        raise ValueError(f"unknown rule switch(es) {unknown}; known: {sorted(SWITCHES)}")
    before = set(OFF)
    OFF.update(names)
    try:
        yield
    finally:
        OFF.clear()
        OFF.update(before)


# Courtesy and framing before the request itself: "hey, could you please ..." -> "...".
OPENERS = frozenset("hey hi hello ok okay so now and also please pls kindly just quickly go ahead oh".split())

ASKS = (
    ("can", "you"), ("could", "you"), ("would", "you"), ("will", "you"), ("can", "i"), ("could", "i"),
    ("i", "want", "you", "to"), ("i", "need", "you", "to"), ("i'd", "like", "you", "to"),
    ("i", "would", "like", "you", "to"), ("i", "want", "to"), ("i", "need", "to"), ("i'd", "like", "to"),
    ("i", "would", "like", "to"), ("help", "me"), ("let's",), ("lets",), ("let", "us"), ("try", "to"),
    ("make", "sure", "to"), ("remember", "to"), ("you", "can"), ("you", "could"), ("would", "you", "mind"),
    ("do", "you", "mind"), ("is", "it", "possible", "to"), ("feel", "free", "to"),
)

WH = frozenset("what which who whom whose when where why how".split())

AUX = frozenset("do does did is are was were have has had".split())

SUBJECTS = frozenset("you i we there it anything something any".split())

# Subjects that make "what/when/how ..." a subordinate clause rather than a question.
CLAUSE_SUBJECTS = frozenset("you i we they he she you've you're i've i'm we've we're they've they're".split())

# "tell me what ...", "check whether ...": a question put as a request.
REPORT_VERBS = frozenset("tell show remind let check see".split())

IF = frozenset("whether if".split())

LIGHT_VERBS = frozenset("make get take have give put".split())

EVERYTHING = frozenset("all every everything entire whole complete full".split())

PRONOUNS = frozenset("i i'm i've i'd i'll my me we we're our us he she they it it's this that the a an".split())

# "remember that I ...", "forget that the freeze ...": a "that" followed by a subject opens the payload.
COMPLEMENT_SUBJECTS = SUBJECTS | PRONOUNS | frozenset(
    "he she they our your his her their nobody everybody everyone somebody someone anybody anyone nothing "
    "no".split()
)

# "what did I say about the freeze", "forget everything regarding Jonas": what follows is what the request is
# about.
TOPIC = frozenset("about regarding concerning re".split())

# "I'm looking for ...", "we need ...": a clause that states something of the speaker.
STATING_SUBJECTS = frozenset("i i'm i've i'd i'll we we're we've we'd we'll".split())

STATING_AUX = frozenset("am was were have had has been do did really just also still so".split())

# How chat spells some function words: read as the words, so "wat did u save" is a question like "what did you
# save" and says the phrase "what did you save".
CHAT_SPELLINGS = {"u": "you", "ur": "your", "wat": "what", "wut": "what", "plz": "please", "pls": "please",
                   "abt": "about", "cuz": "because", "bc": "because", "whats": "what is"}

NEGATION_BASES = {"ca": "can", "wo": "will", "sha": "shall"}
"""Bases of the negations that are not their word without "n't": can't, won't, shan't."""

# English function words and request fillers ("can you help me find ...") on top of Whoosh's list: they
# carry no tool meaning, yet match any description that happens to use them.
EXTRA_STOP_WORDS = frozenset(
    """i me my mine myself our ours he she they them their his her its what which who whom whose where how why
    do does did doing done was were been being has had having would could should shall might must am so than
    too very just also about into over out up any some all each every there here then these those please want
    need like let know help most more such only other same few both own again further once because while now""".split()
)

FILLER_STOP_WORDS = frozenset("find get show give tell provide make use using".split())
