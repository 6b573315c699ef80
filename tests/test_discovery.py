"""searchTools and executeTool rules (DESIGN.md §4-5), through the runtime."""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from junior_core import Runtime, Source, Tool, ToolContext, hookimpl
from junior_core.testing import ManualClock
from tests.helpers import OBJECT, SourcePlugin, echo


@pytest.fixture
def release() -> Iterator[threading.Event]:
    """Set at the end of the test, so handlers blocked on it end and their threads with them."""
    event = threading.Event()
    yield event
    event.set()


# -- searchTools: description ------------------------------------------------------------------
def test_search_description_lists_sources_sorted_never_tools(rt: Runtime) -> None:
    search = rt.model_tools()[0]
    assert search["name"] == "searchTools"
    text = search["description"]
    assert text.index("- notes: Personal notes") < text.index("- weather: Weather forecasts")
    assert "Available sources:" in text and "executeTool" in text and "source" in text
    for entry in rt.catalog_tools():
        assert entry.tool_name not in text


def test_search_description_grows_with_sources_not_tools(make_runtime: Callable[..., Runtime]) -> None:
    few = make_runtime(SourcePlugin(Source("big", "Big."), [Tool("t0", "T.", OBJECT, echo)]))
    many = make_runtime(SourcePlugin(Source("big", "Big."), [Tool(f"t{i}", "T.", OBJECT, echo) for i in range(300)]))
    assert few.model_tools()[0]["description"] == many.model_tools()[0]["description"]


def test_model_tools_are_search_execute_and_direct_tools_only(rt: Runtime) -> None:
    assert [t["name"] for t in rt.model_tools()] == ["searchTools", "executeTool", "notes__quick_note"]
    for tool in rt.model_tools():
        assert set(tool) == {"name", "description", "input_schema"}


# -- searchTools: output -----------------------------------------------------------------------
def test_search_all_sources_shape(rt: Runtime) -> None:
    out = rt.search_tools("weather forecast for a city")
    assert out["query"] == "weather forecast for a city" and "source" not in out  # null: left out
    assert out["tools"][0]["tool_name"] == "weather__get_forecast"
    assert out["tools"][0]["source"] == "weather"
    # No annotations: the tool declares none, and a hint at MCP's default is left out.
    assert set(out["tools"][0]) == {"tool_name", "description", "source", "input_schema", "matched"}
    # Each row names its source; the sources' summaries are lines of searchTools' own description already.
    assert "sources" not in out
    assert all(f"- {t['source']}: " in rt.model_tools()[0]["description"] for t in out["tools"])
    assert "execution_tool" not in out and "returned_tools" not in out  # a constant, and len(tools)
    assert out["total_catalog_tools"] == 9  # 10 registered, one hidden
    assert out["total_eligible_tools"] == 9
    assert len(out["tools"]) <= 5
    assert out["total_matches"] >= len(out["tools"])


def test_search_inside_a_source_has_no_per_tool_source(rt: Runtime) -> None:
    out = rt.search_tools("note", source="notes")
    assert out["tools"] and all(t["tool_name"].startswith("notes__") for t in out["tools"])
    assert all("source" not in t for t in out["tools"])
    assert "sources" not in out  # the model named it: describing it again tells it nothing
    listing = rt.search_tools(None, source="notes")
    assert listing["sources"] == [{"id": "notes", "description": "Personal notes: write, find and delete short notes."}]
    assert out["total_eligible_tools"] == 7


@pytest.mark.parametrize("source", ["nope", "", "NOTES", "notes "])
def test_unknown_source_returns_all_sources_and_a_hint(rt: Runtime, source: str) -> None:
    out = rt.search_tools("note", source=source)
    assert "error" not in out
    assert out["tools"] == [] and out["total_matches"] == 0
    assert [s["id"] for s in out["sources"]] == ["notes", "weather"]
    assert "notes" in out["hint"] and "weather" in out["hint"] and repr(source) in out["hint"]


@pytest.mark.parametrize("query", [None, "", "   "])
def test_blank_query_with_source_lists_its_tools_deterministically(rt: Runtime, query: str | None) -> None:
    out = rt.search_tools(query, source="notes", max_results=3)
    assert [t["tool_name"] for t in out["tools"]] == ["notes__add_note", "notes__crash_note", "notes__delete_note"]
    assert out["total_matches"] == 7


