"""Text analysis for the search index, keyword phrases, and the summaries searchTools shows.

Text to index terms: identifiers split (camelCase, snake_case, kebab-case, digits; the whole identifier kept
too), lowercased, Whoosh's stop list plus English function words dropped, Whoosh's Porter2 stemmer, CJK
characters and bigrams. Declared keywords are analysed like any other text; a keyword of several words is one
term (its words joined by ``PHRASE_MARK``).
"""

from __future__ import annotations

import copy
import re
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any

from junior_core._discovery.switches import EXTRA_STOP_WORDS, NEGATION_BASES, on

if TYPE_CHECKING:
    from junior_core._discovery.settings import RankingConfig

__all__ = [
    "PHRASE_MARK",
    "SUMMARY_LIMIT",
    "WORD",
    "Analyzer",
    "has_unspaced",
    "leading_verbs",
    "param_text",
    "phrase_term",
    "phrase_words",
    "phrases",
    "split_identifier",
    "summarize",
    "summary_cut_early",
]

SUMMARY_LIMIT = 180
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
_CACHE_LIMIT = 200_000
WORD = re.compile(r"[^\W_]+(?:['’][^\W_]+)?")
"""A word as a request's parse and a keyword phrase read it: letters and digits, an apostrophe inside."""
ANALYSIS_RULES = ("clitics", "stop_words", "extra_stop_words", "stemming", "identifier_splitting", "cjk_ngrams")
"""The rule switches (``switches``) that change the terms a text gives."""

def has_unspaced(text: str) -> bool:
    """Whether ``text`` has characters of a script written without spaces between words (CJK)."""
    return _CJK.search(text) is not None


# A sentence ends at '.', '!' or '?' (closing quotes or brackets may follow) before a space and a word that starts
# like a sentence (not "e.g. the"), or at the end of the text.
_SENTENCE_END = re.compile(r"""[.!?]["')\]’”]*(?=\s+["'(\[‘“]?[^\W_a-z]|\s*$)""")
_TRAILING = ",;:-–—([{/ "


def _first_paragraph(description: str) -> str:
    first = _PARAGRAPH.split(description.strip(), maxsplit=1)[0]
    return _SPACE.sub(" ", first).strip()


def summarize(description: str) -> str:
    """First paragraph, whitespace collapsed, at most 180 characters: cut after the last sentence that ends within
    them, else at the last space before 177 characters with '...', never inside a word (a single word longer than
    the cap is the only thing ever cut)."""
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
    """Why a model would not see the first sentence of ``description`` whole in its summary, or None: the
    first paragraph is longer than the summary's 180 characters and its first sentence does not end within them."""
    text = _first_paragraph(description)
    if len(text) <= SUMMARY_LIMIT:
        return None
    first = _SENTENCE_END.search(text)
    if first is not None and first.end() <= SUMMARY_LIMIT:
        return None
    return (f"its first sentence runs past the {SUMMARY_LIMIT}-character summary a model sees in search results, so "
            f"the summary is cut mid-sentence: {summarize(description)!r}. Write a first sentence of at most "
            f"{SUMMARY_LIMIT} characters that says what the tool does.")


def split_identifier(token: str) -> list[str]:
    """Split camelCase, snake_case, kebab-case and digits: ``getHTTPStatus_2`` -> get, HTTP, Status, 2.

    Case is read with ``str.isupper``/``islower`` so accented letters stay inside their word (``café``).
    """
    parts: list[str] = []
    for chunk in _CHUNK.findall(token):
        if chunk.isascii():
            parts.extend(_IDENT_PART.findall(chunk))
            continue
        start = 0
        for i in range(1, len(chunk)):
            prev, char = chunk[i - 1], chunk[i]
            nxt = chunk[i + 1] if i + 1 < len(chunk) else ""
            if (
                prev.isdigit() != char.isdigit()
                or (prev.islower() and char.isupper())
                or (prev.isupper() and char.isupper() and nxt.islower())
            ):
                parts.append(chunk[start:i])
                start = i
        parts.append(chunk[start:])
    return parts


def param_text(schema: Mapping[str, Any]) -> str:
    """Parameter names and descriptions of a JSON Schema, nested properties included."""
    parts: list[str] = []

    def walk(node: Any, depth: int) -> None:
        if depth > 4 or not isinstance(node, Mapping):
            return
        props = node.get("properties")
        if isinstance(props, Mapping):
            for key, sub in props.items():
                parts.append(str(key))
                if isinstance(sub, Mapping):
                    for text_key in ("title", "description"):
                        value = sub.get(text_key)
                        if isinstance(value, str):
                            parts.append(value)
                    enum = sub.get("enum")
                    if isinstance(enum, list):
                        parts.extend(str(item) for item in enum if isinstance(item, str))
                    walk(sub, depth + 1)
                    walk(sub.get("items"), depth + 1)

    walk(schema, 0)
    return " \n ".join(parts)


