"""Dispatch under hostile or runaway input: hung handlers, blocking async handlers, handlers that raise
``SystemExit``, backtracking patterns, oversized results and schemas, deep nesting."""

from __future__ import annotations

import asyncio
import json
import logging
import re
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from junior_core import Runtime, Source, Tool
from junior_core._base.errors import RegistrationError
from junior_core._protocol.limits import MAX_DEPTH
from junior_core._schemas.fastcheck import compile_check
from junior_core.llm.openai import parse_openai_response
from junior_core.llm.types import ModelReply, ModelRequest, ToolCall
from junior_core.testing import ManualClock, wait_until
from tests.helpers import OBJECT, SourcePlugin, echo

HOSTILE = "^(a+)+$"


def nested(levels: int) -> Any:
    value: Any = []
    for _ in range(levels):
        value = [value]
    return value


def nested_object(levels: int) -> dict[str, Any]:
    value: dict[str, Any] = {}
    for _ in range(levels):
        value = {"a": value}
    return value


@pytest.fixture
def release() -> Iterator[threading.Event]:
    """Set at the end of the test, so handlers blocked on it end and their threads with them."""
    event = threading.Event()
    yield event
    event.set()


# -- hung handlers ------------------------------------------------------------------------------------------
def test_hung_calls_past_the_bound_answer_unavailable_for_that_source_only(
    make_runtime: Callable[..., Runtime], release: threading.Event
) -> None:
    clock = ManualClock()

    def stuck(arguments: dict[str, Any], context: Any) -> str:
        if not release.is_set():
            clock.advance(3600)  # it has started, and is past its limit: it counts as hung, never as skipped
        release.wait()
        return "late"

    rt = make_runtime(
        SourcePlugin(Source("stuck", "Never answers."), [Tool("wait", "Waits.", OBJECT, stuck, timeout_s=0.05)]),
        SourcePlugin(Source("fine", "Answers."), [Tool("echo", "Echo.", OBJECT, echo)]),
        clock=clock,
    )
    assert {rt.execute_tool("stuck__wait")["error"]["code"] for _ in range(8)} == {"timeout"}  # the default bound
    refused = rt.execute_tool("stuck__wait")
    assert refused["error"]["code"] == "unavailable"
    assert "'stuck' is not responding" in refused["error"]["message"]
    assert "another source" in refused["error"]["message"]
    assert asyncio.run(rt.aexecute_tool("stuck__wait"))["error"]["code"] == "unavailable"
    assert rt.execute_tool("fine__echo", {})["ok"] is True
    assert asyncio.run(rt.aexecute_tool("fine__echo", {}))["ok"] is True
    release.set()  # the hung calls end, and the source is called again
    wait_until(lambda: rt.execute_tool("stuck__wait")["ok"] is True, what="the source to answer again")


def test_hung_async_handlers_count_too(make_runtime: Callable[..., Runtime], release: threading.Event) -> None:
    async def blocks(arguments: dict[str, Any], context: Any) -> str:
        release.wait()  # blocks its loop: later calls queue behind it
        return "late"

    rt = make_runtime(
        SourcePlugin(Source("stuck", "Blocks."), [Tool("wait", "Waits.", OBJECT, blocks, timeout_s=0.05)]),
        max_hung_per_source=2,
    )
    assert [rt.execute_tool("stuck__wait")["error"]["code"] for _ in range(2)] == ["timeout", "timeout"]
    assert rt.execute_tool("stuck__wait")["error"]["code"] == "unavailable"
    release.set()
    wait_until(lambda: rt.execute_tool("stuck__wait")["ok"] is True, what="the source to answer again")


