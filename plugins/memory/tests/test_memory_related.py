"""Related memories: remember offers memories of the same scope that share the new one's telling words or, with
semantic recall, are close in meaning (with the real model: test_memory_semantic_model.py); a forget that misses
names the closest memory (by meaning when vectors exist).

Nothing is replaced or archived on the model's behalf: the answers only name memories it may act on next.
"""

from __future__ import annotations

from typing import Any

import pytest
from memory_helpers import ALICE, BOB, PRIVATE, PUBLIC, ConceptEmbedder, ctx, err, ok

from junior_core import Runtime, ToolContext

ACTIVE = "SELECT content FROM junior_memory_memories WHERE archived_at IS NULL ORDER BY content"
DEPLOYS = "prod deploys only on Tuesdays and Thursdays"


def remember(rt: Runtime, content: str, kind: str = "procedure", context: ToolContext | None = None,
             **extra: Any) -> dict[str, Any]:
    saved = ok(rt.execute_tool("memory__remember", {"content": content, "kind": kind, **extra}, context or ctx()))
    assert rt.plugin("memory").store().flush_vectors(10), "vector writer did not finish"
    return saved


@pytest.mark.parametrize("embedder", [False, "concepts"])
def test_remember_lists_a_close_memory_of_the_same_scope_and_replaces_nothing(
    make_runtime: Any, rows: Any, embedder: Any
) -> None:
    rt: Runtime = make_runtime(embedder=ConceptEmbedder() if embedder else False)
    first = remember(rt, DEPLOYS)
    lunch = remember(rt, "Lunch orders go in the food channel")
    remember(rt, "Alice prefers prod deploys on Tuesdays", "preference")  # Alice's own scope, not the channel's
    remember(rt, "prod deploys in this channel are manual", "procedure", ctx(ALICE, PRIVATE))  # another scope

    new = remember(rt, "prod deploys only Tue/Thu")
    assert new["created"] is True
    assert [m["id"] for m in new["related"]] == [first["id"]]
    (related,) = new["related"]
    assert related["content"] == DEPLOYS and {"prod", "deploys"} <= set(related["matched"])
    assert lunch["id"] not in str(new["related"])
    assert "replaces" in new["related_note"]
    # Nothing replaced: both memories are current.
    assert {r["content"] for r in rows(ACTIVE)} >= {DEPLOYS, "prod deploys only Tue/Thu"}


def test_a_memory_with_nothing_close_has_no_related(make_runtime: Any) -> None:
    rt: Runtime = make_runtime(embedder=False)
    remember(rt, DEPLOYS)
    new = remember(rt, "Lunch orders go in the food channel")
    assert "related" not in new and "related_note" not in new


def test_a_forget_that_misses_names_the_memory_closest_in_meaning(make_runtime: Any, rows: Any) -> None:
    rt: Runtime = make_runtime(embedder=ConceptEmbedder())
    owner = remember(rt, "Dana owns the billing service", "knowledge")
    remember(rt, "Lunch orders go in the food channel", "knowledge")
    error = err(rt.execute_tool("memory__forget", {"query": "responsible for payments"}, ctx()), "not_found")
    assert error["closest"]["id"] == owner["id"] and error["closest"]["matched"] == []
    assert error["closest"]["similarity"] > 0.3
    assert len(rows(ACTIVE)) == 2


def test_the_replaced_memory_and_a_duplicate_are_not_offered_as_related(make_runtime: Any) -> None:
    rt: Runtime = make_runtime(embedder=False)
    first = remember(rt, DEPLOYS)
    replacing = remember(rt, "prod deploys only on Tuesdays", replaces=first["id"])
    assert replacing["replaced"]["id"] == first["id"] and "related" not in replacing
    again = remember(rt, "prod deploys only on Tuesdays")
    assert again["created"] is False and "related" not in again


def test_a_forget_that_misses_names_the_closest_memory_and_forgets_nothing(make_runtime: Any, rows: Any) -> None:
    rt: Runtime = make_runtime(embedder=False)
    target = remember(rt, DEPLOYS)
    for content in ("Staging deploys run every hour", "Deploys need two approvals", "Deploys pause during incidents"):
        remember(rt, content)
    before = rows(ACTIVE)

    error = err(rt.execute_tool("memory__forget", {"query": "prod freeze calendar"}, ctx()), "not_found")
    assert error["closest"]["id"] == target["id"] and error["closest"]["matched"] == ["prod"]
    assert "confirm" in error["message"]
    assert rows(ACTIVE) == before

    nothing = err(rt.execute_tool("memory__forget", {"query": "espresso machine"}, ctx()), "not_found")
    assert "closest" not in nothing  # control: no memory is close at all
    # Another person's preference is never named.
    remember(rt, "Bob prefers espresso from the machine on floor 3", "preference", ctx(BOB, PUBLIC))
    assert "closest" not in err(rt.execute_tool("memory__forget", {"query": "espresso machine"}, ctx()), "not_found")


def test_a_memory_found_by_words_and_by_meaning_says_both(make_runtime: Any) -> None:
    rt: Runtime = make_runtime(embedder=ConceptEmbedder())
    first = remember(rt, DEPLOYS)
    (related,) = remember(rt, "prod deploys only Tue/Thu")["related"]
    assert related["id"] == first["id"] and {"prod", "deploys"} <= set(related["matched"])
    assert related["similarity"] > 0.3
