"""Passive extraction (the after_turn hook) with a scripted extractor, through the gate of DESIGN §6."""

from __future__ import annotations

from typing import Any

import pytest
from junior_memory import Candidate, MemoryPlugin
from memory_helpers import ALICE, BOB, PRIVATE, PUBLIC, ScriptedExtractor, ctx

from junior_core import Message, Runtime

ROWS = "SELECT scope, scope_key, kind, content, origin, actor_key, tool_call_id FROM junior_memory_memories"

TURN = [
    Message("user", "I prefer terse PR summaries, and deploys here need a ticket", actor=ALICE),
    Message("assistant", "Noted. Also, the build cache lives in S3."),
    Message("tool", tool_name="ci__status", arguments={}, result={"ok": True, "result": {"runner": "self-hosted"}}),
    Message("tool", tool_name="ci__logs", arguments={}, result={"ok": False, "error": {"code": "timeout"}}),
]


def extract(make_runtime: Any, candidates: list[Any], transcript: list[Message] | None = None,
            context: Any = None) -> ScriptedExtractor:
    extractor = ScriptedExtractor(candidates)
    rt = make_runtime(extractor=extractor)
    rt.after_turn(context or ctx(ALICE, PUBLIC), transcript if transcript is not None else TURN)
    return extractor


def test_hook_after_turn(make_runtime: Any, rows: Any) -> None:
    extract(make_runtime, [
        Candidate("Prefers terse PR summaries", "preference", [0], about_speaker=True),
        Candidate("Deploys need a ticket", "procedure", [0]),
        Candidate("CI runs on self-hosted runners", "knowledge", [2]),
    ])
    stored = rows(ROWS + " ORDER BY kind")
    assert stored == [
        {"scope": "conversation", "scope_key": "slack:T1", "kind": "knowledge",
         "content": "CI runs on self-hosted runners", "origin": "extraction", "actor_key": "slack:T1:UALICE",
         "tool_call_id": None},
        {"scope": "personal", "scope_key": "slack:T1:UALICE", "kind": "preference",
         "content": "Prefers terse PR summaries", "origin": "extraction", "actor_key": "slack:T1:UALICE",
         "tool_call_id": None},
        {"scope": "conversation", "scope_key": "slack:T1", "kind": "procedure", "content": "Deploys need a ticket",
         "origin": "extraction", "actor_key": "slack:T1:UALICE", "tool_call_id": None},
    ]
    sources = {r["source_key"] for r in rows("SELECT source_key FROM junior_memory_memories")}
    assert sources == {"slack:T1:CPUBLIC:1700000000.000100"}


@pytest.mark.parametrize(
    ("candidate", "why"),
    [
        (Candidate("Prefers terse PR summaries", "preference", [0], about_speaker=False), "not about the speaker"),
        (Candidate("Prefers terse PR summaries", "preference", [1], about_speaker=True), "cites the assistant"),
        (Candidate("Prefers terse PR summaries", "preference", [0, 1], about_speaker=True), "not only own words"),
        (Candidate("The build cache lives in S3", "knowledge", [1]), "only the assistant said it"),
        (Candidate("CI logs time out", "knowledge", [3]), "failed tool result"),
        (Candidate("Deploys need a ticket", "procedure", []), "cites nothing"),
        (Candidate("Deploys need a ticket", "procedure", [9]), "cites a message not in the turn"),
        (Candidate("Deploy token is ghp_" + "a" * 36, "knowledge", [0]), "credential"),
        (Candidate("", "knowledge", [0]), "empty"),
        ({"content": "Deploys need a ticket", "kind": "procedure", "cites": [0]}, "not a Candidate"),
    ],
)
def test_gate_drops_unsupported_candidates(make_runtime: Any, rows: Any, candidate: Any, why: str) -> None:
    extract(make_runtime, [candidate])
    assert rows(ROWS) == [], why


def test_a_preference_needs_a_single_speaker(make_runtime: Any, rows: Any) -> None:
    turn = [Message("user", "I prefer tabs", actor=ALICE), Message("user", "Alice prefers tabs, I don't", actor=BOB)]
    extract(make_runtime, [Candidate("Prefers tabs", "preference", [0], about_speaker=True)], turn)
    assert rows(ROWS) == []
    # Team knowledge from a multi-speaker turn is still fine.
    extract(make_runtime, [Candidate("The team uses tabs", "knowledge", [0, 1])], turn)
    assert [r["kind"] for r in rows(ROWS)] == ["knowledge"]


def test_a_preference_needs_the_context_actor_to_be_the_speaker(make_runtime: Any, rows: Any) -> None:
    preference = Candidate("Prefers terse PR summaries", "preference", [0], about_speaker=True)
    extract(make_runtime, [preference], context=ctx(None, PUBLIC))
    extract(make_runtime, [preference], context=ctx(BOB, PUBLIC))
    assert rows(ROWS) == []
    extract(make_runtime, [preference], context=ctx(ALICE, PUBLIC))
    assert [(r["scope_key"], r["content"]) for r in rows(ROWS)] == [(ALICE.key, "Prefers terse PR summaries")]


def test_private_conversations_and_memory_tool_turns_are_skipped(make_runtime: Any, rows: Any) -> None:
    candidate = Candidate("Deploys need a ticket", "procedure", [0])
    private = extract(make_runtime, [candidate], context=ctx(ALICE, PRIVATE))
    used_direct = extract(make_runtime, [candidate], [*TURN, Message("tool", tool_name="memory__remember")])
    via_execute = Message("tool", tool_name="executeTool", arguments={"tool_name": "memory__search"}, result={})
    used_execute = extract(make_runtime, [candidate], [*TURN, via_execute])
    assert (private.calls, used_direct.calls, used_execute.calls) == (0, 0, 0)
    assert rows(ROWS) == []


def test_at_most_five_per_turn_and_idempotent_per_turn(make_runtime: Any, rows: Any) -> None:
    candidates = [Candidate(f"Service {i} is owned by team {i}", "knowledge", [0]) for i in range(8)]
    extractor = ScriptedExtractor(candidates)
    rt: Runtime = make_runtime(extractor=extractor)
    rt.after_turn(ctx(), TURN)
    rt.after_turn(ctx(), TURN)
    assert len(rows(ROWS)) == 5
    assert [e["event"] for e in rows("SELECT event FROM junior_memory_events")] == ["created"] * 5


def test_a_failing_extractor_loses_only_its_own_memories(make_runtime: Any, rows: Any) -> None:
    class Broken:
        def extract(self, transcript: Any, context: Any) -> Any:
            raise RuntimeError("model down")

    rt: Runtime = make_runtime(extractor=Broken())
    rt.after_turn(ctx(), TURN)
    assert rows(ROWS) == []
    assert rt.plugins[0].error is None


def test_extractor_from_environment(db_url: str, monkeypatch: pytest.MonkeyPatch, rows: Any) -> None:
    monkeypatch.setenv("JUNIOR_MEMORY_EXTRACTOR", "memory_helpers:EnvExtractor")
    with Runtime(plugins=[MemoryPlugin(url=db_url)]) as rt:
        rt.after_turn(ctx(), TURN)
    assert [r["content"] for r in rows(ROWS)] == ["Prefers reviews before lunch"]
