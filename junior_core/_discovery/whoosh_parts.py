"""junior's Whoosh parts: a posting format carrying BM25F weights, its field, the schema, and a segment writer.

Imported on first search, not with ``junior_core``: Whoosh costs start-up time a CLI does not need. Classes live
at module level because Whoosh pickles the schema into the index's table of contents.

``write_documents`` sets state Whoosh keeps private (the segment writer's ``pool``, ``docnum`` and ``_added``, the
posting writer's ``_ids``, ``_weights`` and ``_maxweight``): Whoosh's public writer takes postings one at a time,
and filling a whole term's blocks at once is most of a build's speed. So the Whoosh version range is pinned
(``whoosh-reloaded>=2.7.5,<2.8``) and ``tests/test_whoosh_parts.py`` checks the range, that the state is where
this version keeps it, and that the postings written equal those of Whoosh's public ``add_document``.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterable, Iterator, Mapping, Sequence
from operator import sub
from typing import Any

from whoosh.codec.whoosh3 import W3Codec, W3FieldWriter, W3PostingsWriter
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
    (``documents``); ``sourced``: the terms a tool holds only through its source (``documents``); ``words``: the
    tools' words as written, lower-cased, each once (``spelling``'s vocabulary)."""
    return Schema(terms=WeightedField(), named=WeightedField(), opens=WeightedField(), identity=WeightedField(),
                  words=WeightedField(), mention=WeightedField(), sourced=WeightedField())


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
    Blocks are not compressed: the index is small, and searches then skip the zlib step. Its field writer takes
    a ``_GroupedPool``'s postings a term at a time (``_TermWriter``).
    """

    length_stats = False

    def __init__(self, blocklimit: int = 128, compression: int = 0, inlinelimit: int = 1) -> None:
        super().__init__(blocklimit=blocklimit, compression=compression, inlinelimit=inlinelimit)

    def field_writer(self, storage: Any, segment: Any) -> Any:
        return _TermWriter(self, storage, segment)

    def postings_writer(self, dbfile: Any, byteids: bool = False) -> Any:
        return _BlockWriter(dbfile, blocklimit=self._blocklimit, byteids=byteids, compression=self._compression,
                            inlinelimit=self._inlinelimit)


class _BlockWriter(W3PostingsWriter):  # type: ignore[misc]
    """Whoosh's posting writer, its blocks' doc numbers and weights minified with C loops (same values)."""

    def _mini_ids(self) -> tuple[Any, ...]:
        ids = self._ids
        if self._byteids:
            return tuple(ids)
        return tuple(map(sub, ids, [0, *ids[:-1]]))  # deltas, as ``delta_encode`` gives them

    def _mini_weights(self) -> Any:
        weights = self._weights
        if weights.count(1.0) == len(weights):
            return None
        if weights.count(weights[0]) == len(weights):
            return weights[0]
        return tuple(weights)


class _Grouped:
    """A ``_GroupedPool``'s postings as ``_TermWriter`` reads them: per field, per term, the doc numbers and
    weights. Iterated, the ``(field, term, doc, weight, value)`` tuples Whoosh's own field writer reads."""

    def __init__(self, fields: Mapping[str, Mapping[str, tuple[list[int], list[float]]]]) -> None:
        self.fields = fields

    def terms(self) -> Iterator[tuple[str, Iterator[tuple[bytes, list[int], list[float]]]]]:
        """Per field in name order, its terms in byte order (UTF-8 keeps code point order)."""
        for fieldname in sorted(self.fields):
            terms = self.fields[fieldname]
            yield fieldname, ((term.encode("utf-8"), *terms[term]) for term in sorted(terms))

    def __iter__(self) -> Iterator[tuple[str, bytes, int, float, bytes]]:
        for fieldname, terms in self.terms():
            for term, docs, weights in terms:
                for docnum, weight in zip(docs, weights, strict=True):
                    yield fieldname, term, docnum, weight, b""


class _TermWriter(W3FieldWriter):  # type: ignore[misc]
    """Whoosh's field writer, given a whole term's postings at once: each block of ``blocklimit`` postings is
    filled in one step and written by Whoosh's own posting writer, byte for byte what adding the postings one by
    one writes (``add_posting``), without the per-posting calls and checks, most of a build's time."""

    def add_postings(self, schema: Any, lengths: Any, items: Any) -> None:
        if not isinstance(items, _Grouped) or lengths is not None:
            super().add_postings(schema, lengths, items)
            return
        limit = self._codec._blocklimit
        for fieldname, terms in items.terms():
            self.start_field(fieldname, schema[fieldname])
            for term, docs, weights in terms:
                self.start_term(term)
                writer = self._postwriter
                for at in range(0, len(docs), limit):
                    block = weights[at : at + limit]
                    writer._ids = array("I", docs[at : at + limit])
                    writer._weights = array("f", block)
                    # as ``add_posting`` keeps it: the largest weight as given, or 0
                    writer._maxweight = max(0, *block)
                    if at + limit < len(docs):
                        writer._write_block()  # the last block is written by ``finish_term``
                self.finish_term()
            self.finish_field()


class _GroupedPool:
    """Postings grouped by field and term as they arrive, in document order: no external sort needed.

    Whoosh's own pool sorts every (field, term, doc) tuple at commit; documents here are added in order, so
    sorting the distinct terms is enough.
    """

    def __init__(self) -> None:
        self.fields: dict[str, dict[str, tuple[list[int], list[float]]]] = {}
        self.fieldnames: set[str] = set()

    def add_many(self, fieldname: str, docnum: int, postings: Iterable[tuple[str, float]]) -> None:
        terms = self.fields.get(fieldname)
        if terms is None:
            terms = self.fields[fieldname] = {}
            self.fieldnames.add(fieldname)
        get = terms.get
        for term, weight in postings:
            plist = get(term)
            if plist is None:
                terms[term] = ([docnum], [weight])
            else:
                plist[0].append(docnum)
                plist[1].append(weight)

    def iter_postings(self) -> _Grouped:
        return _Grouped(self.fields)

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
