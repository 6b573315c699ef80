"""Typos in a request, corrected against the words of the installed tools ("pls rember" -> remember).

The index keeps every word of the tools' text as written (lower-cased identifier parts of 3 letters or more,
stop words and words with digits left out) in a Whoosh field, ``words``: the vocabulary a request is spelled
against. A request word is corrected only when all of this holds:

- it could be a typo: 4 letters or more, letters only (no digits, ``_``, ``-`` or ``'``: identifiers, numbers
  and contractions stay as written), not part of a URL, path, address or dotted name, not capitalised inside a
  sentence (a name), not in an unspaced script, not a stop word;
- no tool uses it: neither the word nor its stem is among the tools' words, nor among the reference catalog's
  (``scoring.Reference``: "saying" is a word even where no tool says it, not a typo of "saving");
- English does not know it: it is not in ``english()``, an English word list ("internal" is a word, not a typo of
  "interval", in a catalog that holds "interval" and not "internal");
- one correction is clearly best. Candidates keep the word's first letter. A short word (4 or 5 letters) may have
  a letter missing or two neighbours swapped ("frget", "lsit"); a long one (6 or more) may also have one letter
  wrong or extra, or two letters missing ("memroy", "proceedure", "rember" -> remember). A letter wrong or extra
  in a short word is left alone: that is how one English word becomes another ("gave"/"game", "more"/"mode",
  "logo"/"log"), so a word the tools do not use is more likely meant than mistyped. The nearest candidates win
  (one edit before two); among several equally near, the one most tools use wins if at least twice as many
  tools use it as the next, else none does: a tie corrects nothing, and the request keeps its own word.

A word of 3 letters or more that no tool uses and that is exactly one stop word with two neighbouring letters (not
the first) swapped is read as that word, before any other correction ("taht" -> that, "cna" -> can): stop words
are not searched for, but a request's grammar is read from them ("can you save that our ...").

A corrected word then counts less than a word the request spelled right (``RankingConfig.typo_weight``), its
verb too, and the searchTools answer says what was searched for. The vocabulary is read from the index once,
the first time a request has a word to check (``Speller``); then a request whose words are all known costs a few
set lookups.
"""

from __future__ import annotations

import functools
import logging
import re
import threading
import weakref
from collections.abc import Callable, Container, Iterable, Iterator
from typing import Any

import attrs

from junior_core._discovery.analysis import has_unspaced, split_identifier

__all__ = ["FIELD", "Correction", "Speller", "correct", "english", "vocabulary", "with_vocabulary"]

log = logging.getLogger("junior.search")

FIELD = "words"
"""The Whoosh field holding the vocabulary: each word once, as one posting of the last document."""

MIN_LENGTH = 4
FUNCTION_LENGTH = 3
"""A word this long may be a stop word with two letters swapped ("teh", "cna")."""
LONG = 6
"""Words this long may also be two letters short or long."""

_CHUNK = re.compile(r"\S+")
_EDGE = "\"'`“”‘’()[]{}<>,;:.!?*"
_SENTENCE_END = ".!?"


@functools.cache
def english(count: int = 500) -> frozenset[str]:
    """English words, lower-case: the words of the English frequency list pyspellchecker ships (``spellchecker/
    resources/en.json.gz``, MIT) seen at least ``count`` times (``RankingConfig.english_count``; 26,157 words at
    500), read once per count, the first time it is needed (0.2 s). An install without it reads as an empty list
    (every word then unknown to English), with one log line."""
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
    words: set[str] = set()
    for raw in raws:
        for part in split_identifier(raw) if not raw.isalpha() or not raw.islower() else (raw,):
            word = part.lower()
            if len(word) >= 3 and word.isalpha() and word not in stop_words and not has_unspaced(word):
                words.add(word)
    return sorted(words)


