"""run_turn with ScriptedModel over both wire formats: context injection, dispatch, after_turn."""

from __future__ import annotations

from collections.abc import Generator
from typing import Any

import pytest

from junior_core import Actor, Conversation, Message, Runtime, Source, Tool, ToolContext, ToolError, hookimpl
from junior_core.llm.agent import run_turn
from junior_core.llm.types import ModelReply, ToolCall, call, say
from junior_core.testing import ScriptedModel, ScriptView

ALICE = Actor("slack", "T1", "U1")
BOB = Actor("slack", "T1", "U2")
CONTEXT = ToolContext(
    ALICE, Conversation("slack", "T1", "C1", thread_ts="1700000000.000001", message_ts="1700000000.000003", visibility="public")
)


class Notes:
    """A deferred ``notes`` source that records the context it was called in."""

    def __init__(self) -> None:
        self.calls: list[tuple[dict[str, Any], ToolContext]] = []
        self.turns: list[list[Message]] = []

    def add(self, arguments: dict[str, Any], context: ToolContext) -> dict[str, Any]:
        self.calls.append((arguments, context))
        if arguments["text"] == "boom":
            raise ToolError("rejected", "Notes cannot say boom; rephrase.")
        return {"saved": arguments["text"]}

    @hookimpl
    def register_sources(self, register: Any) -> None:
        schema = {
            "type": "object",
            "properties": {"text": {"type": "string"}},
            "required": ["text"],
            "additionalProperties": False,
        }
        register(Source("notes", "Short notes kept for later."), tools=[Tool("add", "Save a note.", schema, self.add)])

    @hookimpl
    def prompt_context(self, context: ToolContext, user_text: str) -> str:
        return f"Known notes for {context.actor.user_id if context.actor else '?'}: buy milk (asked: {user_text})"

    @hookimpl
    def after_turn(self, context: ToolContext, transcript: list[Message]) -> None:
        self.turns.append(list(transcript))


def protocol(view: ScriptView) -> Generator[ModelReply, Any, None]:
    found = yield call("searchTools", {"query": "save a note", "source": "notes"})
    tool_name = found["tools"][0]["tool_name"]
    result = yield call("executeTool", {"tool_name": tool_name, "arguments": {"text": "hello"}})
    yield say(f"Saved {result['result']['saved']}.")


@pytest.mark.parametrize("wire", ["openai", "anthropic"])
def test_turn_injects_context_dispatches_and_reports(wire: str) -> None:
    notes = Notes()
    model = ScriptedModel(protocol, wire=wire)  # type: ignore[arg-type]
    history = [
        Message("user", "earlier", actor=BOB),
        Message("assistant", "ok"),
        Message("user", "I like tea", actor=BOB),
        Message("user", "save hello", actor=ALICE),
    ]
    with Runtime(plugins=[notes]) as rt:
        turn = run_turn(model, rt, CONTEXT, history)

    assert turn.text == "Saved hello."
    assert turn.stop_reason == "answered" and turn.steps == 3
    assert [r.name for r in turn.tool_calls] == ["searchTools", "executeTool"]
    ((arguments, context),) = notes.calls
    assert arguments == {"text": "hello"}
    assert context.actor == ALICE and context.conversation == CONTEXT.conversation
    assert context.tool_call_id == turn.tool_calls[1].id and context.tool_call_id
    # The prompt block reaches the model inside the wire request's system prompt.
    first = model.requests[0]
    system = first["messages"][0]["content"] if wire == "openai" else first["system"]
    assert "Known notes for U1: buy milk (asked: I like tea\nsave hello)" in system
    assert turn.context_blocks == ("Known notes for U1: buy milk (asked: I like tea\nsave hello)",)
    # after_turn sees only this turn: the batched user messages, the tools that ran, the answer.
    (seen,) = notes.turns
    assert [(m.role, m.actor, m.tool_name) for m in seen] == [
        ("user", BOB, None),
        ("user", ALICE, None),
        ("tool", None, "searchTools"),
        ("tool", None, "notes__add"),
        ("assistant", None, None),
    ]
    assert seen[3].arguments == {"text": "hello"} and seen[3].result["ok"] is True
    assert seen[-1].text == "Saved hello."


def test_authors_are_labelled_for_the_model() -> None:
    model = ScriptedModel(lambda view: say(view.user_text))
    with Runtime(plugins=[]) as rt:
        turn = run_turn(
            model, rt, CONTEXT, [Message("user", "I like tea", actor=BOB), Message("user", "hi", actor=ALICE)]
        )
    assert turn.text == "<@U2>: I like tea\n<@U1>: hi"
    assert "The person talking to you now is <@U1>" in turn.system


def test_bad_arguments_and_tool_errors_go_back_to_the_model_as_data() -> None:
    seen: list[Any] = []

    def script(view: ScriptView) -> Generator[ModelReply, Any, None]:
        seen.append((yield ModelReply(tool_calls=(ToolCall("", "executeTool", '{"tool_name": '),))))
        seen.append((yield call("executeTool", {"tool_name": "notes__add", "arguments": {"text": "boom"}})))
        seen.append((yield call("executeTool", {"tool_name": "notes__add", "arguments": {"txt": 1}})))
        yield say("done")

    notes = Notes()
    with Runtime(plugins=[notes]) as rt:
        turn = run_turn(ScriptedModel(script), rt, CONTEXT, [Message("user", "go", actor=ALICE)])
    assert turn.text == "done"
    assert seen[0]["error"]["code"] == "invalid_arguments" and "not valid JSON" in seen[0]["error"]["message"]
    assert seen[1]["error"] == {"code": "rejected", "message": "Notes cannot say boom; rephrase."}
    assert seen[2]["error"]["code"] == "invalid_arguments"
    assert len(notes.calls) == 1


@pytest.mark.parametrize("wire", ["openai", "anthropic"])
def test_tool_loop_stops_after_max_steps(wire: str) -> None:
    def forever(view: ScriptView) -> ModelReply:
        return call("searchTools", {"query": f"step {view.step}"}, text=f"thinking {view.step}")

    notes = Notes()
    with Runtime(plugins=[notes]) as rt:
        turn = run_turn(
            ScriptedModel(forever, wire=wire), rt, CONTEXT, [Message("user", "go", actor=ALICE)], max_steps=3
        )  # type: ignore[arg-type]
    assert turn.stop_reason == "max_steps" and turn.steps == 3
    assert len(turn.tool_calls) == 3
    assert turn.text == "thinking 2"
    assert len(notes.turns) == 1


def test_a_turn_needs_a_trailing_user_message() -> None:
    with Runtime(plugins=[]) as rt, pytest.raises(ValueError, match="at least one user message"):
        run_turn(ScriptedModel(lambda v: say("x")), rt, CONTEXT, [Message("user", "a"), Message("assistant", "b")])
