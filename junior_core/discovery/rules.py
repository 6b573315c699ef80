"""Every English word list discovery reads: how a request is parsed (``query``) and which words are not searched
for (``text``). Data only; the code that reads each list says what it does with it.
"""

from __future__ import annotations

__all__ = [
    "ASKS",
    "AUX",
    "BE",
    "CHAT_SPELLINGS",
    "CLAUSE_SUBJECTS",
    "COMPLEMENT_SUBJECTS",
    "EVERYTHING",
    "EXTRA_STOP_WORDS",
    "FILLER_STOP_WORDS",
    "IF",
    "LIGHT_VERBS",
    "NEGATIONS",
    "NEGATION_BASES",
    "OPENERS",
    "PRONOUNS",
    "REPORT_VERBS",
    "STATING_AUX",
    "STATING_SUBJECTS",
    "SUBJECTS",
    "SUBORDINATE_SUBJECTS",
    "SUBORDINATORS",
    "TOPIC",
    "WH",
]

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

NEGATIONS = frozenset("don't dont never not".split())

# Subjects that make "what/when/how ..." a subordinate clause rather than a question.
CLAUSE_SUBJECTS = frozenset("you i we they he she you've you're i've i'm we've we're they've they're".split())

# "tell me what ...", "check whether ...": a question put as a request.
REPORT_VERBS = frozenset("tell show remind let check see".split())

IF = frozenset("whether if".split())

BE = frozenset("is are was were".split())

LIGHT_VERBS = frozenset("make get take have give put".split())

EVERYTHING = frozenset("all every everything entire whole complete full".split())

PRONOUNS = frozenset("i i'm i've i'd i'll my me we we're our us he she they it it's this that the a an".split())

# A subordinating conjunction before a subject opens a subordinate clause (``query``).
SUBORDINATORS = "so|because|since|unless|until|although|though|while|whereas|as soon as|once"

SUBORDINATE_SUBJECTS = "you|i|we|they|he|she|it|people|everyone|everybody|someone|somebody|anyone|anybody|nobody"

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
