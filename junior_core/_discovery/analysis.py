"""Text analysis (``Analyzer``: text to index terms), keyword phrases, and the summaries searchTools shows."""

from __future__ import annotations

import copy
import functools
import re
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any

from junior_core._discovery.switches import EXTRA_STOP_WORDS, NEGATION_BASES, on

if TYPE_CHECKING:
    from junior_core._discovery.settings import RankingConfig

__all__ = ["PHRASE_MARK", "SUMMARY_LIMIT", "WORD", "Analyzer", "has_unspaced", "leading_verbs", "param_text",
           "phrase_term", "phrase_words", "phrases", "split_identifier", "summarize", "summary_cut_early"]

SUMMARY_LIMIT = 180
PHRASE_MARK = "\x1e"
"""Joins the words of a phrase into one index term; never produced by analysis."""
WORD = re.compile(r"[^\W_]+(?:['’][^\W_]+)?")
"""A word as a request's parse and a keyword phrase read it: letters and digits, an apostrophe inside."""
ANALYSIS_RULES = ("clitics", "stop_words", "extra_stop_words", "stemming", "identifier_splitting", "cjk_ngrams")
"""The rule switches (``switches``) that change the terms a text gives."""
_CACHE_LIMIT = 200_000
_PARAGRAPH = re.compile(r"\n\s*\n")
_SPACE = re.compile(r"\s+")
# Raw tokens keep '_' and '-' inside identifiers so the whole identifier is a term too.
_TOKEN = re.compile(r"[^\W_]+(?:[_-][^\W_]+)*")
# Identifier parts: "getHTTPResponse2Code" -> get, HTTP, Response, 2, Code.
_IDENT_PART = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+|[^\W\d_]+", re.UNICODE)
_CHUNK = re.compile(r"[^\W_]+")
# English clitics are not words of their own: "don't", "I'm", "Twitter's" give do, I, Twitter (not don, m, s).
_NOT_BASES = re.compile(r"(?<![^\W\d_])(ca|wo|sha)n['’]t(?![^\W_])", re.IGNORECASE)  # can't, won't, shan't
_CLITIC = re.compile(r"(?<=[^\W\d_])(?:n['’]t|['’](?:s|m|d|re|ve|ll))(?![^\W_])", re.IGNORECASE)
_CJK_CHARS = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff"
_CJK = re.compile(f"[{_CJK_CHARS}]")
_CJK_RUN = re.compile(f"[{_CJK_CHARS}]+|[^{_CJK_CHARS}]+")
# A sentence ends at '.', '!' or '?' (closing quotes or brackets may follow) before a space and a word that starts
# like a sentence (not "e.g. the"), or at the end of the text.
_SENTENCE_END = re.compile(r"""[.!?]["')\]’”]*(?=\s+["'(\[‘“]?[^\W_a-z]|\s*$)""")
_TRAILING = ",;:-–—([{/ "
_NOT = re.compile(r"(\w+)n't")
_LEADING = re.compile(r"\s*([^\W\d_]+)(?:\s*\(([^()]{1,80})\))?")


def has_unspaced(text: str) -> bool:
    """Whether ``text`` has characters of a script written without spaces between words (CJK)."""
    return _CJK.search(text) is not None


def _first_paragraph(description: str) -> str:
    return _SPACE.sub(" ", _PARAGRAPH.split(description.strip(), maxsplit=1)[0]).strip()


def summarize(description: str) -> str:
    """First paragraph, whitespace collapsed, at most 180 characters: cut after the last sentence that ends within
    them, else at the last space before 177 characters with '...' (only a single longer word is cut inside)."""
    text = _first_paragraph(description)
    if len(text) <= SUMMARY_LIMIT:
        return text
    ends = [m.end() for m in _SENTENCE_END.finditer(text, 0, SUMMARY_LIMIT + 1) if m.end() <= SUMMARY_LIMIT]
    if ends:
        return text[: ends[-1]]
    room = text[: SUMMARY_LIMIT - 2]  # a space at 177 still ends a word
    cut = room.rfind(" ")
    head = room[:cut] if cut > 0 else room[: SUMMARY_LIMIT - 3]
    return head.rstrip(_TRAILING) + "..."


def summary_cut_early(description: str) -> str | None:
    """Why a model would not see the first sentence of ``description`` whole in its summary, or None."""
    text = _first_paragraph(description)
    first = _SENTENCE_END.search(text)
    if len(text) <= SUMMARY_LIMIT or (first is not None and first.end() <= SUMMARY_LIMIT):
        return None
    return (f"its first sentence runs past the {SUMMARY_LIMIT}-character summary a model sees in search results, so "
            f"the summary is cut mid-sentence: {summarize(description)!r}. Write a first sentence of at most "
            f"{SUMMARY_LIMIT} characters that says what the tool does.")


def split_identifier(token: str) -> list[str]:
    """Split camelCase, snake_case, kebab-case and digits: ``getHTTPStatus_2`` -> get, HTTP, Status, 2.
    Outside ASCII, case is read with ``str.isupper``/``islower`` so accented letters stay in their word."""
    parts: list[str] = []
    for chunk in _CHUNK.findall(token):
        if chunk.isascii():
            parts.extend(_IDENT_PART.findall(chunk))
            continue
        start = 0
        for i in range(1, len(chunk)):
            prev, char, nxt = chunk[i - 1], chunk[i], chunk[i + 1 : i + 2]
            if (prev.isdigit() != char.isdigit() or (prev.islower() and char.isupper())
                    or (prev.isupper() and char.isupper() and nxt.islower())):
                parts.append(chunk[start:i])
                start = i
        parts.append(chunk[start:])
    return parts


