"""The search floor: which of a query's words a memory holds, and whether they are enough to call it a match.

Full-text search answers a memory that shares any one word of the query, so "admin password rotation schedule"
finds "I'm on the Lisbon office schedule". The floor weighs each query word by how rare it is among the memories
visible here (the BM25 inverse document frequency; a word no memory holds weighs as much as the rarest one that
one memory holds) and keeps a memory only when the words it holds carry more than half of the query's weight, or
when it holds at least two of the query's words carrying at least a quarter of it. So a memory sharing one word
of a multi-word query is no match unless that word outweighs the rest (a rare name beside common words), while
one holding the query's telling words is, however many common words it misses. Words are compared by their
Snowball English stems, as Postgres's ``english`` configuration does.

Semantic candidates pass the same floor when they hold any of the query's telling words: a shared word is also what
makes an unrelated memory look similar ("Jenkins pipeline" and a data-pipeline note). A memory that holds none of
them is judged by its similarity alone: a paraphrase, or one holding only words that at least half the memories
visible here hold (a speaker's name in notes that each name who said them), which tell none of them apart.

Recall reads the user's message, not a query: there, a word that no memory here holds weighs nothing, since the
rest of a message is conversation. The floor then judges a memory by the message's words that memories hold.
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

import attrs

if TYPE_CHECKING:
    from junior_memory.rules import MemoryRecord

__all__ = ["COMMON", "HALF", "QUARTER", "Found", "Hit", "holds", "passes", "share", "stems", "telling", "weights"]

_WORD = re.compile(r"[^\W_]+")
# The share of the query's weight a memory must hold: more than HALF alone, or QUARTER with two words or more.
HALF = 0.5
QUARTER = 0.25


@attrs.frozen
class Hit:
    """A memory found by a search: the query words it holds, its cosine similarity when semantic, its weight share."""

    record: MemoryRecord
    matched: tuple[str, ...]
    similarity: float | None = None
    share: float = 0.0


@attrs.frozen
class Found:
    """What a search found above the floor, and how many memories the caller can see (None when not counted)."""

    hits: list[Hit]
    visible: int | None


@functools.lru_cache(maxsize=1)
def _stemmer() -> object:
    import snowballstemmer  # type: ignore[import-untyped]

    return snowballstemmer.stemmer("english")


@functools.lru_cache(maxsize=8192)
def _stem(word: str) -> str:
    return str(_stemmer().stemWord(word))  # type: ignore[attr-defined]


def stems(text: str) -> frozenset[str]:
    """The stems of every word of ``text``, lower-cased."""
    return frozenset(_stem(word) for word in _WORD.findall(text.casefold()))


def holds(terms: Sequence[str], content: str) -> tuple[str, ...]:
    """The query ``terms`` whose stem is among the stems of ``content``, in the query's order."""
    held = stems(content)
    return tuple(term for term in terms if _stem(term) in held)


def weights(terms: Sequence[str], counts: Mapping[str, int], total: int, *, message: bool = False) -> dict[str, float]:
    """Each term's weight: its BM25 inverse document frequency over ``total`` memories, ``counts`` holding it.

    ``message``: the words are a user's message (recall), not a query; a word no memory holds weighs nothing.
    """
    out = {}
    for term in terms:
        if message and not counts.get(term, 0):
            # A message's other words are conversation ("which language should you answer me in?"), not a
            # query the memory must answer: only the words some memory here holds can tell memories apart.
            out[term] = 0.0
            continue
        # A word no memory holds is as telling as the rarest word one does: it cannot tell memories apart, and
        # weighing it more would let the filler words of a long message outweigh everything a memory holds.
        df = min(max(counts.get(term, 0), 1), max(total, 1))
        out[term] = math.log(1.0 + (max(total, 1) - df + 0.5) / (df + 0.5))
    return out


def share(matched: Sequence[str], weight: Mapping[str, float]) -> float:
    """The part of the query's weight that ``matched`` carries (1.0 for the whole query)."""
    whole = sum(weight.values())
    return sum(weight[term] for term in matched) / whole if whole > 0 else 0.0


# A word held by at least half the memories visible here (a speaker's name in a conversation's notes) tells none of
# them apart: BM25's idf of such a word is at most log 2 (the classic idf, without BM25's added one, is zero or less).
COMMON = math.log(2.0)


def telling(matched: Sequence[str], weight: Mapping[str, float]) -> tuple[str, ...]:
    """The words of ``matched`` that fewer than half the memories visible here hold: those that tell memories apart."""
    return tuple(term for term in matched if weight.get(term, 0.0) > COMMON)


def passes(matched: Sequence[str], weight: Mapping[str, float]) -> bool:
    """Whether a memory holding ``matched`` of the query's words (weighted by ``weight``) is a match at all."""
    if not matched:
        return False
    if sum(1 for w in weight.values() if w > 0) <= 1:
        return True
    part = share(matched, weight)
    return part > HALF or (len(matched) >= 2 and part >= QUARTER)
