"""Every English word list and rule discovery reads, each rule under a named switch (``SWITCHES``), on unless
named in ``OFF``. Only the ablation benchmarks turn one off (``switched_off``), to measure what it pays;
docs/discovery.md lists each with what its ablation measured."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

__all__ = ["AUX", "EXTRA_STOP_WORDS", "NEGATION_BASES", "OFF", "OPENERS", "PRONOUNS", "SUBJECTS", "SWITCHES", "TOPIC",
           "WH", "on", "switched_off"]

SWITCHES: dict[str, str] = {
    # The request's parse (``scoring``).
    "openers": "courtesy before the request (OPENERS: hey, please, just, ...) is skipped when reading its verb",
    "questions": "a clause opening with a question word or an auxiliary (WH, AUX, SUBJECTS) is a question, "
                 "its verb the one after the subject",
    "about_payload": "\"forget my preference about X\": X after a topic word (TOPIC) in a clause that asks is payload",
    # Text analysis (``analysis``): these change the index's terms.
    "clitics": "English clitics come off their words (\"don't\" -> do; NEGATION_BASES: can't -> can)",
    "stop_words": "Whoosh's English stop list is not searched for",
    "extra_stop_words": "English function words and request fillers (EXTRA_STOP_WORDS) are not searched for",
    "stemming": "words are stemmed (Porter2, Whoosh's Snowball English)",
    "identifier_splitting": "camelCase, snake_case, kebab-case and digits split (the whole identifier kept too)",
    "cjk_ngrams": "runs of CJK characters become characters and character bigrams",
    # Ranking and the floor (``scoring``, ``floor``, ``index``, ``documents``).
    "leading_verbs": "the verb a tool's description opens with (and a parenthesis after it) is an action word of "
                     "the tool",
    "readers_first": "a question, or a verb only tools that do not write state, ranks writing tools after the rest",
    "source_competes": "a source one of whose tools a telling word admits competes with all its matching tools",
    "named_verbs_only": "a word in a verb's place admits past the floor only the tools whose name or keywords say it",
    "long_descriptions": "toward the floor, one mention of a word in a long description counts less than one",
}
OFF: set[str] = set()


def on(name: str) -> bool:
    """Whether rule ``name`` (a key of ``SWITCHES``) is on."""
    return name not in OFF


@contextlib.contextmanager
def switched_off(*names: str) -> Iterator[None]:
    """Turn the named rules off inside the block (an unknown name is an error)."""
    if unknown := [name for name in names if name not in SWITCHES]:
        raise ValueError(f"unknown rule switch(es) {unknown}; known: {sorted(SWITCHES)}")
    before = set(OFF)
    OFF.update(names)
    try:
        yield
    finally:
        OFF.clear()
        OFF.update(before)


OPENERS = frozenset("hey hi hello ok okay so now and also please pls kindly just quickly go ahead oh".split())
WH = frozenset("what which who whom whose when where why how".split())
AUX = frozenset("do does did is are was were have has had".split())
SUBJECTS = frozenset("you i we there it anything something any".split())
TOPIC = frozenset("about regarding concerning".split())  # what follows says what the request is about, not the tool
PRONOUNS = frozenset("i i'm i've i'd i'll my me we we're our us he she they it it's this that the a an".split())
NEGATION_BASES = {"ca": "can", "wo": "will", "sha": "shall"}  # negations not their word without "n't"
# On top of Whoosh's stop list: words that carry no tool meaning yet match any description using them.
EXTRA_STOP_WORDS = frozenset(
    """i me my mine myself our ours he she they them their his her its what which who whom whose where how why
    do does did doing done was were been being has had having would could should shall might must am so than
    too very just also about into over out up any some all each every there here then these those please want
    need like let know help most more such only other same few both own again further once because while now""".split()
)
