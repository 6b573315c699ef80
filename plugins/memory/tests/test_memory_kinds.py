"""memory__list and memory__search narrowed by kind, with the same visibility rules, on SQLite and Postgres."""

from __future__ import annotations

from typing import Any

import pytest
from memory_helpers import ALICE, BOB, PRIVATE, PUBLIC, ctx, err, ok

from junior_core import Runtime, ToolContext


def remember(rt: Runtime, content: str, kind: str, context: ToolContext | None = None) -> dict[str, Any]:
    return ok(rt.execute_tool("memory__remember", {"content": content, "kind": kind}, context or ctx()))


@pytest.fixture
def seeded(make_runtime: Any) -> Runtime:
    rt: Runtime = make_runtime(embedder=False)
    remember(rt, "Alice prefers terse PR summaries", "preference")
    remember(rt, "Release steps: tag the commit, build, then announce in the releases channel", "procedure")
    remember(rt, "Hotfix procedure: branch from the release tag and get one review", "procedure")
    remember(rt, "Dana owns the billing service", "knowledge")
    remember(rt, "The release calendar lives in the wiki", "knowledge")
    remember(rt, "Bob prefers long PR summaries", "preference", ctx(BOB, PUBLIC))  # never Alice's to see
    remember(rt, "The private channel's release steps differ", "procedure", ctx(ALICE, PRIVATE))  # not here
    return rt


def listed(rt: Runtime, **arguments: Any) -> dict[str, Any]:
    return ok(rt.execute_tool("memory__list", arguments, ctx()))


def found(rt: Runtime, query: str, **arguments: Any) -> dict[str, Any]:
    return ok(rt.execute_tool("memory__search", {"query": query, **arguments}, ctx()))


def test_list_by_kind_shows_only_those_kinds_that_the_speaker_may_see(seeded: Runtime) -> None:
    preferences = listed(seeded, kind=["preference"])
    assert [m["content"] for m in preferences["memories"]] == ["Alice prefers terse PR summaries"]
    assert preferences["total"] == 1
    shared = listed(seeded, kind=["procedure", "knowledge"])
    assert sorted(m["content"] for m in shared["memories"]) == [
        "Dana owns the billing service",
        "Hotfix procedure: branch from the release tag and get one review",
        "Release steps: tag the commit, build, then announce in the releases channel",
        "The release calendar lives in the wiki",
    ]
    assert shared["total"] == 4 and {m["kind"] for m in shared["memories"]} == {"procedure", "knowledge"}
    assert listed(seeded)["total"] == 5  # control: without kind, every kind visible here


def test_list_by_kind_pages_within_the_kind(seeded: Runtime) -> None:
    first = listed(seeded, kind=["procedure"], limit=1)
    assert first["total"] == 2 and first["next_cursor"] is not None
    rest = listed(seeded, kind=["procedure"], limit=1, cursor=first["next_cursor"])
    contents = [m["content"] for m in first["memories"] + rest["memories"]]
    assert len(set(contents)) == 2 and all(m["kind"] == "procedure" for m in first["memories"] + rest["memories"])
    assert rest["next_cursor"] is None


def test_search_by_kind_leaves_other_kinds_out(seeded: Runtime) -> None:
    everything = found(seeded, "release")
    assert sorted(m["kind"] for m in everything["memories"]) == ["knowledge", "procedure", "procedure"]  # control
    procedures = found(seeded, "release", kind=["procedure"])
    assert sorted(m["content"] for m in procedures["memories"]) == [
        "Hotfix procedure: branch from the release tag and get one review",
        "Release steps: tag the commit, build, then announce in the releases channel",
    ]
    knowledge = found(seeded, "release", kind=["knowledge", "knowledge"])
    assert [m["content"] for m in knowledge["memories"]] == ["The release calendar lives in the wiki"]


def test_an_empty_answer_by_kind_names_the_kinds_here_with_their_counts(seeded: Runtime) -> None:
    nothing = found(seeded, "PR summaries", kind=["knowledge"])
    assert nothing["memories"] == []
    # Alice's own preference counts, Bob's does not; the private channel's procedure is not here.
    assert nothing["kinds_here"] == {"knowledge": 2, "preference": 1, "procedure": 2}
    assert nothing["visible_here"] == 5
    assert "1 preference" in nothing["note"] and "2 procedure" in nothing["note"]

    as_bob = ok(seeded.execute_tool("memory__list", {"kind": ["knowledge"]}, ctx(BOB, PRIVATE)))
    assert as_bob["memories"] == [] and as_bob["total"] == 0
    assert as_bob["kinds_here"] == {"preference": 1, "procedure": 1}
    assert "No knowledge memory is visible here" in as_bob["note"]


def test_list_by_kind_in_an_empty_place_says_nothing_is_here(make_runtime: Any) -> None:
    rt: Runtime = make_runtime(embedder=False)
    answer = listed(rt, kind=["preference"])
    assert answer["memories"] == [] and answer["kinds_here"] == {}
    assert "No memory of any kind" in answer["note"]


@pytest.mark.parametrize("kind", ["preference", [], ["fact"], ["preference", 3], {"kind": "preference"}])
def test_kind_must_be_a_list_of_known_kinds(rt: Runtime, kind: Any) -> None:
    for tool, arguments in (("memory__list", {}), ("memory__search", {"query": "summaries"})):
        error = err(rt.execute_tool(tool, {**arguments, "kind": kind}, ctx()), "invalid_arguments")
        assert "kind" in str(error)


def test_a_similar_memory_of_another_kind_is_left_out_too(make_runtime: Any) -> None:
    from memory_helpers import ConceptEmbedder

    rt: Runtime = make_runtime(embedder=ConceptEmbedder())
    remember(rt, "Dana owns the billing service", "knowledge")
    remember(rt, "Lunch orders go in the food channel", "procedure")
    assert rt.plugin("memory").store().flush_vectors(10)
    question = "who is responsible for payments?"  # no shared keyword: found by meaning alone
    assert [m["content"] for m in found(rt, question)["memories"]] == ["Dana owns the billing service"]  # control
    assert [m["content"] for m in found(rt, question, kind=["knowledge"])["memories"]] == [
        "Dana owns the billing service"
    ]
    other = found(rt, question, kind=["procedure"])
    assert other["memories"] == [] and other["kinds_here"] == {"knowledge": 1, "procedure": 1}