def test_blank_query_without_source_samples_across_sources(rt: Runtime) -> None:
    out = rt.search_tools(None, max_results=4)
    assert [t["tool_name"] for t in out["tools"]] == [
        "notes__add_note",
        "weather__getCurrentConditions",
        "notes__crash_note",
        "weather__get_forecast",
    ]
    assert [s["id"] for s in out["sources"]] == ["notes", "weather"]
    assert out == rt.search_tools("", max_results=4) and "query" not in out


def test_hidden_tools_are_never_found(rt: Runtime) -> None:
    for query in ["purge every note", "notes__admin_purge", "admin_purge"]:
        names = [t["tool_name"] for t in rt.search_tools(query, max_results=20)["tools"]]
        assert "notes__admin_purge" not in names
    assert "notes__admin_purge" not in [t["tool_name"] for t in rt.search_tools(None, "notes", 20)["tools"]]


@pytest.mark.parametrize(
    ("query", "source"),
    [
        ("weather__getCurrentConditions", None),
        ("getCurrentConditions", "weather"),
        ("  weather__getCurrentConditions ", None),
    ],
)
def test_exact_name_comes_first(rt: Runtime, query: str, source: str | None) -> None:
    assert rt.search_tools(query, source)["tools"][0]["tool_name"] == "weather__getCurrentConditions"


def test_exact_name_wins_even_against_better_text_matches(make_runtime: Callable[..., Runtime]) -> None:
    tools = [
        Tool("get", "Fetch one record by its id.", OBJECT, echo),
        Tool("get_all", "Get all records: get every get-able record, get them all.", OBJECT, echo),
        Tool("get_many", "Get get get many.", OBJECT, echo),
    ]
    rt = make_runtime(SourcePlugin(Source("x", "X."), tools))
    assert rt.search_tools("get all", "x")["tools"][0]["tool_name"] != "x__get"  # plain ranking prefers others
    assert rt.search_tools("x__get")["tools"][0]["tool_name"] == "x__get"
    assert rt.search_tools("get", "x")["tools"][0]["tool_name"] == "x__get"
    assert rt.search_tools("get", "x")["total_matches"] == 3


def test_summaries_are_first_paragraph_capped_at_180(make_runtime: Callable[..., Runtime]) -> None:
    long = "word " * 60
    tools = [
        Tool("long", long + "\n\nSecond paragraph.", OBJECT, echo),
        Tool("short", "Short   text\n  wrapped.\n\nHidden detail.", OBJECT, echo),
    ]
    rt = make_runtime(SourcePlugin(Source("x", "X."), tools))
    by_name = {t["tool_name"]: t["description"] for t in rt.search_tools(None, "x")["tools"]}
    assert by_name["x__short"] == "Short text wrapped."
    # Cut at a word, never inside one: "word word ... word..." (no sentence ends within 180 characters).
    assert len(by_name["x__long"]) <= 180 and by_name["x__long"].endswith(" word...")


def test_full_description_is_indexed(make_runtime: Callable[..., Runtime]) -> None:
    tools = [
        Tool("alpha", "Does a thing.\n\nMentions zeppelins only in the second paragraph.", OBJECT, echo),
        Tool("beta", "Does another thing.", OBJECT, echo),
    ]
    rt = make_runtime(SourcePlugin(Source("x", "X."), tools))
    assert [t["tool_name"] for t in rt.search_tools("zeppelin")["tools"]] == ["x__alpha"]


def test_ties_break_by_tool_name(make_runtime: Callable[..., Runtime]) -> None:
    tools = [Tool(name, "Identical description of a widget.", OBJECT, echo) for name in ["zeta", "alpha", "mid"]]
    rt = make_runtime(SourcePlugin(Source("x", "X."), tools))
    assert [t["tool_name"] for t in rt.search_tools("widget")["tools"]] == ["x__alpha", "x__mid", "x__zeta"]