def test_threads_of_abandoned_calls_leave_room_for_live_work(release: threading.Event) -> None:
    from junior_core._base.workers import DaemonPool, HungCalls

    pool = DaemonPool(HungCalls(8), max_threads=2)
    hung = [pool.call("stuck", release.wait) for _ in range(2)]
    wait_until(lambda: all(call.ticket.state == 1 for call in hung), what="both calls to start")
    for call in hung:
        with pytest.raises(TimeoutError):
            call.result(0.01)
        pool.abandon(call.ticket)
    assert pool.hung.count("stuck") == 2
    assert pool.call("memory", lambda: "ran").result(10) == "ran"  # a full pool of hung calls would queue it
    release.set()
    wait_until(lambda: pool.hung.count("stuck") == 0, what="the hung calls to end")
    pool.close()


# -- async handlers that block -----------------------------------------------------------------------------
def test_an_async_handler_that_blocks_stalls_only_its_own_source(
    make_runtime: Callable[..., Runtime], release: threading.Event
) -> None:
    clock = ManualClock()

    async def blocks(arguments: dict[str, Any], context: Any) -> str:
        clock.advance(3600)  # late at once by the runtime's clock, then it blocks its loop
        release.wait()
        return "late"

    async def quick(arguments: dict[str, Any], context: Any) -> str:
        await asyncio.sleep(0)
        return "quick"

    rt = make_runtime(
        SourcePlugin(Source("stuck", "Blocks."), [Tool("wait", "Waits.", OBJECT, blocks, timeout_s=0.05)]),
        SourcePlugin(Source("fine", "Answers."), [Tool("quick", "Quick.", OBJECT, quick, timeout_s=10)]),
        clock=clock,
    )
    assert rt.execute_tool("stuck__wait")["error"]["code"] == "timeout"
    assert rt.execute_tool("fine__quick")["result"] == "quick"
    assert asyncio.run(rt.aexecute_tool("fine__quick"))["result"] == "quick"
    # A coroutine on the runtime's I/O loop (where plugins keep sessions) still runs too.
    assert asyncio.run_coroutine_threadsafe(asyncio.sleep(0, "io"), rt.loop).result(10) == "io"


