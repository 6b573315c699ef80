"""Typos in a request, corrected against the words of the installed tools ("pls rember" -> remember).

The index keeps every word of the tools' text as written (lower-cased identifier parts of 3 letters or more,
stop words and words with digits left out) in a Whoosh field, ``words``: the vocabulary a request is spelled
against. A request word is corrected only when all of this holds:

- it could be a typo: 4 letters or more, letters only (no digits, ``_``, ``-`` or ``'``: identifiers, numbers
  and contractions stay as written), not part of a URL, path, address or dotted name, not capitalised inside a
  sentence (a name), not in an unspaced script, not a stop word;
- the index does not know it: neither the word nor its stem is in the index;
- one correction is clearly best. Candidates keep the word's first letter. A short word (4 or 5 letters) may have
  a letter missing or two neighbours swapped ("frget", "lsit"); a long one (6 or more) may also have one letter
  wrong or extra, or two letters missing ("memroy", "proceedure", "rember" -> remember). A letter wrong or extra
  in a short word is left alone: that is how one English word becomes another ("gave"/"game", "more"/"mode",
  "logo"/"log"), so a word the tools do not use is more likely meant than mistyped. The nearest candidates win
  (one edit before two); among several equally near, the one most tools use wins if at least twice as many
  tools use it as the next, else none does: a tie corrects nothing, and the request keeps its own word.

A corrected word then counts less than a word the request spelled right (``RankingConfig.typo_weight``), its
verb too, and the searchTools answer says what was searched for. A request whose words are all known costs a
few term lookups; the vocabulary is read from the index the first time a request has an unknown word.
"""

from __future__ import annotations

import re
import threading
import weakref
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any

import attrs

from junior_core.analysis import KEYWORD_MARK, has_unspaced, split_identifier

__all__ = ["FIELD", "Correction", "Speller", "correct", "indexed_texts", "vocabulary", "with_vocabulary"]

FIELD = "words"
"""The Whoosh field holding the vocabulary: each word once, as one posting of the first document."""

MIN_LENGTH = 4
LONG = 6
"""Words this long may also be two letters short or long."""
FREQUENCY_RATIO = 2.0
"""How many times more tools the best of several equally near corrections must be used by than the next."""

_CHUNK = re.compile(r"\S+")
_TOKEN = re.compile(r"[^\W_]+(?:[_-][^\W_]+)*")
_EDGE = "\"'`“”‘’()[]{}<>,;:.!?*"
_NOT_PROSE = re.compile(r"[/\\@#=:.+~]|^www\.", re.IGNORECASE)
_SENTENCE_END = ".!?"


def indexed_texts(entries: Sequence[Any], source_descriptions: Mapping[str, str],
                  param_texts: Sequence[str]) -> Iterator[str]:
    """Every text the index is built from: sources' ids and descriptions, tools' names, titles, keywords,
    descriptions and parameters (``entries`` are catalog tools, ``param_texts`` their parameter text)."""
    for source, description in source_descriptions.items():
        yield source
        yield description
    for entry, params in zip(entries, param_texts, strict=True):
        tool = entry.tool
        title = (tool.annotations or {}).get("title")
        yield tool.name
        if isinstance(title, str):
            yield title
        yield " ".join(getattr(tool, "keywords", ()))
        yield tool.description
        yield params


def vocabulary(texts: Iterable[str], stop_words: frozenset[str]) -> list[str]:
    """The words of ``texts`` a request can be corrected to: identifier parts, lower-cased, letters only."""
    raws = set(_TOKEN.findall(" ".join(texts)))
    words: set[str] = set()
    for raw in raws:
        for part in split_identifier(raw) if not raw.isalpha() or not raw.islower() else (raw,):
            word = part.lower()
            if len(word) >= 3 and word.isalpha() and word not in stop_words and not has_unspaced(word):
                words.add(word)
    return sorted(words)


