"""The model-facing protocol lives in one module, and every way of calling a tool takes the same preparation step."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from junior_core import Runtime, ToolContext, hookimpl
from junior_core import _protocol as protocol
from junior_core._runtime.runtime import Answered, Prepared
from tests.helpers import notes_plugin, weather_plugin

CASES: list[tuple[str, Any]] = [
    ("notes__add_note", {"text": "hi"}),  # runs
    ("notes__add_note", {}),  # invalid_arguments
    ("notes__add_notes", {}),  # unknown_tool with a suggestion
    ("notes__admin_purge", {}),  # hidden: not_permitted
    ("notes__delete_note", {"id": "1"}),  # ToolError
    ("weather__get_forecast", {"city": "Oslo"}),  # async handler
    ("notes__find_notes", {"query": "veto me"}),  # vetoed
]


class Veto:
    @hookimpl
    def before_tool_execute(self, arguments: dict[str, Any]) -> str | None:
        return "Vetoed." if arguments.get("query") == "veto me" else None


def test_the_model_tools_are_described_by_the_protocol_module(make_runtime: Callable[..., Runtime]) -> None:
    search, execute = make_runtime(notes_plugin()).model_tools()[:2]
    assert (search["name"], search["input_schema"]) == (protocol.SEARCH_TOOLS, protocol.SEARCH_SCHEMA)
    assert execute == {"name": protocol.EXECUTE_TOOL, "description": protocol.EXECUTE_DESCRIPTION,
                       "input_schema": protocol.EXECUTE_SCHEMA}
    assert search["description"].startswith(protocol.search_description([])[:60])


def test_every_call_path_answers_the_same(make_runtime: Callable[..., Runtime]) -> None:
    rt = make_runtime(notes_plugin(), weather_plugin(), Veto())
    ctx = ToolContext(tool_call_id="c1")
    for tool_name, arguments in CASES:
        wrapped = {"tool_name": tool_name, "arguments": arguments}
        answers = [
            rt.execute_tool(tool_name, arguments, ctx),
            rt.call_model_tool("executeTool", wrapped, ctx),
            asyncio.run(rt.aexecute_tool(tool_name, arguments, ctx)),
            asyncio.run(rt.acall_model_tool("executeTool", wrapped, ctx)),
        ]
        assert all(answer == answers[0] for answer in answers), (tool_name, answers)
        if answers[0].get("error", {}).get("code") not in ("unknown_tool", "not_permitted"):
            assert rt.call_tool(tool_name, arguments, ctx) == answers[0]


def test_preparation_is_typed_prepared_or_answered(make_runtime: Callable[..., Runtime]) -> None:
    rt = make_runtime(notes_plugin())
    ctx = ToolContext()
    step = rt._dispatch.model_call("executeTool", {"tool_name": "notes__add_note", "arguments": {"text": "x"}}, ctx)
    assert isinstance(step, Prepared) and step.entry.tool_name == "notes__add_note" and step.arguments == {"text": "x"}
    refused = rt._dispatch.model_call("executeTool", {"tool_name": "notes__nope"}, ctx)
    assert isinstance(refused, Answered) and refused.answer["error"]["code"] == "unknown_tool"
    searched = rt._dispatch.model_call("searchTools", '{"query": "note"}', ctx)
    assert isinstance(searched, Answered) and len(searched.answer["tools"]) > 0
