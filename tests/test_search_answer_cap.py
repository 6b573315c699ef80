"""A searchTools answer has a size limit: schemas just under the 50,000-character cap cannot make it huge."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from junior_core import Runtime, Source, Tool
from junior_core._catalog.catalog import MAX_SCHEMA_CHARS
from junior_core._protocol.tools import DEFAULT_MAX_SEARCH_CHARS
from tests.helpers import SourcePlugin, echo


def _schema(fields: int, words: int) -> dict[str, Any]:
    """``fields`` properties, each described in ``words`` words: a big schema a real server could send."""
    text = " ".join(["the value of this field, which the tool reads before the call"] * words)
    return {
        "type": "object",
        "properties": {f"field_{i}": {"type": "string", "description": text} for i in range(fields)},
        "required": ["field_0"],
        "additionalProperties": False,
    }


def _giants() -> SourcePlugin:
    """20 report tools with schemas just under the cap and 5 small ones, all matching one query."""
    tools = [Tool(f"report_{i:02d}", f"Build report number {i} of the sales data.", _schema(40, 19 - (i % 3)), echo)
             for i in range(20)]
    tools += [Tool(f"report_small_{i}", f"Build a small report {i} of the sales data.",
                   {"type": "object", "properties": {"month": {"type": "string", "description": "Which month."}}},
                   echo) for i in range(5)]
    return SourcePlugin(Source("reports", "Sales reports."), tools)


def _size(answer: dict[str, Any]) -> int:
    return len(json.dumps(answer))


def test_schemas_just_under_their_cap_cannot_make_an_answer_huge(make_runtime: Callable[..., Runtime]) -> None:
    rt = make_runtime(_giants())
    sizes = [len(json.dumps(e.tool.input_schema, sort_keys=True)) for e in rt.catalog_tools()]
    assert max(sizes) <= MAX_SCHEMA_CHARS and max(sizes) > 0.9 * MAX_SCHEMA_CHARS  # the attack: just under the cap
    # A ranked answer shows one schema (its first tool's) and the rest in one line each: small whatever they hold.
    for answer, asked in ((rt.search_tools("sales report"), 5), (rt.search_tools("sales report", max_results=20), 20),
                          (rt.call_model_tool("searchTools", {"query": "build report", "max_results": 20}), 20)):
        first, *rest = answer["tools"]
        assert first["input_schema"] == rt.catalog_tool(first["tool_name"]).tool.input_schema  # type: ignore[union-attr]
        assert rest and all("input_schema" not in row for row in rest) and "shortened" not in answer
        assert _size(answer) <= DEFAULT_MAX_SEARCH_CHARS and len(answer["tools"]) == asked
    # A listing shows compact rows: small whatever the schemas hold.
    for listing in (rt.search_tools(source="reports", max_results=20), rt.search_tools(None, max_results=20)):
        assert all("input_schema" not in row and row["params"] for row in listing["tools"])
        assert "shortened" not in listing and _size(listing) < 20_000 and len(listing["tools"]) == 20
    # tool_names shows every schema asked for: those are shortened to fit.
    giants = [f"reports__report_{i:02d}" for i in range(10)]
    for answer, asked in ((rt.call_model_tool("searchTools", {"tool_names": giants}), 10),):
        assert _size(answer) <= DEFAULT_MAX_SEARCH_CHARS == 65_536, _size(answer)
        note = answer["shortened"]
        assert note["limit_chars"] == 65_536 and "searchTools with tool_names gets a tool in full" in note["message"]
        shortened = {t["tool_name"]: t for t in answer["tools"] if "input_schema_shortened" in t}
        assert sorted(shortened) == note["tools"] and shortened
        # The largest schemas were shortened first: every one kept whole is no larger than any shortened one.
        full = {e.tool_name: len(json.dumps(e.tool.input_schema)) for e in rt.catalog_tools()}
        kept = [full[t["tool_name"]] for t in answer["tools"] if t["tool_name"] not in shortened]
        assert not kept or max(kept) <= min(full[name] for name in shortened)
        for row in shortened.values():  # an outline: names, types, required
            assert row["input_schema_shortened"] == "outline"
            assert row["input_schema"]["required"] == ["field_0"]
            assert row["input_schema"]["properties"]["field_39"] == {"type": "string"}
        for row in answer["tools"]:
            if row["tool_name"] not in shortened:
                assert row["input_schema"] == rt.catalog_tool(row["tool_name"]).tool.input_schema  # type: ignore[union-attr]
        assert len(answer["tools"]) == asked  # none left out


def test_what_the_note_says_gets_one_tool_in_full(make_runtime: Callable[..., Runtime]) -> None:
    rt = make_runtime(_giants())
    answer = rt.call_model_tool("searchTools", {"tool_names": [f"reports__report_{i:02d}" for i in range(10)]})
    name = answer["shortened"]["tools"][0]
    one = rt.call_model_tool("searchTools", {"tool_names": [name]})
    [row] = one["tools"]
    assert row["tool_name"] == name and "shortened" not in one and "input_schema_shortened" not in row
    assert row["input_schema"] == rt.catalog_tool(name).tool.input_schema  # type: ignore[union-attr]
    assert 40_000 < _size(one) <= 65_536
    # An outlined tool is still called with its full schema: arguments are checked against all of it.
    refused = rt.execute_tool(name, {})
    assert refused["ok"] is False and refused["error"]["code"] == "invalid_arguments"


def test_a_small_answer_is_untouched(make_runtime: Callable[..., Runtime]) -> None:
    rt = make_runtime(_giants())
    answer = rt.search_tools("small", source="reports")
    assert "shortened" not in answer and answer["tools"]
    assert all("input_schema_shortened" not in row for row in answer["tools"])


def test_past_outlines_schemas_are_omitted_then_tools_go_to_the_next_page(make_runtime: Callable[..., Runtime]) -> None:
    tools = [Tool(f"wide_{i:02d}", f"Wide tool {i}.", _schema(200 + i, 0), echo) for i in range(12)]
    plugin = SourcePlugin(Source("wide", "Wide tools."), tools)
    rt = make_runtime(plugin, max_search_chars=12_000)
    answer = rt.call_model_tool("searchTools", {"tool_names": [f"wide__wide_{i:02d}" for i in range(10)]})
    assert _size(answer) <= 12_000 and len(answer["tools"]) == 10 and "next_cursor" not in answer
    how = {t["tool_name"]: t["input_schema_shortened"] for t in answer["tools"]}
    # An outline of 200 fields is too big for ten of them: the largest lose their schema first.
    assert how == {"wide__wide_00": "outline", **{f"wide__wide_{i:02d}": "omitted" for i in range(1, 10)}}
    assert all(t["input_schema"] == {"type": "object"} for t in answer["tools"][1:])

    tight = make_runtime(plugin, max_search_chars=2_500)
    answer = tight.search_tools("wide tool", max_results=20)
    note = answer["shortened"]
    assert len(answer["tools"]) < 12 and note["left_out"] == 12 - len(answer["tools"])
    assert "next_cursor for the next page" in note["message"] and answer["next_cursor"]
    seen = [t["tool_name"] for t in answer["tools"]]
    while "next_cursor" in answer:  # paging on reaches every tool, each answer within the limit
        assert _size(answer) <= 2_500
        answer = tight.search_tools("wide tool", max_results=20, cursor=answer["next_cursor"])
        seen += [t["tool_name"] for t in answer["tools"]]
    assert _size(answer) <= 2_500 and seen == [f"wide__wide_{i:02d}" for i in range(12)]
