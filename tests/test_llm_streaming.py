"""Streaming model clients: the reply a stream adds up to is the one ``complete`` gives, its text handed over in
pieces as they arrive."""

from __future__ import annotations

import pytest

from junior_core.llm.anthropic import collect_anthropic_stream, parse_anthropic_response
from junior_core.llm.types import ChatItem, ModelRequest, StreamingModelClient, ToolCall, call, say
from junior_core.testing import ChatCompletionsServer, ScriptView

pytest.importorskip("openai")

LONG = "Deploys go through the release channel, after the checks pass and a reviewer says yes. " * 2


def script(view: ScriptView) -> object:
    if "tool" in view.user_text:
        return call("searchTools", {"query": "release process"}, id="call_1", text="Let me look.")
    return say(LONG)


def test_an_openai_compatible_stream_gives_its_text_in_pieces_and_the_same_reply_as_complete() -> None:
    from junior_core.llm import model_from_spec

    with ChatCompletionsServer(script, model="local") as server:
        model = model_from_spec(server.spec, env={})
        assert isinstance(model, StreamingModelClient)
        pieces: list[str] = []
        request = ModelRequest("system", (ChatItem("user", "how do we deploy?"),))
        streamed = model.stream(request, pieces.append)
        assert len(pieces) > 5 and "".join(pieces) == LONG
        assert streamed == model.complete(request)
        assert server.requests[0]["stream"] is True and "stream" not in server.requests[1]
        pieces.clear()
        with_tool = model.stream(ModelRequest("system", (ChatItem("user", "use a tool"),)), pieces.append)
        assert pieces == ["Let me look."]
        assert with_tool.tool_calls == (ToolCall("call_1", "searchTools", {"query": "release process"}),)


def test_a_failing_stream_is_a_model_error_naming_the_model() -> None:
    from junior_core import ModelError
    from junior_core.llm import model_from_spec

    with ChatCompletionsServer(script, model="local") as server:
        model = model_from_spec(server.spec, env={})
        server.fail(503)
        with pytest.raises(ModelError, match="openai-compatible:"):
            model.stream(ModelRequest("system", (ChatItem("user", "hi"),)), lambda _text: None)  # type: ignore[attr-defined]


def test_an_anthropic_stream_adds_up_to_its_message_text_deltas_and_tool_input_pieces() -> None:
    events = [
        {"type": "message_start", "message": {"id": "msg_1", "type": "message", "role": "assistant", "content": [],
                                              "model": "claude", "stop_reason": None}},
        {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
        {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Let me "}},
        {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "look."}},
        {"type": "content_block_stop", "index": 0},
        {"type": "content_block_start", "index": 1,
         "content_block": {"type": "tool_use", "id": "toolu_1", "name": "searchTools", "input": {}}},
        {"type": "content_block_delta", "index": 1, "delta": {"type": "input_json_delta", "partial_json": '{"que'}},
        {"type": "content_block_delta", "index": 1,
         "delta": {"type": "input_json_delta", "partial_json": 'ry": "release"}'}},
        {"type": "content_block_stop", "index": 1},
        {"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": {"output_tokens": 9}},
        {"type": "message_stop"},
    ]
    pieces: list[str] = []
    reply = parse_anthropic_response(collect_anthropic_stream(events, pieces.append))
    assert pieces == ["Let me ", "look."] and reply.text == "Let me look." and reply.stop_reason == "tool_use"
    assert reply.tool_calls == (ToolCall("toolu_1", "searchTools", {"query": "release"}),)
    with pytest.raises(ValueError, match="overloaded"):
        collect_anthropic_stream([events[0], {"type": "error", "error": {"type": "overloaded_error"}}])
