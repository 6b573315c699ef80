"""junior's Whoosh parts: a posting format carrying BM25F weights, the schema, storage and a segment writer.
Imported on first search (Whoosh costs start-up time); classes at module level since the schema is pickled.

``write_documents`` sets state Whoosh keeps private (the segment writer's ``pool``, ``docnum`` and ``_added``, the
posting writer's ``_ids``, ``_weights`` and ``_maxweight``): Whoosh's public ``add_document`` writes the same
segment 2.5 times as slowly, most of a 10,000-tool build. So Whoosh is pinned (``whoosh-reloaded>=2.7.5,<2.8``)
and ``tests/test_whoosh_parts.py`` checks the range, where the state lives, and the segment files byte for byte."""

from __future__ import annotations

from array import array
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

from whoosh.codec.whoosh3 import W3Codec, W3FieldWriter
from whoosh.fields import FieldType, Schema
from whoosh.filedb.filestore import RamStorage
from whoosh.formats import Existence

__all__ = ["JuniorCodec", "MemoryStorage", "WeightedField", "WeightedFormat", "schema", "write_documents"]


class WeightedFormat(Existence):  # type: ignore[misc]
    """Postings whose weight is given, not counted: the BM25F pseudo-frequency of a term in a document."""

    def word_values(self, value: Any, analyzer: Any, **kwargs: Any) -> Iterator[tuple[str, int, float, bytes]]:
        return ((term, 1, weight, b"") for term, weight in value)


class WeightedField(FieldType):  # type: ignore[misc]
    """A field indexed from ``[(term, weight), ...]`` that junior's analysis computed."""

    def __init__(self) -> None:
        super().__init__(WeightedFormat(), analyzer=None, scorable=False, stored=False)


def schema() -> Any:
    """``terms``: every term with its BM25F pseudo-frequency; ``named``, ``opens``, ``identity``, ``mention`` and
    ``sourced``: see ``documents.postings``; ``words``: the tools' words as written (``spelling``)."""
    names = ("terms", "named", "opens", "identity", "words", "mention", "sourced")
    return Schema(**{name: WeightedField() for name in names})


class MemoryStorage(RamStorage):  # type: ignore[misc]
    """Whoosh's in-memory storage whose temporary files stay in memory too: ``RamStorage``'s go to one fixed
    ``<tmp>/MAIN.tmp`` for every process and thread, so one build's clean-up deleted another's files."""

    def temp_storage(self, name: str | None = None) -> RamStorage:
        return RamStorage()


class JuniorCodec(W3Codec):  # type: ignore[misc]
    """Whoosh's codec without field lengths (the weights hold the length norm; looking a length up per posting
    was a third of a build) or block compression (a small index, and searches skip zlib)."""

    length_stats = False

    def __init__(self) -> None:
        super().__init__(compression=0)

    def field_writer(self, storage: Any, segment: Any) -> Any:
        return _TermWriter(self, storage, segment)


class _GroupedPool(dict[str, dict[str, tuple[list[int], list[float]]]]):
    """Postings by field and term, doc numbers in order as documents arrive: no sort of every posting at commit."""

    def iter_postings(self) -> _GroupedPool:
        return self

    def cleanup(self) -> None:
        self.clear()


class _TermWriter(W3FieldWriter):  # type: ignore[misc]
    """Whoosh's field writer filling a whole block of a term's postings at once, byte for byte what
    ``add_posting`` one posting at a time writes, without its per-posting calls and checks."""

    def add_postings(self, schema: Any, lengths: Any, items: Any) -> None:
        if not isinstance(items, _GroupedPool):
            super().add_postings(schema, lengths, items)
            return
        limit = self._codec._blocklimit
        for fieldname, terms in sorted(items.items()):
            self.start_field(fieldname, schema[fieldname])
            for term in sorted(terms):  # UTF-8 keeps code point order
                docs, weights = terms[term]
                self.start_term(term.encode("utf-8"))
                writer = self._postwriter
                for at in range(0, len(docs), limit):
                    block = weights[at : at + limit]
                    writer._ids = array("I", docs[at : at + limit])
                    writer._weights = array("f", block)
                    writer._maxweight = max(0, *block)  # as ``add_posting`` keeps it
                    if at + limit < len(docs):
                        writer._write_block()  # the last block is written by ``finish_term``
                self.finish_term()
            self.finish_field()


def write_documents(index: Any, documents: Iterable[Mapping[str, Sequence[tuple[str, float]]]]) -> None:
    """Add one Whoosh segment holding ``documents`` (each ``{field: [(term, weight), ...]}``), numbered in order."""
    writer = index.writer(codec=JuniorCodec(), compound=False)
    writer.pool = pool = _GroupedPool()
    try:
        for docnum, fields in enumerate(documents):
            writer.perdocwriter.start_doc(docnum)
            for fieldname, postings in fields.items():
                terms = pool.setdefault(fieldname, {})
                for term, weight in postings:
                    docs, weights = terms.setdefault(term, ([], []))
                    docs.append(docnum)
                    weights.append(weight)
            writer.perdocwriter.finish_doc()
            writer.docnum, writer._added = docnum + 1, True
    except BaseException:
        writer.cancel()
        raise
    writer.commit(merge=False)