# -- searchTools: bad input --------------------------------------------------------------------
@pytest.mark.parametrize(
    ("arguments", "path"),
    [
        ({"query": "x", "max_results": 0}, "max_results"),
        ({"query": "x", "max_results": 21}, "max_results"),
        ({"query": "x", "max_results": "5"}, "max_results"),
        ({"query": "x", "max_results": True}, "max_results"),
        ({"query": "x" * 20_000}, "query"),
        ({"query": 5}, "query"),
        ({"query": "x", "limit": 5}, "(root)"),
    ],
)
def test_invalid_search_input_is_a_structured_error(rt: Runtime, arguments: dict[str, Any], path: str) -> None:
    out = rt.call_model_tool("searchTools", arguments)
    assert out["ok"] is False
    assert out["error"]["code"] == "invalid_arguments"
    assert out["error"]["details"][0]["path"] == path
    assert len(out["error"]["message"]) <= 300


def test_search_input_must_be_an_object(rt: Runtime) -> None:
    out = rt.call_model_tool("searchTools", ["weather"])
    assert out["error"]["code"] == "invalid_arguments" and "object" in out["error"]["message"]


def test_nul_bytes_are_refused_and_emoji_searched(rt: Runtime) -> None:
    assert rt.call_model_tool("searchTools", {"query": "wea\x00ther"})["error"]["code"] == "invalid_arguments"
    out = rt.search_tools("🌦️ weather forecast ☀️")
    assert out["tools"][0]["tool_name"] == "weather__get_forecast"
    assert rt.search_tools("🌦️")["tools"] == []


# -- executeTool -------------------------------------------------------------------------------
CTX = ToolContext()


def test_execute_success_shape(rt: Runtime) -> None:
    out = rt.call_model_tool("executeTool", {"tool_name": "notes__add_note", "arguments": {"text": "hi"}}, CTX)
    assert out == {"ok": True, "tool_name": "notes__add_note", "result": {"echo": {"text": "hi"}}}
    assert rt.call_model_tool("executeTool", {"tool_name": "notes__quick_note"})["ok"] is True


def test_execute_async_handler_from_sync_and_async_callers(rt: Runtime) -> None:
    expected = {"ok": True, "tool_name": "weather__get_forecast", "result": {"city": "Oslo", "forecast": "sunny"}}
    assert rt.execute_tool("weather__get_forecast", {"city": "Oslo"}) == expected
    assert asyncio.run(rt.aexecute_tool("weather__get_forecast", {"city": "Oslo"})) == expected
    sync_expected = {"ok": True, "tool_name": "notes__add_note", "result": {"echo": {"text": "a"}}}
    assert asyncio.run(rt.aexecute_tool("notes__add_note", {"text": "a"})) == sync_expected


def test_top_level_tool_arguments_are_an_error_telling_to_nest(rt: Runtime) -> None:
    out = rt.call_model_tool("executeTool", {"tool_name": "notes__add_note", "text": "hi"})
    assert out["ok"] is False and out["tool_name"] == "notes__add_note"
    assert out["error"]["code"] == "invalid_arguments"
    assert "'arguments'" in out["error"]["message"] and "text" in out["error"]["message"]


@pytest.mark.parametrize(
    "arguments",
    [{}, {"tool_name": 5}, {"tool_name": "notes__add_note", "arguments": "text=hi"}, {"arguments": {}}, None, "x"],
)
def test_malformed_execute_input(rt: Runtime, arguments: Any) -> None:
    out = rt.call_model_tool("executeTool", arguments)
    assert out["ok"] is False and out["error"]["code"] == "invalid_arguments"


def test_unknown_tool_suggests_close_names_and_points_to_search(rt: Runtime) -> None:
    out = rt.execute_tool("notes__add_notes", {})
    assert out["error"]["code"] == "unknown_tool"
    assert out["error"]["suggestions"][0] == "notes__add_note"
    assert "searchTools" in out["error"]["message"]
    vague = rt.execute_tool("forecast", {})
    assert "weather__get_forecast" in vague["error"]["suggestions"]
    assert "notes__admin_purge" not in rt.execute_tool("notes__admin_purg", {})["error"]["suggestions"]


