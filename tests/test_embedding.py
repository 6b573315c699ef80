"""Embedding in an async bot: JSON-text arguments, open_async, context.for_call, arun_turn."""

from __future__ import annotations

import asyncio
import json
import threading
from typing import Any

import pytest

from junior_core import Message, PluginError, Runtime, Source, Tool, ToolContext, hookimpl
from junior_core.llm.agent import arun_turn
from junior_core.testing import (
    RuntimeFactory,
    ScriptedModel,
    ScriptView,
    assert_error,
    assert_ok,
    call,
    make_context,
    say,
)
from tests.helpers import OBJECT, SourcePlugin


def test_call_model_tool_takes_the_json_text_openai_delivers(rt: Runtime) -> None:
    text = json.dumps({"tool_name": "notes__add_note", "arguments": {"text": "milk", "tags": ["shop"]}})
    assert assert_ok(rt.call_model_tool("executeTool", text)) == {"echo": {"text": "milk", "tags": ["shop"]}}
    assert assert_ok(rt.call_model_tool("notes__quick_note", "")) == {"echo": {}}
    assert rt.call_model_tool("searchTools", '{"query": "forecast"}')["tools"][0]["tool_name"] == "weather__get_forecast"
    # An object that looks like an answer is still just arguments.
    assert assert_ok(rt.call_model_tool("executeTool", '{"tool_name": "notes__quick_note", "arguments": {}}'))


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ('{"tool_name": "notes__add_note", "arguments": {"text": "milk"', "are not valid JSON"),
        ('["notes__add_note"]', "must be a JSON object, got list"),
        ('"notes__add_note"', "must be a JSON object, got str"),
        ("[" * 100_000 + "]" * 100_000, "nested more than 32 levels"),
    ],
)
def test_malformed_json_text_says_to_send_an_object(rt: Runtime, text: str, problem: str) -> None:
    for answer in (rt.call_model_tool("executeTool", text), asyncio.run(rt.acall_model_tool("executeTool", text))):
        message = assert_error(answer, "invalid_arguments")["message"]
        assert problem in message and "send them as one JSON object" in message
        assert message.startswith("The arguments of executeTool ")


def test_for_call_gives_the_context_of_one_tool_call() -> None:
    context = make_context()
    first = context.for_call("toolu_01")
    assert first.tool_call_id == "toolu_01" and first.actor == context.actor
    assert first.conversation == context.conversation and context.tool_call_id is None
    assert first.for_call("") == context  # a call without an id has none


class Starting:
    """Startup hooks that pass only when they run at the same time, while the caller's loop keeps running."""

    def __init__(self, name: str, barrier: threading.Barrier, loop_ran: threading.Event) -> None:
        self.junior_plugin_name = name
        self.barrier = barrier
        self.loop_ran = loop_ran
        self.seen: list[str] = []

    @hookimpl
    def register_sources(self, register: Any) -> None:
        register(Source(self.junior_plugin_name, "Started late."), provider=lambda: [Tool("ping", "Ping.", OBJECT, lambda a, c: "pong")])

    @hookimpl
    def startup(self, runtime: Runtime) -> None:
        self.barrier.wait()  # both plugins' start-ups are running at once
        self.seen.append("loop free" if self.loop_ran.wait(5) else "loop blocked")

    @hookimpl
    def shutdown(self, runtime: Runtime) -> None:
        self.seen.append("shutdown")


async def test_open_async_starts_plugins_concurrently_without_blocking_the_loop() -> None:
    barrier, loop_ran = threading.Barrier(2, timeout=5), threading.Event()
    a, b = Starting("alpha", barrier, loop_ran), Starting("beta", barrier, loop_ran)

    async def tick() -> None:
        await asyncio.sleep(0)
        loop_ran.set()

    ticker = asyncio.create_task(tick())
    async with Runtime.open_async([a, b]) as rt:
        assert a.seen == b.seen == ["loop free"]
        assert [s["id"] for s in rt.sources] == ["alpha", "beta"]
        assert assert_ok(await rt.aexecute_tool("beta__ping")) == "pong"  # providers listed before first use
    await ticker
    assert rt.closed and a.seen == b.seen == ["loop free", "shutdown"]


async def test_open_async_raises_a_strict_startup_failure_and_closes() -> None:
    closed: list[bool] = []

    class Broken:
        junior_plugin_name = "broken"

        @hookimpl
        def startup(self, runtime: Runtime) -> None:
            raise ConnectionError("database is down")

        @hookimpl
        def shutdown(self, runtime: Runtime) -> None:
            closed.append(True)

    with pytest.raises(PluginError, match="broken"):
        async with Runtime.open_async([Broken()]):
            pytest.fail("the block must not run")
    assert closed == [True]


