"""The scripted model and the scripted Chat Completions server keep overlapping conversations apart."""

from __future__ import annotations

import json
import urllib.request
from collections.abc import Generator
from typing import Any

from junior_core.llm.openai import openai_request, parse_openai_response
from junior_core.llm.types import ChatItem, ModelReply, ModelRequest, call, say
from junior_core.testing import ChatCompletionsServer, ScriptedModel, ScriptView


def script(view: ScriptView) -> Generator[ModelReply, Any, None]:
    """Searches for the user's words, then says what came back: each answer must name its own conversation."""
    found = yield call("searchTools", {"query": view.user_text})
    yield say(f"{view.user_text}: {found['echo']}")


def request(user: str, *tail: ChatItem) -> ModelRequest:
    return ModelRequest("system", (ChatItem("user", user), *tail))


def after(reply: ModelReply, result: dict[str, Any]) -> tuple[ChatItem, ChatItem]:
    (tool_call,) = reply.tool_calls
    return (ChatItem("assistant", reply.text, reply.tool_calls),
            ChatItem("tool", json.dumps(result), tool_call_id=tool_call.id))


def test_two_conversations_that_overlap_each_get_their_own_answer() -> None:
    model = ScriptedModel(script)
    first_a = model.complete(request("alpha"))
    first_b = model.complete(request("beta"))  # beta starts before alpha's tool result comes back
    second_a = model.complete(request("alpha", *after(first_a, {"echo": "for alpha"})))
    second_b = model.complete(request("beta", *after(first_b, {"echo": "for beta"})))
    assert (second_a.text, second_b.text) == ("alpha: for alpha", "beta: for beta")


def test_the_server_keeps_two_overlapping_conversations_apart() -> None:
    with ChatCompletionsServer(script, model="local") as server:
        def post(body: ModelRequest) -> ModelReply:
            data = json.dumps(openai_request("local", body)).encode()
            sent = urllib.request.Request(f"{server.url}/chat/completions", data=data,
                                          headers={"content-type": "application/json"})
            with urllib.request.urlopen(sent, timeout=30) as answer:
                return parse_openai_response(json.loads(answer.read()))

        first_a, first_b = post(request("alpha")), post(request("beta"))
        second_b = post(request("beta", *after(first_b, {"echo": "for beta"})))
        second_a = post(request("alpha", *after(first_a, {"echo": "for alpha"})))
    assert (second_a.text, second_b.text) == ("alpha: for alpha", "beta: for beta")