def test_invalid_arguments_carry_paths(rt: Runtime) -> None:
    out = rt.execute_tool("notes__add_note", {"text": 5, "tags": ["a", 3], "owner": "someone"})
    assert out["error"]["code"] == "invalid_arguments"
    paths = {d["path"] for d in out["error"]["details"]}
    assert paths == {"(root)", "text", "tags/1"}


def test_hidden_tool_is_not_permitted(rt: Runtime) -> None:
    out = rt.execute_tool("notes__admin_purge", {})
    assert out["error"]["code"] == "not_permitted"
    assert rt.call_model_tool("notes__admin_purge", {})["error"]["code"] == "unknown_tool"


def test_deferred_tool_is_not_callable_as_a_direct_tool(rt: Runtime) -> None:
    assert rt.call_model_tool("notes__add_note", {"text": "x"})["error"]["code"] == "unknown_tool"
    assert rt.call_model_tool("notes__quick_note", {})["ok"] is True


def test_handler_exception_is_tool_failed_without_its_text(rt: Runtime, caplog: pytest.LogCaptureFixture) -> None:
    out = rt.execute_tool("notes__crash_note", {})
    assert out["error"]["code"] == "tool_failed"
    dumped = json.dumps(out)
    assert "secret-database-password" not in dumped and "Traceback" not in dumped and "RuntimeError" not in dumped
    assert "secret-database-password" in caplog.text  # the operator still sees it


def test_tool_error_codes_and_details_reach_the_model(rt: Runtime) -> None:
    out = rt.execute_tool("notes__delete_note", {"id": "n1"})
    assert out["error"] == {
        "code": "not_found",
        "message": "No note has that id; list notes to see the ids.",
        "id": "n1",
    }


def _overruns(clock: ManualClock, release: threading.Event) -> Callable[[dict[str, Any], Any], None]:
    """A sync handler that moves ``clock`` an hour on, past any limit here, and blocks until ``release``."""

    def handler(arguments: dict[str, Any], context: Any) -> None:
        clock.advance(3600)
        release.wait()

    return handler


def test_handler_past_its_timeout_is_a_timeout_error(
    make_runtime: Callable[..., Runtime], release: threading.Event
) -> None:
    clock = ManualClock()
    tool = Tool("hang", "Hangs.", OBJECT, _overruns(clock, release), timeout_s=0.2)
    rt = make_runtime(SourcePlugin(Source("x", "X."), [tool]), clock=clock)
    out = rt.execute_tool("x__hang", {})
    assert out["error"]["code"] == "timeout" and "within 0.2 s." in out["error"]["message"]
    assert asyncio.run(rt.aexecute_tool("x__hang", {}))["error"]["code"] == "timeout"


def test_async_handler_past_its_timeout(make_runtime: Callable[..., Runtime]) -> None:
    clock = ManualClock()

    async def slow(arguments: dict[str, Any], context: Any) -> None:
        clock.advance(3600)
        await asyncio.Event().wait()  # never set: the call is cancelled when the caller gives up

    rt = make_runtime(SourcePlugin(Source("x", "X."), [Tool("slow", "Slow.", OBJECT, slow, timeout_s=0.1)]),
                      clock=clock)
    assert rt.execute_tool("x__slow", {})["error"]["code"] == "timeout"
    assert asyncio.run(rt.aexecute_tool("x__slow", {}))["error"]["code"] == "timeout"


def test_runtime_default_timeout_applies(make_runtime: Callable[..., Runtime], release: threading.Event) -> None:
    clock = ManualClock()
    tool = Tool("slow", "Slow.", OBJECT, _overruns(clock, release))
    rt = make_runtime(SourcePlugin(Source("x", "X."), [tool]), default_timeout_s=0.1, clock=clock)
    answer = rt.execute_tool("x__slow", {})
    assert answer["error"]["code"] == "timeout" and "within 0.1 s." in answer["error"]["message"]


