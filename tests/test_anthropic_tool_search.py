"""Native deferred loading on Anthropic's Messages API, against a local stand-in that enforces its tool-search rules.

The stand-in follows the documented wire format: every tool is sent, deferred ones with ``defer_loading: true``;
at least one tool is not deferred; a custom search tool answers with a ``tool_result`` whose content is
``{"type": "tool_reference", "tool_name": ...}`` blocks, each naming a deferred tool of the request (otherwise
400); and the model can only call a tool that is not deferred or was referenced earlier in the conversation.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from junior_core import Message, Runtime, Source, Tool, ToolContext
from junior_core.llm.adapters import to_anthropic_tools
from junior_core.llm.agent import arun_turn, run_turn
from junior_core.llm.anthropic import (
    NATIVE_LOADING_NOTE,
    TOOL_SEARCH_BETA,
    AnthropicModel,
    AnthropicToolSearch,
    anthropic_request,
)
from junior_core.llm.types import ChatItem, ModelRequest
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
from tests.helpers import OBJECT, SourcePlugin, notes_plugin, weather_plugin

pytest.importorskip("anthropic")

Reply = Callable[[dict[str, Any], set[str]], dict[str, Any]]


def refuse(message: str) -> tuple[int, dict[str, Any]]:
    return 400, {"type": "error", "error": {"type": "invalid_request_error", "message": message}}


def check(body: dict[str, Any]) -> tuple[set[str], str | None]:
    """The tools the model can see and call now, or the 400 message the API would give."""
    tools = {t["name"]: t for t in body.get("tools") or ()}
    loaded = {name for name, t in tools.items() if not t.get("defer_loading")}
    if not loaded:
        return set(), "at least one tool must not be deferred"
    for message in body["messages"]:
        for block in message["content"] if isinstance(message["content"], list) else ():
            if block.get("type") == "tool_use" and block["name"] not in loaded:
                return set(), f"tool_use of {block['name']!r}, which is not loaded"
            if block.get("type") != "tool_result" or isinstance(block.get("content"), str):
                continue
            for ref in block.get("content") or ():
                if ref.get("type") != "tool_reference":
                    continue
                target = tools.get(ref.get("tool_name"))
                if target is None or not target.get("defer_loading"):
                    return set(), f"tool_reference {ref.get('tool_name')!r} names no deferred tool of this request"
                loaded.add(ref["tool_name"])
    return loaded, None


class MessagesStandIn:
    """A Messages API on 127.0.0.1: each request is checked, then answered by the next ``replies`` function."""

    def __init__(self) -> None:
        self.replies: list[Reply] = []
        self.seen: list[tuple[dict[str, Any], dict[str, str], set[str]]] = []
        stand_in = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers.get("content-length", "0"))))
                headers = {k.lower(): v for k, v in self.headers.items()}
                loaded, problem = check(body)
                stand_in.seen.append((body, headers, loaded))
                status, payload = refuse(problem) if problem else (200, stand_in.replies.pop(0)(body, loaded))
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, args=(0.01,), daemon=True).start()  # shutdown waits a poll

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def stand_in() -> Iterator[MessagesStandIn]:
    server = MessagesStandIn()
    try:
        yield server
    finally:
        server.close()


def message(*content: dict[str, Any]) -> dict[str, Any]:
    calls = any(b["type"] == "tool_use" for b in content)
    return {
        "id": "msg_1", "type": "message", "role": "assistant", "model": "claude-x", "content": list(content),
        "stop_reason": "tool_use" if calls else "end_turn", "stop_sequence": None,
        "usage": {"input_tokens": 1, "output_tokens": 1},
    }


def tool_use(id: str, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {"type": "tool_use", "id": id, "name": name, "input": arguments}


def last_result(body: dict[str, Any]) -> Any:
    return body["messages"][-1]["content"][0]["content"]


CONTEXT = make_context()


def test_deferred_tools_load_natively_after_a_search(stand_in: MessagesStandIn, rt: Runtime) -> None:
    stand_in.replies += [
        lambda body, loaded: message(tool_use("toolu_1", "searchTools", {"query": "forecast"})),
        lambda body, loaded: message(tool_use("toolu_2", "weather__get_forecast", {"city": "Oslo"})),
        lambda body, loaded: message({"type": "text", "text": json.loads(last_result(body))["result"]["forecast"]}),
    ]
    model = AnthropicModel("claude-x", base_url=stand_in.url, api_key="k", betas=[TOOL_SEARCH_BETA])
    turn = run_turn(model, rt, CONTEXT, [Message("user", "Weather in Oslo?", actor=CONTEXT.actor)],
                    toolbox=AnthropicToolSearch(rt))

    assert turn.text == "sunny" and turn.stop_reason == "answered"
    first, headers, loaded = stand_in.seen[0]
    assert headers["anthropic-beta"] == TOOL_SEARCH_BETA
    tools = {t["name"]: t for t in first["tools"]}
    # Only the protocol tools and the direct tool are in context; every deferred catalog tool is sent deferred.
    assert loaded == {"searchTools", "executeTool", "notes__quick_note"}
    deferred = sorted(n for n, t in tools.items() if t.get("defer_loading"))
    assert deferred == sorted(e.tool_name for e in rt.catalog_tools() if e.tool.exposure == "deferred")
    assert "notes__admin_purge" not in tools  # hidden: never offered
    assert tools["weather__get_forecast"]["input_schema"]["required"] == ["city"]
    assert tools["searchTools"]["description"].endswith(NATIVE_LOADING_NOTE)
    # The search answered with tool_reference blocks, which loaded the tool for the next step.
    second, _, loaded = stand_in.seen[1]
    refs = last_result(second)
    assert refs[0] == {"type": "tool_reference", "tool_name": "weather__get_forecast"}
    assert all(r["type"] == "tool_reference" and tools[r["tool_name"]].get("defer_loading") for r in refs)
    assert "weather__get_forecast" in loaded
    # The natively called tool ran through executeTool's checks, in the call's own context.
    (_, forecast) = turn.tool_calls
    assert forecast.tool_name == "weather__get_forecast"
    assert assert_ok(forecast.result) == {"city": "Oslo", "forecast": "sunny"}
    assert [m.tool_name for m in turn.transcript if m.role == "tool"] == ["searchTools", "weather__get_forecast"]


def test_without_the_adapter_a_deferred_call_is_refused_by_the_api(stand_in: MessagesStandIn, rt: Runtime) -> None:
    # The stand-in really enforces loading: the same deferred call, never referenced, is a 400.
    tools = AnthropicToolSearch(rt).model_tools()
    request = ModelRequest("", (ChatItem("user", "hi"), ChatItem("assistant", "", ()),), tuple(tools))
    body = anthropic_request("claude-x", request)
    body["messages"].append({"role": "assistant", "content": [tool_use("toolu_9", "weather__get_forecast", {"city": "Oslo"})]})
    assert check(body)[1] == "tool_use of 'weather__get_forecast', which is not loaded"
    body["tools"] = [dict(t, defer_loading=True) for t in body["tools"]]
    assert check(body)[1] == "at least one tool must not be deferred"


def test_execute_tool_stays_the_fallback_and_failures_are_data(stand_in: MessagesStandIn, rt: Runtime) -> None:
    stand_in.replies += [
        lambda body, loaded: message(
            tool_use("toolu_1", "executeTool", {"tool_name": "notes__add_note", "arguments": {"text": "milk"}}),
            tool_use("toolu_2", "searchTools", {"query": "zzzz qqqq"}),
        ),
        lambda body, loaded: message({"type": "text", "text": "done"}),
    ]
    model = AnthropicModel("claude-x", base_url=stand_in.url, api_key="k")
    turn = run_turn(model, rt, CONTEXT, [Message("user", "note milk")], toolbox=AnthropicToolSearch(rt))
    assert turn.text == "done"
    executed, searched = turn.tool_calls
    assert assert_ok(executed.result) == {"echo": {"text": "milk"}}
    assert searched.result["tools"] == [] and searched.result["total_matches"] == 0
    results = stand_in.seen[1][0]["messages"][-1]["content"]
    # Nothing found: the search's JSON goes back as text, not an empty list of references.
    assert json.loads(results[1]["content"]) == searched.result


def test_calls_the_model_may_not_make_answer_like_execute_tool(rt: Runtime) -> None:
    toolbox = AnthropicToolSearch(rt)
    hidden = toolbox.call("notes__admin_purge", {}, CONTEXT).answer
    assert "searchTools" in assert_error(hidden, "unknown_tool")["message"]  # a hidden tool is never run natively
    bad = toolbox.call("weather__get_forecast", {"town": "Oslo"}, CONTEXT)
    assert assert_error(bad.answer, "invalid_arguments")["details"] and bad.blocks == ()
    assert assert_ok(toolbox.call("weather__get_forecast", '{"city": "Oslo"}', CONTEXT).answer)["city"] == "Oslo"


def test_a_listing_with_more_pages_keeps_its_cursor(rt: Runtime) -> None:
    toolbox = AnthropicToolSearch(rt)
    first = toolbox.call("searchTools", {"source": "notes", "max_results": 2}, CONTEXT)
    assert first.answer["next_cursor"] and first.blocks == ()  # sent as JSON: the model can ask for the next page
    seen = [t["tool_name"] for t in first.answer["tools"]]
    cursor = first.answer["next_cursor"]
    while cursor:
        page = toolbox.call("searchTools", {"source": "notes", "max_results": 2, "cursor": cursor}, CONTEXT)
        seen += [t["tool_name"] for t in page.answer["tools"]]
        cursor = page.answer.get("next_cursor")
    assert page.blocks and seen == [t.tool_name for t in rt.visible_tools(CONTEXT) if t.source_id == "notes"]


def test_several_queries_load_the_tools_of_every_search(rt: Runtime) -> None:
    toolbox = AnthropicToolSearch(rt)
    found = toolbox.call("searchTools", {"queries": ["weather forecast", "find notes"]}, CONTEXT)
    names = [r["tool_name"] for r in found.blocks]
    assert "weather__get_forecast" in names and "notes__find_notes" in names and len(names) == len(set(names))


def test_tools_for_a_host_calling_the_api_itself(rt: Runtime) -> None:
    tools = AnthropicToolSearch(rt).tools()
    assert tools == to_anthropic_tools(AnthropicToolSearch(rt).model_tools())
    assert [t["name"] for t in tools[:3]] == ["searchTools", "executeTool", "notes__quick_note"]
    assert all(t.get("defer_loading") is True for t in tools[3:]) and len(tools) > 3


async def test_scripted_anthropic_turn_with_native_loading(junior_runtime: RuntimeFactory) -> None:
    rt = junior_runtime(notes_plugin(), weather_plugin())
    seen: list[list[str]] = []

    def script(view: ScriptView) -> Any:
        refs = yield call("searchTools", {"query": "forecast", "max_results": 2})
        seen.append([r["tool_name"] for r in refs])
        result = yield call(refs[0]["tool_name"], {"city": "Bergen"})
        return say(assert_ok(result)["forecast"])

    model = ScriptedModel(script, wire="anthropic")
    turn = await arun_turn(model, rt, CONTEXT, [Message("user", "Bergen?")], toolbox=AnthropicToolSearch(rt))
    assert turn.text == "sunny" and seen[0][0] == "weather__get_forecast" and len(seen[0]) == 2
    assert all(check(body)[1] is None for body in model.requests)


def test_a_source_added_later_is_offered_deferred(junior_runtime: RuntimeFactory) -> None:
    rt = junior_runtime(SourcePlugin(Source("x", "X."), [Tool("a", "A thing.", OBJECT, lambda a, c: 1)]))
    toolbox = AnthropicToolSearch(rt)
    assert [t["name"] for t in toolbox.model_tools() if t.get("defer_loading")] == ["x__a"]
    assert assert_ok(toolbox.call("x__a", None, ToolContext()).answer) == 1