def param_text(schema: Mapping[str, Any]) -> str:
    """Parameter names, titles, descriptions and enum values of a JSON Schema, nested properties included."""
    parts: list[str] = []

    def walk(node: Any, depth: int) -> None:
        props = node.get("properties") if depth <= 4 and isinstance(node, Mapping) else None
        if not isinstance(props, Mapping):
            return
        for key, sub in props.items():
            parts.append(str(key))
            if isinstance(sub, Mapping):
                parts.extend(value for value in (sub.get("title"), sub.get("description")) if isinstance(value, str))
                enum = sub.get("enum")
                if isinstance(enum, list):
                    parts.extend(item for item in enum if isinstance(item, str))
                walk(sub, depth + 1)
                walk(sub.get("items"), depth + 1)

    walk(schema, 0)
    return " \n ".join(parts)


class Analyzer:
    """Text to index terms: identifiers split (whole kept too), lowercased, stop words dropped, stemmed (Porter2);
    CJK runs become characters and character bigrams. Each distinct raw token is analysed once and cached.
    ``config`` is not read: the rule switches (``ANALYSIS_RULES``) decide the terms."""

    def __init__(self, config: RankingConfig) -> None:
        from whoosh.analysis import STOP_WORDS
        from whoosh.lang.snowball.english import EnglishStemmer

        self.settings = tuple(on(name) for name in ANALYSIS_RULES)
        """What decides the terms a text gives (two analyzers with equal settings agree)."""
        self._clitics, stop, extra_stop, self._stemming, self._split, self._cjk_ngrams = self.settings
        self.stop_words = frozenset([*(STOP_WORDS if stop else ()), *(EXTRA_STOP_WORDS if extra_stop else ())])
        self._stem = functools.lru_cache(maxsize=_CACHE_LIMIT)(EnglishStemmer().stem)
        self._cache: dict[str, tuple[str, ...]] = {}
        self._seen: set[str] | None = None

    def recording(self, seen: set[str]) -> Analyzer:
        """This analyzer (its caches shared) adding every raw token it reads to ``seen``: the words of a build."""
        view = copy.copy(self)
        view._seen = seen
        return view

    def __call__(self, text: str) -> list[str]:
        return self._terms(text, whole_compounds=False)

    def compounds_whole(self, text: str) -> list[str]:
        """The terms of ``text``, a hyphenated word ("long-term", "read-only") giving only its whole: in prose a
        compound says one thing, so its parts are not its words ("long-term memory" is not about "long")."""
        return self._terms(text, whole_compounds=True)

    def _terms(self, text: str, whole_compounds: bool) -> list[str]:
        out: list[str] = []
        raws = _TOKEN.findall(_without_clitics(text) if self._clitics else text)
        if self._seen is not None:
            self._seen.update(raws)
        for raw in raws:
            terms = self._cache.get(raw)
            if terms is None:
                if len(self._cache) >= _CACHE_LIMIT:  # queries bring endless new words; keep memory bounded
                    self._cache.clear()
                terms = self._cache[raw] = tuple(self._token(raw))
            if whole_compounds and len(terms) > 1 and "-" in raw and not _CJK.search(raw):
                terms = terms[-1:]
            out.extend(terms)
        return out

    def _token(self, raw: str) -> Iterator[str]:
        if _CJK.search(raw):
            for run in _CJK_RUN.findall(raw):
                if not _CJK.match(run):
                    yield from self(run)
                elif self._cjk_ngrams:
                    yield from (run[i : i + n] for i in range(len(run)) for n in (1, 2) if i + n <= len(run))
                else:
                    yield run
            return
        parts = split_identifier(raw) if self._split else [raw]
        for word in parts if len(parts) > 1 else [raw]:
            word = word.lower()
            if word not in self.stop_words:
                yield self._stem(word) if self._stemming and not word.isdigit() else word
        if len(parts) > 1:
            yield raw.lower().replace("-", "_")


def _without_clitics(text: str) -> str:
    """``text`` with English clitics taken off their words ("don't" -> do, "can't" -> can, "I'm" -> I)."""
    if "'" not in text and "’" not in text:
        return text
    return _CLITIC.sub("", _NOT_BASES.sub(lambda m: NEGATION_BASES[m.group(1).lower()], text))


def phrase_words(text: str) -> list[str]:
    """The words of a phrase, lower-cased, a negation's "n't" as "not" ("Don't forget" -> do, not, forget), so
    "not true anymore" is said by "that isn't true anymore"."""
    out: list[str] = []
    for match in WORD.finditer(text):
        word = match.group().lower().replace("’", "'")
        negated = _NOT.fullmatch(word)
        out += [word] if negated is None else [NEGATION_BASES.get(negated.group(1), negated.group(1)), "not"]
    return out


def phrase_term(words: list[str]) -> str:
    return PHRASE_MARK.join(words)


def phrases(text: str, longest: int, window: int) -> list[str]:
    """Every run of 2 to ``longest`` consecutive words of ``text`` (its first ``window``) as a phrase term, as
    declared phrases are."""
    words = phrase_words(text)[:window]
    return list(dict.fromkeys(phrase_term(words[i : i + n])
                              for n in range(2, min(longest, len(words)) + 1) for i in range(len(words) - n + 1)))


def leading_verbs(description: str) -> str:
    """The word a description opens with and the words of a parenthesis right after it: the tool's own statement
    of what it does ("Forget (delete, remove) a memory ..." -> "Forget delete remove")."""
    match = _LEADING.match(description)
    return "" if match is None else f"{match.group(1)} {match.group(2) or ''}".strip()
