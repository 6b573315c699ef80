"""Turns whose model fails: one ModelError naming the model, the partial turn kept, after_turn still called.

The model is a real ``openai-compatible:`` client talking HTTP to ``ChatCompletionsServer``.
"""

from __future__ import annotations

import asyncio
import socket
from collections.abc import Generator
from typing import Any

import pytest

from junior_core import Message, ModelError, Runtime
from junior_core.llm import model_from_spec
from junior_core.llm.agent import arun_turn, run_turn
from junior_core.llm.openai import OpenAIChatModel
from junior_core.llm.types import ModelReply, call, say
from junior_core.testing import ChatCompletionsServer, ScriptView

pytest.importorskip("openai")

from test_agent_loop import CONTEXT, Notes

HELLO = [Message("user", "save hello", actor=CONTEXT.actor)]


def saves_then_breaks(server: list[ChatCompletionsServer]) -> Any:
    def script(view: ScriptView) -> Generator[ModelReply, Any, None]:
        found = yield call("searchTools", {"query": "save a note", "source": "notes"})
        yield call("executeTool", {"tool_name": found["tools"][0]["tool_name"], "arguments": {"text": "hello"}})
        server[0].fail(503)  # the model goes down after the note was saved
        yield say("never sent")

    return script


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_a_model_that_goes_down_mid_turn_raises_model_error_with_the_partial_turn(mode: str) -> None:
    holder: list[ChatCompletionsServer] = []
    notes = Notes()
    with ChatCompletionsServer(saves_then_breaks(holder), model="local") as server, Runtime(plugins=[notes]) as rt:
        holder.append(server)
        model = model_from_spec(server.spec, env={})
        with pytest.raises(ModelError) as raised:
            if mode == "sync":
                run_turn(model, rt, CONTEXT, HELLO)
            else:
                asyncio.run(arun_turn(model, rt, CONTEXT, HELLO))
    error = raised.value
    assert error.model == server.spec and server.spec in str(error) and "503" in error.reason
    assert type(error.__cause__).__name__ == "InternalServerError"  # the SDK's own exception, kept as the cause
    turn = error.turn
    assert turn is not None and turn.stop_reason == "model_error" and turn.error == error.reason
    assert [r.tool_name for r in turn.tool_calls] == ["searchTools", "notes__add"]
    assert turn.tool_calls[1].result["ok"] is True and turn.text == "" and turn.steps == 3
    assert [args["text"] for args, _ in notes.calls] == ["hello"]
    # after_turn saw exactly what happened: the user's message and the saved note, no answer.
    (seen,) = notes.turns
    assert [(m.role, m.tool_name) for m in seen] == [("user", None), ("tool", "searchTools"), ("tool", "notes__add")]
    assert seen == list(turn.transcript)


def test_an_unreachable_model_names_the_model_and_the_address() -> None:
    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    spec = f"openai-compatible:http://127.0.0.1:{port}/v1#local"
    assert model_from_spec(spec, env={}).client.max_retries == 2  # type: ignore[attr-defined]
    # The same client, but failing at once rather than after the SDK's waits between its tries.
    model = OpenAIChatModel("local", base_url=f"http://127.0.0.1:{port}/v1", api_key="x", name=spec, max_retries=0)
    notes = Notes()
    with Runtime(plugins=[notes]) as rt, pytest.raises(ModelError) as raised:
        run_turn(model, rt, CONTEXT, HELLO)
    assert str(raised.value).startswith(f"model {spec} failed: cannot reach http://127.0.0.1:{port}/v1")
    assert raised.value.turn is not None and raised.value.turn.tool_calls == () and len(notes.turns) == 1


def test_a_base_url_without_v1_says_to_add_it() -> None:
    with ChatCompletionsServer(lambda view: say("hi"), model="m") as server, Runtime(plugins=[Notes()]) as rt:
        bare = server.url.removesuffix("/v1")
        with pytest.raises(ModelError) as raised:
            run_turn(model_from_spec(f"openai-compatible:{bare}#m", env={}), rt, CONTEXT, HELLO)
    assert server.paths == ["/chat/completions"]
    assert f"openai-compatible:{bare}/v1#m" in raised.value.reason and "404" in raised.value.reason


def test_a_scripted_model_that_raises_is_a_model_error_too() -> None:
    def broken(view: ScriptView) -> ModelReply:
        raise RuntimeError("no more script")

    from junior_core.testing import ScriptedModel

    with Runtime(plugins=[Notes()]) as rt, pytest.raises(ModelError, match="model scripted failed: RuntimeError"):
        run_turn(ScriptedModel(broken), rt, CONTEXT, HELLO)


def test_the_server_answers_a_turn_through_the_real_client() -> None:
    with ChatCompletionsServer(lambda view: say(f"you said {view.user_text}"), model="m") as server:
        with Runtime(plugins=[Notes()]) as rt:
            turn = run_turn(model_from_spec(server.spec, env={}), rt, CONTEXT, HELLO)
    assert turn.text == "you said <@U1>: save hello" and turn.stop_reason == "answered" and turn.error is None
    assert server.paths == ["/v1/chat/completions"] and server.requests[0]["model"] == "m"


def test_a_client_that_stops_waiting_prints_nothing_from_the_server(capsys: pytest.CaptureFixture[str]) -> None:
    with ChatCompletionsServer(lambda view: say("hi"), model="m") as server:
        httpd = server._httpd
        for gone in (BrokenPipeError(32, "Broken pipe"), ConnectionResetError(104, "reset")):
            try:
                raise gone
            except ConnectionError:
                httpd.handle_error(None, ("127.0.0.1", 1))
        assert capsys.readouterr().err == ""
        try:  # any other failure of a request is still printed, as socketserver does
            raise ValueError("a bug in the handler")
        except ValueError:
            httpd.handle_error(None, ("127.0.0.1", 1))
        assert "ValueError: a bug in the handler" in capsys.readouterr().err
