"""Passive extraction: an extractor proposes memories from a finished turn, and a strict gate decides."""

from __future__ import annotations

import functools
import hashlib
import json
import logging
import re
from collections.abc import Callable, Iterable, Sequence
from typing import Any, Protocol, runtime_checkable

import attrs

from junior_core import Actor, Message, ToolContext, ToolError
from junior_memory.content import check_content, content_hash
from junior_memory.rules import STOP_WORDS
from junior_memory.scope import KINDS, Kind, Scope, personal_scope, write_scope

__all__ = [
    "FRAMING", "MAX_PER_TURN", "NEGATIONS", "Candidate", "MemoryExtractor", "accept", "dropped_negation",
    "foreign_words", "skip_reason", "turn_key",
]

log = logging.getLogger("junior.memory")

MAX_PER_TURN = 5


def _indices(value: Iterable[int]) -> tuple[int, ...]:
    return tuple(value)


@attrs.frozen
class Candidate:
    """A memory an extractor proposes.

    ``cites`` are indices into the turn's transcript of the messages it rests on; ``about_speaker`` is the
    extractor's claim that a preference is the speaker's own, said about themself. ``replaces`` (the id, an id
    prefix, or words of one of the speaker's own preferences) proposes that this preference supersedes it.
    """

    content: str
    kind: Kind
    cites: tuple[int, ...] = attrs.field(converter=_indices)
    about_speaker: bool = False
    replaces: str | None = None


@runtime_checkable
class MemoryExtractor(Protocol):
    """Turns a finished turn's transcript into candidate memories (model-backed, or scripted in tests)."""

    def extract(self, transcript: Sequence[Message], context: ToolContext) -> Iterable[Candidate]: ...


def _used_memory_tool(message: Message) -> bool:
    name = message.tool_name or ""
    if name.startswith("memory__"):
        return True
    args = message.arguments
    return name == "executeTool" and isinstance(args, dict) and str(args.get("tool_name", "")).startswith("memory__")


def skip_reason(transcript: Sequence[Message], context: ToolContext) -> str | None:
    """Why this turn gets no extraction at all, or None."""
    conversation = context.conversation
    if conversation is None:
        return "no conversation"
    if conversation.visibility != "public":
        return "private conversation"
    if conversation.source_key is None:
        return "no source_key"
    if any(m.role == "tool" and _used_memory_tool(m) for m in transcript):
        return "the turn already used a memory tool"
    return None


def _speakers(transcript: Sequence[Message]) -> set[Actor]:
    return {m.actor for m in transcript if m.role == "user" and m.actor is not None}


# Scripts written without spaces between words: a run of them is compared by overlapping character pairs.
_UNSPACED = (
    (0x0E00, 0x0EFF),  # Thai, Lao
    (0x1000, 0x109F),  # Myanmar
    (0x1100, 0x11FF),  # Hangul Jamo
    (0x1780, 0x17FF),  # Khmer
    (0x2E80, 0x9FFF),  # CJK radicals, kana, CJK ideographs
    (0xA960, 0xA97F),  # Hangul Jamo extended
    (0xAC00, 0xD7FF),  # Hangul syllables
    (0xF900, 0xFAFF),  # CJK compatibility ideographs
    (0xFF66, 0xFF9F),  # half-width katakana
    (0x20000, 0x3FFFF),  # CJK extensions
)
_WORD = re.compile(r"[^\W_]+")
# Words an extractor may add to frame what the speaker said ("We deploy on Tuesdays" -> "The team deploys on
# Tuesdays", "I like tabs" -> "Prefers tabs"). None can carry a fact, a number or a name of its own.
FRAMING = frozenset("team teams everyone thinks prefers likes".split())


def _unspaced(char: str) -> bool:
    code = ord(char)
    return any(low <= code <= high for low, high in _UNSPACED)


def _tokens(text: str) -> tuple[list[str], list[str]]:
    """``(words, pairs)``: words of spaced scripts, and character pairs of unspaced runs (a lone character alone)."""
    words: list[str] = []
    pairs: list[str] = []
    for match in _WORD.finditer(text.casefold()):
        run = match.group()
        start = 0
        for index in range(1, len(run) + 1):
            if index < len(run) and _unspaced(run[index]) == _unspaced(run[start]):
                continue
            part = run[start:index]
            if _unspaced(part[0]):
                pairs.extend([part[i:i + 2] for i in range(len(part) - 1)] or [part])
            else:
                words.append(part)
            start = index
    return words, pairs


@functools.cache
def _stemmer() -> Callable[[str], str]:
    # The stemmer discovery indexes with (Whoosh's Snowball English, that is Porter2): "prefers" and "prefer"
    # are one word, "admin" and "admit", "public" and "publish" are not.
    from whoosh.lang.snowball.english import EnglishStemmer

    return functools.lru_cache(maxsize=4096)(EnglishStemmer().stem)


def _stem(word: str) -> str:
    return word if any(c.isdigit() for c in word) else _stemmer()(word)  # 02 and 0200 are different times


def foreign_words(content: str, said: str) -> list[str]:
    """The words of ``content`` that ``said`` does not contain: any one of them means the memory is not the
    speaker's.

    A word without digits matches a word of the same stem (prefer/prefers, by the stemmer discovery uses); a
    word with a digit (a number, an id, an account) must appear exactly; stop words and ``FRAMING`` words are
    free. Runs of unspaced scripts are compared by character pairs, every one of which must appear.
    """
    words, pairs = _tokens(content)
    said_words, said_pairs = _tokens(said)
    exact, said_pair_set = set(said_words), set(said_pairs)
    stems = {_stem(word) for word in exact}
    missing = [
        w for w in words
        if w not in STOP_WORDS and w not in FRAMING and w not in exact and _stem(w) not in stems
    ]
    missing += [p for p in pairs if p not in said_pair_set]
    return missing


