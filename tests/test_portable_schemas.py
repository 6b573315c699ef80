"""Model-facing schemas any client can use: one string ``type`` per property; arguments sent as a JSON string."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from junior_core import Runtime
from tests.helpers import notes_plugin, weather_plugin


def properties(schema: dict[str, Any], path: str = "") -> Iterator[tuple[str, dict[str, Any]]]:
    """Every property schema in ``schema``, nested ones included, with its path."""
    for name, prop in schema.get("properties", {}).items():
        yield f"{path}{name}", prop
        yield from properties(prop, f"{path}{name}.")
    items = schema.get("items")
    if isinstance(items, dict):
        yield from properties(items, f"{path}[].")


@pytest.fixture
def rt(make_runtime: Callable[..., Runtime]) -> Runtime:
    return make_runtime(notes_plugin(), weather_plugin())


def test_searchtools_and_executetool_declare_one_type_per_property(rt: Runtime) -> None:
    tools = {t["name"]: t for t in rt.model_tools()}
    seen = 0
    for name in ("searchTools", "executeTool"):
        schema = tools[name]["input_schema"]
        assert schema["type"] == "object"
        for path, prop in properties(schema):
            seen += 1
            assert isinstance(prop.get("type"), str), f"{name}.{path}: {prop.get('type')!r}"
            assert not {"anyOf", "oneOf", "allOf"} & set(prop), f"{name}.{path}"
        assert '"null"' not in json.dumps(schema)
    assert seen == 8  # query, queries, tool_names, source, max_results, cursor; tool_name, arguments
    assert tools["executeTool"]["input_schema"]["required"] == ["tool_name"]
    assert "required" not in tools["searchTools"]["input_schema"]


def test_null_still_means_absent(rt: Runtime) -> None:
    answer = rt.call_model_tool("searchTools", {"query": None, "source": "notes", "max_results": None,
                                                "cursor": None})
    assert answer["source"] == "notes" and answer["tools"], answer
    ran = rt.call_model_tool("executeTool", {"tool_name": "notes__add_note", "arguments": None})
    assert ran["error"]["code"] == "invalid_arguments" and "'text' is a required property" in str(ran), ran


def test_arguments_as_a_json_string_of_an_object_are_decoded(rt: Runtime) -> None:
    as_string = rt.call_model_tool("executeTool", {"tool_name": "notes__add_note",
                                                   "arguments": json.dumps({"text": "from a string"})})
    as_object = rt.call_model_tool("executeTool", {"tool_name": "notes__add_note",
                                                   "arguments": {"text": "from a string"}})
    assert as_string["ok"] is True, as_string
    assert as_string == as_object
    # Inside the outer JSON text too (OpenAI-style arguments).
    outer = json.dumps({"tool_name": "notes__add_note", "arguments": json.dumps({"text": "twice"})})
    assert rt.call_model_tool("executeTool", outer)["ok"] is True


@pytest.mark.parametrize("text", ['["a list"]', '"just text"', "{not json", "42"])
def test_a_string_that_is_not_a_json_object_is_refused_clearly(rt: Runtime, text: str) -> None:
    answer = rt.call_model_tool("executeTool", {"tool_name": "notes__add_note", "arguments": text})
    assert answer["ok"] is False and answer["error"]["code"] == "invalid_arguments"
    assert answer["tool_name"] == "notes__add_note"
    assert "must be an object" in answer["error"]["message"]
    assert answer["error"]["details"] == [{"path": "arguments", "message": "a string that is not a JSON object"}]


def test_wrong_types_are_still_refused(rt: Runtime) -> None:
    for bad in ({"max_results": "5"}, {"query": 3}, {"source": ["notes"]}):
        answer = rt.call_model_tool("searchTools", bad)
        assert answer["error"]["code"] == "invalid_arguments", bad
    answer = rt.call_model_tool("executeTool", {"tool_name": "notes__add_note", "arguments": 7})
    assert answer["error"]["code"] == "invalid_arguments"