async def test_open_async_loads_installed_entry_points(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("JUNIOR_LOAD_PLUGINS", "units")
    async with Runtime.open_async(None) as rt:
        assert [s["id"] for s in rt.sources] == ["units"]


async def test_open_async_loads_no_plugin_unless_told_as_runtime_does(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("JUNIOR_LOAD_PLUGINS", "units")  # installed and allowed, yet not asked for
    async with Runtime.open_async() as rt:
        assert (rt.plugins, rt.sources) == ([], [])
    with Runtime() as same:
        assert (same.plugins, same.sources) == ([], [])


async def test_arun_turn_runs_async_handlers_off_the_callers_loop(junior_runtime: RuntimeFactory) -> None:
    loops: list[asyncio.AbstractEventLoop] = []
    seen: list[ToolContext] = []

    async def add(arguments: dict[str, Any], context: ToolContext) -> dict[str, Any]:
        loops.append(asyncio.get_running_loop())
        seen.append(context)
        return {"saved": arguments["text"]}

    schema = {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}
    rt = junior_runtime(SourcePlugin(Source("notes", "Notes."), [Tool("add", "Add a note.", schema, add)]))

    def script(view: ScriptView) -> Any:
        found = yield call("searchTools", {"query": "note"})
        result = yield call("executeTool", {"tool_name": found["tools"][0]["tool_name"], "arguments": {"text": "hi"}})
        return say(f"saved {assert_ok(result)['saved']}")

    context = make_context()
    turn = await arun_turn(ScriptedModel(script, wire="anthropic"), rt, context, [Message("user", "note hi", actor=context.actor)])
    assert turn.text == "saved hi" and turn.stop_reason == "answered" and turn.steps == 3
    # On the source's own loop: a handler that blocks cannot stall the bot's loop or other sources.
    assert len(loops) == 1 and loops[0] is not asyncio.get_running_loop()
    assert seen[0].tool_call_id == turn.tool_calls[1].id and seen[0].tool_call_id.startswith("toolu_")
    assert [r.tool_name for r in turn.tool_calls] == ["searchTools", "notes__add"]


async def test_arun_turn_prefers_a_models_acomplete(junior_runtime: RuntimeFactory) -> None:
    class AsyncModel:
        name = "async"

        def __init__(self) -> None:
            self.threads: list[str] = []

        def complete(self, request: Any) -> Any:
            raise AssertionError("arun_turn must use acomplete")

        async def acomplete(self, request: Any) -> Any:
            self.threads.append(threading.current_thread().name)
            return say("hello")

    model = AsyncModel()
    rt = junior_runtime()
    turn = await arun_turn(model, rt, make_context(), [Message("user", "hi")])
    assert turn.text == "hello" and model.threads == [threading.current_thread().name]


def test_the_readme_async_bot_turn_runs(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    from pathlib import Path

    import junior_core.llm

    readme = (Path(__file__).parent.parent / "README.md").read_text()
    code = readme.split("## An async bot turn", 1)[1].split("```python\n", 1)[1].split("```", 1)[0]
    requests: list[str] = []

    def script(view: ScriptView) -> Any:
        requests.append(view.user_text)
        return say("Noted.")

    monkeypatch.setattr(junior_core.llm, "model_from_spec", lambda spec: ScriptedModel(script, wire="anthropic"))
    monkeypatch.setenv("JUNIOR_LOAD_PLUGINS", "units")
    exec(compile(code, "README.md", "exec"), {"__name__": "readme"})
    assert capsys.readouterr().out == "Noted.\n"
    assert requests == ["<@U024BE7LH>: Remember that I prefer terse PR summaries."]


def test_the_readme_bot_gives_each_tool_call_its_own_id(monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> None:
    from pathlib import Path

    from junior_core.llm.types import ToolCall

    readme = (Path(__file__).parent.parent / "README.md").read_text()
    code = readme.split("Embedding it in a bot:", 1)[1].split("```python\n", 1)[1].split("```", 1)[0]
    monkeypatch.setenv("JUNIOR_LOAD_PLUGINS", "memory")
    monkeypatch.setenv("JUNIOR_MEMORY_URL", f"sqlite:///{tmp_path / 'memory.sqlite3'}")

    def remember(call_id: str, content: str) -> ToolCall:
        arguments = {"tool_name": "memory__remember", "arguments": {"content": content, "kind": "preference"}}
        return ToolCall(call_id, "executeTool", arguments)

    # Two remembers in one conversation, as a model makes them: the second is a new memory, not a replay.
    namespace: dict[str, Any] = {"__name__": "readme", "tool_calls": [
        remember("toolu_01", "I prefer terse PR summaries"), remember("toolu_02", "I review PRs in the morning")]}
    exec(compile(code, "README.md", "exec"), namespace)
    answers = namespace["answers"]
    assert [answer["ok"] for answer in answers] == [True, True], answers
    assert [answer["result"]["created"] for answer in answers] == [True, True], answers
    assert answers[0]["result"]["id"] != answers[1]["result"]["id"]
