"""searchTools answers with evidence and every tool usable in one call: ``matched`` from a tool's own text,
``unmatched`` and ``weak`` from what the query said, partial matches shown rather than hidden, ``params`` on every
row, ``tool_names`` for exact tools in full, and compact listings."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from junior_memory import MemoryPlugin

from junior_core import Runtime, Source, Tool
from junior_core import _protocol as protocol
from junior_core._protocol import NO_MATCH_CHARS
from tests.helpers import OBJECT, SourcePlugin, echo, names, notes_plugin, string_params, text_plugin, weather_plugin

NOWHERE = "sqlite:////dev/null/no-such-dir/memory.sqlite3"  # searching never opens the store


def browser_plugins() -> list[SourcePlugin]:
    """Two browser-automation sources, shaped like the MCP servers that do it."""
    url = {"type": "object", "properties": {"url": {"type": "string", "description": "The page's URL."}},
           "required": ["url"]}
    return [
        SourcePlugin(Source("playwright", "Browser automation with Playwright."), [
            Tool("browser_navigate", "Navigate the browser to a URL.", url, echo),
            Tool("browser_snapshot", "Capture an accessibility snapshot of the current page.", OBJECT, echo),
            Tool("browser_click", "Click an element on the page.", string_params("element"), echo),
        ], name="playwright"),
        SourcePlugin(Source("puppeteer", "Puppeteer: drive a headless Chrome."), [
            Tool("puppeteer_navigate", "Navigate to a URL.", url, echo),
            Tool("puppeteer_screenshot", "Take a screenshot of the current page or an element.", string_params("name"), echo),
            Tool("puppeteer_evaluate", "Execute JavaScript in the browser console.", string_params("script"), echo),
        ], name="puppeteer"),
    ]


@pytest.fixture(scope="module")
def text_rt() -> Iterator[Runtime]:
    with Runtime(plugins=[MemoryPlugin(url=NOWHERE), text_plugin()], index_cache=False) as runtime:
        yield runtime


# -- item: a partial match is shown, ordered and flagged --------------------------------------------------
def test_a_tool_holding_the_requests_words_is_shown_flagged_not_hidden(text_rt: Runtime) -> None:
    answer = text_rt.search_tools("convert text to uppercase")
    assert "text__change_case" in names(answer)
    # "uppercase" is a word no installed tool holds: the answer says so instead of advising.
    assert answer["weak"] is True and "uppercase" in answer["unmatched"]
    assert "text" in answer["tools"][0]["matched"] and "nothing installed" not in answer.get("hint", "")


def test_a_word_count_request_shows_the_word_count_tool(text_rt: Runtime) -> None:
    answer = text_rt.search_tools("how many words are in this paragraph")
    assert "text__count_words" in names(answer)
    row = next(t for t in answer["tools"] if t["tool_name"] == "text__count_words")
    assert row["matched"] == ["words"]


def test_every_answer_with_tools_carries_unmatched(rt: Runtime) -> None:
    served = rt.search_tools("weather forecast for Lisbon")
    assert served["unmatched"] == ["Lisbon"] and "weak" not in served
    assert rt.search_tools("weather forecast")["unmatched"] == []
    assert rt.search_tools("note", source="notes")["unmatched"] == []
    # An answer without tools, and a listing, have none.
    assert "unmatched" not in rt.search_tools("zebra xylophone") and "unmatched" not in rt.search_tools(None)


def test_matched_holds_only_what_the_tools_own_text_holds(rt: Runtime) -> None:
    # "conditions" is in the weather source's description and in getCurrentConditions' name, not in get_forecast.
    answer = rt.search_tools("forecast conditions", max_results=5)
    rows = {t["tool_name"]: t for t in answer["tools"]}
    assert rows["weather__get_forecast"]["matched"] == ["forecast"]
    assert rows["weather__getCurrentConditions"]["matched"] == ["conditions"]


def test_an_answer_missing_a_word_nothing_installed_holds_is_weak(text_rt: Runtime) -> None:
    answer = text_rt.search_tools("add comment to Jira ticket")
    assert answer["tools"] == [] or (answer["weak"] is True and "Jira" in answer["unmatched"])


def test_a_hint_never_says_nothing_installed_while_tools_hold_the_words(
        make_runtime: Callable[..., Runtime]) -> None:
    rt = make_runtime(*browser_plugins(), MemoryPlugin(url=NOWHERE))
    answer = rt.search_tools("open web page in browser and read content")
    assert answer["tools"] and {"page", "browser"} <= {w for t in answer["tools"] for w in t.get("matched", [])}
    assert "nothing installed" not in json.dumps(answer)


def test_a_weak_hint_states_what_was_and_was_not_found(rt: Runtime) -> None:
    weak = rt.search_tools("find flights to Boston")
    assert weak["weak"] is True and "flights" in weak["unmatched"] and "'flights'" in weak["hint"]
    assert "nothing installed seems to" not in weak["hint"]


# -- item: every result usable in one call ----------------------------------------------------------------
def test_compact_params_name_types_required_enums_and_nested_keys() -> None:
    schema = {"type": "object", "required": ["query"], "properties": {
        "query": {"type": "string"}, "limit": {"type": "integer"},
        "unit": {"type": "string", "enum": ["celsius", "fahrenheit", "kelvin", "rankine", "reaumur"]},
        "filter": {"type": "object", "properties": {"tag": {"type": "string"}, "since": {"type": "string"}}},
        "ids": {"type": "array", "items": {"type": "integer"}}, "either": {"type": ["string", "null"]},
        "loose": {}}}
    assert protocol.compact_params(schema) == (
        "query: string (required), limit: integer, unit: string (one of celsius|fahrenheit|kelvin|...), "
        "filter: object {tag, since}, ids: array of integer, either: string|null, loose: any")
    assert protocol.compact_params({"type": "object"}) == "" and protocol.compact_params({"type": "object", "properties": {}}) == ""
    many = {"type": "object", "properties": {f"field_{i}": {"type": "string"} for i in range(60)}}
    text = protocol.compact_params(many)
    assert len(text) <= 300 and text.endswith("more)")


def test_every_row_after_the_first_carries_its_params(rt: Runtime) -> None:
    answer = rt.search_tools("note", source="notes")
    first, *rest = answer["tools"]
    assert "input_schema" in first and "params" not in first
    add = next(t for t in rest if t["tool_name"] == "notes__add_note") if first["tool_name"] != "notes__add_note" \
        else None
    for row in rest:
        assert "input_schema" not in row
    if add is not None:
        assert add["params"] == "text: string (required), tags: array of string"
    find = next(t for t in answer["tools"] if t["tool_name"] == "notes__find_notes")
    assert find.get("params", "query: string (required)") == "query: string (required)"
    assert "tool_names" in answer["schemas"]


def test_tool_names_returns_exactly_those_tools_in_full(rt: Runtime) -> None:
    answer = rt.call_model_tool("searchTools", {"tool_names": ["notes__add_note", "weather__get_forecast"]})
    assert names(answer) == ["notes__add_note", "weather__get_forecast"]
    for row in answer["tools"]:
        assert row["input_schema"] == rt.catalog_tool(row["tool_name"]).tool.input_schema  # type: ignore[union-attr]
        assert "source" in row
    assert "unknown" not in answer


def test_tool_names_answers_an_unknown_name_with_close_names_and_nothing_fuzzy(rt: Runtime) -> None:
    answer = rt.call_model_tool("searchTools", {"tool_names": ["notes__add_notes", "weather__get_forecast"]})
    assert names(answer) == ["weather__get_forecast"]
    [unknown] = answer["unknown"]
    assert unknown["tool_name"] == "notes__add_notes" and "notes__add_note" in unknown["suggestions"]
    assert "notes__add_notes" in answer["hint"]
    hidden = rt.call_model_tool("searchTools", {"tool_names": ["notes__admin_purge"]})
    assert hidden["tools"] == [] and hidden["unknown"][0]["tool_name"] == "notes__admin_purge"


@pytest.mark.parametrize("arguments", [
    {"tool_names": []}, {"tool_names": [f"t{i}" for i in range(11)]},
    {"tool_names": ["notes__add_note"], "query": "note"}, {"tool_names": ["notes__add_note"], "source": "notes"},
])
def test_tool_names_is_refused_with_other_keys_or_a_bad_count(rt: Runtime, arguments: dict[str, Any]) -> None:
    answer = rt.call_model_tool("searchTools", arguments)
    assert answer["ok"] is False and answer["error"]["code"] == "invalid_arguments"


def test_an_exact_name_query_returns_that_tool_alone_in_full(rt: Runtime) -> None:
    answer = rt.search_tools("notes__find_notes")
    assert names(answer) == ["notes__find_notes"] and answer["total_matches"] == 1
    assert answer["tools"][0]["input_schema"]["required"] == ["query"]
    assert "weak" not in answer
    # A local name inside a source is its tool first, its neighbours after.
    inside = rt.search_tools("find_notes", source="notes")
    assert names(inside)[0] == "notes__find_notes"


def test_a_listing_returns_compact_rows_paged(rt: Runtime) -> None:
    page = rt.search_tools(None, source="notes", max_results=2)
    assert len(page["tools"]) == 2 and page["next_cursor"]
    assert all("input_schema" not in row for row in page["tools"])
    rows = [*page["tools"]]
    while "next_cursor" in page:
        page = rt.search_tools(None, source="notes", max_results=2, cursor=page["next_cursor"])
        rows += page["tools"]
    assert [r["tool_name"] for r in rows] == [t.tool_name for t in rt.visible_tools() if t.source_id == "notes"
                                               and t.tool_name in {r["tool_name"] for r in rows}]
    add = next(r for r in rows if r["tool_name"] == "notes__add_note")
    assert add["params"] == "text: string (required), tags: array of string"
    assert "tool_names" in rt.search_tools(None, source="notes")["schemas"]


def test_a_no_match_answer_stays_small(make_runtime: Callable[..., Runtime]) -> None:
    rt = make_runtime(notes_plugin(), weather_plugin(), text_plugin())
    answer = rt.search_tools("zebra xylophone quartet " * 30)
    assert answer["tools"] == [] and len(json.dumps(answer)) <= NO_MATCH_CHARS


def test_partial_matches_keep_to_max_results_and_page_on(make_runtime: Callable[..., Runtime]) -> None:
    many = SourcePlugin(Source("words", "Word games."), [
        Tool(f"game_{i:02d}", f"Play word game {i} with text.", OBJECT, echo) for i in range(12)])
    rt = make_runtime(many, text_plugin())
    answer = rt.search_tools("convert text to uppercase", max_results=3)
    assert answer["weak"] is True and len(answer["tools"]) == 3 and answer["next_cursor"]
    seen = names(answer)
    while "next_cursor" in answer:
        answer = rt.search_tools("convert text to uppercase", max_results=3, cursor=answer["next_cursor"])
        assert 0 < len(answer["tools"]) <= 3
        seen += names(answer)
    assert len(seen) == len(set(seen)) and "text__change_case" in seen
