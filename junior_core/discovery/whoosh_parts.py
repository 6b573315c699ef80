"""junior's Whoosh parts: a posting format carrying BM25F weights, its field, the schema, and a segment writer.

Imported on first search, not with ``junior_core``: Whoosh costs start-up time a CLI does not need. Classes live
at module level because Whoosh pickles the schema into the index's table of contents.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

from whoosh.codec.whoosh3 import W3Codec
from whoosh.fields import FieldType, Schema
from whoosh.filedb.filestore import RamStorage
from whoosh.formats import Format

__all__ = [
    "JuniorCodec",
    "MemoryStorage",
    "WeightedField",
    "WeightedFormat",
    "schema",
    "write_documents",
]


class WeightedFormat(Format):  # type: ignore[misc]
    """Postings whose weight is given, not counted: the BM25F pseudo-frequency of a term in a document."""

    posting_size = 0

    def __init__(self, field_boost: float = 1.0, **options: Any) -> None:
        super().__init__(field_boost=field_boost, **options)

    def word_values(self, value: Any, analyzer: Any, **kwargs: Any) -> Iterator[tuple[str, int, float, bytes]]:
        for term, weight in value:
            yield term, 1, weight, b""

    def encode(self, value: Any) -> bytes:
        return b""

    def decode_frequency(self, valuestring: bytes) -> int:
        return 1

    def decode_weight(self, valuestring: bytes) -> float:
        return 1.0

    def combine(self, vs: Any) -> bytes:
        return b""


class WeightedField(FieldType):  # type: ignore[misc]
    """A field indexed from ``[(term, weight), ...]`` that junior's analysis computed."""

    def __init__(self) -> None:
        super().__init__(WeightedFormat(), analyzer=None, scorable=False, stored=False)


def schema() -> Any:
    """``terms``: every analysed term with its BM25F pseudo-frequency; ``named``, ``opens`` and ``identity``: a
    tool's action and identity words, ``mention``: what one mention in its description counts toward the floor
    (``documents``); ``words``: the tools' words as written, lower-cased, each once
    (``spelling``'s vocabulary)."""
    return Schema(terms=WeightedField(), named=WeightedField(), opens=WeightedField(), identity=WeightedField(),
                  words=WeightedField(), mention=WeightedField())


class MemoryStorage(RamStorage):  # type: ignore[misc]
    """Whoosh's in-memory storage whose temporary files stay in memory too.

    ``RamStorage.temp_storage`` puts a writer's scratch files in ``<tmp>/MAIN.tmp``, one fixed directory for every
    process and thread building an index at the same time: one build's clean-up deleted another's files.
    """

    def temp_storage(self, name: str | None = None) -> RamStorage:
        return RamStorage()


class JuniorCodec(W3Codec):  # type: ignore[misc]
    """Whoosh's own codec without per-document field lengths (the weights already hold the length norm).

    With lengths on, writing looks a length up for every posting: a third of the build time at 10,000 tools.
    Blocks are not compressed: the index is small, and searches then skip the zlib step.
    """

    length_stats = False

    def __init__(self, blocklimit: int = 128, compression: int = 0, inlinelimit: int = 1) -> None:
        super().__init__(blocklimit=blocklimit, compression=compression, inlinelimit=inlinelimit)


class _GroupedPool:
    """Postings grouped by field and term as they arrive, in document order: no external sort needed.

    Whoosh's own pool sorts every (field, term, doc) tuple at commit; documents here are added in order, so
    sorting the distinct terms is enough.
    """

    def __init__(self) -> None:
        self.fields: dict[str, dict[bytes, list[tuple[int, float]]]] = {}
        self.fieldnames: set[str] = set()

    def add_many(self, fieldname: str, docnum: int, postings: Iterable[tuple[str, float]]) -> None:
        terms = self.fields.get(fieldname)
        if terms is None:
            terms = self.fields[fieldname] = {}
            self.fieldnames.add(fieldname)
        for term, weight in postings:
            key = term.encode("utf-8")
            plist = terms.get(key)
            if plist is None:
                terms[key] = [(docnum, weight)]
            else:
                plist.append((docnum, weight))

    def iter_postings(self) -> Iterator[tuple[str, bytes, int, float, bytes]]:
        for fieldname in sorted(self.fields):
            terms = self.fields[fieldname]
            for term in sorted(terms):
                for docnum, weight in terms[term]:
                    yield fieldname, term, docnum, weight, b""

    def cleanup(self) -> None:
        self.fields.clear()


def write_documents(index: Any, documents: Iterable[Mapping[str, Sequence[tuple[str, float]]]]) -> None:
    """Add one Whoosh segment holding ``documents`` (each ``{field: [(term, weight), ...]}``), numbered in order.

    Uses Whoosh's segment writer, codec and per-document writer; only the posting pool is junior's.
    """
    writer = index.writer(codec=JuniorCodec(), compound=False)
    pool = _GroupedPool()
    writer.pool = pool
    perdoc = writer.perdocwriter
    try:
        for fields in documents:
            docnum = writer.docnum
            perdoc.start_doc(docnum)
            for fieldname, postings in fields.items():
                pool.add_many(fieldname, docnum, postings)
            perdoc.finish_doc()
            writer.docnum += 1
            writer._added = True
    except BaseException:
        writer.cancel()
        raise
    writer.commit(merge=False)