def test_a_call_longer_than_its_timeout_in_real_time_is_kept_until_the_clock_passes_it(
    make_runtime: Callable[..., Runtime]
) -> None:
    # What decides is the runtime's clock: five times the limit in real time, none of it on the clock.
    def sync_slow(arguments: dict[str, Any], context: Any) -> str:
        time.sleep(0.05)
        return "sync"

    async def async_slow(arguments: dict[str, Any], context: Any) -> str:
        await asyncio.sleep(0.05)
        return "async"

    tools = [Tool("sync", "Slow.", OBJECT, sync_slow, timeout_s=0.01),
             Tool("async", "Slow.", OBJECT, async_slow, timeout_s=0.01)]
    rt = make_runtime(SourcePlugin(Source("x", "X."), tools), clock=ManualClock())
    assert [rt.execute_tool(f"x__{name}", {})["result"] for name in ("sync", "async")] == ["sync", "async"]
    assert [asyncio.run(rt.aexecute_tool(f"x__{name}", {}))["result"] for name in ("sync", "async")] == [
        "sync", "async"]


def test_on_the_monotonic_clock_a_call_past_its_timeout_is_a_timeout(
    make_runtime: Callable[..., Runtime], release: threading.Event
) -> None:
    # The one tool deadline test on the real clock: the handler never returns, so it is late however loaded.
    tool = Tool("stuck", "Stuck.", OBJECT, lambda arguments, context: release.wait(), timeout_s=0.05)
    rt = make_runtime(SourcePlugin(Source("x", "X."), [tool]))
    assert rt.execute_tool("x__stuck", {})["error"]["code"] == "timeout"
    assert asyncio.run(rt.aexecute_tool("x__stuck", {}))["error"]["code"] == "timeout"


def test_non_json_result_is_tool_failed(rt: Runtime) -> None:
    out = rt.execute_tool("notes__weird_note", {})
    assert out["error"]["code"] == "tool_failed" and "JSON" in out["error"]["message"]
    json.dumps(out)


def test_context_reaches_the_handler(make_runtime: Callable[..., Runtime]) -> None:
    from junior_core import Actor

    seen: list[ToolContext] = []
    tool = Tool("who", "Who am I.", OBJECT, lambda a, c: seen.append(c) or c.require_actor().key)
    rt = make_runtime(SourcePlugin(Source("x", "X."), [tool]))
    ctx = ToolContext(actor=Actor("slack", "T1", "U1"), tool_call_id="call-1")
    assert rt.execute_tool("x__who", {}, ctx)["result"] == "slack:T1:U1"
    assert seen == [ctx]
    missing = rt.execute_tool("x__who", {})
    assert missing["error"]["code"] == "missing_context"


def test_veto_becomes_not_permitted_and_the_handler_never_runs(make_runtime: Callable[..., Runtime]) -> None:
    calls: list[str] = []

    class Policy:
        junior_plugin_name = "policy"

        @hookimpl
        def before_tool_execute(self, tool: Tool, arguments: dict[str, Any], context: ToolContext) -> str | None:
            if tool.annotations and tool.annotations.get("readOnlyHint") is False:
                return "Writing notes needs approval; ask the user to approve it in the app first."
            return None

    tool_w = Tool("write", "Write.", OBJECT, lambda a, c: calls.append("write"), annotations={"readOnlyHint": False})
    tool_r = Tool(
        "read", "Read.", OBJECT, lambda a, c: calls.append("read") or "ok", annotations={"readOnlyHint": True}
    )
    rt = make_runtime(SourcePlugin(Source("x", "X."), [tool_w, tool_r]), Policy())
    out = rt.execute_tool("x__write", {})
    assert out["error"] == {
        "code": "not_permitted",
        "message": "Writing notes needs approval; ask the user to approve it in the app first.",
    }
    assert rt.execute_tool("x__read", {})["ok"] is True
    assert calls == ["read"]


def test_a_failing_policy_hook_denies(make_runtime: Callable[..., Runtime]) -> None:
    class Broken:
        junior_plugin_name = "broken-policy"

        @hookimpl
        def before_tool_execute(self, tool: Tool) -> None:
            raise RuntimeError("policy store down")

    rt = make_runtime(SourcePlugin(Source("x", "X."), [Tool("t", "T.", OBJECT, echo)]), Broken())
    out = rt.execute_tool("x__t", {})
    assert out["error"]["code"] == "not_permitted" and "policy store down" not in json.dumps(out)


