"""The Whoosh index behind searchTools: full descriptions indexed, BM25F ranking, summaries."""

from __future__ import annotations

import re
import threading
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import attrs
from whoosh.analysis import Filter, LowercaseFilter, RegexTokenizer, StemFilter, StopFilter

if TYPE_CHECKING:
    from junior_core.catalog import CatalogTool

__all__ = ["SearchIndex", "SearchResult", "split_identifier", "summarize"]

SUMMARY_LIMIT = 180
_PARAGRAPH = re.compile(r"\n\s*\n")
_SPACE = re.compile(r"\s+")
# Identifier parts: "getHTTPResponse2Code" -> get, HTTP, Response, 2, Code.
_IDENT_PART = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+|[^\W\d_]+", re.UNICODE)
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]")

FIELD_BOOSTS = {"name": 4.0, "description": 1.5, "params": 1.0, "source": 0.5}


def summarize(description: str) -> str:
    """First paragraph, whitespace collapsed, at most 180 characters (177 + '...')."""
    first = _PARAGRAPH.split(description.strip(), maxsplit=1)[0]
    text = _SPACE.sub(" ", first).strip()
    if len(text) > SUMMARY_LIMIT:
        return text[: SUMMARY_LIMIT - 3].rstrip() + "..."
    return text


def split_identifier(token: str) -> list[str]:
    """Split camelCase, snake_case, kebab-case and digits: ``getHTTPStatus_2`` -> get, HTTP, Status, 2."""
    return _IDENT_PART.findall(token)


def _param_text(schema: Mapping[str, Any]) -> str:
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


class IdentifierFilter(Filter):  # type: ignore[misc]
    """Emit the parts of compound identifiers (then the whole token), and CJK characters and bigrams."""

    def __call__(self, tokens: Iterable[Any]) -> Iterator[Any]:
        for token in tokens:
            text = token.text
            if _CJK.search(text):
                for i, char in enumerate(text):
                    token.text = char
                    yield token
                    if i + 1 < len(text):
                        token.text = text[i : i + 2]
                        yield token
                continue
            parts = split_identifier(text)
            if len(parts) > 1:
                for part in parts:
                    token.text = part
                    yield token
                token.text = text.replace("-", "_")
            yield token


def _make_analyzer() -> Any:
    return (
        RegexTokenizer(r"[^\W_]+(?:[_-][^\W_]+)*", gaps=False)
        | IdentifierFilter()
        | LowercaseFilter()
        | StopFilter(minsize=1)
        | StemFilter()
    )


@attrs.frozen
class SearchResult:
    """Ranked tool_names, and how many tools matched in all."""

    tool_names: list[str]
    total: int


class SearchIndex:
    """An in-memory Whoosh index of catalog tools, rebuilt when the catalog changes."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._index: Any = None
        self._version: int | None = None
        self._analyzer: Any = None

    def analyze(self, text: str) -> list[str]:
        """The terms the index stores for ``text`` (for tests and debugging)."""
        if self._analyzer is None:
            self._analyzer = _make_analyzer()
        return [token.text for token in self._analyzer(text)]

    def build(self, tools: Sequence[CatalogTool], source_descriptions: Mapping[str, str], version: int) -> None:
        """Index ``tools`` (deterministic order: by tool_name) unless already built for ``version``."""
        from whoosh.fields import ID, TEXT, Schema
        from whoosh.filedb.filestore import RamStorage

        with self._lock:
            if self._version == version and self._index is not None:
                return
            analyzer = _make_analyzer()
            self._analyzer = analyzer
            schema = Schema(
                tool_name=ID(stored=True, unique=True),
                source_id=ID(stored=True),
                name=TEXT(analyzer=analyzer, field_boost=FIELD_BOOSTS["name"]),
                description=TEXT(analyzer=analyzer, field_boost=FIELD_BOOSTS["description"]),
                params=TEXT(analyzer=analyzer, field_boost=FIELD_BOOSTS["params"]),
                source=TEXT(analyzer=analyzer, field_boost=FIELD_BOOSTS["source"]),
            )
            index = RamStorage().create_index(schema)
            writer = index.writer()
            for entry in sorted(tools, key=lambda t: t.tool_name):
                writer.add_document(
                    tool_name=entry.tool_name,
                    source_id=entry.source_id,
                    name=entry.tool.name,
                    description=entry.tool.description,
                    params=_param_text(entry.tool.input_schema),
                    source=f"{entry.source_id} {source_descriptions.get(entry.source_id, '')}",
                )
            writer.commit()
            self._index = index
            self._version = version

    def search(self, query: str, *, limit: int, source_id: str | None = None) -> SearchResult:
        """Rank tools for ``query`` with BM25F; ties broken by tool_name."""
        from whoosh import scoring
        from whoosh.query import Or, Term

        if self._index is None:
            return SearchResult([], 0)
        terms = self.analyze(query)
        if not terms:
            return SearchResult([], 0)
        subqueries = []
        for term in dict.fromkeys(terms):
            for field in FIELD_BOOSTS:
                subqueries.append(Term(field, term))
        whoosh_query = Or(subqueries)
        id_filter = Term("source_id", source_id) if source_id is not None else None
        with self._index.searcher(weighting=scoring.BM25F()) as searcher:
            hits = searcher.search(whoosh_query, limit=limit + 20, filter=id_filter)
            total = len(hits)
            ranked = sorted(((-round(hit.score, 9), hit["tool_name"]) for hit in hits))
        return SearchResult([name for _, name in ranked[:limit]], total)
