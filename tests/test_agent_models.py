"""Model clients against a local HTTP stand-in that speaks the real Chat Completions and Messages wire formats."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from junior_core import Actor, Conversation, Runtime, Source, Tool, ToolContext, hookimpl
from junior_core.context import Message
from junior_core.llm import ModelConfigError, model_from_env, model_from_spec
from junior_core.llm.agent import run_turn
from junior_core.llm.anthropic import AnthropicModel
from junior_core.llm.openai import OpenAIChatModel
from junior_core.llm.types import ChatItem, ModelRequest, ToolCall

pytest.importorskip("openai")
pytest.importorskip("anthropic")


class StandIn:
    """A one-route-per-API HTTP server answering queued JSON bodies and recording requests."""

    def __init__(self) -> None:
        self.requests: list[tuple[str, dict[str, Any], dict[str, str]]] = []
        self.responses: list[dict[str, Any]] = []
        stand_in = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("content-length", "0"))
                body = json.loads(self.rfile.read(length))
                stand_in.requests.append((self.path, body, {k.lower(): v for k, v in self.headers.items()}))
                payload = json.dumps(stand_in.responses.pop(0)).encode()
                self.send_response(200)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, args=(0.01,), daemon=True)  # shutdown waits a poll
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def stand_in() -> Iterator[StandIn]:
    server = StandIn()
    try:
        yield server
    finally:
        server.close()


TOOLS = ({"name": "searchTools", "description": "Find tools.", "input_schema": {"type": "object", "properties": {}}},)

REQUEST = ModelRequest(
    system="Be brief.",
    messages=(
        ChatItem("user", "<@U1>: what time is it?"),
        ChatItem("assistant", "", (ToolCall("call_1", "searchTools", {"query": "time"}),)),
        ChatItem("tool", '{"ok": true}', tool_call_id="call_1"),
    ),
    tools=TOOLS,
)


def chat_completion(message: dict[str, Any], finish_reason: str) -> dict[str, Any]:
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 1700000000,
        "model": "m",
        "choices": [{"index": 0, "message": message, "finish_reason": finish_reason, "logprobs": None}],
        "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
    }


def test_openai_client_sends_chat_completions_and_parses_tool_calls(stand_in: StandIn) -> None:
    stand_in.responses.append(
        chat_completion(
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": "call_9",
                        "type": "function",
                        "function": {"name": "executeTool", "arguments": '{"tool_name": "a__b"}'},
                    },
                    {
                        "id": "call_10",
                        "type": "function",
                        "function": {"name": "executeTool", "arguments": "{not json"},
                    },
                ],
            },
            "tool_calls",
        )
    )
    model = OpenAIChatModel("m", base_url=stand_in.url + "/v1", api_key="k", temperature=0)
    reply = model.complete(REQUEST)

    path, body, headers = stand_in.requests[0]
    assert path == "/v1/chat/completions"
    assert headers["authorization"] == "Bearer k"
    assert body["model"] == "m" and body["temperature"] == 0 and body["tool_choice"] == "auto"
    assert body["messages"] == [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "<@U1>: what time is it?"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "call_1",
                    "type": "function",
                    "function": {"name": "searchTools", "arguments": '{"query": "time"}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "call_1", "content": '{"ok": true}'},
    ]
    assert body["tools"] == [
        {
            "type": "function",
            "function": {"name": "searchTools", "description": "Find tools.", "parameters": TOOLS[0]["input_schema"]},
        }
    ]
    assert reply.tool_calls[0] == ToolCall("call_9", "executeTool", {"tool_name": "a__b"})
    bad = reply.tool_calls[1]
    assert bad.arguments is None and bad.arguments_error is not None and "not valid JSON" in bad.arguments_error
    assert reply.stop_reason == "tool_calls"


def test_anthropic_client_sends_messages_and_merges_tool_results(stand_in: StandIn) -> None:
    stand_in.responses.append(
        {
            "id": "msg_1",
            "type": "message",
            "role": "assistant",
            "model": "claude-x",
            "content": [
                {"type": "text", "text": "Checking."},
                {"type": "tool_use", "id": "toolu_2", "name": "executeTool", "input": {"tool_name": "a__b"}},
            ],
            "stop_reason": "tool_use",
            "stop_sequence": None,
            "usage": {"input_tokens": 1, "output_tokens": 1},
        }
    )
    model = AnthropicModel("claude-x", base_url=stand_in.url, api_key="k", max_tokens=300)
    request = ModelRequest(
        REQUEST.system,
        (
            *REQUEST.messages[:2],
            ChatItem("tool", '{"ok": false}', tool_call_id="call_1", is_error=True),
            ChatItem("user", "more"),
        ),
        TOOLS,
    )
    reply = model.complete(request)

    path, body, headers = stand_in.requests[0]
    assert path == "/v1/messages"
    assert "k" in (headers.get("x-api-key"), headers.get("authorization", "").removeprefix("Bearer "))
    assert headers["anthropic-version"]
    assert body["system"] == "Be brief." and body["max_tokens"] == 300
    assert body["messages"] == [
        {"role": "user", "content": [{"type": "text", "text": "<@U1>: what time is it?"}]},
        {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": "call_1", "name": "searchTools", "input": {"query": "time"}}],
        },
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "call_1", "content": '{"ok": false}', "is_error": True},
                {"type": "text", "text": "more"},
            ],
        },
    ]
    assert body["tools"] == [
        {"name": "searchTools", "description": "Find tools.", "input_schema": TOOLS[0]["input_schema"]}
    ]
    assert reply.text == "Checking."
    assert reply.tool_calls == (ToolCall("toolu_2", "executeTool", {"tool_name": "a__b"}),)
    assert reply.stop_reason == "tool_use"


class Clock:
    @hookimpl
    def register_sources(self, register: Any) -> None:
        register(
            Source("clock", "Time and dates."),
            tools=[Tool("now", "Current time.", {"type": "object", "properties": {}}, lambda a, c: {"time": "12:00"})],
        )


def test_run_turn_through_openai_compatible_server(stand_in: StandIn) -> None:
    def call(i: int, name: str, args: dict[str, Any]) -> dict[str, Any]:
        fn = {"name": name, "arguments": json.dumps(args)}
        return chat_completion(
            {"role": "assistant", "content": None, "tool_calls": [{"id": f"c{i}", "type": "function", "function": fn}]},
            "tool_calls",
        )

    stand_in.responses += [
        call(1, "searchTools", {"query": "time", "source": "clock"}),
        call(2, "executeTool", {"tool_name": "clock__now", "arguments": {}}),
        chat_completion({"role": "assistant", "content": "It is 12:00."}, "stop"),
    ]
    model = model_from_spec(f"openai-compatible:{stand_in.url}/v1#local-model", env={})
    assert model.name == f"openai-compatible:{stand_in.url}/v1#local-model"
    context = ToolContext(Actor("slack", "T1", "U1"), Conversation("slack", "T1", "C1", message_ts="1700000000.000001", visibility="public"))
    with Runtime(plugins=[Clock()]) as rt:
        turn = run_turn(model, rt, context, [Message("user", "time?", actor=context.actor)])
    assert turn.text == "It is 12:00."
    assert [r.tool_name for r in turn.tool_calls] == ["searchTools", "clock__now"]
    assert turn.tool_calls[1].result == {"ok": True, "tool_name": "clock__now", "result": {"time": "12:00"}}
    last_body = stand_in.requests[-1][1]
    assert last_body["model"] == "local-model"
    assert json.loads(last_body["messages"][-1]["content"])["result"] == {"time": "12:00"}
    assert last_body["messages"][-1]["tool_call_id"] == "c2"


def test_model_spec_errors_say_what_is_missing() -> None:
    with pytest.raises(ModelConfigError, match="OPENAI_API_KEY"):
        model_from_spec("openai:gpt-4.1", env={})
    with pytest.raises(ModelConfigError, match="ANTHROPIC_API_KEY"):
        model_from_spec("anthropic:claude-sonnet-4-5", env={})
    with pytest.raises(ModelConfigError, match="openai-compatible:<base_url>#<model>"):
        model_from_spec("openai-compatible:http://localhost:8000/v1", env={})
    with pytest.raises(ModelConfigError, match="unknown model provider 'gemini'"):
        model_from_spec("gemini:x", env={})
    assert model_from_env(env={}) is None
    model = model_from_env(env={"JUNIOR_MODEL": "anthropic:claude-x", "ANTHROPIC_API_KEY": "k"})
    assert isinstance(model, AnthropicModel) and model.model == "claude-x"


def test_extended_thinking_is_refused_rather_than_broken_on_the_second_step() -> None:
    from junior_core.llm.anthropic import AnthropicModel
    from junior_core.llm.types import ModelConfigError

    with pytest.raises(ModelConfigError, match="thinking"):
        AnthropicModel("claude-test", client=object(), thinking={"type": "enabled", "budget_tokens": 1024})
