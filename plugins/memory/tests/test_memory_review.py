"""A reviewer sees every explicit write before it is stored: rewording, reclassifying, refusing."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from junior_memory.review import Review
from memory_helpers import ALICE, PUBLIC, ctx, err, ok

from junior_core import Runtime, ToolContext


class ScriptedReviewer:
    """Refuses content about someone else, rewrites first-person wording, and records what it saw."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, str, ToolContext]] = []

    def review(self, content: str, kind: str, context: ToolContext) -> Review:
        self.seen.append((content, kind, context))
        if content.startswith("David"):
            return Review("refuse", content, kind, "it is a personal fact about someone other than the speaker")
        if content.lower().startswith("i prefer "):
            return Review("accept", "Prefers " + content[len("i prefer ") :], "preference")
        return Review("accept", content, kind)


def test_reviewer_rewords_and_reclassifies_before_storing(
    make_runtime: Callable[..., Runtime], rows: Callable[..., list[dict[str, Any]]]
) -> None:
    reviewer = ScriptedReviewer()
    rt = make_runtime(reviewer=reviewer)
    context = ctx(call="call-review-1")
    stored = ok(rt.execute_tool("memory__remember", {"content": "I prefer terse PR summaries", "kind": "knowledge"},
                                context))
    assert stored["content"] == "Prefers terse PR summaries" and stored["kind"] == "preference"
    assert reviewer.seen == [("I prefer terse PR summaries", "knowledge", context)]
    found = rows("SELECT content, kind, scope, scope_key FROM junior_memory_memories WHERE source_key = :k",
                 k=PUBLIC.source_key)
    assert found == [{"content": "Prefers terse PR summaries", "kind": "preference", "scope": "personal",
                      "scope_key": ALICE.key}]


def test_reviewer_refusal_stores_nothing_and_says_why(
    make_runtime: Callable[..., Runtime], rows: Callable[..., list[dict[str, Any]]]
) -> None:
    rt = make_runtime(reviewer=ScriptedReviewer())
    refused = err(rt.execute_tool("memory__remember", {"content": "David prefers tabs", "kind": "preference"},
                                  ctx(call="call-review-2")), "rejected")
    assert "someone other than the speaker" in refused["message"]
    assert rows("SELECT id FROM junior_memory_memories") == []
    ok(rt.execute_tool("memory__remember", {"content": "Deploys need two approvals", "kind": "procedure"},
                       ctx(call="call-review-3")))
    assert [r["content"] for r in rows("SELECT content FROM junior_memory_memories")] == ["Deploys need two approvals"]


class Reclassifier:
    """Accepts every write unchanged except for its kind, which becomes ``to``."""

    def __init__(self, to: str) -> None:
        self.to = to

    def review(self, content: str, kind: str, context: ToolContext) -> Review:
        return Review("accept", content, self.to)


class BrokenReviewer:
    def review(self, content: str, kind: str, context: ToolContext) -> Review:
        raise RuntimeError("reviewer backend exploded")


def test_reviewer_cannot_move_a_preference_into_shared_scope(
    make_runtime: Callable[..., Runtime], rows: Callable[..., list[dict[str, Any]]]
) -> None:
    for to in ("procedure", "knowledge"):
        rt = make_runtime(reviewer=Reclassifier(to))
        stored = ok(rt.execute_tool("memory__remember", {"content": f"I prefer {to} answers short", "kind":
                                                         "preference"}, ctx(call=f"call-widen-{to}")))
        assert stored["kind"] == "preference" and stored["visible_to"] == "only the person who said it"
    found = rows("SELECT kind, scope, scope_key FROM junior_memory_memories ORDER BY content")
    assert found == [{"kind": "preference", "scope": "personal", "scope_key": ALICE.key}] * 2


def test_reviewer_may_narrow_or_swap_shared_kinds(
    make_runtime: Callable[..., Runtime], rows: Callable[..., list[dict[str, Any]]]
) -> None:
    swapped = ok(make_runtime(reviewer=Reclassifier("knowledge")).execute_tool(
        "memory__remember", {"content": "Deploys need two approvals", "kind": "procedure"}, ctx(call="call-swap")))
    assert (swapped["kind"], swapped["visible_to"]) == ("knowledge", "everyone in this workspace's public channels")
    narrowed = ok(make_runtime(reviewer=Reclassifier("preference")).execute_tool(
        "memory__remember", {"content": "I like the staging dashboard", "kind": "knowledge"}, ctx(call="call-narrow")))
    assert (narrowed["kind"], narrowed["visible_to"]) == ("preference", "only the person who said it")
    assert {(r["kind"], r["scope"]) for r in rows("SELECT kind, scope FROM junior_memory_memories")} == {
        ("knowledge", "conversation"), ("preference", "personal"),
    }


def test_a_failing_reviewer_stores_the_write_as_requested(
    make_runtime: Callable[..., Runtime], rows: Callable[..., list[dict[str, Any]]], caplog: Any
) -> None:
    rt = make_runtime(reviewer=BrokenReviewer())
    with caplog.at_level("WARNING", logger="junior.memory"):
        stored = ok(rt.execute_tool("memory__remember", {"content": "I prefer terse PR summaries", "kind":
                                                         "preference"}, ctx(call="call-broken")))
    assert stored["created"] is True and stored["content"] == "I prefer terse PR summaries"
    assert any("reviewer" in r.getMessage() and r.exc_info for r in caplog.records)
    assert rows("SELECT content, kind, scope FROM junior_memory_memories") == [
        {"content": "I prefer terse PR summaries", "kind": "preference", "scope": "personal"}
    ]