def test_a_blocking_step_of_an_async_handler_is_logged_naming_the_tool(
    make_runtime: Callable[..., Runtime], monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    import junior_core._calls.execution

    monkeypatch.setattr(junior_core._calls.execution, "SLOW_STEP_S", 0.0)  # every step counts as slow

    async def sleeps(arguments: dict[str, Any], context: Any) -> str:
        time.sleep(0.001)
        return "done"

    rt = make_runtime(SourcePlugin(Source("x", "X."), [Tool("sleepy", "Sleeps.", OBJECT, sleeps)]))
    with caplog.at_level(logging.WARNING, logger="junior.runtime"):
        assert rt.execute_tool("x__sleepy")["result"] == "done"
    assert any("async handler of x__sleepy held its event loop" in r.getMessage() for r in caplog.records)


# -- BaseExceptions from handlers ---------------------------------------------------------------------------
@pytest.mark.parametrize("raised", [SystemExit(3), KeyboardInterrupt()])
def test_base_exceptions_of_handlers_are_tool_failed_on_both_paths(
    make_runtime: Callable[..., Runtime], raised: BaseException
) -> None:
    def sync_exit(arguments: dict[str, Any], context: Any) -> None:
        raise raised

    async def async_exit(arguments: dict[str, Any], context: Any) -> None:
        raise raised

    async def fine(arguments: dict[str, Any], context: Any) -> str:
        return "still here"

    rt = make_runtime(
        SourcePlugin(
            Source("x", "X."),
            [
                Tool("sync_exit", "Exits.", OBJECT, sync_exit),
                Tool("async_exit", "Exits.", OBJECT, async_exit),
                Tool("fine", "Fine.", OBJECT, fine, timeout_s=5),
            ],
        )
    )

    async def from_a_loop() -> list[dict[str, Any]]:
        return [await rt.aexecute_tool(name) for name in ("x__sync_exit", "x__async_exit", "x__fine")]

    for out in (*asyncio.run(from_a_loop()), rt.execute_tool("x__async_exit"), rt.execute_tool("x__sync_exit")):
        if out["tool_name"] == "x__fine":
            assert out["result"] == "still here"
        else:
            assert out["error"]["code"] == "tool_failed", out
            assert "internal error" in out["error"]["message"]
    # The loop that ran the async handler survived it.
    assert rt.execute_tool("x__fine")["result"] == "still here"


# -- hostile patterns ---------------------------------------------------------------------------------------
class Unmatchable:
    pattern = HOSTILE

    def __getattr__(self, name: str) -> Any:
        raise AssertionError(f"a backtracking engine was asked to {name} with a hostile pattern")


@pytest.fixture
def no_backtracking(monkeypatch: pytest.MonkeyPatch) -> None:
    """Python's ``re`` must never see the hostile pattern: it would backtrack for minutes."""
    for name in ("search", "match", "fullmatch", "compile"):
        original = getattr(re, name)

        def guard(pattern: Any, *args: Any, _original: Any = original, _name: str = name, **kwargs: Any) -> Any:
            if getattr(pattern, "pattern", pattern) == HOSTILE:
                if _name == "compile":  # compiling is harmless (jsonschema checks schemas so); matching is not
                    return Unmatchable()
                raise AssertionError("a backtracking engine was given a hostile pattern")
            return _original(pattern, *args, **kwargs)

        monkeypatch.setattr(re, name, guard)


def test_a_hostile_pattern_is_validated_without_backtracking(
    make_runtime: Callable[..., Runtime], no_backtracking: None
) -> None:
    schemas = {
        "plain": {"type": "object", "properties": {"s": {"type": "string", "pattern": HOSTILE}}},
        "full": {  # beyond the quick check's subset: jsonschema validates it
            "type": "object",
            "properties": {"s": {"anyOf": [{"type": "string", "pattern": HOSTILE}]}},
            "patternProperties": {HOSTILE: {"type": "integer"}},
            "additionalProperties": False,
        },
    }
    rt = make_runtime(
        SourcePlugin(Source("x", "X."), [Tool(name, "Patterned.", schema, echo) for name, schema in schemas.items()])
    )
    evil = "a" * 40 + "!"
    for name in schemas:
        out = rt.execute_tool(f"x__{name}", {"s": evil})
        assert out["error"]["code"] == "invalid_arguments", out
        assert out["error"]["details"][0]["path"] == "s"
        assert rt.execute_tool(f"x__{name}", {"s": "aaaa"})["ok"] is True
    out = rt.execute_tool("x__full", {"s": "aa", "a" * 40: "not an integer"})
    assert out["error"]["code"] == "invalid_arguments"
    assert rt.execute_tool("x__full", {"s": "aa", "aaa": 1})["ok"] is True
    assert rt.execute_tool("x__full", {"s": "aa", evil: 1})["error"]["code"] == "invalid_arguments"


def test_the_quick_check_matches_patterns_without_backtracking(no_backtracking: None) -> None:
    check = compile_check({"type": "string", "pattern": HOSTILE})
    assert check is not None
    assert check("a" * 40 + "!") is False and check("aaa") is True


def test_a_pattern_re2_cannot_run_is_never_held_against_the_arguments(make_runtime: Callable[..., Runtime]) -> None:
    schema = {"type": "object", "properties": {"s": {"type": "string", "pattern": "^(?!admin)"}}}
    rt = make_runtime(SourcePlugin(Source("x", "X."), [Tool("look", "Lookahead.", schema, echo)]))
    assert rt.execute_tool("x__look", {"s": "admin"})["ok"] is True
    assert rt.execute_tool("x__look", {"s": 3})["error"]["code"] == "invalid_arguments"


# -- oversized results and schemas --------------------------------------------------------------------------
def test_results_over_the_cap_are_cut_and_marked(make_runtime: Callable[..., Runtime]) -> None:
    def big(arguments: dict[str, Any], context: Any) -> dict[str, Any]:
        return {"text": "é" * 5000}

    async def abig(arguments: dict[str, Any], context: Any) -> dict[str, Any]:
        return big(arguments, context)

    rt = make_runtime(
        SourcePlugin(Source("x", "X."), [Tool("big", "Big.", OBJECT, big), Tool("abig", "Big.", OBJECT, abig)]),
        max_result_chars=1000,
    )
    full = json.dumps({"text": "é" * 5000}, ensure_ascii=False)
    for out in (rt.execute_tool("x__big"), asyncio.run(rt.aexecute_tool("x__abig"))):
        assert out["ok"] is True
        assert out["result"] == full[:1000]
        assert out["truncated"]["original_chars"] == len(full) == 5012
        assert out["truncated"]["shown_chars"] == 1000
        assert "Ask for less" in out["truncated"]["message"]
    small = make_runtime(SourcePlugin(Source("y", "Y."), [Tool("big", "Big.", OBJECT, big)]), max_result_chars=6000)
    assert small.execute_tool("y__big") == {"ok": True, "tool_name": "y__big", "result": {"text": "é" * 5000}}


def test_an_oversized_input_schema_is_refused_naming_the_plugin() -> None:
    schema = {"type": "object", "properties": {"s": {"type": "string", "description": "x" * 60_000}}}

    class Plugin:
        junior_plugin_name = "bloated"

        from junior_core import hookimpl

        @hookimpl
        def register_sources(self, register: Any) -> None:
            register(Source("x", "X."), tools=[Tool("t", "T.", schema, echo)])

    with pytest.raises(RegistrationError, match=r"plugin 'bloated'.*input_schema is 60,0\d\d characters"):
        Runtime(plugins=[Plugin()])


# -- deep nesting -------------------------------------------------------------------------------------------
@pytest.mark.parametrize("levels", [MAX_DEPTH + 1, 1_000, 5_000])
def test_deep_nesting_is_invalid_arguments_everywhere(make_runtime: Callable[..., Runtime], levels: int) -> None:
    rt = make_runtime(
        SourcePlugin(
            Source("x", "X."),
            [
                Tool("free", "Any object.", {"type": "object"}, echo),
                Tool("strict", "Strict.", {"type": "object", "properties": {"a": {"type": "string"}}}, echo),
                Tool("direct", "Direct.", {"type": "object"}, echo, exposure="direct"),
            ],
        )
    )
    deep_list, deep_object = nested(levels), nested_object(levels)
    answers = [
        rt.search_tools(query=deep_list),  # type: ignore[arg-type]
        rt.call_model_tool("searchTools", {"query": deep_list}),
        rt.call_model_tool("searchTools", deep_list),
        rt.call_model_tool("executeTool", {"tool_name": "x__free", "arguments": deep_list}),
        rt.execute_tool("x__free", deep_object),
        rt.execute_tool("x__strict", deep_object),
        rt.call_model_tool("x__direct", deep_object),
        asyncio.run(rt.acall_model_tool("executeTool", {"tool_name": "x__strict", "arguments": deep_object})),
    ]
    for out in answers:
        assert out["ok"] is False
        assert out["error"]["code"] == "invalid_arguments", out
        assert f"more than {MAX_DEPTH} levels deep" in out["error"]["message"]
    shallow = nested_object(MAX_DEPTH - 2)  # with executeTool's envelope, exactly MAX_DEPTH levels
    assert rt.execute_tool("x__free", shallow)["ok"] is True


@pytest.mark.parametrize("levels", [MAX_DEPTH + 1, 1_000, 100_000])
def test_a_model_sending_deeply_nested_arguments_gets_invalid_arguments(
    make_runtime: Callable[..., Runtime], levels: int
) -> None:
    from junior_core.context import Message, ToolContext
    from junior_core.llm.agent import run_turn

    text = '{"tool_name": "x__free", "arguments": ' + '{"a": ' * levels + "{}" + "}" * levels + "}"
    body = {
        "choices": [
            {
                "message": {
                    "content": None,
                    "tool_calls": [{"id": "c1", "type": "function",
                                    "function": {"name": "executeTool", "arguments": text}}],
                },
                "finish_reason": "tool_calls",
            }
        ]
    }
    decoded = parse_openai_response(body)
    call = decoded.tool_calls[0]
    assert call.arguments is None and call.arguments_error is not None
    assert f"nested more than {MAX_DEPTH} levels deep" in call.arguments_error

    class Model:
        name = "scripted"

        def __init__(self) -> None:
            self.replies = [decoded, ModelReply(text="done")]

        def complete(self, request: ModelRequest) -> ModelReply:
            return self.replies.pop(0)

    rt = make_runtime(SourcePlugin(Source("x", "X."), [Tool("free", "Any object.", {"type": "object"}, echo)]))
    turn = run_turn(Model(), rt, ToolContext(), [Message("user", text="go")])
    assert turn.tool_calls[0].result["error"]["code"] == "invalid_arguments"
    # Arguments already decoded (an SDK that hands over objects) are checked by the runtime itself.
    deep = ModelReply(tool_calls=(ToolCall("c2", "executeTool", {"tool_name": "x__free",
                                                                 "arguments": nested_object(levels)}),))

    class Decoded(Model):
        def __init__(self) -> None:
            self.replies = [deep, ModelReply(text="done")]

    turn = run_turn(Decoded(), rt, ToolContext(), [Message("user", text="go")])
    assert turn.tool_calls[0].result["error"]["code"] == "invalid_arguments"


def test_a_real_ctrl_c_on_the_host_thread_still_interrupts_the_host(
    make_runtime: Callable[..., Runtime], release: threading.Event
) -> None:
    import signal

    def presses_ctrl_c(arguments: dict[str, Any], context: Any) -> str:
        main = threading.main_thread().ident
        assert main is not None
        signal.pthread_kill(main, signal.SIGINT)  # Ctrl-C, to the host's thread waiting for this call
        release.wait()
        return "late"

    # On a clock that stands still the call's limit never passes, however long its thread takes to start.
    rt = make_runtime(SourcePlugin(Source("x", "X."), [Tool("slow", "Slow.", OBJECT, presses_ctrl_c, timeout_s=2)]),
                      clock=ManualClock())
    # Python's own Ctrl-C handler, which a process started in the background of a shell does not get (its SIGINT
    # is ignored): without it the signal would be lost and the call would wait on the still clock for good.
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        with pytest.raises(KeyboardInterrupt):
            rt.execute_tool("x__slow")
        with pytest.raises(KeyboardInterrupt):
            asyncio.run(rt.aexecute_tool("x__slow"))
    finally:
        signal.signal(signal.SIGINT, previous)


def test_a_pattern_re2_runs_is_accepted_at_registration_and_enforced(make_runtime: Callable[..., Runtime]) -> None:
    # Python's re cannot compile \p{L}; RE2, which enforces patterns, can: the tool is kept, and enforced.
    schema = {"type": "object", "properties": {"name": {"type": "string", "pattern": r"^\p{L}+$"}}}
    rt = make_runtime(SourcePlugin(Source("names", "Names."), [Tool("greet", "Greet someone.", schema, echo)]))
    assert rt.execute_tool("names__greet", {"name": "Zoë"})["ok"] is True
    assert rt.execute_tool("names__greet", {"name": "Zoë 2"})["error"]["code"] == "invalid_arguments"
    with pytest.raises(ValueError, match="not a valid JSON Schema"):
        Tool("bad", "Bad.", {"type": "object", "properties": {"a": {"type": "string", "pattern": "(open"}}}, echo)
