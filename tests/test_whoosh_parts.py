"""junior writes Whoosh segments through Whoosh's own segment, codec and posting writers, but fills their blocks
itself (``whoosh_parts``), setting attributes Whoosh keeps private: Whoosh's public ``add_document`` writes the
same segment a posting at a time, 2.5 times as long. So the version range is pinned (pyproject.toml) and checked
here, and the segment files junior writes are checked byte for byte against those ``add_document`` writes."""

from __future__ import annotations

import random
from importlib.metadata import version
from typing import Any

from junior_core._discovery.whoosh_parts import JuniorCodec, MemoryStorage, schema, write_documents


def test_the_whoosh_version_is_in_the_pinned_range() -> None:
    major, minor, patch, *_ = (int(part) for part in version("whoosh-reloaded").split(".")[:3])
    assert (2, 7, 5) <= (major, minor, patch) < (2, 8, 0), "whoosh_parts writes Whoosh's private writer state"


def test_the_private_state_junior_sets_is_where_whoosh_keeps_it() -> None:
    from whoosh.codec.whoosh3 import W3PostingsWriter

    index = MemoryStorage().create_index(schema())
    writer = index.writer(codec=JuniorCodec(), compound=False)
    try:
        for name in ("pool", "docnum", "_added", "perdocwriter"):
            assert hasattr(writer, name), name
        postings = W3PostingsWriter.__init__.__code__.co_names + W3PostingsWriter._new_block.__code__.co_names
        for name in ("_ids", "_weights", "_maxweight"):
            assert name in postings, name
        assert callable(W3PostingsWriter._write_block)
    finally:
        writer.cancel()


def documents(count: int) -> list[dict[str, list[tuple[str, float]]]]:
    rng = random.Random(7)
    words = [f"w{n}" for n in range(20)]  # ~160 postings a term: two blocks
    return [{"terms": [(word, round(rng.uniform(0.1, 5), 3)) for word in rng.sample(words, 8)],
             "named": [(rng.choice(words), 1.0)]} for _ in range(count)]


def segment_files(storage: Any) -> dict[str, bytes]:
    """The segment's files by kind (``.trm`` terms and their block statistics, ``.pst`` postings, ``.col``)."""
    return {name.rsplit(".", 1)[1]: data for name, data in storage.files.items() if not name.endswith(".toc")}


def postings_of(index: Any) -> dict[tuple[str, bytes], list[tuple[int, float]]]:
    with index.reader() as reader:
        out = {}
        for field, term in reader.all_terms():
            matcher = reader.postings(field, term)
            found = []
            while matcher.is_active():
                found.append((matcher.id(), round(matcher.weight(), 3)))
                matcher.next()
            out[(field, term)] = found
        return out


def test_junior_writes_the_segment_whooshs_public_writer_writes() -> None:
    """Postings, block statistics (each block's largest weight, ``_maxweight``) and term infos, byte for byte."""
    docs = documents(400)  # more than one block (128 postings) for the common terms
    mine_storage, public_storage = MemoryStorage(), MemoryStorage()
    mine = mine_storage.create_index(schema())
    write_documents(mine, docs)
    public = public_storage.create_index(schema())
    writer = public.writer(codec=JuniorCodec(), compound=False)
    for fields in docs:
        writer.add_document(**{name: list(value) for name, value in fields.items()})
    writer.commit(merge=False)
    theirs = postings_of(public)
    assert postings_of(mine) == theirs and len(theirs) > 20
    assert segment_files(mine_storage) == segment_files(public_storage)
    assert set(segment_files(mine_storage)) == {"trm", "pst", "col"}
