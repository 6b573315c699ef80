"""Typos in a request, corrected against the tools' words ("pls rember" -> remember).

The index keeps the tools' words as written (``vocabulary``) in a Whoosh field, ``words``. A request word is
corrected only if it could be a typo (``candidates``: letters only, 4 or more, not a name, not CJK, not a stop
word), no tool uses it or its stem, nor the reference catalog (``known``: "saying" is not "saving"), English does
not know it (``english``: "internal" is not "interval"), and one correction is clearly best (``Speller.suggest``).
A short word (4-5 letters) may have a letter missing or two neighbours swapped; a long one (6+) also one letter
wrong or extra, or two missing ("rember"): one letter wrong or extra turns one short English word into another
("gave"/"game"). Candidates keep the first letter; the nearest win; among equals, the one twice as many tools use
as the next, else none. A word of 3+ letters that is one stop word with two neighbours swapped is read as that
word first ("taht" -> that): a request's grammar is read from stop words. A corrected word counts less
(``RankingConfig.typo_weight``) and the answer says what was searched for.
"""

from __future__ import annotations

import functools
import logging
import re
import threading
import weakref
from collections.abc import Callable, Container, Iterable, Iterator
from typing import TYPE_CHECKING, Any

import attrs

from junior_core._discovery.analysis import has_unspaced, split_identifier

if TYPE_CHECKING:
    from junior_core._discovery.settings import RankingConfig

__all__ = ["FIELD", "Correction", "Speller", "candidates", "correct", "english", "vocabulary", "with_vocabulary"]

log = logging.getLogger("junior.search")

FIELD = "words"
"""The Whoosh field holding the vocabulary: each word once, as one posting of the last document."""
_CHUNK = re.compile(r"\S+")
_EDGE = "\"'`“”‘’()[]{}<>,;:.!?*"


@functools.cache
def english(count: int = 500) -> frozenset[str]:
    """English words, lower-case: those pyspellchecker's English frequency list (``spellchecker/resources/
    en.json.gz``, MIT) saw at least ``count`` times, read once per count (0.2 s). Without it: empty, one log line."""
    import gzip
    import json
    from importlib.resources import files

    try:
        data = json.loads(gzip.decompress(files("spellchecker").joinpath("resources", "en.json.gz").read_bytes()))
    except (ImportError, OSError, ValueError) as exc:
        log.warning("the English word list (pyspellchecker) could not be read (%s): spelling and rarity go by the "
                    "tools' words alone", exc)
        return frozenset()
    return frozenset(word for word, seen in data.items() if isinstance(seen, int) and seen >= count)


def vocabulary(raws: Iterable[str], stop_words: frozenset[str]) -> list[str]:
    """The words a request can be corrected to, from the raw tokens of the indexed text: identifier parts,
    lower-cased, letters only, 3 letters or more, no stop words."""
    words = {part.lower() for raw in raws
             for part in (split_identifier(raw) if not raw.isalpha() or not raw.islower() else (raw,))}
    return sorted(w for w in words if len(w) >= 3 and w.isalpha() and w not in stop_words and not has_unspaced(w))


def with_vocabulary(documents: Iterable[dict[str, Any]], words: Callable[[], list[str]]) -> Iterator[dict[str, Any]]:
    """``documents`` with the vocabulary (asked for once all are analysed) added to the last one."""
    last: dict[str, Any] | None = None
    for fields in documents:
        if last is not None:
            yield last
        last = fields
    if last is not None:
        yield {**last, FIELD: [(word, 1.0) for word in words()]}


@attrs.frozen
class Correction:
    """A request with its typos corrected: the text searched, what was changed, and which terms came from a fix."""

    text: str
    fixes: tuple[tuple[str, str], ...] = ()
    """``(as written, searched for)`` per corrected word, in the request's order."""
    weak: frozenset[str] = frozenset()
    """Index terms only corrected words gave the request: they weigh ``weight``."""
    weight: float = 1.0

    def boost(self, term: str) -> float:
        """How much ``term`` counts: less when only a corrected word put it in the request."""
        return self.weight if term in self.weak else 1.0


class Speller:
    """Corrections against one index's vocabulary: its words, their stems (a word with a known stem is known:
    "memorys"), and each word with one letter (not the first) left out, so candidates are a few lookups."""

    def __init__(self, words: Iterable[str], frequency: Callable[[str], int],
                 analyze: Callable[[str], list[str]]) -> None:
        self.words = frozenset(words)
        self.frequency = frequency
        self.analyze = analyze
        self.stems = frozenset(term for word in self.words for term in analyze(word))
        self.shortened: dict[str, list[str]] = {}
        self.by_shape: dict[tuple[str, int], list[str]] = {}
        for word in sorted(self.words):
            self.by_shape.setdefault((word[0], len(word)), []).append(word)
            for i in range(1, len(word)):
                self.shortened.setdefault(word[:i] + word[i + 1 :], []).append(word)

    def knows(self, word: str, terms: Iterable[str]) -> bool:
        """Whether ``word`` (lower-case, with its index ``terms``) or its stem is one of the tools' words."""
        return word in self.words or any(term in self.stems for term in terms)

    def suggest(self, word: str, ratio: float, long: bool) -> str | None:
        """The one clearly best correction of ``word`` (the module's rules; ``long``: a long word's), or None."""
        near = self._within_one(word, long)
        if not near and long:  # two letters missing: "rember" -> remember
            near = [w for w in self.by_shape.get((word[0], len(word) + 2), ()) if _holds(w, word)]
        # Words of one stem ("list", "lists") are one correction, not a tie.
        near = list({tuple(self.analyze(w)): w for w in reversed(near)}.values())
        if len(near) <= 1:
            return near[0] if near else None
        ranked = sorted(((self.frequency(w), w) for w in near), key=lambda item: (-item[0], item[1]))
        (best_count, best), (next_count, _) = ranked[0], ranked[1]
        return best if best_count >= ratio * max(next_count, 1) else None

    def _within_one(self, word: str, long: bool) -> list[str]:
        """Words one edit from ``word`` that keep its first letter (a letter wrong or extra only in a long word)."""
        found = set(self.shortened.get(word, ()))  # a letter missing
        for i in range(1, len(word)):
            less = word[:i] + word[i + 1 :]
            if long and less in self.words:
                found.add(less)  # a letter extra
            found.update(other for other in self.shortened.get(less, ())
                         if len(other) == len(word) and _one_apart(word, other, long))
        return sorted(found)