def test_closed_runtime_answers_unavailable(make_runtime: Callable[..., Runtime]) -> None:
    rt = make_runtime(SourcePlugin(Source("x", "X."), [Tool("t", "T.", OBJECT, echo)]))
    rt.close()
    assert rt.execute_tool("x__t", {})["error"]["code"] == "unavailable"


def test_tool_error_details_cannot_break_the_answer(make_runtime: Callable[..., Runtime]) -> None:
    from junior_core import ToolError

    def clash(arguments: dict[str, Any], context: Any) -> None:
        raise ToolError("conflict", "Try again.", tool_name="spoofed", extra={"n": 1}, bad=object())

    rt = make_runtime(SourcePlugin(Source("x", "X."), [Tool("clash", "Clash.", OBJECT, clash)]))
    out = rt.execute_tool("x__clash", {})
    assert out == {"ok": False, "tool_name": "x__clash", "error": {"code": "conflict", "message": "Try again."}}

    def fine(arguments: dict[str, Any], context: Any) -> None:
        raise ToolError("conflict", "Try again.", tool_name="spoofed", extra={"n": 1})

    rt2 = make_runtime(SourcePlugin(Source("y", "Y."), [Tool("fine", "Fine.", OBJECT, fine)]))
    assert rt2.execute_tool("y__fine", {})["error"] == {
        "code": "conflict", "message": "Try again.", "tool_name": "spoofed", "extra": {"n": 1}}


def test_broken_local_ref_is_tool_failed_and_remote_refs_are_refused(make_runtime: Callable[..., Runtime]) -> None:
    broken = {"type": "object", "properties": {"a": {"$ref": "#/$defs/missing"}}}
    rt = make_runtime(SourcePlugin(Source("x", "X."), [Tool("broken", "Broken.", broken, echo)]))
    out = rt.execute_tool("x__broken", {"a": 1})
    assert out["error"]["code"] == "tool_failed" and "schema is broken" in out["error"]["message"]
    with pytest.raises(ValueError, match="local"):
        Tool("remote", "Remote.", {"type": "object", "properties": {"a": {"$ref": "http://127.0.0.1:9/s.json"}}}, echo)
    local = {"type": "object", "properties": {"a": {"$ref": "#/$defs/n"}}, "$defs": {"n": {"type": "integer"}}}
    rt2 = make_runtime(SourcePlugin(Source("y", "Y."), [Tool("local", "Local.", local, echo)]))
    assert rt2.execute_tool("y__local", {"a": 1})["ok"] is True
    assert rt2.execute_tool("y__local", {"a": "x"})["error"]["details"][0]["path"] == "a"


def test_null_arguments_mean_none(rt: Runtime) -> None:
    out = rt.call_model_tool("executeTool", {"tool_name": "notes__quick_note", "arguments": None})
    assert out["ok"] is True and out["result"] == {"echo": {}}


def test_a_huge_unknown_tool_name_is_not_echoed_whole(rt: Runtime) -> None:
    out = rt.execute_tool("x" * 20_000, {})
    assert out["error"]["code"] == "unknown_tool"
    assert len(json.dumps(out)) < 2_000


def test_an_exact_hit_ranked_past_the_limit_is_counted_once(make_runtime: Callable[..., Runtime]) -> None:
    tools = [Tool("get", "Fetch one record by its id.", OBJECT, echo)] + [
        Tool(f"get_{i}", "Get get get records, get them all.", OBJECT, echo) for i in range(5)
    ]
    rt = make_runtime(SourcePlugin(Source("x", "X."), tools))
    out = rt.search_tools("get", "x", max_results=2)
    assert out["tools"][0]["tool_name"] == "x__get"
    assert out["total_matches"] == 6


def test_discovery_stays_within_its_line_budget() -> None:
    """Modules are split by what they do, not to fit a per-module cap; the whole package has a budget that only
    goes down (the aim is 2,000 lines)."""
    from pathlib import Path

    import junior_core._discovery

    folder = Path(junior_core._discovery.__file__).parent
    sizes = {path.name: len(path.read_text(encoding="utf-8").splitlines()) for path in folder.glob("*.py")}
    assert len(sizes) > 10, sizes
    assert sum(sizes.values()) <= 2610, sizes