def with_vocabulary(documents: Iterable[dict[str, Any]], words: Callable[[], list[str]]) -> Iterator[dict[str, Any]]:
    """``documents`` with the vocabulary added to the last one, asked for once every document is analysed (the
    field is a word list: which document holds it does not matter)."""
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
    """Corrections against one index's vocabulary, read from its ``words`` field once.

    Held in memory as the words, their stems (a request word with a known stem is known: "memorys"), and each
    word with one letter (not the first) left out, so a typo's candidates are a few dictionary lookups.
    """

    def __init__(self, words: Iterable[str], frequency: Callable[[str], int],
                 analyze: Callable[[str], list[str]]) -> None:
        self.words = frozenset(words)
        self.frequency = frequency
        self.analyze = analyze
        self.stems = frozenset(term for word in self.words for term in analyze(word))
        shortened: dict[str, list[str]] = {}
        by_shape: dict[tuple[str, int], list[str]] = {}
        for word in sorted(self.words):
            by_shape.setdefault((word[0], len(word)), []).append(word)
            for i in range(1, len(word)):
                shortened.setdefault(word[:i] + word[i + 1 :], []).append(word)
        self.shortened = shortened
        self.by_shape = by_shape

    def knows(self, word: str, terms: Iterable[str]) -> bool:
        """Whether ``word`` (lower-case, with its index ``terms``) or its stem is one of the tools' words."""
        return word in self.words or any(term in self.stems for term in terms)

    def suggest(self, word: str, ratio: float = 2.0) -> str | None:
        """The one clearly best correction of ``word`` (lower-case, not in the vocabulary), or None: among equally
        near ones, the one ``ratio`` times more tools use than the next."""
        near = self._within_one(word)
        if not near and len(word) >= LONG:
            near = self._two_apart(word)
        if not near:
            return None
        # Words of one stem ("list", "lists") are one correction, not a tie.
        near = list({tuple(self.analyze(w)): w for w in reversed(near)}.values())
        if len(near) == 1:
            return near[0]
        ranked = sorted(((self.frequency(w), w) for w in near), key=lambda item: (-item[0], item[1]))
        (best_count, best), (next_count, _) = ranked[0], ranked[1]
        return best if best_count >= ratio * max(next_count, 1) else None

    def _within_one(self, word: str) -> list[str]:
        """Vocabulary words one edit from ``word`` that keep its first letter: a letter missing or two neighbours
        swapped, and in a long word also a letter wrong or extra."""
        long = len(word) >= LONG
        found = set(self.shortened.get(word, ()))  # a letter missing
        shortened, words = self.shortened, self.words
        for i in range(1, len(word)):
            less = word[:i] + word[i + 1 :]
            if long and less in words:
                found.add(less)  # a letter extra
            for other in shortened.get(less, ()):
                if len(other) == len(word) and _one_apart(word, other, long):
                    found.add(other)
        return sorted(found)

    def _two_apart(self, word: str) -> list[str]:
        """Vocabulary words two letters longer that hold ``word``'s letters in order ("rember" -> remember)."""
        return [w for w in self.by_shape.get((word[0], len(word) + 2), ()) if _holds(w, word)]


def _function_word(word: str, analyze: Callable[[str], list[str]]) -> str | None:
    """The one stop word ``word`` becomes with two neighbouring letters (not the first) swapped ("taht" -> that,
    "teh" -> the, "cna" -> can), or None: a request's grammar ("can you", "that I ...") is read from such words."""
    found = {swapped for i in range(1, len(word) - 1)
             if (swapped := word[:i] + word[i + 1] + word[i] + word[i + 2 :]) != word and not analyze(swapped)}
    return found.pop() if len(found) == 1 else None


def _one_apart(word: str, other: str, wrong_letter: bool) -> bool:
    """Whether two words of one length differ by two neighbours swapped, or (``wrong_letter``) by one letter."""
    diffs = [i for i, (a, b) in enumerate(zip(word, other, strict=True)) if a != b]
    if len(diffs) == 1:
        return wrong_letter
    if len(diffs) == 2:
        i, j = diffs
        return j == i + 1 and word[i] == other[j] and word[j] == other[i]
    return False