def _function_word(word: str, analyze: Callable[[str], list[str]]) -> str | None:
    """The one stop word ``word`` becomes with two neighbouring letters (not the first) swapped, or None."""
    found = {swapped for i in range(1, len(word) - 1)
             if (swapped := word[:i] + word[i + 1] + word[i] + word[i + 2 :]) != word and not analyze(swapped)}
    return found.pop() if len(found) == 1 else None


def _one_apart(word: str, other: str, wrong_letter: bool) -> bool:
    """Whether two words of one length differ by two neighbours swapped, or (``wrong_letter``) by one letter."""
    diffs = [i for i, (a, b) in enumerate(zip(word, other, strict=True)) if a != b]
    if len(diffs) == 2:
        i, j = diffs
        return j == i + 1 and word[i] == other[j] and word[j] == other[i]
    return len(diffs) == 1 and wrong_letter


def _holds(longer: str, shorter: str) -> bool:
    """Whether ``shorter``'s letters appear in ``longer`` in order."""
    letters = iter(longer)
    return all(char in letters for char in shorter)


_spellers: weakref.WeakKeyDictionary[Any, Speller] = weakref.WeakKeyDictionary()
_spellers_lock = threading.Lock()


def _speller(key: Any, reader: Any, analyze: Callable[[str], list[str]]) -> Speller:
    """``key``'s index's speller, its vocabulary read once; a word's frequency is how many tools use its stem."""
    def frequency(word: str) -> int:
        return max((int(reader.doc_frequency("terms", term)) for term in analyze(word)), default=0)

    with _spellers_lock:
        speller = _spellers.get(key)
        if speller is None:
            words = list(reader.field_terms(FIELD)) if FIELD in reader.indexed_field_names() else []
            speller = _spellers[key] = Speller(words, frequency, analyze)
        return speller


def candidates(query: str, min_length: int) -> Iterator[tuple[re.Match[str], str]]:
    """The words of ``query`` that may be corrected: each chunk's match, and its word as written."""
    sentence_start = True
    shouting = query.isupper()
    for match in _CHUNK.finditer(query):
        chunk = match.group()
        word = chunk.strip(_EDGE)
        starts, sentence_start = sentence_start, chunk[-1:] in ".!?"
        # Letters only: a URL, path, address, dotted name, identifier or number has other characters inside.
        if len(word) < min_length or not word.isalpha() or (not word.isascii() and has_unspaced(word)):
            continue
        if shouting or word.islower() or (starts and word[1:].islower()):  # not a name ("Lena") or "getWeather"
            yield match, word


def correct(key: Any, reader: Any, query: str, analyze: Callable[[str], list[str]], config: RankingConfig,
            known: Container[str] = ()) -> Correction:
    """``query`` with every word the index (``key``, ``reader``) does not know and can clearly correct replaced
    (call under the index's lock); a corrected word counts ``weight``, and 0 corrects nothing. A word with a term
    in ``known`` (the reference catalog's) is a word, not a typo."""
    weight = config.typo_weight
    if weight <= 0:
        return Correction(query)
    fixes: list[tuple[re.Match[str], str, str]] = []
    speller: Speller | None = None
    for match, word in candidates(query[: config.request_chars], config.swapped_stop_length):
        lower = word.lower()
        terms = analyze(lower)
        if not terms:
            continue  # a stop word
        speller = speller or _speller(key, reader, analyze)
        if speller.knows(lower, terms) or any(t in known for t in terms) or lower in english(config.english_count):
            continue  # a word some tool uses, or another form of one ("memorys", "logs"), or an English word
        fixed = _function_word(lower, analyze)
        if fixed is None and len(lower) >= config.typo_length:
            fixed = speller.suggest(lower, config.typo_ratio, len(lower) >= config.typo_long)
        if fixed is not None:
            fixes.append((match, word, fixed))
    if not fixes:
        return Correction(query)
    text = query
    for match, word, fixed in reversed(fixes):
        start = match.start() + match.group().index(word)
        text = text[:start] + fixed + text[start + len(word) :]
    kept = set(analyze(query))  # a term the request also has as written keeps its full weight
    weak = frozenset(term for _, _, fixed in fixes for term in analyze(fixed) if term not in kept)
    return Correction(text, tuple((word, fixed) for _, word, fixed in fixes), weak, weight)
