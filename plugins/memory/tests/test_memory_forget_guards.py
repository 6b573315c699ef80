"""memory__forget on the real runtime: exclusion syntax is refused, never matched; a retried call answers
what the first call answered."""

from __future__ import annotations

from typing import Any

import pytest
from memory_helpers import ALICE, BOB, PUBLIC, ctx, err, ok

from junior_core import Runtime, ToolContext


def remember(rt: Runtime, content: str, kind: str = "procedure", context: ToolContext | None = None) -> dict[str, Any]:
    return ok(rt.execute_tool("memory__remember", {"content": content, "kind": kind}, context or ctx()))


def live(rows: Any) -> list[str]:
    return sorted(r["content"] for r in rows("SELECT content FROM junior_memory_memories WHERE archived_at IS NULL"))


@pytest.mark.parametrize("query", ["NOT deploy", "-deploy", "!deploy", "not deploy", "releases -deploy",
                                   "notes NOT deploy", "release notes !deploy"])
def test_exclusion_syntax_is_refused_and_archives_nothing(rt: Runtime, rows: Any, query: str) -> None:
    remember(rt, "Deploy the release notes site with make deploy")
    remember(rt, "Release notes are written on Thursdays")
    error = err(rt.execute_tool("memory__forget", {"query": query}, ctx()), "rejected")
    assert "no operators or negation" in error["message"] and "nothing was forgotten" in error["message"]
    assert live(rows) == ["Deploy the release notes site with make deploy", "Release notes are written on Thursdays"]


def test_replaces_refuses_exclusion_syntax_too(rt: Runtime, rows: Any) -> None:
    remember(rt, "Deploy the release notes site with make deploy")
    answer = rt.execute_tool("memory__remember", {"content": "Release notes go out on Fridays", "kind": "procedure",
                                                  "replaces": "-deploy"}, ctx())
    assert "nothing was saved" in err(answer, "rejected")["message"]
    assert live(rows) == ["Deploy the release notes site with make deploy"]


@pytest.mark.parametrize("query", ["DO NOT DEPLOY ON FRIDAYS", "deploy on fridays", "no-deploy fridays"])
def test_words_that_merely_look_like_operators_still_match(rt: Runtime, query: str) -> None:
    remember(rt, "DO NOT DEPLOY ON FRIDAYS")
    assert ok(rt.execute_tool("memory__forget", {"query": query}, ctx()))["forgotten"]["content"] == (
        "DO NOT DEPLOY ON FRIDAYS")


@pytest.mark.parametrize("by", ["query", "id"])
def test_a_retried_forget_answers_its_first_answer(rt: Runtime, rows: Any, by: str) -> None:
    target = remember(rt, "The on-call rota lives in the ops wiki")
    remember(rt, "The on-call rota changes on Mondays")
    arguments = {"query": "rota ops wiki"} if by == "query" else {"id": target["id"][:8]}
    first = ok(rt.execute_tool("memory__forget", arguments, ctx(call="forget-1")))
    again = ok(rt.execute_tool("memory__forget", arguments, ctx(call="forget-1")))
    assert again == first and first["forgotten"]["id"] == target["id"]
    assert live(rows) == ["The on-call rota changes on Mondays"]
    events = rows("SELECT memory_id FROM junior_memory_events WHERE event = 'archived'")
    assert [e["memory_id"] for e in events] == [target["id"]]
    # A new call with the same words is not a retry: the memory is gone, so not_found.
    err(rt.execute_tool("memory__forget", arguments, ctx(call="forget-2")), "not_found")


def test_a_retry_naming_another_memory_is_refused(rt: Runtime, rows: Any) -> None:
    first = remember(rt, "The on-call rota lives in the ops wiki")
    other = remember(rt, "Staging is rebuilt on Sundays")
    ok(rt.execute_tool("memory__forget", {"id": first["id"]}, ctx(call="forget-1")))
    error = err(rt.execute_tool("memory__forget", {"id": other["id"]}, ctx(call="forget-1")), "rejected")
    assert "already used to forget a different memory" in error["message"]
    assert live(rows) == ["Staging is rebuilt on Sundays"]


def test_a_retry_never_reveals_a_memory_this_context_cannot_see(rt: Runtime) -> None:
    mine = remember(rt, "I prefer answers in British English", "preference", ctx(ALICE, PUBLIC))
    ok(rt.execute_tool("memory__forget", {"id": mine["id"]}, ctx(ALICE, PUBLIC, call="forget-1")))
    # Bob reuses the call id in the same conversation: Alice's preference is not his to see.
    err(rt.execute_tool("memory__forget", {"id": mine["id"]}, ctx(BOB, PUBLIC, call="forget-1")), "not_found")