def _holds(longer: str, shorter: str) -> bool:
    """Whether ``shorter``'s letters appear in ``longer`` in order."""
    at = 0
    for char in shorter:
        at = longer.find(char, at) + 1
        if not at:
            return False
    return True


_spellers: weakref.WeakKeyDictionary[Any, Speller] = weakref.WeakKeyDictionary()
_spellers_lock = threading.Lock()


def _speller(key: Any, reader: Any, analyze: Callable[[str], list[str]]) -> Speller:
    def frequency(word: str) -> int:
        return _frequency(reader, analyze, word)

    with _spellers_lock:
        speller = _spellers.get(key)
        if speller is None:
            words = list(reader.field_terms(FIELD)) if FIELD in reader.indexed_field_names() else []
            speller = _spellers[key] = Speller(words, frequency, analyze)
        return speller


def candidates(query: str, min_length: int = MIN_LENGTH) -> Iterator[tuple[re.Match[str], str]]:
    """The words of ``query`` that may be corrected: each chunk's match, and its word as written."""
    sentence_start = True
    shouting = query.isupper()
    for match in _CHUNK.finditer(query[:2000]):
        chunk = match.group()
        word = chunk.strip(_EDGE)
        starts = sentence_start
        sentence_start = chunk[-1:] in _SENTENCE_END
        # Letters only: a URL, path, address, dotted name, identifier or number has other characters inside.
        if len(word) < min_length or not word.isalpha() or (not word.isascii() and has_unspaced(word)):
            continue
        if not shouting and not word.islower() and not (starts and word[1:].islower()):
            continue  # a name ("Lena") or an identifier ("getWeather")
        yield match, word


def correct(key: Any, reader: Any, query: str, analyze: Callable[[str], list[str]], weight: float,
            known: Container[str] = (), ratio: float = 2.0, english_count: int = 500) -> Correction:
    """``query`` with every word the index does not know and can clearly correct replaced (call under the
    index's lock). ``key`` identifies the index (its vocabulary is read once per key), ``analyze`` is the index's
    analyzer, ``weight`` what a corrected word counts for; 0 corrects nothing. A word whose term is in ``known``
    (the reference catalog's terms: words tools use) is a word, not a typo, though no installed tool uses it:
    "saying" is not "saving"."""
    if weight <= 0:
        return Correction(query)
    fixes: list[tuple[re.Match[str], str, str]] = []
    speller: Speller | None = None
    for match, word in candidates(query, FUNCTION_LENGTH):
        lower = word.lower()
        terms = analyze(lower)
        if not terms:
            continue  # a stop word
        if speller is None:
            speller = _speller(key, reader, analyze)
        if speller.knows(lower, terms) or any(term in known for term in terms) or lower in english(english_count):
            continue  # a word some tool uses, or another form of one ("memorys", "logs"), or an English word
        fixed = _function_word(lower, analyze)
        if fixed is None and len(lower) >= MIN_LENGTH:
            fixed = speller.suggest(lower, ratio)
        if fixed is not None:
            fixes.append((match, word, fixed))
    if not fixes:
        return Correction(query)
    parts: list[str] = []
    end = 0
    for match, word, fixed in fixes:
        start = match.start() + match.group().index(word)
        parts += [query[end:start], fixed]
        end = start + len(word)
    text = "".join(parts) + query[end:]
    kept = set(analyze(query))  # a term the request also has as written keeps its full weight
    weak = frozenset(term for _, _, fixed in fixes for term in analyze(fixed) if term not in kept)
    return Correction(text, tuple((word, fixed) for _, word, fixed in fixes), weak, weight)


def _frequency(reader: Any, analyze: Callable[[str], list[str]], word: str) -> int:
    """How many tools use ``word`` in any form (its stem), or declare it as a keyword."""
    return max((int(reader.doc_frequency("terms", term)) for term in analyze(word)), default=0)