def with_vocabulary(documents: Iterable[dict[str, Any]], words: list[str]) -> Iterator[dict[str, Any]]:
    """``documents`` with the vocabulary added to the first one (the field is a word list, not a posting list)."""
    first = True
    for fields in documents:
        if first and words:
            fields = {**fields, FIELD: [(word, 1.0) for word in words]}
        first = False
        yield fields


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
    """Corrections against one index's vocabulary, read from its ``words`` field once."""

    def __init__(self, words: Iterable[str], frequency: Callable[[str], int],
                 analyze: Callable[[str], list[str]]) -> None:
        self.words = frozenset(words)
        self.frequency = frequency
        self.analyze = analyze
        self.letters = "".join(sorted({char for word in self.words for char in word}))
        by_shape: dict[tuple[str, int], list[str]] = {}
        for word in sorted(self.words):
            by_shape.setdefault((word[0], len(word)), []).append(word)
        self.by_shape = by_shape

    def suggest(self, word: str) -> str | None:
        """The one clearly best correction of ``word`` (lower-case, not in the vocabulary), or None."""
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
        return best if best_count >= FREQUENCY_RATIO * max(next_count, 1) else None

    def _within_one(self, word: str) -> list[str]:
        """Vocabulary words one edit from ``word`` that keep its first letter: a letter missing or two neighbours
        swapped, and in a long word also a letter wrong or extra."""
        words, letters = self.words, self.letters
        n = len(word)
        long = n >= LONG
        found: set[str] = set()
        for i in range(1, n + 1):
            left, right = word[:i], word[i:]
            if i < n - 1 and (swapped := left + right[1] + right[0] + right[2:]) in words:
                found.add(swapped)
            found.update(inserted for char in letters if (inserted := left + char + right) in words)
            if long and right:
                if (deleted := left + right[1:]) in words:
                    found.add(deleted)
                found.update(changed for char in letters
                             if char != right[0] and (changed := left + char + right[1:]) in words)
        return sorted(found)

    def _two_apart(self, word: str) -> list[str]:
        """Vocabulary words two letters longer that hold ``word``'s letters in order ("rember" -> remember)."""
        return [w for w in self.by_shape.get((word[0], len(word) + 2), ()) if _holds(w, word)]


def _holds(longer: str, shorter: str) -> bool:
    """Whether ``shorter``'s letters appear in ``longer`` in order."""
    rest = iter(longer)
    return all(char in rest for char in shorter)


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


def candidates(query: str) -> Iterator[tuple[re.Match[str], str]]:
    """The words of ``query`` that may be corrected: each chunk's match, and its word as written."""
    sentence_start = True
    shouting = query.isupper()
    for match in _CHUNK.finditer(query[:2000]):
        chunk = match.group()
        word = chunk.strip(_EDGE)
        starts = sentence_start
        sentence_start = chunk[-1:] in _SENTENCE_END
        if len(word) < MIN_LENGTH or not word.isalpha() or has_unspaced(word):
            continue
        if _NOT_PROSE.search(chunk.strip(_EDGE + "-")):
            continue  # part of a URL, path, address or dotted name
        if not shouting and not word.islower() and not (starts and word[1:].islower()):
            continue  # a name ("Lena") or an identifier ("getWeather")
        yield match, word


def correct(key: Any, reader: Any, query: str, analyze: Callable[[str], list[str]], weight: float) -> Correction:
    """``query`` with every word the index does not know and can clearly correct replaced (call under the
    index's lock). ``key`` identifies the index (its vocabulary is read once per key), ``analyze`` is the index's
    analyzer, ``weight`` what a corrected word counts for; 0 corrects nothing."""
    if weight <= 0:
        return Correction(query)
    fixes: list[tuple[re.Match[str], str, str]] = []
    speller: Speller | None = None
    for match, word in candidates(query):
        lower = word.lower()
        terms = analyze(lower)
        if not terms or (FIELD, lower) in reader:
            continue  # a stop word, or a word some tool uses
        if any(reader.doc_frequency("terms", term) or reader.doc_frequency("action", term) for term in terms):
            continue  # another form of a known word ("memorys" -> memori, "logs" -> log)
        if speller is None:
            speller = _speller(key, reader, analyze)
        fixed = speller.suggest(lower)
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
    """How many tools use ``word`` in any form (its stem), or declare it."""
    counts = [int(reader.doc_frequency("terms", term)) for term in analyze(word)]
    counts.append(int(reader.doc_frequency("terms", KEYWORD_MARK + word)))
    return max(counts)