class Analyzer:
    """Text to index terms: identifiers split (whole kept too), lowercased, stop words dropped, stemmed (Porter2).

    CJK runs become single characters and character bigrams, since they have no spaces between words.
    Each distinct raw token is analysed once and cached.
    """

    def __init__(self, config: RankingConfig) -> None:
        from whoosh.analysis import STOP_WORDS
        from whoosh.lang.snowball.english import EnglishStemmer

        self.config = config
        self._stem = EnglishStemmer().stem
        stop: set[str] = set()
        if on("stop_words"):
            stop |= STOP_WORDS
        if on("extra_stop_words"):
            stop |= EXTRA_STOP_WORDS
        self._stop = frozenset(stop)
        self._clitics, self._split = on("clitics"), on("identifier_splitting")
        self._stemming, self._cjk_ngrams = on("stemming"), on("cjk_ngrams")
        self.settings = tuple(on(name) for name in ANALYSIS_RULES)
        """What decides the terms a text gives (two analyzers with equal settings agree)."""
        self.stop_words = self._stop
        self._cache: dict[str, tuple[str, ...]] = {}
        self._stems: dict[str, str] = {}
        self._seen: set[str] | None = None

    def recording(self, seen: set[str]) -> Analyzer:
        """This analyzer (its caches shared) adding every raw token it reads to ``seen``: the words of a build."""
        view = copy.copy(self)
        view._seen = seen
        return view

    def __call__(self, text: str) -> list[str]:
        out: list[str] = []
        cache = self._cache
        raws = _TOKEN.findall(_without_clitics(text) if self._clitics else text)
        if self._seen is not None:
            self._seen.update(raws)
        for raw in raws:
            terms = cache.get(raw)
            if terms is None:
                terms = self._analysed(raw)
            out.extend(terms)
        return out

    def _analysed(self, raw: str) -> tuple[str, ...]:
        """The terms of one raw token, analysed and cached."""
        cache = self._cache
        if len(cache) >= _CACHE_LIMIT:  # queries bring endless new words; keep memory bounded
            cache.clear()
        terms = cache[raw] = tuple(self._token(raw))
        return terms

    def compounds_whole(self, text: str) -> list[str]:
        """The terms of ``text``, a hyphenated word ("long-term", "read-only") giving only its whole: in prose a
        compound says one thing, so its parts are not its words ("long-term memory" is not about "long")."""
        out: list[str] = []
        cache = self._cache
        raws = _TOKEN.findall(_without_clitics(text) if self._clitics else text)
        if self._seen is not None:
            self._seen.update(raws)
        for raw in raws:
            # A raw token is one token of its own: its terms are the cached ones.
            terms = cache.get(raw)
            if terms is None:
                terms = self._analysed(raw)
            if len(terms) > 1 and "-" in raw.strip("-") and not _CJK.search(raw):
                terms = terms[-1:]
            out.extend(terms)
        return out

    def _token(self, raw: str) -> Iterator[str]:
        if _CJK.search(raw):
            for run in _CJK_RUN.findall(raw):
                if _CJK.match(run):
                    yield from self._cjk(run)
                else:
                    yield from self(run)
            return
        parts = split_identifier(raw) if self._split else [raw]
        words = parts if len(parts) > 1 else [raw]
        for word in words:
            yield from self._word(word.lower())
        if len(parts) > 1:
            yield raw.lower().replace("-", "_")

    def _word(self, word: str) -> Iterator[str]:
        if word in self._stop:
            return
        if not self._stemming or word.isdigit():
            yield word
            return
        stemmed = self._stems.get(word)
        if stemmed is None:
            if len(self._stems) >= _CACHE_LIMIT:
                self._stems.clear()
            stemmed = self._stems[word] = self._stem(word)
        yield stemmed

    def _cjk(self, run: str) -> Iterator[str]:
        if not self._cjk_ngrams:
            yield run
            return
        for i, char in enumerate(run):
            yield char
            if i + 1 < len(run):
                yield run[i : i + 2]


def _without_clitics(text: str) -> str:
    """``text`` with English clitics taken off their words ("don't" -> do, "can't" -> can, "I'm" -> I)."""
    if "'" not in text and "’" not in text:
        return text
    text = _NOT_BASES.sub(lambda m: NEGATION_BASES[m.group(1).lower()], text)
    return _CLITIC.sub("", text)


PHRASE_MARK = "\x1e"
"""Joins the words of a phrase into one index term; never produced by analysis."""


_PHRASE_LENGTHS = range(2, 6)


_NOT = re.compile(r"(\w+)n't")


def _phrase_spans(text: str) -> list[tuple[str, tuple[int, int]]]:
    """The words of ``text`` as a phrase reads them, each with where it stands: lower-cased, and a negation's
    "n't" as the word "not" ("isn't" -> is, not; "can't" -> can, not), so "not true anymore" is said by "that
    isn't true anymore" and "don't forget" by "do not forget"."""
    out: list[tuple[str, tuple[int, int]]] = []
    for match in WORD.finditer(text):
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