# Words that turn a statement around. A contraction ending in n't counts too; so do these characters in
# unspaced scripts (不 没 別 别 勿: not, have not, don't).
NEGATIONS = frozenset(
    """not no never nor neither none nobody nothing nowhere without cannot dont doesnt didnt isnt arent wasnt
    werent wont cant couldnt shouldnt mustnt neednt nicht nie niemals kein keine keinen nie ne pas jamais nunca
    nada ni не нет никогда ни""".split()
)
_NEGATING_CHARS = frozenset("不没沒別别勿")
_WORD_WITH_APOSTROPHE = re.compile(r"[^\W_]+(?:['’][^\W_]+)*")
_SENTENCE_END = re.compile(r"[.!?;:。！？；]+(?:\s|$)|\n+")


def _negations(text: str) -> int:
    count = sum(c in _NEGATING_CHARS for c in text)
    for word in _WORD_WITH_APOSTROPHE.findall(text.casefold()):
        if word in NEGATIONS or word.endswith(("n't", "n’t")):
            count += 1
    return count


def dropped_negation(content: str, said: str) -> str | None:
    """The source sentence's negation the candidate leaves out, or None.

    The source sentence is the one of ``said`` sharing the most word stems with ``content`` (every such
    sentence, on a tie); a candidate must hold at least as many negations as it does: "Never send vendor
    payments to ..." cannot become "Send vendor payments to ...".
    """
    stems = {_stem(w) for w in _tokens(content)[0] if w not in STOP_WORDS}
    if not stems:
        return None
    overlaps: list[tuple[int, str]] = []
    for sentence in _SENTENCE_END.split(said):
        shared = len(stems & {_stem(w) for w in _tokens(sentence)[0]})
        if shared:
            overlaps.append((shared, sentence))
    if not overlaps:
        return None
    best = max(shared for shared, _ in overlaps)
    held = _negations(content)
    for shared, sentence in overlaps:
        if shared == best and _negations(sentence) > held:
            return sentence.strip()
    return None


def _admit(candidate: Any, transcript: Sequence[Message], context: ToolContext) -> tuple[str, Scope] | str:
    """The content and scope to store, or why the candidate is dropped.

    Only what the speaking user wrote is a source: every cited message must be one of theirs, and every word,
    number and id of the memory must appear in them, however few others are mixed in. Tool results (a fetched
    page, an issue body), the assistant's text and other people's messages are context the extractor may read,
    never what a memory rests on.
    """
    if not isinstance(candidate, Candidate):
        return f"not a Candidate: {type(candidate).__name__}"
    if candidate.kind not in KINDS:
        return f"unknown kind {candidate.kind!r}"
    try:
        content = check_content(candidate.content)
    except ToolError as exc:
        return exc.message
    speaker = context.actor
    if speaker is None:
        return "no actor in context: nobody is speaking, so nothing is theirs to keep"
    cited = []
    for index in candidate.cites:
        if not isinstance(index, int) or isinstance(index, bool) or not 0 <= index < len(transcript):
            return f"cites message {index!r}, which is not in the turn"
        cited.append(transcript[index])
    if not cited:
        return "cites no message"
    if not all(m.role == "user" and m.actor == speaker for m in cited):
        return "cites a message the speaker did not write (a tool result, the assistant or another person)"
    said = "\n".join(m.text for m in cited)
    foreign = foreign_words(content, said)
    if foreign:
        return f"{len(foreign)} of its words are not in what the speaker wrote"
    if dropped_negation(content, said) is not None:
        return "it leaves out a negation of the sentence it comes from (never, not, don't...): the meaning flips"
    if not _tokens(content)[0] and not _tokens(content)[1]:
        return "has no words"
    if candidate.replaces is not None and candidate.kind != "preference":
        # Shared memories change only when someone asks: a turn's gist must not overwrite the team's.
        return f"only a preference may replace a memory, not a {candidate.kind}"
    if candidate.replaces is not None and not candidate.replaces.strip():
        return "replaces is empty"
    if candidate.kind == "preference":
        speakers = _speakers(transcript)
        if len(speakers) != 1:
            return f"a preference needs exactly one speaker in the turn, found {len(speakers)}"
        if speakers != {speaker}:
            return "the turn's speaker is not the context's actor"
        if not candidate.about_speaker:
            return "a preference must be the speaker's own, said about themself"
        return content, personal_scope(speaker.key)
    try:
        return content, write_scope(candidate.kind, context)
    except ToolError as exc:
        return exc.message


def accept(
    candidates: Iterable[Any], transcript: Sequence[Message], context: ToolContext
) -> list[tuple[Candidate, str, Scope]]:
    """The candidates that pass the gate (at most ``MAX_PER_TURN``, no duplicates), with content and scope."""
    kept: list[tuple[Candidate, str, Scope]] = []
    seen: set[tuple[str, str, str]] = set()
    for candidate in candidates:
        admitted = _admit(candidate, transcript, context)
        if isinstance(admitted, str):
            log.info("memory extraction dropped a candidate: %s", admitted)
            continue
        content, scope = admitted
        key = (scope.scope_key, candidate.kind, content_hash(content))
        if key in seen:
            continue
        seen.add(key)
        kept.append((candidate, content, scope))
        if len(kept) == MAX_PER_TURN:
            break
    return kept


def turn_key(transcript: Sequence[Message]) -> str:
    """A digest of the turn, so re-running extraction on the same turn writes nothing new."""
    parts = [
        [m.role, m.text, m.actor.key if m.actor else None, m.tool_name]
        for m in transcript
    ]
    return hashlib.sha256(json.dumps(parts, ensure_ascii=False).encode("utf-8")).hexdigest()[:24]
