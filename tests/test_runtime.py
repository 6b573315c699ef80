"""Runtime API: adapters, turn hooks, concurrency."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import pytest

from junior_core import Runtime, RuntimeOptions, Source, SourceInfo, Tool, hookimpl
from junior_core.llm.adapters import to_anthropic_tools, to_openai_tools
from junior_core.testing import assert_error, assert_ok
from tests.helpers import OBJECT, SourcePlugin


def test_openai_and_anthropic_formats(rt: Runtime) -> None:
    tools = rt.model_tools()
    openai = to_openai_tools(tools)
    assert openai[0] == {
        "type": "function",
        "function": {
            "name": "searchTools",
            "description": tools[0]["description"],
            "parameters": tools[0]["input_schema"],
        },
    }
    anthropic = to_anthropic_tools(tools)
    assert [t["name"] for t in anthropic] == ["searchTools", "executeTool", "notes__quick_note"]
    assert anthropic[1]["input_schema"]["required"] == ["tool_name"]


def test_model_tool_names_fit_the_apis(rt: Runtime) -> None:
    import re

    assert all(re.match(r"^[a-zA-Z0-9_-]{1,64}$", t["name"]) for t in rt.model_tools())


def test_concurrent_calls_all_complete(make_runtime: Callable[..., Runtime]) -> None:
    barrier = threading.Barrier(8, timeout=5)

    def wait(arguments: dict[str, Any], context: Any) -> int:
        barrier.wait()  # only passes if eight handlers really run at once
        return int(arguments["i"])

    schema = {"type": "object", "properties": {"i": {"type": "integer"}}}
    rt = make_runtime(SourcePlugin(Source("x", "X."), [Tool("wait", "Wait.", schema, wait, timeout_s=10)]))
    results: list[Any] = [None] * 8

    def call(i: int) -> None:
        results[i] = rt.execute_tool("x__wait", {"i": i})["result"]

    threads = [threading.Thread(target=call, args=(i,)) for i in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(10)
    assert results == list(range(8))


def test_search_sees_sources_registered_with_no_tools(make_runtime: Callable[..., Runtime]) -> None:
    rt = make_runtime(SourcePlugin(Source("empty", "Nothing yet."), []))
    out = rt.search_tools("anything", source="empty")
    assert out["tools"] == [] and out["sources"] == [{"id": "empty", "description": "Nothing yet."}]
    assert out["hint"] == "Source 'empty' has no tools right now. Call searchTools with source null to search all."
    assert OBJECT["type"] == "object"


def test_async_handlers_run_on_their_source_loop_never_the_io_loop_or_the_callers(
    make_runtime: Callable[..., Runtime],
) -> None:
    import asyncio

    seen: list[asyncio.AbstractEventLoop] = []

    async def where(arguments: dict[str, Any], context: Any) -> str:
        seen.append(asyncio.get_running_loop())
        return "here"

    rt = make_runtime(
        SourcePlugin(Source("x", "X."), [Tool("where", "Where.", OBJECT, where)]),
        SourcePlugin(Source("y", "Y."), [Tool("where", "Where.", OBJECT, where)]),
    )
    assert rt.execute_tool("x__where")["result"] == "here"
    assert rt.execute_tool("y__where")["result"] == "here"

    async def from_a_loop() -> asyncio.AbstractEventLoop:
        assert (await rt.aexecute_tool("x__where"))["result"] == "here"
        return asyncio.get_running_loop()

    caller = asyncio.run(from_a_loop())
    assert seen[0] is seen[2]  # one loop per source, whichever API called
    assert seen[1] is not seen[0]
    assert rt.loop not in seen and caller not in seen


def test_closed_runtime_runs_no_async_handler(make_runtime: Callable[..., Runtime]) -> None:
    import asyncio

    ran: list[bool] = []

    async def handler(arguments: dict[str, Any], context: Any) -> bool:
        ran.append(True)
        return True

    rt = make_runtime(SourcePlugin(Source("x", "X."), [Tool("a", "A.", OBJECT, handler)]))
    assert_ok(rt.execute_tool("x__a"))
    rt.close()
    assert_error(rt.execute_tool("x__a"), "unavailable")
    assert_error(asyncio.run(rt.aexecute_tool("x__a")), "unavailable")
    assert ran == [True]


def test_hung_handlers_do_not_grow_threads_without_bound() -> None:
    from junior_core._base.workers import DaemonPool, HungCalls

    before = set(threading.enumerate())
    pool = DaemonPool(HungCalls(8), max_threads=2)
    release = threading.Event()
    started = threading.Semaphore(0)

    def hang() -> bool:
        started.release()
        return release.wait()

    hung = [pool.submit("s", hang)[0] for _ in range(2)]
    queued, _ = pool.submit("s", lambda: "ran")
    assert started.acquire(timeout=60) and started.acquire(timeout=60), "both hung calls run"
    # A thread is started when a call is submitted, so a third one would be here already.
    assert [t.name.startswith("junior-tool") for t in set(threading.enumerate()) - before] == [True, True]
    assert not queued.done()
    release.set()
    assert queued.result(5) == "ran" and all(f.result(5) for f in hung)
    pool.close()


# -- one set of options for every constructor -------------------------------------------------------------
def test_options_and_keywords_set_the_same_fields_and_keywords_win(make_runtime: Callable[..., Runtime]) -> None:
    def big(arguments: dict[str, Any], context: Any) -> str:
        return "x" * 5000

    plugin = SourcePlugin(Source("y", "Y."), [Tool("big", "Big.", OBJECT, big)])
    small = make_runtime(plugin, options=RuntimeOptions(max_result_chars=1000, default_timeout_s=7))
    assert small.execute_tool("y__big")["truncated"]["shown_chars"] == 1000
    assert small.options.default_timeout_s == 7
    wider = make_runtime(plugin, options=RuntimeOptions(max_result_chars=1000), max_result_chars=3000)
    assert wider.execute_tool("y__big")["truncated"]["shown_chars"] == 3000
    assert "truncated" not in make_runtime(plugin).execute_tool("y__big")


def test_an_unknown_option_is_refused_naming_it() -> None:
    with pytest.raises(TypeError, match="'max_result_char' is not a runtime option"):
        Runtime(plugins=[], max_result_char=10)
    with pytest.raises(TypeError):
        RuntimeOptions(max_result_char=10)  # type: ignore[call-arg]


async def test_open_async_takes_every_option() -> None:
    options = RuntimeOptions(hook_timeout_s=0.5, startup_timeout_s=7.0, max_result_chars=1000, index_cache=False)
    async with Runtime.open_async([], options=options, max_hung_per_source=2) as rt:
        assert (rt._plugins.hook_timeout_s, rt._plugins.startup_timeout_s) == (0.5, 7.0)
        assert rt.options.max_result_chars == 1000 and rt.options.max_hung_per_source == 2
        assert rt.options.index_cache is False


def test_search_tools_pages_with_the_cursor_of_the_last_answer(make_runtime: Callable[..., Runtime]) -> None:
    tools = [Tool(f"tool_{i}", f"Tool number {i}.", OBJECT, lambda a, c: None) for i in range(5)]
    rt = make_runtime(SourcePlugin(Source("many", "Many tools."), tools))
    seen: list[str] = []
    page = rt.search_tools(None, "many", 2)
    for _ in range(3):  # five tools, two a page
        seen += [t["tool_name"] for t in page["tools"]]
        if "next_cursor" not in page:
            break
        page = rt.search_tools(None, "many", 2, cursor=page["next_cursor"])
    assert seen == [f"many__tool_{i}" for i in range(5)]
    assert rt.search_tools(None, "many", 2, cursor="nope")["error"]["code"] == "invalid_arguments"


def test_the_documented_surface_answers_what_plugins_and_the_cli_ask(make_runtime: Callable[..., Runtime]) -> None:
    def listed() -> list[Tool]:
        return [Tool("ping", "Ping the server.", OBJECT, lambda a, c: "pong", exposure="direct")]

    class Bridged:
        junior_plugin_name = "bridged"

        @hookimpl
        def register_sources(self, register: Any) -> None:
            register(Source("mcp:up", "A server."), provider=listed)

    notes = [Tool("quick_note", "Save a quick note.", OBJECT, lambda a, c: "ok"),
             Tool("purge", "Purge every note.", OBJECT, lambda a, c: "ok", exposure="hidden")]
    plugin = SourcePlugin(Source("notes", "Notes."), notes)
    rt = make_runtime(plugin, Bridged(), default_timeout_s=9)
    rt.set_source_unavailable("mcp:up", "down for maintenance")
    assert rt.source_info() == [
        SourceInfo("mcp:up", "A server.", "bridged", run_time=True, tools=1, unavailable="down for maintenance"),
        SourceInfo("notes", "Notes.", plugin.junior_plugin_name, run_time=False, tools=2),
    ]
    assert [t.tool_name for t in rt.catalog_tools()] == ["mcp__up__ping", "notes__purge", "notes__quick_note"]
    assert [t.tool_name for t in rt.catalog_tools("notes")] == ["notes__purge", "notes__quick_note"]
    assert rt.catalog_tool("notes__purge") is not None and rt.catalog_tool("notes__nothing") is None
    assert [t.tool_name for t in rt.visible_tools(exposure="deferred")] == ["notes__quick_note"]
    assert [t.tool_name for t in rt.visible_tools()] == ["mcp__up__ping", "notes__quick_note"]
    assert rt.offered_names() == [t["name"] for t in rt.model_tools()] == ["searchTools", "executeTool",
                                                                            "mcp__up__ping"]
    assert rt.plugin("bridged").__class__ is Bridged and rt.plugin("nobody") is None
    assert (rt.options.default_timeout_s, rt.options.lazy_sources) == (9, False)
    info = rt.index_info()
    assert info["tools"] == 2 and info["fingerprint"]  # the searchable ones: deferred and direct
    assert rt.rebuild_index()["fingerprint"] == info["fingerprint"]
    explained = rt.explain("quick note")
    assert [t["tool_name"] for t in explained["tools"]][:1] == ["notes__quick_note"]
